#!/bin/bash
# unprivileged.t: the isolation suite (native.t) run as an ordinary user,
# cordon-test (made by scripts/test-user), with its own lab. Its TAP output
# is passed through as it is. Needs root to switch user; skipped otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/lib.sh"
need_exec "$CORDON" CORDON
need_exec "$CORDON_HELPERS/probe" "the probe helper"

other_user

# What the user must reach: cordon, the probe and the suite's scripts. If
# any is out of its reach (a path it cannot traverse), copy them all into
# a directory it can read and run from there.
can_use() { runuser -u "$user" -- test "$1" "$2"; }
cordon=$CORDON helpers=$CORDON_HELPERS suite=$here copy=
if ! can_use -x "$CORDON" || ! can_use -x "$CORDON_HELPERS/probe" ||
	! can_use -r "$here/native.t" || ! can_use -r "$here/lab.sh" ||
	! can_use -r "$here/cases"; then
	copy=$(mktemp -d /var/tmp/cordon-iso-bin.XXXXXX) || exit 1
	trap 'rm -rf "$copy"' EXIT
	mkdir -p "$copy/helpers" "$copy/suite"
	cp "$CORDON" "$copy/cordon"
	cp "$CORDON_HELPERS/probe" "$copy/helpers/probe"
	cp -r "$here/native.t" "$here/lab.sh" "$here/cases" "$copy/suite/"
	chmod -R a+rX "$copy"
	cordon=$copy/cordon helpers=$copy/helpers suite=$copy/suite
fi

# A clean environment: the user's own PATH (not root's), the variables the
# suite and the sanitizers read, nothing else of root's.
cd / && runuser -u "$user" -- env -i \
	PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin \
	LANG=C.UTF-8 \
	CORDON="$cordon" CORDON_HELPERS="$helpers" \
	${ASAN_OPTIONS+ASAN_OPTIONS="$ASAN_OPTIONS"} \
	${UBSAN_OPTIONS+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
	${CORDON_ISO_CONTROLS+CORDON_ISO_CONTROLS="$CORDON_ISO_CONTROLS"} \
	${CORDON_ISO_TIMEOUT+CORDON_ISO_TIMEOUT="$CORDON_ISO_TIMEOUT"} \
	${CORDON_PROVIDER+CORDON_PROVIDER="$CORDON_PROVIDER"} \
	bash "$suite/native.t"
