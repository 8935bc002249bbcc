# Shared by the host's tests, after tests/lib/lib.sh (TAP, premises,
# labs, processes by pid): a daemon on $state with the config
# $lab/config.json (start_daemon, stop_daemon; its stderr in
# $lab/daemon.err), the API with the operator's token, `cordon job`, and
# a field of a JSON answer. host_lab makes the lab ($lab, $state beneath
# it); host_cleanup ends what a test left (the daemon, every process of
# the jobs it ran, the lab).
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"
dpid=
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
# stop_daemon [SIG]: the daemon sent SIG (TERM), waited for; its status
stop_daemon() {
	local rc
	kill -"${1:-TERM}" "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	rc=$?
	dpid=
	return $rc
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
	mklab lab "$1"
	chmod 755 "$lab"
	state=$lab/state
}
# host_end_jobs [ID...]: every process of the jobs the daemon ran (of
# those given, or of all), by the roots it pinned: a segment's pin in
# $state/runs/<id>/pins.json names its wrapper by pid and start time, and
# the wrapper leads a session of its own that its sandbox and command stay
# in (a pid now another process's, by its start time, is left alone)
host_end_jobs() {
	local id pid ticks now
	[ $# -gt 0 ] || set -- $(ls "$state/runs" 2>/dev/null)
	for id in "$@"; do
		while read -r pid ticks; do
			now=$(proc_start "$pid") && [ "$now" != "$ticks" ] && continue
			kill_session KILL "$pid"
		done < <(job_roots "$id")
	done
}
# job_roots ID: "pid start_ticks" of each root its segments' pins name
job_roots() {
	[ -f "$state/runs/$1/pins.json" ] || return 0
	python3 -c 'import json,sys
for s in json.load(open(sys.argv[1])).values():
    r = s.get("root") if isinstance(s, dict) else None
    if r: print(r["pid"], r["start_ticks"])' "$state/runs/$1/pins.json" 2>/dev/null
}
host_cleanup() {
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	[ -n "${state:-}" ] && host_end_jobs
	# (what the test itself left running in the background, by its pid)
	kill_jobs KILL
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
