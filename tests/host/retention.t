#!/bin/bash
# Retention: a finished job's run dir (records, log) and scratch workspace
# are removed by the daemon's reconcile once the config's retention_days
# has passed (here 0.0001 days, 8.64 s), while the database keeps the job;
# a job that ended within it keeps its files (the control).
set -u
. "$(dirname "$0")/lib.sh"
need_exec "$CORDON" CORDON
host_lab /tmp/cordon-retention.XXXXXX
trap host_cleanup EXIT
mkdir -p "$lab/home"
lab_env "$lab"
cat > "$lab/config.json" <<JSON
{"retention_days": 0.0001,
 "bindings": {"s": {"executor": {"kind": "shell", "args": ["sh", "-c", "echo kept > file"]},
                    "workspace": {"scratch": true}, "sandbox": {"provider": "native"}}}}
JSON
start_daemon
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
stop_daemon
sanitizer_ok
tap_done
