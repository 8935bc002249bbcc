#!/bin/bash
# Fail closed: every step of the native sandbox that cannot be taken ends
# the launch as sandbox_unavailable naming the step, and the command never
# runs. Each failure is made real with `failwith`, which makes one system
# call fail for cordon and everything it starts; the control is the same
# launch without it, where the command runs.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
F="$CORDON_HELPERS/failwith"
need_exec "$F" "make build/san/tests/helpers/failwith"
mklab lab /tmp/cordon-failclosed.XXXXXX
trap 'rm -rf "$lab"' EXIT
mkdir -p "$lab/ws" "$lab/home"
export HOME="$lab/home"
unset XDG_STATE_HOME XDG_RUNTIME_DIR SSH_AUTH_SOCK

# LeakSanitizer needs clone and ptrace for itself; a failed call there is
# not cordon's failure.
export ASAN_OPTIONS=detect_leaks=0
launch() { "$@" "$CORDON" run --state-dir "$lab/state" -w "$lab/ws" -- sh -c 'touch ran'; }

launch env >/dev/null 2>&1
ok $([ -f "$lab/ws/ran" ]; echo $?) "control: the command runs when every step can be taken"
rm -f "$lab/ws/ran"

# syscall errno [arg0] | the step named in the refusal
cases=(
	"clone 1|create the namespaces"
	"unshare 1|create the namespaces"
	"open_tree 1|open a mount source"
	"mount_setattr 1|make a writable bind nosuid"
	"fsopen 1|mount a private /tmp"
	"move_mount 1|attach the new root"
	"pivot_root 1|pivot_root"
	"capset 1|drop capabilities"
	"prctl 1 a0=38|set no_new_privs"
	"landlock_create_ruleset 38|landlock: ABI 0"
	"landlock_restrict_self 1|landlock: restrict"
	"close_range 1|close inherited descriptors"
	"prctl 22 a0=22|load the seccomp filter"
	"ioctl 1 a1=0x8914|bring up loopback"
	"unshare 1 a0=0x2000000|enter a cgroup namespace"
)
for c in "${cases[@]}"; do
	call=${c%%|*} step=${c#*|}
	# shellcheck disable=SC2086
	launch "$F" $call -- >"$lab/out" 2>"$lab/err"
	rc=$?
	ran=0; [ -f "$lab/ws/ran" ] && ran=1
	rm -f "$lab/ws/ran"
	ok $([ $rc = 125 ] && [ $ran = 0 ] && grep -q "^cordon: sandbox_unavailable: $step" "$lab/err"; echo $?) \
		"${call%% *} failing: exit 125, \`$step\` named, nothing run"
	[ $rc = 125 ] && [ $ran = 0 ] || echo "# rc=$rc ran=$ran err=$(cat "$lab/err")"
done

printf '{"write":["{workspace}"],"sockets":["/tmp/x.sock"]}' > "$lab/sock.json"
"$CORDON" run -p "$lab/sock.json" --state-dir "$lab/state" -w "$lab/ws" -- sh -c 'touch ran' 2>"$lab/err"
rc=$?
ok $([ $rc = 125 ] && [ ! -f "$lab/ws/ran" ] && grep -q 'sandbox_unavailable: sockets' "$lab/err"; echo $?) \
	"a socket by path with unix_sockets none: refused as unenforceable, nothing run"

# Exit statuses of the command itself.
"$CORDON" run --state-dir "$lab/state" -w "$lab/ws" -- no-such-command-here 2>/dev/null
ok $([ $? = 127 ]; echo $?) "a command that is not found: 127"
touch "$lab/ws/plain" && chmod 0644 "$lab/ws/plain"
"$CORDON" run --state-dir "$lab/state" -w "$lab/ws" -- ./plain 2>/dev/null
ok $([ $? = 126 ]; echo $?) "a command that is not executable: 126"
"$CORDON" run --state-dir "$lab/state" -w "$lab/ws" -- sh -c 'exit 42'
ok $([ $? = 42 ]; echo $?) "the command's own status"
"$CORDON" run --state-dir "$lab/state" -w "$lab/ws" -- sh -c 'kill -TERM $$'
ok $([ $? = 143 ]; echo $?) "a command killed by TERM: 128+15"

tap_done
