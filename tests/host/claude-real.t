#!/bin/bash
# The real Claude Code (from npm, installed by scripts/deps): `claude
# --version` inside a native and an srt sandbox (the control: outside),
# and a `claude -p` turn through the daemon whose API calls the gateway
# refuses (the binding points claude at a host its policy does not list):
# the refusals are in the segment's audit log, and the job ends with the
# turn's failure said in its result, nothing hanging.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v claude >/dev/null; then
	echo "1..0 # SKIP Claude Code is not installed (scripts/deps installs it)"
	exit 0
fi
. "$here/lib.sh"
need_exec "$CORDON" CORDON
host_lab /var/tmp/cordon-creal.XXXXXX
cleanup() {
	host_cleanup
}
trap cleanup EXIT
mkdir -p "$lab/home" "$lab/ws" "$lab/cc"
export HOME="$lab/home" XDG_STATE_HOME="$lab/xdg" XDG_CONFIG_HOME="$lab/cfg"
unset XDG_RUNTIME_DIR SSH_AUTH_SOCK ANTHROPIC_API_KEY CLAUDE_CODE_OAUTH_TOKEN
want=$(claude --version 2>/dev/null)
ok $([ -n "$want" ]; echo $?) "claude --version outside the sandbox: $want (the control)"
providers=(native)
command -v srt >/dev/null && providers+=(srt)
for p in "${providers[@]}"; do
	got=$(cd "$lab/ws" && "$CORDON" run -q --provider "$p" --state-dir "$lab/run-state" -- claude --version 2>"$lab/err")
	ok $([ "$got" = "$want" ]; echo $?) "$p: claude --version inside the sandbox: $got"
done

# a turn whose API calls the gateway refuses
echo "sk-ant-not-a-real-key" > "$lab/key"
cat > "$lab/config.json" <<JSON
{"bindings": {"c": {"executor": {"kind": "claude-code"}, "workspace": {"dir": "$lab/ws"},
  "env": {"CLAUDE_CONFIG_DIR": "$lab/cc", "ANTHROPIC_BASE_URL": "https://api.refused-by-cordon.example",
          "CLAUDE_CODE_MAX_RETRIES": "0"},
  "secrets": {"ANTHROPIC_API_KEY": {"file": "$lab/key"}},
  "sandbox": {"provider": "native", "policy": {"write": ["{workspace}", "$lab/cc"],
                                               "network": {"allow": ["api.anthropic.com"]}}}}}}
JSON
start_daemon
ok $? "the daemon starts"
id=$(timeout 300 "$CORDON" job --state-dir "$state" start c --wait -- say hello); rc=$?
show=$(job show --json "$id")
rec=$(printf '%s' "$show" | jfield segments.0.record)
ok $([ "$rc" != 0 ] && [ "$rc" != 125 ] && grep -q '"type":"result"' "$state/runs/$id/log" &&
	grep '"type":"result"' "$state/runs/$id/log" | tail -n 1 | grep -q '"is_error":true'; echo $?) \
	"the turn fails (claude exits $rc) and claude's stream says so in its result"
ok $(grep -q '"host":"api.refused-by-cordon.example".*"verdict":"deny"' "$rec/network.jsonl"; echo $?) \
	"the gateway refused its API calls, in the segment's audit log ($(grep -c '"verdict":"deny"' "$rec/network.jsonl" 2>/dev/null) refusals)"
ok $(printf '%s' "$show" | jfield segments.0.reason | grep -q '^claude: the turn failed: API Error'; echo $?) \
	"the job's segment reports the failed turn ($(printf '%s' "$show" | jfield segments.0.reason | cut -c1-80))"
ok $(! grep -rqs "sk-ant-not-a-real-key" "$state" "$lab/cc"; echo $?) "the key is in no file of the state dir or claude's config directory"
stop_daemon
sanitizer_ok
tap_done
