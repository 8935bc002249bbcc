#!/bin/bash
# contrib/bash-completion/cordon, driven as bash drives it (COMP_WORDS
# split at blanks, = and :, COMP_CWORD, COMP_LINE, COMP_POINT, and the
# function's arguments), in plain bash and again with bash-completion's
# _init_completion loaded: the subcommands `cordon --help` lists and not
# the internal ones (which exist: their --help answers); a subcommand's
# verbs and flags as its --help gives them; --provider's values; file
# names and directories after the flags that take them; the bindings of
# the daemon's config (the default path, or --config on the line); the
# job ids of a daemon this test starts (its default state dir, or
# --state-dir on the line, also as --state-dir=DIR). With no daemon, a
# dead one, or one that never answers: no ids, and no wait beyond the
# timeout. Also `cordon job bindings` (sorted; a broken or missing config
# refused with its reason, 125) and `cordon job ls -q`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../../contrib/bash-completion/cordon
. "$here/../host/lib.sh"
need_exec "$CORDON" CORDON
CORDON=$(cd "$(dirname "$CORDON")" && pwd)/$(basename "$CORDON")
if [ ! -x "$CORDON" ] || [ ! -x "$(dirname "$CORDON")/cordon-host" ]; then
	bail "$CORDON or cordon-host beside it is missing"
fi
host_lab /tmp/cordon-completion.XXXXXX
hung=
cleanup() {
	[ -n "$hung" ] && kill "$hung" 2>/dev/null
	host_cleanup
}
trap cleanup EXIT

# the completion runs the `cordon` on PATH: a link to the one under test
mkdir -p "$lab/bin" "$lab/home" "$lab/cfg/cordon" "$lab/xdg" "$lab/ws" "$lab/sdir"
ln -s "$CORDON" "$lab/bin/cordon"
export PATH="$lab/bin:$PATH" HOME="$lab/home" XDG_STATE_HOME="$lab/xdg" XDG_CONFIG_HOME="$lab/cfg"
unset XDG_RUNTIME_DIR SSH_AUTH_SOCK
state=$XDG_STATE_HOME/cordon
# two bindings, out of order in the file
cat > "$lab/config.json" <<JSON
{"bindings": {
  "zulu": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}},
  "alpha-1": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}}}}
JSON
cp "$lab/config.json" "$XDG_CONFIG_HOME/cordon/config.json"
cat > "$lab/other.json" <<JSON
{"bindings": {"gamma": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}}}}
JSON
printf '{"bindings": {"x": {"executor": {"kind": "nope"}, "workspace": {"dir": "%s"}}}}\n' \
	"$lab/ws" > "$lab/broken.json"
: > "$lab/policy.json"
: > "$lab/sfile"

# shellcheck disable=SC1090
if ! . "$script" || ! declare -F _cordon >/dev/null || [ "$(complete -p cordon 2>/dev/null)" != "complete -F _cordon cordon" ]; then
	bail "$script does not define _cordon for cordon"
fi
# bash-completion, when installed: its _init_completion is kept aside, and
# each case runs without it (plain bash) and with it
bc=''
bcf=/usr/share/bash-completion/bash_completion
# shellcheck disable=SC1090
[ -r "$bcf" ] && . "$bcf" && bc=$(declare -f _init_completion)
unset -f _init_completion 2>/dev/null
modes="plain"
[ -n "$bc" ] && modes="plain bash-completion"
use_mode() {
	if [ "$1" = plain ]; then unset -f _init_completion 2>/dev/null; else eval "$bc"; fi
}

# comp LINE: COMPREPLY for LINE, the cursor at its end, a word a line, sorted
comp() {
	local line=$1 rest w=
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMP_WORDS=()
	rest=$line
	while [ -n "$rest" ]; do
		case ${rest:0:1} in
		[[:space:]]) [ -n "$w" ] && COMP_WORDS+=("$w"); w= ;;
		[=:]) [ -n "$w" ] && COMP_WORDS+=("$w"); COMP_WORDS+=("${rest:0:1}"); w= ;;
		*) w+=${rest:0:1} ;;
		esac
		rest=${rest:1}
	done
	[ -n "$w" ] && COMP_WORDS+=("$w")
	case $line in *[[:space:]]) COMP_WORDS+=("") ;; esac
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	# bash's $2: the text after the last break; $3: the word before it
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]-}
	case $cur in [=:]) prev=$cur cur= ;; esac
	COMPREPLY=()
	_cordon cordon "$cur" "$prev"
	[ ${#COMPREPLY[@]} -gt 0 ] && printf '%s\n' "${COMPREPLY[@]}" | sort -u
}
words() { printf '%s\n' "$@" | sort -u; }
# is LINE's completion WORDS exactly? (the found set in a comment if not)
same() {
	local got want
	got=$(comp "$1")
	want=$(words "${@:2}")
	[ "$got" = "$want" ] && return 0
	echo "# '$1' gave: ${got//$'\n'/ }" >&2
	echo "#   wanted: ${want//$'\n'/ }" >&2
	return 1
}
now() { echo "${EPOCHREALTIME/./}"; }	# microseconds

# ---- cordon job bindings and its refusals (no daemon: none is started yet)
out=$("$CORDON" job bindings 2>"$lab/err"); rc=$?
ok $([ "$rc" = 0 ] && [ "$out" = "$(printf 'alpha-1\nzulu')" ] && [ ! -e "$state" ]; echo $?) \
	"job bindings: the default config's bindings, sorted, with no daemon (and no state dir made)"
out=$("$CORDON" job bindings --config "$lab/other.json"); rc=$?
out2=$("$CORDON" job --config "$lab/other.json" bindings)
ok $([ "$rc" = 0 ] && [ "$out" = gamma ] && [ "$out2" = gamma ]; echo $?) \
	"job bindings --config FILE: that file's (the flag before the verb too)"
out=$("$CORDON" job bindings --config "$lab/broken.json" 2>"$lab/err"); rc=$?
ok $([ "$rc" = 125 ] && [ -z "$out" ] &&
	grep -q "^cordon: sandbox_config: config \`$lab/broken.json\`: bindings.x.executor.kind: " "$lab/err";
	echo $?) "... a config the daemon would refuse: 125, its reason on stderr, nothing on stdout"
out=$(XDG_CONFIG_HOME=$lab/nowhere "$CORDON" job bindings 2>"$lab/err"); rc=$?
ok $([ "$rc" = 125 ] && [ -z "$out" ] && grep -q "^cordon: sandbox_config: config \`$lab/nowhere/cordon/config.json\`" "$lab/err";
	echo $?) "... a missing default config: 125, naming the path the daemon would read"
"$CORDON" job bindings extra 2>/dev/null; rc1=$?
"$CORDON" job --config "$lab/other.json" ls 2>/dev/null; rc2=$?
ok $([ "$rc1" = 125 ] && [ "$rc2" = 125 ]; echo $?) "... an argument, or --config with another verb: usage, 125"
"$CORDON" job --help | grep -q '^ *cordon job bindings \[--config FILE\]$' &&
	"$CORDON" job --help | grep -q '^ *cordon job ls \[--json | -q|--quiet\]$'
ok $? "job --help's usage names bindings and ls -q"

# ---- completion without a daemon
listed=$("$CORDON" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
run_flags=$({ "$CORDON" run --help | grep -o -- '--[a-z][a-z-]*'; echo --help; } | sort -u)
for mode in $modes; do
	use_mode "$mode"
	# shellcheck disable=SC2086
	ok $([ "$(echo $listed | wc -w)" -ge 10 ] && same "cordon " $listed; echo $?) \
		"[$mode] cordon <TAB>: the commands --help lists ($(echo $listed))"
	bad=
	all=$(comp "cordon ")
	# (each internal command in plain bash; one again with bash-completion)
	internal="cinit wrap remote-run confine netprobe"
	[ "$mode" = plain ] || internal=remote-run
	for c in $internal; do
		"$CORDON" "$c" --help >/dev/null 2>&1 || bad="$bad $c(no --help)"
		echo "$all" | grep -qx "$c" && bad="$bad $c"
		comp "cordon ${c:0:2}" | grep -qx "$c" && bad="$bad $c"
		[ -n "$(comp "cordon $c --")" ] && bad="$bad $c(flags)"
	done
	ok $([ -z "$bad" ] && same "cordon c" container && same "cordon r" run; echo $?) \
		"[$mode] the internal commands (which exist) are never offered, nor their flags${bad:+:$bad}"
	# shellcheck disable=SC2086
	ok $(echo "$run_flags" | grep -qx -- --deny-read && same "cordon run --de" --deny-read &&
		same "cordon run --" $run_flags; echo $?) \
		"[$mode] cordon run --<TAB>: the flags of run's --help"
	ok $(same "cordon run --provider " native srt && same "cordon plan --provider=s" srt &&
		same "cordon doctor --provider n" native; echo $?) "[$mode] --provider: native, srt"
	ok $(same "cordon policy " check default $("$CORDON" policy --help | grep -o 'cordon policy import-srt' | cut -d' ' -f3) &&
		same "cordon job b" bindings && same "cordon tb " call mcp git-credential &&
		same "cordon tb git-credential " get store erase &&
		same "cordon docker " gateway-image doctor && same "cordon ssh " doctor; echo $?) \
		"[$mode] verbs: policy, job, tb (and git-credential's), docker, ssh"
	ok $(same "cordon job ls --" --json --quiet --state-dir && same "cordon job bindings --" --config --state-dir &&
		same "cordon docker gateway-image --" --context --endpoint &&
		same "cordon job --" --help --state-dir; echo $?) \
		"[$mode] a verb's flags: its usage line's and the usage's common ones"
	ok $(same "cordon run -p $lab/pol" "$lab/policy.json" && same "cordon run --policy=$lab/pol" "$lab/policy.json" &&
		same "cordon policy check $lab/pol" "$lab/policy.json" &&
		same "cordon job --state-dir $lab/s" "$lab/sdir" && same "cordon run --write $lab/s" "$lab/sdir" "$lab/sfile";
		echo $?) "[$mode] FILE and PATH: file names; DIR: directories only"
	ok $(same "cordon run -- trU" && same "cordon run -- tru" $(compgen -c -- tru | sort -u); echo $?) \
		"[$mode] run -- CMD: a command"
	ok $(same "cordon job start " alpha-1 zulu && same "cordon job start a" alpha-1 &&
		same "cordon job --config $lab/other.json start " gamma &&
		same "cordon job --config=$lab/other.json start " gamma && same "cordon job start alpha-1 " &&
		XDG_CONFIG_HOME=$lab/nowhere same "cordon job start "; echo $?) \
		"[$mode] job start BINDING: the config's bindings (--config on the line; nothing when it does not load)"
	t0=$(now)
	ok $(CORDON_COMPLETION_TIMEOUT=20 same "cordon job show " &&
		CORDON_COMPLETION_TIMEOUT=20 same "cordon job --state-dir $lab/none logs "; echo $?) \
		"[$mode] no daemon: no job ids"
	ms=$((($(now) - t0) / 1000))
	ok $([ "$ms" -lt 10000 ]; echo $?) "[$mode] ... at once (${ms}ms for two, with a 20s timeout)"
done

# ---- a daemon and its jobs
start_daemon
ok $? "the daemon starts (on the default state dir)"
id1=$("$CORDON" job start zulu --wait -- true)
id2=$("$CORDON" job start alpha-1 --wait -- sh -c 'exit 3'); rc=$?
ok $([ -n "$id1" ] && [ -n "$id2" ] && [ "$rc" = 3 ]; echo $?) "two quick shell jobs ran"
out=$("$CORDON" job ls -q 2>"$lab/err"); rc=$?
out2=$("$CORDON" job ls --quiet --state-dir "$state")
ok $([ "$rc" = 0 ] && [ "$(echo "$out" | sort)" = "$(words "$id1" "$id2")" ] && [ "$out2" = "$out" ] &&
	! grep -q 'AddressSanitizer\|runtime error' "$lab/err"; echo $?) \
	"job ls -q and --quiet: the ids alone, a line each"
ok $("$CORDON" job ls | grep -q "^$id1 " && ! "$CORDON" job ls -q --json >/dev/null 2>&1; echo $?) \
	"... (ls without it: the table; -q with --json: usage)"
# the shortest start of id1 that id2 does not share
for ((i = 1; i <= ${#id1}; i++)); do pfx1=${id1:0:i}; [ "${id2:0:i}" != "$pfx1" ] && break; done
export CORDON_COMPLETION_TIMEOUT=20	# the sanitizers' start is slow
for mode in $modes; do
	use_mode "$mode"
	bad=
	verbs="show wait stop interrupt inject logs attach fetch"
	[ "$mode" = plain ] || verbs="show fetch"
	for v in $verbs; do
		same "cordon job $v " "$id1" "$id2" 2>/dev/null || bad="$bad $v"
	done
	ok $([ -z "$bad" ]; echo $?) "[$mode] job ${verbs// /|} <TAB>: the ids${bad:+ (not:$bad)}"
	ok $(same "cordon job logs $pfx1" "$id1" && same "cordon job inject $id1 " &&
		same "cordon job ls " && same "cordon job start " alpha-1 zulu; echo $?) \
		"[$mode] ... what was typed narrows them; not in another place, nor for ls or start"
	ok $(same "cordon job --state-dir $state show " "$id1" "$id2" && same "cordon job show --state-dir=$state " "$id1" "$id2" &&
		same "cordon job --state-dir $lab/none show "; echo $?) \
		"[$mode] --state-dir on the line (also --state-dir=DIR) is the daemon asked"
done
kill -TERM "$dpid" && wait "$dpid" 2>/dev/null
dpid=
unset CORDON_COMPLETION_TIMEOUT
sanitizer_ok

# a daemon gone (its token left), and a socket that never answers
mkdir -p "$lab/hung/private"
cp "$state/private/operator.token" "$lab/hung/private/"
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
while True: time.sleep(60)' "$lab/hung/management.sock" &
hung=$!
for _ in $(seq 100); do [ -S "$lab/hung/management.sock" ] && break; sleep 0.05; done
timeout 3 "$CORDON" job --state-dir "$lab/hung" ls -q >/dev/null 2>&1
ok $([ "$?" = 124 ]; echo $?) "control: a client of the silent socket waits (killed by timeout after 3s)"
for mode in $modes; do
	use_mode "$mode"
	t0=$(now)
	CORDON_COMPLETION_TIMEOUT=20 same "cordon job show "
	ok $? "[$mode] the daemon stopped, its token left: no ids"
	ms=$((($(now) - t0) / 1000))
	ok $([ "$ms" -lt 10000 ]; echo $?) "[$mode] ... at once (${ms}ms, with a 20s timeout)"
	t0=$(now)
	CORDON_COMPLETION_TIMEOUT=1 same "cordon job --state-dir $lab/hung show "
	ok $? "[$mode] a daemon that never answers: no ids"
	ms=$((($(now) - t0) / 1000))
	ok $([ "$ms" -lt 6000 ]; echo $?) "[$mode] ... within the timeout (${ms}ms, with 1s)"
done

tap_done
