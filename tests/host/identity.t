#!/bin/bash
# A directory is compared by what it is, never by its spelling. A claude
# that runs as the operator (an unsandboxed claude-code job, its attach)
# never starts in, nor takes its config from, a place a sandboxed run
# wrote or a sandboxed binding may write: not spelled exactly the same
# (the control the string compare already refused), not with a trailing
# '/', through a link, as a subdirectory, nor inside another write grant;
# an unrelated directory is allowed (the control). At load, a config
# whose unsandboxed claude's config directory is a place a sandboxed
# binding writes is refused, whatever the spelling; after that binding is
# gone, the launch still finds its grant in the history.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRC=${CORDON_SRC:-$(cd "$here/../.." && pwd)}
. "$here/lib.sh"
need_exec "$CORDON" CORDON
# (a short name: srt's socket dir, <state>/srt, leaves room for its sockets)
host_lab /var/tmp/cordon-id.XXXXXX
# (host_cleanup ends every process of the jobs, by their pinned roots)
trap host_cleanup EXIT
host_own_cordon
# (this user's processes only: the suite may run as root and as another
# user at once, tests/host/unprivileged.t)
me=$(id -u)
if ! unshare --user --map-root-user true 2>/dev/null; then
	skip_all "no user namespaces here: no native sandbox to write anything"
fi
mkdir -p "$lab/bin" "$lab/home/.claude" "$lab/s1" "$lab/s2" "$lab/s3" "$lab/s4/sub" "$lab/s5" \
	"$lab/s6" "$lab/a5" "$lab/free" "$lab/cc" "$lab/hostcc"
# srt where it is installed: an agent of its own (s6, h7)
srt=
command -v srt >/dev/null && srt=yes
cp "$SRC/tests/helpers/claude-standin" "$lab/bin/claude"
ln -s "$lab/s3" "$lab/s3link"
ln -s "$lab/cc" "$lab/cclink"
echo '{}' > "$lab/home/.claude/settings.json"
lab_env "$lab"
export PATH="$lab/bin:$PATH"

# The operator's claude jobs, one per spelling; HOSTCC: their config dir.
hosts() {
	local env=""
	[ -n "${1-}" ] && env=", \"env\": {\"CLAUDE_CONFIG_DIR\": \"$1\"}"
	cat <<JSON
  "h1": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/s1"}$env},
  "h2": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/s2/"}$env},
  "h3": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/s3link"}$env},
  "h4": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/s4/sub"}$env},
  "h5": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/s5"}$env},
  "h6": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/free"}$env}
JSON
	[ -n "$srt" ] && cat <<JSON
  , "h7": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/s6/"}$env}
JSON
}
# Sandboxed agents that plant a hook where claude looks: a1..a4 on s1..s4
# (spelled plainly), a5 on its own with a second write grant, s5.
printf '%s\n' 'mkdir -p .claude && echo "{\"hooks\": {}}" > .claude/settings.json' > "$lab/plant.sh"
agents() {
	local i
	for i in 1 2 3 4; do
		cat <<JSON
  "a$i": {"executor": {"kind": "shell", "args": ["sh", "$lab/plant.sh"]}, "workspace": {"dir": "$lab/s$i"},
    "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}},
JSON
	done
	cat <<JSON
  "a5": {"executor": {"kind": "shell", "args": ["sh", "-c", "cd $lab/s5 && sh $lab/plant.sh"]},
    "workspace": {"dir": "$lab/a5"},
    "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "$lab/s5"]}}}
JSON
	[ -n "$srt" ] && cat <<JSON
  , "a6": {"executor": {"kind": "shell", "args": ["sh", "$lab/plant.sh"]}, "workspace": {"dir": "$lab/s6"},
    "sandbox": {"provider": "srt", "policy": {"write": ["{workspace}"]}}}
JSON
}
printf '{"bindings": {\n%s}}\n' "$(hosts)" > "$lab/config.json"
start_daemon
ok $? "the daemon starts"

# ---- before any sandbox ran: the operator's claude runs everywhere
for i in 1 2 3 4 5 6 ${srt:+7}; do
	id=$(job start "h$i" --wait -- hello); rc=$?
	eval "h$i=\$id"
	ok $([ "$rc" = 0 ] && [ -n "$(job show --json "$id" | jfield session)" ]; echo $?) \
		"h$i: an unsandboxed claude job runs while no sandbox wrote its workspace, and keeps its session"
done
rm -f "$lab"/s*/standin-report.json "$lab"/s4/sub/standin-report.json "$lab/free/standin-report.json"
echo '{}' > "$lab/home/.claude/settings.json"

# ---- at load: the operator's claudes beside agents that may write their
# workspaces (the same, with a '/', through a link, holding them) are
# refused; the agents alone load
printf '{"bindings": {\n%s,\n%s}}\n' "$(hosts)" "$(agents)" > "$lab/config.json"
r=$(api POST /v1/jobs '{"binding": "h6", "args": ["hi"]}')
ok $(printf '%s' "$r" | grep -q 'sandbox_config' && printf '%s' "$r" | grep -q 'its workspace or config directory' &&
	[ ! -e "$lab/free/standin-report.json" ]; echo $?) \
	"unsandboxed claudes beside sandboxed agents that may write their workspaces: the config is refused (sandbox_config), nothing run"

# ---- the agents run, sandboxed, and plant hooks
printf '{"bindings": {\n%s}}\n' "$(agents)" > "$lab/config.json"
for i in 1 2 3 4 5 ${srt:+6}; do
	id=$(job start "a$i" --wait); rc=$?
	ok $([ "$rc" = 0 ] && [ -s "$state/runs/$id/sandbox/1/sandbox-root" ]; echo $?) \
		"a$i: a sandboxed agent runs and plants .claude/settings.json; its record names its sandbox's first process"
done
ok $([ -f "$lab/s2/.claude/settings.json" ] && [ -f "$lab/s5/.claude/settings.json" ]; echo $?) \
	"... its hooks are there (in its workspace, and in s5 through its second write grant)"
printf '{"bindings": {\n%s}}\n' "$(hosts)" > "$lab/config.json"

# ---- attach: refused on every spelling, allowed on an unrelated dir
attach_refused() { # JOB DESCRIPTION
	job attach "$1" </dev/null >"$lab/attach.out" 2>"$lab/attach.err"; local rc=$?
	ok $([ "$rc" = 125 ] && grep -q 'cordon: attach_sandboxed:' "$lab/attach.err"; echo $?) "$2"
}
attach_refused "$h1" "attach in the agent's workspace spelled the same: refused (the control)"
attach_refused "$h2" "attach in it spelled with a trailing '/': refused"
attach_refused "$h3" "attach in it through a link: refused"
attach_refused "$h4" "attach in a subdirectory of it: refused"
attach_refused "$h5" "attach in a directory another of the agent's write grants holds: refused"
[ -n "$srt" ] && attach_refused "$h7" "srt: attach in an srt agent's workspace spelled with a trailing '/': refused"
job attach "$h6" </dev/null >"$lab/attach.out" 2>"$lab/attach.err"; rc=$?
ok $([ "$rc" = 0 ] && [ "$(head -n 1 "$lab/attach.out" | jfield cwd)" = "$lab/free" ]; echo $?) \
	"attach in an unrelated directory runs claude --resume there (the control)"

# ---- launch: the same
launch_refused() { # BINDING DESCRIPTION
	local r id ws
	ws=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bindings"][sys.argv[2]]["workspace"]["dir"])' "$lab/config.json" "$1")
	rm -f "$ws/standin-report.json"
	r=$(api POST /v1/jobs "{\"binding\": \"$1\", \"args\": [\"hi\"]}")
	id=$(printf '%s' "${r#* }" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("id",""))' 2>/dev/null)
	[ -n "$id" ] && job wait "$id" >/dev/null 2>&1
	ok $( { printf '%s' "$r" | grep -q 'sandbox_denied' || { [ -n "$id" ] && job show --json "$id" | grep -q 'sandbox_denied'; }; } &&
		[ ! -e "$ws/standin-report.json" ]; echo $?) "$2"
}
launch_refused h1 "an unsandboxed claude job in the agent's workspace, spelled the same: refused, nothing run (no launch was refused before)"
launch_refused h2 "... with a trailing '/': refused, nothing run"
launch_refused h3 "... through a link: refused, nothing run"
launch_refused h4 "... in a subdirectory: refused, nothing run"
launch_refused h5 "... inside another of its write grants: refused, nothing run"
[ -n "$srt" ] && launch_refused h7 "srt: ... in an srt agent's workspace spelled with a trailing '/': refused, nothing run"
id=$(job start h6 --wait -- hello); rc=$?
ok $([ "$rc" = 0 ] && [ -s "$lab/free/standin-report.json" ]; echo $?) "... in an unrelated directory: runs (the control)"
ok $([ ! -e /tmp/standin-planted-ran ]; echo $?) "nothing planted ran"
echo '{}' > "$lab/home/.claude/settings.json"

# ---- claude's config dir: at load, against what a sandboxed binding may write
sc() { # the sandboxed claude binding, its config dir $lab/cc, and EXTRA_WRITE
	cat <<JSON
  "sc": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/a5"},
         "env": {"CLAUDE_CONFIG_DIR": "$lab/cc"},
         "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "$lab/cc"${1:+, \"$1\"}],
                                                      "network": {"allow": ["api.anthropic.com"]}}}}
JSON
}
only6() { hosts "$1" | grep '"h6"'; }
load_refused() { # HOST-CONFIG-DIR EXTRA-WRITE DESCRIPTION
	printf '{"bindings": {\n%s,\n%s}}\n' "$(only6 "$1")" "$(sc "$2")" > "$lab/config.json"
	rm -f "$lab/free/standin-report.json"
	local r; r=$(api POST /v1/jobs '{"binding": "h6", "args": ["hi"]}')
	ok $(printf '%s' "$r" | grep -q 'sandbox_config' && printf '%s' "$r" | grep -q 'CLAUDE_CONFIG_DIR' &&
		[ ! -e "$lab/free/standin-report.json" ]; echo $?) "$3"
}
load_refused "$lab/cc" "" "an unsandboxed claude with a sandboxed claude's config dir, spelled the same: the config is refused (sandbox_config), nothing run"
load_refused "$lab/cc/" "" "... spelled with a trailing '/': refused"
load_refused "$lab/cclink" "" "... through a link: refused"
load_refused "$lab/cc/sub" "" "... a directory inside it: refused"
load_refused "$lab/a5/.cfg" "" "... one inside the sandboxed binding's workspace: refused"
load_refused "" "$lab/home" "... ~/.claude (no CLAUDE_CONFIG_DIR) under a sandboxed binding's write grant of the home: refused"
printf '{"bindings": {\n%s,\n%s}}\n' "$(only6 "$lab/hostcc")" "$(sc)" > "$lab/config.json"
id=$(job start h6 --wait -- hello); rc=$?
ok $([ "$rc" = 0 ] && [ -f "$lab/hostcc/standin-state.json" ]; echo $?) \
	"... a config dir of its own beside it: runs (the control)"

# ---- and at launch, from the history, once that binding is gone
job start sc --wait -- plant >/dev/null; rc=$?
ok $([ "$rc" = 0 ] && [ -f "$lab/cc/standin-state.json" ]; echo $?) "the sandboxed claude runs and writes its config dir"
printf '{"bindings": {\n%s}}\n' "$(only6 "$lab/cc/")" > "$lab/config.json"
launch_refused h6 "its config dir, spelled with a '/', by an unsandboxed claude once the sandboxed binding is gone: refused from its recorded grant"
job attach "$h6" </dev/null >"$lab/attach.out" 2>"$lab/attach.err"; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'cordon: attach_sandboxed:' "$lab/attach.err"; echo $?) \
	"... and an attach that would read it: refused"
printf '{"bindings": {\n%s}}\n' "$(only6 "$lab/hostcc")" > "$lab/config.json"
id=$(job start h6 --wait -- hello); rc=$?
ok $([ "$rc" = 0 ]; echo $?) "... its own config dir: runs (the control)"

# ---- reconcile's stray sweep: only what the ended job's record proves
# is its sandbox's, never what merely works in the same directory. sw
# ran and ended on sw; a live job of sw2 runs there through a link, the
# operator's own `cordon run` and a plain process work there too. A
# sandbox the record of sw's job names (its first process by pid and
# start time) that outlived its job is killed; a process of the same
# kind started elsewhere by no record is left (the controls all around).
mkdir -p "$lab/sw" "$lab/elsewhere"
ln -s "$lab/sw" "$lab/swlink"
printf '{"bindings": {\n%s,\n%s}}\n' "$(only6 "$lab/hostcc")" "$(cat <<JSON
  "sw": {"executor": {"kind": "shell", "args": ["true"]}, "workspace": {"dir": "$lab/sw"},
         "sandbox": {"provider": "native"}},
  "sw2": {"executor": {"kind": "shell", "args": ["sleep", "74"]}, "workspace": {"dir": "$lab/swlink"},
         "sandbox": {"provider": "native"}}
JSON
)" > "$lab/config.json"
ended=$(job start sw --wait)
ended2=$(job start sw --wait)
live=$(job start sw2)
(cd "$lab/sw" && exec "$CORDON" run -q --state-dir "$lab/runstate" -w "$lab/sw" -- sleep 75 2>/dev/null) &
bg=$!
(cd "$lab/sw" && exec sleep 76) &
bg="$bg $!"
(cd "$lab/elsewhere" && exec unshare --user --map-root-user --mount --pid --net --fork sleep 77 2>/dev/null) &
bg="$bg $!"
(cd "$lab/elsewhere" && exec unshare --user --map-root-user --mount --pid --net --fork sleep 78 2>/dev/null) &
bg="$bg $!"
for _ in $(seq 300); do
	[ -n "$(pgrep -u "$me" -f '^sleep 74$')" ] && [ -n "$(pgrep -u "$me" -f '^sleep 75$')" ] && [ -n "$(pgrep -u "$me" -f '^sleep 77$')" ] &&
		[ -n "$(pgrep -u "$me" -f '^sleep 78$')" ] && break
	sleep 0.05
done
stray=$(pgrep -u "$me" -f '^sleep 77$')
rec="$state/runs/$ended/sandbox/1"
ok $([ -f "$rec/sandbox-root" ] && [ "$(cut -d' ' -f1 "$rec/sandbox-root")" -gt 1 ]; echo $?) \
	"a sandboxed segment's record names its sandbox's first process (pid and start time)"
# (the sandbox outlived its job: its record names this one; the other
# job's names a pid that is another process now: its start time differs)
sleep 79 & other=$!
rec2="$state/runs/$ended2/sandbox/1"
rm -f "$rec/sandbox-root" "$rec2/sandbox-root"
printf '%s %s\n' "$other" "$(( $(awk '{print $22}' "/proc/$other/stat") + 1 ))" > "$rec2/sandbox-root"
printf '%s %s\n' "$stray" "$(awk '{print $22}' "/proc/$stray/stat")" > "$rec/sandbox-root"
for _ in $(seq 300); do [ -z "$(pgrep -u "$me" -f '^sleep 77$')" ] && break; sleep 0.05; done
ok $([ -z "$(pgrep -u "$me" -f '^sleep 77$')" ]; echo $?) \
	"reconcile kills the sandbox an ended job's record proves still running"
ok $([ -n "$(pgrep -u "$me" -f '^sleep 78$')" ]; echo $?) "... and not one just like it that no record names (the control)"
ok $([ -n "$(pgrep -u "$me" -f '^sleep 74$')" ] && [ "$(job show --json "$live" | jfield result)" = running ]; echo $?) \
	"... nor a live job on the same directory, spelled through a link"
ok $([ -n "$(pgrep -u "$me" -f '^sleep 75$')" ]; echo $?) "... nor the operator's own cordon run there"
ok $([ -n "$(pgrep -u "$me" -f '^sleep 76$')" ]; echo $?) "... nor a plain process there"
job stop "$live" >/dev/null; job wait "$live" >/dev/null
# (each by the pid it was started with, and what it started)
kill_tree KILL $bg
ok $(kill -0 "$other" 2>/dev/null; echo $?) \
	"... nor a process whose pid a record names with another start time (a number used again)"
kill "$other" 2>/dev/null

# ---- a stop's "nothing left" check: the stopped sandbox's own first
# process, never whatever now holds the number its record names. A's
# record is made to name B's pid namespace (the number the kernel would
# give again once A's is gone): stopping A leaves B running.
printf '{"bindings": {\n%s,\n%s}}\n' "$(only6 "$lab/hostcc")" "$(cat <<JSON
  "sa": {"executor": {"kind": "shell", "args": ["sleep", "81"]}, "workspace": {"dir": "$lab/sw"},
         "sandbox": {"provider": "native"}, "grace": 1},
  "sb": {"executor": {"kind": "shell", "args": ["sleep", "82"]}, "workspace": {"dir": "$lab/elsewhere"},
         "sandbox": {"provider": "native"}}
JSON
)" > "$lab/config.json"
ida=$(job start sa); idb=$(job start sb)
for _ in $(seq 300); do [ -n "$(pgrep -u "$me" -f '^sleep 81$')" ] && [ -n "$(pgrep -u "$me" -f '^sleep 82$')" ] && break; sleep 0.05; done
recA="$state/runs/$ida/sandbox/1"
nsb=$(readlink "/proc/$(pgrep -u "$me" -f '^sleep 82$')/ns/pid" | tr -dc 0-9)
rm -f "$recA/sandbox-ns"; printf '%s\n' "$nsb" > "$recA/sandbox-ns"
job stop "$ida" >/dev/null; job wait "$ida" >/dev/null
ok $([ "$(job show --json "$ida" | jfield result)" = stopped ] && [ -z "$(pgrep -u "$me" -f '^sleep 81$')" ]; echo $?) \
	"a stopped sandbox is gone, its stop confirmed (the control)"
ok $([ -n "$(pgrep -u "$me" -f '^sleep 82$')" ] && [ "$(job show --json "$idb" | jfield result)" = running ]; echo $?) \
	"... and the sandbox now holding the pid namespace number its record names runs on"
job stop "$idb" >/dev/null; job wait "$idb" >/dev/null

# ---- the operator's own ~/.claude is denied to every sandboxed binding,
# whatever its executor: a shell agent granted ~ cannot write its
# settings (the control: outside, the operator can); one granted a path
# inside it is refused
printf '%s\n' "echo '{\"hooks\": 1}' > $lab/home/.claude/settings.json; echo \$? > $lab/sw/probe" > "$lab/probe.sh"
printf '{"bindings": {\n%s,\n%s}}\n' "$(only6 "$lab/hostcc")" "$(cat <<JSON
  "wh": {"executor": {"kind": "shell", "args": ["sh", "$lab/probe.sh"]}, "workspace": {"dir": "$lab/sw"},
         "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "~"]}}},
  "wc": {"executor": {"kind": "shell", "args": ["true"]}, "workspace": {"dir": "$lab/sw"},
         "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "~/.claude"]}}}
JSON
)" > "$lab/config.json"
echo '{}' > "$lab/home/.claude/settings.json"
ok $([ -w "$lab/home/.claude/settings.json" ]; echo $?) "the operator's ~/.claude/settings.json is writable outside (the control)"
rm -f "$lab/sw/probe"
job start wh --wait >/dev/null
ok $([ -s "$lab/sw/probe" ] && [ "$(cat "$lab/sw/probe")" != 0 ] && [ "$(cat "$lab/home/.claude/settings.json")" = '{}' ]; echo $?) \
	"a sandboxed shell binding granted ~ cannot write ~/.claude/settings.json"
r=$(api POST /v1/jobs '{"binding": "wc"}')
id=$(printf '%s' "${r#* }" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("id",""))' 2>/dev/null)
[ -n "$id" ] && job wait "$id" >/dev/null 2>&1
ok $( { printf '%s' "$r" | grep -q sandbox_denied || { [ -n "$id" ] && job show --json "$id" | grep -q sandbox_denied; }; }; echo $?) \
	"a sandboxed shell binding granted a path inside ~/.claude is refused (sandbox_denied)"

# ---- a grant's ~ is the HOME the binding sets, as its launch expands it:
# granted ~ with HOME=h2 in its env, it may write h2/cc, an unsandboxed
# claude's config dir: refused at load; without that HOME (~ is the
# daemon's home) the claude runs (the control)
mkdir -p "$lab/h2/cc"
h2() { # ENV
	printf '{"bindings": {\n%s,\n%s}}\n' "$(only6 "$lab/h2/cc")" "$(cat <<JSON
  "s2": {"executor": {"kind": "shell", "args": ["true"]}, "workspace": {"dir": "$lab/sw"}$1,
         "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "~"]}}}
JSON
)" > "$lab/config.json"
}
h2 ", \"env\": {\"HOME\": \"$lab/h2\"}"
rm -f "$lab/free/standin-report.json"
r=$(api POST /v1/jobs '{"binding": "h6", "args": ["hi"]}')
ok $(printf '%s' "$r" | grep -q 'sandbox_config' && printf '%s' "$r" | grep -q 'binding `s2`' &&
	[ ! -e "$lab/free/standin-report.json" ]; echo $?) \
	"a binding granted ~ with its own HOME may write an unsandboxed claude's config dir there: the config is refused (sandbox_config)"
h2 ""
id=$(job start h6 --wait -- hello); rc=$?
ok $([ "$rc" = 0 ] && [ -f "$lab/h2/cc/standin-state.json" ]; echo $?) \
	"... the same grant with the daemon's home as ~: the claude runs (the control)"

# ---- a sandboxed launch while the operator's claude runs unsandboxed:
# on its workspace (spelled with a '/'), or granted a place inside it:
# refused (sandbox_denied, naming the live job), nothing run; once that
# job ended, it runs (the control). (The claude's binding is gone from
# the config meanwhile: the load could not see the two together.)
rm -f "$lab/free/standin-report.json" "$lab/free/planted"
printf '{"bindings": {\n%s}}\n' "$(only6 "$lab/hostcc")" > "$lab/config.json"
live=$(job start h6 -- "sleep 60")
for _ in $(seq 300); do [ -s "$lab/free/standin-report.json" ] && break; sleep 0.05; done
printf '{"bindings": {\n%s}}\n' "$(cat <<JSON
  "lv": {"executor": {"kind": "shell", "args": ["sh", "-c", "echo x > planted"]}, "workspace": {"dir": "$lab/free/"},
         "sandbox": {"provider": "native"}},
  "lg": {"executor": {"kind": "shell", "args": ["sh", "-c", "mkdir -p $lab/free/.claude && echo x > $lab/free/planted"]},
         "workspace": {"dir": "$lab/sw"},
         "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "$lab/free/.claude"]}}}
JSON
)" > "$lab/config.json"
live_refused() { # BINDING DESCRIPTION
	local r id
	r=$(api POST /v1/jobs "{\"binding\": \"$1\"}")
	id=$(printf '%s' "${r#* }" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("id",""))' 2>/dev/null)
	[ -n "$id" ] && job wait "$id" >/dev/null 2>&1
	ok $( { printf '%s' "$r" | grep -q "sandbox_denied.*job $live runs claude without a sandbox" ||
		{ [ -n "$id" ] && job show --json "$id" | grep -q "sandbox_denied.*job $live runs claude"; }; } &&
		[ ! -e "$lab/free/planted" ]; echo $?) "$2"
}
ok $([ "$(job show --json "$live" | jfield result)" = running ]; echo $?) "the operator's claude runs unsandboxed in free"
live_refused lv "a sandboxed job on its workspace, spelled with a '/', meanwhile: refused (sandbox_denied, naming it), nothing run"
live_refused lg "a sandboxed job granted a place inside it: refused, nothing run"
job stop "$live" >/dev/null; job wait "$live" >/dev/null
id=$(job start lv --wait); rc=$?
ok $([ "$rc" = 0 ] && [ -f "$lab/free/planted" ]; echo $?) "... once it ended, the sandboxed job runs there (the control)"

# ---- one job per container workspace: against the other live jobs'
# write grants too. gw runs with a grant of w4 (its workspace is sw);
# box, a container binding on w4, is refused while it runs (its endpoint
# is no daemon: a launch that passed the check fails there instead, the
# control once gw ended)
mkdir -p "$lab/w4"
printf '{"bindings": {\n%s}}\n' "$(cat <<JSON
  "gw": {"executor": {"kind": "shell", "args": ["sleep", "84"]}, "workspace": {"dir": "$lab/sw"},
         "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "$lab/w4/"]}}},
  "box": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/w4"},
          "container": {"provider": "docker", "endpoint": "unix://$lab/no-docker.sock",
                        "image": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}}
JSON
)" > "$lab/config.json"
live=$(job start gw)
for _ in $(seq 300); do [ -n "$(pgrep -u "$me" -f '^sleep 84$')" ] && break; sleep 0.05; done
job start box -- true >"$lab/o" 2>"$lab/e"; rc=$?
ok $([ "$rc" != 0 ] && grep -q "in use by job $live" "$lab/e"; echo $?) \
	"a container job on a workspace another live job's write grant holds: refused, naming it"
job stop "$live" >/dev/null; job wait "$live" >/dev/null
job start box -- true >"$lab/o" 2>"$lab/e"; rc=$?
[ -s "$lab/o" ] && job wait "$(cat "$lab/o")" >/dev/null 2>&1
ok $(! grep -q "in use by job" "$lab/e"; echo $?) "... once it ended, not refused for that (the control)"

stop_daemon
sanitizer_ok
tap_done
