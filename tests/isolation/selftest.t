#!/bin/bash
# selftest.t: the isolation suite must not pass for want of a sandbox. It
# runs native.t against tests/isolation/nosandbox, a `cordon run` that runs
# the command on the host, and checks, case by case: every isolation case
# fails (and none is broken: its control works), every positive case (the
# workspace readable, git works, exit statuses) passes. Needs only the probe.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lib.sh"
need_exec "$CORDON_HELPERS/probe" "the probe helper"

# Cases that need a real launch beside the one under test (an srt launch
# whose bridges a sandbox must not reach) take it from CORDON_ISO_REAL.
out=$(CORDON_ISO_REAL="${CORDON:-}" CORDON="$here/nosandbox" CORDON_ISO_SELFTEST=1 bash "$here/native.t" 2>&1)

line= seen=0
while IFS= read -r l; do
	case $l in
	"ok "* | "not ok "*) line=$l ;;
	"# kind: "*)
		[ -n "$line" ] || continue
		kind=${l#\# kind: }
		desc=${line#*- }
		seen=$((seen + 1))
		if [ "$kind" = needs-caps ]; then
			# EPERM before any argument check without CAP_SYS_ADMIN: as
			# root a missing filter shows (ENOENT etc.), as anyone else
			# the host's own EPERM hides it, so only root can tell.
			if [ "$(id -u)" = 0 ]; then kind=isolation
			else n=$((n + 1)); echo "ok $n - $desc # SKIP not root: EPERM without CAP_SYS_ADMIN hides a missing filter"; line=; continue
			fi
		fi
		case $line in
		*"# SKIP"*) n=$((n + 1)); echo "ok $n - $desc" ;;
		*"# broken"*) ok 1 "$kind case is broken even on the host: $desc" ;;
		"ok "*) if [ "$kind" = positive ]; then ok 0 "positive case passes without a sandbox: $desc"
			else ok 1 "isolation case passes without a sandbox: $desc"; fi ;;
		*) if [ "$kind" = positive ]; then ok 1 "positive case fails without a sandbox: $desc"
			else ok 0 "without a sandbox the suite catches: $desc"; fi ;;
		esac
		line= ;;
	esac
done <<<"$out"
ok $([ $seen -gt 50 ]; echo $?) "native.t ran its cases against the no-op sandbox ($seen seen)"
if [ $fails != 0 ]; then
	printf '%s\n' "$out" | sed 's/^/# native.t: /' | grep -v '^# native.t: # kind:' | head -400
fi
tap_done
