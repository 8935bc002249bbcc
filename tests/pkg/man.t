#!/bin/bash
# man.t: the man pages `make check` built (build/man/, scdoc sources in
# docs/man/) say what --help says: every line of each command's --help
# is a line of cordon(1) as man renders it, and cordon daemon's of
# cordon-daemon(8) (a made-up line is not, the control); each page
# renders with its name; every command `cordon --help` lists has its
# section, and no internal one does.
set -u
src=${CORDON_SRC:?the source tree}
. "$src/tests/host/lib.sh"
cordon=$src/build/cordon
command -v man >/dev/null || skip_all "man not installed (scripts/deps installs man-db)"
for p in cordon.1 cordon-policy.5 cordon-daemon.8; do
	[ -f "$src/build/man/$p" ] || bail "build/man/$p is missing (make man)"
done
T=$(mktemp -d /tmp/cordon-man-t.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

# a page as man shows it, one line each, spaces squeezed
render() { LC_ALL=C.UTF-8 MANWIDTH=250 man -l "$src/build/man/$1" 2>/dev/null | sed 's/^ *//; s/  */ /g'; }
# are all lines of stdin lines of file $1?
all_in() {
	local l m missing=0
	while IFS= read -r l; do
		m=$(printf '%s' "$l" | sed 's/^ *//; s/  */ /g')
		[ -z "$m" ] && continue
		grep -qxF -- "$m" "$1" || { echo "# missing: $m" >&2; missing=1; }
	done
	return $missing
}
for file in cordon.1 cordon-policy.5 cordon-daemon.8; do
	render "$file" >"$T/$file"
	want="${file%.*}(${file##*.})"
	head -1 "$T/$file" | grep -qF "$want"
	ok $? "$file renders, named $want"
done

cmds=$("$cordon" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
ok $([ "$(echo $cmds | wc -w)" -ge 10 ]; echo $?) "cordon --help lists the commands ($(echo $cmds))"
for c in $cmds; do
	"$cordon" $c --help >"$T/help" 2>&1 || echo "# cordon $c --help failed"
	ok $(grep -qxF "cordon $c" "$T/cordon.1" && all_in "$T/cordon.1" <"$T/help"; echo $?) \
		"cordon(1) has a section for $c holding its --help ($(wc -l <"$T/help") lines)"
done
ok $(echo "a line that no --help prints" | all_in "$T/cordon.1" >/dev/null; [ $? = 1 ]; echo $?) \
	"control: a line not in any --help is not found in the page"
internal=0
for c in cinit wrap confine netprobe remote-run; do
	grep -qxF "cordon $c" "$T/cordon.1" && internal=1
done
ok $internal "the internal commands have no section"
"$cordon" daemon --help >"$T/help"
ok $(all_in "$T/cordon-daemon.8" <"$T/help"; echo $?) "cordon-daemon(8) holds cordon daemon --help"

tap_done
