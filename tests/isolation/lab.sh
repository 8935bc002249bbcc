# lab.sh: the isolation suite's lab, sourced by tests/isolation/*.t (bash).
#
# lab_setup builds, in a fresh directory owned by the calling user, what a
# real operator's machine holds: a home full of credentials, cordon's state
# dir with another execution's files, a second workspace, the workspace
# itself (a git repo with links pointing out of it), a runtime dir with a
# listening bus, host unix sockets, a loopback TCP listener and a host
# process. lab_cleanup (set as the EXIT trap by the caller) takes it down.
#
# The lab lives under /var/tmp, not /tmp: the sandbox's /tmp is private, so
# a lab in /tmp would be invisible inside and every "denied" read would pass
# for the wrong reason (ENOENT).
#
# After lab_setup:
#   LAB, HOME ($LAB/home), XDG_RUNTIME_DIR ($LAB/runtime, holding `bus`),
#   STATE ($LAB/state), WS ($LAB/ws), POL (policy files: all.json,
#   other.json, exception.json, bad.json, nows.json),
#   HOST_SOCK (stream), HOST_DGRAM (datagram), DOCKER_SOCK (~/.docker/run/
#   docker.sock, a default escape socket), ABSTRACT_SOCK (an abstract
#   name, "@cordon-iso-..."), TCP_PORT (127.0.0.1 listener),
#   SLEEP_PID (a host process), HOST_TMP_FILE (a file in the host's /tmp).
#
# Running the probe:
#   run_in [CORDON_OPTS... --] ACTION ARGS...   the probe inside the sandbox
#   run_in_cmd [CORDON_OPTS... --] CMD...       any command inside
#   run_out ACTION ARGS...                      the probe on the host (control)
# Each prints the command's stdout and returns its exit status; cordon's
# stderr is kept in $LAB/in.err, the control's in $LAB/out.err.

: "${CORDON:?set CORDON to the cordon binary}"
: "${CORDON_HELPERS:?set CORDON_HELPERS to the directory holding probe}"
PROBE=$CORDON_HELPERS/probe
# The probe may be an ASan build: LeakSanitizer stops the world with
# ptrace, which the sandbox refuses, so leak checks are off for the probe
# (never for cordon itself).
PENV=(/usr/bin/env ASAN_OPTIONS=detect_leaks=0:abort_on_error=0)
LAB_TIMEOUT=${CORDON_ISO_TIMEOUT:-60}

lab_python() {
	if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3; fi
}

lab_setup() {
	local py i
	LAB=$(mktemp -d /var/tmp/cordon-iso.XXXXXX) || return 1
	LAB=$(cd "$LAB" && pwd -P)
	chmod 0755 "$LAB"
	# The build tree may live under /tmp, which is private inside: the
	# probe runs from the lab, which the sandbox sees.
	mkdir "$LAB/bin" && cp "$CORDON_HELPERS/probe" "$LAB/bin/probe" || return 1
	PROBE=$LAB/bin/probe
	export HOME=$LAB/home
	export XDG_RUNTIME_DIR=$LAB/runtime
	unset XDG_STATE_HOME XDG_CONFIG_HOME SSH_AUTH_SOCK
	STATE=$LAB/state
	WS=$LAB/ws
	POL=$LAB/pol
	HOST_SOCK=$LAB/host.sock
	HOST_DGRAM=$LAB/host.dgram
	DOCKER_SOCK=$HOME/.docker/run/docker.sock
	ABSTRACT_SOCK=@cordon-iso-${LAB##*.}
	HOST_TMP_FILE=$(mktemp /tmp/cordon-iso-host.XXXXXX) || return 1
	echo host-tmp > "$HOST_TMP_FILE"

	# A home like a real one: credentials (default denies) and other files.
	mkdir -p "$HOME/.ssh" "$HOME/.aws" "$HOME/.gnupg" "$HOME/.config/gh" \
		"$HOME/.docker/run" "$HOME/.config/op" "$HOME/proj-other/public"
	chmod 0700 "$HOME/.ssh" "$HOME/.gnupg"
	echo "-----BEGIN OPENSSH PRIVATE KEY----- lab" > "$HOME/.ssh/id_ed25519"
	chmod 0600 "$HOME/.ssh/id_ed25519"
	echo "github.com ssh-ed25519 AAAA" > "$HOME/.ssh/known_hosts"
	printf '[default]\naws_secret_access_key = lab\n' > "$HOME/.aws/credentials"
	echo lab > "$HOME/.gnupg/x"
	echo "github.com: {oauth_token: lab}" > "$HOME/.config/gh/hosts.yml"
	echo '{"auths":{"x":{"auth":"lab"}}}' > "$HOME/.docker/config.json"
	echo "machine x login y password lab" > "$HOME/.netrc"
	echo "https://u:lab@example.com" > "$HOME/.git-credentials"
	echo lab > "$HOME/.config/op/x"
	echo "other workspace secret" > "$HOME/proj-other/secret"
	echo "other workspace public" > "$HOME/proj-other/public/readme"
	echo "# lab profile" > "$HOME/.profile"
	# Every default credential of the home (src/policy/defaults.c), each
	# with a planted file: a directory's is `lab-secret` inside it (a
	# trailing / marks one). cases/40-credentials.sh reads each, inside
	# and outside, and checks that the list is the plan's.
	LAB_HOME_CREDS=(.ssh/ .gnupg/ .aws/ .azure/ .config/gcloud/ .kube/ .config/gh/
		.docker/config.json .netrc .git-credentials .config/git/credentials
		.claude/.credentials.json .config/op/ .password-store/ .local/share/gopass/
		.local/share/keyrings/ .local/share/kwalletd/ ".config/Bitwarden CLI/"
		.config/hub .config/glab-cli/ .config/tea/ .vault-token
		.terraform.d/credentials.tfrc.json .terraformrc .config/rclone/
		.config/containers/auth.json .config/sops/age/ .minikube/
		.config/helm/registry/ .config/helm/repositories.yaml
		.mozilla/ snap/firefox/ .var/app/org.mozilla.firefox/ .config/google-chrome/
		.config/google-chrome-beta/ .config/google-chrome-unstable/
		.var/app/com.google.Chrome/ .config/chromium/ snap/chromium/
		.var/app/org.chromium.Chromium/ .config/BraveSoftware/ snap/brave/
		.var/app/com.brave.Browser/ .config/microsoft-edge/ .config/microsoft-edge-beta/
		.config/microsoft-edge-dev/ .var/app/com.microsoft.Edge/ .config/vivaldi/
		.config/opera/ .pki/nssdb/ .thunderbird/ snap/thunderbird/
		.bash_history .zsh_history .histfile .sh_history .local/share/fish/fish_history
		.python_history .node_repl_history .irb_history .psql_history .mysql_history
		.sqlite_history .rediscli_history .dbshell .mongodb/
		.pgpass .pg_service.conf .my.cnf .mylogin.cnf .cassandra/ .local/share/DBeaverData/
		.oci/ .config/doctl/ .aliyun/ .tccli/ .bluemix/ .s3cfg .boto .config/openstack/
		.config/hcloud/ .config/linode-cli .config/scw/ .pulumi/credentials.json .fly/
		.cloudflared/ .wrangler/ .config/.wrangler/ .config/configstore/firebase-tools.json
		.config/stripe/ .config/atlascli/ .sentryclirc .config/ngrok/ .ngrok2/
		.npmrc .yarnrc.yml .pypirc .config/pip/pip.conf .pip/pip.conf
		.config/pypoetry/auth.toml .cargo/credentials .cargo/credentials.toml
		.m2/settings.xml .m2/settings-security.xml .gradle/gradle.properties
		.gem/credentials .local/share/gem/credentials .bundle/config
		.config/composer/auth.json .composer/auth.json .nuget/NuGet/NuGet.Config
		.config/NuGet/NuGet.Config .config/dart/pub-credentials.json
		.pub-cache/credentials.json .jfrog/
		.codex/ .gemini/ .config/github-copilot/ .config/Slack/ .config/discord/
		.config/Signal/ .bitcoin/ .electrum/ .ethereum/keystore/ .config/solana/)
	for i in "${LAB_HOME_CREDS[@]}"; do
		case $i in
		*/) mkdir -p "$HOME/$i" && echo "lab secret" > "$HOME/${i}lab-secret" ;;
		*) mkdir -p "$(dirname "$HOME/$i")" &&
			{ [ -e "$HOME/$i" ] || echo "lab secret" > "$HOME/$i"; } ;;
		esac || return 1
	done

	# cordon's state dir, with another execution's files.
	mkdir -p "$STATE/runs/other-exec/run"
	chmod 0700 "$STATE"
	echo operator-token-lab > "$STATE/operator.token"
	echo "SQLite format 3 lab" > "$STATE/db.sqlite"
	echo "config = lab" > "$STATE/config"
	echo other-exec-token > "$STATE/runs/other-exec/run/token"

	# Outside every grant: a file the fail-closed hard-link case uses.
	mkdir -p "$LAB/outside"
	echo outside > "$LAB/outside/f"

	# The workspace: a git repo with a commit and links pointing out.
	mkdir -p "$WS"
	(
		cd "$WS" &&
		git init -q . &&
		git config user.name "cordon lab" &&
		git config user.email "lab@cordon.invalid" &&
		git config commit.gpgsign false &&
		echo hello > README &&
		git add README &&
		git commit -q -m initial
	) || return 1
	mkdir -p "$WS/.git/hooks" "$WS/.git/info"
	ln -s "$HOME/.ssh/id_ed25519" "$WS/link-ssh"
	ln -s "$STATE/operator.token" "$WS/link-state"
	echo "not a program" > "$WS/notexec"
	chmod 0644 "$WS/notexec"

	mkdir -p "$POL"
	echo '{"write":["{workspace}"],"unix_sockets":"all"}' > "$POL/all.json"
	echo '{"write":["{workspace}"],"read":{"deny":["~/proj-other"]}}' > "$POL/other.json"
	echo '{"write":["{workspace}"],"read":{"deny":["~/proj-other"],"allow":["~/proj-other/public"]}}' \
		> "$POL/exception.json"
	echo '{"write":["{workspace}"],"bogus":1}' > "$POL/bad.json"
	echo '{"write":[]}' > "$POL/nows.json"

	# Listeners: the runtime bus, a host socket, a host datagram socket,
	# the home docker socket and a loopback TCP port, in one process.
	mkdir -p "$XDG_RUNTIME_DIR"
	chmod 0700 "$XDG_RUNTIME_DIR"
	cat > "$LAB/server.py" <<'PY'
import os, select, socket, sys, time
ready, portfile, dgram = sys.argv[1], sys.argv[2], sys.argv[3]
socks = []
for p in sys.argv[4:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + p[1:] if p.startswith("@") else p)
    s.listen(64)
    socks.append(s)
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
d.bind(dgram)
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.bind(("127.0.0.1", 0))
t.listen(64)
socks.append(t)
with open(portfile, "w") as f:
    f.write(str(t.getsockname()[1]))
open(ready, "w").close()
end = time.time() + 3600
while time.time() < end:
    r, _, _ = select.select(socks + [d], [], [], 5)
    for s in r:
        if s is d:
            s.recv(4096)
        else:
            c, _ = s.accept()
            c.close()
PY
	py=$(lab_python) || return 1
	"$py" "$LAB/server.py" "$LAB/server.ready" "$LAB/tcp.port" "$HOST_DGRAM" \
		"$HOST_SOCK" "$XDG_RUNTIME_DIR/bus" "$DOCKER_SOCK" "$ABSTRACT_SOCK" \
		</dev/null >"$LAB/server.log" 2>&1 &
	LAB_SERVER_PID=$!
	sleep 600 </dev/null >/dev/null 2>&1 &
	SLEEP_PID=$!
	for i in $(seq 1 100); do
		[ -e "$LAB/server.ready" ] && break
		sleep 0.1
	done
	[ -e "$LAB/server.ready" ] || { cat "$LAB/server.log" >&2; return 1; }
	TCP_PORT=$(cat "$LAB/tcp.port")
	mkdir -p "$LAB/snap"
	return 0
}

lab_cleanup() {
	[ -n "${LAB_SERVER_PID:-}" ] && kill "$LAB_SERVER_PID" 2>/dev/null
	[ -n "${SLEEP_PID:-}" ] && kill "$SLEEP_PID" 2>/dev/null
	wait 2>/dev/null
	[ -n "${HOST_TMP_FILE:-}" ] && rm -f "$HOST_TMP_FILE"
	if [ -n "${LAB:-}" ] && [ -d "$LAB" ]; then
		chmod -R u+rwX "$LAB" 2>/dev/null
		rm -rf "$LAB"
	fi
}

# Split "[OPTS... --] REST..." into LAB_OPTS and LAB_REST.
lab_split() {
	local a seen=0
	LAB_OPTS=()
	LAB_REST=()
	for a; do [ "$a" = -- ] && seen=1; done
	if [ $seen = 1 ]; then
		while [ $# -gt 0 ] && [ "$1" != -- ]; do LAB_OPTS+=("$1"); shift; done
		shift
	fi
	LAB_REST=("$@")
}

# CORDON_PROVIDER names the provider under test (default: native).
run_in_cmd() {
	lab_split "$@"
	timeout -k 5 "$LAB_TIMEOUT" "$CORDON" run -q --state-dir "$STATE" -w "$WS" \
		${CORDON_PROVIDER:+--provider "$CORDON_PROVIDER"} \
		"${LAB_OPTS[@]}" -- "${LAB_REST[@]}" </dev/null 2>"$LAB/in.err"
}

run_in() {
	lab_split "$@"
	run_in_cmd "${LAB_OPTS[@]}" -- "${PENV[@]}" "$PROBE" "${LAB_REST[@]}"
}

run_out() {
	(cd "$WS" && timeout -k 5 "$LAB_TIMEOUT" "${PENV[@]}" "$PROBE" "$@" </dev/null 2>"$LAB/out.err")
}

# Host-side checks, for CHECK/UNDO in the .t files.
snap() { cp -p "$1" "$LAB/snap/$(printf '%s' "$1" | sha256sum | cut -c1-16)"; }
unchanged() { cmp -s "$1" "$LAB/snap/$(printf '%s' "$1" | sha256sum | cut -c1-16)"; }
restore() { cp -p "$LAB/snap/$(printf '%s' "$1" | sha256sum | cut -c1-16)" "$1"; }
absent() { [ ! -e "$1" ] && [ ! -L "$1" ]; }
