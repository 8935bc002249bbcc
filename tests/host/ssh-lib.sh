# Shared by the suites that need a remote machine to ssh to (the SSH
# provider's), sourced after lib.sh: the skip when this host cannot, and
# the lab: a real sshd on a loopback port of its own, run as the "remote"
# in mount and PID namespaces of its own, where /tmp, /var/tmp, /home,
# /run and /dev/shm are fresh tmpfs (a host path there, a workspace under
# /tmp say, is not on the remote until copied, and what the remote writes
# there is not on the host), /etc/ssh is the lab's (its sshd_config and a
# host key made for the run) and /proc shows the remote's processes only.
# One login, an account made for the run (not root) whose home is on the
# remote's /home, by a client key made for the run (SSH_LAB_ACCOUNTS=N
# before sshd_up: N such accounts by name, each its own home and the same
# key, for a suite whose bindings each need an account of their own by
# cordon's rule, the user and the host key; they share the first's uid,
# so that every account can make the host's paths there, which the
# first makes owner-only); ssh_lab_ssh is the
# system's ssh client pinned to the lab (its host key only). A test keeps
# its own trap and calls sshd_cleanup from it, as docker-lib.sh's do: it
# ends the remote and every process of the account, removes the account
# and the lab dir, whatever sshd_up got to.
# (CORDON_SSHD: another sshd)
sshd_bin=${CORDON_SSHD:-/usr/sbin/sshd}
# what sshd_up made so far, for sshd_cleanup: the unshare holding the
# remote (its child, sshd, is the remote's PID 1), the accounts (the
# first is $sshd_user)
sshd_upid=
sshd_user=
sshd_users=
SSH_LAB_DIR=
# ssh_skip: `1..0 # SKIP reason` and exit when the lab cannot run here
ssh_skip() {
	local why= t
	if [ "$(id -u)" != 0 ]; then
		why="the SSH lab needs root (an account, namespaces)"
	elif [ ! -x "$sshd_bin" ]; then
		why="sshd not installed (scripts/deps installs openssh-server)"
	else
		for t in ssh ssh-keygen unshare setpriv useradd userdel pgrep; do
			command -v "$t" >/dev/null || { why="$t not installed"; break; }
		done
		[ -n "$why" ] || unshare --mount --pid --fork true 2>/dev/null ||
			why="no mount and PID namespaces here (unshare refused)"
	fi
	[ -z "$why" ] && return 0
	echo "1..0 # SKIP $why"
	exit 0
}
# sshd_bail WHAT: Bail out! with the tail of sshd's log
sshd_bail() {
	echo "Bail out! $1"
	[ -n "$SSH_LAB_DIR" ] && tail -20 "$SSH_LAB_DIR/sshd.log" 2>/dev/null | sed 's/^/# /'
	exit 1
}
# sshd_account: $sshd_user, an account made for the run (added to
# $sshd_users; the first stays $sshd_user): cordon-rt<pid>,
# another suffix while the name is taken (two labs at once, or what a
# killed run left); no home on the host (its home is made on the remote)
# and a password of "*", no login by password but not locked (sshd without
# PAM refuses a locked account even its keys)
sshd_account() {
	local i=0 rc=1 name _ uid=
	[ -z "$sshd_user" ] || uid=$(id -u "$sshd_user")
	for _ in $(seq 40); do
		name=cordon-rt$$
		[ "$i" = 0 ] || name=cordon-rt$$x$i
		useradd -M -d "/home/$name" -s /bin/sh -p '*' -c "cordon SSH lab" ${uid:+-o -u "$uid"} "$name" 2>/dev/null
		rc=$?
		if [ "$rc" = 0 ]; then
			[ -n "$sshd_user" ] || sshd_user=$name
			sshd_users="${sshd_users:+$sshd_users }$name"
			return 0
		fi
		# 9: the name (or its group) is taken; else /etc/passwd is
		# locked by another's useradd: again
		if [ "$rc" = 9 ]; then i=$((i + 1)); else sleep 0.1; fi
	done
	sshd_bail "no account for the SSH lab (useradd: $rc)"
}
# sshd_config PORT: the remote's /etc/ssh/sshd_config (the lab's etc/)
sshd_config() {
	cat > "$SSH_LAB_DIR/etc/sshd_config" <<EOF
# cordon's SSH lab (tests/host/ssh-lib.sh): this file is the remote's
# /etc/ssh/sshd_config
ListenAddress 127.0.0.1
Port $1
HostKey /etc/ssh/ssh_host_ed25519_key
$([ -f "$SSH_LAB_DIR/etc/ssh_host_ecdsa_key" ] && echo "HostKey /etc/ssh/ssh_host_ecdsa_key")
# (it says 1, the remote's PID 1: the host's is unshare's child)
PidFile /etc/ssh/sshd.pid
AuthorizedKeysFile .ssh/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
HostbasedAuthentication no
PermitRootLogin no
UsePAM no
StrictModes yes
AllowUsers $sshd_users
AllowTcpForwarding yes
AllowStreamLocalForwarding yes
StreamLocalBindUnlink yes
PermitUserEnvironment no
X11Forwarding no
PrintMotd no
PrintLastLog no
LogLevel VERBOSE
# scp speaks SFTP: no sftp-server binary needed
Subsystem sftp internal-sftp
EOF
}
# The remote's own mounts, run in its namespaces as their PID 1 before it
# becomes sshd: ARGS the lab's etc/, the accounts, their authorized key. The
# lab's etc/ is bound first (the lab may be under /tmp, which the tmpfs
# hides next).
sshd_remote_sh='set -e
mount --bind "$1" /etc/ssh
for m in /tmp /var/tmp /dev/shm; do mount -t tmpfs -o mode=1777,nosuid,nodev cordon-lab "$m"; done
mount -t tmpfs -o mode=755,nosuid,nodev cordon-lab /home
mount -t tmpfs -o mode=755,nosuid,nodev cordon-lab /run
mkdir -m 755 /run/sshd
for u in $2; do
	mkdir -m 700 "/home/$u" "/home/$u/.ssh"
	printf "%s\n" "$3" > "/home/$u/.ssh/authorized_keys"
	chmod 600 "/home/$u/.ssh/authorized_keys"
	chown -R "$u:" "/home/$u"
done
exec "$4" -D -e -f /etc/ssh/sshd_config'
# sshd_start PORT: the remote on PORT, $sshd_upid; 0 once it listens
# there (says its log: another's on PORT answers too) and the port answers
# with its banner, 2 when it could not bind PORT, else 1 (it exited, or
# 10 s passed)
sshd_start() {
	local _ b
	sshd_config "$1"
	: > "$SSH_LAB_DIR/sshd.log"
	# setpriv: the remote ends with the test's shell, even a killed one;
	# unshare's --kill-child: with unshare, the remote's PID 1, so all of it
	setpriv --pdeathsig KILL unshare --mount --propagation private --pid --fork --kill-child \
		--mount-proc sh -c "$sshd_remote_sh" sh "$SSH_LAB_DIR/etc" "$sshd_users" \
		"$(cat "$SSH_LAB_IDENTITY.pub")" "$sshd_bin" >>"$SSH_LAB_DIR/sshd.log" 2>&1 &
	sshd_upid=$!
	for _ in $(seq 100); do
		if grep -q "^Server listening on 127.0.0.1 port $1\." "$SSH_LAB_DIR/sshd.log"; then
			b=$(timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && head -c 8 <&3' _ "$1" 2>/dev/null)
			[ "$b" = SSH-2.0- ] && return 0
		fi
		if ! kill -0 "$sshd_upid" 2>/dev/null; then
			wait "$sshd_upid" 2>/dev/null
			sshd_upid=
			grep -q 'Cannot bind any address' "$SSH_LAB_DIR/sshd.log" && return 2
			return 1
		fi
		sleep 0.1
	done
	return 1
}
# sshd_up [TEMPLATE]: the lab (mktemp -d TEMPLATE, else under /tmp), its
# remote up and a login by ssh_lab_ssh proven, or Bail out! with sshd's
# log. It exports:
#   SSH_LAB_DIR          the lab (on the host; the remote sees its etc/ only)
#   SSH_LAB_PORT         sshd's port on 127.0.0.1
#   SSH_LAB_USER         the account (not root) logged in as
#   SSH_LAB_USERS        every account (SSH_LAB_ACCOUNTS), the first first
#   SSH_LAB_REMOTE       $SSH_LAB_USER@127.0.0.1:$SSH_LAB_PORT
#   SSH_LAB_IDENTITY     the client's private key (its .pub beside it)
#   SSH_LAB_HOSTKEY_PUB  the host key, "ssh-ed25519 AAAA..."
#   SSH_LAB_HOSTKEY2_PUB with SSH_LAB_HOSTKEY2=1: a second host key the
#                        remote presents too, "ecdsa-sha2-nistp256 AAAA..."
#                        (as a stock sshd has a key of each type)
#   SSH_LAB_KNOWN_HOSTS  a known_hosts holding only it, as cordon-lab
# Call it from the test's shell, not a subshell: the remote lives as long
# as the shell that started it.
sshd_up() {
	local i port t k rc=1
	SSH_LAB_DIR=$(mktemp -d "${1:-/tmp/cordon-sshlab.XXXXXX}") || exit 1
	SSH_LAB_DIR=$(cd "$SSH_LAB_DIR" && pwd -P)
	export SSH_LAB_DIR SSH_LAB_IDENTITY=$SSH_LAB_DIR/id_ed25519 SSH_LAB_KNOWN_HOSTS=$SSH_LAB_DIR/known_hosts
	mkdir -m 755 "$SSH_LAB_DIR/etc" || exit 1
	ssh-keygen -q -N '' -t ed25519 -C cordon-lab-host -f "$SSH_LAB_DIR/etc/ssh_host_ed25519_key" &&
		ssh-keygen -q -N '' -t ed25519 -C cordon-lab-client -f "$SSH_LAB_IDENTITY" ||
		sshd_bail "ssh-keygen"
	read -r t k _ < "$SSH_LAB_DIR/etc/ssh_host_ed25519_key.pub"
	export SSH_LAB_HOSTKEY_PUB="$t $k"
	if [ "${SSH_LAB_HOSTKEY2:-0}" = 1 ]; then
		ssh-keygen -q -N '' -t ecdsa -C cordon-lab-host2 -f "$SSH_LAB_DIR/etc/ssh_host_ecdsa_key" ||
			sshd_bail "ssh-keygen"
		read -r t k _ < "$SSH_LAB_DIR/etc/ssh_host_ecdsa_key.pub"
		export SSH_LAB_HOSTKEY2_PUB="$t $k"
	fi
	echo "cordon-lab $SSH_LAB_HOSTKEY_PUB" > "$SSH_LAB_KNOWN_HOSTS"
	for i in $(seq "${SSH_LAB_ACCOUNTS:-1}"); do sshd_account; done
	export SSH_LAB_USER=$sshd_user SSH_LAB_USERS=$sshd_users
	# a port from the pid, below the kernel's ephemeral range; the next
	# while one listens there, or sshd cannot bind it (another lab's, the
	# same moment)
	for i in $(seq 0 19); do
		port=$((20000 + ($$ * 31 + i * 7919) % 12000))
		(: <>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
		sshd_start "$port"
		rc=$?
		[ "$rc" = 2 ] && continue
		[ "$rc" = 0 ] && break
		sshd_bail "the SSH lab's sshd did not start"
	done
	[ "$rc" = 0 ] || sshd_bail "no free port for the SSH lab's sshd"
	export SSH_LAB_PORT=$port SSH_LAB_REMOTE=$SSH_LAB_USER@127.0.0.1:$port
	ssh_lab_ssh true 2>>"$SSH_LAB_DIR/sshd.log" || sshd_bail "no login to the SSH lab ($SSH_LAB_REMOTE)"
}
# ssh_lab_ssh ARGS...: the system's ssh to the lab, as its account
# ($SSH_LAB_AS, another of $SSH_LAB_USERS, when set), by its
# key only, trusting its host key only ($SSH_LAB_KNOWN_HOSTS, a test may
# point it at another), no config, agent or known_hosts of the host's;
# ARGS: options (-R ...), then the remote command
ssh_lab_ssh() {
	ssh -F /dev/null -p "$SSH_LAB_PORT" -i "$SSH_LAB_IDENTITY" -o IdentitiesOnly=yes \
		-o IdentityAgent=none -o BatchMode=yes -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$SSH_LAB_KNOWN_HOSTS" -o GlobalKnownHostsFile=/dev/null \
		-o HostKeyAlias=cordon-lab -o UpdateHostKeys=no -o ConnectTimeout=10 \
		"${SSH_LAB_AS:-$SSH_LAB_USER}@127.0.0.1" "$@"
}
# sshd_cleanup: for the test's trap, whatever happened: the remote ended
# (its PID 1, unshare's child, killed by its pid while unshare waits for
# it: the kernel kills the rest of the remote, every process of the
# account's, with it and nothing is left unreaped), the account once the
# last of its processes is gone, the lab dir; again is harmless
sshd_cleanup() {
	local _ u spid
	if [ -n "$sshd_upid" ]; then
		spid=$(child_pids "$sshd_upid")
		# shellcheck disable=SC2086
		if [ -n "$spid" ]; then kill -KILL $spid 2>/dev/null; else kill -KILL "$sshd_upid" 2>/dev/null; fi
		wait "$sshd_upid" 2>/dev/null
		sshd_upid=
	fi
	for u in $sshd_users; do
		for _ in $(seq 50); do pgrep -u "$u" >/dev/null || break; sleep 0.1; done
		# (/etc/passwd may be locked by another's useradd a moment)
		for _ in $(seq 50); do
			userdel "$u" 2>/dev/null && break
			getent passwd "$u" >/dev/null || break
			sleep 0.1
		done
	done
	sshd_user= sshd_users=
	[ -n "$SSH_LAB_DIR" ] && rm -rf "$SSH_LAB_DIR"
	SSH_LAB_DIR=
}
# ssh_masters_end STATE: the SSH provider's master connections (its
# ControlPath sockets, <STATE>/containers/ssh/*.mux), each ended by the pid
# it answers with on its own socket
ssh_masters_end() {
	local s pid
	for s in "$1"/containers/ssh/*.mux; do
		[ -S "$s" ] || continue
		pid=$(ssh -F /dev/null -S "$s" -O check cordon-lab 2>&1 |
			sed -n 's/^Master running (pid=\([0-9]*\)).*/\1/p')
		[ -n "$pid" ] && kill "$pid" 2>/dev/null
	done
	return 0
}
