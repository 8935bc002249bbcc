#!/bin/bash
# tests/cli/man-policy.t: docs/man/cordon-policy.5.scd against the code.
# Every key the parsers accept (the `static const char *const ...keys[]`
# arrays of src/policy/policy.c and src/host/config.c) is a documented
# term of the page, and every term the page documents as a key is one the
# parsers accept; the page goes through scdoc and man renders it; the
# default policy it shows is what `cordon policy default` prints; and its
# two examples load: the policy through `cordon policy check`, the
# daemon's config through `cordon doctor --config` (and `cordon job
# bindings --config` when cordon-host is beside cordon), each beside a
# control that a broken copy of it is refused. TAP on stdout.
set -u
. "$(dirname "$0")/../host/lib.sh"
SRC=$CORDON_SRC
PAGE=$SRC/docs/man/cordon-policy.5.scd

skip_unless_tools scdoc
need_exec "$CORDON" CORDON
[ -r "$PAGE" ] || bail "$PAGE is not readable (CORDON_SRC names the source tree)"
for f in src/policy/policy.c src/host/config.c; do
	[ -r "$SRC/$f" ] || bail "$SRC/$f is not readable"
done

mklab tmp "${TMPDIR:-/tmp}/cordon-man-policy.XXXXXX"
trap 'rm -rf "$tmp"' EXIT

# The strings of every `static const char *const <name>keys[] = { ... };`
# of a file, a line each (an array may span lines).
keys_of() {
	awk '/static const char \*const [A-Za-z0-9_]*keys\[\] = \{/ { on = 1 }
	     on { print }
	     on && /\};/ { on = 0 }' "$1" | grep -o '"[^"]*"' | tr -d '"'
}

# Is $1 a documented term of the page: a line that starts with a bold
# span naming it, alone or as the last part of a dotted path
# (*network.allow_ranges*, *git.credentials[].host*)?
documented() {
	local k
	k=$(printf '%s' "$1" | sed 's/[.[\*^$]/\\&/g')
	grep -Eq "^\*(([A-Za-z0-9_-]|\[\])+\.)*$k\*" "$PAGE"
}

# The literal block after the comment line `; example: $1`.
example() {
	awk -v m="; example: $1" '
		$0 == m { f = 1; next }
		f == 1 && /^```$/ { f = 2; next }
		f == 2 && /^```$/ { exit }
		f == 2 { print }' "$PAGE"
}

# --- the keys --------------------------------------------------------
keys_of "$SRC/src/policy/policy.c" | sort -u >"$tmp/policy.keys"
keys_of "$SRC/src/host/config.c" | sort -u >"$tmp/config.keys"
sort -u "$tmp/policy.keys" "$tmp/config.keys" >"$tmp/all.keys"
# Control: the extraction finds the arrays and what is known to be in them.
arrays=$(cat "$SRC/src/policy/policy.c" "$SRC/src/host/config.c" |
	grep -c 'static const char \*const [A-Za-z0-9_]*keys\[\] = {')
ok "$([ "$arrays" -ge 14 ]; echo $?)" "control: the key arrays are found in the sources ($arrays)"
for k in allow_ranges workspace_entries unix_sockets pass; do
	ok "$(grep -qx "$k" "$tmp/policy.keys"; echo $?)" "control: policy.c's arrays give \"$k\""
done
for k in host_key ssh_config home_seed retention_days credentials username; do
	ok "$(grep -qx "$k" "$tmp/config.keys"; echo $?)" "control: config.c's arrays give \"$k\""
done

missing=
while IFS= read -r k; do
	documented "$k" || missing="$missing $k"
done <"$tmp/all.keys"
ok "$([ -z "$missing" ]; echo $?)" "every key of the parsers ($(wc -l <"$tmp/all.keys")) is a documented term"
[ -z "$missing" ] || echo "# not documented:$missing"
# Control: the check finds no key that is not there, a near miss included.
for k in frobnicate allow_rangez netwrok; do
	ok "$(! documented "$k"; echo $?)" "control: the made-up key \"$k\" is not found documented"
done

# The other way: each term of the sections that list keys (POLICY,
# DAEMON CONFIG, BINDINGS) ends in a key the parsers accept.
awk '/^# / { s = $0 } s ~ /^# (POLICY|DAEMON CONFIG|BINDINGS)$/ && /^\*[][A-Za-z0-9_.-]+\*$/' \
	"$PAGE" | tr -d '*' | sed 's/.*\.//' | sort -u >"$tmp/terms"
extra=$(comm -23 "$tmp/terms" "$tmp/all.keys" | tr '\n' ' ')
ok "$([ -s "$tmp/terms" ] && [ -z "$extra" ]; echo $?)" \
	"every key term of POLICY, DAEMON CONFIG and BINDINGS ($(wc -l <"$tmp/terms")) is a key the parsers accept"
[ -z "$extra" ] || echo "# not a key of the parsers: $extra"

# --- the page renders ------------------------------------------------
scdoc <"$PAGE" >"$tmp/cordon-policy.5" 2>"$tmp/scdoc.err"
rc=$?
ok $rc "scdoc accepts the page"
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/scdoc.err"
ok "$(grep -q '^\.TH "cordon-policy" "5"' "$tmp/cordon-policy.5"; echo $?)" "its roff names cordon-policy(5)"
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man -l "$tmp/cordon-policy.5" >"$tmp/page.txt" 2>"$tmp/man.err"
	rc=$?
	ok $rc "man -l renders it"
	[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/man.err"
	for h in NAME SYNOPSIS DESCRIPTION POLICY PATHS HOSTS "THE DEFAULT POLICY" "DAEMON CONFIG" \
		BINDINGS REFUSALS EXAMPLES "SEE ALSO"; do
		ok "$(grep -qx "$h" "$tmp/page.txt"; echo $?)" "the rendered page has the heading $h"
	done
	# Control: a heading the page does not have is not found.
	ok "$(! grep -qx "BUGS" "$tmp/page.txt"; echo $?)" "control: no heading BUGS is found"
	ok "$(grep -q 'cordon-policy - ' "$tmp/page.txt"; echo $?)" "the rendered NAME line names the page"
else
	skip "man missing"
fi

# --- the default policy is the embedded one --------------------------
example default >"$tmp/default.page"
"$CORDON" policy default >"$tmp/default.cordon" 2>"$tmp/err"
ok "$([ -s "$tmp/default.page" ] && cmp -s "$tmp/default.page" "$tmp/default.cordon"; echo $?)" \
	"THE DEFAULT POLICY shows what \`cordon policy default\` prints"
if ! cmp -s "$tmp/default.page" "$tmp/default.cordon"; then
	diff "$tmp/default.page" "$tmp/default.cordon" | sed 's/^/# /'
fi

# --- the examples load -----------------------------------------------
example policy >"$tmp/policy.json"
example config >"$tmp/config.json"
for x in policy config; do
	ok "$([ -s "$tmp/$x.json" ]; echo $?)" "the $x example is found after \`; example: $x\`"
	# scdoc reads a backslash even in a literal block: the page would
	# show something else than the file checked here
	ok "$(! grep -q '[\]' "$tmp/$x.json"; echo $?)" "the $x example holds no backslash"
done

"$CORDON" policy check "$tmp/policy.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "cordon policy check accepts the policy example"
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/err"
ok "$(grep -q '"registry.npmjs.org"' "$tmp/out" && grep -q '"api.anthropic.com"' "$tmp/out"; echo $?)" \
	"and prints it with the npm registry and the API allowed"
# Control: the same example with a key misspelt is refused.
sed 's/"unix_sockets"/"unix_socket"/' "$tmp/policy.json" >"$tmp/policy-bad.json"
"$CORDON" policy check "$tmp/policy-bad.json" >/dev/null 2>"$tmp/err"
rc=$?
ok "$([ "$rc" = 2 ] && grep -q 'unix_socket: unknown key (did you mean "unix_sockets"?)' "$tmp/err"; echo $?)" \
	"control: the policy example with a key misspelt is refused, exit 2 (got $rc), with the hint"

"$CORDON" doctor --config "$tmp/config.json" --json >"$tmp/out" 2>"$tmp/err"
rc=$?
# 0 or 1 is a config that loaded (ready here or not); 125 one refused
ok "$([ "$rc" = 0 ] || [ "$rc" = 1 ]; echo $?)" "cordon doctor --config loads the config example (exit $rc)"
[ "$rc" = 0 ] || [ "$rc" = 1 ] || sed 's/^/# /' "$tmp/err"
python3 - "$tmp/out" >"$tmp/py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [b["binding"] for b in d["bindings"]]
assert names == ["fix", "test"], names
assert all(b["provider"] == "native" for b in d["bindings"]), d["bindings"]
PY
rc=$?
ok $rc "its report names the two bindings, fix and test, both native"
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/py"
# Control: the same config with a key misspelt is refused, nothing printed.
sed 's/"retention_days"/"retention_day"/' "$tmp/config.json" >"$tmp/config-bad.json"
"$CORDON" doctor --config "$tmp/config-bad.json" --json >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" = 125 ] && [ ! -s "$tmp/out" ] &&
	grep -q 'sandbox_config: .*retention_day: unknown key (did you mean "retention_days"?)' "$tmp/err"
	echo $?)" "control: the config example with a key misspelt is refused, exit 125 (got $rc), with the hint"

if [ -x "$(dirname "$CORDON")/cordon-host" ]; then
	"$CORDON" job bindings --config "$tmp/config.json" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = "$(printf 'fix\ntest')" ]; echo $?)" \
		"cordon job bindings --config lists fix and test (exit $rc)"
	[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/err"
	"$CORDON" job bindings --config "$tmp/config-bad.json" >/dev/null 2>&1
	rc=$?
	ok "$([ "$rc" = 125 ]; echo $?)" "control: and refuses the misspelt copy, exit 125 (got $rc)"
else
	skip "no cordon-host beside $CORDON"
	skip "no cordon-host beside $CORDON"
fi

tap_done
