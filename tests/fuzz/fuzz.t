#!/bin/sh
# tests/fuzz/fuzz.t: a bounded run of the libFuzzer targets built by
# `make fuzz` into $CORDON_FUZZ. The seed corpus is copied to a temporary
# directory first, so libFuzzer's new inputs and any crash artifact land
# there and never in the repository. Skipped when the targets are not built.
# CORDON_FUZZ_TIME (seconds, default 20) bounds the run.

here=$(cd "$(dirname "$0")" && pwd)
src=${CORDON_SRC:-$here/../..}
seconds=${CORDON_FUZZ_TIME:-20}
target=${CORDON_FUZZ:-}/fuzz_policy

if [ -z "${CORDON_FUZZ:-}" ] || [ ! -x "$target" ]; then
	echo "1..0 # SKIP fuzz targets not built"
	exit 0
fi

n=0
failed=0
dir=$(mktemp -d "${TMPDIR:-/tmp}/cordon-fuzz.XXXXXX") || {
	echo "Bail out! mktemp -d failed"
	exit 1
}
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM HUP

check() { # check STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
	fi
}

# The policy's vocabulary, so a short run reaches past the JSON syntax.
cat >"$dir/policy.dict" <<'EOF'
"write"
"read"
"deny"
"allow"
"network"
"sockets"
"unix_sockets"
"all"
"none"
"{workspace}"
"{run}"
"{toolbelt}"
"~/"
"/./"
"/../"
"//"
"\\u0000"
"\\u00e9"
"*."
".co.uk"
".com"
"[::1]"
":443"
":65535"
"@"
"://"
"xn--"
"::ffff:"
EOF

mkdir "$dir/corpus" "$dir/artifacts"
cp "$src/tests/fuzz/corpus/policy/"* "$dir/corpus/" 2>/dev/null
[ -n "$(ls "$dir/corpus")" ]
check $? "fuzz_policy: seed corpus found in $src/tests/fuzz/corpus/policy"

fuzz() { # fuzz LOG ARGS...: run the target in the temporary directory
	log=$1
	shift
	(cd "$dir" && "$target" -artifact_prefix="$dir/artifacts/" -max_len=4096 \
		-timeout=10 -rss_limit_mb=2048 "$@" corpus) >"$dir/$log" 2>&1
}

report() { # the tail of a log and any crashing input, as TAP comments
	tail -n 30 "$dir/$1" | sed 's/^/#   /'
	for f in "$dir/artifacts/"*; do
		[ -f "$f" ] || continue
		echo "#   artifact $(basename "$f"):"
		od -c "$f" | head -n 20 | sed 's/^/#     /'
	done
}

fuzz replay.log -runs=0
status=$?
check $status "fuzz_policy: the seed corpus replays cleanly"
[ $status -eq 0 ] || report replay.log

fuzz run.log -dict="$dir/policy.dict" -max_total_time="$seconds" -runs=2000000
status=$?
check $status "fuzz_policy: ${seconds}s of fuzzing, no crash, leak or round-trip failure"
[ $status -eq 0 ] || report run.log

[ -z "$(ls "$dir/artifacts")" ]
check $? "fuzz_policy: no crash artifacts"

echo "1..$n"
[ "$failed" -eq 0 ]
