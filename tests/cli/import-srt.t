#!/bin/bash
# tests/cli/import-srt.t: `cordon policy import-srt FILE` end to end. Each
# settings file in tests/cli/srt-settings/ (shaped as srt's README shows
# them) exits 0, prints a policy that `cordon policy check` accepts as it
# is, holds the cordon keys and values expected, and says on stderr what
# cordon holds differently, one line each. Settings that are not valid
# JSON, hold a value of the wrong type or a key srt does not have exit 125
# with "cordon: sandbox_config: <json path>: <reason>" and print nothing on
# stdout. The control: srt's own loader accepts every settings file used
# here (where srt is installed). TAP on stdout.
# The notes quote with backquotes, which the patterns below hold literally:
# shellcheck disable=SC2016

. "$(dirname "$0")/../lib/lib.sh"
settings=$(cd "$(dirname "$0")/srt-settings" && pwd)

need_exec "$CORDON" CORDON
skip_unless_tools python3
mklab dir "${TMPDIR:-/tmp}/cordon-import-srt.XXXXXX"
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM HUP

show() { # the captured output, as TAP comments
	sed 's/^/#   /' "$1"
}

run() { # run FILE: sets rc; stdout in $dir/out, stderr in $dir/err
	"$CORDON" policy import-srt "$1" >"$dir/out" 2>"$dir/err"
	rc=$?
}

# --- the control: these are settings srt itself accepts ----------------------

srt_root=
if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
	srt_root="$(npm root -g 2>/dev/null)/@anthropic-ai/sandbox-runtime"
	[ -f "$srt_root/dist/utils/config-loader.js" ] || srt_root=
fi

# srt_accepts FILE...: srt's own loader takes every FILE as a valid config.
srt_accepts() {
	node --input-type=module -e '
const { loadConfig } = await import(process.argv[1] + "/dist/utils/config-loader.js");
let bad = 0;
for (const f of process.argv.slice(2)) {
	const r = loadConfig(f);
	if (r.kind !== "ok") { console.log(f, r.kind, r.reason ?? ""); bad = 1; }
}
process.exit(bad);' "$srt_root" "$@" >"$dir/srt.out" 2>&1
}

fixtures=()
for f in minimal full globs sockets denied-domains every-key; do
	fixtures+=("$settings/$f.json")
done
if [ -n "$srt_root" ]; then
	if srt_accepts "${fixtures[@]}"; then
		ok 0 "srt's own loader accepts every settings file"
	else
		ok 1 "srt's own loader accepts every settings file"
		show "$dir/srt.out"
	fi
else
	skip "srt is not installed here (npm root -g), so its loader cannot vouch for the files"
fi

# --- each settings file ------------------------------------------------------

# Python run ahead of each policy's assertions: srt's mandatory write
# denies must be in read.deny for every write grant (.git/hooks and
# .git/config too, except in the workspace, which cordon keeps read-only
# itself); they are then taken out of j, so the assertions name the rest.
strip_mandatory='
M = [".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile",
     ".profile", ".ripgreprc", ".mcp.json", ".vscode", ".idea", ".claude/commands",
     ".claude/agents"]
mand = set()
for w in j["write"]:
    for m in M + ([] if w == "{workspace}" else [".git/hooks", ".git/config"]):
        p = ("" if w == "/" else w) + "/" + m
        assert p in j["read"]["deny"], ("mandatory deny missing", p, j)
        mand.add(p)
j["read"]["deny"] = [d for d in j["read"]["deny"] if d not in mand]
'

# imports NAME PYTHON-ASSERTIONS: srt-settings/NAME.json exits 0; its
# policy is JSON that `policy check` accepts and prints back unchanged;
# the assertions hold on it (j); every stderr line is a note.
imports() {
	local f="$settings/$1.json"

	run "$f"
	cp "$dir/out" "$dir/$1.policy.json"
	cp "$dir/err" "$dir/$1.notes"
	if [ "$rc" -eq 0 ] && [ -s "$dir/out" ]; then
		ok 0 "$1: exit 0, a policy on stdout"
	else
		ok 1 "$1: exit 0, a policy on stdout (got $rc)"
		show "$dir/err"
	fi
	if "$CORDON" policy check "$dir/$1.policy.json" >"$dir/check.out" 2>"$dir/check.err" &&
		cmp -s "$dir/check.out" "$dir/$1.policy.json"; then
		ok 0 "$1: policy check accepts the policy and prints it back unchanged"
	else
		ok 1 "$1: policy check accepts the policy and prints it back unchanged"
		show "$dir/check.err"
		show "$dir/$1.policy.json"
	fi
	if python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
exec(sys.argv[3])
exec(sys.argv[2])' "$dir/$1.policy.json" "$2" "$strip_mandatory" 2>"$dir/py.err"; then
		ok 0 "$1: the cordon keys and values expected"
	else
		ok 1 "$1: the cordon keys and values expected"
		show "$dir/py.err"
		show "$dir/$1.policy.json"
	fi
	if ! grep -v '^cordon: import-srt: [^ ]*: ' "$dir/$1.notes" >"$dir/odd"; then
		ok 0 "$1: every stderr line is \"cordon: import-srt: <json path>: ...\""
	else
		ok 1 "$1: every stderr line is \"cordon: import-srt: <json path>: ...\""
		show "$dir/odd"
	fi
}

# note NAME JSON-PATH TEXT: NAME's notes have a line for JSON-PATH holding
# TEXT (a fixed string).
note() {
	if grep -F -- "cordon: import-srt: $2: " "$dir/$1.notes" | grep -q -F -- "$3"; then
		ok 0 "$1: note on $2: $3"
	else
		ok 1 "$1: note on $2: $3"
		show "$dir/$1.notes"
	fi
}

# no_note NAME JSON-PATH: no line names JSON-PATH (the control for note).
no_note() {
	if grep -q -F -- "cordon: import-srt: $2: " "$dir/$1.notes"; then
		ok 1 "$1: no note on $2"
		show "$dir/$1.notes"
	else
		ok 0 "$1: no note on $2"
	fi
}

imports minimal 'assert j == {"write": [], "read": {"deny": [], "allow": []}, "network": {"allow": [], "deny": []}, "sockets": [], "unix_sockets": "none"}, j'
note minimal filesystem.denyRead "srt reads every path denyRead does not name"
note minimal filesystem.allowWrite "/tmp/claude"
no_note minimal 'filesystem.allowWrite[0]'
[ "$(wc -l <"$dir/minimal.notes")" -eq 2 ]
ok $? "minimal: two notes, the defaults' (got $(wc -l <"$dir/minimal.notes"))"

imports full 'assert j["write"] == ["{workspace}", "{workspace}/src", "{workspace}/test", "/tmp"], j
assert j["read"] == {"deny": ["~/.ssh", "{workspace}/.env", "{workspace}/config/production.json"], "allow": []}, j
assert j["network"] == {"allow": ["github.com", "*.github.com", "lfs.github.com", "api.github.com", "npmjs.org", "*.npmjs.org"], "deny": ["malicious.com"]}, j
assert j["sockets"] == [] and j["unix_sockets"] == "none", j'
note full 'filesystem.allowWrite[0]' 'read as `{workspace}`; a relative path is taken from the workspace'
note full 'filesystem.denyWrite[0]' 'cordon has no write-only deny: it is denied for reading too (stricter)'
note full 'network.allowUnixSockets[0]' '`/var/run/docker.sock` dropped: without allowAllUnixSockets srt on Linux refuses every unix socket'
note full ignoreViolations 'dropped'
note full filesystem.allowWrite 'mandatory write denies in write grant `{workspace}` (.bashrc'
note full filesystem.allowWrite '.git/hooks and .git/config cordon keeps read-only in the workspace'
note full filesystem.allowWrite 'write grant `/tmp` (.bashrc, .bash_profile, .zshrc, .zprofile, .profile, .gitconfig, .gitmodules, .ripgreprc, .mcp.json, .vscode, .idea, .claude/commands, .claude/agents, .git/hooks, .git/config): cordon has no write-only deny: each is in read.deny, denied for reading too (stricter)'
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert "/tmp/.git/hooks" in j["read"]["deny"] and "{workspace}/.git/hooks" not in j["read"]["deny"], j' "$dir/full.policy.json"
ok $? "full: .git/hooks denied in /tmp, not in the workspace (cordon keeps it read-only there)"
no_note full 'filesystem.allowWrite[3]'
no_note full 'filesystem.denyRead[0]'
no_note full enableWeakerNestedSandbox

imports globs 'assert j["write"] == ["{workspace}/build", "{workspace}"], j
assert j["read"] == {"deny": ["~/.aws", "/etc/ssl/private", "{workspace}", "/srv", "{workspace}/secrets"], "allow": ["~/.ssh/known_hosts"]}, j
assert j["network"] == {"allow": [], "deny": []}, j'
note globs 'filesystem.denyRead[0]' 'a trailing /** is read as the directory itself, which is denied too (stricter)'
note globs 'filesystem.denyRead[1]' '`/etc/ssl/private/*.key` read as `/etc/ssl/private`; cordon takes no patterns'
note globs 'filesystem.denyRead[2]' '`**/.env` read as `{workspace}`'
note globs 'filesystem.denyRead[3]' '`/srv/[WIP] data/keys` read as `/srv`'
note globs 'filesystem.denyWrite[0]' '`secrets/*.pem` read as `{workspace}/secrets`'
note globs 'filesystem.allowRead[1]' '`~/proj/**` dropped: a pattern'
note globs 'filesystem.allowWrite[0]' 'a trailing /** names the directory, as srt on Linux reads it'
note globs 'filesystem.allowWrite[1]' '`src/**/*.ts` dropped: a pattern'
note globs 'filesystem.allowWrite[2]' 'write grant `{workspace}` lies in denied `{workspace}`'
no_note globs 'filesystem.allowRead[0]'

imports sockets 'assert j["unix_sockets"] == "all" and j["sockets"] == [], j
assert j["network"] == {"allow": ["registry.npmjs.org"], "deny": []}, j
assert j["write"] == ["{workspace}"], j'
note sockets network.allowAllUnixSockets 'unix_sockets "all"; cordon still hides its escape sockets'
note sockets network.allowLocalBinding 'a loopback of its own'
note sockets enableWeakerNestedSandbox 'cordon has no weaker mode'
note sockets allowNestedUserNamespaces 'refuses new user namespaces'

imports denied-domains 'assert j["network"] == {"allow": ["api.example.com:443"], "deny": ["gist.github.com", "*.pypi.org"]}, j
assert j["write"] == ["{workspace}"], j'
note denied-domains 'network.allowedDomains[3]' 'dropped: cordon refuses it (wildcard over a public suffix)'
note denied-domains 'network.allowedDomains[0]' '`github.com` dropped: network.deniedDomains[1] could match it'
note denied-domains 'network.allowedDomains[1]' '`*.github.com` dropped: network.deniedDomains[1]'
note denied-domains 'network.allowedDomains[4]' '`pypi.org` dropped: network.deniedDomains[1]'
note denied-domains 'network.deniedDomains[1]' '`*:22` (every host on that port) has no equivalent'
note denied-domains 'network.deniedResolvedAddresses[0]' "refuses a name resolving there already (private address)"
note denied-domains 'network.deniedResolvedAddresses[1]' "already (unique local address)"
note denied-domains network.deniedDomainReasons 'dropped'
no_note denied-domains 'network.allowedDomains[2]'
no_note denied-domains 'network.deniedDomains[0]'
no_note denied-domains network.strictAllowlist

imports every-key 'assert j["read"]["deny"] == ["/home", "~/.config/tool/token", "~/.netrc", "~/.config/jwt"], j
assert j["read"]["allow"] == ["{workspace}"] and j["write"] == ["{workspace}"], j
assert j["network"]["allow"] == ["api.example.com", "mtls.example.org", "*.example.org:443", "[2001:db8::1]:443", "127.0.0.1:3000"], j
assert j["sockets"] == [] and j["unix_sockets"] == "none", j'
# Every key srt has that cordon holds otherwise is named.
for k in network.deniedDomainReasons network.strictAllowlist network.allowMachLookup \
	network.httpProxyPort network.socksProxyPort network.mitmProxy \
	network.allowPlaintextHeaderSet network.stripResponseHeaders \
	network.ambiguousRequestTarget \
	network.tlsTerminate network.parentProxy filesystem.allowGitConfig \
	credentials.allowPlaintextInject credentials.awsPairs credentials.sigv4 \
	ignoreViolations enableWeakerNetworkIsolation allowAppleEvents ripgrep \
	mandatoryDenySearchDepth allowPty seccomp bwrapPath socatPath javaAgentJarPath \
	windows git; do
	note every-key "$k" ''
done
note every-key 'credentials.files[1]' 'masking has no equivalent in cordon: the file is denied whole (stricter)'
note every-key 'credentials.envVars[0]' 'cordon withholds `GITHUB_TOKEN` already'
note every-key 'credentials.envVars[1]' 'cordon withholds `DEPLOY_HOOK_TOKEN` already'
note every-key 'network.deniedResolvedAddresses[1]' 'link-local'
no_note every-key 'credentials.files[0]'
no_note every-key filesystem.disabled
no_note every-key enableWeakerNestedSandbox

# --- what is never printed -------------------------------------------------

cat >"$dir/secret.json" <<'EOF'
{"network": {"allowedDomains": ["https://user:s3cret@x.example", "ok.example"],
             "deniedDomains": ["https://user:s3cret@y.example"],
             "parentProxy": {"http": "http://user:s3cret@proxy.example:3128"}},
 "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}
EOF
run "$dir/secret.json"
[ "$rc" -eq 0 ] && grep -q 'network.allowedDomains\[0\]: dropped: cordon refuses it' "$dir/err" &&
	grep -q 'network.deniedDomains\[0\]: cordon refuses this deny' "$dir/err"
ok $? "a URL with a password: exit 0, both entries named (got $rc)"
! grep -q s3cret "$dir/err" "$dir/out"
ok $? "a URL with a password: the password is printed nowhere"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["network"]["allow"] == ["ok.example"]' "$dir/out"
ok $? "a URL with a password: the other allow stays (control)"

cat >"$dir/deny-all.json" <<'EOF'
{"network": {"allowedDomains": ["a.example.com", "10.0.0.5:8080"], "deniedDomains": ["*"]},
 "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}
EOF
run "$dir/deny-all.json"
[ "$rc" -eq 0 ] && python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["network"] == {"allow": [], "deny": []}' "$dir/out" &&
	grep -q 'network.deniedDomains\[0\]: `\*` (every host)' "$dir/err"
ok $? 'deniedDomains "*": every allow dropped, and said so'

# --- never wider than srt: what cordon's guard would make readable -----------
# srt on Linux grants nothing by allowUnixSockets (its seccomp filter lets
# every unix socket or none), and binds back no allowRead beneath a
# credential file's deny. cordon's guard makes a sockets or read.allow
# entry beneath a read deny a read exception, so an import that carried
# them over would let a command read what srt hides.

sec="$dir/sec"
mkdir -p "$sec" "$dir/ws" && echo SECRET-KEY >"$sec/key.pem" && ln -s sec "$dir/link"
# wider NAME SETTINGS-JSON: import SETTINGS, and sets out to the policy.
wider() {
	printf '%s' "$2" >"$dir/$1.json"
	run "$dir/$1.json"
	cp "$dir/out" "$dir/$1.policy.json"
	cp "$dir/err" "$dir/$1.notes"
}
# sandbox_reads POLICY: 0 when cat of key.pem, under cordon run with the
# policy (and the workspace writable), prints the key.
sandbox_reads() {
	"$CORDON" run -q --state-dir "$dir/state" -p "$1" -w "$dir/ws" -- cat "$sec/key.pem" \
		>"$dir/run.out" 2>"$dir/run.err"
	grep -q SECRET-KEY "$dir/run.out"
}
cat "$sec/key.pem" | grep -q SECRET-KEY
ok $? "control: key.pem is readable outside any sandbox"

wider sock-deny "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": [], \"allowAllUnixSockets\": true, \"allowUnixSockets\": [\"$sec/key.pem\", \"$dir/link/key.pem\", \"$dir/ws/app.sock\"]}, \"filesystem\": {\"denyRead\": [\"$sec\"], \"allowWrite\": [\".\"], \"denyWrite\": []}}"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["sockets"] == [sys.argv[2]] and j["unix_sockets"] == "all", j' \
	"$dir/sock-deny.policy.json" "$dir/ws/app.sock"
ok $? "allowUnixSockets beneath a denyRead: dropped, by name and through a link; one outside it kept (control)"
note sock-deny 'network.allowUnixSockets[0]' 'dropped: it lies in denied'
note sock-deny 'network.allowUnixSockets[1]' 'dropped: it lies in denied'
note sock-deny 'network.allowUnixSockets[2]' 'listed in sockets'

wider cred-allow "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": []}, \"filesystem\": {\"denyRead\": [], \"allowRead\": [\"$sec/key.pem\", \"$dir/link/key.pem\"], \"allowWrite\": [\".\"], \"denyWrite\": []}, \"credentials\": {\"files\": [{\"path\": \"$sec\", \"mode\": \"deny\"}]}}"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); exec(sys.argv[3]); assert j["read"] == {"deny": [sys.argv[2]], "allow": []}, j' \
	"$dir/cred-allow.policy.json" "$sec" "$strip_mandatory"
ok $? "allowRead beneath a credential file's deny: dropped, by name and through a link"
note cred-allow 'filesystem.allowRead[0]' 'a credential file srt denies'
note cred-allow 'filesystem.allowRead[1]' 'a credential file srt denies'

# The control of both: the same deny with the entry kept, as cordon's guard
# reads it, makes the key readable in the sandbox; the imported policies
# keep it hidden.
if "$CORDON" run -q --state-dir "$dir/state" -w "$dir/ws" -- true >"$dir/run.out" 2>"$dir/run.err"; then
	printf '{"write": ["{workspace}"], "read": {"deny": ["%s"]}, "sockets": ["%s/key.pem"], "unix_sockets": "all"}' \
		"$sec" "$sec" >"$dir/kept-sock.json"
	printf '{"write": ["{workspace}"], "read": {"deny": ["%s"], "allow": ["%s/key.pem"]}}' \
		"$sec" "$sec" >"$dir/kept-allow.json"
	sandbox_reads "$dir/kept-sock.json"
	ok $? "control: a sockets entry beneath the deny makes key.pem readable under cordon"
	sandbox_reads "$dir/kept-allow.json"
	ok $? "control: a read.allow entry beneath the deny makes key.pem readable under cordon"
	! sandbox_reads "$dir/sock-deny.policy.json" && grep -q 'key.pem' "$dir/run.err"
	ok $? "the imported policy (allowUnixSockets beneath denyRead) keeps key.pem hidden"
	! sandbox_reads "$dir/cred-allow.policy.json" && grep -q 'key.pem' "$dir/run.err"
	ok $? "the imported policy (allowRead beneath credentials.files) keeps key.pem hidden"
else
	skip "cordon run cannot start a sandbox here: $(head -1 "$dir/run.err")"
	skip "cordon run cannot start a sandbox here"
	skip "cordon run cannot start a sandbox here"
	skip "cordon run cannot start a sandbox here"
fi

# --- refusals ----------------------------------------------------------------

B='"network": {"allowedDomains": [], "deniedDomains": []}'
F='"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}'

# --- never wider than srt: what srt withholds from the command -------------
# srt's credentials.envVars withholds a variable by name; cordon withholds
# only credential-like names (env.pass lifts one, nothing adds one). An
# import that passed the rest would hand the command what srt hides.

# env_seen POLICY NAME: 0 when NAME, set to a marker in cordon's
# environment, reaches the command run under POLICY.
env_seen() {
	env "$2=db.internal:5432/prod-s3cret" "$CORDON" run -q --state-dir "$dir/state" -p "$1" \
		-w "$dir/ws" -- /bin/sh -c "printenv $2" >"$dir/run.out" 2>"$dir/run.err"
	grep -q s3cret "$dir/run.out"
}
printf '%s' '{"write": ["{workspace}"]}' >"$dir/plain.policy.json"
env_seen "$dir/plain.policy.json" APP_CONNECT
ok $? "control: APP_CONNECT reaches the command under a policy that does not withhold it"
wider env-plain '{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}, "credentials": {"envVars": [{"name": "APP_CONNECT", "mode": "deny"}]}}'
if [ "$rc" -eq 125 ] && [ ! -s "$dir/out" ] && [ "$(wc -l <"$dir/err")" -eq 1 ] &&
	grep -q -F 'cordon: sandbox_config: credentials.envVars[0]: cordon cannot withhold `APP_CONNECT`' "$dir/err"; then
	ok 0 "envVars naming a variable cordon passes: refused, exit 125, naming the entry"
else
	ok 1 "envVars naming a variable cordon passes: refused, exit 125, naming the entry (got $rc)"
	show "$dir/err"
fi
wider env-cred '{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}, "credentials": {"envVars": [{"name": "APP_CONNECT_TOKEN", "mode": "deny"}]}}'
[ "$rc" -eq 0 ] && grep -q -F 'credentials.envVars[0]: cordon withholds `APP_CONNECT_TOKEN` already' "$dir/err" &&
	! env_seen "$dir/env-cred.policy.json" APP_CONNECT_TOKEN
ok $? "envVars naming a credential-like variable: imported, and the variable is withheld under the policy (got $rc)"

# --- never wider than srt: its mandatory write denies -------------------------
# srt denies writes to .bashrc, .mcp.json, .claude/commands, ... in every
# write grant whatever the settings say. cordon has no write-only deny:
# the import denies each name (for reading too) in each write grant.

wider mand '{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}'
# the old import's policy: the same, without the mandatory denies
python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
j["read"]["deny"] = [d for d in j["read"]["deny"] if not d.startswith("{workspace}/.")]
json.dump(j, open(sys.argv[2], "w"))' "$dir/mand.policy.json" "$dir/nomand.policy.json"
# writes PROVIDER POLICY NAME: 0 when the command under POLICY, in
# PROVIDER's sandbox, can create and write NAME in the workspace (its
# parent directory made as needed), in a workspace emptied first. 1 when
# the command ran and could not; 2 when cordon refused the launch.
writes() {
	rm -rf "${dir:?}/ws" && mkdir "$dir/ws" || return 2
	"$CORDON" run -q --provider "$1" --state-dir "$dir/state" -p "$2" -w "$dir/ws" -- \
		/bin/sh -c 'mkdir -p "$(dirname "$1")" && echo planted >>"$1" && grep -q planted "$1"' \
		sh "$3" >"$dir/run.out" 2>"$dir/run.err"
	case $? in
	0) return 0 ;;
	125) return 2 ;;
	*) return 1 ;;
	esac
}
providers=(native)
if command -v srt >/dev/null 2>&1; then
	providers+=(srt)
else
	skip "srt is not installed here: the mandatory denies are shown under the native sandbox only"
fi
for pv in "${providers[@]}"; do
	for f in .bashrc .mcp.json .vscode/settings.json .claude/commands/x.md; do
		writes "$pv" "$dir/nomand.policy.json" "$f"
		ok $? "$pv: control: without the mandatory denies, the command writes $f in the workspace"
		writes "$pv" "$dir/mand.policy.json" "$f"
		[ $? -eq 1 ]
		ok $? "$pv: imported policy: the command runs and cannot write $f in the workspace (srt denies it)"
	done
	writes "$pv" "$dir/mand.policy.json" ok.txt
	ok $? "$pv: imported policy: the command still writes ok.txt in the workspace (control)"
	echo 'alias ls=x' >"$dir/ws/.bashrc"
	"$CORDON" run -q --provider "$pv" --state-dir "$dir/state" -p "$dir/mand.policy.json" \
		-w "$dir/ws" -- /bin/sh -c 'echo planted >>.bashrc' >"$dir/run.out" 2>&1
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 125 ] && ! grep -q planted "$dir/ws/.bashrc"
	ok $? "$pv: imported policy: the command runs, and an existing .bashrc in the workspace is left as it was (got $rc)"
	rm -f "$dir/ws/.bashrc" "$dir/ws/ok.txt"
done

# refuses NAME TEXT JSON-PATH REASON: the settings TEXT exit 125, print
# nothing on stdout and one stderr line
# "cordon: sandbox_config: JSON-PATH: ..." holding REASON.
refuses() {
	printf '%s' "$2" >"$dir/$1.json"
	run "$dir/$1.json"
	if [ "$rc" -eq 125 ] && [ ! -s "$dir/out" ] && [ "$(wc -l <"$dir/err")" -eq 1 ] &&
		grep -q -F -- "cordon: sandbox_config: $3: " "$dir/err" &&
		grep -q -F -- "$4" "$dir/err"; then
		ok 0 "$1: exit 125, \"$3: ...$4...\""
	else
		ok 1 "$1: exit 125, \"$3: ...$4...\" (got $rc)"
		show "$dir/err"
	fi
}

refuses malformed '{"network": {"allowedDomains": [' 'network.allowedDomains[0]' 'unexpected end of input'
refuses trailing "{$B, $F} x" '(root)' 'trailing data'
refuses duplicate "{$B, $F, \"allowPty\": true, \"allowPty\": false}" allowPty 'duplicate key'
refuses not-object '[]' '(root)' 'must be an object'
refuses wrong-type "{$B, \"filesystem\": {\"denyRead\": [], \"allowWrite\": \".\", \"denyWrite\": []}}" \
	filesystem.allowWrite 'must be an array of paths'
refuses wrong-element "{\"network\": {\"allowedDomains\": [\"a.example\", 7], \"deniedDomains\": []}, $F}" \
	'network.allowedDomains[1]' 'must be a string'
refuses wrong-bool "{$B, $F, \"allowNestedUserNamespaces\": \"no\"}" allowNestedUserNamespaces \
	'must be true or false'
refuses null "{$B, $F, \"enableWeakerNestedSandbox\": null}" enableWeakerNestedSandbox \
	'must be true or false'
refuses wrong-int "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": [], \"httpProxyPort\": \"8080\"}, $F}" \
	network.httpProxyPort 'must be a whole number from 1 to 65535'
refuses out-of-range "{$B, $F, \"mandatoryDenySearchDepth\": 11}" mandatoryDenySearchDepth \
	'must be a whole number from 1 to 10'
refuses wrong-enum "{$B, $F, \"credentials\": {\"files\": [{\"path\": \"~/.x\", \"mode\": \"hide\"}]}}" \
	'credentials.files[0].mode' 'must be one of "deny", "mask"'
refuses unknown-key "{$B, \"filesystem\": {\"denyread\": [], \"denyRead\": [], \"allowWrite\": [], \"denyWrite\": []}}" \
	filesystem.denyread 'unknown key (did you mean "denyRead"?)'
refuses unknown-top "{$B, $F, \"sandbox\": {}}" sandbox 'unknown key'
refuses unknown-deep "{$B, $F, \"credentials\": {\"envVars\": [{\"name\": \"X\", \"mode\": \"deny\", \"why\": 1}]}}" \
	'credentials.envVars[0].why' 'unknown key'
refuses missing "{$B}" filesystem 'missing (srt requires it)'
refuses opaque-tunnels "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": [], \"refuseOpaqueTunnels\": true}, $F}" \
	network.refuseOpaqueTunnels 'no equivalent'
refuses host-match "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": [], \"requireHostMatch\": true}, $F}" \
	network.requireHostMatch 'no equivalent'
refuses public-deny "{\"network\": {\"allowedDomains\": [\"a.example.com\"], \"deniedDomains\": [\"203.0.113.7\"]}, $F}" \
	'network.deniedDomains[0]' 'srt also refuses an allowed name that resolves there'
refuses public-resolved "{\"network\": {\"allowedDomains\": [\"a.example.com\"], \"deniedDomains\": [], \"deniedResolvedAddresses\": [\"198.51.100.0/24\"]}, $F}" \
	'network.deniedResolvedAddresses[0]' 'srt also refuses an allowed name that resolves there'
# the controls: false is srt's default, and with no name allowed an
# address deny holds all srt's does
printf '%s' "{\"network\": {\"allowedDomains\": [\"192.0.2.1:443\"], \"deniedDomains\": [\"203.0.113.7\"], \"deniedResolvedAddresses\": [\"198.51.100.0/24\"], \"refuseOpaqueTunnels\": false, \"requireHostMatch\": false}, $F}" >"$dir/public-ok.json"
run "$dir/public-ok.json"
[ "$rc" -eq 0 ] && python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["network"] == {"allow": ["192.0.2.1:443"], "deny": ["203.0.113.7"]}, j' "$dir/out" &&
	grep -q -F 'network.deniedResolvedAddresses[0]: `198.51.100.0/24`: no name is allowed' "$dir/err"
ok $? "public denies with no name allowed, the tunnel keys false: imported (got $rc)"

refuses missing-list "{\"network\": {\"allowedDomains\": []}, $F}" network.deniedDomains 'missing'
refuses literal-false "{$B, \"filesystem\": {\"denyRead\": [{\"path\": \"/x\", \"literal\": false}], \"allowWrite\": [], \"denyWrite\": []}}" \
	'filesystem.denyRead[0].literal' 'must be true'
refuses function "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": [], \"filterRequest\": {}}, $F}" \
	network.filterRequest 'cannot hold'
refuses empty-path "{$B, \"filesystem\": {\"denyRead\": [\"\"], \"allowWrite\": [], \"denyWrite\": []}}" \
	'filesystem.denyRead[0]' 'empty path'
refuses deny-dotdot "{$B, \"filesystem\": {\"denyRead\": [\"../secrets\"], \"allowWrite\": [], \"denyWrite\": []}}" \
	'filesystem.denyRead[0]' 'write the path without `..`'
# the control: a ".." that stays inside is folded, as srt folds it
printf '%s' "{$B, \"filesystem\": {\"denyRead\": [\"src/../secrets\"], \"allowWrite\": [\"../out\"], \"denyWrite\": []}}" >"$dir/dotdot-ok.json"
run "$dir/dotdot-ok.json"
[ "$rc" -eq 0 ] && python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); assert j["read"]["deny"] == ["{workspace}/secrets"] and j["write"] == [], j' "$dir/out" &&
	grep -q 'filesystem.allowWrite\[0\]: `../out` dropped' "$dir/err"
ok $? "a .. inside the workspace is folded; an allow leading out is dropped (got $rc)"

run "$dir/no-such-file.json"
[ "$rc" -eq 125 ] && grep -q '^cordon: sandbox_config: srt settings ' "$dir/err" && [ ! -s "$dir/out" ]
ok $? "a missing file: exit 125, sandbox_config (got $rc)"
run "$dir"
[ "$rc" -eq 125 ] && grep -q '^cordon: sandbox_config: ' "$dir/err"
ok $? "a directory: exit 125, sandbox_config (got $rc)"

# --- entry points ------------------------------------------------------------

"$CORDON" policy --help >"$dir/out" 2>"$dir/err" && grep -q 'policy import-srt FILE' "$dir/out"
ok $? "policy --help: names import-srt"
"$CORDON" policy import-srt >"$dir/out" 2>"$dir/err"
rc=$?
[ "$rc" -eq 125 ] && grep -q 'import-srt FILE' "$dir/err" && [ ! -s "$dir/out" ]
ok $? "policy import-srt with no file: a usage error, exit 125 (got $rc)"

tap_done
