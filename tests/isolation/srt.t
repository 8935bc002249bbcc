#!/bin/bash
# srt.t: the isolation suite (native.t) against `--provider srt`: every case
# the native sandbox holds, held by srt with cordon's own layer (`cordon
# confine`) inside it. Needs the real srt (scripts/deps installs it); on a
# machine without it the file is skipped, except in CI, where a missing
# srt is a failure: the suite must have run. `srt.t unprivileged` runs it
# as cordon-test (unprivileged.t), which srt-unprivileged.t does.
set -u
: "${CORDON:?set CORDON to the cordon binary}"
: "${CORDON_HELPERS:?set CORDON_HELPERS to the helpers directory}"
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v srt >/dev/null; then
	if [ -n "${CI:-}" ]; then
		echo "Bail out! srt is not installed (scripts/deps installs it)"
		exit 1
	fi
	echo "1..0 # SKIP srt is not installed (scripts/deps installs it)"
	exit 0
fi
suite=native.t
[ "${1:-}" = unprivileged ] && suite=unprivileged.t
CORDON_PROVIDER=srt exec bash "$here/$suite"
