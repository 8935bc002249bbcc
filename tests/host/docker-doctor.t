#!/bin/bash
# docker-doctor.t: the Docker provider's doctor (`cordon docker doctor`,
# src/container/docker/doctor.c) against a dockerd this test starts
# itself on a throwaway data root (as engine.t does), with the gateway
# image made by `cordon docker gateway-image` from build/cordon-static and
# a busybox-static image imported here (no registry). It checks: with the
# gateway image there every check passes (daemon: the ID and version
# docker info shows; shared_path: a file owned by the operator; preflight:
# the gateway's 403 through the relay), and --image with a pinned image
# there passes too; it fails, ready false, exit 125, for an endpoint where
# no daemon listens (the rest not checked), for a missing gateway image
# (removed with docker rmi; the fix names the command) while two images
# carry its label (its very layer with an environment of their own, the
# binding's image relabelled: neither is taken, and gateway-image makes
# cordon's own beside them), for an --image the
# daemon lacks and for one not pinned, and for a state dir the daemon
# cannot see (a tmpfs in a mount namespace of the doctor's own); after
# every run, nothing labelled dev.cordon.role=doctor is left (containers,
# networks, volumes) and no doctor-* directory under the state dir.
# Controls for `cordon netprobe`, the preflight's probe: on the host it
# says connected, refused, answered and the gateway's 403 where those are
# true; in a container on a bridge network it reaches the host's address
# there (not "unreachable"), and in network none it does not.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
bin=$(cd "$(dirname "$CORDON")" && pwd)
# beside cordon, or a level up (build/san/cordon: build/cordon-static);
# CORDON_STATIC names another
static=${CORDON_STATIC:-$bin/cordon-static}
[ -x "$static" ] || static=${CORDON_STATIC:-$(dirname "$bin")/cordon-static}
. "$here/docker-lib.sh"
docker_skip
skip_unless_tools unshare python3 tar sha256sum
if [ ! -x "$static" ]; then
	skip_all "no $static (make build/cordon-static)"
fi
[ -x "$bin/cordon-host" ] || bail "no cordon-host beside $CORDON"

D=$(mktemp -d /var/tmp/cordon-docdoc.XXXXXX) || exit 1
D=$(cd "$D" && pwd -P)
pids=()
cleanup() {
	dockerd_cleanup "$D" "${pids[@]}"
	rm -rf "$D"
}
trap cleanup EXIT
dockerd_up "$D"

# the lab: cordon, cordon-host and cordon-static side by side (the
# provider finds its runtime beside cordon-host)
mkdir -p "$D/bin" "$D/state"
chmod 700 "$D/state"
cp "$CORDON" "$D/bin/cordon" && cp "$bin/cordon-host" "$D/bin/cordon-host" &&
	cp "$static" "$D/bin/cordon-static" || bail "copy cordon into the lab"
C=$D/bin/cordon
state=$D/state

# doctor ARGS...: $out the report, $rc the status, its stderr kept
doctor() {
	local t0
	t0=$(date +%s%N)
	out=$("$C" docker doctor "$@" 2>>"$D/doctor.err"); rc=$?
	secs=$(( ($(date +%s%N) - t0) / 1000000 ))
}
# check ID FIELD: a field of one check of $out ("" when there is none)
check() {
	printf '%s' "$out" | python3 -c 'import json,sys
d=json.load(sys.stdin)
print(next((c[sys.argv[2]] for c in d["checks"] if c["id"]==sys.argv[1]), ""))' "$1" "$2" 2>/dev/null
}
ids() { printf '%s' "$out" | python3 -c 'import json,sys; print(" ".join(c["id"] for c in json.load(sys.stdin)["checks"]))' 2>/dev/null; }
ready() { printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ready"])' 2>/dev/null; }
# nothing the doctor made is left: by its label, and in the state dir
left() {
	local l
	l=$(docker ps -aq --filter label=dev.cordon.role=doctor; docker network ls -q --filter label=dev.cordon.role=doctor;
	    docker volume ls -q --filter label=dev.cordon.role=doctor; ls -d "$state"/containers/docker/doctor-* 2>/dev/null)
	[ -z "$l" ] || { echo "# left: $l"; return 1; }
}
# the label filter finds what carries it (the control for left)
docker volume create --label dev.cordon.role=doctor cordon-doctor-control >/dev/null
ok $(! left >/dev/null; echo $?) "control: the label filter finds a volume labelled dev.cordon.role=doctor"
docker volume rm cordon-doctor-control >/dev/null

# --- the gateway image -------------------------------------------------------
gw=$("$C" docker gateway-image --endpoint "unix://$sock" 2>>"$D/doctor.err")
label=$(docker image inspect -f '{{index .Config.Labels "dev.cordon.runtime"}}' "$gw" 2>/dev/null)
ok $([ -n "$gw" ] && [ "$label" = "$(sha256sum < "$static" | cut -d' ' -f1)" ]; echo $?) \
	"gateway-image made the image, labelled with cordon-static's digest ($gw)"

# --- ready -------------------------------------------------------------------
doctor --endpoint "unix://$sock" --state-dir "$state"
echo "# a doctor that passes took $secs ms (the sanitizer build)"
ok $([ "$rc" = 0 ] && [ "$(ready)" = True ] && [ "$(ids)" = "daemon gateway_image shared_path preflight" ] &&
	[ -z "$(printf '%s' "$out" | grep '"status": "fail"')" ]; echo $?) \
	"every check passes: exit 0, ready, daemon gateway_image shared_path preflight"
[ "$rc" = 0 ] || printf '%s\n' "$out" | sed 's/^/# /'
want_id=$(docker info -f '{{.ID}}' 2>/dev/null)
want_v=$(docker version -f '{{.Server.Version}}' 2>/dev/null)
d=$(check daemon detail)
ok $([[ -n $want_id && $d == *"daemon $want_id, Docker $want_v, at unix://$sock"* ]]; echo $?) \
	"daemon: its ID and version, as docker info says ($d)"
ok $([[ $(check gateway_image detail) == "$gw "* ]]; echo $?) "gateway_image: the image gateway-image made"
d=$(check shared_path detail)
ok $([[ $d == *"a container as 0:0 "*"wrote \`$state/containers/docker/doctor-"*"/written\`, owned by 0:0 on the host"* ]]; echo $?) \
	"shared_path: a container as the operator wrote into the state dir, the file the operator's"
d=$(check preflight detail)
ok $([[ $d == *"resolved nothing"*"reached nothing directly"*"(403 host not in network.allow)"* ]]; echo $?) \
	"preflight: nothing resolved or reached directly, the gateway's 403 through the relay"
ok $(left; echo $?) "nothing labelled dev.cordon.role=doctor is left, nor a doctor-* directory"

# --- the binding's image -----------------------------------------------------
image=$(busybox_image cordon-doctor-test:1)
doctor --endpoint "unix://$sock" --state-dir "$state" --image "$image"
ok $([ "$rc" = 0 ] && [ "$(check image status)" = pass ] && [[ $(check image detail) == *"is on the daemon ($image)" ]] &&
	[ "$(ids)" = "daemon image gateway_image shared_path preflight" ]; echo $?) \
	"--image with an image the daemon holds: image passes, ready"
ok $(left; echo $?) "... nothing left"
doctor --endpoint "unix://$sock" --state-dir "$state" --image "sha256:$(printf '0%.0s' $(seq 64))"
ok $([ "$rc" = 125 ] && [ "$(ready)" = False ] && [ "$(check image status)" = fail ] &&
	[[ $(check image detail) == *"is not on the daemon" ]] && [ "$(check preflight status)" = pass ]; echo $?) \
	"--image the daemon lacks: image fails, ready false, exit 125 (the rest still checked)"
ok $(left; echo $?) "... nothing left"
doctor --endpoint "unix://$sock" --state-dir "$state" --image cordon-doctor-test:1
ok $([ "$rc" = 125 ] && [ "$(check image status)" = fail ] && [[ $(check image detail) == *"must be pinned"* ]]; echo $?) \
	"--image by a tag alone: image fails (must be pinned)"
ok $(left; echo $?) "... nothing left"

# --- not ready ---------------------------------------------------------------
doctor --endpoint "unix://$D/nothing.sock" --state-dir "$state"
ok $([ "$rc" = 125 ] && [ "$(ready)" = False ] && [ "$(check daemon status)" = fail ] &&
	[[ $(check daemon detail) == *"cannot be asked"* ]] && [ -n "$(check daemon fix)" ] &&
	[[ $(check preflight detail) == "not checked: the daemon cannot be asked" ]]; echo $?) \
	"an endpoint where no daemon listens: daemon fails, the rest not checked, ready false, exit 125"
ok $(left; echo $?) "... nothing left"

# impostors that carry the gateway image's label: its very layer (the
# static binary alone) with a config of their own (an environment), and
# the binding's image relabelled
mkdir -p "$D/saved"
docker save "$gw" 2>/dev/null | tar -C "$D/saved" -xf - 2>/dev/null
imp1=$(docker import --change "LABEL dev.cordon.runtime=$label" --change 'ENTRYPOINT ["/cordon"]' \
	--change 'ENV SSLKEYLOGFILE=/tmp/keys' "$(ls "$D"/saved/*/layer.tar | head -1)" 2>/dev/null)
imp2=$(tar -C "$D/rootfs" -cf - . | docker import --change "LABEL dev.cordon.runtime=$label" - 2>/dev/null)
docker rmi -f "$gw" >/dev/null 2>&1
ok $([ -n "$imp1" ] && [ -n "$imp2" ] &&
	[ "$(docker image inspect -f '{{.RootFS.Layers}}' "$imp1" 2>/dev/null)" = "[$(docker image inspect -f '{{index .RootFS.Layers 0}}' "$imp1" 2>/dev/null)]" ] &&
	[ "$(docker images -q --no-trunc --filter "label=dev.cordon.runtime=$label" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$imp1" "$imp2" | sort | tr '\n' ' ')" ]; echo $?) \
	"control: the gateway image removed, two images carry its label (one holds its very layer)"
doctor --endpoint "unix://$sock" --state-dir "$state"
ok $([ "$rc" = 125 ] && [ "$(ready)" = False ] && [ "$(check daemon status)" = pass ] &&
	[ "$(check gateway_image status)" = fail ] &&
	[ "$(check gateway_image fix)" = "cordon docker gateway-image --endpoint unix://$sock" ] &&
	[ "$(check shared_path status)" = fail ] && [ "$(check preflight status)" = fail ]; echo $?) \
	"the gateway image removed: gateway_image fails, its fix the command that makes it; exit 125"
ok $([[ $(check gateway_image detail) == *"2 other image(s) carry its label but hold something else"* ]]; echo $?) \
	"... the images that carry its label are not taken for it, and the detail says so"
ok $(left; echo $?) "... nothing left"
gw=$("$C" docker gateway-image --endpoint "unix://$sock" 2>>"$D/doctor.err")
ok $([ -n "$gw" ] && [ "$gw" != "$imp1" ] && [ "$gw" != "$imp2" ] &&
	[ "$(docker image inspect -f '{{.Config.Env}}' "$gw" 2>/dev/null)" = "[]" ]; echo $?) \
	"gateway-image makes cordon's own beside them ($gw)"

# a state dir the daemon does not see: a tmpfs in the doctor's own mount
# namespace (the daemon's view is the empty directory beneath it)
mkdir -p "$D/hidden"
out=$(unshare -m --propagation private sh -c 'mount -t tmpfs -o mode=0700 tmpfs "$1" && exec "$2" docker doctor --endpoint "$3" --state-dir "$1"' \
	sh "$D/hidden" "$C" "unix://$sock" 2>>"$D/doctor.err"); rc=$?
ok $([ "$rc" = 125 ] && [ "$(check shared_path status)" = fail ] && [ "$(check preflight status)" = pass ] &&
	[ -z "$(ls -A "$D/hidden")" ]; echo $?) \
	"a state dir the daemon cannot see: shared_path fails ($(check shared_path detail | cut -c1-120))"
ok $(left; echo $?) "... nothing left"

# --- controls for netprobe ---------------------------------------------------
python3 -c 'import socket,sys
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(8)
u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1",0))
print(s.getsockname()[1], u.getsockname()[1], flush=True)
d,a=u.recvfrom(512); u.sendto(d,a)
sys.stdin.read()' > "$D/ports" < <(sleep 60) &
pids+=($!)
disown $!
for _ in $(seq 100); do [ -s "$D/ports" ] && break; sleep 0.05; done
read -r tport uport < "$D/ports"
gport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$C" gateway --listen "tcp:127.0.0.1:$gport" --allow allowed.example 2>>"$D/doctor.err" &
pids+=($!)
disown $!
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$gport") 2>/dev/null && break; sleep 0.05; done
np=$("$C" netprobe --timeout 2000 "tcp:127.0.0.1:$tport" tcp:127.0.0.1:1 "dns:example.com@127.0.0.1:$uport" \
	"http:denied.example@127.0.0.1:$gport" 2>>"$D/doctor.err")
ok $([ "$np" = "{\"tcp:127.0.0.1:$tport\":\"connected\",\"tcp:127.0.0.1:1\":\"refused\",\"dns:example.com@127.0.0.1:$uport\":\"answered\",\"http:denied.example@127.0.0.1:$gport\":\"403 host not in network.allow\"}" ]; echo $?) \
	"control: on the host netprobe sees connected, refused, a DNS answer and the gateway's 403 ($np)"
"$C" netprobe tcp:nowhere >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 125 ]; echo $?) "netprobe refuses a probe it cannot parse (125)"

docker network create --label dev.cordon.role=doctor-control cordon-doctor-ctl >/dev/null
hostip=$(docker network inspect -f '{{(index .IPAM.Config 0).Gateway}}' cordon-doctor-ctl)
run_probe() { docker run --rm --network "$1" --user 1:1 --read-only --cap-drop ALL --entrypoint /cordon "$gw" \
	netprobe --timeout 1000 "tcp:$hostip:80" "tcp:$hostip:$tport" 2>>"$D/doctor.err"; }
bridge=$(run_probe cordon-doctor-ctl)
none=$(run_probe none)
ok $([ -n "$hostip" ] && [[ $bridge == *"\"tcp:$hostip:80\":\"refused\""* || $bridge == *"\"tcp:$hostip:80\":\"connected\""* ]]; echo $?) \
	"control: in a container on a bridge network netprobe reaches the host's address there ($bridge)"
ok $([ "$none" = "{\"tcp:$hostip:80\":\"unreachable\",\"tcp:$hostip:$tport\":\"unreachable\"}" ]; echo $?) \
	"... and in network none it does not ($none)"
docker network rm cordon-doctor-ctl >/dev/null

sanitizer_clean "$D/doctor.err" "cordon ran clean under the sanitizers"
tap_done
