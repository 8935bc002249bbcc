#!/bin/bash
# Git clone workspaces and git's credential through the toolbelt. A git
# smart-HTTP server over TLS on 127.0.0.2 (git http-backend behind
# tests/helpers/git-https-server, basic auth for pushes) holds a
# repository. A sandboxed clone job (native, and srt when installed)
# commits and pushes with plain `git push`: the host cloned it with git
# distrusted and made the work branch cordon/<job> with its upstream; git
# inside asks `cordon tb git-credential`, which asks the toolbelt, which
# answers for https on that host only; the push goes through the
# sandbox's gateway. The helper gives nothing for another host, another
# protocol or another path; the secret is in no environment of the job,
# no file of the state dir and no log. The control: a binding without the
# credential cannot push. `cordon job fetch` brings the commit into the
# operator's repository; the planted-configuration report of the honest
# run is empty. Refused at load: a worktree or shared mode, or a setup
# command, for a sandboxed binding; a URL carrying a password; a
# credential naming no secret. A binding without a sandbox runs its setup
# command in the clone.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
host_lab /var/tmp/cordon-git.XXXXXX
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	host_cleanup
}
trap cleanup EXIT
host_own_cordon
mkdir -p "$lab/home" "$lab/srv"
lab_env "$lab"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
providers=(native)
command -v srt >/dev/null && providers+=(srt)

# ---- the server: a repository with one commit on main, TLS for 127.0.0.2
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.2 \
	-addext 'subjectAltName=IP:127.0.0.2' -keyout "$lab/key.pem" -out "$lab/cert.pem" 2>/dev/null
ok $? "a certificate for 127.0.0.2 is made"
git init -q --bare -b main "$lab/srv/repo.git" &&
	git clone -q "$lab/srv/repo.git" "$lab/seed" 2>/dev/null &&
	(cd "$lab/seed" && echo hello > README && git add README && git commit -qm first && git push -q origin main) &&
	git -C "$lab/srv/repo.git" config http.receivepack true
ok $? "the served repository has a first commit on main"
secret="tok-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$secret" > "$lab/password"
chmod 600 "$lab/password"
"$here/../helpers/git-https-server" --root "$lab/srv" --addr 127.0.0.2 --cert "$lab/cert.pem" \
	--key "$lab/key.pem" --user agent --password-file "$lab/password" --port-file "$lab/port" \
	--log "$lab/server.log" 2>"$lab/server.err" &
spid=$!
for _ in $(seq 200); do [ -s "$lab/port" ] && break; sleep 0.05; done
port=$(cat "$lab/port" 2>/dev/null)
url="https://127.0.0.2:$port/repo.git"
# the control: from the host, with the CA, a push without the password is refused
GIT_SSL_CAINFO="$lab/cert.pem" git clone -q "$url" "$lab/probe" 2>/dev/null &&
	(cd "$lab/probe" && git commit -q --allow-empty -m probe &&
		! GIT_TERMINAL_PROMPT=0 GIT_SSL_CAINFO="$lab/cert.pem" git push -q origin HEAD:probe 2>/dev/null)
ok $? "the server serves the clone over TLS and refuses a push without the password (the control)"

# the host's clone trusts the test's CA (git's own variable, passed on)
export GIT_SSL_CAINFO="$lab/cert.pem"
config() { # the bindings; $1: extra JSON for the "clone" binding's workspace git object
	local extra=${1:-}
	python3 - "$lab/config.json" "$url" "$port" "$lab" "$extra" <<'PY'
import json, sys
path, url, port, lab, extra = sys.argv[1:]
env = {"GIT_SSL_CAINFO": lab + "/cert.pem", "GIT_AUTHOR_NAME": "agent",
       "GIT_AUTHOR_EMAIL": "agent@example.invalid", "GIT_COMMITTER_NAME": "agent",
       "GIT_COMMITTER_EMAIL": "agent@example.invalid", "ASAN_OPTIONS": "detect_leaks=0"}
pol = {"write": ["{workspace}"], "network": {"allow": ["127.0.0.2:" + port]}}
git = {"url": url, "branch": "main"}
git.update(json.loads(extra or "{}"))
cred = {"credentials": [{"host": "127.0.0.2:" + port, "secret": "GIT_TOKEN", "username": "agent"}]}
secrets = {"GIT_TOKEN": {"file": lab + "/password"}}
b = {}
for p in ("native", "srt"):
    b["clone-" + p] = {"executor": {"kind": "shell"}, "workspace": {"git": git}, "env": env,
                       "secrets": secrets, "git": cred,
                       "sandbox": {"provider": p, "policy": pol}}
b["stall"] = {"executor": {"kind": "shell"}, "workspace": {"git": {"url": url.replace("/repo.git", "/stall/repo.git"), "branch": "main"}},
              "env": env, "sandbox": {"provider": "native", "policy": pol}}
b["local"] = {"executor": {"kind": "shell"}, "workspace": {"git": {"url": lab + "/srv/repo.git", "branch": "main"}},
              "env": env, "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}}
b["local-srt"] = {"executor": {"kind": "shell"}, "workspace": {"git": {"url": lab + "/srv/repo.git", "branch": "main"}},
                  "env": env, "sandbox": {"provider": "srt", "policy": {"write": ["{workspace}"]}}}
b["nocred"] = {"executor": {"kind": "shell"}, "workspace": {"git": {"url": url, "branch": "main"}},
               "env": env, "sandbox": {"provider": "native", "policy": pol}}
b["host"] = {"executor": {"kind": "shell"},
             "workspace": {"git": {"url": url, "branch": "main", "setup": ["sh", "-c", "echo set up > setup.out"]}},
             "env": env}
json.dump({"bindings": b}, open(path, "w"), indent=1)
PY
}
config
start_daemon
ok $? "the daemon starts"

helper() { # PROTOCOL HOST [PATH]: what the helper answers, from inside
	printf 'protocol=%s\nhost=%s\n%s\n' "$1" "$2" "${3:+path=$3
}"
}
for p in "${providers[@]}"; do
	: > "$lab/server.log"
	id=$(job start "clone-$p" --wait -- sh -c "
		set -e
		git status --short > /dev/null
		[ \"\$(git rev-parse --abbrev-ref HEAD)\" = \"cordon/\$(basename \"\$PWD\")\" ] || { echo not on the work branch; exit 3; }
		echo 'from the job' > work.txt
		git add work.txt
		git commit -qm 'work from the job'
		git push -q
		printf 'protocol=https\nhost=other.example\n\n' | '$CORDON' tb git-credential get > other.out
		printf 'protocol=http\nhost=127.0.0.2:$port\n\n' | '$CORDON' tb git-credential get > http.out
		printf 'protocol=https\nhost=127.0.0.2:$port\n\n' | '$CORDON' tb git-credential get > own.out
		env > env.out
		" 2>"$lab/job-$p.err"); rc=$?
	ws=$state/workspaces/$id
	for f in other http own env; do mv "$ws/$f.out" "$lab/$f-$p.out" 2>/dev/null; done
	ok $([ "$rc" = 0 ] && [ "$(git -C "$lab/srv/repo.git" log -1 --format=%s "refs/heads/cordon/$id" 2>/dev/null)" = 'work from the job' ]; echo $?) \
		"$p: a clone job commits and pushes with plain git push to cordon/<job> (rc $rc; $(tail -c 300 "$state/runs/$id/log" 2>/dev/null | tr '\n' ' '))"
	ok $(grep -q "^POST /repo.git/git-receive-pack agent$" "$lab/server.log" &&
		! grep -q '^[A-Z]* /repo.git/git-receive-pack !$' "$lab/server.log"; echo $?) \
		"$p: ... authenticated by the credential the helper got from the toolbelt"
	ok $(grep -q "\"host\": \"127.0.0.2\", \"port\": $port" "$state/runs/$id/sandbox/1/network.jsonl" 2>/dev/null ||
		grep -q "\"host\":\"127.0.0.2\",\"port\":$port" "$state/runs/$id/sandbox/1/network.jsonl" 2>/dev/null; echo $?) \
		"$p: ... through the sandbox's gateway (its audit names the server)"
	ok $([ ! -s "$lab/other-$p.out" ] && [ ! -s "$lab/http-$p.out" ] && grep -qx "password=$secret" "$lab/own-$p.out"; echo $?) \
		"$p: the helper gives nothing for another host or for http, and the password for its own (the control)"
	ok $(! grep -qF "$secret" "$lab/env-$p.out" && ! grep -rqF "$secret" "$state" && ! grep -qF "$secret" "$lab/daemon.err"; echo $?) \
		"$p: the secret is in no variable of the job, no file of the state dir (database, records, logs) and not the daemon's log"
	ok $([ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$state/runs/$id/sandbox/1/planted.json" 2>&1)" = 0 ] &&
		! grep -q 'planted:' "$state/runs/$id/log"; echo $?) \
		"$p: the planted-configuration report of the honest run is empty"
	git clone -q "$lab/srv/repo.git" "$lab/home-$p" 2>/dev/null
	out=$(cd "$lab/home-$p" && job fetch "$id" 2>&1); rc=$?
	ok $([ "$rc" = 0 ] && [ "$out" = "cordon/$id" ] &&
		[ "$(git -C "$lab/home-$p" log -1 --format=%s "refs/heads/cordon/$id")" = 'work from the job' ] &&
		[ -z "$(git -C "$lab/home-$p" tag)" ]; echo $?) \
		"$p: cordon job fetch brings the work branch's commit into the operator's repository ($out)"
	ok $(job show "$id" | grep -qx "branch    cordon/$id (cordon job fetch $id brings it into your checkout)"; echo $?) \
		"$p: cordon job show names the work branch and how it comes home"
done

# the clone's git settings are out of the agent's reach inside
id=$(job start clone-native --wait -- sh -c '
	for t in "git config core.fsmonitor evil" "touch .git/hooks/pre-commit" "touch .git/info/attributes" \
		"mv .git .git2"; do sh -c "$t" 2>/dev/null && echo "wrote: $t"; done > tamper.out; exit 0')
ws=$state/workspaces/$id
ok $([ -f "$ws/tamper.out" ] && [ ! -s "$ws/tamper.out" ] && [ -w "$ws/.git/config" ] && [ -d "$ws/.git/hooks" ] &&
	[ -z "$(git config --file "$ws/.git/config" core.fsmonitor)" ] && [ -z "$(ls "$ws/.git/hooks")" ]; echo $?) \
	"inside, the clone's .git/config, hooks and info cannot be written nor .git moved (the control: the operator can write the config) $(cat "$ws/tamper.out" 2>/dev/null | tr '\n' ' ')"
ok $([ "$(git config --file "$ws/.git/config" branch.cordon/$id.merge)" = "refs/heads/cordon/$id" ] &&
	[ -z "$(git -C "$ws" for-each-ref refs/heads/main)" ]; echo $?) \
	"the work branch's upstream was recorded at clone time, and the base branch is not kept locally"

# the helper answers for its path only when a credential names one
python3 - "$lab/config.json" "$port" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["bindings"]["clone-native"]["git"]["credentials"][0]["path"] = "repo.git"
json.dump(d, open(sys.argv[1], "w"))
PY
id=$(job start clone-native --wait -- sh -c "
	printf 'protocol=https\nhost=127.0.0.2:$port\npath=other.git\n\n' | '$CORDON' tb git-credential get > path-other.out
	printf 'protocol=https\nhost=127.0.0.2:$port\npath=repo.git\n\n' | '$CORDON' tb git-credential get > path-own.out")
mv "$state/workspaces/$id/path-other.out" "$state/workspaces/$id/path-own.out" "$lab/" 2>/dev/null
ok $([ ! -s "$lab/path-other.out" ] && grep -qx "password=$secret" "$lab/path-own.out"; echo $?) \
	"a credential naming a path: nothing for another path, the password for its own"
config

# a clone of a local repository: its objects copied, not hard-linked (a
# hard link out of the workspace would refuse the launch)
id=$(job start local --wait -- sh -c 'echo local > local.txt && git add local.txt && git commit -qm "local work"'); rc=$?
git clone -q "$lab/srv/repo.git" "$lab/home-local" 2>/dev/null
out=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc=$?
ok $([ "$rc" = 0 ] && [ "$frc" = 0 ] &&
	[ "$(git -C "$lab/home-local" log -1 --format=%s "refs/heads/cordon/$id")" = 'local work' ]; echo $?) \
	"a clone of a local path runs (its objects copied) and job fetch --into brings its commit (rc $rc, fetch $frc: $out)"

# the control: without the credential the push is refused
: > "$lab/server.log"
id=$(job start nocred --wait -- sh -c "git commit -q --allow-empty -m x && git push -q" 2>/dev/null); rc=$?
ok $([ "$rc" != 0 ] && [ -z "$(git -C "$lab/srv/repo.git" for-each-ref "refs/heads/cordon/$id")" ]; echo $?) \
	"a clone job whose binding has no credential cannot push (rc $rc; the control)"

# a binding without a sandbox: its setup command runs in the clone
id=$(job start host --wait -- sh -c 'cat setup.out'); rc=$?
ok $([ "$rc" = 0 ] && grep -qx 'set up' "$state/runs/$id/log" &&
	[ "$(git -C "$state/workspaces/$id" rev-parse --abbrev-ref HEAD)" = "cordon/$id" ]; echo $?) \
	"a binding without a sandbox runs its setup command in the clone, on the work branch"

# a running job's clone is not fetched (its sandbox could still plant
# what the fetch's check refuses); once ended it is (the control)
id=$(job start local -- sh -c 'git commit -q --allow-empty -m running; while [ ! -e go ]; do sleep 0.1; done')
for _ in $(seq 200); do [ -n "$(git -C "$state/workspaces/$id" log --format=%s -1 2>/dev/null | grep -x running)" ] && break; sleep 0.05; done
out=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc=$?
touch "$state/workspaces/$id/go"; job wait "$id" >/dev/null
job fetch "$id" --into "$lab/home-local" >/dev/null 2>&1; frc2=$?
ok $([ "$frc" = 125 ] && printf '%s' "$out" | grep -q 'has not ended' && [ "$frc2" = 0 ]; echo $?) \
	"a running job's work is not fetched (rc $frc), an ended one's is (rc $frc2)"

# A repository planted inside the clone's .git: git given the path <ws>/.git
# tries <ws>/.git/.git first. The run commits "planted" into it on the work
# branch's name, with a pre-receive hook, and "real" into the clone. After
# the run it is moved out (and named), so the fetch brings "real" and an
# operator's push to <ws>/.git runs no hook of the run's. The control: the
# same repository put there after the run (as a run's would be without the
# move) is what a push to <ws>/.git runs, and the fetch refuses it.
id=$(job start local --wait -- sh -c '
	b=$(git rev-parse --abbrev-ref HEAD)
	git commit -q --allow-empty -m planted && git init -q --bare .git/.git &&
		git push -q .git/.git "HEAD:refs/heads/$b" && git reset -q --hard HEAD~1 &&
		git commit -q --allow-empty -m real || exit 1
	printf "#!/bin/sh\ntouch \"%s/hooked\"\n" "$PWD" > .git/.git/hooks/pre-receive
	chmod +x .git/.git/hooks/pre-receive' 2>"$lab/planted.err"); rc=$?
ws=$state/workspaces/$id
out=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc=$?
subj=$(git -C "$lab/home-local" log -1 --format=%s "refs/heads/cordon/$id" 2>/dev/null)
ok $([ "$rc" = 0 ] && [ "$frc" = 0 ] && [ ! -e "$ws/.git/.git" ] &&
	[ -x "$state/runs/$id/sandbox/1/planted/.git/.git/hooks/pre-receive" ] &&
	grep -q 'cordon: planted: .git/.git: .git (moved to' "$state/runs/$id/log" &&
	[ "$subj" = real ]; echo $?) \
	"a repository the run made at .git/.git is moved out and named; job fetch brings the clone's commit (rc $rc, fetch $frc, fetched \"$subj\")"
git -C "$lab/home-local" push -q "$ws/.git" "refs/heads/cordon/$id:refs/heads/pushed" 2>/dev/null
ok $([ ! -e "$ws/hooked" ] && [ -n "$(git --git-dir="$ws/.git" for-each-ref refs/heads/pushed)" ]; echo $?) \
	"an operator's push to the workspace's .git reaches the clone and runs no hook of the run's"
mv "$state/runs/$id/sandbox/1/planted/.git/.git" "$ws/.git/.git"
git -C "$lab/home-local" push -q "$ws/.git" "refs/heads/cordon/$id:refs/heads/pushed2" 2>/dev/null
out=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc=$?
ok $([ -e "$ws/hooked" ] && [ "$frc" = 125 ] && printf '%s' "$out" | grep -q '\.git/\.git` is there'; echo $?) \
	"the control: left in place, it is what a push to <ws>/.git runs (the hook ran), and job fetch refuses it (rc $frc: $out)"
rm -rf "$ws/.git/.git" "$ws/hooked"
printf '%s\n' "$lab/srv/repo.git/objects" > "$ws/.git/objects/info/alternates"
out=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc=$?
rm -f "$ws/.git/objects/info/alternates"
ln -s "$lab/srv/repo.git/refs/heads/main" "$ws/.git/refs/heads/linked"
out2=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc2=$?
rm -f "$ws/.git/refs/heads/linked"
# the job's own ref, deeper down, read through a link to a file outside
git -C "$ws" rev-parse HEAD~1 > "$lab/outside-ref"
mv "$ws/.git/refs/heads/cordon/$id" "$lab/own-ref"
ln -s "$lab/outside-ref" "$ws/.git/refs/heads/cordon/$id"
out4=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc4=$?
mv "$lab/own-ref" "$ws/.git/refs/heads/cordon/$id"
# an objects fan-out directory
mkdir -p "$lab/other-objects"; ln -s "$lab/other-objects" "$ws/.git/objects/zz"
out5=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc5=$?
rm -f "$ws/.git/objects/zz"
job fetch "$id" --into "$lab/home-local" >/dev/null 2>&1; frc3=$?
ok $([ "$frc" = 125 ] && printf '%s' "$out" | grep -q 'objects/info/alternates` is there' &&
	[ "$frc2" = 125 ] && printf '%s' "$out2" | grep -q 'refs/heads/linked` is a symbolic link' &&
	[ "$frc4" = 125 ] && printf '%s' "$out4" | grep -q "refs/heads/cordon/$id\` is a symbolic link" &&
	[ "$frc5" = 125 ] && printf '%s' "$out5" | grep -q 'objects/zz` is a symbolic link' &&
	[ "$frc3" = 0 ]; echo $?) \
	"job fetch refuses alternates ($frc) and a link in .git: refs/heads ($frc2), the job's ref ($frc4), an objects fan-out dir ($frc5); without them it fetches ($frc3)"

# A link the run makes where git writes through: .git/logs/HEAD, to a
# file outside the workspace (a shell's rc file), on a branch whose name
# is shell code. After the run it is moved out and named, so the
# operator's next checkout appends its reflog line in the workspace, and
# the rc file stays as it was. The control: the same link put back (as
# the run's would be without the move), the operator's checkout writes the
# branch name into the rc file and the shell runs it.
mkdir -p "$lab/outside"; printf 'true\n' > "$lab/outside/rc"
br='x;touch${IFS}'"$lab"'/PWNED;#'
id=$(job start local --wait -- sh -c 'git checkout -q -b "$1" && rm -f .git/logs/HEAD &&
	ln -s "$2" .git/logs/HEAD' sh "$br" "$lab/outside/rc" 2>/dev/null); rc=$?
ws=$state/workspaces/$id
git -C "$ws" checkout -q "cordon/$id" 2>/dev/null; bash "$lab/outside/rc" >/dev/null 2>&1
ok $([ "$rc" = 0 ] && [ ! -L "$ws/.git/logs/HEAD" ] && [ -L "$state/runs/$id/sandbox/1/planted/.git/logs/HEAD" ] &&
	grep -q 'cordon: planted: .git/logs/HEAD: symbolic link (moved to' "$state/runs/$id/log" &&
	[ "$(cat "$lab/outside/rc")" = true ] && [ ! -e "$lab/PWNED" ]; echo $?) \
	"a link the run made at .git/logs/HEAD is moved out and named; the operator's checkout writes nothing outside (rc $rc)"
mv "$state/runs/$id/sandbox/1/planted/.git/logs/HEAD" "$ws/.git/logs/HEAD"
git -C "$ws" checkout -q "$br" 2>/dev/null; bash "$lab/outside/rc" >/dev/null 2>&1
ok $([ -e "$lab/PWNED" ]; echo $?) \
	"the control: left in place, the operator's checkout writes the branch name through it and the shell runs it"
rm -f "$ws/.git/logs/HEAD" "$lab/PWNED"

# A repository config that includes a work-tree file (a shared
# .gitconfig, `include.path = ../.gitconfig`), set by the operator before
# the run: the included file is held read-only with the config, so the
# run cannot add a core.fsmonitor there and the operator's next git
# status runs nothing of its. The control: the same line written on the
# host is what that git status runs.
iws=$lab/incws
git init -q -b main "$iws" && printf '[alias]\n\tst = status\n' > "$iws/.gitconfig" &&
	git -C "$iws" config include.path ../.gitconfig
line="[core]\n\tfsmonitor = \"touch $lab/INCLUDED; false\"\n"
"$CORDON" run -q --state-dir "$lab/runstate" -w "$iws" -- /bin/sh -c 'printf "$1" >> .gitconfig' sh "$line" \
	2>"$lab/inc.err"; rc=$?
git -C "$iws" status --short >/dev/null 2>&1
ok $([ "$rc" != 0 ] && [ ! -e "$lab/INCLUDED" ] && ! grep -q fsmonitor "$iws/.gitconfig"; echo $?) \
	"a work-tree file the repository config includes cannot be written inside (rc $rc): the operator's git status runs nothing"
printf "$line" >> "$iws/.gitconfig"; git -C "$iws" status --short >/dev/null 2>&1
ok $([ -e "$lab/INCLUDED" ]; echo $?) "the control: the same line written on the host runs in the operator's git status"

# the same under srt: the look after the run is the host's, whatever the provider
if [[ " ${providers[*]} " == *" srt "* ]]; then
	id=$(job start local-srt --wait -- sh -c '
		b=$(git rev-parse --abbrev-ref HEAD)
		git commit -q --allow-empty -m planted && git init -q --bare .git/.git &&
			git push -q .git/.git "HEAD:refs/heads/$b" && git reset -q --hard HEAD~1 &&
			git commit -q --allow-empty -m real' 2>"$lab/planted.err"); rc=$?
	ws=$state/workspaces/$id
	out=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc=$?
	subj=$(git -C "$lab/home-local" log -1 --format=%s "refs/heads/cordon/$id" 2>/dev/null)
	ok $([ "$rc" = 0 ] && [ "$frc" = 0 ] && [ ! -e "$ws/.git/.git" ] &&
		[ -d "$state/runs/$id/sandbox/1/planted/.git/.git" ] && [ "$subj" = real ]; echo $?) \
		"srt: a repository the run made at .git/.git is moved out; job fetch brings the clone's commit (rc $rc, fetch $frc, fetched \"$subj\")"
else
	echo "ok $((n += 1)) # SKIP srt: not installed"
fi

# What the host's git prints may quote what the sandbox wrote: fsck names a
# .gitmodules URL, here holding U+009D (OSC, in UTF-8), which git passes as
# it is. job fetch shows it as \xNN (the control: the bytes are in the
# commit as written).
id=$(job start local --wait -- sh -c '
	printf "[submodule \"x\"]\n\tpath = x\n\turl = -x\302\23552\n" > .gitmodules &&
	git add .gitmodules && git commit -qm gitmodules'); rc=$?
out=$(job fetch "$id" --into "$lab/home-local" 2>&1); frc=$?
ok $([ "$rc" = 0 ] && [ "$frc" = 125 ] &&
	git --git-dir="$state/workspaces/$id/.git" show HEAD:.gitmodules | LC_ALL=C grep -q "$(printf '\302\235')" &&
	printf '%s' "$out" | grep -qF -- '-x\xc2\x9d52' &&
	! printf '%s' "$out" | LC_ALL=C grep -q "$(printf '\302\235')"; echo $?) \
	"git's output in job fetch shows a control character the sandbox wrote as \\xNN (rc $rc, fetch $frc)"

# a clone that fails (no such branch) refuses the job and leaves nothing
config '{"branch": "no-such-branch"}'
id=$(job start clone-native --wait -- touch ran 2>/dev/null); rc=$?
ok $([ "$rc" = 125 ] && job show --json "$id" | grep -q sandbox_unavailable &&
	grep -q "git: the workspace's clone failed" "$state/runs/$id/log" && [ ! -e "$state/workspaces/$id" ] &&
	[ ! -e "$state/runs/$id/sandbox" ]; echo $?) \
	"a clone that fails refuses the job (rc $rc) and leaves no workspace"

# a clone that hangs: the job is stopped before anything launched, its
# partial clone removed
: > "$lab/server.log"
id=$(job start stall -- touch ran)
for _ in $(seq 400); do grep -q '/stall/' "$lab/server.log" && break; sleep 0.05; done
grep -q '/stall/' "$lab/server.log"; seen=$?
t0=$(date +%s)
job stop "$id" >/dev/null; src=$?
job wait "$id" >/dev/null; rc=$?
t1=$(date +%s)
ok $([ "$seen" = 0 ] && [ "$src" = 0 ] && [ "$rc" = 125 ] && [ $((t1 - t0)) -lt 10 ] &&
	grep -q 'stopped before anything was launched' "$state/runs/$id/log" &&
	[ ! -e "$state/workspaces/$id" ] && [ ! -e "$state/runs/$id/sandbox" ]; echo $?) \
	"a job whose clone hangs is stopped before anything launched (stop $src, rc $rc, $((t1 - t0)) s), its partial clone gone"

# ---- refused at load, nothing made or run
refused() { # JSON-EXTRA DESCRIPTION
	config "$1"
	local before r
	before=$(ls "$state/workspaces" | wc -l)
	r=$(api POST /v1/jobs '{"binding": "clone-native", "args": ["touch", "ran"]}')
	ok $(printf '%s' "$r" | grep -q '^400 .*sandbox_config\|^[45][0-9][0-9] .*sandbox_config' &&
		[ "$(ls "$state/workspaces" | wc -l)" = "$before" ]; echo $?) "$2 (${r:0:160})"
}
refused '{"mode": "worktree"}' "a sandboxed binding with a worktree workspace is refused (sandbox_config), nothing made"
refused '{"mode": "shared"}' "... with a shared one is refused"
refused '{"setup": ["touch", "planted"]}' "... with a setup command is refused"
refused "{\"url\": \"https://agent:$secret@127.0.0.2:$port/repo.git\"}" "... a URL carrying a password is refused"
ok $(! grep -rqF "$secret" "$lab/daemon.err" "$state"; echo $?) "... and the refusal does not echo it"
refused '{"url": "ext::sh -c touch% /tmp/x"}' "... an ext:: URL is refused"
config
python3 - "$lab/config.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["bindings"]["clone-native"]["git"]["credentials"][0]["secret"] = "NOPE"
json.dump(d, open(sys.argv[1], "w"))
PY
r=$(api POST /v1/jobs '{"binding": "clone-native", "args": ["true"]}')
ok $(printf '%s' "$r" | grep -q 'sandbox_config.*names no secret'; echo $?) "a credential naming no secret of the binding is refused"
config

stop_daemon
sanitizer_ok
tap_done
