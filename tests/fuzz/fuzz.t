#!/bin/sh
# tests/fuzz/fuzz.t: a bounded run of the libFuzzer targets built by
# `make fuzz` into $CORDON_FUZZ: the policy parser, then the gateway's
# HTTP and SOCKS5 parsers, the git config reader, the daemon's job
# request, the Docker Engine client's wire formats and the HTTP head
# tokenizer they share (lib/httphead). Each seed corpus is
# copied to a temporary directory first, so libFuzzer's new inputs and any
# crash artifact land there and never in the repository. Skipped when the targets are not
# built. CORDON_FUZZ_TIME (seconds, default 20) bounds the policy run;
# each gateway parser gets two fifths of it (8 s), the git config reader,
# the daemon's job request, the Engine's wire and the head tokenizer one
# fifth each (4 s), so the whole file stays around 60 s.

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/lib.sh"
src=$CORDON_SRC
seconds=${CORDON_FUZZ_TIME:-20}
part=$(((seconds * 2 + 4) / 5))
target=${CORDON_FUZZ:-}/fuzz_policy

if [ -z "${CORDON_FUZZ:-}" ] || [ ! -x "$target" ]; then
	skip_all "fuzz targets not built"
fi

mklab dir "${TMPDIR:-/tmp}/cordon-fuzz.XXXXXX"
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM HUP

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

# The request head's vocabulary: line ends, forms, framing headers.
cat >"$dir/http.dict" <<'EOF'
"CONNECT "
"GET "
" HTTP/1.1"
" HTTP/1.0"
"\x0d\x0a"
"\x0a"
"\x0d\x0a\x0d\x0a"
"http://"
"https://"
"[::1]"
":443"
":0"
"@"
"#"
"?"
"Host: "
"Connection: "
"Content-Length: "
"Transfer-Encoding: chunked"
"Proxy-Connection: "
"Proxy-Authorization: "
"Basic "
"YWdlbnQ6"
"="
"Keep-Alive: "
"TE: "
", "
"\x00"
"\x0d"
"\x09"
EOF

# SOCKS5 greetings, username/password messages, request prefixes per
# address type, ports, literals.
cat >"$dir/socks5.dict" <<'EOF'
"\x05\x01\x00"
"\x05\x02\x00\x02"
"\x05\x01\x02"
"\x01\x05agent\x05token"
"\x01\x00\x00"
"\x05\x01\x00\x01"
"\x05\x01\x00\x03"
"\x05\x01\x00\x04"
"\x00\x50"
"\x01\xbb"
"127.0.0.1"
"::ffff:"
"example.com."
EOF

# The job request's vocabulary.
cat >"$dir/jobreq.dict" <<'EOF'
"binding"
"args"
"{"
"}"
"["
"]"
","
"\\u0000"
"null"
EOF

# git's config syntax.
cat >"$dir/gitconfig.dict" <<'EOF'
"["
"]"
" \""
"\"]"
"="
"\\\x0a"
"\x0d\x0a"
"#"
";"
"\\t"
"\\\""
"\xef\xbb\xbf"
"core"
"fsmonitor"
"alias"
"!"
"include"
"path"
"includeIf"
"::"
EOF

# The Engine's wire: frame headers, a response head, import messages.
cat >"$dir/engine_wire.dict" <<'EOF'
"\x01\x00\x00\x00"
"\x02\x00\x00\x00"
"HTTP/1.1 101 UPGRADED\x0d\x0a"
"HTTP/1.1 200 OK\x0d\x0a"
"Content-Length: "
"\x0d\x0a\x0d\x0a"
"{\"status\":\"sha256:"
"{\"error\":\""
"errorDetail"
EOF

# The head tokenizer's: line ends, start lines, the smuggling shapes.
cat >"$dir/httphead.dict" <<'EOF'
"GET / HTTP/1.1"
"HTTP/1.1 200 OK"
"HTTP/1.0 "
"HTTP/2.0"
"\x0d\x0a"
"\x0a"
"\x0d\x0a\x0d\x0a"
"Content-Length: "
"Content-Length : "
"Transfer-Encoding: chunked"
"\x0d\x0a "
"\x0d\x0a\x09"
": "
"\x00"
"\x0d"
"\x7f"
"\xff"
EOF

report() { # report NAME LOG: a log's tail and any crashing input, as TAP comments
	tail -n 30 "$dir/$1/$2" | sed 's/^/#   /'
	for f in "$dir/$1/artifacts/"*; do
		[ -f "$f" ] || continue
		echo "#   artifact $(basename "$f"):"
		od -c "$f" | head -n 20 | sed 's/^/#     /'
	done
}

fuzz() { # fuzz LOG ARGS...: run $bin in its temporary directory $work
	log=$1
	shift
	(cd "$work" && "$bin" -artifact_prefix="$work/artifacts/" \
		-max_len="$max_len" -timeout=10 -rss_limit_mb=2048 "$@" \
		corpus) >"$work/$log" 2>&1
}

# run_target NAME CORPUS DICT MAX_LEN SECONDS WHAT: replay the seeds, fuzz
# for SECONDS, expect no artifact. WHAT names the target's own check.
run_target() {
	name=$1 corpus=$2 dict=$3 max_len=$4 secs=$5 what=$6
	bin=$CORDON_FUZZ/$name
	work=$dir/$name

	if [ ! -x "$bin" ]; then
		n=$((n + 1))
		echo "ok $n # SKIP $name not built"
		return
	fi
	mkdir "$work" "$work/corpus" "$work/artifacts"
	cp "$src/tests/fuzz/corpus/$corpus/"* "$work/corpus/" 2>/dev/null
	[ -n "$(ls "$work/corpus")" ]
	ok $? "$name: seed corpus found in $src/tests/fuzz/corpus/$corpus"

	fuzz replay.log -runs=0
	status=$?
	ok $status "$name: the seed corpus replays cleanly"
	[ $status -eq 0 ] || report "$name" replay.log

	fuzz run.log -dict="$dir/$dict" -max_total_time="$secs" -runs=2000000
	status=$?
	ok $status "$name: ${secs}s of fuzzing, no crash, leak or $what"
	[ $status -eq 0 ] || report "$name" run.log

	[ -z "$(ls "$work/artifacts")" ]
	ok $? "$name: no crash artifacts"
}

run_target fuzz_policy policy policy.dict 4096 "$seconds" "round-trip failure"
# Past HTTP_HEAD_MAX (16 KiB), so the size limits are reached too.
run_target fuzz_http http http.dict 20000 "$part" "broken invariant"
run_target fuzz_socks5 socks5 socks5.dict 600 "$part" "broken invariant"
run_target fuzz_gitconfig gitconfig gitconfig.dict 4096 "$(((seconds + 4) / 5))" "broken invariant"
# Past HOST_REQUEST_MAX (64 KiB), so the size limit is reached too.
run_target fuzz_jobreq jobreq jobreq.dict 70000 "$(((seconds + 4) / 5))" "broken invariant"
run_target fuzz_engine_wire engine_wire engine_wire.dict 4096 "$(((seconds + 4) / 5))" "broken invariant"
# Past the 4 KiB head bound the target sets, so the size limit is reached too.
run_target fuzz_httphead httphead httphead.dict 5000 "$(((seconds + 4) / 5))" "broken invariant"

tap_done
