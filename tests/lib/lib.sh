# tests/lib/lib.sh: what every shell suite shares, sourced first (POSIX
# sh, so the /bin/sh suites can have it too):
# - where things are: CORDON_SRC (the source tree, from the suite's place
#   tests/<group>/x.t when unset), CORDON, CORDON_HELPERS and CORDON_FUZZ
#   (the san build's, as `make test` sets them, when unset), exported so
#   the suite's helpers and children see the same;
# - TAP: ok STATUS DESC (a DESC holding "# TODO" does not count as a
#   failure), skip REASON, diag LINE..., bail REASON (Bail out!, exit 1),
#   tap_done (the plan last; fails when a case failed);
# - premises: skip_all REASON (1..0 # SKIP), skip_unless_root REASON,
#   skip_unless_tools TOOL... (the suite skipped, with the reason, when
#   the host lacks them: detected, never assumed), need_exec PATH WHAT
#   (a subject that cannot run bails out: a missing or broken binary
#   never reads as a pass);
# - other_user: the ordinary user a suite runs as besides root, in $user
#   (scripts/test-user makes it; skipped where there is no root or
#   runuser);
# - labs: mklab VAR TEMPLATE (mktemp -d, its links resolved, into VAR;
#   bails out when it cannot), lab_env DIR (HOME DIR/home and XDG's
#   state and config dirs beneath DIR, none of the operator's runtime dir
#   or agent: what cordon finds of the caller is the lab's);
# - processes, ended by the pid they were started with, never by a
#   pattern: kill_tree SIG PID... (each PID and what it started),
#   kill_jobs SIG (the shell's own background jobs, in bash),
#   kill_session SIG SID (a session a test or the code under test made
#   with setsid: the kernel gives a leader's pid to no one else while its
#   session has members), child_pids PID (the children of a process the
#   test started), proc_start PID (its start time in ticks).
: "${CORDON_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${CORDON:=$CORDON_SRC/build/san/cordon}"
: "${CORDON_HELPERS:=$CORDON_SRC/build/san/tests/helpers}"
: "${CORDON_FUZZ:=$CORDON_SRC/build/fuzz}"
export CORDON_SRC CORDON CORDON_HELPERS CORDON_FUZZ
n=0
fails=0

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		case $2 in *'# TODO'*) ;; *) fails=$((fails + 1)) ;; esac
	fi
}
skip() { n=$((n + 1)); echo "ok $n # skip $*"; }
diag() { printf '# %s\n' "$@"; }
bail() { echo "Bail out! $*"; exit 1; }
tap_done() { echo "1..$n"; [ "$fails" = 0 ]; }

skip_all() { echo "1..0 # SKIP $*"; exit 0; }
skip_unless_root() { [ "$(id -u)" = 0 ] || skip_all "$*"; }
skip_unless_tools() {
	for _t in "$@"; do
		command -v "$_t" >/dev/null 2>&1 || skip_all "$_t not installed"
	done
}
need_exec() { [ -x "$1" ] || bail "$1 is not an executable${2:+ ($2)}"; }
other_user() {
	skip_unless_root "needs root to run the suite as another user"
	skip_unless_tools runuser
	user=$("$CORDON_SRC/scripts/test-user") || bail "scripts/test-user failed"
}

mklab() {
	_l=$(mktemp -d "$2") || bail "mktemp -d $2 failed"
	_l=$(cd "$_l" && pwd -P) || bail "cannot enter $_l"
	eval "$1=\$_l"
}
lab_env() {
	export HOME="$1/home" XDG_STATE_HOME="$1/xdg" XDG_CONFIG_HOME="$1/cfg"
	unset XDG_RUNTIME_DIR SSH_AUTH_SOCK
}

# proc_start PID: the process's start time (ticks since boot, field 22 of
# its stat), nothing and false when it is gone
proc_start() {
	_s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	# (the name, field 2, may hold spaces: counted from its end)
	_s=${_s##*) }
	# shellcheck disable=SC2086
	set -- $_s
	echo "${20}"
}
# pids_under pid PID | pids_under session SID: PID, or every member of
# the session SID, and all their descendants, from one look at the
# process table
pids_under() {
	ps -e -o pid=,ppid=,sid= | awk -v kind="$1" -v id="$2" '
		{ pid[NR] = $1; pp[$1] = $2; if ((kind == "pid" && $1 == id) || (kind == "session" && $3 == id)) m[$1] = 1 }
		END {
			do { c = 0; for (i = 1; i <= NR; i++) { p = pid[i]; if (!(p in m) && (pp[p] in m)) { m[p] = 1; c = 1 } } } while (c)
			for (p in m) print p
		}'
}
child_pids() { ps -o pid= --ppid "$1" | tr -d ' '; }
kill_tree() {
	_sig=$1
	shift
	for _p in "$@"; do
		[ -n "$_p" ] || continue
		# shellcheck disable=SC2046
		kill -"$_sig" $(pids_under pid "$_p") 2>/dev/null
	done
	return 0
}
# kill_jobs SIG: the shell's own background jobs and what each started;
# only those still its children (a pid it has reaped may name another
# process by now)
kill_jobs() {
	for _p in $(jobs -p); do
		[ "$(ps -o ppid= -p "$_p" 2>/dev/null | tr -d ' ')" = "$$" ] && kill_tree "$1" "$_p"
	done
	return 0
}
kill_session() {
	# shellcheck disable=SC2046
	[ -n "$2" ] && kill -"$1" $(pids_under session "$2") 2>/dev/null
	return 0
}
