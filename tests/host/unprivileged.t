#!/bin/bash
# unprivileged.t: host suites run as an ordinary user, cordon-test (made
# by scripts/test-user), as an operator who is not root runs the daemon:
# identity.t (places compared by what they are; strays and stops proven
# through pidfds) and hygiene.t (secrets, bounds, the log, descriptors).
# Their TAP output is joined into one plan. Needs root to switch user;
# skipped otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/lib.sh"
need_exec "$CORDON" CORDON

other_user

# What the suite runs, where the user can read it: cordon and cordon-host
# side by side, the suite with lib.sh (and tests/lib's), the stand-in
# claude.
copy=$(mktemp -d /var/tmp/cordon-idu.XXXXXX) || exit 1
trap 'rm -rf "$copy"' EXIT
mkdir -p "$copy/bin" "$copy/tests/host" "$copy/tests/helpers" "$copy/tests/lib"
cp "$CORDON" "$copy/bin/cordon" && cp "$(dirname "$CORDON")/cordon-host" "$copy/bin/cordon-host" &&
	cp "$here/identity.t" "$here/hygiene.t" "$here/lib.sh" "$copy/tests/host/" &&
	cp "$top/tests/lib/lib.sh" "$copy/tests/lib/" &&
	cp "$top/tests/helpers/claude-standin" "$copy/tests/helpers/" || exit 1
chmod -R a+rX "$copy"

# each suite in a clean environment: the user's own PATH (not root's), the
# variables the suites and the sanitizers read; its cases renumbered into
# this file's one plan, a failing one still failing it
as_user() {
	(cd / && runuser -u "$user" -- env -i \
		PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin \
		LANG=C.UTF-8 \
		CORDON="$copy/bin/cordon" CORDON_SRC="$copy" \
		${ASAN_OPTIONS+ASAN_OPTIONS="$ASAN_OPTIONS"} \
		${UBSAN_OPTIONS+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		bash "$copy/tests/host/$1")
}
n=0 rc=0
for t in identity.t hygiene.t; do
	out=$(as_user "$t" 2>&1); r=$?
	[ "$r" = 0 ] || rc=1
	while IFS= read -r line; do
		case $line in
		"ok "* | "not ok "*)
			n=$((n + 1))
			printf '%s\n' "$line" | sed -E "s/^(not )?ok [0-9]+/\1ok $n/; s/ - / - $t (as $user): /"
			;;
		"1..0"*) echo "# $t: $line" ;;
		"1.."*) ;;
		"Bail out!"*) echo "not ok $((n += 1)) - $t (as $user): $line"; rc=1 ;;
		*) printf '# %s\n' "$line" ;;
		esac
	done <<<"$out"
done
echo "1..$n"
exit $rc
