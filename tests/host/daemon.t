#!/bin/bash
# cordon daemon and cordon job, end to end: the state dir's modes, the
# API's refusals (no token, a wrong one, the right one from another uid,
# each beside the same call that succeeds), a job through a binding whose
# status, workspace write and pin (equal to its record's digest) come
# back; a secret that reaches the command and no file, row, log, answer
# or argv; a refused launch ending the job 125; malformed requests; and a
# daemon killed with -9: its job's wrapper outlives it, and the restarted
# daemon, which cannot prove it yet, stops it and says so, leaving
# nothing running and the history whole.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
host_lab /tmp/cordon-daemon.XXXXXX
rootC=
cleanup() {
	kill_session KILL "$rootC"
	host_cleanup
}
trap cleanup EXIT
mkdir -p "$lab/home" "$lab/ws" "$lab/ws2" "$lab/ws3" "$lab/ws4"
lab_env "$lab"
secret=cordon-daemon-secret-$$-$RANDOM
printf '%s\n' "$secret" > "$lab/secret"
cat > "$lab/config.json" <<JSON
{"bindings": {
  "b": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}},
        "secrets": {"JOB_TOKEN": {"file": "$lab/secret"}}},
  "wide": {"executor": {"kind": "shell", "args": ["true"]}, "workspace": {"dir": "$lab/ws"},
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "/"]}}},
  "quick": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}, "grace": 1,
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}},
  "wide2": {"executor": {"kind": "shell", "args": ["true"]}, "workspace": {"dir": "$lab/ws2"},
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "/"]}}},
  "flaky": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws3"}, "retries": 2,
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}},
  "w4": {"executor": {"kind": "shell", "args": ["true"]}, "workspace": {"dir": "$lab/ws4"},
        "sandbox": {"provider": "native"}},
  "scratch": {"executor": {"kind": "shell", "args": ["sh", "-c", "pwd > where; exit 0"]},
        "workspace": {"scratch": true}, "sandbox": {"provider": "native"}}}}
JSON


start_daemon
ok $? "the daemon starts and answers"
ok $([ "$(stat -c %a "$state")" = 700 ] && [ "$(stat -c %a "$state/private/operator.token")" = 600 ] &&
	[ "$(stat -c %a "$state/management.sock")" = 600 ]; echo $?) "state dir 0700, token and socket 0600"

"$CORDON" daemon --state-dir "$state" --config "$lab/config.json" 2>"$lab/second.err"; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'another daemon serves the state dir' "$lab/second.err" &&
	api GET /v1/health | grep -q '^200 '; echo $?) \
	"a second daemon on the same state dir is refused, and the first still answers"

# ---- the API's door
r=$(api GET /v1/health)
ok $([ "${r%% *}" = 200 ]; echo $?) "health with the operator's token: 200"
r=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$state/management.sock" http://cordon/v1/health)
ok $([ "$r" = 401 ]; echo $?) "... without a token: 401"
r=$(api GET /v1/health "" "$(token | tr 0-9a-f 1-9a-f0)")
ok $([ "${r%% *}" = 401 ]; echo $?) "... with a wrong one: 401"
user=$("$here/../../scripts/test-user" 2>/dev/null)
if [ -n "$user" ]; then
	cp "$state/private/operator.token" "$lab/token.copy"
	chmod 644 "$lab/token.copy"
	chmod 711 "$state"
	chmod 666 "$state/management.sock"
	r=$(runuser -u "$user" -- curl -s -o /dev/null -w '%{http_code}' --unix-socket "$state/management.sock" \
		-H "Authorization: Bearer $(cat "$lab/token.copy")" http://cordon/v1/health)
	ok $([ "$r" = 401 ]; echo $?) "... the right token from another uid ($user): 401"
	chmod 700 "$state"
	chmod 600 "$state/management.sock"
else
	echo "ok $((n += 1)) - the right token from another uid # SKIP no test user"
fi

# ---- doctor, per binding
out=$("$CORDON" doctor --config "$lab/config.json"); rc=$?
ok $([ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q '^PASS  b  *native  *ready$'; echo $?) \
	"cordon doctor --config reports each binding ready (its provider's checks)"
out=$(job doctor); rc=$?
ok $([ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q '^b  *native  *ready$'; echo $?) "... and the daemon does too (GET /v1/doctor)"
printf '{"bindings": {"x": {"executor": {"kind": "shell"}, "workspace": {"scratch": true}, "sandbox": {"provider": "srt"}}}}' > "$lab/nosrt.json"
out=$(CORDON_SRT=/nonexistent/srt "$CORDON" doctor --config "$lab/nosrt.json"); rc=$?
ok $([ "$rc" = 1 ] && printf '%s\n' "$out" | grep -q '^FAIL  x  *srt .*not ready'; echo $?) \
	"... and a binding whose provider cannot run here not ready, exit 1 (the control)"
printf '{"bindings": {"x": {"executor": {"kind": "shell"}, "workspace": {"scratch": true}}}}' > "$lab/nosb.json"
out=$("$CORDON" doctor --config "$lab/nosb.json"); rc=$?
ok $([ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q '^PASS  x  *-  *no sandbox: it runs as the operator$'; echo $?) \
	"... and a binding without a sandbox said to run as the operator"

# ---- a job end to end
id=$(job start b --wait -- sh -c 'echo hi > out.txt; printf %s "$JOB_TOKEN" | sha256sum > tok.sum; exit 3'); rc=$?
ok $([ "$rc" = 3 ]; echo $?) "job start --wait exits with the command's status (3)"
ok $([ "$(cat "$lab/ws/out.txt" 2>/dev/null)" = hi ]; echo $?) "its write is in the workspace"
show=$(job show --json "$id")
rec=$(printf '%s' "$show" | jfield segments.0.record)
pin=$(printf '%s' "$show" | jfield segments.0.digest)
ok $([ -n "$pin" ] && [ "$pin" = "$(jfield digest < "$rec/plan.json")" ]; echo $?) \
	"job show lists the segment with a pin equal to its plan.json's digest"
ok $([ "$(printf '%s' "$show" | jfield segments.0.result)" = exited ] &&
	[ "$(printf '%s' "$show" | jfield code)" = 3 ]; echo $?) "... exited, code 3"
human=$(job show "$id")
ok $(printf '%s\n' "$human" | grep -qx "job       $id" && printf '%s\n' "$human" | grep -qx 'result    exited 3' &&
	printf '%s\n' "$human" | grep -qx 'segment 1 (attempt 1): exited 3' &&
	printf '%s\n' "$human" | grep -qx "  pin       $pin" && job ls | grep -q "^$id  *b  *exited  *3  "; echo $?) \
	"job show and job ls print the same for people (the pin, the result), --json as the daemon answers"
ok $([ "$(cat "$lab/ws/tok.sum")" = "$(printf %s "$secret" | sha256sum)" ]; echo $?) \
	"the binding's secret reached the command's environment"
job wait "$id"; rc=$?
ok $([ "$rc" = 3 ]; echo $?) "job wait exits with the job's status"

# the secret, while a job holds it, and after
id2=$(job start b -- sh -c 'sleep 2')
sleep 0.5
# (the pattern from the file: a grep given it in its argv would find itself)
ok $(! ps -eo args | grep -qFf "$lab/secret"; echo $?) "no process's argv holds the secret"
job wait "$id2" >/dev/null
api GET /v1/jobs > "$lab/answers"
job show --json "$id" >> "$lab/answers"; job show "$id" >> "$lab/answers"
ok $(! grep -rqs "$secret" "$state" "$lab/answers" "$lab/daemon.err"; echo $?) \
	"no file of the state dir (database, records, logs) and no answer holds it"
ok $(grep -rqs "JOB_TOKEN" "$state/cordon.db" "$state/runs"; echo $?) \
	"... where its name is recorded (the control: the search looks where it would be)"

# ---- refusals
id=$(job start wide); job wait "$id"; rc=$?
ok $([ "$rc" = 125 ] && [ "$(job show --json "$id" | jfield result)" = refused ]; echo $?) \
	"a binding whose policy grants / : the job ends refused, 125, nothing pinned"
r=$(api POST /v1/jobs '{"binding": "nope"}')
ok $([ "${r%% *}" = 404 ] && printf '%s' "${r#* }" | grep -q '"error":"not_found"'; echo $?) "an unknown binding: 404 not_found"
r=$(api POST /v1/jobs '{"binding": "b", "args": ["true"], "x": 1}')
ok $([ "${r%% *}" = 400 ] && printf '%s' "${r#* }" | grep -q '"error":"bad_request"'; echo $?) "an unknown key: 400 bad_request"
r=$(api POST /v1/jobs '{"binding": ')
ok $([ "${r%% *}" = 400 ]; echo $?) "malformed JSON: 400"
r=$(api POST /v1/jobs "$(python3 -c 'print("{\"binding\": \"" + "b"*70000 + "\"}")')")
ok $([ "${r%% *}" = 413 ]; echo $?) "a body over 64 KiB: 413"
r=$(api GET /v1/jobs/does-not-exist)
ok $([ "${r%% *}" = 404 ]; echo $?) "an unknown job: 404"
ok $(api GET /v1/health | grep -q '^200 '; echo $?) "... and the daemon still answers"
id=$(job start scratch); job wait "$id"; rc=$?
ok $([ "$rc" = 0 ] && [ "$(cat "$state/workspaces/$id/where" 2>/dev/null)" = "$state/workspaces/$id" ]; echo $?) \
	"a scratch workspace is a fresh directory under the state dir's workspaces/"

# ---- the API's table: a path and method no row names is 404, whatever
# the job; a row that needs the job running answers its state first
for mp in "GET /v1/jobs/$id/stop" "POST /v1/jobs/$id/log" "POST /v1/jobs/$id" "GET /v1/jobs/$id/log/x" \
	"DELETE /v1/jobs" "PUT /v1/health" "GET /v1/health/" "GET /v1/jobsx"; do
	r=$(api $mp)
	ok $([ "${r%% *}" = 404 ] && printf '%s' "${r#* }" | grep -q '"message":"no such endpoint"'; echo $?) \
		"$mp: 404 no such endpoint"
done
r=$(api POST "/v1/jobs/$id/interrupt")
ok $([ "${r%% *}" = 409 ] && printf '%s' "${r#* }" | grep -q '"error":"not_accepting"'; echo $?) \
	"interrupt of a job that ended: 409 not_accepting"
r=$(api POST /v1/jobs/does-not-exist/inject '{"text": "x"}')
ok $([ "${r%% *}" = 404 ] && printf '%s' "${r#* }" | grep -q '"message":"no such job"'; echo $?) \
	"inject into an unknown job: 404 no such job"
r=$(api POST "/v1/jobs/$id/stop")
ok $([ "${r%% *}" = 409 ]; echo $?) "stop of a job that ended: 409"
ok $(api GET "/v1/jobs/$id/log?offset=0" | grep -q '^200 '; echo $?) "its log: 200"

# ---- stop
id=$(job start quick -- sh -c 'echo $$ > stop1.pid; exec sleep 31')
for _ in $(seq 100); do [ -n "$(pgrep -f 'sleep 31$')" ] && break; sleep 0.05; done
job stop "$id"; rc=$?
job wait "$id"; wrc=$?
show=$(job show --json "$id")
ok $([ "$rc" = 0 ] && [ "$(printf '%s' "$show" | jfield result)" = stopped ] &&
	[ "$(printf '%s' "$show" | jfield segments.0.signal)" = 15 ] && [ "$wrc" = 143 ]; echo $?) \
	"stop: TERM ends the command; the job is stopped, signal 15, status 143"
ok $([ -z "$(pgrep -f 'sleep 31$')" ]; echo $?) "... and nothing of it is left"
id=$(job start quick -- sh -c 'trap "" TERM; sleep 32; sleep 32')
for _ in $(seq 100); do [ -n "$(pgrep -f 'sleep 32$')" ] && break; sleep 0.05; done
t0=$(date +%s%N)
job stop "$id" && job wait "$id" >/dev/null
t1=$(date +%s%N)
show=$(job show --json "$id")
ok $([ "$(printf '%s' "$show" | jfield result)" = stopped ] &&
	[ "$(printf '%s' "$show" | jfield segments.0.signal)" = 9 ] && [ $(((t1 - t0) / 1000000)) -ge 900 ]; echo $?) \
	"a command that ignores TERM is killed once the binding's grace (1 s) is over ($(((t1 - t0) / 1000000)) ms)"
ok $([ -z "$(pgrep -f 'sleep 32$')" ]; echo $?) "... and nothing of it is left"
r=$(api POST "/v1/jobs/$id/stop")
ok $([ "${r%% *}" = 409 ] && printf '%s' "${r#* }" | grep -q '"error":"not_accepting"'; echo $?) \
	"stopping a job that has ended: 409 not_accepting"

# ---- input, inject, interrupt, logs
r=$(api POST /v1/jobs '{"binding": "b", "args": ["sh", "-c", "cat \"$CORDON_INPUT\" > in.txt"], "input": "the job input"}')
id=$(printf '%s' "${r#* }" | jfield id)
job wait "$id" >/dev/null
ok $([ "$(cat "$lab/ws/in.txt" 2>/dev/null)" = "the job input" ]; echo $?) "a job's input is at \$CORDON_INPUT inside"
id=$(job start b -- sh -c 'for i in $(seq 200); do [ -n "$(ls "$CORDON_INBOX")" ] && break; sleep 0.05; done; cat "$CORDON_INBOX"/* > got.txt')
sleep 0.3
job inject "$id" "hello from the operator"; irc=$?
job wait "$id" >/dev/null
ok $([ "$irc" = 0 ] && [ "$(cat "$lab/ws/got.txt" 2>/dev/null)" = "hello from the operator" ]; echo $?) \
	"inject leaves a message the command finds in \$CORDON_INBOX"
r=$(api POST "/v1/jobs/$id/inject" '{"text": "late"}')
ok $([ "${r%% *}" = 409 ] && printf '%s' "${r#* }" | grep -q '"error":"not_accepting"'; echo $?) "... and an ended job takes none (409 not_accepting)"
id=$(job start b -- sh -c 'trap "echo handled > trap.txt; exit 5" TERM; sleep 33 & wait')
for _ in $(seq 100); do [ -n "$(pgrep -f 'sleep 33$')" ] && break; sleep 0.05; done
sig=$(job interrupt "$id")
job wait "$id"; rc=$?
ok $([ "$sig" = term ] && [ "$rc" = 5 ] && [ "$(cat "$lab/ws/trap.txt" 2>/dev/null)" = handled ] &&
	job show --json "$id" | jfield segments.0.reason | grep -q '(term)'; echo $?) \
	"interrupt: TERM reaches the command's handler (term), the job ends with its status (5), and the result says term"
# (what the handler left, the background sleep, by the job's pinned root)
host_end_jobs "$id"
id=$(job start b -- sh -c 'echo line-one; echo line-two >&2; sleep 1; echo line-three')
out=$(job logs "$id" -f)
ok $(printf '%s\n' "$out" | grep -qx line-one && printf '%s\n' "$out" | grep -qx line-two &&
	printf '%s\n' "$out" | grep -qx line-three; echo $?) "logs -f prints the job's output until it ends"
# ?follow=1 streams: the first line arrives while the job still runs, and
# the stream ends by itself when the job has
id=$(job start b -- sh -c 'echo stream-first; while [ ! -e go ]; do sleep 0.1; done; echo stream-second')
curl -sN --unix-socket "$state/management.sock" -H "Authorization: Bearer $(token)" \
	"http://cordon/v1/jobs/$id/log?follow=1" > "$lab/stream" 2>/dev/null & cpid=$!
for _ in $(seq 100); do grep -q stream-first "$lab/stream" && break; sleep 0.05; done
ok $(grep -qx stream-first "$lab/stream" && ! grep -q stream-second "$lab/stream" && kill -0 "$cpid" 2>/dev/null; echo $?) \
	"GET log?follow=1 streams what the job writes while it runs"
touch "$lab/ws/go"
for _ in $(seq 100); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.05; done
ok $(! kill -0 "$cpid" 2>/dev/null && wait "$cpid" && [ "$(cat "$lab/stream")" = "$(printf 'stream-first\nstream-second')" ]; echo $?) \
	"... and ends by itself once the job has, with all of it"
rm -f "$lab/ws/go"
r=$(api GET "/v1/jobs/$id/log?follow=yes")
ok $([ "${r%% *}" = 400 ]; echo $?) "... follow other than 1 or 0: 400"

# the log on a terminal: a command's escape sequences shown, not obeyed
id=$(job start b -- sh -c 'printf "title\033]0;pwned\007end\n"'); job wait "$id" >/dev/null
raw=$(job logs "$id" | od -c | tr -s ' ')
tty=$(script -qec "$CORDON job --state-dir $state logs $id" /dev/null 2>/dev/null)
if ! command -v script >/dev/null; then
	echo "ok $((n += 1)) - logs on a terminal # SKIP no script(1) to make one"
else ok $(printf '%s' "$raw" | grep -q '033' && printf '%s' "$tty" | grep -qF 'title\x1b]0;pwned\x07end' &&
	! printf '%s' "$tty" | grep -q "$(printf '\033')"; echo $?) \
	"logs on a terminal shows a command's control bytes as \\xNN (piped, they pass as they are: the control)"
fi

# C1 controls too: raw (0x9b is CSI, 0x9d OSC on a terminal reading 8-bit
# controls) and UTF-8 encoded (U+009D starting an OSC 52 clipboard write),
# in the log and in job show's args; other UTF-8 (é) passes as it is
id=$(job start b -- sh -c 'printf "c1\302\23552;c;cHduZWQ=\302\234 raw\23331m \303\251 end\n"' "$(printf 'arg\302\235')"); job wait "$id" >/dev/null
raw=$(job logs "$id" | od -An -tx1 | tr -d ' \n')
tty=$(script -qec "$CORDON job --state-dir $state logs $id" /dev/null 2>/dev/null)
shown=$(script -qec "$CORDON job --state-dir $state show $id" /dev/null 2>/dev/null)
if ! command -v script >/dev/null; then
	echo "ok $((n += 1)) - C1 controls on a terminal # SKIP no script(1) to make one"
else ok $(printf '%s' "$raw" | grep -q 'c29d' && printf '%s' "$raw" | grep -q '9b33316d' &&
	printf '%s' "$tty" | grep -qF 'c1\xc2\x9d52;c;cHduZWQ=\xc2\x9c raw\x9b31m é end' &&
	printf '%s' "$shown" | grep -qF 'arg\xc2\x9d' &&
	! printf '%s%s' "$tty" "$shown" | LC_ALL=C grep -q "$(printf '\302\235\\|\233\\|\302\234')"; echo $?) \
	"logs and show on a terminal show C1 controls, raw and UTF-8 encoded, as \\xNN; é passes (piped, the log is as written: the control)"
fi

# ---- retries
id=$(job start flaky -- sh -c 'n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count; [ $n -ge 3 ] || exit 9')
job wait "$id"; rc=$?
show=$(job show --json "$id")
ok $([ "$rc" = 0 ] && [ "$(printf '%s' "$show" | python3 -c 'import json,sys; s=json.load(sys.stdin)["segments"]; print(" ".join("%d:%d:%s:%d" % (x["n"], x["attempt"], x["result"], x["code"]) for x in s))')" = "1:1:exited:9 2:2:exited:9 3:3:exited:0" ]; echo $?) \
	"a failed attempt is tried again while the binding's retries allow: three attempts, each its own segment and pin, the job 0"
rm -f "$lab/ws3/count"
id=$(job start flaky -- sh -c 'exit 4')
job wait "$id"; rc=$?
ok $([ "$rc" = 4 ] && [ "$(job show --json "$id" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["segments"]))')" = 3 ]; echo $?) \
	"... and no more: after 1 + 2 attempts the job ends with the last status (4)"

# ---- attach
# (written from inside: the sandbox's /tmp is its own, the lab is not there)
cat > "$lab/plant.sh" <<PLANT
mkdir -p .claude
printf '%s\\n' '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch $lab/planted-ran"}]}]}}' > .claude/settings.json
printf '%s\\n' '{"mcpServers": {"x": {"command": "touch", "args": ["$lab/planted-ran"]}}}' > .mcp.json
PLANT
id=$(job start b -- sh -c "$(cat "$lab/plant.sh")")
job wait "$id" >/dev/null
job attach "$id" 2>"$lab/attach.err"; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'cordon: attach_sandboxed:' "$lab/attach.err" && [ -f "$lab/ws/.mcp.json" ] &&
	[ -f "$lab/ws/.claude/settings.json" ]; echo $?) \
	"attach is refused (attach_sandboxed) for a job whose sandboxed run planted .claude/settings.json and .mcp.json"
cp "$lab/config.json" "$lab/config.sandboxed"
python3 - "$lab/config.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); del d["bindings"]["b"]["sandbox"]
json.dump(d, open(sys.argv[1], "w"))
PY
job attach "$id" 2>"$lab/attach.err"; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'cordon: attach_sandboxed:' "$lab/attach.err"; echo $?) "... also after its binding dropped the sandbox"
cp "$lab/config.sandboxed" "$lab/config.json"
ok $([ ! -e "$lab/planted-ran" ]; echo $?) "... and nothing planted ran"
rm -f "$lab/ws/.mcp.json"; rm -rf "$lab/ws/.claude"
id=$(job start wide2); job wait "$id" >/dev/null
job attach "$id" 2>"$lab/attach.err"; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'cordon: nothing_to_attach:' "$lab/attach.err"; echo $?) \
	"a job whose workspace no sandboxed run wrote gets nothing_to_attach from the shell executor (the control)"

# (reconcile's stray sweep, which kills only the sandbox an ended job's
# record proves still running and never by a working directory, is
# tests/host/identity.t's)
id=$(job start w4); job wait "$id" >/dev/null

# ---- kill -9 of the daemon: the jobs go on; the restart adopts what it
# proves and stops what it cannot
# A ends when the test says so (after the restart), not after a time a
# loaded machine may spend before the restart; 60 s at most
rm -f "$lab/ws/.goA"
idA=$(job start quick -- sh -c 'i=0; while [ ! -e .goA ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; exit 7')
idB=$(job start quick -- sh -c 'exec sleep 34')
idC=$(job start quick -- sh -c 'exec sleep 36')
idD=$(job start quick -- sh -c 'exec sleep 38')
for _ in $(seq 100); do [ -n "$(pgrep -f 'sleep 34$')" ] && [ -n "$(pgrep -f 'sleep 36$')" ] &&
	[ -n "$(pgrep -f 'sleep 38$')" ] && break; sleep 0.05; done
stop_daemon KILL
sleep 0.3
ok $([ -n "$(pgrep -f 'sleep 34$')" ] && [ -n "$(pgrep -f 'while \[ ! -e .goA \]')" ]; echo $?) "killing the daemon with -9 stops no job"
# B: its record changed while the daemon was down
recB=$(ls -d "$state/runs/$idB/sandbox/1")
chmod u+w "$recB/plan.json"
python3 - "$recB/plan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["argv"][-1] = d["argv"][-1].replace("34", "43")
json.dump(d, open(sys.argv[1], "w"))
PY
# D: its record is gone (the pin in the database names nothing)
rm -rf "$state/runs/$idD/sandbox/1"
# C: its pin names a pid that is now another process (a host sleep); its
# own root (printed), which the restart leaves alone, is ended by its pid
# at the end
sleep 37 & other=$!
rootC=$(python3 - "$state/runs/$idC/pins.json" "$other" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); print(d["1"]["root"]["pid"]); d["1"]["root"]["pid"] = int(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"))
PY
)
start_daemon
touch "$lab/ws/.goA"
job wait "$idA"; rc=$?; rm -f "$lab/ws/.goA"
ok $([ "$rc" = 7 ] && grep -q "adopted segment 1 of $idA" "$lab/daemon.err" &&
	[ "$(job show --json "$idA" | jfield result)" = exited ]; echo $?) \
	"the restarted daemon adopts the job it proves, which is settled later with its real status (7)"
showB=$(job show --json "$idB")
ok $([ "$(printf '%s' "$showB" | jfield result)" = lost ] &&
	printf '%s' "$showB" | jfield segments.0.reason | grep -q 'not proven after a restart'; echo $?) \
	"a segment whose record changed is refused, never adopted ($(printf '%s' "$showB" | jfield segments.0.reason | cut -c1-90))"
for _ in $(seq 100); do [ -z "$(pgrep -f 'sleep 34$')" ] && break; sleep 0.05; done
ok $([ -z "$(pgrep -f 'sleep 34$')" ]; echo $?) "... and stopped: nothing of it runs"
showC=$(job show --json "$idC")
ok $([ "$(printf '%s' "$showC" | jfield result)" = lost ] && kill -0 "$other" 2>/dev/null; echo $?) \
	"a pin naming a pid that is another process now: not adopted, and that process left alone"
showD=$(job show --json "$idD")
for _ in $(seq 100); do [ -z "$(pgrep -f 'sleep 38$')" ] && break; sleep 0.05; done
ok $([ "$(printf '%s' "$showD" | jfield result)" = lost ] && [ -z "$(pgrep -f 'sleep 38$')" ]; echo $?) \
	"a pin without its record: refused, and its wrapper (named by the pin in pins.json) stopped"
kill "$other" 2>/dev/null
kill_session KILL "$rootC"
ok $([ "$(api GET /v1/jobs | sed 's/^200 //' | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')" = 22 ]; echo $?) \
	"the history is whole after the restart (the twenty-two jobs)"
stop_daemon; rc=$?
ok $([ "$rc" = 0 ]; echo $?) "TERM stops the daemon (exit 0)"

# A daemon that answers 200 with something that is not a job: `job wait`
# says so and exits 125 rather than asking again for ever (the timeout
# only keeps a broken client from hanging the suite).
fake="$lab/fake"
mkdir -p "$fake/private"
printf '%064d' 0 > "$fake/private/operator.token"
python3 - "$fake/management.sock" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
while True:
    c, _ = s.accept()
    c.recv(65536)
    body = b'{"id": "x"}'
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
              b"Connection: close\r\n\r\n" % len(body) + body)
    c.close()
PY
fakepid=$!
for _ in $(seq 200); do [ -S "$fake/management.sock" ] && break; sleep 0.05; done
timeout 30 "$CORDON" job --state-dir "$fake" wait x 2> "$lab/fake.err"; rc=$?
kill "$fakepid"; wait "$fakepid" 2>/dev/null
ok $([ "$rc" = 125 ] && grep -q "sandbox_unavailable: the daemon's answer for job x is malformed" "$lab/fake.err"; echo $?) \
	"job wait: a daemon answering 200 with no job in it is refused (125), not asked again for ever (rc $rc)"
sanitizer_ok
tap_done
