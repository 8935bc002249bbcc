#!/bin/bash
# The per-job toolbelt: a job whose binding grants operations calls back
# to the host with `cordon tb call`, from native and srt sandboxes with
# unix_sockets "none" (through its gateway's reserved name; the control:
# the socket itself is refused to the sandbox), for job.status (its own
# job), job.output (shown by `cordon job show`) and notify (a line in its
# log); an operation not granted refused. On the job's socket: no token, a
# wrong one and another job's refused, its own answered (the control); a
# token revoked when its job ends (its directory gone, the token refused
# on another job's socket). A binding without operations has no toolbelt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
host_lab /var/tmp/cordon-tb.XXXXXX
# (host_cleanup ends every process of the jobs, by their pinned roots)
trap host_cleanup EXIT
host_own_cordon
mkdir -p "$lab/home" "$lab/ws" "$lab/ws2"
lab_env "$lab"
providers=(native)
command -v srt >/dev/null && providers+=(srt)
cat > "$lab/config.json" <<JSON
{"bindings": {
  "native": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
        "operations": ["job.status", "job.output", "notify"],
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}},
  "srt": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
        "operations": ["job.status", "job.output", "notify"],
        "sandbox": {"provider": "srt", "policy": {"write": ["{workspace}"]}}},
  "host": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws2"},
        "operations": ["job.status"]},
  "plain": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws2"},
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}}}}
JSON
start_daemon
ok $? "the daemon starts"
# (inside, the sanitizers' leak check cannot run: a sandbox has no ptrace)
TB="ASAN_OPTIONS=detect_leaks=0 $CORDON tb call"

for p in "${providers[@]}"; do
	rm -f "$lab/ws/"*.out
	id=$(job start "$p" --wait -- sh -c "$TB job.status > status.out; $TB job.output '{\"name\": \"answer\", \"value\": \"42\"}' > output.out; $TB notify '{\"text\": \"hello from inside\"}'; $TB git.credential 2> refused.out; exit 0"); rc=$?
	ok $([ "$rc" = 0 ] && [ "$(jfield id < "$lab/ws/status.out")" = "$id" ] && [ "$(jfield binding < "$lab/ws/status.out")" = "$p" ]; echo $?) \
		"$p: job.status from inside answers for its own job ($(head -c 80 "$lab/ws/status.out"))"
	ok $([ "$(job show --json "$id" | jfield outputs.answer)" = 42 ] && job show "$id" | grep -qx 'output    answer 42'; echo $?) \
		"$p: job.output saves a result that cordon job show shows"
	ok $(grep -qx 'cordon: notify: hello from inside' "$state/runs/$id/log"; echo $?) "$p: notify writes a line in the job's log"
	ok $(grep -q 'sandbox_denied: the binding does not grant this operation' "$lab/ws/refused.out"; echo $?) \
		"$p: an operation the binding does not grant is refused"
	ok $([ ! -e "$state/toolbelt/$id" ]; echo $?) "$p: once the job has ended its toolbelt is gone (revoked)"
done

# cordon tb mcp: an MCP server offering the granted operations as tools
cat > "$lab/ws/mcp.in" <<'MCP'
{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
{"jsonrpc": "2.0", "method": "notifications/initialized"}
{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "notify", "arguments": {"text": "from the MCP server"}}}
{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "git_credential", "arguments": {}}}
MCP
id=$(job start native --wait -- sh -c "ASAN_OPTIONS=detect_leaks=0 $CORDON tb mcp < mcp.in > mcp.out")
mcp() { python3 -c 'import json,sys
ans = {m["id"]: m for m in map(json.loads, open(sys.argv[1]))}
print(eval(sys.argv[2]))' "$lab/ws/mcp.out" "$1"; }
ok $([ "$(mcp 'ans[1]["result"]["protocolVersion"], ans[1]["result"]["serverInfo"]["name"], "tools" in ans[1]["result"]["capabilities"]')" = "('2025-06-18', 'cordon-toolbelt', True)" ]; echo $?) \
	"cordon tb mcp answers initialize (the client's protocol version, tools)"
ok $([ "$(mcp 'sorted(t["name"] for t in ans[2]["result"]["tools"])')" = "['job_output', 'job_status', 'notify']" ]; echo $?) \
	"... tools/list offers the operations the binding grants ($(mcp 'sorted(t["name"] for t in ans[2]["result"]["tools"])'))"
ok $([ "$(mcp 'ans[3]["result"]["isError"]')" = False ] && grep -qx 'cordon: notify: from the MCP server' "$state/runs/$id/log" &&
	[ "$(mcp 'ans[4]["error"]["code"]')" = -32602 ]; echo $?) \
	"... tools/call runs a granted one through the toolbelt, and a tool not granted is no tool"

# the socket itself is out of the sandbox's reach (unix_sockets none)
id=$(job start native -- sh -c ': cordon-tb-job; /usr/bin/python3 -c "import os,socket; s=socket.socket(socket.AF_UNIX); s.connect(os.path.dirname(os.environ[\"CORDON_TOOLBELT\"]) + \"/toolbelt.sock\")" 2> direct.out; echo rc=$? >> direct.out; while [ ! -e go ]; do sleep 0.1; done')
id2=$(job start native -- sh -c ': cordon-tb-job; while [ ! -e go2 ]; do sleep 0.1; done')
for _ in $(seq 600); do [ -s "$lab/ws/direct.out" ] && [ -S "$state/toolbelt/$id2/toolbelt.sock" ] && break; sleep 0.05; done
ok $(grep -q 'rc=1' "$lab/ws/direct.out" && grep -qi 'permission\|not permitted' "$lab/ws/direct.out"; echo $?) \
	"the job's own socket, connected to directly from inside, is refused (only its gateway reaches it)"
tok=$(cat "$state/toolbelt/$id/token"); tok2=$(cat "$state/toolbelt/$id2/token")
call() { # SOCKET TOKEN
	curl -s -o /dev/null -w '%{http_code}' --unix-socket "$1" -X POST ${2:+-H "Authorization: Bearer $2"} \
		-d '{"op": "job.status"}' http://cordon/v1/call
}
s1=$state/toolbelt/$id/toolbelt.sock
ok $([ "$(call "$s1" "$tok")" = 200 ]; echo $?) "on the job's socket, its own token is answered (the control)"
ok $([ "$(call "$s1" "")" = 401 ]; echo $?) "... no token: 401"
ok $([ "$(call "$s1" "$(printf '%s' "$tok" | tr 0-9a-f 1-9a-f0)")" = 401 ]; echo $?) "... a wrong one: 401"
ok $([ "$(call "$s1" "$tok2")" = 401 ]; echo $?) "... another job's: 401"
# one job's command holding 300 connections open (more than the
# toolbelt's 256 in all) leaves another job's calls answered
python3 - "$s1" "$lab/hog.ready" "$lab/hog.done" <<'PY' &
import os, socket, sys, time
conns = []
for _ in range(300):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    conns.append(s)
open(sys.argv[2], "w").close()
for _ in range(600):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
PY
hog=$!
for _ in $(seq 200); do [ -e "$lab/hog.ready" ] && break; sleep 0.05; done
sleep 0.5
c2=$(call "$state/toolbelt/$id2/toolbelt.sock" "$tok2")
touch "$lab/hog.done"; wait "$hog"
ok $([ -e "$lab/hog.ready" ] && [ "$c2" = 200 ]; echo $?) \
	"one job holding 300 connections open on its socket leaves another job's call answered (got $c2)"
touch "$lab/ws/go"; job wait "$id" >/dev/null
ok $([ ! -e "$state/toolbelt/$id" ] && [ "$(call "$state/toolbelt/$id2/toolbelt.sock" "$tok")" = 401 ] &&
	[ "$(call "$state/toolbelt/$id2/toolbelt.sock" "$tok2")" = 200 ]; echo $?) \
	"a job's token is revoked when it ends: its directory gone, the token refused where it is shown"
touch "$lab/ws/go2"; job wait "$id2" >/dev/null
rm -f "$lab/ws/go" "$lab/ws/go2"

id=$(job start host --wait -- sh -c "$TB job.status > host.out")
ok $([ "$(jfield id < "$lab/ws2/host.out")" = "$id" ]; echo $?) \
	"a binding without a sandbox reaches its toolbelt at the socket beside its token"
id=$(job start plain --wait -- sh -c "$TB job.status 2> plain.out; echo rc=\$? >> plain.out; exit 0")
ok $(grep -q 'rc=125' "$lab/ws2/plain.out" && grep -q 'no toolbelt here' "$lab/ws2/plain.out" && [ ! -e "$state/toolbelt/$id" ]; echo $?) \
	"a binding without operations has no toolbelt"
stop_daemon
sanitizer_ok
tap_done
