#!/bin/bash
# The daemon's database under damage: it starts on nothing it cannot
# vouch for. A file that fails SQLite's integrity check, and an empty one
# in a state dir that holds runs of jobs (a lost history, not a first
# start), are refused at start with the file left as it was, and the
# daemon says where recovery is described. Controls: the same state dir
# with its database intact starts and keeps its history; a first start on
# an empty file is one.
set -u
. "$(dirname "$0")/../host/lib.sh"
need_exec "$CORDON" CORDON
host_lab /tmp/cordon-faultdb.XXXXXX
trap host_cleanup EXIT
mkdir -p "$lab/home" "$lab/ws"
lab_env "$lab"
cat > "$lab/config.json" <<JSON
{"bindings": {"b": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
  "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}}}}
JSON
db=$state/cordon.db
# start_refused: the daemon run in the foreground; its status and stderr
start_refused() {
	out=$(timeout 30 "$CORDON" daemon --state-dir "$state" --config "$lab/config.json" 2>&1)
	rc=$?
}

start_daemon
ok $? "control: the daemon starts on a new state dir"
id=$(job start b -- true)
job wait "$id" >/dev/null 2>&1
stop_daemon
ok $([ -d "$state/runs/$id" ] && [ -s "$db" ]; echo $?) "(one job ran: its run and its history are on disk)"
start_daemon
ok $([ "$(job show --json "$id" 2>/dev/null | jfield segments.0.result)" = exited ]; echo $?) \
	"control: restarted on the intact file, the daemon keeps the job's history"
stop_daemon
cp "$db" "$lab/db.good"

# an empty database where runs/ shows jobs ran
: >"$db"
rm -f "$db-wal" "$db-shm"
start_refused
ok $([ "$rc" = 125 ] && [ ! -s "$db" ]; echo $?) \
	"an empty database in a state dir with runs: the daemon refuses to start (125) and the file stays empty ($rc)"
case "$out" in *"sandbox_unavailable"*"is empty, but this state dir holds runs"*"Recovering a state dir"*) r=0 ;; *) r=1 ;; esac
ok $r "the refusal is sandbox_unavailable, names the file and says where recovery is told ($out)"
ok $([ ! -S "$state/management.sock" ] || ! api GET /v1/health >/dev/null 2>&1; echo $?) \
	"nothing answers on the socket"

# a damaged one: its last page (a table's or an index's, not the
# schema's) overwritten, which nothing reads before a request would
cp "$lab/db.good" "$db"
size=$(stat -c %s "$db")
python3 - "$db" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    n = len(f.read()); f.seek(n - 4096 + 8); f.write(b"\xa5" * 4000)
PY
sum=$(sha256sum <"$db")
start_refused
ok $([ "$rc" = 125 ] && [ "$(sha256sum <"$db")" = "$sum" ] && [ "$(stat -c %s "$db")" = "$size" ]; echo $?) \
	"a damaged database: the daemon refuses to start (125) and leaves the file as it was ($rc)"
case "$out" in *"fails its integrity check"*) r=0 ;; *) r=1 ;; esac
ok $r "the refusal says the integrity check failed ($out)"

# the control again: the intact file back, the daemon starts with its history
cp "$lab/db.good" "$db"
start_daemon
ok $? "control: with the intact file back the daemon starts"
ok $([ "$(job show --json "$id" 2>/dev/null | jfield segments.0.result)" = exited ]; echo $?) "... and the job's history is there"
stop_daemon

# a first start on an empty file (no runs yet) is a first start
rm -rf "$state"
mkdir -p "$state"
chmod 700 "$state"
: >"$db"
start_daemon
ok $? "control: an empty database in a state dir with no runs is a first start"
stop_daemon
sanitizer_ok
tap_done
