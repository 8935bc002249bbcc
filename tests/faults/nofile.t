#!/bin/bash
# A low open-file limit never drops a read rule. The native sandbox's
# read side opens every entry of each directory on the way to a deny to
# give it its rule; a failure there other than "gone" or "not reachable
# by this user" (the open-file limit, systemd's default soft 1,024) used
# to be taken as "gone": the entry became unreadable inside and nothing
# said so. Now the descriptors are closed in batches (a directory of any
# size fits under the default limit), and a rule that still cannot be
# made refuses the launch, naming the limit. The control for each: the
# same launch with a limit that is not in the way.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
mklab lab /var/tmp/cordon-nofile.XXXXXX # not /tmp: the sandbox has its own
trap 'rm -rf "$lab"' EXIT
mkdir -p "$lab/ws" "$lab/home/big/secret"
export HOME="$lab/home"
unset XDG_STATE_HOME XDG_RUNTIME_DIR SSH_AUTH_SOCK
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
# 1,100 entries on the way to a deny: each one gets a rule of its own
(cd "$lab/home/big" && for i in $(seq 1 1100); do echo "$i" >"f$i"; done)
echo hidden >"$lab/home/big/secret/s"

# how many of the 1,100 the command cannot read, and whether it read the deny
probe='n=0; for f in "$HOME"/big/f*; do read -r x <"$f" 2>/dev/null || n=$((n+1)); done; echo "unreadable=$n"; cat "$HOME/big/secret/s" 2>/dev/null || echo denied'
run() { # soft-limit -> out (one line, the status last)
	out=$( (ulimit -Sn "$1" && "$CORDON" run -q --state-dir "$lab/state" -w "$lab/ws" \
		--deny-read "$HOME/big/secret" -- sh -c "$probe") 2>&1; echo "rc=$?")
	out=$(printf '%s' "$out" | tr '\n' ' ')
}

hard=$(ulimit -Hn)
# the premise: a hard limit that lets the control run with room to spare
[ "$hard" = unlimited ] || [ "$hard" -ge 4096 ] ||
	skip_all "the open-file hard limit here is $hard (below 4,096): no control run above 1,024"
[ "$hard" = unlimited ] && hard=8192
high=$((hard < 8192 ? hard : 8192))
run "$high"
ok $([ "$out" = "unreadable=0 denied rc=0" ]; echo $?) \
	"control: at a soft limit of $high every entry is readable and the deny holds ($out)"

run 1024
ok $([ "$out" = "unreadable=0 denied rc=0" ]; echo $?) \
	"at systemd's default soft limit (1,024) all 1,100 entries stay readable (${out:0:160})"

# a limit too low for the rules: refused before the command runs, naming it
rm -f "$lab/ws/ran"
low=0
for l in 60 80 100 120 140 160; do
	out=$(ulimit -Sn "$l" && "$CORDON" run -q --state-dir "$lab/state" -w "$lab/ws" \
		--deny-read "$HOME/big/secret" -- sh -c 'touch ran' 2>&1)
	rc=$?
	case "$out" in *"open-file limit"*) low=$l; break ;; esac
done
ok $([ "$low" != 0 ] && [ "$rc" = 125 ] && [ ! -e "$lab/ws/ran" ]; echo $?) \
	"a soft limit too low for the read rules ($low) refuses the launch, naming the limit, and nothing runs ($rc: $out)"
case "$out" in *sandbox_unavailable*) r=0 ;; *) r=1 ;; esac
ok $r "the refusal is sandbox_unavailable"
# the control: the same launch at the high limit runs
out=$(ulimit -Sn "$high" && "$CORDON" run -q --state-dir "$lab/state" -w "$lab/ws" \
	--deny-read "$HOME/big/secret" -- sh -c 'touch ran' 2>&1)
ok $([ -e "$lab/ws/ran" ]; echo $?) "control: at $high the same launch runs"
tap_done
