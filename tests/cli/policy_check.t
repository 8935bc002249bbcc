#!/bin/sh
# tests/cli/policy_check.t: `cordon policy check FILE` end to end. Each
# malformed policy exits 2 with one line on stderr,
# "cordon: sandbox_config: <json path>: <reason>", and prints nothing on
# stdout; each valid one exits 0 and prints JSON. Also a missing file, a
# directory, the --help/--version entry points and an unknown command
# (with the one meant when it is one edit away). TAP on stdout.

. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
mklab dir "${TMPDIR:-/tmp}/cordon-policy-check.XXXXXX"
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM HUP

show() { # the captured output, as TAP comments
	sed 's/^/#   /' "$1"
}

# put NAME TEXT: the policy file NAME holding TEXT exactly.
put() {
	printf '%s' "$2" >"$dir/$1.json"
}

run() { # run FILE: sets rc; stdout in $dir/out, stderr in $dir/err
	"$CORDON" policy check "$1" >"$dir/out" 2>"$dir/err"
	rc=$?
}

have_python=0
command -v python3 >/dev/null 2>&1 && have_python=1

is_json() { # is_json FILE [PYTHON-ASSERTIONS]: FILE is JSON (and the asserts hold on j)
	if [ "$have_python" -eq 0 ]; then
		grep -q '^{' "$1"
		return
	fi
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
exec(sys.argv[2])' "$1" "${2:-pass}" 2>"$dir/py.err"
}

# refuses NAME JSON-PATH [SECRET]: the file NAME is refused with exit 2, an
# empty stdout and a single stderr line naming JSON-PATH; SECRET, if
# given, must not appear in it.
refuses() {
	run "$dir/$1.json"
	if [ "$rc" -eq 2 ]; then
		ok 0 "$1: exit 2"
	else
		ok 1 "$1: exit 2 (got $rc)"
		show "$dir/err"
	fi
	line=$(head -n 1 "$dir/err")
	lines=$(wc -l <"$dir/err")
	ok=1
	case "$line" in
	"cordon: sandbox_config: $2: "*) ;;
	*) ok=0 ;;
	esac
	[ "$lines" -eq 1 ] || ok=0
	[ -s "$dir/out" ] && ok=0
	if [ -n "${3:-}" ] && grep -q -- "$3" "$dir/err"; then
		ok=0
	fi
	if [ "$ok" -eq 1 ]; then
		ok 0 "$1: stderr is \"cordon: sandbox_config: $2: ...\""
	else
		ok 1 "$1: stderr is \"cordon: sandbox_config: $2: ...\""
		show "$dir/err"
	fi
}

# accepts NAME [PYTHON-ASSERTIONS]: the file NAME exits 0 with JSON on stdout.
accepts() {
	run "$dir/$1.json"
	if [ "$rc" -eq 0 ] && [ ! -s "$dir/err" ]; then
		ok 0 "$1: exit 0, nothing on stderr"
	else
		ok 1 "$1: exit 0, nothing on stderr (got $rc)"
		show "$dir/err"
	fi
	if is_json "$dir/out" "${2:-}"; then
		ok 0 "$1: stdout is the normalised JSON"
	else
		ok 1 "$1: stdout is the normalised JSON"
		show "$dir/out"
		[ -f "$dir/py.err" ] && show "$dir/py.err"
	fi
}

# --- malformed policies ----------------------------------------------------

put unknown-top '{"write":[],"writes":[]}'
refuses unknown-top writes
put unknown-read '{"read":{"deny":[],"allw":[]}}'
refuses unknown-read read.allw
put unknown-network '{"network":{"allow":["a.example"],"block":[]}}'
refuses unknown-network network.block

put dup-top '{"write":["/a"],"write":["/b"]}'
refuses dup-top write
put dup-read '{"read":{"deny":["/a"],"deny":["/b"]}}'
refuses dup-read read.deny
put dup-network '{"network":{"allow":["a.example"],"allow":[]}}'
refuses dup-network network.allow
grep -q 'duplicate key' "$dir/err"
ok $? "dup-network: the reason says duplicate key"

put write-string '{"write":"/srv/x"}'
refuses write-string write
put read-array '{"read":["/a"]}'
refuses read-array read
put deny-number '{"read":{"deny":["/a",7]}}'
refuses deny-number 'read.deny[1]'
put unix-bool '{"unix_sockets":true}'
refuses unix-bool unix_sockets
put unix-some '{"unix_sockets":"some"}'
refuses unix-some unix_sockets

put relative '{"write":["srv/x"]}'
refuses relative 'write[0]'
put pattern-star '{"read":{"deny":["~/.ssh/*"]}}'
refuses pattern-star 'read.deny[0]'
put pattern-question '{"write":["/tmp/a?"]}'
refuses pattern-question 'write[0]'
put pattern-bracket '{"sockets":["/run/[ab].sock"]}'
refuses pattern-bracket 'sockets[0]'
put tilde-user '{"read":{"allow":["/etc","~root/.profile"]}}'
refuses tilde-user 'read.allow[1]'
put empty-path '{"write":[""]}'
refuses empty-path 'write[0]'
put nul-path '{"write":["/a\u0000b"]}'
refuses nul-path 'write[0]'
long=$(dd if=/dev/zero bs=4095 count=1 2>/dev/null | tr '\0' a)
put long-path "{\"write\":[\"/$long\"]}"
refuses long-path 'write[0]'
put dotdot '{"write":["{workspace}/../etc"]}'
refuses dotdot 'write[0]'
put placeholder '{"write":["{foo}/x"]}'
refuses placeholder 'write[0]'
put brace-mid '{"write":["/srv/{workspace}"]}'
refuses brace-mid 'write[0]'

put host-url '{"network":{"allow":["a.example","https://x.example"]}}'
refuses host-url 'network.allow[1]'
put host-path '{"network":{"allow":["x.example/path"]}}'
refuses host-path 'network.allow[0]'
put host-userinfo '{"network":{"deny":["user:pw@x.example"]}}'
refuses host-userinfo 'network.deny[0]' 'pw'
put port-0 '{"network":{"allow":["x.example:0"]}}'
refuses port-0 'network.allow[0]'
put port-65536 '{"network":{"allow":["x.example:65536"]}}'
refuses port-65536 'network.allow[0]'
put port-empty '{"network":{"allow":["x.example:"]}}'
refuses port-empty 'network.allow[0]'
put host-star '{"network":{"allow":["*"]}}'
refuses host-star 'network.allow[0]'
put host-star-com '{"network":{"allow":["*.com"]}}'
refuses host-star-com 'network.allow[0]'
put host-star-couk '{"network":{"allow":["*.co.uk"]}}'
refuses host-star-couk 'network.allow[0]'
printf '{"network":{"allow":["ex\303\244mple.com"]}}' >"$dir/host-nonascii.json"
refuses host-nonascii 'network.allow[0]'

put trailing '{"write":["/a"]} x'
refuses trailing '(root)'
put top-array '[]'
refuses top-array '(root)'
put top-string '"{}"'
refuses top-string '(root)'
put empty-file ''
refuses empty-file '(root)'

# --- files that are not there or not files ---------------------------------

run "$dir/no-such-file.json"
[ "$rc" -eq 2 ]
ok $? "missing file: exit 2 (got $rc)"
grep -q '^cordon: sandbox_config: ' "$dir/err"
ok $? "missing file: reason sandbox_config"
{ dd if=/dev/zero bs=1024 count=1025 2>/dev/null | tr '\0' ' '; printf '{}'; } >"$dir/huge.json"
run "$dir/huge.json"
[ "$rc" -eq 2 ] && grep -q '^cordon: sandbox_config: ' "$dir/err"
ok $? "a file over 1 MiB: exit 2, sandbox_config (got $rc)"
{ dd if=/dev/zero bs=1024 count=1000 2>/dev/null | tr '\0' ' '; printf '{}'; } >"$dir/big.json"
run "$dir/big.json"
[ "$rc" -eq 0 ]
ok $? "a file just under 1 MiB: exit 0 (control; got $rc)"
mkdir "$dir/a-directory"
run "$dir/a-directory"
[ "$rc" -eq 2 ] && grep -q '^cordon: sandbox_config: ' "$dir/err"
ok $? "a directory: exit 2, sandbox_config (got $rc)"

# --- valid policies ----------------------------------------------------------

put full '{"write":["{workspace}","/srv/x"],"read":{"deny":["~/.config/op"],"allow":["~/.ssh/known_hosts"]},"network":{"allow":["api.anthropic.com","github.com","*.githubusercontent.com"]},"sockets":["{toolbelt}"],"unix_sockets":"all"}'
accepts full 'assert j == {"write": ["{workspace}", "/srv/x"], "read": {"deny": ["~/.config/op"], "allow": ["~/.ssh/known_hosts"]}, "network": {"allow": ["api.anthropic.com", "github.com", "*.githubusercontent.com"], "deny": []}, "sockets": ["{toolbelt}"], "unix_sockets": "all"}, j'
put empty '{}'
accepts empty 'assert j["unix_sockets"] == "none" and j["write"] == [] and j["network"] == {"allow": [], "deny": []}, j'
put normalise '{"write":["/a//b/./c/","~/"],"network":{"allow":["Example.COM.","[::0001]:443"]}}'
accepts normalise 'assert j["write"] == ["/a/b/c", "~"] and j["network"]["allow"] == ["example.com", "[::1]:443"], j'
put whitespace ' {"unix_sockets": "none"}
'
accepts whitespace
ln -s full.json "$dir/link.json"
accepts link

"$CORDON" policy default >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 0 ] && is_json "$dir/out" 'assert j["write"] == ["{workspace}"], j'
ok $? "policy default: exit 0, JSON"

# --- entry points ------------------------------------------------------------

"$CORDON" policy --help >"$dir/out" 2>"$dir/err" &&
	grep -q 'policy check FILE' "$dir/out"
ok $? "policy --help: exit 0, usage on stdout"
"$CORDON" --help >"$dir/out" 2>"$dir/err" && grep -q 'policy' "$dir/out"
ok $? "--help: exit 0, lists policy"
"$CORDON" --version >"$dir/out" 2>"$dir/err" && grep -q '^cordon ' "$dir/out"
ok $? "--version: exit 0"
"$CORDON" policy check >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 2 ] && [ ! -s "$dir/out" ]
ok $? "policy check with no file: a usage error, not 0 or 2 (got $rc)"
"$CORDON" polcy check x >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 125 ] && grep -qx "cordon: usage: unknown command 'polcy' (did you mean \"policy\"?)" "$dir/err"
ok $? "a command one edit from policy: 125, the command named (got $rc)"
"$CORDON" cinti >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 125 ] && grep -qx "cordon: usage: unknown command 'cinti'" "$dir/err" && ! grep -q 'did you mean' "$dir/err"
ok $? "... and none offered for an internal one (cinit) or one further off (got $rc)"

tap_done
