#!/bin/bash
# cordon wrap, the daemon's segment wrapper, driven as the daemon drives it
# (a SOCK_SEQPACKET control socket): the pin answered before anything runs
# and equal to the record's, the wrapper pinned as the root and stamped,
# in a session and process group of its own, the exit file and status the
# command's; nothing run without the daemon's word (the control: the same
# request with the word runs); a refusal answered with its reason; a
# secret passed through the environment by name reaches the command and
# no file of the state dir.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
lab=$(mktemp -d /tmp/cordon-wrap.XXXXXX)
lab=$(cd "$lab" && pwd -P)
trap 'rm -rf "$lab"' EXIT
mkdir -p "$lab/home" "$lab/state" "$lab/ws"
lab_env "$lab"

# drive GO REQUEST_JSON: runs cordon wrap, prints the answer as one line,
# then "exit <status>" and the wrapper's pid, session and group as seen
# while it ran (read from /proc after the answer).
cat > "$lab/drive.py" <<'PY'
import json, os, socket, subprocess, sys, time
go, req = sys.argv[1], sys.argv[2]
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
# fds 1 and 2 on one file, as the daemon gives the wrapper the job's log
# (here the driver's stderr, the test's $lab/err)
p = subprocess.Popen([os.environ["CORDON"], "wrap", "--ctl", str(b.fileno())],
                     pass_fds=[b.fileno()], stdin=subprocess.DEVNULL,
                     stdout=sys.stderr, stderr=sys.stderr)
b.close()
a.send(req.encode())
ans = a.recv(1 << 20).decode()
print(ans)
ids = "-"
try:
    st = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
    ids = "pid=%d pgrp=%s session=%s" % (p.pid, st[2], st[3])
except OSError:
    pass
if go == "go":
    a.send(b"g")
a.close()
print("exit %d" % p.wait())
print(ids)
PY
req() { # POLICY_JSON ARGV_JSON [EXTRA]
	printf '{"policy": %s, "workspace": "%s", "state_dir": "%s", "argv": %s, "quiet": true%s}' \
		"$1" "$lab/ws" "$lab/state" "$2" "${3:-}"
}
field() { python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); print(d.get(sys.argv[1], ""))' "$1"; }

# ---- a segment end to end
out=$(python3 "$lab/drive.py" go "$(req '{"write": ["{workspace}"]}' '["sh", "-c", "sleep 0.5; echo hi > out.txt; exit 3"]')" 2>"$lab/err")
ans=$(printf '%s\n' "$out" | sed -n 1p)
rec=$(printf '%s\n' "$ans" | field record)
digest=$(printf '%s\n' "$ans" | field digest)
wpid=$(printf '%s\n' "$ans" | field pid)
ok $([ -n "$rec" ] && [ -f "$rec/plan.json" ]; echo $?) "the answer names the record, written before the word"
ok $([ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["digest"])' "$rec/plan.json")" = "$digest" ]; echo $?) \
	"... and the pin it answers is the record's digest"
pins=$(dirname "$(dirname "$rec")")/pins.json
ok $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["1"]; sys.exit(0 if d["digest"]==sys.argv[2] and d["root"]["pid"]==int(sys.argv[3]) else 1)' "$pins" "$digest" "$wpid"; echo $?) \
	"the wrapper is pinned as the segment's root"
ok $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["pid"]==int(sys.argv[2]) and d["start_ticks"]>0 else 1)' "$rec/wrapper.json" "$wpid"; echo $?) \
	"its stamp names its pid and start time"
ok $([ "$(stat -c %a "$rec/wrapper.json")" = 444 ]; echo $?) "... read-only"
ok $(printf '%s\n' "$out" | grep -qx "pid=$wpid pgrp=$wpid session=$wpid"; echo $?) \
	"while it ran it led a session and process group of its own ($(printf '%s\n' "$out" | sed -n 3p))"
ok $(printf '%s\n' "$out" | grep -qx 'exit 3'; echo $?) "it exits with the command's status"
ok $([ "$(cat "$lab/ws/out.txt" 2>/dev/null)" = hi ]; echo $?) "the command's write is in the workspace"
ok $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d=={"code":3} else 1)' "$rec/exit.json"; echo $?) \
	"the exit file holds the status"
rm -f "$lab/ws/out.txt"

# ---- no word, nothing runs (the control above ran the same shape)
out=$(python3 "$lab/drive.py" nogo "$(req '{"write": ["{workspace}"]}' '["sh", "-c", "echo hi > out.txt"]')" 2>"$lab/err")
rec=$(printf '%s\n' "$out" | sed -n 1p | field record)
ok $([ ! -e "$lab/ws/out.txt" ]; echo $?) "without the daemon's word nothing runs"
ok $(printf '%s\n' "$out" | grep -qx 'exit 125'; echo $?) "... and it exits 125"
ok $(grep -q 'sandbox_unavailable: wrapper: the host did not confirm the launch' "$lab/err"; echo $?) "... saying why"
ok $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["code"]==125 and d["error"]=="sandbox_unavailable" else 1)' "$rec/exit.json"; echo $?) \
	"... in its exit file too"

# ---- refusals answered with their reason
out=$(python3 "$lab/drive.py" go "$(req '{"write": ["{workspace}", "/"]}' '["true"]')" 2>"$lab/err")
ans=$(printf '%s\n' "$out" | sed -n 1p)
ok $([ "$(printf '%s\n' "$ans" | field error)" = sandbox_denied ] && printf '%s\n' "$out" | grep -qx 'exit 125'; echo $?) \
	"a grant of / is answered sandbox_denied and nothing runs ($(printf '%s\n' "$ans" | field message | head -c 80))"
out=$(python3 "$lab/drive.py" go "$(req '{"write": ["/x/*"]}' '["true"]')" 2>"$lab/err")
ans=$(printf '%s\n' "$out" | sed -n 1p)
ok $([ "$(printf '%s\n' "$ans" | field message)" = "wrapper: request: policy: write[0]: patterns are not supported: name a path" ]; echo $?) \
	"a malformed policy is answered sandbox_config with its JSON path"
out=$(python3 "$lab/drive.py" go '{"argv": ["true"], "bogus": 1}' 2>"$lab/err")
ok $([ "$(printf '%s\n' "$out" | sed -n 1p | field message)" = "wrapper: request: bogus: unknown key" ]; echo $?) \
	"an unknown key in the request is refused"
out=$(python3 "$lab/drive.py" go "$(req '{"write": ["{workspace}"]}' '["sh", "-c", "echo ran > mixed.txt"]' ', "unsandboxed": true')" 2>"$lab/err")
ok $([ "$(printf '%s\n' "$out" | sed -n 1p | field error)" = sandbox_config ] && [ ! -e "$lab/ws/mixed.txt" ]; echo $?) \
	"a request both unsandboxed and with a policy is refused, nothing run"
out=$(python3 "$lab/drive.py" go "$(printf '{"unsandboxed": true, "workspace": "%s", "state_dir": "%s", "argv": ["sh", "-c", "echo ran > plain.txt"], "quiet": true}' "$lab/ws" "$lab/state")" 2>"$lab/err")
ok $([ "$(printf '%s\n' "$out" | sed -n 1p | field provider)" = "" ] && [ -n "$(printf '%s\n' "$out" | sed -n 1p | field digest)" ] &&
	[ "$(cat "$lab/ws/plain.txt" 2>/dev/null)" = ran ]; echo $?) \
	"... and an unsandboxed one alone is pinned, names no provider, and runs (the control)"
rm -f "$lab/ws/plain.txt"

# ---- a clone workspace: for a sandboxed launch, a clone alone and no
# setup command, refused before anything is made or run
git init -q --bare "$lab/origin.git" 2>/dev/null
clone_req() { # CLONE_JSON
	printf '{"policy": {"write": ["{workspace}"]}, "workspace": "%s", "state_dir": "%s", "execution": "wrapclone", "argv": ["sh", "-c", "echo ran > ../clone-ran.txt"], "quiet": true, "clone": %s}' \
		"$lab/clone-ws" "$lab/state" "$1"
}
for c in '"mode": "worktree"' '"mode": "shared"' '"setup": ["sh", "-c", "echo set up > ../setup-ran.txt"]'; do
	out=$(python3 "$lab/drive.py" go "$(clone_req "{\"url\": \"$lab/origin.git\", \"branch\": \"main\", $c}")" 2>"$lab/err")
	ok $([ "$(printf '%s\n' "$out" | sed -n 1p | field error)" = sandbox_config ] && [ ! -e "$lab/clone-ws" ] &&
		[ ! -e "$lab/setup-ran.txt" ] && [ ! -e "$lab/clone-ran.txt" ]; echo $?) \
		"a sandboxed launch's clone with $c is refused (sandbox_config), nothing made or run"
done
out=$(python3 "$lab/drive.py" go "$(clone_req "{\"url\": \"$lab/origin.git\", \"branch\": \"main\"}")" 2>"$lab/err")
ok $([ "$(printf '%s\n' "$out" | sed -n 1p | field error)" = sandbox_unavailable ] && grep -q "clone failed" "$lab/err" &&
	[ ! -e "$lab/clone-ws" ]; echo $?) \
	"... a plain clone is tried (the control), and one that fails (an empty origin) leaves nothing"

# ---- a secret, by name through the environment only
secret=cordon-wrap-secret-$$-value
# (the command compares digests: the secret is in no argv either)
out=$(WRAP_TEST_TOKEN=$secret python3 "$lab/drive.py" go "$(req '{"write": ["{workspace}"], "env": {"pass": ["WRAP_TEST_TOKEN"]}}' '["sh", "-c", "printf %s \"$WRAP_TEST_TOKEN\" | sha256sum > tok.sum"]')" 2>"$lab/err")
ok $(printf '%s\n' "$out" | grep -qx 'exit 0' && [ "$(cat "$lab/ws/tok.sum")" = "$(printf %s "$secret" | sha256sum)" ]; echo $?) \
	"a secret passed by name reaches the command"
ok $(! grep -rqs "$secret" "$lab/state" "$lab/ws" "$lab/err"; echo $?) "... and no file of the state dir, the workspace or the log"
out=$(WRAP_TEST_TOKEN=$secret python3 "$lab/drive.py" go "$(req '{"write": ["{workspace}"]}' '["sh", "-c", "test -z \"$WRAP_TEST_TOKEN\""]')" 2>"$lab/err")
ok $(printf '%s\n' "$out" | grep -qx 'exit 0'; echo $?) "... while one the policy does not pass does not reach it"

tap_done
