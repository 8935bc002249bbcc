#!/bin/bash
# Retention: a finished job's run dir (records, log) and scratch workspace
# are removed by the daemon's reconcile once the config's retention_days
# has passed (here 0.0001 days, 8.64 s), while the database keeps the job;
# a job that ended within it keeps its files (the control).
set -u
: "${CORDON:?set CORDON to the cordon binary}"
n=0
fails=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; }
lab=$(mktemp -d /tmp/cordon-retention.XXXXXX)
lab=$(cd "$lab" && pwd -P)
dpid=
trap '[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$lab"' EXIT
mkdir -p "$lab/home"
export HOME="$lab/home" XDG_STATE_HOME="$lab/xdg" XDG_CONFIG_HOME="$lab/cfg"
unset XDG_RUNTIME_DIR SSH_AUTH_SOCK
state=$lab/state
cat > "$lab/config.json" <<JSON
{"retention_days": 0.0001,
 "bindings": {"s": {"executor": {"kind": "shell", "args": ["sh", "-c", "echo kept > file"]},
                    "workspace": {"scratch": true}, "sandbox": {"provider": "native"}}}}
JSON
"$CORDON" daemon --state-dir "$state" --config "$lab/config.json" 2>"$lab/daemon.err" &
dpid=$!
job() { "$CORDON" job --state-dir "$state" "$@"; }
for _ in $(seq 200); do job ls >/dev/null 2>&1 && break; sleep 0.05; done
old=$(job start s); job wait "$old" >/dev/null
ok $([ -d "$state/runs/$old" ] && [ "$(cat "$state/workspaces/$old/file" 2>/dev/null)" = kept ]; echo $?) \
	"a finished job has its run dir and scratch workspace"
for _ in $(seq 400); do [ ! -e "$state/runs/$old" ] && break; sleep 0.05; done
new=$(job start s); job wait "$new" >/dev/null
ok $([ ! -e "$state/runs/$old" ] && [ ! -e "$state/workspaces/$old" ]; echo $?) \
	"past retention both are removed"
ok $([ -d "$state/runs/$new" ] && [ -d "$state/workspaces/$new" ]; echo $?) \
	"... while a job that just ended keeps its own (the control)"
ok $(job show --json "$old" | grep -q '"result": "exited"'; echo $?) "the database keeps the removed job's history"
kill -TERM "$dpid"; wait "$dpid"; dpid=
ok $(! grep -q 'ERROR: AddressSanitizer\|runtime error' "$lab/daemon.err"; echo $?) "the daemon ran clean under the sanitizers"
echo "1..$n"
[ $fails = 0 ]
