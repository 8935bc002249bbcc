#!/bin/bash
# The management API under clients that hold what others need. Any
# process of the operator's uid can connect; before, 300 connections
# dribbling a request head a byte a second held every slot, and the
# operator's `cordon job ls` waited as long as they did. Now a connection
# waiting for its request is cut after 10 s, beyond 8 from one process,
# and the oldest beyond 64 in all: the operator is answered while they
# dribble. Kept, as they held before: 200 clients at once all answered,
# a 100 MB body refused 413, 1,000 wrong tokens each refused 401.
# Controls: the same request with nothing else connected; a client that
# sends its request in pieces, but within the bound, is answered.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../host/lib.sh"
need_exec "$CORDON" CORDON
host_lab /tmp/cordon-clients.XXXXXX
trap host_cleanup EXIT
mkdir -p "$lab/home" "$lab/ws"
lab_env "$lab"
cat > "$lab/config.json" <<JSON
{"bindings": {"b": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}}}}
JSON
sock=$state/management.sock
start_daemon
ok $? "the daemon starts"
ok $(timeout 20 "$CORDON" job --state-dir "$state" ls >/dev/null 2>&1; echo $?) \
	"control: job ls is answered with nothing else connected"

# 200 clients at once
pids=()
for i in $(seq 200); do
	curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 --unix-socket "$sock" \
		-H "Authorization: Bearer $(token)" http://cordon/v1/jobs >>"$lab/codes" 2>/dev/null &
	pids+=($!)
done
wait "${pids[@]}"
ok $([ "$(grep -c '^200$' "$lab/codes")" = 200 ]; echo $?) \
	"200 clients at once: each answered 200 ($(sort "$lab/codes" | uniq -c | tr '\n' ' '))"

# 30 processes of 10 connections each, dribbling heads that never end
python3 "$here/dribble.py" "$sock" 30 10 20 >"$lab/dribble" &
dr=$!
sleep 3
out=$(timeout 10 "$CORDON" job --state-dir "$state" ls 2>&1)
rc=$?
ok $([ "$rc" = 0 ] && kill -0 "$dr" 2>/dev/null; echo $?) \
	"with 300 dribbling connections open, job ls is answered while they dribble ($rc)"
wait "$dr"
ok $(grep -q '^opened=300 .* cut=300 held=0$' "$lab/dribble"; echo $?) \
	"... and every one of them was cut ($(cat "$lab/dribble"))"

# one process, 20 connections: beyond 8 cut as they come; the 8 by the bound
python3 "$here/dribble.py" "$sock" 1 20 16 >"$lab/dribble1"
read -r o e c h < <(sed 's/[a-z_]*=//g' "$lab/dribble1")
ok $([ "$o" = 20 ] && [ "$e" = 12 ] && [ "$c" = 20 ] && [ "$h" = 0 ]; echo $?) \
	"one process's 20 waiting connections: 12 cut at once, the 8 others after the bound ($(cat "$lab/dribble1"))"

# a client that sends its request in pieces, within the bound, is served
ans=$(python3 - "$sock" "$(token)" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
req = ("GET /v1/jobs HTTP/1.1\r\nHost: cordon\r\nAuthorization: Bearer %s\r\n"
       "Connection: close\r\n\r\n" % sys.argv[2]).encode()
for i in range(0, len(req), len(req) // 4 + 1):
    s.send(req[i:i + len(req) // 4 + 1]); time.sleep(1)
print(s.recv(64).split(b"\r\n")[0].decode())
PY
)
ok $([ "$ans" = "HTTP/1.1 200 OK" ]; echo $?) "control: a request sent in four pieces a second apart is answered ($ans)"

# a 100 MB body
code=$(head -c 100000000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' --max-time 60 \
	--unix-socket "$sock" -H "Authorization: Bearer $(token)" -H 'Content-Type: application/json' \
	--data-binary @- http://cordon/v1/jobs)
ok $([ "$code" = 413 ]; echo $?) "a 100 MB body: 413 ($code)"

# 1,000 wrong tokens, over one kept-alive connection each in turn
n401=$(python3 - "$sock" <<'PY'
import socket, sys
n = 0
for i in range(1000):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.sendall(("GET /v1/jobs HTTP/1.1\r\nHost: cordon\r\nAuthorization: Bearer %064x\r\n"
               "Connection: close\r\n\r\n" % i).encode())
    n += s.recv(64).startswith(b"HTTP/1.1 401")
    s.close()
print(n)
PY
)
ok $([ "$n401" = 1000 ]; echo $?) "1,000 wrong tokens: each 401 ($n401)"
ok $(timeout 20 "$CORDON" job --state-dir "$state" ls >/dev/null 2>&1; echo $?) \
	"the daemon answers after all of it"
stop_daemon
sanitizer_ok
tap_done
