#!/bin/bash
# cordon's Docker Engine client (src/container/engine.h, driven through
# tests/helpers/engine-probe) against a dockerd this test starts itself on
# a throwaway data root, with an image made here from busybox-static (no
# registry). The docker CLI on the same socket is the control for what the
# client reads and makes. It checks: the daemon's ID and version; a CLI
# context's endpoint read from the store the CLI itself wrote (an unknown
# context, a linked meta.json and a tcp:// endpoint refused); image
# inspect by ID, and "gone" for an ID the daemon lacks; create leaves a
# container not running with the labels and hardening asked, and a second
# of that name is refused; list by label finds it, and a dead socket makes
# list fail (never an empty list); start, kill (the signal reaches the
# trap), remove, force-remove of a running one; inspect of a removed
# container says gone, against a dead socket it is an error. Fake daemons
# on unix sockets show the fail-closed readings: an API below 1.41
# refused, and one whose oldest API is above it; a 404 that is not the
# daemon's "No such container", and no answer in time, errors (not gone);
# a 500 on list an error (not an empty list); an answer over 4 MiB and
# one that is not JSON errors; a create the daemon warns about fails and
# is removed.
# dockerd and its data root are removed at exit, whatever happened.
set -u
: "${CORDON_HELPERS:?set CORDON_HELPERS to the test helpers directory}"
here=$(cd "$(dirname "$0")" && pwd)
P=$CORDON_HELPERS/engine-probe
# (CORDON_DOCKERD: another dockerd, or none)
dockerd=${CORDON_DOCKERD:-$(command -v dockerd || echo /usr/sbin/dockerd)}
if [ ! -x "$dockerd" ]; then
	echo "1..0 # SKIP dockerd not installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP dockerd needs root"
	exit 0
fi
if ! command -v docker >/dev/null; then
	echo "1..0 # SKIP docker CLI not installed (the control)"
	exit 0
fi
if [ ! -x /bin/busybox ] || readelf -l /bin/busybox 2>/dev/null | grep -q INTERP; then
	echo "1..0 # SKIP no static /bin/busybox (busybox-static) to make the image from"
	exit 0
fi
[ -x "$P" ] || { echo "Bail out! no engine-probe at $P (make build/san/tests/helpers/engine-probe)"; exit 1; }
. "$here/lib.sh"

D=$(mktemp -d /var/tmp/cordon-engine.XXXXXX) || exit 1
sock=$D/docker.sock
dead=$D/nothing.sock
dpid=
fakes=()
cleanup() {
	local p
	for p in "${fakes[@]}"; do kill -KILL "$p" 2>/dev/null; done
	if [ -n "$dpid" ]; then
		kill -TERM "$dpid" 2>/dev/null
		for _ in $(seq 300); do kill -0 "$dpid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$dpid" 2>/dev/null
	fi
	wait 2>/dev/null
	# what dockerd left (its containerd, shims): only processes naming
	# this test's own directory
	local c
	for p in /proc/[0-9]*; do
		c=$({ tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null)
		[[ $c == *"$D/"* ]] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	findmnt -rn -o TARGET 2>/dev/null | grep -F "$D/" | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf "$D"
}
trap cleanup EXIT

export DOCKER_HOST=unix://$sock DOCKER_CONFIG=$D/cli
mkdir -p "$D/cli"
echo '{}' > "$D/daemon.json"
"$dockerd" --config-file "$D/daemon.json" --data-root "$D/root" --exec-root "$D/exec" \
	-H "unix://$sock" --pidfile "$D/pid" --iptables=false --ip-masq=false --bridge=none \
	>"$D/dockerd.log" 2>&1 &
dpid=$!
for _ in $(seq 600); do
	curl -sf --unix-socket "$sock" http://d/_ping >/dev/null 2>&1 && break
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
if ! curl -sf --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; then
	echo "Bail out! dockerd did not start"
	sed 's/^/# /' "$D/dockerd.log" | tail -20
	exit 1
fi

# probe ARGS...: $out its stdout, $err its stderr, $rc its status
probe() {
	out=$("$P" "$@" 2>"$D/err"); rc=$?
	err=$(cat "$D/err")
	cat "$D/err" >> "$D/probe.err"
}
jf() { printf '%s' "$out" | jfield "$1" 2>/dev/null; }
# a label of an inspect's answer (its key has dots)
jl() { printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["labels"].get(sys.argv[1]))' "$1" 2>/dev/null; }
refused() { [ "$rc" = 125 ] && [ -z "$out" ] && printf '%s' "$err" | grep -q "$1"; }

# --- the daemon -------------------------------------------------------------
probe info "$sock"
want_id=$(docker info -f '{{.ID}}' 2>/dev/null)
want_v=$(docker version -f '{{.Server.Version}}' 2>/dev/null)
ok $([ "$rc" = 0 ] && [ -n "$want_id" ] && [ "$(jf id)" = "$want_id" ] && [ "$(jf version)" = "$want_v" ]; echo $?) \
	"info names the daemon's ID and version as docker info does ($(jf id), $(jf version), API $(jf api))"
probe info "unix://$dead"
ok $(refused 'sandbox_unavailable: docker daemon .* cannot be asked'; echo $?) "info against a dead socket fails as unavailable"
probe info tcp://127.0.0.1:2375
ok $(refused 'sandbox_unavailable: docker endpoint tcp://...: not supported'; echo $?) "a tcp:// endpoint is refused (no TLS built)"

# --- contexts: the store the CLI itself writes ------------------------------
docker context create engine-t --docker "host=unix://$sock" >/dev/null 2>&1
probe endpoint engine-t
ok $([ "$rc" = 0 ] && [ "$(jf endpoint)" = "unix://$sock" ]; echo $?) "a context's endpoint is read from the CLI's store ($(jf endpoint))"
probe info ctx:engine-t
ok $([ "$rc" = 0 ] && [ "$(jf id)" = "$want_id" ]; echo $?) "info through the context reaches the same daemon"
probe endpoint default
ok $([ "$(jf endpoint)" = unix:///var/run/docker.sock ]; echo $?) "the context default is unix:///var/run/docker.sock"
probe endpoint no-such-context
ok $(refused 'sandbox_config: docker context `no-such-context` not found'; echo $?) "an unknown context is refused"
probe endpoint '../x'
ok $(refused 'sandbox_config: a docker context'"'"'s name is'; echo $?) "a context name with a path in it is refused"
meta=$(find "$D/cli/contexts/meta" -name meta.json | head -1)
mv "$meta" "$meta.real" && ln -s "$meta.real" "$meta"
probe endpoint engine-t
ok $(refused 'sandbox_unavailable: docker context `engine-t`: open'; echo $?) "a meta.json that is a symbolic link is refused"
rm -f "$meta" && mv "$meta.real" "$meta"
docker context create engine-tcp --docker host=tcp://127.0.0.1:2375 >/dev/null 2>&1
probe info ctx:engine-tcp
ok $(refused 'not supported yet'; echo $?) "a context naming a tcp:// endpoint is refused at open"

# --- an image made here -----------------------------------------------------
mkdir -p "$D/rootfs/bin" "$D/rootfs/tmp"
cp /bin/busybox "$D/rootfs/bin/busybox"
for t in sh ls cat echo id sleep; do ln -s busybox "$D/rootfs/bin/$t"; done
image=$(tar -C "$D/rootfs" -cf - . | docker import - cordon-engine-test:1 2>/dev/null)
probe image "$sock" "$image"
ok $([ "$rc" = 0 ] && [ -n "$image" ] && [ "$(jf id)" = "$image" ]; echo $?) "image inspect by ID ($image)"
probe image "$sock" "sha256:$(printf '0%.0s' $(seq 64))"
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "an image the daemon lacks is gone"
probe image "$dead" "$image"
ok $(refused 'cannot be asked'; echo $?) "image inspect against a dead socket is an error, not gone"

# --- create ------------------------------------------------------------------
job=job-$$
probe create "$sock" "cordon-engine-$$" "$image" cordon.host=engine-t "cordon.job=$job" cordon.segment=1 \
	-- sh -c 'trap "exit 7" TERM; sleep 600 & wait'
cid=$(jf id)
ok $([ "$rc" = 0 ] && [ ${#cid} = 64 ]; echo $?) "create returns the container's ID"
ctl=$(docker inspect "$cid" 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)[0]; h = c["HostConfig"]
print(c["State"]["Status"], c["State"]["Running"], c["Config"]["Labels"].get("cordon.job"),
      c["Config"]["User"], h["RestartPolicy"]["Name"], ",".join(h["CapDrop"] or []),
      ",".join(h["SecurityOpt"] or []), h["ReadonlyRootfs"], "/tmp" in (h["Tmpfs"] or {}),
      h["NetworkMode"], h["PidsLimit"])')
ok $([ "$ctl" = "created False $job 1000:1000 no ALL no-new-privileges True True none 4096" ]; echo $?) \
	"docker inspect (the control): not running, the labels and hardening asked ($ctl)"
probe create "$sock" "cordon-engine-$$" "$image" "cordon.job=$job" -- true
ok $(refused 'a container named `cordon-engine-'$$'` exists already'; echo $?) "a second container of that name is refused"

# --- list --------------------------------------------------------------------
probe list "$sock" "cordon.job=$job"
ok $([ "$rc" = 0 ] && [ "$out" = "[\"$cid\"]" ]; echo $?) "list by label finds it, and only it"
probe list "$sock" "cordon.job=$job" cordon.segment=2
ok $([ "$rc" = 0 ] && [ "$out" = "[]" ]; echo $?) "list by labels it lacks is an empty list (the daemon's answer)"
probe list "$dead" "cordon.job=$job"
ok $(refused 'cannot be asked'; echo $?) "list against a dead socket is an error, not an empty list"
probe list "$sock"
ok $(refused 'no label to list by'; echo $?) "list without a label is refused (the daemon's other containers are not cordon's)"

# --- inspect, start, kill ----------------------------------------------------
probe inspect "$sock" "$cid"
ok $([ "$rc" = 0 ] && [ "$(jf running)" = False ] && [ "$(jf status)" = created ] && [ "$(jl cordon.job)" = "$job" ] && [ "$(jl cordon.segment)" = 1 ] &&
	[ "$(jf image)" = "$image" ]; echo $?) "inspect reads it: created, not running, its labels and image"
probe start "$sock" "$cid"
ok $([ "$rc" = 0 ] && [ "$(jf started)" = True ]; echo $?) "start starts it"
probe start "$sock" "$cid"
ok $([ "$rc" = 0 ] && [ "$(jf running_already)" = True ]; echo $?) "start again: it runs already"
probe inspect "$sock" "$cid"
ok $([ "$rc" = 0 ] && [ "$(jf running)" = True ] && [ "$(jf pid)" = "$(docker inspect -f '{{.State.Pid}}' "$cid")" ] &&
	[ "$(jf pid)" -gt 0 ]; echo $?) "inspect: running, its pid as docker inspect says ($(jf pid))"
probe kill "$sock" "$cid" TERM
ok $([ "$rc" = 0 ] && [ "$(jf sent)" = True ]; echo $?) "kill TERM is sent"
for _ in $(seq 100); do [ "$(docker inspect -f '{{.State.Running}}' "$cid")" = false ] && break; sleep 0.1; done
probe inspect "$sock" "$cid"
ok $([ "$rc" = 0 ] && [ "$(jf running)" = False ] && [ "$(jf exit_code)" = 7 ] && [ "$(jf pid)" = 0 ]; echo $?) \
	"the TERM reached the container's trap: exited 7 ($(jf status), $(jf exit_code))"
probe kill "$sock" "$cid" KILL
ok $([ "$rc" = 0 ] && [ "$(jf not_running)" = True ]; echo $?) "kill of a stopped container: not running"
probe kill "$dead" "$cid" TERM
ok $(refused 'cannot be asked'; echo $?) "kill against a dead socket is an error"

# --- remove ------------------------------------------------------------------
probe rm "$sock" "$cid"
ok $([ "$rc" = 0 ] && [ "$(jf removed)" = True ] && ! docker inspect "$cid" >/dev/null 2>&1; echo $?) \
	"rm removes it (docker inspect no longer finds it)"
probe inspect "$sock" "$cid"
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "inspect of the removed container: gone"
probe inspect "$dead" "$cid"
ok $(refused 'cannot be asked'; echo $?) "inspect against a dead socket is an error, not gone"
probe rm "$sock" "$cid"
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "rm again: the daemon holds no such container"
probe create "$sock" "cordon-engine2-$$" "$image" "cordon.job=$job" -- sleep 600
cid2=$(jf id)
probe start "$sock" "$cid2"
probe rm "$sock" "$cid2"
ok $([ "$rc" = 125 ] && [ "$(docker inspect -f '{{.State.Running}}' "$cid2")" = true ]; echo $?) \
	"rm of a running container without force fails, and it runs on"
probe rm-force "$sock" "$cid2"
ok $([ "$rc" = 0 ] && [ "$(jf removed)" = True ] && ! docker inspect "$cid2" >/dev/null 2>&1; echo $?) "rm-force removes a running one"
probe list "$sock" "cordon.job=$job"
ok $([ "$rc" = 0 ] && [ "$out" = "[]" ]; echo $?) "nothing of the job is left"

# --- a fake daemon: answers that must not read as gone or empty ---------------
fake() {
	python3 - "$1" "$2" <<'PY' &
import http.server, json, os, socketserver, sys, time
path, api = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def send(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Api-Version", api)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        p = self.path
        if p == "/_ping":
            self.send(200, b"OK", "text/plain")
        elif p == "/version":
            self.send(200, json.dumps({"ApiVersion": api, "MinAPIVersion": "1.44" if api == "1.52" else "1.24"}).encode())
        elif p == "/v1.41/containers/slow/json":
            time.sleep(60)
        elif p.startswith("/v1.41/containers/json"):
            self.send(500, json.dumps({"message": "list broke"}).encode())
        elif p.startswith("/v1.41/containers/"):
            self.send(404, b"404 page not found\n", "text/plain")
        elif p == "/v1.41/info":
            self.send(200, b'{"ID": "' + b"x" * (5 << 20) + b'"}')
        elif p.startswith("/v1.41/images/"):
            self.send(200, b"not json")
        else:
            self.send(404, json.dumps({"message": "page not found"}).encode())
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/v1.41/containers/create"):
            self.send(201, json.dumps({"Id": "a" * 64, "Warnings": ["PIDs limit discarded"]}).encode())
        else:
            self.send(404, json.dumps({"message": "page not found"}).encode())
    def do_DELETE(self):
        with open(path + ".deleted", "a") as f:
            f.write(self.path + "\n")
        self.send(204, b"")
class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    # (the client hangs up on the oversized answer: not an error here)
    def handle_error(self, request, client_address): pass
S(path, H).serve_forever()
PY
	fakes+=($!)
	# (killed at the end: no job report for it)
	disown $!
	for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.05; done
	return 1
}
fake "$D/old.sock" 1.40 && fake "$D/new.sock" 1.52 && fake "$D/fake.sock" 1.43
probe info "$D/old.sock"
ok $(refused 'speaks API 1.40; cordon needs 1.41 or later'; echo $?) "a daemon below API 1.41 is refused, naming its version"
probe info "$D/new.sock"
ok $(refused 'speaks API 1.44 to 1.52; cordon speaks 1.41'; echo $?) "a daemon that no longer serves 1.41 (Engine 29) is refused at open"
probe inspect "$D/fake.sock" "$cid"
ok $(refused 'inspect container: HTTP 404'; echo $?) "a 404 that is not the daemon's \"No such container\" is an error, not gone"
ENGINE_PROBE_TIMEOUT=2 probe inspect "$D/fake.sock" slow
ok $(refused 'cannot be asked: Timeout was reached'; echo $?) "a daemon that does not answer in time is an error, not gone"
probe list "$D/fake.sock" "cordon.job=$job"
ok $(refused 'list containers: HTTP 500: list broke'; echo $?) "a failed listing is an error, not an empty list"
probe info "$D/fake.sock"
ok $(refused 'larger than 4194304 bytes'; echo $?) "an answer over 4 MiB is refused"
probe image "$D/fake.sock" "$image"
ok $(refused 'its answer is not JSON'; echo $?) "an answer that is not JSON is an error"
probe create "$D/fake.sock" warned "$image" "cordon.job=$job" -- true
ok $(refused 'the daemon warned: PIDs limit discarded (removed again)'; echo $?) \
	"a create the daemon warns about (a limit not in force) fails"
ok $([ "$(cat "$D/fake.sock.deleted" 2>/dev/null)" = "/v1.41/containers/$(printf 'a%.0s' $(seq 64))?force=1&v=1" ]; echo $?) \
	"... and the container it made is removed again"

if grep -q 'ERROR: AddressSanitizer\|runtime error\|LeakSanitizer' "$D/probe.err"; then
	ok 1 "the probe ran clean under the sanitizers"; sed 's/^/# /' "$D/probe.err" | head -40
else
	ok 0 "the probe ran clean under the sanitizers"
fi
echo "1..$n"
[ "$fails" = 0 ]
