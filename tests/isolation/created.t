#!/bin/bash
# created.t: a sandbox between create and start, where the host records
# the plan (tests/helpers/created holds a launch there): nothing of the
# command has run; a wrapper killed there leaves nothing running; a
# record that fails ends the sandbox; the steps run in order make the
# command's status. Native, and srt where it is installed (srt's create
# starts nothing: srt has no point where its sandbox is made and waits;
# its whole run is isolation/srt.t's, since srt runs cordon's own binary,
# not this helper, inside).
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON_HELPERS/created" "the created helper"
mklab lab /var/tmp/cordon-created.XXXXXX
trap 'rm -rf "$lab"' EXIT
mkdir -p "$lab/ws" "$lab/home"
export HOME="$lab/home"
unset XDG_STATE_HOME XDG_RUNTIME_DIR SSH_AUTH_SOCK
created() { "$CORDON_HELPERS/created" "$lab/state" "$lab/ws" "$@"; }
# a process that is there and not a zombie (an orphan waits for its reaper)
alive() {
	_s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	_s=${_s##*) }
	[ "${_s%% *}" != Z ]
}

# A record that fails (PROVIDER, a prefix for the cases' names): the
# sandbox is ended before it runs anything (native: pid 1 killed and
# reaped), and the record's failure is the one reported.
record_fails() {
	rm -f "$lab/ws/ran"
	out=$(created fail "$1" -- /bin/sh -c "echo ran > $lab/ws/ran" 2>"$lab/err")
	rc=$?
	ok $([ "$rc" = 0 ] && [ "$(echo "$out" | sed -n 2p)" = gone ]; echo $?) \
		"${2}a record that fails leaves nothing of the sandbox ($rc: $(echo $out))"
	ok $(grep -q "the record refused by the test" "$lab/err"; echo $?) \
		"${2}... and its failure is reported"
	ok $([ ! -e "$lab/ws/ran" ]; echo $?) "${2}... and nothing of the command ran"
}

# A wrapper SIGKILLed between create and start: pid 1, which waits for
# its filter, dies with it (its parent-death signal, its sync socket).
out=$(created kill native -- /bin/sh -c "echo ran > $lab/ws/ran")
rc=$?
read -r pid1 kids _ <<<"$out"
ok $([ "$rc" = 137 ]; echo $?) "the wrapper is killed at the record ($rc)"
ok $([ "${pid1:-0}" -gt 0 ] && [ "$kids" = 0 ]; echo $?) \
	"between create and start pid 1 is there and has started nothing ($out)"
for _ in $(seq 200); do alive "$pid1" || break; sleep 0.05; done
ok $(! alive "$pid1"; echo $?) "a wrapper killed between create and start leaves no sandbox running"
ok $([ ! -e "$lab/ws/ran" ]; echo $?) "... and nothing of the command ran"

record_fails native ""

# create, record, start, wait
created start native -- /bin/sh -c "echo ran > $lab/ws/ran; exit 3" >/dev/null
rc=$?
ok $([ "$rc" = 3 ]; echo $?) "create, record, start and wait: the command's status ($rc)"
ok $([ "$(cat "$lab/ws/ran" 2>/dev/null)" = ran ]; echo $?) "... and the command ran"

if ! command -v srt >/dev/null; then
	skip "srt is not installed (scripts/deps installs it): its cases"
	tap_done
	exit
fi
rm -f "$lab/ws/ran"
out=$(created kill srt -- /bin/sh -c "echo ran > $lab/ws/ran")
rc=$?
read -r _ _ kids <<<"$out"
ok $([ "$rc" = 137 ]; echo $?) "srt: the wrapper is killed at the record ($rc)"
ok $([ "$kids" = 0 ]; echo $?) "srt: between create and start nothing is started ($out)"
ok $([ ! -e "$lab/ws/ran" ]; echo $?) "srt: ... and nothing of the command ran"
record_fails srt "srt: "
tap_done
