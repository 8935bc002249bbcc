# gwlab.sh: the gateway suite's lab, sourced by tests/gateway/*.t (bash).
#
# gw_lab NAME makes $LAB (under /var/tmp: a sandbox's /tmp is private, and
# the build tree may live under /tmp), copies the python helpers into
# $LAB/bin and sets an EXIT trap that stops every process started here
# (by its pid) and removes the lab.
#
#   ok, skip, diag, tap_done                  TAP (tests/lib/lib.sh, sourced
#                                             here: "DESC # TODO why" is a
#                                             known gap, not a failure)
#   start_server VAR KIND [ARGS...]           servers.py KIND on 127.0.0.2;
#                                             its port in $VAR (run under
#                                             "${GW_PREFIX[@]}" if set)
#   start_dns VAR [ARGS...]                   dnsserver.py on 127.0.0.1
#   start_gw VAR [GATEWAY ARGS...]            `cordon gateway` on a free
#                                             port of $GW_LISTEN_IP
#                                             (127.0.0.1 unless set; 0.0.0.0
#                                             is reached on 127.0.0.1), in $VAR; its
#                                             audit log $LAB/<VAR>.jsonl,
#                                             stderr $LAB/<VAR>.err, pid
#                                             in GWPID_<VAR>
#   stop_gw VAR                               TERM it, check it ended well
#   pcurl ARGS...                             curl, bounded, no env proxies
#   gwc ARGS...                               gwclient.py
#   field OUTPUT KEY                          KEY=value from a helper's output
#   netns_part FLAG MIN                       run "$0 FLAG $LAB" inside
#                                             `unshare -n`, its RESULT lines
#                                             as cases (at least MIN)
#   netns_peer ADDR...                        (inside it) a peer namespace
#                                             joined by a veth pair, with
#                                             ADDR... on its side; pid $PEER
# Every server is bounded by its own --max-seconds and by the trap.
# CORDON_GW_KEEP=1 keeps the lab for a post-mortem.

set -u
GW_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
. "$GW_SRC/../lib/lib.sh"
need_exec "$CORDON" CORDON
GW_TIMEOUT=${CORDON_GW_TIMEOUT:-300}
GW_PIDS=()
GW_PREFIX=()	# a command start_server runs servers.py under (nsenter ...)
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=$(command -v python3); fi

# Only our own children: a pid already waited for may name another process.
gw_cleanup() {
	local p
	for p in "${GW_PIDS[@]}"; do
		[ "$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)" = "$$" ] && kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ -n "${CORDON_GW_KEEP:-}" ]; then
		echo "# lab kept: $LAB"
	elif [ -n "${LAB:-}" ] && [ -d "$LAB" ]; then
		chmod -R u+rwX "$LAB" 2>/dev/null
		rm -rf "$LAB"
	fi
}

gw_lab() {
	mklab LAB "/var/tmp/cordon-gw-$1.XXXXXX"
	chmod 0755 "$LAB"
	trap gw_cleanup EXIT
	trap 'exit 130' INT TERM
	GW_BIN=$LAB/bin
	mkdir -p "$GW_BIN"
	cp "$GW_SRC/servers.py" "$GW_SRC/gwclient.py" "$GW_SRC/dnsserver.py" "$GW_BIN/" || exit 1
}

# wait_line FILE: the first line of FILE once written (10 s at most).
wait_line() {
	local i
	for i in $(seq 100); do
		if [ -s "$1" ] && [ "$(wc -l < "$1")" -ge 1 ]; then
			head -n1 "$1"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

start_server() {
	local var=$1 kind=$2 port
	shift 2
	"${GW_PREFIX[@]}" "$PY" "$GW_BIN/servers.py" "$kind" --max-seconds "$GW_TIMEOUT" "$@" \
		</dev/null >"$LAB/$var.out" 2>"$LAB/$var.err" &
	GW_PIDS+=($!)
	port=$(wait_line "$LAB/$var.out") || { cat "$LAB/$var.err" >&2; return 1; }
	printf -v "$var" '%s' "$port"
}

start_dns() {
	local var=$1 port
	shift
	"$PY" "$GW_BIN/dnsserver.py" --port 0 --max-seconds "$GW_TIMEOUT" "$@" \
		</dev/null >"$LAB/$var.out" 2>"$LAB/$var.err" &
	GW_PIDS+=($!)
	port=$(wait_line "$LAB/$var.out") || { cat "$LAB/$var.err" >&2; return 1; }
	printf -v "$var" '%s' "$port"
}

free_port() {
	"$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# port_open PORT [IP]: something accepts on IP (127.0.0.1) and PORT.
port_open() {
	"$PY" -c 'import socket,sys; socket.create_connection((sys.argv[2],int(sys.argv[1])),1).close()' \
		"$1" "${2:-127.0.0.1}" 2>/dev/null
}

# The gateway runs in the foreground of its own `timeout` (a bound on its
# life); GWPID_<VAR> is the gateway itself, for /proc and for TERM.
start_gw() {
	local var=$1 port try i pid tpid ip=${GW_LISTEN_IP:-127.0.0.1} reach
	shift
	reach=$ip
	[ "$ip" = 0.0.0.0 ] && reach=127.0.0.1
	for try in 1 2 3 4 5; do
		port=$(free_port)
		: > "$LAB/$var.err"
		timeout -k 5 "$GW_TIMEOUT" "$CORDON" gateway --listen "tcp:$ip:$port" \
			--audit "$LAB/$var.jsonl" "$@" </dev/null >"$LAB/$var.out" 2>"$LAB/$var.err" &
		tpid=$!
		GW_PIDS+=($tpid)
		for i in $(seq 100); do
			port_open "$port" "$reach" && break
			kill -0 "$tpid" 2>/dev/null || break
			sleep 0.1
		done
		if port_open "$port" "$reach"; then
			pid=$(pgrep -P "$tpid" | head -n1)
			printf -v "$var" '%s' "$port"
			printf -v "GWPID_$var" '%s' "${pid:-$tpid}"
			printf -v "GWTPID_$var" '%s' "$tpid"
			return 0
		fi
		kill "$tpid" 2>/dev/null
		wait "$tpid" 2>/dev/null
		grep -q 'Address already in use' "$LAB/$var.err" || break
	done
	cat "$LAB/$var.err" >&2
	return 1
}

# gw_alive VAR: the gateway still runs (no crash so far).
gw_alive() {
	local pid=GWPID_$1
	kill -0 "${!pid}" 2>/dev/null
}

# stop_gw VAR: TERM to the gateway, then check that it ends by itself
# (within 20 s: no timing is asserted below that), its exit status and
# that no sanitizer report was written.
stop_gw() {
	local tp=GWTPID_$1 gp=GWPID_$1 rc i
	kill -TERM "${!gp}" 2>/dev/null
	for i in $(seq 200); do
		kill -0 "${!gp}" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "${!gp}" 2>/dev/null; then
		diag "gateway $1 still running 20 s after TERM: $(tr '\0' ' ' < "/proc/${!gp}/cmdline" | cut -c1-60)" \
			"$(grep -E '^(State|SigBlk|SigPnd|ShdPnd)' "/proc/${!gp}/status" | tr '\n\t' '  ')" \
			"wchan $(cat "/proc/${!gp}/wchan" 2>/dev/null) syscall $(cat "/proc/${!gp}/syscall" 2>/dev/null)"
		kill -KILL "${!gp}" 2>/dev/null
	fi
	wait "${!tp}"
	rc=$?
	ok $([ $rc = 0 ] && ! grep -q 'Sanitizer' "$LAB/$1.err"; echo $?) \
		"gateway $1 ends 0 on TERM, no sanitizer report (rc $rc)"
	if grep -q 'Sanitizer' "$LAB/$1.err"; then
		sed -n '1,30p' "$LAB/$1.err" | sed 's/^/# /'
	fi
}

pcurl() { timeout -k 2 30 curl -sS --max-time 20 "$@"; }
gwc() { timeout -k 2 "${GWC_TIMEOUT:-60}" "$PY" "$GW_BIN/gwclient.py" "$@"; }
# field "$out" KEY: the value of the first KEY=... line.
field() { printf '%s\n' "$1" | sed -n "s/^$2=//p" | head -n1; }

# netns_part FLAG MIN: as root with network namespaces, run this script
# again as `$0 FLAG $LAB` inside `unshare -n` (a fresh network namespace)
# and report its "RESULT status description" lines as cases; at least MIN
# of them must come. Skipped, with the reason, where there are none.
netns_part() {
	local flag=$1 min=$2 got=0 tag st desc
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v nsenter >/dev/null ||
		! unshare -n true 2>/dev/null; then
		skip "no network namespaces here (root, ip, nsenter, unshare -n)"
		return
	fi
	timeout -k 5 120 unshare -n -- bash "$0" "$flag" "$LAB" >"$LAB/netns.out" 2>"$LAB/netns.err"
	while read -r tag st desc; do
		[ "$tag" = RESULT ] || continue
		ok "$st" "netns: $desc"
		got=$((got + 1))
	done < "$LAB/netns.out"
	ok $([ "$got" -ge "$min" ]; echo $?) "the network namespace part ran all its cases ($got)"
	[ "$got" -ge "$min" ] || sed 's/^/# /' "$LAB/netns.err" | head -20
}

# netns_peer ADDR...: inside netns_part's namespace, a second one (its
# holder's pid in $PEER, stopped by the trap) joined by a veth pair: this
# side 44.0.0.1/29 (cgw0), the peer's side (cpub0) every ADDR (with its
# prefix length) and a default route back. Neither reaches the host's
# networks. Run the peer's servers under GW_PREFIX=(nsenter -t "$PEER" -n).
netns_peer() {
	local i a cmd='ip link set lo up'
	ip link set lo up || return 1
	unshare -n sleep "$GW_TIMEOUT" </dev/null >/dev/null 2>&1 &
	PEER=$!
	GW_PIDS+=("$PEER")
	for i in $(seq 50); do
		[ "$(readlink "/proc/$PEER/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.1
	done
	for a in "$@"; do cmd+=" && ip addr add $a dev cpub0"; done
	ip link add cgw0 type veth peer name cpub0 netns "$PEER" &&
		ip addr add 44.0.0.1/29 dev cgw0 && ip link set cgw0 up &&
		nsenter -t "$PEER" -n sh -c "$cmd && ip link set cpub0 up && ip route add default via 44.0.0.1"
}
