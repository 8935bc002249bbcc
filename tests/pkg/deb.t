#!/bin/bash
# deb.t: cordon's Debian package. `make check` has built it (make deb,
# from the release build); this test reads its control data (Depends from
# the shared libraries, the srt tools only suggested, no maintainer
# script, nothing under /etc), installs it with apt on a clean Debian root
# made by mmdebstrap from the archive, and runs the installed files there
# (in a mount namespace whose root is that one: cordon --version, cordon
# doctor, a command in the native sandbox, the daemon's help through
# cordon-host, man cordon, cordon-policy(5), cordon-daemon(8)), with no
# systemd unit enabled by the install; and `make install DESTDIR=`
# installs the same files, the uninstall removing them again.
set -u
src=${CORDON_SRC:?the source tree}
. "$src/tests/host/lib.sh"
version=$(sed -n 's/^VERSION *:= *//p' "$src/Makefile")
deb=$src/build/cordon_${version}_$(dpkg --print-architecture).deb
for t in mmdebstrap bwrap dpkg-deb; do
	command -v "$t" >/dev/null || skip_all "$t not installed (scripts/deps installs it)"
done
[ "$(id -u)" = 0 ] || skip_all "needs root (a Debian root made by mmdebstrap)"
[ -f "$deb" ] || bail "$deb is missing (make deb)"

T=$(mktemp -d /var/tmp/cordon-deb-t.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

# --- the package's control data
dpkg-deb -f "$deb" Package Version Depends Suggests >"$T/control" 2>&1
ok $([ "$(sed -n 's/^Package: //p' "$T/control")" = cordon ] &&
	[ "$(sed -n 's/^Version: //p' "$T/control")" = "$version" ]; echo $?) "the package is cordon $version"
dep=$(sed -n 's/^Depends: //p' "$T/control")
miss=
for lib in libc6 libcurl4 libmicrohttpd12 libarchive13; do
	[[ ", $dep," == *", $lib "* ]] || miss+=" $lib"
done
ok $([ -z "$miss" ]; echo $?) "Depends: the shared libraries cordon-host loads ($dep)${miss:+; missing:$miss}"
ok $(! [[ $dep =~ bubblewrap|socat|ripgrep|libseccomp|libjansson ]]; echo $?) \
	"... not the srt tools, nor the libraries linked in (seccomp, jansson)"
sug=$(sed -n 's/^Suggests: //p' "$T/control")
ok $([[ $sug == *bubblewrap* && $sug == *socat* && $sug == *ripgrep* ]]; echo $?) \
	"Suggests: srt's tools ($sug)"
dpkg-deb --ctrl-tarfile "$deb" | tar -t | sed 's|^\./||; /^$/d' | sort >"$T/ctrl"
ok $([ "$(tr '\n' ' ' <"$T/ctrl")" = "control md5sums " ]; echo $?) \
	"no maintainer script, no conffile: the control part is $(tr '\n' ' ' <"$T/ctrl")"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$T/files"
ok $(! grep -q '^/etc/' "$T/files" && grep -qx /usr/lib/systemd/user/cordon.service "$T/files" &&
	grep -qx /usr/share/bash-completion/completions/cordon "$T/files"; echo $?) \
	"nothing under /etc; the daemon's user unit and the completion where systemd and bash look"

# --- a clean Debian root with the package installed by apt
debname=${deb##*/}
if ! mmdebstrap --quiet --variant=apt --include=man-db --customize-hook="copy-in $deb /tmp" \
	--customize-hook="chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends /tmp/$debname" \
	--customize-hook="rm -f \"\$1/tmp/$debname\"" bookworm "$T/root" >"$T/mm.log" 2>&1; then
	sed 's/^/# /' "$T/mm.log" | tail -20
	bail "mmdebstrap could not make a Debian root with the package"
fi
ok 0 "apt installs the package on a clean bookworm root (mmdebstrap, variant apt)"
# in a mount namespace whose root is that one (pivot_root: the sandbox
# makes user namespaces, which a chroot may not), the host's /proc as it
# is (a sandbox mounts a proc of its own only where one is fully seen)
inroot() {
	local dir=/root
	[ "$1" = --chdir ] && { dir=$2; shift 2; }
	bwrap --bind "$T/root" / --bind /proc /proc --dev /dev --ro-bind /sys /sys --tmpfs /tmp \
		--setenv HOME /root --setenv PATH /usr/sbin:/usr/bin:/sbin:/bin --chdir "$dir" "$@"
}
out=$(inroot cordon --version 2>&1)
ok $([ "$out" = "cordon $version" ]; echo $?) "the installed cordon --version: $out"
out=$(inroot readlink -f /usr/bin/cordon)
ok $([ "$out" = /usr/libexec/cordon/cordon ] && [ -x "$T/root/usr/libexec/cordon/cordon-host" ] &&
	[ -x "$T/root/usr/libexec/cordon/cordon-static" ]; echo $?) \
	"/usr/bin/cordon is /usr/libexec/cordon/cordon, cordon-host and cordon-static beside it"
inroot cordon doctor >"$T/doctor" 2>&1
r=$?
ok $([ $r = 0 ] && grep -q '^native: ready' "$T/doctor"; echo $?) "the installed cordon doctor passes (exit $r)"
[ $r = 0 ] || sed 's/^/# /' "$T/doctor"
mkdir -p "$T/root/root/work" "$T/root/root/.ssh"
echo secret >"$T/root/root/.ssh/id_test"
out=$(inroot --chdir /root/work cordon run -q -- /bin/sh -c \
	'echo made > here; cat /root/.ssh/id_test 2>/dev/null; echo ran' 2>&1)
ok $([ "$out" = ran ] && [ "$(cat "$T/root/root/work/here" 2>/dev/null)" = made ]; echo $?) \
	"a command runs in the installed native sandbox: its write in the workspace kept, ~/.ssh not read ($(echo $out))"
ok $([ "$(inroot cat /root/.ssh/id_test)" = secret ]; echo $?) "control: the key is read outside the sandbox"
out=$(inroot cordon daemon --help 2>&1)
ok $([[ $out == "usage: cordon daemon"* ]]; echo $?) "cordon daemon --help answers through the installed cordon-host"
for page in "1 cordon" "5 cordon-policy" "8 cordon-daemon"; do
	out=$(inroot env MANWIDTH=80 man -P cat $page 2>&1 | head -1)
	ok $([[ $out == "${page#* }(${page%% *})"* ]]; echo $?) "man $page shows the page ($out)"
done
ok $(inroot env MANWIDTH=100 man -P cat cordon 2>/dev/null | grep -q '^ *usage: cordon run'; echo $?) \
	"... man cordon holds cordon run's usage"
ok $([ -z "$(ls -A "$T/root/etc/systemd/user" 2>/dev/null)" ] &&
	! ls "$T"/root/etc/systemd/*/*.wants/cordon* >/dev/null 2>&1; echo $?) \
	"the install enabled no unit (no cordon link under /etc/systemd)"

# --- make install DESTDIR= installs the same files
make -s -C "$src" install DESTDIR="$T/inst" PREFIX=/usr >"$T/inst.log" 2>&1 ||
	{ sed 's/^/# /' "$T/inst.log"; echo "Bail out! make install failed"; exit 1; }
(cd "$T/inst" && find . ! -type d | sed 's|^\.||' | sort) >"$T/installed"
# the package's: man pages compressed, the copyright file its own
sed '/\/$/d; s|\.gz$||; \|^/usr/share/doc/cordon/copyright$|d' "$T/files" | sort >"$T/packaged"
ok $(diff "$T/installed" "$T/packaged" >"$T/diff"; echo $?) \
	"make install DESTDIR= installs the package's files ($(wc -l <"$T/installed") files)"
sed 's/^/# /' "$T/diff"
ok $(cmp -s "$T/inst/usr/lib/systemd/user/cordon.service" "$T/root/usr/lib/systemd/user/cordon.service" &&
	grep -qx 'ExecStart=/usr/bin/cordon daemon' "$T/inst/usr/lib/systemd/user/cordon.service"; echo $?) \
	"... the same unit, which starts /usr/bin/cordon daemon"
make -s -C "$src" uninstall DESTDIR="$T/inst" PREFIX=/usr >"$T/un.log" 2>&1
left=$(cd "$T/inst" && find . ! -type d | wc -l)
ok $([ "$left" = 0 ]; echo $?) "make uninstall removes every file it installed ($left left)"

tap_done
