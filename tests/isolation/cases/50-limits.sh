# 50-limits.sh (sourced by native.t): resource limits (pids, memory,
# cpus) and what the sandbox's /sys shows. Whether this user can have a
# cgroup here is detected from the host (the same rules cordon follows,
# docs/native.md "Limits"); where none can be had, an explicit limit must
# be refused (exit 125, sandbox_unavailable) and that is the case.

# "fstype mountpoint root superopts" for each mount
cg_mounts() {
	sed -n 's/^[0-9]* [0-9]* [0-9:]* \([^ ]*\) \([^ ]*\) .* - \([^ ]*\) [^ ]* \([^ ]*\)$/\3 \2 \1 \4/p' \
		/proc/self/mountinfo
}

# cg_can CTRL: may this user make a cgroup with CTRL here? CG_WHY says why not.
cg_can() {
	local c=$1 fs mnt root opts path d
	CG_WHY=
	read -r fs mnt root opts < <(cg_mounts | awk '$1 == "cgroup2" { print; exit }')
	if [ -n "$mnt" ] && grep -qw "$c" "$mnt/cgroup.controllers" 2>/dev/null; then
		path=$(sed -n 's/^0:://p' /proc/self/cgroup)
		d=$mnt${path#"${root%/}"}
		d=${d%/}
		while :; do
			if [ -w "$d" ] && { need_root || [ -w "$d/cgroup.procs" ]; }; then
				grep -qw "$c" "$d/cgroup.subtree_control" 2>/dev/null && return 0
				if grep -qw "$c" "$d/cgroup.controllers" && [ -w "$d/cgroup.subtree_control" ] &&
					{ [ -z "$(cat "$d/cgroup.procs")" ] || [ ! -e "$d/cgroup.type" ]; }; then
					return 0
				fi
			fi
			[ "$d" = "${mnt%/}" ] && break
			d=${d%/*}
		done
		CG_WHY="no cgroup v2 from $path up may be written with $c for its children"
		return 1
	fi
	read -r fs mnt root opts < <(cg_mounts | awk -v c="$c" '$1 == "cgroup" && ("," $4 ",") ~ ("," c ",") { print; exit }')
	if [ -z "$mnt" ]; then
		CG_WHY="no cgroup hierarchy here has the $c controller"
		return 1
	fi
	path=$(awk -F: -v c="$c" '("," $2 ",") ~ ("," c ",") { print $3; exit }' /proc/self/cgroup)
	d=$mnt${path#"${root%/}"}
	if [ -w "$d" ] && [ -w "$d/cgroup.procs" ]; then
		return 0
	fi
	CG_WHY="$(id -un) may not write its own $c cgroup $d"
	return 1
}

# own_cg CTRL V1FILE V2FILE: a script that sets f to the caller's own
# cgroup file, found where /proc/self/cgroup points (a v1 hierarchy named
# for CTRL, alone or co-mounted with cpuacct, or the v2 one).
own_cg() {
	printf '%s' 'f=; while IFS=: read -r id ctl path; do
	case ",$ctl," in *,'"$1"',*)
		for h in '"$1"' cpu,cpuacct cpuacct,cpu; do
			[ -e "/sys/fs/cgroup/$h$path/'"$2"'" ] && f=/sys/fs/cgroup/$h$path/'"$2"'
		done;;
	esac
	[ "$id" = 0 ] && [ -z "$ctl" ] && [ -e "/sys/fs/cgroup$path/'"$3"'" ] && f=/sys/fs/cgroup$path/'"$3"'
done </proc/self/cgroup
'
}

# gate DESC CONTROL_FAILED WHAT: a failed control is a broken case and,
# without cordon run, the control is all there is; 0 when the inside run
# is still to do. WHAT says what the control saw.
gate() {
	if [ "$2" != 0 ]; then
		tap fail "$1 # broken: control failed" "$3"
		return 1
	fi
	if [ $MODE != full ]; then
		tap ok "$1 (control only; $3)"
		return 1
	fi
	return 0
}

# limit_refused DESC WHAT [CORDON_OPTS...]: the launch exits 125 with
# `cordon: sandbox_unavailable: WHAT...` and runs nothing; the control
# (the same launch without the options) runs the command.
limit_refused() {
	local desc=$1 what=$2 rc=- ctl ran=no msg
	shift 2
	local marker=$WS/limit-ran
	rm -f "$marker"
	if [ $MODE != full ]; then
		skip "$desc" "cordon run is not available"
		return
	fi
	run_in_cmd "$@" -- /bin/sh -c 'touch "$1"' sh "$marker" >/dev/null; rc=$?
	msg=$(head -n 1 "$LAB/in.err")
	absent "$marker" || ran=yes
	rm -f "$marker"
	run_in_cmd -- /bin/sh -c 'touch "$1"' sh "$marker" >/dev/null; ctl=$?
	if absent "$marker"; then
		tap fail "$desc # broken: control failed" "the plain launch exited $ctl: $(in_err)"
	elif [ "$rc" = 125 ] && [ $ran = no ] && [[ $msg == "cordon: sandbox_unavailable: $what"* ]]; then
		tap ok "$desc ($msg)"
	else
		tap fail "$desc" "expected exit 125 and \`cordon: sandbox_unavailable: $what...\`; got exit $rc, ran=$ran" \
			"cordon stderr: $msg"
	fi
	rm -f "$marker"
}

###########################################################################
# pids

forks_case() {
	local desc="--limit pids=50: a fork loop inside reaches at most 50 (outside: 100)" in irc=- out made
	if [ $MODE = full ]; then
		in=$(run_in --limit pids=50 -- forks 100); irc=$?
		in=$(first "$in")
	fi
	out=$(first "$(run_out forks 100)")
	gate "$desc" "$([ "$out" = "ok 100" ]; echo $?)" "outside: '$out'" || return
	made=${in#ok }
	made=${made%% *}
	if [ "$irc" = 0 ] && [[ $in =~ ^ok\ [0-9]+ ]] && [ "$made" -ge 1 ] && [ "$made" -le 50 ]; then
		tap ok "$desc (inside: $in; outside: $out)"
	else
		tap fail "$desc" "expected 'ok N' with 1 <= N <= 50" "$(inside_diag "'$in' (exit $irc)")"
	fi
}
if cg_can pids || ! need_root; then
	forks_case
else
	limit_refused "--limit pids=50 is refused: as root without a cgroup ($CG_WHY) nothing holds it" \
		limits.pids --limit pids=50
fi

# The default (no limits in the policy): 4096, in the sandbox's own
# pids cgroup (pids.max) or as its RLIMIT_NPROC. The control is the same
# reading on the host, which must differ.
PIDS_READ="$(own_cg pids pids.max pids.max)"'
echo "cgroup=$(cat "$f" 2>/dev/null || echo none) rlimit=$(awk "/^Max processes/ { print \$3 }" /proc/self/limits)"'
default_pids_case() {
	local desc="the default pids limit (4096) holds without any flag" in out
	out=$(sh -c "$PIDS_READ")
	gate "$desc" "$([[ $out == cgroup=* ]] && [[ $out != *=4096\ * ]] && [[ $out != *=4096 ]]; echo $?)" \
		"outside: '$out' (the host's own, not 4096)" || return
	in=$(first "$(run_in_cmd sh -c "$PIDS_READ")")
	if [[ $in == cgroup=4096\ * ]] || [[ $in == *\ rlimit=4096 ]]; then
		tap ok "$desc (inside: $in; outside: $out)"
	else
		tap fail "$desc" "expected pids.max 4096 or RLIMIT_NPROC 4096" "$(inside_diag "'$in'")"
	fi
}
default_note_case() {
	local desc="as root without a cgroup the default pids limit runs unenforced, with a note" rc
	timeout -k 5 "$LAB_TIMEOUT" "$CORDON" run --state-dir "$STATE" -w "$WS" \
		${CORDON_PROVIDER:+--provider "$CORDON_PROVIDER"} -- /bin/true </dev/null 2>"$LAB/in.err"
	rc=$?
	if [ "$rc" = 0 ] && grep -q '^cordon: note: the default pids limit (4096) is not enforced: ' "$LAB/in.err"; then
		tap ok "$desc"
	else
		tap fail "$desc" "exit $rc" "cordon stderr: $(in_err)"
	fi
}
if cg_can pids || ! need_root; then
	default_pids_case
else
	default_note_case
fi

###########################################################################
# memory

mem_case() {
	local desc="--limit memory=64m: allocating and touching 256 MiB fails inside (outside it succeeds); cordon exits with the command's status"
	local in irc=- small out
	if [ $MODE = full ]; then
		in=$(run_in --limit memory=64m -- alloc 256); irc=$?
		in=$(first "$in")
		small=$(first "$(run_in --limit memory=64m -- alloc 16)")
	fi
	out=$(first "$(run_out alloc 256)")
	if [ "$out" != "ok 256" ]; then
		tap fail "$desc # broken: control failed" "outside: '$out'"
	elif [ $MODE != full ]; then
		tap ok "$desc (control only; outside: $out)"
	elif [ "$small" != "ok 16" ]; then
		tap fail "$desc" "16 MiB under the same limit must succeed (the limit is not everything)" "inside: '$small' | cordon stderr: $(in_err)"
	elif { [ "$irc" = 137 ] && [ -z "$in" ]; } || { [ "$irc" = 1 ] && [ "${in%% *}" = ENOMEM ]; }; then
		tap ok "$desc (inside: exit $irc${in:+, $in}; 16 MiB: $small)"
	else
		tap fail "$desc" "expected the probe killed (exit 137) or ENOMEM" "$(inside_diag "'$in' (exit $irc)")"
	fi
}
if cg_can memory; then
	mem_case
else
	limit_refused "--limit memory=64m is refused: no cgroup can be had ($CG_WHY)" \
		limits.memory --limit memory=64m
fi

# The private /tmp is capped (not half the RAM): at 2 GiB (or a quarter
# of the RAM) by default, at the memory limit when one is set. The
# control: a tmpfs made with the kernel's default size is larger.
tmp_case() {
	local desc="the private /tmp is capped: at most 2 GiB by default" d m=- big
	local sz='echo $(( $(stat -f -c "%b * %S" /tmp) ))'
	big=$(unshare -Urm sh -c 'mount -t tmpfs none /mnt && echo $(( $(stat -f -c "%b * %S" /mnt) ))' 2>/dev/null)
	gate "$desc" "$([[ $big =~ ^[0-9]+$ ]] && [ "$big" -gt $((2 << 30)) ]; echo $?)" \
		"a tmpfs of the kernel's default size holds '$big' bytes (more than 2 GiB)" || return
	d=$(first "$(run_in_cmd sh -c "$sz")")
	if cg_can memory; then
		desc="$desc, 64 MiB under --limit memory=64m"
		m=$(first "$(run_in_cmd --limit memory=64m -- sh -c "$sz")")
	fi
	if [[ $d =~ ^[0-9]+$ ]] && [ "$d" -le $((2 << 30)) ] && { [ "$m" = - ] || [ "$m" = $((64 << 20)) ]; }; then
		tap ok "$desc (default: $d bytes; with 64m: $m; a default tmpfs: $big)"
	else
		tap fail "$desc" "default: '$d', with 64m: '$m'" "cordon stderr: $(in_err)"
	fi
}
if [ "${CORDON_PROVIDER:-native}" = srt ]; then
	skip "the private /tmp is capped" "under srt, /tmp is srt's own tmpfs, which cordon does not size (docs/srt.md; a memory limit counts its pages)"
elif ! unshare -Urm true 2>/dev/null; then
	skip "the private /tmp is capped" "no user namespace for the control's tmpfs"
else
	tmp_case
fi

###########################################################################
# cpus

CPU_READ="$(own_cg cpu cpu.cfs_quota_us cpu.max)"'; cat "$f"'
cpus_case() {
	local desc="--limit cpus=1.5: the sandbox's own cgroup, read where /proc/self/cgroup points, holds 1.5 CPUs" in out
	out=$(first "$(sh -c "$CPU_READ" 2>&1)")
	gate "$desc" "$([ -n "$out" ] && [ "$out" != 150000 ] && [ "$out" != "150000 100000" ]; echo $?)" \
		"outside: '$out' (the host's own, readable and different)" || return
	in=$(first "$(run_in_cmd --limit cpus=1.5 -- sh -c "$CPU_READ")")
	if [ "$in" = 150000 ] || [ "$in" = "150000 100000" ]; then
		tap ok "$desc (inside: $in; outside: $out)"
	else
		tap fail "$desc" "expected cpu.cfs_quota_us 150000 or cpu.max '150000 100000'" "$(inside_diag "'$in'")"
	fi
}
if cg_can cpu; then
	cpus_case
else
	limit_refused "--limit cpus=1.5 is refused: no cgroup can be had ($CG_WHY)" \
		limits.cpus --limit cpus=1.5
fi

###########################################################################
# The sandbox's cgroup is gone after the run, and the sandbox cannot
# raise its own limit.

# The cgroup exists while the sandbox runs (the control) and is gone after.
GONE_DIR=
gone_case() {
	local desc="the sandbox's cgroup is there while it runs and gone after" ex= during= after pid
	local before
	before=$(ls "$STATE/runs" 2>/dev/null | sort)
	run_in_cmd -- sleep 2 >/dev/null &
	pid=$!
	for _ in $(seq 100); do
		ex=$(comm -13 <(printf '%s\n' "$before") <(ls "$STATE/runs" | sort) | grep -v '^$' | head -n 1)
		if [ -n "$ex" ]; then
			during=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "cordon-$ex" 2>/dev/null | head -n 1)
			[ -n "$during" ] && break
		fi
		sleep 0.05
	done
	wait "$pid"
	after=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "cordon-${ex:-none}" 2>/dev/null | head -n 1)
	GONE_DIR=$during
	if [ -z "$during" ]; then
		tap fail "$desc" "no cgroup cordon-${ex:-?} seen while the sandbox ran"
	elif [ -z "$after" ]; then
		tap ok "$desc ($during)"
	else
		tap fail "$desc" "still there: $after"
	fi
}

# Outside, root writes pids.max of a cgroup of the test's own making
# (beside where cordon made the sandbox's, or in its own pids hierarchy);
# inside, the sandbox's own pids.max (found through /proc/self/cgroup,
# holding the limit 50) is read-only (native: a read-only mount; srt:
# Landlock). Nothing that does not hold 50 is ever written.
raise_case() {
	local desc="the sandbox cannot raise its own pids.max" in out scratch own
	local try
	try="$(own_cg pids pids.max pids.max)"'
	if [ "$(cat "$f" 2>/dev/null)" != 50 ]; then echo "not-the-sandbox $f"
	elif echo max 2>/dev/null >"$f"; then echo "raised $f"; else echo "refused $f"; fi'
	own=$(awk -F: '("," $2 ",") ~ /,pids,/ { print "/sys/fs/cgroup/pids" $3; exit }' /proc/self/cgroup)
	scratch=${GONE_DIR:-$own/x}
	scratch=${scratch%/*}/cordon-iso-scratch.$$
	if mkdir "$scratch" 2>/dev/null && echo 7 >"$scratch/pids.max" &&
		[ "$(cat "$scratch/pids.max")" = 7 ]; then
		out="wrote $scratch/pids.max"
	else
		out="could not write $scratch/pids.max"
	fi
	rmdir "$scratch" 2>/dev/null
	gate "$desc" "$([[ $out == wrote* ]]; echo $?)" "outside: $out" || return
	in=$(first "$(run_in_cmd --limit pids=50 -- sh -c "$try")")
	if [[ $in == refused\ * ]]; then
		tap ok "$desc (inside: $in; outside: $out)"
	else
		tap fail "$desc" "expected the write refused" "$(inside_diag "'$in'")"
	fi
}
if [ $MODE != full ]; then
	skip "the sandbox's cgroup is there while it runs and gone after" "cordon run is not available"
	skip "the sandbox cannot raise its own pids.max" "cordon run is not available"
elif cg_can pids && need_root; then
	gone_case
	raise_case
else
	skip "the sandbox's cgroup is there while it runs and gone after" "no cgroup here for $(id -un) (${CG_WHY:-not root}): its pids limit is RLIMIT_NPROC"
	skip "the sandbox cannot raise its own pids.max" "no cgroup here for $(id -un) (${CG_WHY:-not root}): RLIMIT_NPROC, which nothing inside may raise (no CAP_SYS_RESOURCE)"
fi

###########################################################################
# /sys: what common tools read, and nothing of the host's network or
# cgroup tree.

case_allowed "/sys/devices/system/cpu/online is readable (glibc's CPU count)" read /sys/devices/system/cpu/online
if [ "${CORDON_PROVIDER:-native}" = srt ]; then
	skip "/sys hides the host's network interfaces" "srt shows the host's /sys read-only (docs/srt.md)"
	skip "/sys hides the host's other cgroups" "srt shows the host's /sys read-only (docs/srt.md)"
else
	IFACE=$(ls /sys/class/net 2>/dev/null | grep -vx lo | head -n 1)
	if [ -n "$IFACE" ]; then
		case_denied "/sys/class/net/$IFACE (a host interface, with its address) is not visible" \
			stat "/sys/class/net/$IFACE/address"
	else
		skip "/sys hides the host's network interfaces" "this host has no interface but lo"
	fi
	OTHER_CG=$(find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d 2>/dev/null | head -n 1)
	if [ -n "$OTHER_CG" ]; then
		case_denied "the host's cgroup $OTHER_CG is not visible" stat "$OTHER_CG"
	else
		skip "/sys hides the host's other cgroups" "no cgroup below the hierarchies' roots here"
	fi
fi
