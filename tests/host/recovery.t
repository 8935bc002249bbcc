#!/bin/bash
# Crash recovery with 20 sandboxed jobs running: kill -9 the daemon,
# let 5 of the jobs finish while it is down, restart it. The 15 live ones
# are adopted (each through the provider's proof) and later settled with
# their real exit codes, the 5 settled from their exit files; no process
# of any job is left afterwards, and the history is whole. Each job waits
# for a file of its own in the shared workspace and exits with its number.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
host_lab /tmp/cordon-recovery.XXXXXX
cleanup() {
	touch "$lab"/ws/release-{1..20} 2>/dev/null
	sleep 1
	# (and what is left of them, by their pinned roots)
	host_cleanup
}
trap cleanup EXIT
mkdir -p "$lab/home" "$lab/ws"
lab_env "$lab"
cat > "$lab/config.json" <<JSON
{"bindings": {"b": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
  "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}}}}
JSON
# the jobs' own processes, by the marker in their argv
running() { pgrep -f 'cordon-rec-job' | wc -l; }

start_daemon
ok $? "the daemon starts"
declare -a ids
for i in $(seq 20); do
	ids[$i]=$(job start b -- sh -c "i=$i; : cordon-rec-job; while [ ! -e release-\$i ]; do sleep 0.1; done; exit \$i")
done
for _ in $(seq 400); do [ "$(running)" -ge 20 ] && break; sleep 0.05; done
ok $([ "$(running)" -ge 20 ]; echo $?) "20 sandboxed jobs run ($(running) processes)"

stop_daemon KILL
touch "$lab"/ws/release-{1..5}
for i in 1 2 3 4 5; do
	rec=$state/runs/${ids[$i]}/sandbox/1
	for _ in $(seq 200); do [ -e "$rec/exit.json" ] && break; sleep 0.05; done
done
ok $(for i in 1 2 3 4 5; do [ -e "$state/runs/${ids[$i]}/sandbox/1/exit.json" ] || exit 1; done; echo 0) \
	"with the daemon down, 5 jobs finish and leave their exit files"
ok $([ "$(running)" -ge 15 ]; echo $?) "... and the other 15 run on"

start_daemon
adopted=$(grep -c 'adopted segment 1 of' "$lab/daemon.err")
ok $([ "$adopted" = 15 ]; echo $?) "the restarted daemon adopts the 15 live ones ($adopted)"
ok $(for i in 1 2 3 4 5; do
	s=$(job show --json "${ids[$i]}"); [ "$(printf '%s' "$s" | jfield result)" = exited ] &&
		[ "$(printf '%s' "$s" | jfield code)" = "$i" ] || exit 1
	done; echo 0) "the 5 that finished are settled from their exit files, with their codes"
touch "$lab"/ws/release-{6..20}
bad=0
for i in $(seq 6 20); do
	job wait "${ids[$i]}"; rc=$?
	[ "$rc" = "$i" ] || { bad=$((bad + 1)); echo "# job $i: $rc"; }
done
ok $([ $bad = 0 ]; echo $?) "the 15 adopted ones are settled later with their real exit codes"
for _ in $(seq 100); do [ "$(running)" = 0 ] && break; sleep 0.05; done
ok $([ "$(running)" = 0 ]; echo $?) "no process of any job is left"
hist=$(job ls --json | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"]; print(len(j), sum(1 for x in j if x["result"]=="exited"), len(set(x["id"] for x in j)))')
ok $([ "$hist" = "20 20 20" ]; echo $?) "the history is whole: 20 jobs, 20 exited ($hist)"
stop_daemon
# a job the daemon accepted and died before pinning its launch: in the
# database with its first attempt and no segment, as the crash leaves it
python3 - "$state/cordon.db" "$lab/ws" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
t = int(time.time() * 1000)
db.execute("INSERT INTO jobs (id, binding, args, workspace, created_ms) VALUES (?, 'b', '[\"true\"]', ?, ?)",
           ("20260101T000000Z-00000000000000aa", sys.argv[2], t))
db.execute("INSERT INTO attempts (job, n, started_ms) VALUES (?, 1, ?)", ("20260101T000000Z-00000000000000aa", t))
db.commit()
PY
start_daemon
show=$(job show --json 20260101T000000Z-00000000000000aa)
ok $([ "$(printf '%s' "$show" | jfield result)" = refused ] && [ "$(printf '%s' "$show" | jfield code)" = 125 ] &&
	printf '%s' "$show" | jfield reason | grep -q 'the daemon stopped before its launch was pinned' &&
	[ "$(job ls --json | python3 -c 'import json,sys; print(sum(1 for x in json.load(sys.stdin)["jobs"] if x["result"]=="exited"))')" = 20 ]; echo $?) \
	"a job accepted but never pinned before the crash ends refused, saying so, and nothing else changes"
stop_daemon
sanitizer_ok
tap_done
