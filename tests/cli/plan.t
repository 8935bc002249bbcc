#!/bin/sh
# cordon plan end to end: the plan printed and recorded (0444), the digest
# stable for the same input and moved by any change, and the refusals
# (exit 125, `cordon: <reason>: <message>`) each beside its control.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
lab=$(mktemp -d /tmp/cordon-plan-cli.XXXXXX)
lab=$(cd "$lab" && pwd -P)
trap 'umount "$lab/ws/mnt" 2>/dev/null; rm -rf "$lab"' EXIT
mkdir -p "$lab/home" "$lab/state" "$lab/ws" "$lab/outside"
echo secret > "$lab/outside/key"
lab_env "$lab"

field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }

out=$("$CORDON" plan --state-dir "$lab/state" -w "$lab/ws" -- echo hi 2>"$lab/err"); rc=$?
ok $rc "plan on the default policy exits 0"
rec=$(printf '%s' "$out" | field '["record"]')
ok $([ -f "$rec/plan.json" ]; echo $?) "plan.json recorded under the state dir"
ok $([ "$(stat -c %a "$rec/plan.json")" = 444 ]; echo $?) "plan.json is 0444"
ok $([ "$(stat -c %a "$rec")" = 700 ]; echo $?) "record dir is 0700"
d1=$(printf '%s' "$out" | field '["plan"]["digest"]')
d1rec=$(field '["digest"]' < "$rec/plan.json")
ok $([ "$d1" = "$d1rec" ]; echo $?) "printed digest equals the recorded one"
pin=$(field '["1"]["digest"]' < "$rec/../../pins.json")
ok $([ "$d1" = "$pin" ]; echo $?) "the segment's pin holds the digest"
case "$rec" in "$lab/state/runs/"*) r=0 ;; *) r=1 ;; esac
ok $r "record lies beneath <state>/runs/"
w=$(printf '%s' "$out" | field '["plan"]["data"]["write"]')
case "$w" in *"$lab/ws"*) r=0 ;; *) r=1 ;; esac
ok $r "the workspace is a write grant"
ok $(printf '%s' "$out" | field '["plan"]["data"]["read_deny"]' | grep -q "$lab/home/.ssh"; echo $?) "~/.ssh is in the read denies"

# Recomputing the digest from the record gives the recorded digest.
recompute() {
python3 - "$1" <<'PY'
import hashlib, json, struct, sys
d = json.load(open(sys.argv[1]))
f = lambda b: struct.pack('>Q', len(b)) + b
m = f(b"cordon-plan-v1") + f(str(len(d["argv"])).encode())
m += b"".join(f(a.encode()) for a in d["argv"])
m += f(json.dumps(d["data"], separators=(',', ':'), sort_keys=True, ensure_ascii=True).encode())
print(hashlib.sha256(m).hexdigest())
PY
}
ok $([ "$(recompute "$rec/plan.json")" = "$d1" ]; echo $?) "the digest follows the documented encoding"

# Same input twice: same data apart from the execution's own run dir.
out2=$("$CORDON" plan --state-dir "$lab/state" -w "$lab/ws" -- echo hi 2>/dev/null)
rec2=$(printf '%s' "$out2" | field '["record"]')
ok $([ "$rec" != "$rec2" ]; echo $?) "a second plan is a new execution"
out3=$("$CORDON" plan --state-dir "$lab/state" -w "$lab/ws" -- echo hI 2>/dev/null)
d3=$(printf '%s' "$out3" | field '["plan"]["digest"]')
ok $([ "$d3" != "$d1" ]; echo $?) "a changed argument changes the digest"

# Refusals: exit 125 and the reason, with nothing but the message.
"$CORDON" plan --state-dir "$lab/state" -w "$lab/ws" --write "$lab/state/x" -- true 2>"$lab/err" >/dev/null; rc=$?
ok $([ $rc = 125 ]; echo $?) "a write grant into the state dir exits 125"
ok $(grep -q "^cordon: sandbox_denied: write grant \`$lab/state/x\` reaches into protected" "$lab/err"; echo $?) "... as sandbox_denied naming it"
before=$(ls "$lab/state/runs" | wc -l)
"$CORDON" plan --state-dir "$lab/state" -w "$lab/ws" --write "$lab/state/x" -- true >/dev/null 2>&1
after=$(ls "$lab/state/runs" | wc -l)
ok $([ "$before" = "$after" ]; echo $?) "a refused launch leaves no execution dir behind"

echo '{"write":[]}' > "$lab/nowrite.json"
"$CORDON" plan -p "$lab/nowrite.json" --state-dir "$lab/state" -w "$lab/ws" -- true 2>"$lab/err" >/dev/null; rc=$?
ok $([ $rc = 125 ] && grep -q "sandbox_denied: write need \`$lab/ws\` is outside" "$lab/err"; echo $?) "a policy without the workspace refuses the need"
echo '{"write":["{workspace}"]}' > "$lab/ws.json"
"$CORDON" plan -p "$lab/ws.json" --state-dir "$lab/state" -w "$lab/ws" -- true >/dev/null 2>&1
ok $? "control: the same policy granting it"

echo '{"write":["{workspace}"],"bogus":1}' > "$lab/bad.json"
"$CORDON" plan -p "$lab/bad.json" --state-dir "$lab/state" -w "$lab/ws" -- true 2>"$lab/err" >/dev/null; rc=$?
ok $([ $rc = 125 ] && grep -q '^cordon: sandbox_config: bogus: unknown key' "$lab/err"; echo $?) "a malformed policy exits 125 as sandbox_config"

ln "$lab/outside/key" "$lab/ws/key"
"$CORDON" plan --state-dir "$lab/state" -w "$lab/ws" -- true 2>"$lab/err" >/dev/null; rc=$?
ok $([ $rc = 125 ] && grep -q "sandbox_denied: \`$lab/ws/key\` is a hard link" "$lab/err"; echo $?) "a hard link out of the workspace is refused, named"
rm "$lab/ws/key"
"$CORDON" plan --state-dir "$lab/state" -w "$lab/ws" -- true >/dev/null 2>&1
ok $? "control: accepted once the link is gone"

"$CORDON" plan --state-dir "$lab/state" -w "$lab" -- true 2>"$lab/err" >/dev/null; rc=$?
ok $([ $rc = 125 ] && grep -q "workspace \`$lab\` contains protected \`$lab/state\`" "$lab/err"; echo $?) "a workspace holding the state dir is refused"

if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	mkdir -p "$lab/ws/mnt"
	unshare -m --propagation private sh -c '
		mount --bind "$1/state" "$1/ws/mnt" &&
		"$2" plan --state-dir "$1/state" -w "$1/ws" -- true' sh "$lab" "$CORDON" \
		>/dev/null 2>"$lab/err"; rc=$?
	ok $([ $rc = 125 ] && grep -q "contains protected \`$lab/ws/mnt\`" "$lab/err"; echo $?) \
		"a bind mount of the state dir in the workspace is refused, named"
	unshare -m --propagation private sh -c '"$2" plan --state-dir "$1/state" -w "$1/ws" -- true' \
		sh "$lab" "$CORDON" >/dev/null 2>&1
	ok $? "control: the same namespace without the bind mount"
else
	ok 0 "# skip bind mount case needs root"
	ok 0 "# skip bind mount case needs root"
fi

"$CORDON" plan --state-dir "$lab/state" -w "$lab/ws" 2>"$lab/err" >/dev/null; rc=$?
ok $([ $rc = 125 ] && grep -q 'no command' "$lab/err"; echo $?) "no command is a usage error (125)"
"$CORDON" plan --help >/dev/null; ok $? "plan --help exits 0"

# Without --state-dir the XDG state dir is used.
"$CORDON" plan -w "$lab/ws" -- true >/dev/null 2>&1
ok $([ -d "$lab/xdg/cordon/runs" ]; echo $?) "the default state dir is \$XDG_STATE_HOME/cordon"

tap_done
