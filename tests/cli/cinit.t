#!/bin/bash
# cinit.t: `cordon cinit`, cordon's runtime as a container's pid 1, run
# without Docker: as pid 1 of `unshare --net --pid --fork --mount-proc`
# (a network namespace holding only lo, as Docker's network mode none),
# with a real `cordon gateway` serving the channel socket from the host's
# namespace, and an HTTP origin and a TCP echo server on the host's
# loopback that only the gateway can reach. It checks: the secrets file
# taken into the command's environment and gone before the command runs,
# each malformed or unsafe secrets file refused (125, nothing run, the
# value never printed, the file gone); the proxy variables pointed at pid
# 1's relays, replacing those given; HTTP, CONNECT and SOCKS5 through the
# relays reaching the gateway (its audit log) and nothing reached without
# them; a half-close passed on; a missing channel closing the client; the
# connection cap; a taken port refusing with 125 before anything runs;
# exit statuses (0, 3, 128+N, 126, 127); TERM leaving the marker and
# reaching the command's trap, INT and HUP reaching it without one;
# orphans reaped; stdin reaching the command; Landlock (writes only
# beneath --write) and seccomp (unshare refused), each with a control.
# Run it with CORDON=build/cordon-static too.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON

skip_unless_root "needs root (unshare of the network and pid namespaces)"
skip_unless_tools unshare ip curl /usr/bin/python3
if ! unshare --net --pid --fork --mount-proc sh -c 'ip link set lo up' 2>/dev/null; then
	skip_all "unshare --net --pid cannot run here"
fi
if ! "$CORDON" cinit --help >/dev/null 2>&1; then
	bail "$CORDON has no cinit"
fi

PY=/usr/bin/python3
t() { "$@" >/dev/null 2>&1; echo $?; }
# pid 1 (an ASan build, perhaps) leaves through _exit; its 125 paths
# through main, where a leak check is welcome.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
LAB=$(mktemp -d /var/tmp/cordon-cinit.XXXXXX) || bail "mktemp"
LAB=$(cd "$LAB" && pwd -P)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$LAB"
}
trap cleanup EXIT
mkdir -p "$LAB/ws" "$LAB/outside" "$LAB/www"
echo hello-origin > "$LAB/www/index.html"

free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
OP=$(free_port)
EP=$(free_port)
(cd "$LAB/www" && exec $PY -m http.server "$OP" --bind 127.0.0.1) >/dev/null 2>&1 &
PIDS+=($!)
# echo: reads to EOF, then answers with the count and closes
$PY - "$EP" >/dev/null 2>&1 <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c, _ = s.accept(); got = b""
    while True:
        b = c.recv(65536)
        if not b: break
        got += b
    c.sendall(b"got %d" % len(got)); c.close()
PY
PIDS+=($!)
GW=$LAB/gw.sock
AUDIT=$LAB/audit.log
"$CORDON" gateway --listen "unix:$GW" --allow "127.0.0.1:$OP" --allow "127.0.0.1:$EP" \
	--audit "$AUDIT" 2>"$LAB/gw.err" &
PIDS+=($!)
for _ in $(seq 100); do
	[ -S "$GW" ] && curl -s -o /dev/null "http://127.0.0.1:$OP/" && break
	sleep 0.05
done
if [ ! -S "$GW" ]; then
	echo "Bail out! the gateway did not start: $(head -c 300 "$LAB/gw.err")"
	exit 1
fi

# A fresh run dir for each case.
r=0
newrun() { r=$((r + 1)); RUN=$LAB/run$r; mkdir -m 0700 "$RUN"; }
# ci [cinit options] -- CMD...: cinit as pid 1 of new net and pid
# namespaces; stdout in $LAB/out, stderr in $LAB/err, status in $rc.
CH=$GW
ci() {
	timeout -k 5 60 unshare --net --pid --fork --mount-proc \
		sh -c 'ip link set lo up && exec "$0" cinit "$@"' "$CORDON" \
		--run "$RUN" --channel "$CH" --write "$LAB/ws" "$@" >"$LAB/out" 2>"$LAB/err"
	rc=$?
}
ci_in() { local in=$1; shift; ci "$@" <"$in"; }
# secrets FILE-CONTENT [MODE]: the run dir's secrets file
secrets() { printf '%s' "$1" > "$RUN/.cordon-secrets"; chmod "${2:-0600}" "$RUN/.cordon-secrets"; }

# --- secrets ----------------------------------------------------------------
newrun
secrets '{"CORDON_T_SECRET":"va lue=with \"quotes\" and ünïcode","CORDON_T_OLD":"new","_X1":""}'
CORDON_T_OLD=old ci -- sh -c 'test -e "$0/.cordon-secrets" && echo present; printf "%s|%s|%s|" "$CORDON_T_SECRET" "$CORDON_T_OLD" "${_X1-unset}"' "$RUN"
ok $([ $rc = 0 ] && [ "$(cat "$LAB/out")" = 'va lue=with "quotes" and ünïcode|new||' ]; echo $?) \
	"secrets reach the command's environment exactly, over a variable of the same name ($rc: $(head -c 200 "$LAB/out") $(head -c 200 "$LAB/err"))"
ok $([ ! -e "$RUN/.cordon-secrets" ]; echo $?) "... and the file is gone before the command runs and after"
newrun
CORDON_T_OLD=old ci -- sh -c 'printf "%s|%s" "${CORDON_T_SECRET-unset}" "$CORDON_T_OLD"'
ok $([ $rc = 0 ] && [ "$(cat "$LAB/out")" = 'unset|old' ]; echo $?) \
	"control: without a secrets file the command has the container's environment ($(cat "$LAB/out"))"

# refused: 125, nothing run, the value nowhere in the message, no file left
refused() {
	local desc=$1 want=$2
	rm -f "$LAB/ws/ran"
	ci -- sh -c 'echo ran > "$0/ws/ran"' "$LAB"
	ok $([ $rc = 125 ] && [ ! -e "$LAB/ws/ran" ] && grep -qF "$RUN/.cordon-secrets" "$LAB/err" &&
		grep -q "$want" "$LAB/err" && ! grep -q 'sekrit' "$LAB/err" "$LAB/out"; echo $?) \
		"a secrets file $desc: refused with 125, nothing run, no value shown ($rc: $(head -c 300 "$LAB/err"))"
}
newrun
echo '{"CORDON_T_SECRET":"sekrit-1"}' > "$LAB/target"
chmod 0600 "$LAB/target"
ln -s "$LAB/target" "$RUN/.cordon-secrets"
refused "that is a symbolic link" "symbolic link"
ok $([ -e "$LAB/target" ]; echo $?) "... and the link's target is not touched"
newrun; secrets '{"CORDON_T_SECRET":"sekrit-2"}' 0640
refused "readable by the group" "mode 0640"
ok $([ ! -e "$RUN/.cordon-secrets" ]; echo $?) "... and it is removed all the same"
newrun; secrets '{"CORDON_T_SECRET":"sekrit-3"}' 0604
refused "readable by others" "mode 0604"
newrun; secrets '{"lower_sekrit":"sekrit-4"}'
refused "with a name that is not an environment name" "name 1 is not"
newrun; secrets '{"A":"x","1B":"sekrit-5"}'
refused "with a name starting with a digit" "name 2 is not"
newrun; secrets '{"CORDON_T_SECRET":"sekrit-6",}'
refused "that is not JSON" "not strict JSON"
ok $([ ! -e "$RUN/.cordon-secrets" ]; echo $?) "... and it is removed all the same"
newrun; secrets '{"CORDON_T_SECRET":"sekrit-7","CORDON_T_SECRET":"sekrit-8"}'
refused "with a name given twice" "not strict JSON"
newrun; secrets '{"CORDON_T_SECRET":"sekrit\u0000-9"}'
refused "with a NUL in a value" "not strict JSON"
newrun; secrets '{"CORDON_T_SECRET":["sekrit-10"]}'
refused "with a value that is not a string" "CORDON_T_SECRET is not a string"
newrun; secrets '["sekrit-11"]'
refused "that is not an object" "not a JSON object"
newrun; { printf '{"A":"'; head -c 1100000 /dev/zero | tr '\0' 'a'; printf '","B":"sekrit-12"}'; } > "$RUN/.cordon-secrets"
chmod 0600 "$RUN/.cordon-secrets"
refused "over 1 MiB" "larger than"
newrun; secrets '{"CORDON_T_SECRET":"sekrit-13"}'
ln "$RUN/.cordon-secrets" "$LAB/second-name"
refused "with a second hard link" "another hard link"
newrun; mkdir "$RUN/.cordon-secrets"
refused "that is a directory" "not a regular file"
newrun; secrets '{"CORDON_T_SECRET":"sekrit-14"}'
chown 12345 "$RUN/.cordon-secrets"
refused "owned by another user" "owned by uid 12345"
newrun; ln -s "$RUN" "$LAB/runlink"
rm -f "$LAB/ws/ran"
RUN=$LAB/runlink ci -- sh -c 'echo ran > "$0/ws/ran"' "$LAB"
ok $([ $rc = 125 ] && [ ! -e "$LAB/ws/ran" ]; echo $?) \
	"a run dir reached through a symbolic link is refused ($rc: $(head -c 200 "$LAB/err"))"

# --- the proxies --------------------------------------------------------------
newrun
HTTP_PROXY=http://evil.invalid:1 https_proxy=http://evil.invalid:2 ALL_PROXY=socks5://evil.invalid:3 \
	NO_PROXY='*' CORDON_T_KEEP=kept ci -- sh -c 'for v in HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY http_proxy https_proxy all_proxy no_proxy CORDON_T_KEEP; do eval "echo $v=\${$v-unset}"; done'
want="HTTP_PROXY=http://127.0.0.1:3128
HTTPS_PROXY=http://127.0.0.1:3128
ALL_PROXY=socks5h://127.0.0.1:1080
NO_PROXY=localhost,127.0.0.1,::1
http_proxy=http://127.0.0.1:3128
https_proxy=http://127.0.0.1:3128
all_proxy=socks5h://127.0.0.1:1080
no_proxy=localhost,127.0.0.1,::1
CORDON_T_KEEP=kept"
ok $([ $rc = 0 ] && [ "$(cat "$LAB/out")" = "$want" ]; echo $?) \
	"every proxy variable points at pid 1's relays, those given replaced (control: another variable passes)"

audit_has() { grep -c "\"protocol\":\"$1\",\"host\":\"$2\",\"port\":$3,.*\"verdict\":\"$4\"" "$AUDIT" 2>/dev/null; }
newrun
: > "$AUDIT"
# the origin is 127.0.0.1, which NO_PROXY exempts: the proxy is named
ci -- sh -c "curl -sS --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:$OP/index.html
	curl -sS --noproxy '' -x http://127.0.0.1:3128 -p http://127.0.0.1:$OP/index.html
	curl -sS --noproxy '' -x socks5h://127.0.0.1:1080 http://127.0.0.1:$OP/index.html
	curl -sS -o /dev/null -w '%{http_code}' http://denied.example/; echo;
	curl -sS -m 5 --noproxy '*' http://127.0.0.1:$OP/index.html >/dev/null 2>&1; echo direct=\$?"
sleep 0.3 # the gateway audits as each connection ends
ok $([ $rc = 0 ] && [ "$(sed -n 1,3p "$LAB/out")" = "hello-origin
hello-origin
hello-origin" ]; echo $?) "HTTP, CONNECT and SOCKS5 through 127.0.0.1:3128 and :1080 reach the origin ($rc: $(head -c 300 "$LAB/out" | tr '\n' ' ') $(head -c 200 "$LAB/err"))"
ok $([ "$(audit_has http 127.0.0.1 "$OP" allow)" = 1 ] && [ "$(audit_has http-connect 127.0.0.1 "$OP" allow)" = 1 ] &&
	[ "$(audit_has socks5 127.0.0.1 "$OP" allow)" = 1 ]; echo $?) "... each one decided by the gateway (its audit log)"
ok $([ "$(sed -n 4p "$LAB/out")" = 403 ] && [ "$(audit_has http denied.example 80 deny)" = 1 ]; echo $?) \
	"a host the gateway does not allow is refused there (403, audited; the environment's proxy used)"
ok $([ "$(sed -n 5p "$LAB/out")" != direct=0 ]; echo $?) \
	"control: without the relay the origin cannot be reached ($(sed -n 5p "$LAB/out"))"

newrun
cat > "$LAB/half.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[1].encode())
head = b""
while b"\r\n\r\n" not in head:
    b = s.recv(1)
    if not b: sys.exit("no answer")
    head += b
s.sendall(b"x" * 300000)
s.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = s.recv(65536)
    if not b: break
    got += b
print(head.split(b"\r\n")[0].decode(), got.decode())
PY
ci -- "$PY" "$LAB/half.py" "$EP"
ok $([ $rc = 0 ] && grep -q ' 200 .*got 300000$' "$LAB/out"; echo $?) \
	"a half-close passes through the relay: the origin sees the end and still answers ($rc: $(cat "$LAB/out") $(head -c 200 "$LAB/err"))"

newrun
cat > "$LAB/cap.py" <<'PY'
import socket, select, time
socks = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(600)]
time.sleep(1.5)
closed = 0
for s in socks:
    r, _, _ = select.select([s], [], [], 0)
    if r and s.recv(1) == b"":
        closed += 1
print(closed)
PY
ci -- "$PY" "$LAB/cap.py"
ok $([ $rc = 0 ] && [ "$(cat "$LAB/out")" = 88 ]; echo $?) \
	"the connection cap: of 600 clients at once, those past 512 are closed ($rc: $(cat "$LAB/out") $(head -c 200 "$LAB/err"))"

newrun
CH=$LAB/no-such.sock ci -- sh -c "curl -sS -m 5 --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:$OP/ >/dev/null 2>&1; echo \$?; exit 4"
ok $([ $rc = 4 ] && { [ "$(cat "$LAB/out")" = 52 ] || [ "$(cat "$LAB/out")" = 56 ]; }; echo $?) \
	"a channel that cannot be reached closes the client (curl $(cat "$LAB/out"): not refused, not hung), and pid 1 goes on"

newrun
rm -f "$LAB/ws/ran"
timeout -k 5 60 unshare --net --pid --fork --mount-proc sh -c '
	ip link set lo up || exit 1
	"$0" -c "import socket,time; s=socket.socket(); s.bind((\"127.0.0.1\",3128)); s.listen(); time.sleep(30)" &
	for i in $(seq 100); do [ -n "$(ss -Hltn sport = 3128 2>/dev/null)" ] && break; sleep 0.05; done
	exec "$1" cinit --run "$2" --channel "$3" -- sh -c "echo ran > \"\$0\"" "$4"' \
	"$PY" "$CORDON" "$RUN" "$GW" "$LAB/ws/ran" >"$LAB/out" 2>"$LAB/err"
rc=$?
ok $([ $rc = 125 ] && [ ! -e "$LAB/ws/ran" ] && grep -q '127.0.0.1:3128' "$LAB/err"; echo $?) \
	"a port that cannot be listened on refuses with 125 before the command runs ($rc: $(head -c 200 "$LAB/err"))"

# --- the command --------------------------------------------------------------
for want in 0 3; do
	newrun; ci -- sh -c "exit $want"
	ok $([ $rc = "$want" ]; echo $?) "the command's exit status $want is pid 1's ($rc)"
done
newrun; ci -- sh -c 'kill -KILL $$'
ok $([ $rc = 137 ]; echo $?) "a command ended by KILL: 128+9 ($rc)"
newrun; ci -- /nonexistent/command
ok $([ $rc = 127 ]; echo $?) "a command that does not exist: 127 ($rc)"
printf '#!/bin/sh\nexit 0\n' > "$LAB/ws/noexec"; chmod 0644 "$LAB/ws/noexec"
newrun; ci -- "$LAB/ws/noexec"
ok $([ $rc = 126 ]; echo $?) "a command that is not executable: 126 ($rc)"
rc=0; "$CORDON" cinit --run "$LAB" --channel "$GW" -- true 2>"$LAB/err" || rc=$?
ok $([ $rc = 125 ] && grep -q 'not pid 1' "$LAB/err"; echo $?) "outside a pid namespace of its own cinit refuses ($rc)"

newrun
printf 'line-from-stdin\n' > "$LAB/in"
ci_in "$LAB/in" -- sh -c 'read x; echo "got:$x"'
ok $([ $rc = 0 ] && [ "$(cat "$LAB/out")" = got:line-from-stdin ]; echo $?) "the container's stdin reaches the command"

# signals: sent to pid 1 (its pid outside, the child of unshare)
pid1_of() {
	local up=$1 c
	for _ in $(seq 200); do
		c=$(cat "/proc/$up/task/$up/children" 2>/dev/null)
		[ -n "$c" ] && { echo "${c%% *}"; return 0; }
		sleep 0.05
	done
	return 1
}
for sig in TERM INT HUP; do
	newrun
	rm -f "$LAB/ws/ready" "$LAB/ws/trapped"
	unshare --net --pid --fork --mount-proc sh -c 'ip link set lo up && exec "$0" cinit "$@"' "$CORDON" \
		--run "$RUN" --channel "$GW" --write "$LAB/ws" -- \
		sh -c "trap 'echo $sig > \"\$0/trapped\"; exit 7' $sig; echo > \"\$0/ready\"; while :; do sleep 0.05; done" \
		"$LAB/ws" >"$LAB/out" 2>"$LAB/err" &
	up=$!
	p1=$(pid1_of "$up")
	for _ in $(seq 200); do [ -e "$LAB/ws/ready" ] && break; sleep 0.05; done
	kill -"$sig" "$p1"
	for _ in $(seq 200); do kill -0 "$up" 2>/dev/null || break; sleep 0.05; done
	kill -KILL "$up" 2>/dev/null
	wait "$up"
	rc=$?
	ok $([ "$(cat "$LAB/ws/trapped" 2>/dev/null)" = "$sig" ] && [ $rc = 7 ]; echo $?) \
		"$sig to pid 1 reaches the command's trap, and pid 1 exits with its status ($rc)"
	if [ "$sig" = TERM ]; then
		m=$RUN/.cordon-term
		ok $([ -f "$m" ] && [ ! -L "$m" ] && [ "$(stat -c %a "$m")" = 644 ] &&
			grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' "$m"; echo $?) \
			"... TERM first leaves the marker in the run dir ($(cat "$m" 2>/dev/null))"
	else
		ok $([ ! -e "$RUN/.cordon-term" ]; echo $?) "... $sig leaves no TERM marker (control)"
	fi
done

newrun
ci -- sh -c '(sh -c "sleep 0.1; exit 0" &); sleep 1; z=0
	for s in /proc/[0-9]*/stat; do read -r _ _ st _ < "$s" 2>/dev/null && [ "$st" = Z ] && z=$((z + 1)); done
	echo "zombies:$z"; (sleep 300 &); exit 0'
ok $([ $rc = 0 ] && [ "$(cat "$LAB/out")" = zombies:0 ]; echo $?) \
	"orphans are reaped, and a process left behind does not hold pid 1 ($rc: $(cat "$LAB/out"))"

newrun
rm -f "$LAB/ws/in" "$LAB/outside/f"
ci -- sh -c 'echo in > "$0/ws/in"; echo out > "$0/outside/f" 2>/dev/null; echo "outside:$?"; cat /proc/1/environ >/dev/null 2>&1; echo "environ:$?"; cat /proc/self/environ >/dev/null; echo "self:$?"' "$LAB"
ok $([ "$(cat "$LAB/ws/in" 2>/dev/null)" = in ]; echo $?) "control: the command writes beneath --write"
ok $([ ! -e "$LAB/outside/f" ] && grep -q '^outside:[1-9]' "$LAB/out"; echo $?) \
	"the command cannot write outside --write (Landlock)"
ok $(touch "$LAB/outside/f" 2>/dev/null; [ -e "$LAB/outside/f" ]; echo $?) "control: outside, the same user writes there"
ok $(grep -q '^environ:[1-9]' "$LAB/out" && grep -q '^self:0' "$LAB/out"; echo $?) \
	"the command cannot read pid 1's environment (control: its own)"
newrun
ci -- sh -c 'unshare -U true 2>/dev/null; echo "unshare:$?"'
ok $([ "$(cat "$LAB/out")" != unshare:0 ] && [ -n "$(cat "$LAB/out")" ]; echo $?) \
	"the command is under the seccomp filter: unshare refused ($(cat "$LAB/out"))"
ok $(t unshare -U true) "control: unshare -U works outside"

if grep -q 'ERROR: AddressSanitizer\|runtime error' "$LAB/gw.err"; then
	ok 1 "the gateway ran clean under the sanitizers"
	sed 's/^/# /' "$LAB/gw.err" | head -20
fi
tap_done
