#!/bin/bash
# The srt provider against a stand-in srt (tests/helpers/srt-standin),
# which records how it was called and fails or warns on demand: every
# refusal (srt, bwrap, socat or rg missing, srt too old, a bad CORDON_SRT,
# a failed or warning preflight), srt's settings for each policy shape,
# the shapes srt cannot hold, the wrapper argv, no secret in an argv or a
# file, the gateway on srt's proxy ports, adopt, and doctor's srt checks.
# Each refusal sits beside a control that passes. The PATH cordon sees is
# a lab directory holding only the tools a case chooses.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
SRC=${CORDON_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
LAB=$(mktemp -d /var/tmp/cordon-srt.XXXXXX) || bail "mktemp"
LAB=$(cd "$LAB" && pwd -P)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$LAB"' EXIT
mkdir -p "$LAB/bin" "$LAB/home/.ssh" "$LAB/home/.aws" "$LAB/home/proj/pub" "$LAB/state" \
	"$LAB/ws" "$LAB/log" "$LAB/runtime" "$LAB/extra"
echo key > "$LAB/home/.ssh/id_ed25519"
cp "$SRC/tests/helpers/srt-standin" "$LAB/bin/srt"
for t in bwrap socat rg; do ln -s /usr/bin/true "$LAB/bin/$t"; done
export HOME=$LAB/home XDG_RUNTIME_DIR=$LAB/runtime FAKE_SRT_LOG=$LAB/log
unset XDG_STATE_HOME XDG_CONFIG_HOME SSH_AUTH_SOCK CORDON_SRT SRT_DEBUG TMPDIR
STATE=$LAB/state WS=$LAB/ws
PY=/usr/bin/python3
# cordon itself sees only the lab's bin on PATH.
C() { PATH=$LAB/bin "$CORDON" "$@"; }

plan() { C plan --provider srt --state-dir "$STATE" -w "$WS" "$@" 2>"$LAB/err" >"$LAB/out"; }
run() { PATH=$LAB/bin /usr/bin/timeout -k 5 60 "$CORDON" run --provider srt --state-dir "$STATE" -w "$WS" "$@" </dev/null 2>"$LAB/err" >"$LAB/out"; }
runs() { ls "$STATE/runs" 2>/dev/null | wc -l; }
rec() { $PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["record"])' "$LAB/out"; }
# q EXPR: evaluate a python expression over s (the last plan's settings),
# p (its plan.json), out (cordon plan's output) and L(path) (a literal entry).
q() {
	$PY - "$@" <<'PY'
import json, os, sys
out = json.load(open(os.environ["LAB"] + "/out"))
r = out["record"]
s = json.load(open(r + "/srt-settings.json"))
p = json.load(open(r + "/plan.json"))
L = lambda path: {"path": path, "literal": True}
fs = s["filesystem"]
sys.exit(0 if eval(sys.argv[1]) else 1)
PY
}
export LAB
# XDG_RUNTIME_DIR ($LAB/runtime) is too long a place for srt's sockets:
# /run/user/<uid>'s or (root's) /run's where one is the user's and nobody
# else's to write (docs/srt.md), else the state dir's
SOCKDIR=$STATE/srt
for d in "/run/user/$(id -u)" $([ "$(id -u)" = 0 ] && echo /run); do
	if [ -d "$d" ] && [ ! -L "$d" ] && [ "$(stat -c %u "$d")" = "$(id -u)" ] &&
		[ $((0$(stat -c %a "$d") & 022)) = 0 ]; then
		SOCKDIR=$d/cordon-srt; break
	fi
done
export SOCKDIR
calls() { $PY -c 'import json,sys; [print(json.loads(l)["kind"]) for l in open(sys.argv[1])]' "$LAB/log/calls.jsonl" 2>/dev/null | tr '\n' ' '; }
launch_call() {
	$PY - "$@" <<'PY'
import json, os, sys
c = [json.loads(l) for l in open(os.environ["LAB"] + "/log/calls.jsonl")]
c = [x for x in c if x["kind"] == "launch"][-1]
a, env, s = c["argv"], c["env"], json.loads(c["settings"])
sys.exit(0 if eval(sys.argv[1]) else 1)
PY
}
refused() { # refused CODE REASON PATTERN DESC
	local rc=$1
	ok $([ "$rc" = 125 ] && grep -q "^cordon: $2: $3" "$LAB/err"; echo $?) "$4"
	[ "$rc" = 125 ] && grep -q "^cordon: $2: $3" "$LAB/err" || sed 's/^/# /' "$LAB/err"
}

# ---- finding srt and its helpers
plan -- true; rc=$?
ok $rc "control: with srt, bwrap, socat and rg on PATH, plan --provider srt exits 0"
[ "$rc" = 0 ] || sed 's/^/# /' "$LAB/err"
q 'p["summary"].startswith("srt 0.0.83: ") and p["signals"] == "kill"'
ok $? "the plan's summary names srt's version; its signals are kill"

mv "$LAB/bin/srt" "$LAB/srt.off"
before=$(runs); plan -- true; rc=$?
refused $rc sandbox_unavailable "srt_unavailable: srt is not on PATH" "srt missing: refused as srt_unavailable"
ok $([ "$(runs)" = "$before" ]; echo $?) "... and nothing is recorded"
export CORDON_SRT=$LAB/srt.off
plan -- true; ok $? "control: CORDON_SRT names srt outside PATH"
export CORDON_SRT=srt.off
plan -- true; rc=$?
refused $rc sandbox_config "CORDON_SRT must be an absolute path" "a relative CORDON_SRT is sandbox_config"
export CORDON_SRT=$LAB/nowhere/srt
plan -- true; rc=$?
refused $rc sandbox_unavailable "srt_unavailable: CORDON_SRT \`$LAB/nowhere/srt\` is not an executable file" \
	"a CORDON_SRT that is not there is srt_unavailable"
unset CORDON_SRT
mv "$LAB/srt.off" "$LAB/bin/srt"

for t in bwrap socat rg; do
	mv "$LAB/bin/$t" "$LAB/$t.off"
	plan -- true; rc=$?
	refused $rc sandbox_unavailable "srt_unavailable: $t is not on PATH" "$t missing: refused, naming $t"
	mv "$LAB/$t.off" "$LAB/bin/$t"
done
plan -- true; ok $? "control: all back, plan exits 0"

FAKE_SRT_VERSION=0.0.80 plan -- true; rc=$?
refused $rc sandbox_unavailable "srt_unavailable: srt 0.0.80 at \`$LAB/bin/srt\` is older than 0.0.81" "srt 0.0.80 is too old"
FAKE_SRT_VERSION=0.0.81 plan -- true; ok $? "control: srt 0.0.81, the floor, is taken"
FAKE_SRT_VERSION=0.1.0 plan -- true; ok $? "a newer srt than the tested one is taken (doctor warns)"
FAKE_SRT_VERSION=banana plan -- true; rc=$?
refused $rc sandbox_unavailable "srt_unavailable: .* did not print a version" "a version that is not one is refused"
FAKE_SRT_VERSION_EXIT=3 plan -- true; rc=$?
refused $rc sandbox_unavailable "srt_unavailable: .*exit status 3" "srt --version failing is refused"

# ---- the settings for each policy shape (cordon plan writes them)
plan -- true
q 'all(isinstance(e, dict) and e["literal"] is True and e["path"].startswith("/") and set(e) == {"path", "literal"} for k in ("denyRead", "allowRead", "allowWrite", "denyWrite") for e in fs[k])'
ok $? "every filesystem entry is an absolute path marked literal"
q 'L(os.environ["LAB"] + "/ws") in fs["allowWrite"] and L(r.replace("/sandbox/1", "/run")) in fs["allowWrite"]'
ok $? "allowWrite holds the workspace and the run dir"
q 'L(os.environ["LAB"] + "/state") in fs["denyRead"] and L(r.replace("/sandbox/1", "/run")) in fs["allowRead"]'
ok $? "the state dir is denied; the run dir beneath it is an exception (allowRead)"
q 'L(os.environ["HOME"] + "/.ssh") in fs["denyRead"] and L(os.environ["HOME"] + "/.aws") in fs["denyRead"] and L(os.environ["HOME"] + "/.config/cordon") in fs["denyRead"]'
ok $? "default denies (~/.ssh, ~/.aws) and cordon's config dir are in denyRead"
q 'L(os.environ["LAB"] + "/runtime") in fs["denyRead"]'
ok $? "the runtime dir (escape sockets) is in denyRead"
q 'len([x for x in fs["allowRead"] if x["path"] != os.path.realpath(os.environ["CORDON"])]) == 2 and fs["denyWrite"] == [L(os.environ["SOCKDIR"] + "/" + r.split("/runs/")[1].split("/")[0])]'
ok $? "nothing else is an exception or write-denied under the default policy (but cordon's binary, when built under /tmp, and the launch's own socket dir, read-only)"
q 's["network"]["allowedDomains"] == [] and s["network"]["strictAllowlist"] is True and s["network"]["allowLocalBinding"] is False and "httpProxyPort" not in s["network"] and "allowAllUnixSockets" not in s["network"]'
ok $? "network: srt's own allowlist empty and strict; no ports in a plan that binds none; unix sockets not all"
q 's["bwrapPath"] == os.environ["LAB"] + "/bin/bwrap" and s["socatPath"] == os.environ["LAB"] + "/bin/socat" and s["ripgrep"] == {"command": os.environ["LAB"] + "/bin/rg"}'
ok $? "the helpers cordon found are pinned in the settings"
ok $([ "$(stat -c %a "$(rec)/srt-settings.json")" = 444 ]; echo $?) "the settings file is 0444 in the record dir"

cat > "$LAB/readpol.json" <<EOF
{"write": ["{workspace}", "$LAB/extra"], "read": {"deny": ["~/proj"], "allow": ["~/proj/pub", "~/.aws"]}}
EOF
plan -p "$LAB/readpol.json" -- true; rc=$?
ok $rc "a policy with a read deny, an exception and an extra write grant plans"
q 'L(os.environ["HOME"] + "/proj") in fs["denyRead"] and L(os.environ["HOME"] + "/proj/pub") in fs["allowRead"]'
ok $? "read.deny is in denyRead, its exception in allowRead"
q 'L(os.environ["HOME"] + "/.aws") not in fs["denyRead"] and L(os.environ["HOME"] + "/.aws") not in fs["allowRead"] and L(os.environ["HOME"] + "/.ssh") in fs["denyRead"]'
ok $? "read.allow naming ~/.aws exactly lifts that default, and only that one"
q 'L(os.environ["LAB"] + "/extra") in fs["allowWrite"] and L(os.environ["LAB"] + "/extra") not in fs["allowRead"]'
ok $? "a write grant outside any deny is in allowWrite only"

plan --write '~' -- true; rc=$?
refused $rc sandbox_config "srt: denied directory \`$HOME/[^\`]*\` lies inside write grant \`$HOME\`; srt would mount a writable tmpfs there" \
	"a write grant holding an existing denied directory (~ holding ~/.ssh) is refused"
mkdir -p "$HOME/.config"
plan --write '~/.config' -- true; rc=$?
ok $rc "control: a write grant holding only missing denies (~/.config) plans"
q 'all(L(os.environ["HOME"] + x) in fs["denyWrite"] and L(os.environ["HOME"] + x) in fs["denyRead"] for x in ("/.config/gh", "/.config/gcloud", "/.config/cordon"))'
ok $? "default denies and protected paths inside a write grant are in denyWrite as well as denyRead"
q 'L("/tmp") in fs["denyRead"] and L("/tmp") not in fs["allowWrite"]'
ok $? "the host's /tmp is denied: the sandbox's /tmp is its own"
rmdir "$HOME/.config"
plan --write /tmp -- true
q 'L("/tmp") not in fs["denyRead"] and L("/tmp") in fs["allowWrite"] and p["argv"].count("/tmp") == 1'
ok $? "control: with /tmp a write grant, the host's /tmp is the sandbox's"

git init -q "$WS" && mkdir -p "$WS/.git/info"
plan -- true
q 'all(L(os.environ["LAB"] + "/ws/.git/" + x) in fs["denyWrite"] for x in ("config", "hooks", "info")) and not any(e["path"].startswith(os.environ["LAB"] + "/ws/.git") for e in fs["denyRead"])'
ok $? ".git/config, hooks and info are read-only needs: denyWrite, still readable"
rm -rf "$WS/.git"

plan --allow-host example.com --allow-host '*.example.org' -- true
q 'p["data"]["hosts"] == ["example.com", "*.example.org"] and s["network"]["allowedDomains"] == []'
ok $? "hosts stay cordon's (the gateway's allowlist); srt's own allowlist stays empty"

touch "$LAB/runtime/bus"
printf '{"write": ["{workspace}"], "unix_sockets": "all", "sockets": ["%s"]}\n' "$LAB/runtime/bus" > "$LAB/unix.json"
plan -p "$LAB/unix.json" -- true; rc=$?
ok $rc "unix_sockets all with a socket beneath the runtime dir plans"
q 's["network"]["allowAllUnixSockets"] is True and L(os.environ["LAB"] + "/runtime") in fs["denyRead"] and L(os.environ["LAB"] + "/runtime/bus") in fs["allowRead"]'
ok $? "all: allowAllUnixSockets; the escape sockets stay hidden, the listed socket is an exception"
q '"--unix-all" in p["argv"]'
ok $? "... and cordon confine is asked for --unix-all"
printf '{"write": ["{workspace}"], "sockets": ["%s"]}\n' "$LAB/runtime/bus" > "$LAB/sock.json"
plan -p "$LAB/sock.json" -- true; rc=$?
refused $rc sandbox_unavailable "sockets: \`$LAB/runtime/bus\`: on Linux a unix socket cannot be allowed by path" \
	"a socket by path without unix_sockets all is refused"

# ---- shapes srt cannot hold
mkdir -p "$WS/d/x/out"
printf '{"write": ["{workspace}", "{workspace}/d/x/out"], "read": {"deny": ["{workspace}/d"], "allow": ["{workspace}/d/x"]}}\n' > "$LAB/under.json"
plan -p "$LAB/under.json" -- true; rc=$?
refused $rc sandbox_config "srt: write grant \`$WS/d/x/out\` lies beneath read exception \`$WS/d/x\`, which is not writable" \
	"a write grant beneath a read exception that is not writable is refused, naming both"
C plan --state-dir "$STATE" -w "$WS" -p "$LAB/under.json" -- true >/dev/null 2>&1
ok $? "control: native plans the same policy"
plan --deny-read '{run}/secret' -- true; rc=$?
refused $rc sandbox_config "srt: read exception \`[^\`]*/run\` holds denied \`[^\`]*/run/secret\`" \
	"an exception (the run dir) holding a deeper deny is refused"
C plan --state-dir "$STATE" -w "$WS" --deny-read '{run}/secret' -- true >/dev/null 2>&1
ok $? "control: native plans it"
plan --write "$LAB/missing" -- true; rc=$?
refused $rc sandbox_unavailable "srt: write grant \`$LAB/missing\` must exist" "a write grant on a missing path is refused (srt would ignore it)"
plan -- a=b; rc=$?
refused $rc sandbox_config "srt: the command \`a=b\` holds '='" "a command env(1) would read as an assignment is refused"
cp "$CORDON" "$HOME/.ssh/cordon"
PATH=$LAB/bin "$HOME/.ssh/cordon" plan --provider srt --state-dir "$STATE" -w "$WS" -- true 2>"$LAB/err" >/dev/null; rc=$?
refused $rc sandbox_unavailable "srt: cordon's own binary \`$HOME/.ssh/cordon\` lies in denied \`$HOME/.ssh\`" \
	"cordon's binary in a denied path (srt would hide it) is refused"
rm -f "$HOME/.ssh/cordon"

# ---- the wrapper argv
plan -- echo hi
CLEARED='"SRT_DEBUG", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy"'
q '(lambda a: a[0] == "/usr/bin/env" and all(a[a.index(k) - 1] == "-u" for k in ('"$CLEARED"')))(p["argv"][:p["argv"].index("--settings")])'
ok $? "argv: env -u SRT_DEBUG and every proxy variable (srt would take it for its parent proxy) ..."
q 'p["argv"][19:24] == ["-C", r, "PATH=" + os.environ["LAB"] + "/bin", "TMPDIR=" + os.environ["SOCKDIR"] + "/" + r.split("/runs/")[1].split("/")[0], os.environ["LAB"] + "/bin/srt"]'
ok $? "... -C <record dir> (srt starts outside every grant) PATH=<cordon's> TMPDIR=<the launch's own socket dir> srt ..."
q 'L(os.environ["SOCKDIR"]) in fs["denyRead"] and L(os.environ["SOCKDIR"] + "/" + r.split("/runs/")[1].split("/")[0]) in fs["allowRead"]'
ok $? "... srt's socket dir denied (cordon's protected set), the launch's own beneath it readable"
q 'p["argv"][24:27] == ["--settings", r + "/srt-settings.json", "--"]'
ok $? "... --settings <record>/srt-settings.json -- ..."
q 'p["argv"][27] == os.path.realpath(os.environ["CORDON"]) and p["argv"][28] == "confine"'
ok $? "... <cordon, absolute> confine ..."
q 'p["argv"][29:35] == ["--write", r.replace("/sandbox/1", "/run"), "--write", os.environ["LAB"] + "/ws", "--write", "/tmp"]'
ok $? "... --write for each write grant, the run dir among them, and the sandbox's own /tmp ..."
q 'p["argv"][p["argv"].index("--", 29):] == ["--", "/usr/bin/env", "-C", os.environ["LAB"] + "/ws", "-u", "TMPDIR", "-u", "SRT_DEBUG", "--", "PATH=" + os.environ["LAB"] + "/bin", "echo", "hi"]'
ok $? "... -- env -C <workspace> <the command's own PATH, TMPDIR and SRT_DEBUG> CMD"

# ---- limits: the sandbox's cgroups, which confine joins (srt binds them
# writable), or, with no cgroup, RLIMIT_NPROC set by confine
LIMITS_Q='(lambda a, ex: ("--cgroup" in a and a[a.index("--cgroup") + 1].endswith("/cordon-" + ex) and L(a[a.index("--cgroup") + 1]) in fs["allowWrite"] and WANT_CG) or ("--cgroup" not in a and a[a.index("--pids"):a.index("--pids") + 3] == ["--pids", PIDS] + STRICT and WANT_RL))(p["argv"][p["argv"].index("confine"):p["argv"].index("--", 29)], r.split("/runs/")[1].split("/")[0])'
plan -- echo hi
q "$(echo "$LIMITS_Q" | sed 's/WANT_CG/True/; s/WANT_RL/"--pids-strict" not in a/; s/PIDS/"4096"/; s/+ STRICT/+ [a[a.index("--pids") + 2]]/')"
ok $? "confine joins the sandbox's pids cgroup (bound writable by srt), or gets --pids 4096 without a cgroup"
plan --limit pids=50 -- echo hi
q "$(echo "$LIMITS_Q" | sed 's/WANT_CG/True/; s/WANT_RL/True/; s/PIDS/"50"/; s/+ STRICT/+ ["--pids-strict"]/')"
ok $? "--limit pids=50: in the cgroup, or --pids 50 --pids-strict (confine refuses where RLIMIT_NPROC cannot hold it)"

# ---- launches: preflight, the environment, secrets, the gateway
: > "$LAB/log/calls.jsonl"
FAKE_SRT_PREFLIGHT=fail run -- true; rc=$?
refused $rc sandbox_unavailable "preflight_failed: srt exited with status 2" "a failing preflight refuses the launch"
ok $([ "$(calls)" = "version preflight " ]; echo $?) "... srt was asked its version and the preflight, and never the launch"
ok $(! grep -q standin-output "$LAB/err"; echo $?) "... srt's output is not echoed"
ok $(grep -q standin-output "$(ls -d "$STATE"/runs/*/sandbox/1 | tail -n 1)/srt-preflight.log" 2>/dev/null || \
	grep -lq standin-output "$STATE"/runs/*/sandbox/1/srt-preflight.log; echo $?) "... it is kept in the record dir"
: > "$LAB/log/calls.jsonl"
FAKE_SRT_PREFLIGHT=warn run -- true; rc=$?
refused $rc sandbox_unavailable "preflight_failed: srt printed [0-9]* bytes" "a preflight that warns refuses the launch"
ok $([ "$(calls)" = "version preflight " ]; echo $?) "... and nothing was launched"

: > "$LAB/log/calls.jsonl"
SECRET_TOKEN=s3cr3t-value-xyz HTTP_PROXY=http://example.invalid:1 FAKE_SRT_EXIT=7 \
	run --pass-env SECRET_TOKEN -- true; rc=$?
ok $([ "$rc" = 7 ]; echo $?) "a launch exits with srt's status (got $rc)"
ex=$(ls -t "$STATE/runs" | head -n 1)
ok $([ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "cordon-$ex" 2>/dev/null)" ]; echo $?) \
	"... and leaves no cgroup of its own behind"
ok $([ "$(calls)" = "version preflight launch " ]; echo $?) "version, preflight, launch, in that order"
launch_call 'env.get("SECRET_TOKEN") == "s3cr3t-value-xyz"'
ok $? "a secret passed by name (--pass-env) reaches srt through the environment"
launch_call '"s3cr3t" not in json.dumps(a) and "s3cr3t" not in c["settings"]'
ok $? "... and is in no argv and not in the settings"
rec_dir=$(ls -d "$STATE"/runs/*/sandbox/1 -t | head -n 1)
ok $(! grep -rq s3cr3t "$STATE"; echo $?) "... nor in any file under the state dir"
launch_call 'os.path.dirname(env["TMPDIR"]) == os.environ["SOCKDIR"] and os.path.basename(env["TMPDIR"]) in a[a.index("--settings") + 1] and env["PATH"] == os.environ["LAB"] + "/bin" and "SRT_DEBUG" not in env and "HTTP_PROXY" not in env'
ok $? "srt runs with TMPDIR=<the launch's own socket dir>, cordon's PATH, no SRT_DEBUG, no proxy variable"
ok $([ -d "$SOCKDIR" ] && [ ! -L "$SOCKDIR" ] && [ "$(stat -c %a:%u "$SOCKDIR")" = "700:$(id -u)" ]; echo $?) \
	"... the socket dir is the operator's own, 0700"
ok $([ -z "$(ls -A "$SOCKDIR" | grep -F "$(basename "$(dirname "$(dirname "$rec_dir")")")")" ]; echo $?) \
	"... and the launch's own is gone after it"
launch_call 'isinstance(s["network"]["httpProxyPort"], int) and isinstance(s["network"]["socksProxyPort"], int) and 0 < s["network"]["httpProxyPort"] != s["network"]["socksProxyPort"] > 0'
ok $? "a launch's settings name the gateway's HTTP and SOCKS ports"
launch_call 'json.loads(open(a[a.index("--settings") + 1]).read()) == s'
ok $? "the settings srt was handed are the ones kept in the record dir"
SECRET_TOKEN=s3cr3t-value-xyz OTHER_TOKEN=s3cr3t-other run -- true
launch_call '"SECRET_TOKEN" not in env and "OTHER_TOKEN" not in env and env.get("HOME") == os.environ["HOME"]'
ok $? "credential-like variables not passed do not reach srt; the rest does (HOME)"
ok $(grep -q "^cordon: env: left out .*: OTHER_TOKEN SECRET_TOKEN$" "$LAB/err" && ! grep -q s3cr3t "$LAB/err"; echo $?) \
	"... and their names, without values, are noted on stderr"
# A socket dir others may enter (another user could have made it first in
# the shared /var/tmp) refuses the launch; the one above was the control.
chmod 0755 "$SOCKDIR"
: > "$LAB/log/calls.jsonl"
run -- true; rc=$?
chmod 0700 "$SOCKDIR"
refused $rc sandbox_unavailable "srt: socket dir \`$SOCKDIR\` must be a directory of this user's, mode 0700" \
	"a socket dir that is not 0700 refuses the launch"
ok $([ "$(calls)" = "version " ]; echo $?) "... before the preflight: srt never ran a command ($(calls))"

# Where the socket dir is: only the operator can make it. Under a runtime
# dir of this user's that no one else may write, short enough for srt's
# sockets beneath it; else the state dir's (the control: a runtime dir
# others may write is not used).
RT=$(mktemp -d /var/tmp/crt.XXXXXX) && chmod 0700 "$RT"
: > "$LAB/log/calls.jsonl"
XDG_RUNTIME_DIR=$RT run -- true; rc=$?
launch_call 'os.path.dirname(env["TMPDIR"]) == sys.argv[2] + "/cordon-srt"' "$RT"; lc=$?
ok $([ "$rc" = 0 ] && [ "$lc" = 0 ] && [ "$(stat -c %a:%u "$RT/cordon-srt")" = "700:$(id -u)" ]; echo $?) \
	"with XDG_RUNTIME_DIR a short directory of this user's, 0700, srt's sockets go beneath it (rc $rc)"
chmod 0777 "$RT"
: > "$LAB/log/calls.jsonl"
XDG_RUNTIME_DIR=$RT run -- true; rc=$?
launch_call 'os.path.dirname(env["TMPDIR"]) == os.environ["SOCKDIR"]'; lc=$?
ok $([ "$rc" = 0 ] && [ "$lc" = 0 ]; echo $?) "... one that others may write is not used: $SOCKDIR (rc $rc)"
rm -rf "$RT"
# The old place, /var/tmp/cordon-srt-<uid>, made first by another local user
# (in a /var/tmp of this case's own: the real one is every suite's) stops no
# launch.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v runuser >/dev/null &&
	u=$("$SRC/scripts/test-user" 2>/dev/null); then
	mkdir -p "$LAB/vt/${LAB##*/}" && chmod 1777 "$LAB/vt"
	: > "$LAB/log/calls.jsonl"
	LAB=$LAB STATE=$STATE WS=$WS CORDON=$CORDON U=$u unshare -m --propagation private bash -c '
		mount --bind "$LAB" "$LAB/vt/${LAB##*/}" && mount --rbind "$LAB/vt" /var/tmp || exit 99
		runuser -u "$U" -- mkdir -m 0755 "/var/tmp/cordon-srt-$(id -u)" || exit 98
		PATH=$LAB/bin /usr/bin/timeout -k 5 60 "$CORDON" run --provider srt --state-dir "$STATE" \
			-w "$WS" -- true </dev/null 2>"$LAB/err" >"$LAB/out"'; rc=$?
	ok $([ "$rc" = 0 ] && [ "$(stat -c %U "$LAB/vt/cordon-srt-$(id -u)")" = "$u" ] &&
		[ "$(calls)" = "version preflight launch " ]; echo $?) \
		"/var/tmp/cordon-srt-<uid> made first by another user ($u) stops no srt launch (rc $rc: $(head -c 200 "$LAB/err"))"
	rm -rf "$LAB/vt"
else
	echo "ok $((n += 1)) # SKIP another user's /var/tmp/cordon-srt-<uid>: needs root, unshare, runuser and scripts/test-user"
fi

: > "$LAB/log/calls.jsonl"
SRT_DEBUG=1 TMPDIR=/var/tmp FAKE_SRT_EXEC=1 run -- /bin/sh -c 'echo "$TMPDIR:${SRT_DEBUG-unset}:$PATH"'; rc=$?
ok $([ "$rc" = 0 ] && [ "$(cat "$LAB/out")" = "/var/tmp:1:$LAB/bin" ]; echo $?) "the command gets its own TMPDIR, SRT_DEBUG and PATH back (got: $(cat "$LAB/out"))"
FAKE_SRT_EXEC=1 run -- /bin/sh -c 'exit 3'; rc=$?
ok $([ "$rc" = 3 ]; echo $?) "the command's status comes back through srt (got $rc)"

: > "$LAB/log/calls.jsonl"
FAKE_SRT_PROBE=1 run -- true; rc=$?
ok $([ "$rc" = 0 ] && grep -q '^HTTP/1.1 403' "$LAB/log/probe.txt"; echo $?) "the gateway answers on srt's proxy port: an unlisted host gets 403"
audit=$(ls -td "$STATE"/runs/*/sandbox/1 | head -n 1)/network.jsonl
ok $(grep -q '"host":"refused.invalid".*"verdict":"deny"' "$audit"; echo $?) "... and the refusal is in the run's audit log"
ok $(grep -q 'cordon: network: refused refused.invalid:443' "$LAB/err"; echo $?) "... and noted at exit"

# ---- adopt
# adopt_launch NS: a launch (its stand-in waiting on a process made with
# FAKE_SRT_NS=NS) under a parent of its own; sets root, parent, adrec.
adopt_launch() {
	: > "$LAB/log/calls.jsonl"
	rm -f "$LAB/log/ready" "$LAB/rootpid"
	FAKE_SRT_NS=$1 PATH=$LAB/bin:/usr/bin:/bin /bin/bash -c '"$@" & echo $! > "$ROOTPID"; wait' sh \
		"$CORDON" run -q --provider srt --state-dir "$STATE" -w "$WS" -- true \
		</dev/null >/dev/null 2>"$LAB/adopt.err" &
	parent=$!
	# (generous: on a loaded machine a launch takes seconds)
	for i in $(seq 600); do [ -s "$LAB/log/ready" ] && [ -s "$LAB/rootpid" ] && break; sleep 0.1; done
	sleep 0.3
	root=$(cat "$LAB/rootpid")
	adrec=$(ls -td "$STATE"/runs/*/sandbox/1 | head -n 1)
}
export ROOTPID=$LAB/rootpid
if unshare --user --map-root-user true 2>/dev/null; then
	adopt_launch 1
	"$CORDON" adopt "$adrec" "$parent" "$root" 2>"$LAB/err"; rc=$?
	ok $rc "adopt proves a running srt launch (srt with the settings, a sandboxed process beneath)"
	[ "$rc" = 0 ] || sed 's/^/# /' "$LAB/err"
	"$CORDON" adopt "$adrec" "$parent" "$parent" 2>"$LAB/err"; rc=$?
	refused $rc sandbox_denied "pid $parent is not the recorded root" "adopt refuses another pid as the root"
	inner=$(pgrep -f '^sleep 30\.4242$' | head -n 1)
	kill -KILL "$root" 2>/dev/null; wait
	for i in $(seq 50); do kill -0 "$inner" 2>/dev/null || break; sleep 0.1; done
	ok $(! kill -0 "$inner" 2>/dev/null; echo $?) "a SIGKILL of the root (the plan's stop) leaves nothing of srt's tree running"
	ex=${adrec%/sandbox/1}
	ex=${ex##*/}
	for i in $(seq 50); do [ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "cordon-$ex" 2>/dev/null)" ] && break; sleep 0.1; done
	ok $([ -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "cordon-$ex" 2>/dev/null)" ]; echo $?) \
		"... nor its cgroups (the keeper removes them)"
	"$CORDON" adopt "$adrec" "$parent" "$root" 2>"$LAB/err"; rc=$?
	ok $rc "an exited root whose parent runs nothing is adopted"
else
	for i in 1 2 3 4 5; do n=$((n + 1)); echo "ok $n # skip no user namespaces for the stand-in's sandbox"; done
fi
adopt_launch plain
"$CORDON" adopt "$adrec" "$parent" "$root" 2>"$LAB/err"; rc=$?
refused $rc sandbox_denied "nothing beneath srt (pid [0-9]*) is sandboxed" "a launch with nothing sandboxed beneath srt is not adopted"
kill "$root" 2>/dev/null; wait

# ---- doctor
C doctor --provider srt --json >"$LAB/doc.json" 2>"$LAB/err"; rc=$?
$PY - "$LAB/doc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["provider"] == "srt" and d["ready"] is True and d["version"] == "0.0.83", d
assert [c["id"] for c in d["checks"]] == ["srt", "version", "userns", "seccomp", "pids", "cgroup", "preflight"], d
assert all(set(c) == {"id", "status", "code", "detail", "fix"} for c in d["checks"]), d
assert all(c["status"] == "pass" and c["code"] == "" for c in d["checks"] if c["id"] not in ("pids", "cgroup")), d
# how limits are enforced: a warning with a code and a fix where no cgroup can be had
assert all((c["status"], c["code"]) in (("pass", ""), ("warn", "pids_unenforced"), ("warn", "limits_unavailable")) for c in d["checks"] if c["id"] in ("pids", "cgroup")), d
PY
ok $([ "$rc" = 0 ] && [ "$?" = 0 ]; echo $?) "doctor --provider srt --json: ready, seven checks (the limits' pass or warn)"
FAKE_SRT_VERSION=0.0.90 C doctor --provider srt >"$LAB/doc.txt" 2>&1; rc=$?
ok $([ "$rc" = 0 ] && grep -q '^WARN  version    untested_version: srt 0.0.90 is newer than 0.0.83' "$LAB/doc.txt" && grep -q '^      fix: ' "$LAB/doc.txt" && [ "$(tail -n 1 "$LAB/doc.txt")" = "srt: ready" ]; echo $?) \
	"a newer srt is a warning (untested_version) with a fix; still ready"
FAKE_SRT_VERSION=0.0.80 C doctor --provider srt >"$LAB/doc.txt" 2>&1; rc=$?
ok $([ "$rc" = 1 ] && grep -q '^FAIL  srt        srt_unavailable: ' "$LAB/doc.txt" && [ "$(tail -n 1 "$LAB/doc.txt")" = "srt: unavailable: sandboxed launches run nothing until this is fixed" ]; echo $?) \
	"an old srt fails srt_unavailable; exit 1"
mv "$LAB/bin/socat" "$LAB/socat.off"
C doctor --provider srt --json >"$LAB/doc.json" 2>&1; rc=$?
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["checks"][0]; sys.exit(0 if d["ready"] is False and c["code"] == "srt_unavailable" and "socat" in c["detail"] and c["fix"] else 1)' "$LAB/doc.json"
ok $([ "$rc" = 1 ] && [ "$?" = 0 ]; echo $?) "socat missing: --json says srt_unavailable naming socat, with a fix"
mv "$LAB/socat.off" "$LAB/bin/socat"
FAKE_SRT_PREFLIGHT=warn C doctor --provider srt >"$LAB/doc.txt" 2>&1; rc=$?
ok $([ "$rc" = 1 ] && grep -q '^FAIL  preflight  preflight_failed: ' "$LAB/doc.txt" && ! grep -q standin-output "$LAB/doc.txt"; echo $?) \
	"a warning preflight under an empty policy fails preflight_failed, without echoing srt"
C doctor --provider bogus >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 125 ]; echo $?) "doctor --provider with an unknown name is a usage error"
C plan --provider bogus --state-dir "$STATE" -w "$WS" -- true 2>"$LAB/err" >/dev/null; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'unknown provider `bogus` (known: native, srt)' "$LAB/err"; echo $?) "plan names the known providers"

tap_done
