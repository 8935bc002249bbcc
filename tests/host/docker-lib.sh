# Shared by the suites that run a dockerd of their own (engine.t,
# docker.t, docker-doctor.t), sourced after lib.sh: the skips when this
# host cannot, that dockerd on a directory under the test's lab (its data
# and exec roots, socket, pidfile, log; the docker CLI, the control,
# pointed at it), stopped and started again, what it leaves behind at the
# end, the busybox image made without a registry, and the check that what
# a test kept of cordon's stderr has no sanitizer's report. A test keeps
# its own trap and calls dockerd_cleanup from it.
# (CORDON_DOCKERD: another dockerd, or none)
dockerd=${CORDON_DOCKERD:-$(command -v dockerd || echo /usr/sbin/dockerd)}
dk=
sock=
ddpid=
# docker_skip: `1..0 # SKIP reason` and exit when the test cannot run here
docker_skip() {
	local why=
	if [ ! -x "$dockerd" ]; then
		why="dockerd not installed"
	elif [ "$(id -u)" != 0 ]; then
		why="dockerd needs root"
	elif ! command -v docker >/dev/null; then
		why="docker CLI not installed (the control)"
	elif [ ! -x /bin/busybox ] || readelf -l /bin/busybox 2>/dev/null | grep -q INTERP; then
		why="no static /bin/busybox (busybox-static) to make the image from"
	fi
	[ -z "$why" ] && return 0
	echo "1..0 # SKIP $why"
	exit 0
}
# docker_static: $static, cordon's static binary (CORDON_STATIC, else
# build/cordon-static beside the build $CORDON is from); bails out without
docker_static() {
	static=${CORDON_STATIC:-$(cd "$(dirname "$CORDON")" && cd .. && pwd)/cordon-static}
	[ -x "$static" ] || static=$(cd "$(dirname "$CORDON")" && pwd)/cordon-static
	[ -x "$static" ] && return 0
	echo "Bail out! no cordon-static (make build/cordon-static)"
	exit 1
}
# dockerd_up DIR: dockerd on DIR (made here; $dk), its socket $sock, the
# docker CLI's DOCKER_HOST and a DOCKER_CONFIG of the test's own (the
# contexts a test makes stay in DIR/cli). A dockerd that does not answer
# bails out with the tail of its log.
dockerd_up() {
	dk=$1 sock=$1/docker.sock
	mkdir -p "$dk/cli" || exit 1
	# an empty config of its own: not the host's /etc/docker/daemon.json
	# (whose hosts, bridge or data root would fight the flags below)
	echo '{}' > "$dk/daemon.json"
	export DOCKER_HOST=unix://$sock DOCKER_CONFIG=$dk/cli
	dockerd_start && return 0
	echo "Bail out! dockerd did not start"
	tail -20 "$dk/dockerd.log" | sed 's/^/# /'
	exit 1
}
# dockerd_start: dockerd on $dk again (after dockerd_stop), its pid
# $ddpid; 0 once it answers _ping, 1 when it exits or 60 s pass. It leaves
# the host's firewall and bridges alone: a network a test needs it makes.
dockerd_start() {
	"$dockerd" --config-file "$dk/daemon.json" --data-root "$dk/root" --exec-root "$dk/exec" \
		-H "unix://$sock" --pidfile "$dk/pid" --iptables=false --ip-masq=false --bridge=none \
		>>"$dk/dockerd.log" 2>&1 &
	ddpid=$!
	for _ in $(seq 600); do
		curl -sf --unix-socket "$sock" http://d/_ping >/dev/null 2>&1 && return 0
		kill -0 "$ddpid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# dockerd_stop: TERM, up to 30 s for its containers to stop, then KILL
dockerd_stop() {
	[ -n "$ddpid" ] || return 0
	kill -TERM "$ddpid" 2>/dev/null
	for _ in $(seq 300); do kill -0 "$ddpid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$ddpid" 2>/dev/null
	wait "$ddpid" 2>/dev/null
	ddpid=
}
# dockerd_cleanup DIR [PID...]: for the test's trap, whatever happened:
# the test's own children PID... killed, dockerd stopped, the children
# reaped; then what dockerd left: only the processes naming DIR/ (its
# containerd, the shims) killed and the mounts under DIR/ unmounted,
# deepest first, so that removing the lab removes files only. DIR:
# dockerd's, or a wider one of the test's (its lab).
dockerd_cleanup() {
	local d=$1 p c
	shift
	for p in "$@"; do kill -KILL "$p" 2>/dev/null; done
	dockerd_stop
	wait 2>/dev/null
	# (no directory yet: nothing to find, and "/" would name every process)
	[ -n "$d" ] || return 0
	for p in /proc/[0-9]*; do
		c=$({ tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null)
		[[ $c == *"$d/"* ]] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	findmnt -rn -o TARGET 2>/dev/null | grep -F "$d/" | sort -r | while read -r m; do umount -l "$m"; done
}
# busybox_image TAG: the ID of an image TAG imported from $dk/rootfs:
# /bin/busybox and a link to it for each applet (/bin/sh, ...), /tmp and
# /etc; empty when the import failed
busybox_image() {
	local r=$dk/rootfs t
	mkdir -p "$r/bin" "$r/tmp" "$r/etc"
	cp /bin/busybox "$r/bin/busybox"
	for t in $("$r/bin/busybox" --list); do ln -s busybox "$r/bin/$t" 2>/dev/null; done
	tar -C "$r" -cf - . | docker import - "$1" 2>/dev/null
}
# sanitizer_clean FILE WHAT: ok WHAT when FILE, the stderr a test kept of
# cordon's sanitizer build, holds no sanitizer's report; else its head
sanitizer_clean() {
	if grep -q 'ERROR: AddressSanitizer\|runtime error\|LeakSanitizer' "$1"; then
		ok 1 "$2"; sed 's/^/# /' "$1" | head -40
	else
		ok 0 "$2"
	fi
}
