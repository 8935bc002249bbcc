# 12-namespaces.sh (sourced by native.t): the sandbox's own IPC, UTS,
# cgroup, pid, network, mount and user namespaces, for every provider (srt
# alone shares the host's IPC, UTS and cgroup namespaces: cordon starts it
# inside namespaces of its own). The host's System V shared memory and
# message queues and its POSIX message queues are out of reach.

IPC_KEY=$(printf '0x%x' $(( 0x42c00000 + ($$ % 65536) * 4 )))
for kind in shm msg mq; do
	first "$(run_out ipc-make "$kind" "$IPC_KEY")" >/dev/null
	case_denied "the host's System V / POSIX $kind object ($IPC_KEY) is unreachable" \
		ipc-read "$kind" "$IPC_KEY"
	run_out ipc-remove "$kind" "$IPC_KEY" >/dev/null
done

# ns_case NAME: the sandbox's namespace of that kind is not the host's.
ns_case() {
	local ns=$1 desc="the $1 namespace is the sandbox's own" in out
	out=$(first "$(run_out ns "$ns")")
	if [ "${out%% *}" != ok ]; then
		tap fail "$desc # broken: control failed" "outside: '$out'"
		return
	fi
	if [ $MODE != full ]; then
		tap ok "$desc (control only; outside: $out)"
		return
	fi
	in=$(first "$(run_in ns "$ns")")
	if [ "${in%% *}" = ok ] && [ "$in" != "$out" ]; then
		tap ok "$desc (inside: ${in#ok }; host: ${out#ok })"
	else
		tap fail "$desc" "inside '$in', host '$out'" "$(inside_diag "'$in'")"
	fi
}
for ns in ipc uts cgroup pid net mnt user; do
	ns_case "$ns"
done
