#!/bin/bash
# The daemon with the srt provider: a job end to end (its status, its
# write, a segment that names srt and whose pin is its record's digest),
# interrupt answered `kill` (srt ends the command: its handler does not
# run), stop leaving nothing, and a kill -9 of the daemon under a running
# srt job, which the restart adopts through srt's proof and settles with
# its real status.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v srt >/dev/null; then
	echo "1..0 # SKIP srt is not installed (scripts/deps installs it)"
	exit 0
fi
. "$here/lib.sh"
need_exec "$CORDON" CORDON
host_lab /tmp/cordon-hsrt.XXXXXX
# (host_cleanup ends every process of the jobs, by their pinned roots)
trap host_cleanup EXIT
mkdir -p "$lab/home" "$lab/ws"
lab_env "$lab"
cat > "$lab/config.json" <<JSON
{"bindings": {"s": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}, "grace": 2,
  "sandbox": {"provider": "srt", "policy": {"write": ["{workspace}"]}}}}}
JSON

start_daemon
ok $? "the daemon starts"
id=$(job start s --wait -- sh -c 'echo hi > out.txt; exit 4'); rc=$?
show=$(job show --json "$id")
rec=$(printf '%s' "$show" | jfield segments.0.record)
ok $([ "$rc" = 4 ] && [ "$(cat "$lab/ws/out.txt" 2>/dev/null)" = hi ] &&
	[ "$(printf '%s' "$show" | jfield segments.0.provider)" = srt ] &&
	[ "$(printf '%s' "$show" | jfield segments.0.digest)" = "$(jfield digest < "$rec/plan.json")" ]; echo $?) \
	"an srt job exits with its status (4), writes its workspace, and its segment names srt with its record's digest"

id=$(job start s -- sh -c ': cordon-hsrt-job; trap "echo handled > handled" TERM; : > ready; while :; do sleep 0.1; done')
for _ in $(seq 600); do [ -e "$lab/ws/ready" ] && break; sleep 0.05; done
sig=$(job interrupt "$id")
job wait "$id" >/dev/null
ok $([ "$sig" = kill ] && [ ! -e "$lab/ws/handled" ] &&
	job show --json "$id" | jfield segments.0.reason | grep -q '(kill)'; echo $?) \
	"interrupt says kill under srt, and the command's handler did not run"
rm -f "$lab/ws/ready"

id=$(job start s -- sh -c ': cordon-hsrt-job; exec sleep 81')
for _ in $(seq 600); do [ -n "$(pgrep -f '^sleep 81$')" ] && break; sleep 0.05; done
ok $([ -n "$(pgrep -f '^sleep 81$')" ]; echo $?) "an srt job runs (the control)"
job stop "$id" >/dev/null; job wait "$id" >/dev/null
ok $([ "$(job show --json "$id" | jfield result)" = stopped ] && [ -z "$(pgrep -f 'sleep 81$')" ]; echo $?) \
	"stop: the job is stopped and nothing of it is left"

# (the command itself marks that it runs: srt's own argv carries the
# marker from the start, before its sandbox is whole)
id=$(job start s -- sh -c ': cordon-hsrt-job; : > started; while [ ! -e go ]; do sleep 0.1; done; exit 6')
for _ in $(seq 600); do [ -e "$lab/ws/started" ] && break; sleep 0.05; done
sleep 0.2
stop_daemon KILL
start_daemon
touch "$lab/ws/go"
job wait "$id"; rc=$?
ok $([ "$rc" = 6 ] && grep -q "adopted segment 1 of $id" "$lab/daemon.err"; echo $?) \
	"after a kill -9 of the daemon, the srt job is adopted through srt's proof and settled with its status (6)"
for _ in $(seq 100); do [ -z "$(pgrep -f 'cordon-hsrt-job')" ] && break; sleep 0.05; done
ok $([ -z "$(pgrep -f 'cordon-hsrt-job')" ]; echo $?) "nothing of any job is left"
stop_daemon
sanitizer_ok
tap_done
