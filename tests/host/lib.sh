# Shared by the host's tests: TAP's ok, a daemon on $state with the
# config $lab/config.json (its stderr in $lab/daemon.err), the API with
# the operator's token, `cordon job`, and a field of a JSON answer.
# host_lab makes the lab ($lab, $state beneath it); host_cleanup ends
# what a test left (the daemon, the lab).
n=0
fails=0
dpid=
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; }
token() { cat "$state/private/operator.token"; }
# api METHOD PATH [BODY] [TOKEN]: prints "<status> <body>"
api() {
	curl -s -o "$lab/answer" -w '%{http_code}' --unix-socket "$state/management.sock" \
		-X "$1" ${3:+-d "$3"} -H "Authorization: Bearer ${4:-$(token)}" "http://cordon$2" || return 1
	printf ' %s\n' "$(cat "$lab/answer")"
}
start_daemon() {
	"$CORDON" daemon --state-dir "$state" --config "$lab/config.json" 2>>"$lab/daemon.err" &
	dpid=$!
	for _ in $(seq 200); do [ -S "$state/management.sock" ] && break; sleep 0.05; done
	# (a socket left by the last one is replaced: wait for the answer)
	for _ in $(seq 200); do api GET /v1/health >/dev/null 2>&1 && return 0; sleep 0.05; done
	return 1
}
job() { "$CORDON" job --state-dir "$state" "$@"; }
jfield() { python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d=d[int(k)] if k.isdigit() else d[k]
print(d)' "$1"; }
sanitizer_ok() {
	if grep -q 'ERROR: AddressSanitizer\|runtime error' "$lab/daemon.err"; then
		ok 1 "the daemon ran clean under the sanitizers"; sed 's/^/# /' "$lab/daemon.err" | head -40
	else
		ok 0 "the daemon ran clean under the sanitizers"
	fi
}
# host_lab TEMPLATE: the lab, mode 755 (the sandbox's user reads the
# tools put there), its links resolved; $state beneath it.
host_lab() {
	lab=$(mktemp -d "$1") || exit 1
	lab=$(cd "$lab" && pwd -P)
	chmod 755 "$lab"
	state=$lab/state
}
host_cleanup() {
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$lab"
}
# host_own_cordon: run this test's daemon and clients from a copy of
# cordon (and cordon-host beside it) in the lab, so that a sandbox can run
# it too: a build tree under /tmp is out of a sandbox's reach (its /tmp is
# its own).
host_own_cordon() {
	mkdir -p "$lab/bin"
	cp "$CORDON" "$lab/bin/cordon" && cp "$(dirname "$CORDON")/cordon-host" "$lab/bin/cordon-host" || exit 1
	CORDON=$lab/bin/cordon
}
