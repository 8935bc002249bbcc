#!/bin/bash
# The claude-code executor with a stand-in claude (tests/helpers/
# claude-standin, which speaks stream-json and tries what a hostile agent
# would), native and srt: the prompt as the first message on its stdin,
# its own config directory writable, the operator's ~/.claude and
# ~/.claude.json neither readable nor writable (the control: the same
# reads and writes outside the sandbox work), its temporary files in the
# segment's run dir; a binding without CLAUDE_CONFIG_DIR, with one inside
# ~/.claude, through a link to it, or with a policy that grants
# ~/.claude, refused with nothing run; inject reaching its stdin;
# interrupt and stop ending it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SRC=${CORDON_SRC:-$(cd "$here/../.." && pwd)}
. "$here/lib.sh"
need_exec "$CORDON" CORDON
# (a short name: srt's socket dir, <state>/srt, leaves room for its sockets)
host_lab /var/tmp/cordon-cl.XXXXXX
# (host_cleanup ends every process of the jobs, by their pinned roots)
trap host_cleanup EXIT
host_own_cordon
mkdir -p "$lab/bin" "$lab/home/.claude" "$lab/ws" "$lab/cc"
cp "$SRC/tests/helpers/claude-standin" "$lab/bin/claude"
echo '{"claudeAiOauth": {"accessToken": "operator-secret"}}' > "$lab/home/.claude/.credentials.json"
echo '{}' > "$lab/home/.claude/settings.json"
echo '{}' > "$lab/home/.claude.json"
ln -s "$lab/home/.claude" "$lab/cclink"
lab_env "$lab"
export PATH="$lab/bin:$PATH"
providers=(native)
command -v srt >/dev/null && [ "$(command -v srt)" != "$lab/bin/srt" ] && providers+=(srt)

# config PROVIDER [CONFIG_DIR] [EXTRA_WRITE]
config() {
	local env=""
	[ -n "${2-}" ] && env=", \"env\": {\"CLAUDE_CONFIG_DIR\": \"$2\"}"
	cat > "$lab/config.json" <<JSON
{"bindings": {"c": {"executor": {"kind": "claude-code", "extra_args": ["--model", "stand-in"]},
  "workspace": {"dir": "$lab/ws"}, "grace": 2$env,
  "sandbox": {"provider": "$1", "policy": {"write": ["{workspace}", "$lab/cc"${3:+, \"$3\"}],
                                           "network": {"allow": ["api.anthropic.com"]}}}}}}
JSON
}
report() { tail -n 1 "$lab/ws/standin-report.json" | jfield "$1"; }

# the control: outside any sandbox the operator's files are there to read and write
ok $([ -r "$lab/home/.claude/.credentials.json" ] && [ -w "$lab/home/.claude/settings.json" ] &&
	[ -w "$lab/home/.claude.json" ]; echo $?) "the operator's ~/.claude and ~/.claude.json are readable and writable outside (the control)"

config native "$lab/cc"
start_daemon
ok $? "the daemon starts"
for p in "${providers[@]}"; do
	config "$p" "$lab/cc"
	rm -f "$lab/ws/standin-report.json"; rm -rf "$lab/ws/.claude"
	id=$(job start c --wait -- say hello); rc=$?
	rec=$(job show --json "$id" | jfield segments.0.record)
	ok $([ "$rc" = 0 ] && [ "$(report text)" = "say hello" ] &&
		grep -q '"type": "result"' "$state/runs/$id/log"; echo $?) \
		"$p: the job's prompt is claude's first message on stdin; it answers and the job exits 0"
	ok $([ "$(report argv)" = "['-p', '--output-format', 'stream-json', '--input-format', 'stream-json', '--verbose', '--model', 'stand-in']" ]; echo $?) \
		"$p: claude runs with -p, stream-json both ways, --verbose and the binding's extra_args"
	ok $([ "$(report write_config_dir)" = ok ] && [ -f "$lab/cc/standin-state.json" ]; echo $?) \
		"$p: its own config directory is writable"
	ok $(report read_credentials | grep -q '^refused' && report write_settings | grep -q '^refused' &&
		report write_claude_json | grep -q '^refused' &&
		[ "$(cat "$lab/home/.claude/settings.json")" = '{}' ] && [ "$(cat "$lab/home/.claude.json")" = '{}' ]; echo $?) \
		"$p: the operator's ~/.claude/.credentials.json unreadable, ~/.claude/settings.json and ~/.claude.json unwritable ($(report read_credentials))"
	ok $([ "$(report TMPDIR)" = "$state/runs/$id/run/tmp" ] && [ "$(report CLAUDE_CODE_TMPDIR)" = "$state/runs/$id/run/tmp" ] &&
		[ "$(report CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC)" = 1 ] && [ "$(report CLAUDE_CONFIG_DIR)" = "$lab/cc" ]; echo $?) \
		"$p: TMPDIR and CLAUDE_CODE_TMPDIR in the segment's run dir, nonessential traffic off, its CLAUDE_CONFIG_DIR"
	ok $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["data"]; sys.exit(0 if "api.anthropic.com" in json.dumps(d) else 1)' "$rec/plan.json"; echo $?) \
		"$p: the plan records its grant, the API host among it"
	ok $([ -f "$lab/ws/.claude/settings.json" ]; echo $?) "$p: (a hook planted in the workspace stays there, reported by the look after the run)"
	rm -rf "$lab/ws/.claude"

	# inject: a second message on its stdin while it works on the first
	rm -f "$lab/ws/standin-report.json"
	id=$(job start c -- sleep 2)
	for _ in $(seq 600); do [ -s "$lab/ws/standin-report.json" ] && break; sleep 0.05; done
	job inject "$id" 'and then this' >/dev/null
	job wait "$id"; rc=$?
	ok $([ "$rc" = 0 ] && grep -q '"text": "and then this"' "$lab/ws/standin-report.json" &&
		[ "$(grep -c '"type": "result"' "$state/runs/$id/log")" = 2 ]; echo $?) \
		"$p: inject reaches claude's stdin as a user message; it answers both and the job ends"

	# a FIFO the agent leaves in its inbox is not read by the host's feeder
	rm -f "$lab/ws/standin-report.json"
	id=$(job start c -- fifo)
	for _ in $(seq 600); do [ -s "$lab/ws/standin-report.json" ] && break; sleep 0.05; done
	sleep 0.5
	job inject "$id" 'after the fifo' >/dev/null
	timeout 60 "$CORDON" job --state-dir "$state" wait "$id"; rc=$?
	ok $([ "$rc" = 0 ] && grep -q '"text": "after the fifo"' "$lab/ws/standin-report.json"; echo $?) \
		"$p: a FIFO the agent plants in its inbox is passed over; the next message still reaches it"

	# interrupt and stop
	rm -f "$lab/ws/standin-report.json" "$lab/ws/standin-term"
	id=$(job start c -- sleep 60)
	for _ in $(seq 600); do [ -s "$lab/ws/standin-report.json" ] && break; sleep 0.05; done
	sig=$(job interrupt "$id"); job wait "$id" >/dev/null
	if [ "$p" = native ]; then
		ok $([ "$sig" = term ] && [ -f "$lab/ws/standin-term" ] && [ "$(job show --json "$id" | jfield result)" = exited ]; echo $?) \
			"$p: interrupt: TERM reaches claude (term), which ends"
	else
		ok $([ "$sig" = kill ] && [ "$(job show --json "$id" | jfield segments.0.reason)" != None ]; echo $?) \
			"$p: interrupt: srt ends claude (kill)"
	fi
	rm -f "$lab/ws/standin-report.json"
	id=$(job start c -- sleep 60)
	for _ in $(seq 600); do [ -s "$lab/ws/standin-report.json" ] && break; sleep 0.05; done
	job stop "$id" >/dev/null; job wait "$id" >/dev/null
	ok $([ "$(job show --json "$id" | jfield result)" = stopped ] && [ -z "$(pgrep -f "$lab/bin/claude")" ]; echo $?) \
		"$p: stop ends it, nothing of it left"
done

# ---- resume: a failed attempt's session is the next one's --resume
cat > "$lab/config.json" <<JSON
{"bindings": {
  "c": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/ws"}, "retries": 1,
        "env": {"CLAUDE_CONFIG_DIR": "$lab/cc"},
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "$lab/cc"],
                                                     "network": {"allow": ["api.anthropic.com"]}}}},
  "host": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/ws2"}}}}
JSON
mkdir -p "$lab/ws2"
rm -f "$lab/ws/standin-report.json"
id=$(job start c --wait -- fail-once); rc=$?
show=$(job show --json "$id")
first=$(head -n 1 "$lab/ws/standin-report.json" | jfield session)
ok $([ "$rc" = 0 ] && [ "$(printf '%s' "$show" | jfield session)" = "$first" ] &&
	tail -n 1 "$lab/ws/standin-report.json" | jfield argv | grep -q "'--resume', '$first'" &&
	[ "$(printf '%s' "$show" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["segments"]))')" = 2 ]; echo $?) \
	"the job keeps claude's session; its next segment runs --resume with it (and succeeds)"
job attach "$id" 2>"$lab/attach.err" </dev/null; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'cordon: attach_sandboxed:' "$lab/attach.err"; echo $?) \
	"attach to the sandboxed claude job: refused (attach_sandboxed)"
id=$(job start host --wait -- hello host); rc=$?
sess=$(job show --json "$id" | jfield session)
out=$(job attach "$id" </dev/null 2>"$lab/attach.err"); rc=$?
ok $([ "$rc" = 0 ] && [ -n "$sess" ] && printf '%s\n' "$out" | head -n 1 | jfield session_id | grep -qx "$sess" &&
	[ "$(printf '%s\n' "$out" | head -n 1 | jfield cwd)" = "$lab/ws2" ]; echo $?) \
	"attach to a claude job that never ran sandboxed runs claude --resume <its session> in its workspace on the host"
# (unsandboxed, the stand-in wrote the operator's files as the operator:
# put them back for the checks below)
echo '{}' > "$lab/home/.claude/settings.json"; echo '{}' > "$lab/home/.claude.json"

# ---- recovery: a claude job adopted after a kill -9, inject still reaching it
config native "$lab/cc"
rm -f "$lab/ws/standin-report.json"
id=$(job start c -- sleep 3)
for _ in $(seq 600); do [ -s "$lab/ws/standin-report.json" ] && break; sleep 0.05; done
stop_daemon KILL
start_daemon
job inject "$id" 'after the restart' >/dev/null
job wait "$id"; rc=$?
ok $([ "$rc" = 0 ] && grep -q "adopted segment 1 of $id" "$lab/daemon.err" &&
	grep -q '"text": "after the restart"' "$lab/ws/standin-report.json"; echo $?) \
	"after a kill -9 of the daemon the claude job is adopted under its pin, and inject still reaches its stdin"

# ---- with operations granted: claude's MCP config names the toolbelt's server
python3 - "$lab/config.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["bindings"]["c"]["operations"] = ["job.status", "notify"]
json.dump(d, open(sys.argv[1], "w"))
PY
rm -f "$lab/ws/standin-report.json"
id=$(job start c --wait -- with tools); rc=$?
ok $([ "$rc" = 0 ] && report argv | grep -q "'--mcp-config', '$state/runs/$id/run/mcp.json'" &&
	[ "$(report mcp_tools)" = "['cordon:job_status', 'cordon:notify']" ]; echo $?) \
	"with operations granted, claude gets --mcp-config naming cordon tb mcp, which offers them as tools ($(report mcp_tools))"
config native "$lab/cc"

# ---- refusals, nothing run
refused_job() { # WHY-PATTERN DESCRIPTION
	rm -f "$lab/ws/standin-report.json"
	r=$(api POST /v1/jobs '{"binding": "c", "args": ["hi"]}')
	local id; id=$(printf '%s' "${r#* }" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("id",""))' 2>/dev/null)
	[ -n "$id" ] && job wait "$id" >/dev/null
	ok $( { printf '%s' "$r" | grep -q "$1" || { [ -n "$id" ] && job show --json "$id" | grep -q "$1"; }; } &&
		[ ! -e "$lab/ws/standin-report.json" ]; echo $?) "$2"
}
config native
refused_job 'sandbox_config' "a sandboxed binding without CLAUDE_CONFIG_DIR is refused (sandbox_config), nothing run"
config native "$lab/home/.claude/cc"
refused_job 'sandbox_config' "... one inside ~/.claude is refused (sandbox_config), nothing run"
config native "$lab/cclink"
refused_job 'sandbox_config' "... one that is a link to ~/.claude is refused at load, by identity (sandbox_config), nothing run"
config native "$lab/cc" "$lab/home/.claude"
refused_job 'sandbox_denied' "... a policy that grants ~/.claude is refused (sandbox_denied), nothing run"
config native "$lab/cc"
rm -f "$lab/ws/standin-report.json"
id=$(job start c --wait -- hi); rc=$?
ok $([ "$rc" = 0 ] && [ -s "$lab/ws/standin-report.json" ]; echo $?) "... and the same binding with its own directory runs (the control)"
ok $([ "$(cat "$lab/home/.claude/settings.json")" = '{}' ] && [ ! -e /tmp/standin-planted-ran ]; echo $?) \
	"the operator's settings are as they were, and nothing planted ran"
stop_daemon
sanitizer_ok
tap_done
