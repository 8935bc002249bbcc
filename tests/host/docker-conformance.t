#!/bin/bash
# The container conformance suite (tests/container/conformance.sh: what
# the host's lifecycle relies on of any container provider) against the
# Docker provider, through `cordon-host container ...`, on a dockerd this
# test starts itself (data under the lab, stopped at the end), with an
# image made here from busybox-static (no registry) and the gateway image
# cordon makes from its own static binary. tests/container/fake.t shows
# the same suite failing the fake provider's flawed variants.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
. "$here/docker-lib.sh"
. "$here/../container/conformance.sh"
docker_skip
command -v python3 >/dev/null || skip_all "python3 not installed (drives the wrapper)"
docker_static
host_lab /var/tmp/cordon-dconf.XXXXXX
cleanup() {
	# (only once this test's dockerd runs: before, DOCKER_HOST may be another's)
	[ -n "$ddpid" ] && docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1
	# (the lab, not only dockerd's directory: its containers mount the
	# lab's workspaces and the state's run dirs)
	dockerd_cleanup "$lab"
	host_cleanup
}
trap cleanup EXIT
host_own_cordon
cp "$static" "$lab/bin/cordon-static" || exit 1
[ -x "$lab/bin/cordon-host" ] || bail "no cordon-host beside $CORDON"
mkdir -p "$lab/home" "$lab/ws"
lab_env "$lab"
dockerd_up "$lab/dk"

image=$(busybox_image cordon-dconf-test:1)
gw=$("$CORDON" docker gateway-image --endpoint "unix://$sock" 2>"$lab/gw.err")
ok $([ -n "$image" ] && [ -n "$gw" ]; echo $?) "the job's image and the gateway image are on the daemon"
[ -n "$image" ] && [ -n "$gw" ] || { echo "Bail out! no images"; sed 's/^/# /' "$lab/gw.err"; exit 1; }

CONFORMANCE_PREFIX="docker: " conformance_run "$lab/bin/cordon-host" \
	"$(printf '{"provider": "docker", "image": "%s", "endpoint": "unix://%s"}' "$image" "$sock")" \
	"$lab/ws" "$lab/state"
left=$(docker ps -aq --filter label=dev.cordon.host 2>/dev/null | grep -c .)
ok $([ "$left" = 0 ]; echo $?) "nothing of the suite's is left on the daemon ($left containers)"

tap_done
