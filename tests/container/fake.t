#!/bin/bash
# The container conformance suite (conformance.sh) on the fake provider
# (tests/helpers/fakectr, a test double that confines nothing): every
# check passes on the fake. Then the negative controls: on each flawed
# fake (one way of breaking the contract each: a listing that ignores the
# host and job, a removed container inspected as an error, a created one
# inspected as started) the suite fails, at least at the check that flaw
# breaks. A flawed run's own lines stay apart (run in a subshell, its
# output captured): its failures are shown here as comments, and what
# this test asserts is that there were some.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lib.sh"
F=$CORDON_HELPERS/fakectr
need_exec "$F" "make build/san/tests/helpers/fakectr"
skip_unless_tools python3
mklab lab /tmp/cordon-fake.XXXXXX
trap 'rm -rf "$lab"' EXIT
mkdir -p "$lab/home"
lab_env "$lab"
. "$here/conformance.sh"

# cfg NAME [FLAW]: a fake's container config, its root under $lab/NAME
cfg() { printf '{"provider": "fake", "root": "%s"%s}' "$lab/$1/root" "${2:+, \"flaw\": \"$2\"}"; }
# run_on NAME CONFIG: the suite on the fake, in $lab/NAME
run_on() {
	mkdir -p "$lab/$1/root" "$lab/$1/ws"
	conformance_run "$F" "$2" "$lab/$1/ws" "$lab/$1/state"
}

# ---- the fake conforms
CONFORMANCE_PREFIX="fake: " run_on fake "$(cfg fake)"
ok $([ -z "$(ls -A "$lab/fake/root")" ]; echo $?) "fake: nothing is left under its root"

# ---- each flawed fake fails it, where its flaw is
# (FLAW, then a check it must fail)
for t in "list-ignores-owner|another job's listing does not have it" \
	"removed-is-error|a removed one: inspect says gone" \
	"created-reported-started|made, not started: inspect says created"; do
	flaw=${t%%|*} must=${t#*|}
	out=$(n=0; fails=0; CONFORMANCE_PREFIX="$flaw: " run_on "$flaw" "$(cfg "$flaw" "$flaw")" 2>&1)
	bad=$(printf '%s\n' "$out" | grep -c '^not ok')
	printf '%s\n' "$out" | grep '^not ok' | sed 's/^/# /'
	ok $([ "$bad" -gt 0 ]; echo $?) "the suite fails the fake whose flaw is $flaw ($bad of $(printf '%s\n' "$out" | grep -c '^\(not \)\?ok') checks)"
	ok $(printf '%s\n' "$out" | grep -q "^not ok [0-9]* - $flaw: $must"; echo $?) "... at \"$must\""
done

tap_done

