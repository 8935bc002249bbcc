#!/bin/bash
# Bindings without a sandbox: the command runs as the operator in its
# workspace, with the daemon's base variables, the binding's env and its
# secrets, and nothing else of the daemon's environment (another
# binding's secret source among it); its segment is pinned all the same
# (provider none, the digest its record's) and never counts as sandboxed.
# Stop leaves nothing of its process group; interrupt reaches its handler.
# After a kill -9 of the daemon, a segment launched without a sandbox is
# adopted when its binding still has none (and settled with its real
# status), and refused, stopped, when its binding now declares one.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
host_lab /tmp/cordon-unsb.XXXXXX
# (host_cleanup ends every process of the jobs, by their pinned roots)
trap host_cleanup EXIT
mkdir -p "$lab/home" "$lab/ws" "$lab/ws2" "$lab/ws3" "$lab/ws4"
lab_env "$lab"
secret=cordon-unsb-secret-$$-$RANDOM
printf '%s\n' "$secret" > "$lab/secret"
# a variable of the daemon's environment that another binding's secret reads
export CORDON_TEST_OTHER_SOURCE=cordon-unsb-other-$$-$RANDOM
cat > "$lab/config.json" <<JSON
{"bindings": {
  "plain": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}, "grace": 1,
        "env": {"GREETING": "hello"}, "secrets": {"JOB_TOKEN": {"file": "$lab/secret"}}},
  "later": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws2"}},
  "stays": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws3"}},
  "sb": {"executor": {"kind": "shell", "args": ["true"]}, "workspace": {"dir": "$lab/ws4"},
        "sandbox": {"provider": "native"},
        "secrets": {"OTHER": {"env": "CORDON_TEST_OTHER_SOURCE"}}}}}
JSON

start_daemon
ok $? "the daemon starts"

# ---- a job end to end
id=$(job start plain --wait -- sh -c 'id -u > uid; pwd > where; env > env.txt; echo hi > out.txt; exit 3'); rc=$?
show=$(job show --json "$id")
rec=$(printf '%s' "$show" | jfield segments.0.record)
ok $([ "$rc" = 3 ] && [ "$(cat "$lab/ws/out.txt" 2>/dev/null)" = hi ] &&
	[ "$(cat "$lab/ws/where")" = "$lab/ws" ] && [ "$(cat "$lab/ws/uid")" = "$(id -u)" ]; echo $?) \
	"an unsandboxed job runs as the operator in its workspace and exits with its status (3)"
ok $([ "$(printf '%s' "$show" | jfield segments.0.provider)" = None ] &&
	[ "$(printf '%s' "$show" | jfield segments.0.digest)" = "$(jfield digest < "$rec/plan.json")" ] &&
	[ "$(jfield data.sandbox < "$rec/plan.json")" = none ] &&
	printf '%s' "$show" | jfield segments.0.summary | grep -q '^no sandbox: runs as uid'; echo $?) \
	"its segment is pinned: no provider, the digest its record's, the record saying no sandbox"
ok $(grep -qx 'GREETING=hello' "$lab/ws/env.txt" && grep -qx "JOB_TOKEN=$secret" "$lab/ws/env.txt" &&
	grep -q "^CORDON_INBOX=$state/runs/$id/run/inbox$" "$lab/ws/env.txt" &&
	grep -q "^HOME=$HOME$" "$lab/ws/env.txt"; echo $?) \
	"it gets the binding's env, its secret, the job's files and the daemon's base variables"
ok $(! grep -q "$CORDON_TEST_OTHER_SOURCE\|CORDON_TEST_OTHER_SOURCE" "$lab/ws/env.txt" &&
	[ -n "$CORDON_TEST_OTHER_SOURCE" ] && env | grep -q '^CORDON_TEST_OTHER_SOURCE='; echo $?) \
	"... and not the rest of the daemon's environment (another binding's secret source, which the daemon has)"
ok $(! grep -rqs "$secret" "$state" "$rec" && ! printf '%s' "$show" | grep -q "$secret"; echo $?) \
	"the secret is in no file of the state dir, record or answer"
rm -f "$lab/ws/env.txt"

r=$(api POST "/v1/jobs/$id/attach")
ok $([ "${r%% *}" = 409 ] && printf '%s' "$r" | grep -q '"nothing_to_attach"'; echo $?) \
	"attach to an unsandboxed shell job: nothing_to_attach (not attach_sandboxed: no sandbox wrote its workspace)"

id=$(job start plain --wait -- no-such-command-cordon); rc=$?
ok $([ "$rc" = 127 ]; echo $?) "a command that is not there: 127"

# ---- stop, interrupt, inject
id=$(job start plain -- sh -c ': cordon-unsb-job; trap "" TERM; sleep 300 & echo $! > child.pid; wait; wait')
for _ in $(seq 100); do [ -s "$lab/ws/child.pid" ] && break; sleep 0.05; done
child=$(cat "$lab/ws/child.pid")
ok $(kill -0 "$child" 2>/dev/null; echo $?) "a job's child runs (the control)"
job stop "$id" >/dev/null; job wait "$id" >/dev/null; rc=$?
show=$(job show --json "$id")
ok $([ "$(printf '%s' "$show" | jfield result)" = stopped ] && ! kill -0 "$child" 2>/dev/null &&
	[ -z "$(pgrep -f 'cordon-unsb-job')" ]; echo $?) \
	"stop: a command that ignores TERM is killed after the grace, and nothing of its group is left"
rm -f "$lab/ws/child.pid"

id=$(job start plain -- sh -c 'trap "echo handled > handled; exit 5" TERM; : > ready; while :; do sleep 0.1; done')
for _ in $(seq 100); do [ -e "$lab/ws/ready" ] && break; sleep 0.05; done
job inject "$id" 'a message' >/dev/null
inbox=$(ls "$state/runs/$id/run/inbox/" | head -1)
sig=$(job interrupt "$id")
job wait "$id"; rc=$?
ok $([ "$rc" = 5 ] && [ "$(cat "$lab/ws/handled" 2>/dev/null)" = handled ] &&
	printf '%s' "$sig" | grep -q term; echo $?) "interrupt: TERM reaches the command's handler (term), status 5"
ok $([ "$(cat "$state/runs/$id/run/inbox/$inbox" 2>/dev/null)" = 'a message' ]; echo $?) "inject leaves the message in its inbox"
rm -f "$lab/ws/handled" "$lab/ws/ready"

# ---- recovery
idL=$(job start later -- sh -c ': cordon-unsb-job; exec sleep 71')
idS=$(job start stays -- sh -c ': cordon-unsb-job; while [ ! -e go ]; do sleep 0.1; done; exit 9')
for _ in $(seq 100); do [ -n "$(pgrep -f 'sleep 71$')" ] && [ "$(pgrep -f 'cordon-unsb-job' | wc -l)" -ge 2 ] && break; sleep 0.05; done
stop_daemon KILL
sleep 0.2
ok $([ -n "$(pgrep -f 'sleep 71$')" ]; echo $?) "killing the daemon stops no unsandboxed job"
python3 - "$lab/config.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["bindings"]["later"]["sandbox"] = {"provider": "native"}
json.dump(d, open(sys.argv[1], "w"))
PY
start_daemon
showL=$(job show --json "$idL")
for _ in $(seq 100); do [ -z "$(pgrep -f 'sleep 71$')" ] && break; sleep 0.05; done
ok $([ "$(printf '%s' "$showL" | jfield result)" = lost ] &&
	printf '%s' "$showL" | jfield segments.0.reason | grep -q 'launched without a sandbox and its binding now declares one' &&
	[ -z "$(pgrep -f 'sleep 71$')" ] && ! grep -q "adopted segment 1 of $idL" "$lab/daemon.err"; echo $?) \
	"a segment launched without a sandbox whose binding now declares one: refused, not adopted, stopped"
touch "$lab/ws3/go"
job wait "$idS"; rc=$?
ok $([ "$rc" = 9 ] && grep -q "adopted segment 1 of $idS" "$lab/daemon.err"; echo $?) \
	"... and one whose binding still has none adopted, settled later with its real status (9) (the control)"
stop_daemon; rc=$?
ok $([ "$rc" = 0 ] && [ -z "$(pgrep -f 'cordon-unsb-job')" ]; echo $?) "the daemon stops; nothing of any job is left"
sanitizer_ok
tap_done
