#!/bin/bash
# confine.t: `cordon confine`, cordon's own layer inside another sandbox
# (the srt provider runs it as srt's command). The probe runs under it
# directly (no srt), and under `srt --settings X -- cordon confine ...`
# when srt is installed and can run here; the srt cases are skipped with a
# reason otherwise.
#
# As in native.t, every case has a control: the same probe action run
# outside, as the same user, which must show the action works there (or,
# for a refused call, gives something other than what the layer must give).
# A case whose control fails is reported "broken", never passed. Under
# srt a second control runs the action under srt alone, to show which of
# srt's gaps the layer closes; its result is printed, not required.
#
# Run as root, the cases run once as root and once as cordon-test (made by
# scripts/test-user), each with a lab of its own under /var/tmp.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/lib.sh"

# (a cordon that cannot even answer is a broken subject, not a skip)
"$CORDON" confine --help >/dev/null 2>&1 || bail "$CORDON confine --help fails"
need_exec "$CORDON_HELPERS/probe" "make build/san/tests/helpers/probe"

# The probe and cordon may be ASan builds: LeakSanitizer stops the world
# with ptrace, which the layer refuses, so leak checks are off for what
# runs confined (cordon's own exit paths after the filter leave with _exit).
PENV=(/usr/bin/env ASAN_OPTIONS=detect_leaks=0:abort_on_error=0)
TMO=${CORDON_ISO_TIMEOUT:-60}
LABS=()
SERVERS=()
cleanup() {
	local p l
	# (a server started as another user is runuser's child: the tree)
	kill_tree TERM "${SERVERS[@]}"
	wait 2>/dev/null
	for l in "${LABS[@]}"; do rm -rf "$l"; done
}
trap cleanup EXIT

tap() {
	local st=$1 desc=$2 l
	shift 2
	n=$((n + 1))
	if [ "$st" = ok ]; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		fails=$((fails + 1))
	fi
	for l; do printf '#   %s\n' "$l"; done
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
first() { printf '%s' "${1%%$'\n'*}"; }
is_errno() { [[ $1 =~ ^E[A-Z0-9]+$ ]]; }

# lab USER: a lab owned by USER: bin/ (probe, cordon), ws/ (the write
# grant), outside/, denied/ (a read deny for srt), a host datagram socket
# with a listener that logs what it receives, srt settings. Sets LAB.
lab() {
	local user=$1 py
	LAB=$(mktemp -d /var/tmp/cordon-confine.XXXXXX) || return 1
	LAB=$(cd "$LAB" && pwd -P)
	LABS+=("$LAB")
	mkdir -p "$LAB/bin" "$LAB/ws" "$LAB/outside" "$LAB/denied" || return 1
	cp "$CORDON_HELPERS/probe" "$LAB/bin/probe" && cp "$CORDON" "$LAB/bin/cordon" || return 1
	echo secret > "$LAB/denied/secret"
	: > "$LAB/dgram.log"	# the user's listener appends; the suite empties it
	printf '#!/bin/sh\nexit 0\n' > "$LAB/ws/noexec" && chmod 0644 "$LAB/ws/noexec"
	ln -s "$LAB/ws" "$LAB/ws-link"
	cat > "$LAB/dgram.py" <<'PY'
import socket, sys, time
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
d.bind(sys.argv[1])
open(sys.argv[2], "w").close()
d.settimeout(1)
end = time.time() + 3600
while time.time() < end:
    try:
        m = d.recv(4096)
    except socket.timeout:
        continue
    with open(sys.argv[3], "a") as f:
        f.write("got\n")
PY
	# The settings the srt provider would write, in short: every path
	# absolute and literal, the lab's ws the write grant, denied/ a read deny.
	cat > "$LAB/srt.json" <<EOF
{"network": {"allowedDomains": [], "deniedDomains": []},
 "filesystem": {"denyRead": [{"path": "$LAB/denied", "literal": true}], "allowRead": [],
                "allowWrite": [{"path": "$LAB/ws", "literal": true}], "denyWrite": []}}
EOF
	sed 's/"deniedDomains": \[\]/"deniedDomains": [], "allowAllUnixSockets": true/' \
		"$LAB/srt.json" > "$LAB/srt-unix.json"
	chown -R "$user": "$LAB" && chmod -R a+rX "$LAB" || return 1
	# the system python: a user-local one (pyenv) may be out of the other user's reach
	if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py=$(command -v python3) || return 1; fi
	as "$py" "$LAB/dgram.py" "$LAB/host.dgram" "$LAB/dgram.ready" "$LAB/dgram.log" \
		</dev/null >/dev/null 2>&1 &
	SERVERS+=($!)
	for _ in $(seq 1 50); do [ -e "$LAB/dgram.ready" ] && break; sleep 0.1; done
	[ -e "$LAB/dgram.ready" ]
}

# as CMD...: run as the pass's user, from the lab's workspace.
as() { (cd "$LAB/ws" 2>/dev/null || cd /; "${AS[@]}" "$@"); }
# The probe outside (the control), under the layer, under srt alone.
out() { as timeout -k 5 "$TMO" "${PENV[@]}" "$LAB/bin/probe" "$@" </dev/null 2>"$LAB/out.err"; }
# in [CONFINE_OPTS... --] ACTION ARGS...: without "--", --write ws.
inside() {
	local opts
	split_opts "$@"
	opts=("${SPLIT_OPTS[@]}")
	[[ " $* " == *" -- "* ]] || opts=(--write "$LAB/ws")
	as timeout -k 5 "$TMO" "${WRAP[@]}" "$LAB/bin/cordon" confine "${opts[@]}" -- \
		"${PENV[@]}" "$LAB/bin/probe" "${SPLIT_REST[@]}" </dev/null 2>"$LAB/in.err"
}
srt_alone() {
	as timeout -k 5 "$TMO" srt --settings "${SETTINGS:-$LAB/srt.json}" -- \
		"${PENV[@]}" "$LAB/bin/probe" "$@" </dev/null 2>/dev/null
}
in_err() { head -c 400 "$LAB/in.err" 2>/dev/null | tr '\n' ' '; }
note_srt() {
	[ "$MODE" = srt ] || return 0
	echo "#   srt alone: $(first "$(srt_alone "$@")")"
}

# split_opts [OPTS... --] REST...: SPLIT_OPTS and SPLIT_REST.
split_opts() {
	local a seen=0
	SPLIT_OPTS=() SPLIT_REST=()
	for a; do [ "$a" = -- ] && seen=1; done
	if [ $seen = 1 ]; then
		while [ "$1" != -- ]; do SPLIT_OPTS+=("$1"); shift; done
		shift
	fi
	SPLIT_REST=("$@")
}

# case_sys DESC EXPECT [CONFINE_OPTS... --] ACTION ARGS...: inside exactly
# EXPECT (an errno name); outside anything else.
case_sys() {
	local desc=$1 expect=$2 o=() a=() in irc outv
	shift 2
	split_opts "$@"
	o=("${SPLIT_OPTS[@]}") a=("${SPLIT_REST[@]}")
	outv=$(first "$(out "${a[@]}")")
	if [ -z "$outv" ] || [ "${outv%% *}" = "$expect" ]; then
		tap fail "$PFX$desc # broken: control failed" "outside: '$outv'; it must differ from $expect"
		return
	fi
	if [ ${#o[@]} = 0 ]; then
		in=$(inside "${a[@]}"); irc=$?
	else
		in=$(inside "${o[@]}" -- "${a[@]}"); irc=$?
	fi
	in=$(first "$in")
	if [ "$irc" = 1 ] && [ "${in%% *}" = "$expect" ]; then
		tap ok "$PFX$desc (inside: $in; outside: $outv)"
	else
		tap fail "$PFX$desc" "expected $expect (exit 1); outside '$outv'" "inside: '$in' (exit $irc) $(in_err)"
	fi
	note_srt "${a[@]}"
}

# case_denied DESC CHECK [CONFINE_OPTS... --] ACTION ARGS...: inside an
# errno, and CHECK (a host-side condition) true afterwards; outside ok.
case_denied() {
	local desc=$1 check=$2 in irc outv
	shift 2
	in=$(inside "$@"); irc=$?
	in=$(first "$in")
	if ! eval "$check"; then
		tap fail "$PFX$desc" "the host changed: $check" "inside: '$in' (exit $irc) $(in_err)"
		return
	fi
	split_opts "$@"
	outv=$(first "$(out "${SPLIT_REST[@]}")")
	if [ "${outv%% *}" != ok ]; then
		tap fail "$PFX$desc # broken: control failed" "outside: '$outv'"
	elif [ "$irc" = 1 ] && is_errno "${in%% *}"; then
		tap ok "$PFX$desc (inside: $in)"
	else
		tap fail "$PFX$desc" "expected a refusal (an errno, exit 1)" "inside: '$in' (exit $irc) $(in_err)"
	fi
}

# exit_case DESC WANT CHECK CONFINE_ARGS...: cordon confine exits WANT,
# and CHECK holds afterwards.
exit_case() {
	local desc=$1 want=$2 check=$3 rc
	shift 3
	as timeout -k 5 "$TMO" "${WRAP[@]}" "$LAB/bin/cordon" confine "$@" \
		</dev/null >"$LAB/exit.out" 2>"$LAB/in.err"; rc=$?
	if [ "$rc" = "$want" ] && eval "$check"; then
		tap ok "$PFX$desc"
	else
		tap fail "$PFX$desc" "expected exit $want, got $rc; check: $check" "stderr: $(in_err)"
	fi
}

caps_case() {
	local in outv bnd want
	outv=$(first "$(out caps)")
	if ! [[ $outv =~ ^CapEff=[0-9a-f]{16}\ CapPrm=[0-9a-f]{16}\ CapBnd=[0-9a-f]{16}\ NoNewPrivs=[01]\ Seccomp=[0-2]$ ]]; then
		tap fail "${PFX}no capabilities, no_new_privs, a seccomp filter # broken: control failed" "outside: '$outv'"
		return
	fi
	in=$(first "$(inside caps)")
	# Without CAP_SETPCAP (an unprivileged user, under srt or not) the
	# bounding set cannot be dropped; with nothing permitted and
	# no_new_privs set, no exec can gain anything from it.
	bnd=0000000000000000
	if [ "$USER_PASS" != root ]; then
		bnd=${in#*CapBnd=}
		bnd=${bnd%% *}
	fi
	want="CapEff=0000000000000000 CapPrm=0000000000000000 CapBnd=$bnd NoNewPrivs=1 Seccomp=2"
	if [ "$in" = "$want" ]; then
		tap ok "${PFX}no capabilities, no_new_privs, a seccomp filter ($in)"
	else
		tap fail "${PFX}no capabilities, no_new_privs, a seccomp filter" "expected '$want'" \
			"inside: '$in' $(in_err); outside: '$outv'"
	fi
	note_srt caps
}

fds_case() {
	local in outv
	outv=$(first "$(as bash -c "exec 7</dev/null 8</dev/null; exec ${PENV[*]} '$LAB/bin/probe' list /proc/self/fd" </dev/null)")
	in=$(first "$(as bash -c "exec 7</dev/null 8</dev/null; exec timeout -k 5 $TMO ${WRAP[*]} '$LAB/bin/cordon' confine -- ${PENV[*]} '$LAB/bin/probe' list /proc/self/fd" </dev/null 2>"$LAB/in.err")")
	# outside: 0-2, 7, 8 and the listing's own fd; inside only 0-2 and it
	if ! [[ $outv =~ ^ok\ ([0-9]+)\ entries$ ]] || [ "${BASH_REMATCH[1]}" -lt 6 ]; then
		tap fail "${PFX}every fd above 2 is closed # broken: control failed" "outside: '$outv'"
	elif [ "$in" = "ok 4 entries" ]; then
		tap ok "${PFX}every fd above 2 is closed (inside: $in; outside: $outv)"
	else
		tap fail "${PFX}every fd above 2 is closed" "expected 'ok 4 entries'" "inside: '$in' $(in_err)"
	fi
}

group_case() {
	local rc
	# The command leads a process group of its own (pgid = its pid), as
	# under native, so the host can signal it and its children as one.
	as timeout -k 5 "$TMO" "${WRAP[@]}" "$LAB/bin/cordon" confine -- /bin/sh -c \
		'read -r pid comm state ppid pgrp rest < /proc/self/stat; [ "$pid" = "$pgrp" ]' </dev/null 2>"$LAB/in.err"; rc=$?
	if [ $rc = 0 ]; then
		tap ok "${PFX}the command leads its own process group"
	else
		tap fail "${PFX}the command leads its own process group" "exit $rc $(in_err)"
	fi
}

# Under srt: TERM sent to srt ends the command by SIGKILL (no trap runs);
# TERM sent to the command's group reaches its trap, and srt exits with
# the command's status. The group is the one beneath srt whose leader does
# not lead a session (bwrap's inner process leads the session).
term_case() {
	local desc="TERM to the command's process group reaches its trap; srt exits with its status"
	local t=$LAB/ws/trap.out srt_pid g p pg sid rc i
	rm -f "$t"
	as srt --settings "$LAB/srt.json" -- "$LAB/bin/cordon" confine --write "$LAB/ws" -- /bin/sh -c \
		"trap 'echo trapped >> $t; exit 3' TERM; echo started >> $t; sleep 30 & wait" \
		</dev/null >/dev/null 2>"$LAB/in.err" &
	srt_pid=$!
	for i in $(seq 1 100); do [ -s "$t" ] && break; sleep 0.1; done
	g=
	desc_of() { local c; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do echo "$c"; desc_of "$c"; done; }
	for p in $(desc_of "$srt_pid"); do
		read -r pg sid < <(awk '{print $5, $6}' /proc/"$p"/stat 2>/dev/null)
		[ "$pg" = "$p" ] && [ "$sid" != "$p" ] && g=$p
	done
	if [ -z "$g" ]; then
		kill -KILL "$srt_pid" 2>/dev/null
		wait "$srt_pid"
		tap fail "$PFX$desc" "no process group of the command's found beneath srt ($srt_pid)" "$(in_err)"
		return
	fi
	kill -TERM -- -"$g"
	wait "$srt_pid"; rc=$?
	if [ "$rc" = 3 ] && grep -q trapped "$t"; then
		tap ok "$PFX$desc"
	else
		tap fail "$PFX$desc" "srt exit $rc; trap file: $(tr '\n' ' ' < "$t" 2>/dev/null)" "$(in_err)"
	fi
	rm -f "$t"
}

run_cases() {
	local p sys
	caps_case
	fds_case
	group_case

	for sys in ptrace bpf keyctl add_key request_key perf_event_open process_vm_readv \
		process_vm_writev userfaultfd io_uring_setup unshare; do
		case_sys "$sys is refused with EPERM" EPERM syscall "$sys"
	done
	case_sys "clone3 gives ENOSYS" ENOSYS syscall clone3
	case_sys "ioctl TIOCSTI is refused with EPERM" EPERM tiocsti
	case_sys "socket(AF_UNIX) is refused with EPERM" EPERM socket unix
	case_sys "socket(AF_VSOCK) is refused with EPERM (--unix-all)" EPERM \
		--unix-all --write "$LAB/ws" -- socket vsock
	# The control (outside) reaches the host's datagram socket.
	: > "$LAB/dgram.log"
	case_sys "a datagram socketpair cannot sendto a host socket (EPERM)" EPERM \
		dgram-socketpair-send "$LAB/host.dgram"
	case_sys "... nor with --unix-all" EPERM \
		--unix-all --write "$LAB/ws" -- dgram-socketpair-send "$LAB/host.dgram"
	if [ "$MODE" = srt ]; then
		: > "$LAB/dgram.log"
		p=$(first "$(srt_alone dgram-socketpair-send "$LAB/host.dgram")")
		sleep 1.2
		echo "#   srt alone, dgram socketpair to the host socket: $p; the host got $(grep -c got "$LAB/dgram.log") datagram(s)"
	fi

	# Writes: beneath --write allowed, elsewhere refused by Landlock.
	local f=$LAB/ws/inside.txt
	rm -f "$f"
	p=$(first "$(inside write "$f")")
	if [ "$p" = ok ] && [ "$(cat "$f" 2>/dev/null)" = x ]; then
		tap ok "${PFX}a write beneath --write is allowed and reaches the host"
	else
		tap fail "${PFX}a write beneath --write is allowed and reaches the host" "inside: '$p' $(in_err)"
	fi
	rm -f "$f"
	case_denied "a write outside --write is refused" "[ ! -e '$LAB/outside/x' ]" write "$LAB/outside/x"
	rm -f "$LAB/outside/x"
	case_denied "mkdir outside --write is refused" "[ ! -e '$LAB/outside/d' ]" mkdir "$LAB/outside/d"
	rmdir "$LAB/outside/d" 2>/dev/null
	case_denied "with no --write at all, the workspace is not writable" "[ ! -e '$LAB/ws/x' ]" \
		-- write "$LAB/ws/x"
	rm -f "$LAB/ws/x"
	if [ "$MODE" = srt ]; then
		# srt hides a denied directory under a writable tmpfs; the layer
		# refuses the write (the control writes the host's directory).
		case_denied "a write into a read-denied directory (srt's tmpfs) is refused" \
			"[ ! -e '$LAB/denied/x' ]" write "$LAB/denied/x"
		note_srt write "$LAB/denied/x"
		rm -f "$LAB/denied/x"
	fi
	if [ "$USER_PASS" = root ]; then
		# drop_caches takes 1-3: "x" is EINVAL once the open is allowed.
		case_sys "/proc/sys is not writable (root)" EACCES write /proc/sys/vm/drop_caches
	else
		skip "/proc/sys is not writable (root)" "not root: the host refuses it too"
	fi

	# Exit statuses, and failing steps: 125, nothing run.
	local m=$LAB/ws/ran
	rm -f "$m"
	exit_case "the command's exit status is passed on (7)" 7 true \
		--write "$LAB/ws" -- /bin/sh -c 'exit 7'
	exit_case "a command that does not exist is exit 127" 127 true -- /nonexistent/cordon-cmd
	exit_case "a command that is not executable is exit 126" 126 true -- "$LAB/ws/noexec"
	exit_case "a --write path that does not exist is refused (125), nothing run" 125 \
		"[ ! -e '$m' ] && grep -q 'sandbox_unavailable: landlock: write grant' '$LAB/in.err'" \
		--write "$LAB/ws" --write "$LAB/nonexistent" -- /bin/sh -c "echo > $m"
	exit_case "a --write path through a symbolic link is refused (125), nothing run" 125 \
		"[ ! -e '$m' ]" --write "$LAB/ws-link" -- /bin/sh -c "echo > $m"
	exit_case "a relative --write path is refused (125), nothing run" 125 "[ ! -e '$m' ]" \
		--write ws -- /bin/sh -c "echo > $m"
	exit_case "an unknown option is refused (125), nothing run" 125 "[ ! -e '$m' ]" \
		--bogus -- /bin/sh -c "echo > $m"
	exit_case "no command is refused (125)" 125 true --write "$LAB/ws"
	if [ "$(cat "$LAB/abi" 2>/dev/null)" -ge 6 ] 2>/dev/null; then
		exit_case "--scope runs where the kernel has Landlock scopes" 0 true --scope -- /bin/true
	else
		exit_case "--scope is refused (125) where the kernel has no Landlock scopes" 125 \
			"[ ! -e '$m' ]" --scope -- /bin/sh -c "echo > $m"
	fi
	rm -f "$m"
	[ "$MODE" = srt ] && term_case
	return 0
}

# srt_usable: srt is installed and runs /bin/true here, as this pass's user.
srt_usable() {
	command -v srt >/dev/null || { SRT_WHY="srt is not installed"; return 1; }
	if ! as timeout 60 srt --settings "$LAB/srt.json" -- /bin/true </dev/null >/dev/null 2>&1; then
		SRT_WHY="srt cannot run /bin/true here"
		return 1
	fi
}

passes=("$(id -un)")
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null; then
	u=$("$top/scripts/test-user" 2>/dev/null) && passes+=("$u")
fi
for owner in "${passes[@]}"; do
	if [ "$owner" = "$(id -un)" ]; then AS=(); else AS=(runuser -u "$owner" --); fi
	USER_PASS=$owner
	[ "$(id -u)" = 0 ] && [ ${#AS[@]} = 0 ] && USER_PASS=root
	if ! lab "$owner"; then
		bail "could not build the lab for $owner"
	fi
	# The kernel's Landlock ABI, as cordon sees it.
	"$CORDON" doctor --json 2>/dev/null | grep -o '"landlock_abi": *[0-9]*' | grep -o '[0-9]*$' > "$LAB/abi"
	MODE=direct WRAP=() PFX="$USER_PASS, direct: "
	run_cases
	if srt_usable; then
		MODE=srt WRAP=(srt --settings "$LAB/srt.json" --) PFX="$USER_PASS, srt: "
		run_cases
	else
		skip "$USER_PASS, srt: every case" "$SRT_WHY"
	fi
done

tap_done
