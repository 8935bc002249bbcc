#!/bin/bash
# The container conformance suite (tests/container/conformance.sh: what
# the host's lifecycle relies on of any container provider) against the
# SSH provider, through `cordon-host container ...`, on a real OpenSSH
# server this test starts (tests/host/ssh-lib.sh: loopback, a host key
# made for the run, an account and a mount namespace of its own), with
# isolation native: the suite makes two jobs' containers on one place,
# which an account running isolation none work never holds (one run at a
# time there: tests/host/ssh.t shows that, and the none lifecycle
# through the daemon). tests/container/fake.t shows the same suite
# failing the fake provider's flawed variants.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
. "$here/ssh-lib.sh"
. "$here/../container/conformance.sh"
ssh_skip
command -v python3 >/dev/null || skip_all "python3 not installed (drives the wrapper)"
static=${CORDON_STATIC:-$(cd "$(dirname "$CORDON")" && cd .. && pwd)/cordon-static}
[ -x "$static" ] || static=$(cd "$(dirname "$CORDON")" && pwd)/cordon-static
[ -x "$static" ] || bail "no cordon-static (make build/cordon-static)"
host_lab /var/tmp/cordon-sconf.XXXXXX
cleanup() {
	sshd_cleanup
	host_cleanup
}
trap cleanup EXIT
host_own_cordon
[ -x "$lab/bin/cordon-host" ] || bail "no cordon-host beside $CORDON"
cp "$static" "$lab/bin/cordon-static" || exit 1
mkdir -p "$lab/home" "$lab/ws"
lab_env "$lab"
sshd_up

# the runs see copies on the remote: the suite looks there
remote_exists() { ssh_lab_ssh test -e "$1" 2>/dev/null; }
remote_touch() { ssh_lab_ssh touch "$1" 2>/dev/null; }
CONFORMANCE_EXISTS=remote_exists CONFORMANCE_TOUCH=remote_touch \
CONFORMANCE_PREFIX="ssh: " conformance_run "$lab/bin/cordon-host" \
	"$(printf '{"provider": "ssh", "remote": "%s", "host_key": "%s", "identity": "%s"}' \
		"$SSH_LAB_REMOTE" "$SSH_LAB_HOSTKEY_PUB" "$SSH_LAB_IDENTITY")" \
	"$lab/ws" "$lab/state"
left=$(ssh_lab_ssh 'ls -A "$HOME/.cordon/runs" 2>/dev/null | grep -c .' 2>/dev/null)
ok $([ "$left" = 0 ]; echo $?) "nothing of the suite's is left on the remote ($left runs)"

tap_done
