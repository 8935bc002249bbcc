#!/bin/bash
# Signals and the end of a sandbox: a TERM sent to `cordon run` reaches
# the command's own handler (plan signals: term), INT and HUP too; after
# any exit no process of the sandbox is left; on a terminal, job control
# works and the terminal cannot be fed input from inside.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
need_exec "$CORDON_HELPERS/probe" "the probe helper"
mklab lab /var/tmp/cordon-signals.XXXXXX
# (every cordon run started in the background, by its pid, with its sandbox)
bg=()
trap 'kill_tree KILL "${bg[@]}"; rm -rf "$lab"' EXIT
mkdir -p "$lab/ws" "$lab/home" "$lab/bin"
# the build tree may be under /tmp, private inside: run the probe from here
cp "$CORDON_HELPERS/probe" "$lab/bin/probe"
export HOME="$lab/home" ASAN_OPTIONS=detect_leaks=0
unset XDG_STATE_HOME XDG_RUNTIME_DIR SSH_AUTH_SOCK
run() { "$CORDON" run -q --state-dir "$lab/state" -w "$lab/ws" -- "$@"; }
# In the background, $! must be cordon itself, not a subshell around it.
run_bg() { ( exec "$CORDON" run -q --state-dir "$lab/state" -w "$lab/ws" -- "$@" ) & bg+=($!); }

for sig in TERM INT HUP; do
	rm -f "$lab/ws/out"
	# the marker names this sandbox's processes for pgrep
	run_bg bash -c "trap 'echo trapped-$sig > out; exit 7' $sig; sleep 300.71 & wait; : cordon-sig-marker-$sig"
	pid=$!
	for _ in $(seq 100); do pgrep -f "^sleep 300.71" >/dev/null && break; sleep 0.05; done
	sleep 0.2
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	ok $([ "$(cat "$lab/ws/out" 2>/dev/null)" = "trapped-$sig" ]; echo $?) "$sig to cordon run reaches the command's trap"
	ok $([ $rc = 7 ]; echo $?) "... and cordon exits with the command's status ($rc)"
	ok $(pgrep -f "^sleep 300.71" >/dev/null && echo 1 || echo 0) "... and no process of the sandbox remains"
done

# A command that leaves a child behind: the sandbox ends with the command.
run bash -c 'setsid sleep 301.71 >/dev/null 2>&1 < /dev/null & disown; exit 0'
ok $([ $? = 0 ]; echo $?) "a command that daemonises a child exits 0"
sleep 0.2
ok $(pgrep -f "^sleep 301.71" >/dev/null && echo 1 || echo 0) "... and its child does not outlive the sandbox"

# KILL to cordon run: the sandbox dies with it.
run_bg sleep 302.71
pid=$!
for _ in $(seq 100); do pgrep -f "^sleep 302.71" >/dev/null && break; sleep 0.05; done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
for _ in $(seq 40); do pgrep -f "^sleep 302.71" >/dev/null || break; sleep 0.05; done
ok $(pgrep -f "^sleep 302.71" >/dev/null && echo 1 || echo 0) "KILL to cordon run: nothing of the sandbox remains"

# On a terminal: job control in an interactive shell, and no input injection.
if command -v script >/dev/null; then
	out=$(printf 'sleep 0.3 &\njobs\nfg\necho back-$((6*7))\nexit 5\n' |
		script -qec "$CORDON run -q --state-dir $lab/state -w $lab/ws -- bash --norc -i" /dev/null 2>&1 | tr -d '\r')
	ok $(printf '%s' "$out" | grep -q 'Running.*sleep 0.3' && printf '%s' "$out" | grep -q 'back-42'; echo $?) \
		"an interactive shell has job control on the terminal"
	out=$(script -qec "$CORDON run -q --state-dir $lab/state -w $lab/ws -- $lab/bin/probe tiocsti" /dev/null 2>&1 | tr -d '\r')
	ok $(printf '%s' "$out" | grep -q 'EPERM'; echo $?) "TIOCSTI on the operator's terminal is refused"
	ctl=$(script -qec "$lab/bin/probe tiocsti" /dev/null 2>&1 | tr -d '\r')
	ok $(printf '%s' "$ctl" | grep -qv 'EPERM'; echo $?) "control: TIOCSTI outside is not refused by a filter ($ctl)"
else
	ok 0 "# skip script(1) not installed"
fi

tap_done
