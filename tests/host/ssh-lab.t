#!/bin/bash
# ssh-lab.t: the SSH lab itself (tests/host/ssh-lib.sh), the remote
# machine the SSH provider's suites ssh to: a login runs as the lab's own
# account, not root; the remote's /tmp has nothing of the host's (a
# directory of this test's there on the host, and the lab with its keys)
# and what the remote writes under /tmp or its home is not on the host
# (each with its control, the same probe answering the other way); it has
# processes of its own (its PID 1 is its sshd); ssh refuses a host key
# other than the lab's, and one unknown, exit 255 (the lab's passes); a
# unix socket forwarded with ssh -R reaches the host's listener from the
# remote (without -R the same connect fails); the remote has what a
# provider runs there (sh, setsid, ps, tar, find, env) and its account
# can make user namespaces, a PID namespace with its /proc too, as a
# native sandbox would; and sshd_cleanup leaves nothing: no process of the
# remote or the account, no account, no lab, the port closed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/ssh-lib.sh"
ssh_skip
if ! command -v socat >/dev/null; then
	skip_all "socat not installed (scripts/deps installs it)"
fi

T=$(mktemp -d /tmp/cordon-sshlab-t.XXXXXX) || exit 1
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	sshd_cleanup
	rm -rf "$T"
}
trap cleanup EXIT
sshd_up

uid=$(id -u "$SSH_LAB_USER")
out=$(ssh_lab_ssh 'id -un; id -u; pwd')
ok $([ "$out" = "$SSH_LAB_USER"$'\n'"$uid"$'\n'"/home/$SSH_LAB_USER" ] && [ "$uid" != 0 ] &&
	[ "$SSH_LAB_REMOTE" = "$SSH_LAB_USER@127.0.0.1:$SSH_LAB_PORT" ]; echo $?) \
	"a login runs as the lab's account ($SSH_LAB_USER, uid $uid, not root) in its home ($SSH_LAB_REMOTE)"

# the remote's filesystem: /tmp and /home of its own
echo host > "$T/file"
ok $([ -f "$T/file" ] && [ -f "$SSH_LAB_IDENTITY" ]; echo $?) \
	"control: this test's directory and the lab's key are on the host ($T, $SSH_LAB_DIR)"
ssh_lab_ssh "test -e '$T' || test -e '$SSH_LAB_DIR' || ls -A /tmp | grep -q cordon-"
ok $([ $? = 1 ]; echo $?) "... not on the remote: neither is there, nor anything of cordon's in its /tmp"
ssh_lab_ssh "echo remote > /tmp/written-$$ && echo home > ~/written-$$"
out=$(ssh_lab_ssh "cat /tmp/written-$$ ~/written-$$")
ok $([ "$out" = $'remote\nhome' ]; echo $?) "control: the remote keeps what it wrote under /tmp and its home"
ok $([ ! -e "/tmp/written-$$" ] && [ ! -e "/home/$SSH_LAB_USER" ]; echo $?) \
	"... which is not on the host (no /tmp/written-$$, no /home/$SSH_LAB_USER)"
out=$(ssh_lab_ssh 'cat /proc/1/comm; ps -e -o pid= | wc -l')
ok $([ "${out%%$'\n'*}" = sshd ] && [ "${out#*$'\n'}" -lt 10 ] && [ "$(cat /proc/1/comm)" != sshd ]; echo $?) \
	"the remote's processes are its own: its PID 1 is its sshd, a handful in ps ($(echo $out))"

# the host key: the lab's only
ssh-keygen -q -N '' -t ed25519 -f "$T/other" || exit 1
read -r t k _ < "$T/other.pub"
echo "cordon-lab $t $k" > "$T/wrong_hosts"
: > "$T/no_hosts"
SSH_LAB_KNOWN_HOSTS=$T/wrong_hosts ssh_lab_ssh true 2>"$T/wrong.err"
rc=$?
ok $([ "$rc" = 255 ] && grep -q 'IDENTIFICATION HAS CHANGED\|Host key verification failed' "$T/wrong.err"; echo $?) \
	"ssh refuses another host key under the lab's alias (exit $rc)"
SSH_LAB_KNOWN_HOSTS=$T/no_hosts ssh_lab_ssh true 2>"$T/none.err"
rc=$?
ok $([ "$rc" = 255 ] && grep -q 'Host key verification failed' "$T/none.err"; echo $?) \
	"... and a host it does not know (exit $rc)"
cp "$SSH_LAB_KNOWN_HOSTS" "$T/right_hosts"
SSH_LAB_KNOWN_HOSTS=$T/right_hosts ssh_lab_ssh true
ok $? "control: with the lab's host key (\"$SSH_LAB_HOSTKEY_PUB\") it logs in"

# a unix socket forwarded to the remote, on the same path on both sides
socat "UNIX-LISTEN:$T/fwd.sock" SYSTEM:"echo pong-$$" 2>"$T/socat.err" &
pids+=($!)
for _ in $(seq 50); do [ -S "$T/fwd.sock" ] && break; sleep 0.1; done
ssh_lab_ssh "mkdir -p '$T'"
out=$(ssh_lab_ssh "socat -u 'UNIX-CONNECT:$T/fwd.sock' - 2>&1")
ok $([ -S "$T/fwd.sock" ] && [[ $out != *pong* ]]; echo $?) \
	"control: the host listens on $T/fwd.sock, and without -R the remote cannot reach it ($out)"
out=$(ssh_lab_ssh -o ExitOnForwardFailure=yes -R "$T/fwd.sock:$T/fwd.sock" \
	"socat -u 'UNIX-CONNECT:$T/fwd.sock' -" 2>&1)
ok $([ "$out" = "pong-$$" ]; echo $?) "with ssh -R the remote reaches the host's listener on the same path ($out)"

# what a provider runs on the remote (the probe's control: a tool there
# is not), and a native sandbox's namespaces
out=$(ssh_lab_ssh 'for t in sh setsid ps tar find env unshare cordon-no-such-tool; do
	command -v $t >/dev/null || echo $t; done')
ok $([ "$out" = cordon-no-such-tool ]; echo $?) \
	"the remote has sh, setsid, ps, tar, find, env, unshare (missing: $(echo $out), the control)"
out=$(ssh_lab_ssh 'unshare -U -r sh -c "id -u; cat /proc/self/uid_map"; echo :
	unshare -U -r -p -f --mount-proc sh -c "echo \$\$; ps -e -o comm="' 2>&1)
ok $([ "$(echo ${out%%:*})" = "0 0 $uid 1" ]; echo $?) \
	"the lab's account makes a user namespace on the remote, root there mapped to its uid $uid ($(echo ${out%%:*}))"
ok $([ "$(echo ${out#*:})" = "1 sh ps" ]; echo $?) \
	"... and a PID namespace with a /proc of its own: its shell PID 1, ps sees only the two ($(echo ${out#*:}))"

# sshd_cleanup leaves nothing
upid=$sshd_upid user=$SSH_LAB_USER dir=$SSH_LAB_DIR port=$SSH_LAB_PORT
spid=$(pgrep -P "$upid")
ns=$(readlink "/proc/$spid/ns/mnt")
# the processes in the remote's mount namespace
inns() {
	find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/mnt' -printf '%l %p\n' 2>/dev/null | grep -F "$ns "
}
listens() { (: <>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
ok $([ -n "$spid" ] && [ "$(cat "/proc/$spid/comm")" = sshd ] && [ -n "$(inns)" ] && getent passwd "$user" >/dev/null &&
	[ -d "$dir" ] && listens; echo $?) \
	"control: before sshd_cleanup its sshd ($spid) runs, the account and the lab are there, the port answers"
sshd_cleanup
ok $([ -z "$(inns)" ] && ! kill -0 "$upid" 2>/dev/null && ! kill -0 "$spid" 2>/dev/null &&
	! pgrep -u "$uid" >/dev/null && ! getent passwd "$user" >/dev/null && ! getent group "$user" >/dev/null &&
	[ ! -e "$dir" ] && ! listens; echo $?) \
	"after it no process of the remote or the account, no account or group, no lab, the port closed"
tap_done
