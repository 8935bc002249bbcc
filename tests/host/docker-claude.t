#!/bin/bash
# Claude Code in a container, through the daemon, against a dockerd this
# test starts itself, with a stand-in claude (a busybox shell script) in
# an image made here from busybox-static. The job's home,
# <state>/homes/<job>, is its HOME and CLAUDE_CONFIG_DIR: seeded once
# from the binding's home_seed (its files, a link as a link, never its
# .credentials.json) with a .claude.json that marks onboarding done, and
# kept across segments (a retry resumes the session it holds). The
# sign-in and a credential-looking variable reach claude but are not in
# the container's inspect. The prompt and inject reach its stdin through
# the start helper; its MCP server is the container's own cordon. Attach: a job that ran in a container attaches in
# one, on a terminal, with no toolbelt token, and that container goes
# with its companion when the terminal closes; no other job's container
# is made on its workspace meanwhile; attach on the host is refused for it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
. "$here/docker-lib.sh"
docker_skip
docker_static
host_lab /var/tmp/cordon-dclaude.XXXXXX
cleanup() {
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	[ -n "$ddpid" ] && docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1
	dockerd_cleanup "$lab"
	host_cleanup
}
trap cleanup EXIT
host_own_cordon
cp "$static" "$lab/bin/cordon-static" || exit 1
mkdir -p "$lab/home" "$lab/ws" "$lab/seed/plugins"
echo '{"seeded": 1}' > "$lab/seed/settings.json"
echo plugin-file > "$lab/seed/plugins/p.txt"
echo '{"operator": "credentials"}' > "$lab/seed/.credentials.json"
ln -s /nowhere/target "$lab/seed/link"
lab_env "$lab"
dockerd_up "$lab/dk"

# ---- the image: busybox with the stand-in as /bin/claude
mkdir -p "$dk/rootfs/bin"
cp "$here/../helpers/claude-standin-sh" "$dk/rootfs/bin/claude" && chmod 755 "$dk/rootfs/bin/claude"
image=$(busybox_image cordon-claude-test:1)
gw=$("$CORDON" docker gateway-image --endpoint "unix://$sock" 2>"$lab/gw.err")
[ -n "$image" ] && [ -n "$gw" ] || { echo "Bail out! the test image or the gateway image was not made"; sed 's/^/# /' "$lab/gw.err"; exit 1; }
printf 'sk-oauth-%s-%s\n' "$RANDOM" "$RANDOM" > "$lab/oauth"
oauth=$(cat "$lab/oauth")
gh="ghp-$RANDOM$RANDOM-static"
cat > "$lab/config.json" <<JSON
{"bindings": {
  "cc": {"executor": {"kind": "claude-code", "home_seed": "$lab/seed"},
         "workspace": {"dir": "$lab/ws"}, "retries": 1, "grace": 1,
         "env": {"GH_TOKEN": "$gh"}, "operations": ["job.status"],
         "secrets": {"CLAUDE_CODE_OAUTH_TOKEN": {"file": "$lab/oauth"}},
         "container": {"provider": "docker", "image": "$image", "endpoint": "unix://$sock",
                       "policy": {"write": ["{workspace}"],
                                  "network": {"allow": ["api.anthropic.com"]}}}},
  "other": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
         "container": {"provider": "docker", "image": "$image", "endpoint": "unix://$sock"}},
  "sh": {"executor": {"kind": "shell"}, "workspace": {"scratch": true},
         "container": {"provider": "docker", "image": "$image", "endpoint": "unix://$sock"}}
}}
JSON
start_daemon || { echo "Bail out! the daemon did not start"; sed 's/^/# /' "$lab/daemon.err"; exit 1; }
workload_of() { docker ps -q --filter "label=dev.cordon.job=$1" --filter label=dev.cordon.role=workload 2>/dev/null | head -1; }
labelled() {
	{ docker ps -aq --filter "label=dev.cordon.job=$1"
	  docker network ls -q --filter "label=dev.cordon.job=$1"
	  docker volume ls -q --filter "label=dev.cordon.job=$1"; } 2>/dev/null | grep -c .
}
rep() { grep "^$1=" "$lab/ws/standin-${2:-p}.txt" 2>/dev/null | head -1 | cut -d= -f2-; }

# ---- a claude job in its container: the prompt on stdin, the home, the secrets
id=$(job start cc -- sleep 3)
for _ in $(seq 300); do [ -n "$(workload_of "$id")" ] && [ -s "$lab/ws/standin-p.txt" ] && break; sleep 0.1; done
w=$(workload_of "$id")
insp=$(docker inspect "$w" 2>/dev/null)
job wait "$id" >/dev/null 2>&1; rc=$?
home=$state/homes/$id
ok $([ "$rc" = 0 ] && grep -q '"result":"heard: sleep 3"' "$state/runs/$id/log"; echo $?) \
	"the job's prompt reaches claude's stdin in its container; it answers and the job completes"
[ "$rc" = 0 ] || { sed 's/^/# log: /' "$state/runs/$id/log" | tail -20; sed 's/^/# daemon: /' "$lab/daemon.err" | tail -10; }
ok $([ "$(rep home)" = "$home" ] && [ "$(rep config)" = "$home" ] && [ "$(rep tmpdir)" = /tmp ]; echo $?) \
	"HOME and CLAUDE_CONFIG_DIR are the job's home (<state>/homes/<job>), TMPDIR the container's /tmp"
ok $([ "$(rep settings)" = '{"seeded": 1}' ] && [ "$(rep plugin)" = plugin-file ] &&
	[ "$(rep link)" = /nowhere/target ] && [ "$(readlink "$home/link")" = /nowhere/target ]; echo $?) \
	"the home is seeded from home_seed: its files, a link copied as a link"
ok $([ "$(rep creds)" = no ] && [ ! -e "$home/.credentials.json" ] && [ -e "$lab/seed/.credentials.json" ]; echo $?) \
	"never the seed's .credentials.json (control: the seed has one)"
ok $(rep onboarding | grep -q '"hasCompletedOnboarding": true'; echo $?) \
	"a .claude.json that marks onboarding done (the seed had none)"
ok $([ "$(stat -c '%u %a' "$home")" = "$(id -u) 700" ] && [ "$(stat -c %u "$home/projects")" = "$(id -u)" ]; echo $?) \
	"the home is the operator's, 0700, and what claude wrote there is the operator's"
ok $([ "$(rep oauth)" = "$oauth" ] && [ "$(rep gh)" = "$gh" ]; echo $?) \
	"the sign-in and a credential-looking variable reach claude (the control for the next)"
ok $([ -n "$insp" ] && ! printf '%s' "$insp" | grep -q "$oauth" && ! printf '%s' "$insp" | grep -q "$gh"; echo $?) \
	"neither is in the container's environment as the API shows it"
ok $(grep -rqs -e "$oauth" -e "$gh" "$state/runs/$id/sandbox" "$state/cordon.db"; [ $? = 1 ]; echo $?) \
	"neither is in the plan's record or the database"
ok $(rep argv | grep -q -- '^-p --output-format stream-json --input-format stream-json --verbose' &&
	rep argv | grep -q -- "--mcp-config $state/runs/$id/run/mcp.json"; echo $?) \
	"claude from the image's PATH, with -p, stream-json both ways and an MCP config"
ok $(rep mcp | grep -qw job_status && grep -q '"/.cordon/cordon"' "$state/runs/$id/run/mcp.json"; echo $?) \
	"its MCP server is the container's own cordon (tb mcp), which offers the granted operations ($(rep mcp))"
ok $([ "$(labelled "$id")" = 0 ]; echo $?) "after the job its container, companion, network and volume are gone"

# ---- inject reaches it through the start helper
rm -f "$lab/ws/standin-p.txt"
id=$(job start cc -- sleep 2)
for _ in $(seq 300); do [ -s "$lab/ws/standin-p.txt" ] && break; sleep 0.1; done
job inject "$id" 'and then this' >/dev/null
job wait "$id" >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 0 ] && grep -q '"result":"heard: and then this"' "$state/runs/$id/log" &&
	[ "$(grep -c '"type":"result"' "$state/runs/$id/log")" = 2 ]; echo $?) \
	"inject reaches claude's stdin in its container as a user message; it answers both and the job ends"

# ---- the home is kept across segments: a retry resumes the session
rm -f "$lab/ws/standin-p.txt"
id=$(job start cc -- fail-once)
job wait "$id" >/dev/null 2>&1; rc=$?
show=$(job show --json "$id")
sess=$(printf '%s' "$show" | jfield session)
ok $([ "$rc" = 0 ] && [ -n "$sess" ] && [ "$(rep resumed)" = yes ] && [ "$(rep session)" = "$sess" ] &&
	rep argv | grep -q -- "--resume $sess" &&
	[ "$(printf '%s' "$show" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["segments"]))')" = 2 ]; echo $?) \
	"the next segment runs claude --resume <session> and finds the session in the job's home"
ok $([ "$(grep -c turn "$state/homes/$id/projects/$sess")" = 2 ]; echo $?) \
	"the home was not seeded again: both segments' turns are in it"
resumed_id=$id

# ---- attach: in a container of its own, on a terminal
# (a pseudo-terminal driven here: the session's greeting, a line typed,
# the container looked at while it waits)
cat > "$lab/attach-pty.py" <<'PY'
import json, os, pty, subprocess, sys, time
cordon, state, job, out = sys.argv[1:5]
pid, fd = pty.fork()
if pid == 0:
    os.execv(cordon, [cordon, "job", "--state-dir", state, "attach", job])
seen = b""
def until(pat, secs):
    global seen
    end = time.time() + secs
    while pat not in seen and time.time() < end:
        try:
            b = os.read(fd, 4096)
        except OSError:
            break
        if not b:
            break
        seen += b
    return pat in seen
greeted = until(b"resumed", 60)
ids = subprocess.run(["docker", "ps", "-q", "--filter", "label=dev.cordon.job=" + job,
                      "--filter", "label=dev.cordon.role=attach"], capture_output=True, text=True).stdout.split()
insp = subprocess.run(["docker", "inspect"] + ids, capture_output=True, text=True).stdout if ids else "[]"
beside = subprocess.run([cordon, "job", "--state-dir", state, "start", "other", "--wait", "--", "true"],
                        capture_output=True, text=True)
os.write(fd, b"hello-attach\r")
until(b"you said hello-attach", 30)
until(b"\0never", 5)
_, status = os.waitpid(pid, 0)
json.dump({"greeted": greeted, "running": len(ids), "inspect": insp, "transcript": seen.decode(errors="replace"),
           "beside_code": beside.returncode, "beside_id": beside.stdout,
           "code": os.waitstatus_to_exitcode(status)}, open(out, "w"))
PY
tt() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$lab/tty.json" "$1"; }
ti() { python3 -c 'import json,sys; d=json.loads(json.load(open(sys.argv[1]))["inspect"])[0]; print('"$1"')' "$lab/tty.json" 2>/dev/null; }
rm -f "$lab/ws/standin-attach.txt"
timeout 120 python3 "$lab/attach-pty.py" "$CORDON" "$state" "$resumed_id" "$lab/tty.json"
transcript=$(tt transcript)
ok $([ "$(tt code)" = 0 ] && [ "$(tt greeted)" = True ] && printf '%s' "$transcript" | grep -q "resumed $sess (yes)" &&
	printf '%s' "$transcript" | grep -q "you said hello-attach"; echo $?) \
	"attach: claude --resume <session> on the operator's terminal, finding the session in the job's home"
ok $([ "$(tt running)" = 1 ] && [ "$(ti 'd["Config"]["Tty"]')" = True ] && [ "$(ti 'd["HostConfig"]["NetworkMode"]')" = none ] &&
	[ "$(ti 'd["Config"]["Labels"]["dev.cordon.role"]')" = attach ] && [ "$(ti 'd["HostConfig"]["CapDrop"]')" = "['ALL']" ] &&
	[ "$(ti 'd["Config"]["User"]')" = "$(id -u):$(id -g)" ]; echo $?) \
	"its container: a terminal, network none, every capability dropped, the operator's uid, labelled attach"
ok $([ "$(rep tty attach)" = yes ] && [ "$(rep toolbelt attach)" = none ] && [ "$(rep oauth attach)" = "$oauth" ] &&
	[ "$(rep home attach)" = "$state/homes/$resumed_id" ]; echo $?) \
	"in it: a terminal, no toolbelt token, the sign-in, the job's home"
ainsp=$(tt inspect)
ok $(printf '%s' "$ainsp" | grep -q -e "$oauth" -e "$gh"; [ $? = 1 ] && [ "$(tt running)" = 1 ]; echo $?) \
	"the sign-in is not in the attach container's inspect"
ok $([ "$(labelled "$resumed_id")" = 0 ]; echo $?) \
	"when the terminal closes the attach container goes, with its companion, network and volume"
bid=$(tt beside_id | sed -n 1p)
ok $([ "$(tt beside_code)" = 125 ] && grep -q "in use by an attach of job $resumed_id" "$state/runs/$bid/log"; echo $?) \
	"while the attach runs no other job's container is made on its workspace"
job start other --wait -- true >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 0 ]; echo $?) "control: once the attach has ended, it is"
ok $([ -f "$state/runs/$resumed_id/sandbox/900001/plan.json" ]; echo $?) \
	"the attach's plan is recorded with the job's (as its first attach, 900001)"

# every other attach is refused for such a job
id=$(job start sh --wait -- true)
job attach "$id" </dev/null 2>"$lab/attach.err"; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'nothing_to_attach' "$lab/attach.err" && [ "$(labelled "$id")" = 0 ]; echo $?) \
	"attach to a shell job that ran in a container: nothing to attach, nothing made"
id=$(job start cc -- sleep 3)
for _ in $(seq 300); do [ -n "$(workload_of "$id")" ] && break; sleep 0.1; done
job attach "$id" </dev/null 2>"$lab/attach.err"; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'job_running' "$lab/attach.err"; echo $?) \
	"attach to a container job while it runs: refused (job_running)"
grep -q job_running "$lab/attach.err" || sed "s/^/# /" "$lab/attach.err"
job wait "$id" >/dev/null 2>&1
cp "$lab/config.json" "$lab/config.keep"
python3 - "$lab/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
b = c["bindings"]["cc"]
del b["container"]
b["executor"].pop("home_seed")
b["sandbox"] = {"provider": "native"}
b["env"]["CLAUDE_CONFIG_DIR"] = sys.argv[1] + ".cc"
json.dump(c, open(sys.argv[1], "w"))
PY
job attach "$resumed_id" </dev/null 2>"$lab/attach.err"; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'attach_sandboxed' "$lab/attach.err" && [ "$(labelled "$resumed_id")" = 0 ]; echo $?) \
	"a job that ran in a container never attaches on the host, even once its binding declares none"
cp "$lab/config.keep" "$lab/config.json"

sanitizer_ok
tap_done
