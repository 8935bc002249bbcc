# 13-supervisor.sh (sourced by native.t): nothing of a sandbox outlives
# the process that holds it. A kill -9 of the root's child (native: the
# sandbox's pid 1; srt: the keeper, first process of cordon's pid
# namespace around srt) ends the run and leaves no process of the
# sandbox running. The control: a shell killed the same way on the host
# leaves its sleep running (reparented), which the same search finds.

supervisor_case() {
	local desc="a kill -9 of the root's child leaves nothing of the sandbox running"
	local mark="4$$.4243" r child left out sh_pid w
	# control: the search finds a survivor on the host
	sh -c "sleep $mark & wait" </dev/null >/dev/null 2>&1 &
	sh_pid=$!
	for _ in $(seq 100); do pgrep -f "^sleep $mark\$" >/dev/null && break; sleep 0.05; done
	kill -KILL "$sh_pid" 2>/dev/null
	wait "$sh_pid" 2>/dev/null
	sleep 0.2
	out=$(pgrep -f "^sleep $mark\$" | head -n 1)
	[ -n "$out" ] && kill "$out" 2>/dev/null
	if [ -z "$out" ]; then
		tap fail "$desc # broken: control failed" "a sleep whose shell was killed was not found"
		return
	fi
	if [ $MODE != full ]; then
		tap ok "$desc (control only)"
		return
	fi
	run_in_cmd -- sh -c "sleep $mark & wait" >/dev/null &
	w=$!
	for _ in $(seq 600); do pgrep -f "^sleep $mark\$" >/dev/null && break; sleep 0.05; done
	# the root is the first `cordon` beneath the background job (a shell,
	# the timeout run_in_cmd starts)
	r=$w
	for _ in 1 2 3 4; do
		[ "$(cat "/proc/$r/comm" 2>/dev/null)" = cordon ] && break
		r=$(pgrep -P "$r" | head -n 1)
		[ -n "$r" ] || break
	done
	child=$(pgrep -P "$r" | head -n 1)
	if [ -z "$child" ]; then
		tap fail "$desc" "could not find the root's child (root '$r')"
		kill "$w" 2>/dev/null
		return
	fi
	kill -KILL "$child"
	wait "$w"
	for _ in $(seq 50); do pgrep -f "^sleep $mark\$" >/dev/null || break; sleep 0.1; done
	left=$(pgrep -f "^sleep $mark\$" | head -n 1)
	if [ -z "$left" ]; then
		tap ok "$desc (killed pid $child beneath root $r)"
	else
		kill "$left" 2>/dev/null
		tap fail "$desc" "pid $left of the sandbox still runs after pid $child was killed"
	fi
}
supervisor_case
