#!/bin/bash
# cordon's Docker Engine client (src/container/docker/engine/engine.h, driven through
# tests/helpers/engine-probe) against a dockerd this test starts itself on
# a throwaway data root, with images made here from busybox-static (no
# registry). The docker CLI on the same socket is the control for what the
# client reads and makes. It checks: the daemon's ID and version, over its
# unix socket and over plain tcp (reached inside a network namespace of
# the test's own, so no one else can use that port); a CLI context's
# endpoint read from the store the CLI itself wrote (an unknown context, a
# linked meta.json, https:// and contexts that say TLS refused); image
# inspect by ID, and "gone" for an ID the daemon lacks; create leaves a
# container not running with the labels and hardening asked, and a second
# of that name is refused; list by label finds it, and a dead socket makes
# list fail (never an empty list); start, kill (the signal reaches the
# trap), remove, force-remove of a running one; inspect of a removed
# container says gone, against a dead socket it is an error.
# Then what the Docker provider builds on: a tar made in memory (the same
# bytes twice, what tar(1) lists), an image imported from it with
# ENTRYPOINT and LABEL changes (docker runs it), listed by label and
# removed; an archive put into a container (docker cp reads it back; a
# read-only root, a missing path and a missing container refused or
# gone); wait for an exit code, a timeout, finished_at; attach with stdin
# to a `cat` (hello back, stdout and stderr apart, a TTY's raw stream,
# over tcp too); the demultiplexer on malformed headers; an internal
# network with a driver option (docker network inspect), listed, removed,
# gone; a tmpfs volume whose options are in force (uid, mode), one that
# exists already refused, in use not removed, gone.
# Fake daemons on unix sockets show the fail-closed readings: an API below
# 1.41 refused, and one whose oldest API is above it; a 404 that is not the
# daemon's "No such container" (or says it in a body with "message"
# twice), and no answer in time, errors (not gone);
# a 500 on list an error (not an empty list); an answer over 4 MiB and
# one that is not JSON errors; a create the daemon warns about fails and
# is removed; a wait whose daemon hangs up, an import whose stream tells
# an error, a volume the daemon answers with other options, a network
# answered for another name, and a volume list with warnings: errors.
# dockerd and its data root are removed at exit, whatever happened.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
P=$CORDON_HELPERS/engine-probe
. "$here/docker-lib.sh"
docker_skip
for t in unshare ip socat openssl tar; do
	if ! command -v "$t" >/dev/null; then
		skip_all "$t not installed (the tcp and tar cases)"
	fi
done
[ -x "$P" ] || bail "no engine-probe at $P (make build/san/tests/helpers/engine-probe)"

D=$(mktemp -d /var/tmp/cordon-engine.XXXXXX) || exit 1
dead=$D/nothing.sock
fakes=()
cleanup() {
	dockerd_cleanup "$D" "${fakes[@]}"
	rm -rf "$D"
}
trap cleanup EXIT
dockerd_up "$D"

# probe ARGS...: $out its stdout, $err its stderr, $rc its status (with
# PW set, ended after PW seconds: a call that must not hang for ever)
probe() {
	out=$(${PW:+timeout "$PW"} "$P" "$@" 2>"$D/err"); rc=$?
	err=$(cat "$D/err")
	cat "$D/err" >> "$D/probe.err"
}
# tcp_probe ARGS...: probe inside a network namespace of its own, where
# tcp://127.0.0.1:2375 is the daemon (socat to its unix socket): plain tcp
# to a root daemon, reachable from nothing else
tcp_probe() {
	out=$(unshare --net bash -c '
		ip link set lo up || exit 124
		socat TCP-LISTEN:2375,bind=127.0.0.1,reuseaddr,fork "UNIX-CONNECT:$1" & s=$!
		shift
		for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/2375) 2>/dev/null && break; sleep 0.05; done
		"$@"; r=$?
		kill $s; wait $s 2>/dev/null
		exit $r' tcp-probe "$sock" "$P" "$@" 2>"$D/err"); rc=$?
	err=$(cat "$D/err")
	cat "$D/err" >> "$D/probe.err"
}
jf() { printf '%s' "$out" | jfield "$1" 2>/dev/null; }
# a label of an inspect's answer (its key has dots); jk: a key of another object
jl() { printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["labels"].get(sys.argv[1]))' "$1" 2>/dev/null; }
jk() { printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]].get(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
refused() { [ "$rc" = 125 ] && [ -z "$out" ] && printf '%s' "$err" | grep -q "$1"; }

# --- the daemon -------------------------------------------------------------
probe info "$sock"
want_id=$(docker info -f '{{.ID}}' 2>/dev/null)
want_v=$(docker version -f '{{.Server.Version}}' 2>/dev/null)
ok $([ "$rc" = 0 ] && [ -n "$want_id" ] && [ "$(jf id)" = "$want_id" ] && [ "$(jf version)" = "$want_v" ]; echo $?) \
	"info names the daemon's ID and version as docker info does ($(jf id), $(jf version), API $(jf api))"
probe info "unix://$dead"
ok $(refused 'sandbox_unavailable: docker daemon .* cannot be asked'; echo $?) "info against a dead socket fails as unavailable"
tcp_probe info tcp://127.0.0.1:2375
ok $([ "$rc" = 0 ] && [ "$(jf id)" = "$want_id" ]; echo $?) "info over plain tcp:// reaches the same daemon"
probe info tcp://127.0.0.1:1
ok $(refused 'sandbox_unavailable: docker daemon `tcp://127.0.0.1:1` cannot be asked'; echo $?) "tcp:// to a port where no one listens fails as unavailable"
probe info https://127.0.0.1:2376
ok $(refused 'sandbox_unavailable: docker endpoint https://...: TLS is not built'; echo $?) "an https:// endpoint is refused (no TLS built)"
probe info 'tcp://user@127.0.0.1:2375/x?y'
ok $(refused 'sandbox_config: docker endpoint: a tcp endpoint is tcp://host\[:port\]'; echo $?) "a tcp endpoint with a user, a path or a query is refused"

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
tcp_probe info ctx:engine-tcp
ok $([ "$rc" = 0 ] && [ "$(jf id)" = "$want_id" ]; echo $?) "a context naming a plain tcp:// endpoint reaches the daemon"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$D/key.pem" -out "$D/cert.pem" -days 1 -subj /CN=engine-t >/dev/null 2>&1
docker context create engine-tls --docker "host=tcp://127.0.0.1:2375,ca=$D/cert.pem" >/dev/null 2>&1
docker context create engine-skip --docker "host=tcp://127.0.0.1:2375,skip-tls-verify=true" >/dev/null 2>&1
tcp_probe info ctx:engine-tls
ok $(refused 'sandbox_unavailable: docker context `engine-tls` says TLS (it has TLS material)'; echo $?) \
	"a context with TLS material (ca=) is refused: TLS is not built"
tcp_probe info ctx:engine-skip
ok $(refused 'sandbox_unavailable: docker context `engine-skip` says TLS (SkipTLSVerify)'; echo $?) \
	"a context with skip-tls-verify is refused too"

# --- an image made here -----------------------------------------------------
image=$(busybox_image cordon-engine-test:1)
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

# --- a tar made in memory, an image of it -----------------------------------
: > "$D/empty"
"$P" tar 0 bin/sh:755:0:0=/bin/busybox busybox:755:0:0=/bin/busybox etc/motd:640:1000:1001="$D/empty" \
	>"$D/img.tar" 2>>"$D/probe.err"
"$P" tar 0 bin/sh:755:0:0=/bin/busybox busybox:755:0:0=/bin/busybox etc/motd:640:1000:1001="$D/empty" \
	>"$D/img2.tar" 2>>"$D/probe.err"
listing=$(TZ=UTC tar --numeric-owner -tvf "$D/img.tar" 2>/dev/null | awk '{print $1, $2, $3, $4, $NF}' | tr '\n' ';')
bb=$(stat -c %s /bin/busybox)
ok $([ "$listing" = "-rwxr-xr-x 0/0 $bb 1970-01-01 bin/sh;-rwxr-xr-x 0/0 $bb 1970-01-01 busybox;-rw-r----- 1000/1001 0 1970-01-01 etc/motd;" ]; echo $?) \
	"tar(1) (the control) lists the files, modes, owners and the time given ($listing)"
ok $(cmp -s "$D/img.tar" "$D/img2.tar"; echo $?) "the same files make the same tar, byte for byte"
probe tar 0 ../escape:644:0:0="$D/empty"
ok $(refused 'sandbox_config: tar: file 0.s name is not a relative path'; echo $?) "a name with .. in it is refused"
probe tar 0 /abs:644:0:0="$D/empty"
ok $(refused 'sandbox_config: tar: file 0.s name is not a relative path'; echo $?) "an absolute name is refused"
probe tar 0 a:644:0:0="$D/empty" a:600:0:0="$D/empty"
ok $(refused 'tar: `a` is named twice'; echo $?) "a name twice is refused"

tag=cordon-engine-imp:$$
probe import "$sock" "$D/img.tar" "$tag" 'ENTRYPOINT ["/busybox"]' "LABEL cordon.test=$$" 'ENV CORDON_T=1'
imp=$(jf id)
ctl=$(docker image inspect "$tag" 2>/dev/null | python3 -c '
import json, sys
i = json.load(sys.stdin)[0]; c = i["Config"]
print(i["Id"], json.dumps(c["Entrypoint"]), c["Labels"].get("cordon.test"), "CORDON_T=1" in (c["Env"] or []))')
ok $([ "$rc" = 0 ] && [ "$ctl" = "$imp [\"/busybox\"] $$ True" ]; echo $?) \
	"import: the image's ID, and docker image inspect (the control) shows the tag, ENTRYPOINT, LABEL and ENV ($ctl)"
ran=$(docker run --rm --network none "$tag" sh -c 'echo "ran as $0 $CORDON_T"; ls -n /etc/motd' 2>&1)
ok $([[ $ran == "ran as sh 1"*"1000"*"1001"* ]]; echo $?) "docker runs the imported image: /bin/sh is busybox, its owner kept ($(echo $ran | tr '\n' ' '))"
probe images "$sock" "cordon.test=$$"
ok $([ "$rc" = 0 ] && [ "$out" = "[\"$imp\"]" ] && [ "$(docker images -q --no-trunc --filter "label=cordon.test=$$")" = "$imp" ]; echo $?) \
	"images by label find it, as docker images --filter does"
probe images "$sock" "cordon.test=none-$$"
ok $([ "$rc" = 0 ] && [ "$out" = "[]" ]; echo $?) "images by a label none has: an empty list"
probe images "$dead" "cordon.test=$$"
ok $(refused 'cannot be asked'; echo $?) "images against a dead socket: an error, not an empty list"
printf 'not a tar' > "$D/bad.tar"
probe import "$sock" "$D/bad.tar" -
ok $(refused 'import image: HTTP 500: Error processing tar file'; echo $?) "import of something that is not a tar fails, in the daemon's words"
probe import "$sock" "$D/img.tar" - 'FROM scratch'
ok $(refused 'sandbox_config: docker daemon .*import image: HTTP 400: from is not a valid change command'; echo $?) \
	"a change the daemon does not take (FROM) is refused"
probe import "$sock" "$D/img.tar" 'Bad/Name:1'
ok $(refused 'import image: HTTP 400'; echo $?) "a name the daemon does not take fails"

# --- an archive put into a container -----------------------------------------
printf 'hello from cordon\n' > "$D/hello"
"$P" tar 1700000000 etc/cordon/hello:640:1000:1001="$D/hello" >"$D/put.tar" 2>>"$D/probe.err"
probe create-io "$sock" "cordon-engine-put-$$" "$imp" "cordon.job=$job" -- sleep 600
pid_=$(jf id)
probe put "$sock" "$pid_" / "$D/put.tar"
back=$(docker cp "$pid_:/etc/cordon/hello" - 2>/dev/null | tar --numeric-owner -tvf - 2>/dev/null | awk '{print $1, $2}')
body=$(docker cp "$pid_:/etc/cordon/hello" - 2>/dev/null | tar -xOf - 2>/dev/null)
ok $([ "$rc" = 0 ] && [ "$(jf put)" = True ] && [ "$back" = "-rw-r----- 1000/1001" ] && [ "$body" = "hello from cordon" ]; echo $?) \
	"put an archive into a created container: docker cp (the control) reads the file back, its mode and owner ($back)"
probe put "$sock" "$pid_" /no/such/dir "$D/put.tar"
ok $(refused 'put archive into container: HTTP 404: Could not find the file /no/such/dir'; echo $?) \
	"put into a path that is not there: an error (not gone)"
probe put "$sock" "0000$pid_" / "$D/put.tar"
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "put into a container the daemon lacks: gone"
probe create "$sock" "cordon-engine-ro-$$" "$imp" "cordon.job=$job" -- sleep 600
rid=$(jf id)
probe put "$sock" "$rid" / "$D/put.tar"
ok $(refused 'put archive into container: HTTP [0-9]*: container rootfs is marked read-only'; echo $?) \
	"put into a read-only root (the workload's hardening): refused"
probe put "$sock" "$pid_" relative "$D/put.tar"
ok $(refused 'the path is not absolute'; echo $?) "a relative path is refused"
probe rm-force "$sock" "$pid_"; probe rm-force "$sock" "$rid"

# --- wait ----------------------------------------------------------------------
probe create-io "$sock" "cordon-engine-w3-$$" "$imp" "cordon.job=$job" -- sh -c 'exit 3'
wid=$(jf id)
probe start "$sock" "$wid"
probe wait "$sock" "$wid" not-running 0
ok $([ "$rc" = 0 ] && [ "$(jf exited)" = True ] && [ "$(jf code)" = 3 ] && [ "$(docker inspect -f '{{.State.ExitCode}}' "$wid")" = 3 ]; echo $?) \
	"wait: the container's exit code 3, as docker inspect says"
probe inspect "$sock" "$wid"
ok $([ "$rc" = 0 ] && [ "$(jf finished_at)" = "$(docker inspect -f '{{.State.FinishedAt}}' "$wid")" ] &&
	[ "$(jf oom_killed)" = False ] && [ "$(jf exit_code)" = 3 ]; echo $?) \
	"inspect: finished_at as docker inspect says ($(jf finished_at)), not OOM-killed"
probe create-io "$sock" "cordon-engine-w0-$$" "$imp" "cordon.job=$job" -- sleep 600
sid=$(jf id)
probe start "$sock" "$sid"
probe wait "$sock" "$sid" not-running 1
ok $([ "$rc" = 0 ] && [ "$(jf timeout)" = True ] && [ "$(docker inspect -f '{{.State.Running}}' "$sid")" = true ]; echo $?) \
	"wait with a timeout of 1 s on a running container: timed out, and it runs on"
( sleep 1; docker kill -s KILL "$sid" >/dev/null 2>&1 ) &
PW=60 probe wait "$sock" "$sid" next-exit 0
ok $([ "$rc" = 0 ] && [ "$(jf code)" = 137 ]; echo $?) "wait with no timeout lasts until the exit (137 after a KILL)"
probe wait "$sock" "0000$sid" not-running 0
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "wait on a container the daemon lacks: gone"
probe wait "$dead" "$sid" not-running 0
ok $(refused 'cannot be asked'; echo $?) "wait against a dead socket is an error"
probe wait "$sock" "$sid" removed 0
ok $(refused 'the condition is next-exit or not-running'; echo $?) "a condition other than next-exit or not-running is refused"
probe rm-force "$sock" "$wid"; probe rm-force "$sock" "$sid"

# --- attach ----------------------------------------------------------------------
probe create-io "$sock" "cordon-engine-cat-$$" "$imp" "cordon.job=$job" -- cat
aid=$(jf id)
probe attach "$sock" "$aid" -s -i $'hello\n'
ok $([ "$rc" = 0 ] && [ "$(jf stdout)" = hello ] && [ "$(jf stderr)" = "" ] && [ "$(jf idle)" = True ]; echo $?) \
	"attach with stdin to cat: hello written, stdin half-closed, hello read back by frames ($out)"
probe wait "$sock" "$aid" not-running 10
ok $([ "$rc" = 0 ] && [ "$(jf code)" = 0 ] && [ "$(docker inspect -f '{{.State.ExitCode}}' "$aid")" = 0 ]; echo $?) \
	"... and cat exited 0 at the end of its stdin (wait, and docker inspect)"
probe create-io "$sock" "cordon-engine-2s-$$" "$imp" "cordon.job=$job" -- sh -c 'echo out; echo err >&2; echo out2; exit 5'
a2=$(jf id)
probe attach "$sock" "$a2" -s
ok $([ "$rc" = 0 ] && [ "$(jf stdout)" = $'out\nout2' ] && [ "$(jf stderr)" = err ]; echo $?) \
	"attach without stdin: stdout and stderr apart"
probe create-tty "$sock" "cordon-engine-tty-$$" "$imp" "cordon.job=$job" -- sh -c 'echo on-a-tty; tty'
a3=$(jf id)
tcp_probe attach tcp://127.0.0.1:2375 "$a3" -s -r
ok $([ "$rc" = 0 ] && [[ $(jf stdout) == "on-a-tty"*"/dev/pts/"* ]]; echo $?) \
	"attach to a TTY container over tcp: its raw stream ($(jf stdout | tr -d '\r' | tr '\n' ' '))"
probe attach "$sock" "0000$aid"
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "attach to a container the daemon lacks: gone"
probe attach "$dead" "$aid"
ok $(refused 'cannot be asked'; echo $?) "attach against a dead socket is an error"
probe create-io "$sock" "cordon-engine-pz-$$" "$imp" "cordon.job=$job" -- sleep 600
a4=$(jf id)
docker start "$a4" >/dev/null 2>&1; docker pause "$a4" >/dev/null 2>&1
probe attach "$sock" "$a4"
ok $(refused 'attach to container: HTTP 409: .*paused'; echo $?) "attach to a paused container: the daemon's refusal, not gone"
docker unpause "$a4" >/dev/null 2>&1
for c in "$aid" "$a2" "$a3" "$a4"; do probe rm-force "$sock" "$c"; done

# --- the demultiplexer on its own ---------------------------------------------
out=$(printf '\001\000\000\000\000\000\000\003abc\002\000\000\000\000\000\000\002de' | "$P" demux - 2>"$D/err"); rc=$?
ok $([ "$rc" = 0 ] && [ "$(jf stdout)" = abc ] && [ "$(jf stderr)" = de ] && [ "$(jf idle)" = True ]; echo $?) \
	"demux: frames on stdout and stderr, read 3 bytes at a time (the control)"
out=$(printf '\001\000\000\000\000\000\000\001a\003\000\000\000\000\000\000\001b' | "$P" demux - 2>"$D/err"); rc=$?; err=$(cat "$D/err")
ok $(refused 'demux: a malformed frame header'; echo $?) "demux: stream 3 is a malformed header"
out=$(printf '\001\000\007\000\000\000\000\001a' | "$P" demux - 2>"$D/err"); rc=$?; err=$(cat "$D/err")
ok $(refused 'demux: a malformed frame header'; echo $?) "demux: padding that is not zero is a malformed header"
out=$(printf '\001\000\000\000\000\000\000\011abc' | "$P" demux - 2>"$D/err"); rc=$?
ok $([ "$rc" = 0 ] && [ "$(jf stdout)" = abc ] && [ "$(jf idle)" = False ]; echo $?) "demux: a frame cut short is not idle"

# --- networks ------------------------------------------------------------------
net=cordon-engine-net-$$
probe net-create "$sock" "$net" -internal -o com.docker.network.bridge.enable_icc=false "cordon.job=$job" cordon.segment=1
nid=$(jf id)
ctl=$(docker network inspect "$net" 2>/dev/null | python3 -c '
import json, sys
n = json.load(sys.stdin)[0]; c = (n["IPAM"]["Config"] or [{}])[0]
print(n["Id"], n["Internal"], n["Driver"], n["Options"].get("com.docker.network.bridge.enable_icc"), n["Labels"].get("cordon.job"), c.get("Subnet"), c.get("Gateway"))')
ok $([ "$rc" = 0 ] && [ ${#nid} = 64 ] && [[ $ctl == "$nid True bridge false $job "* ]]; echo $?) \
	"create network: docker network inspect (the control) shows it internal, bridge, its option and labels ($ctl)"
probe net-inspect "$sock" "$nid"
ok $([ "$rc" = 0 ] && [ "$(jf internal)" = True ] && [ "$(jf name)" = "$net" ] && [ "$ctl" = "$nid True bridge false $job $(jf subnet) $(jf gateway)" ] &&
	[ "$(jk options com.docker.network.bridge.enable_icc)" = false ]; echo $?) \
	"inspect network reads it: internal, its subnet and gateway as docker says ($(jf subnet), $(jf gateway))"
probe net-inspect "$sock" "$net"
ok $([ "$rc" = 0 ] && [ "$(jf id)" = "$nid" ]; echo $?) "inspect network by name"
probe net-create "$sock" "$net" "cordon.job=$job"
ok $(refused "a network named \`$net\` exists already"; echo $?) "a second network of that name is refused"
probe net-list "$sock" "cordon.job=$job"
ok $([ "$rc" = 0 ] && [ "$out" = "[\"$nid\"]" ]; echo $?) "list networks by label finds it, and only it"
probe net-list "$dead" "cordon.job=$job"
ok $(refused 'cannot be asked'; echo $?) "list networks against a dead socket: an error, not an empty list"
probe net-rm "$sock" "$nid"
ok $([ "$rc" = 0 ] && [ "$(jf removed)" = True ] && ! docker network inspect "$net" >/dev/null 2>&1; echo $?) \
	"remove network: docker no longer finds it"
probe net-rm "$sock" "$nid"
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "remove network again: gone"
probe net-inspect "$sock" "$nid"
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "inspect of the removed network: gone"
probe net-rm "$dead" "$nid"
ok $(refused 'cannot be asked'; echo $?) "remove network against a dead socket: an error, not gone"
probe net-list "$sock" "cordon.job=$job"
ok $([ "$rc" = 0 ] && [ "$out" = "[]" ]; echo $?) "no network of the job is left"

# --- volumes ---------------------------------------------------------------------
vol=cordon-engine-vol-$$
probe vol-create "$sock" "$vol" -o type=tmpfs -o device=tmpfs -o o=size=16m,uid=1000,gid=1001,mode=0710 "cordon.job=$job"
ctl=$(docker volume inspect -f '{{.Driver}} {{index .Options "type"}} {{index .Options "o"}} {{index .Labels "cordon.job"}}' "$vol" 2>/dev/null)
ok $([ "$rc" = 0 ] && [ "$ctl" = "local tmpfs size=16m,uid=1000,gid=1001,mode=0710 $job" ]; echo $?) \
	"create volume: docker volume inspect (the control) shows the local driver, its options and label"
seen=$(docker run --rm --network none -v "$vol:/v" "$imp" sh -c 'stat -c "%a %u %g" /v; grep " /v " /proc/mounts | cut -d" " -f3' 2>&1 | tr '\n' ' ')
ok $([ "$seen" = "710 1000 1001 tmpfs " ]; echo $?) "the options are in force: a tmpfs, mode 0710, owned 1000:1001 ($seen)"
probe vol-create "$sock" "$vol" "cordon.job=$job"
ok $(refused "a volume named \`$vol\` exists already"; echo $?) "a volume of that name that exists is refused (the daemon would hand it back)"
probe vol-list "$sock" "cordon.job=$job"
ok $([ "$rc" = 0 ] && [ "$out" = "[\"$vol\"]" ]; echo $?) "list volumes by label finds it"
probe vol-list "$dead" "cordon.job=$job"
ok $(refused 'cannot be asked'; echo $?) "list volumes against a dead socket: an error, not an empty list"
user=$(docker create --network none -v "$vol:/v" "$imp" true 2>/dev/null)
probe vol-rm "$sock" "$vol"
ok $(refused 'remove volume: HTTP 409: .*in use'; echo $?) "remove of a volume in use is an error"
probe vol-rm-force "$sock" "$vol"
ok $([ "$rc" = 125 ] && docker volume inspect "$vol" >/dev/null 2>&1; echo $?) "... with force too, and it stays"
docker rm -f "$user" >/dev/null 2>&1
probe vol-rm "$sock" "$vol"
ok $([ "$rc" = 0 ] && [ "$(jf removed)" = True ] && ! docker volume inspect "$vol" >/dev/null 2>&1; echo $?) "remove volume: docker no longer finds it"
probe vol-rm "$sock" "$vol"
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "remove volume again: gone"
probe vol-list "$sock" "cordon.job=$job"
ok $([ "$rc" = 0 ] && [ "$out" = "[]" ]; echo $?) "no volume of the job is left"

# --- the image removed --------------------------------------------------------------
probe image-rm "$sock" "$imp"
ok $([ "$rc" = 0 ] && [ "$(jf removed)" = True ] && ! docker image inspect "$imp" >/dev/null 2>&1; echo $?) \
	"remove image: docker no longer finds it"
probe image-rm "$sock" "$imp"
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "remove image again: gone"
probe list "$sock" "cordon.job=$job"
ok $([ "$rc" = 0 ] && [ "$out" = "[]" ]; echo $?) "no container of the job is left"

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
        elif p == "/v1.41/volumes/raced":
            self.send(404, json.dumps({"message": "get raced: no such volume"}).encode())
        elif p.startswith("/v1.41/volumes?"):
            self.send(200, json.dumps({"Volumes": [], "Warnings": ["driver x: not reachable"]}).encode())
        elif p == "/v1.41/networks/other":
            self.send(200, json.dumps({"Id": "b" * 64, "Name": "not-other", "Internal": True,
                                       "EnableIPv6": False, "Labels": {}, "Options": {}}).encode())
        elif p.startswith("/v1.41/networks/"):
            self.send(404, json.dumps({"message": "page not found"}).encode())
        elif p == "/v1.41/containers/once/json":
            self.send(404, b'{"message": "No such container: once"}')
        elif p == "/v1.41/containers/twice/json":
            self.send(404, b'{"message": "page not found", "message": "No such container: twice"}')
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
        p = self.path
        if p.startswith("/v1.41/containers/create"):
            self.send(201, json.dumps({"Id": "a" * 64, "Warnings": ["PIDs limit discarded"]}).encode())
        elif p.startswith("/v1.41/containers/hangup/wait"):
            # the head, as the daemon sends it at once; then it goes away
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            time.sleep(0.5)
            self.close_connection = True
        elif p.startswith("/v1.41/images/create"):
            self.send(200, b'{"status":"Importing"}\r\n{"errorDetail":{"message":"no space left on device"},"error":"no space left on device"}\r\n')
        elif p == "/v1.41/volumes/create":
            self.send(201, json.dumps({"Name": "raced", "Driver": "local", "Labels": {},
                                       "Options": {"type": "none", "device": "/", "o": "bind"}}).encode())
        else:
            self.send(404, json.dumps({"message": "page not found"}).encode())
    def do_DELETE(self):
        if self.path.startswith("/v1.41/networks/"):
            self.send(404, json.dumps({"message": "page not found"}).encode())
            return
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
probe inspect "$D/fake.sock" once
ok $([ "$rc" = 0 ] && [ "$(jf gone)" = True ]; echo $?) "control: the fake's 404 saying \"No such container\" once is gone"
probe inspect "$D/fake.sock" twice
ok $(refused 'inspect container: HTTP 404$'; echo $?) \
	"a 404 whose body has \"message\" twice (the last \"No such container\") is an error, not gone: read strictly"
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
PW=30 probe wait "$D/fake.sock" hangup not-running 0
ok $(refused 'sandbox_unavailable: docker daemon .* cannot be asked: Transferred a partial file'; echo $?) \
	"a wait (no timeout) whose daemon goes away mid-wait is an error, not an exit or a timeout"
probe import "$D/fake.sock" "$D/img.tar" fake:1
ok $(refused 'import image: the daemon: no space left on device'; echo $?) \
	"an import whose answer (200) tells an error in its stream fails"
probe vol-create "$D/fake.sock" raced -o type=tmpfs -o device=tmpfs
ok $(refused 'create volume: volume `raced` is not as asked'; echo $?) \
	"a volume the daemon answers with other options (one made in a race) is refused"
probe vol-list "$D/fake.sock" "cordon.job=$job"
ok $(refused 'list volumes: the daemon warned'; echo $?) "a volume list with warnings is an error (it may be short)"
probe net-inspect "$D/fake.sock" other
ok $(refused 'asked for `other`, it answered about another network'; echo $?) \
	"a network answered for another name (an ID's prefix) is an error, not it"
probe net-rm "$D/fake.sock" other
ok $(refused 'remove network: HTTP 404: page not found'; echo $?) "a 404 that is not the daemon's \"network ... not found\" is an error, not gone"

sanitizer_clean "$D/probe.err" "the probe ran clean under the sanitizers"
tap_done
