#!/bin/bash
# srt-unprivileged.t: the isolation suite against `--provider srt`, run as
# the unprivileged user cordon-test (see unprivileged.t and srt.t).
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
CORDON_PROVIDER=srt exec bash "$here/unprivileged.t"
