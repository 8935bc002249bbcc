#!/bin/bash
# Adoption after a restart: `cordon adopt RECORD PARENT ROOT` proves the
# process tree, not just the digest. A live sandbox and an exited one are
# adopted; a reused pid, an unsandboxed tree, a parent running something
# else and a changed record are refused.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
mklab lab /tmp/cordon-adopt.XXXXXX
cleanup() {
	# (the test's own background jobs and what each started)
	kill_jobs TERM
	wait 2>/dev/null
	rm -rf "$lab"
}
trap cleanup EXIT
mkdir -p "$lab/ws" "$lab/home"
export HOME="$lab/home"
unset XDG_STATE_HOME XDG_RUNTIME_DIR SSH_AUTH_SOCK

# The parent: a shell whose only child is cordon run.
sh -c '"$1" run --state-dir "$2/state" -w "$2/ws" -- sleep 31 & echo $! > "$2/root.pid"; wait' \
	sh "$CORDON" "$lab" &
parent=$!
for _ in $(seq 100); do
	rec=$(ls -d "$lab"/state/runs/*/sandbox/1 2>/dev/null | head -1)
	[ -n "$rec" ] && [ -f "$rec/../../pins.json" ] && [ -f "$lab/root.pid" ] &&
		pgrep -f "^sleep 31" >/dev/null && break
	sleep 0.05
done
root=$(cat "$lab/root.pid")
pins="$rec/../../pins.json"

"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"
ok $? "a live sandbox is adopted"
[ -s "$lab/err" ] && echo "# $(cat "$lab/err")"

"$CORDON" adopt "$rec" "$parent" "$$" 2>"$lab/err"
ok $([ $? = 125 ] && grep -q 'is not the recorded root' "$lab/err"; echo $?) "another pid as the root is refused"

# A slow launch: the guard's walk of a large workspace runs between the
# root's start and the record (700,000 entries took 4 s). A record written
# seconds after its root started is adopted all the same ...
touch -d '+5 seconds' "$rec/plan.json"
"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"
ok $? "a sandbox whose record was written 5 s after its root started is adopted"
[ -s "$lab/err" ] && echo "# $(cat "$lab/err")"
# ... while a record that predates its root cannot be that root's own.
touch -d '-1 hour' "$rec/plan.json"
"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"
ok $([ $? = 125 ] && grep -q 'started after its plan was recorded' "$lab/err"; echo $?) \
	"a record dated before its root started is refused"
touch "$rec/plan.json"

# A reused pid: the recorded identity names another process start.
cp "$pins" "$lab/pins.good"
python3 - "$pins" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["1"]["root"]["start_ticks"] += 1
open(p, "w").write(json.dumps(d))
PY
"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"
ok $([ $? = 125 ] && grep -q 'not the process that ran this plan' "$lab/err"; echo $?) \
	"a pid whose start time differs (reused) is refused"
cp "$lab/pins.good" "$pins"

# An unsandboxed tree of the same shape: parent -> root -> child in the
# host's namespaces, recorded as the root by hand.
sh -c 'sh -c "sleep 32 & wait" & echo $! > "$1/fake.pid"; wait' sh "$lab" &
fparent=$!
for _ in $(seq 100); do [ -s "$lab/fake.pid" ] && pgrep -P "$(cat "$lab/fake.pid")" >/dev/null && break; sleep 0.05; done
fake=$(cat "$lab/fake.pid")
ticks=$(awk '{print $22}' "/proc/$fake/stat")
python3 - "$pins" "$fake" "$ticks" <<'PY'
import json, sys
p, pid, ticks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(open(p))
d["1"]["root"] = {"pid": pid, "start_ticks": ticks,
                  "provider": d["1"]["root"]["provider"]}
open(p, "w").write(json.dumps(d))
PY
# (dated so that it was running when the record was written: only what
# runs beneath it tells it from a sandbox)
touch "$rec/plan.json"
"$CORDON" adopt "$rec" "$fparent" "$fake" 2>"$lab/err"
ok $([ $? = 125 ] && grep -q 'not sandboxed' "$lab/err"; echo $?) \
	"an unsandboxed process tree is refused"
cp "$lab/pins.good" "$pins"

# The provider is the one pinned with the root, never guessed: a pin that
# names none (as one made before the root named its provider) or one this
# program does not have is refused before anything is asked of a process.
for prov in absent bogus none; do
	python3 - "$pins" "$prov" <<'PY'
import json, sys
p, prov = sys.argv[1], sys.argv[2]
d = json.load(open(p))
if prov == "absent":
    del d["1"]["root"]["provider"]
else:
    d["1"]["root"]["provider"] = prov
open(p, "w").write(json.dumps(d))
PY
	"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"; rc=$?
	case $prov in
	absent) want='the pinned provider `(none)` is not in this program' ;;
	bogus) want='the pinned provider `bogus` is not in this program' ;;
	none) want='the pinned provider `none` proves no sandbox' ;;
	esac
	ok $([ $rc = 125 ] && grep -qF "$want" "$lab/err"; echo $?) \
		"a pin whose provider is $prov is refused: $(cat "$lab/err")"
	cp "$lab/pins.good" "$pins"
done
echo "# $(cat "$lab/err")"
cp "$lab/pins.good" "$pins"
kill $(child_pids "$fake") 2>/dev/null
kill "$fake" "$fparent" 2>/dev/null

# The parent running something besides the root.
sleep 33 &
extra=$!
"$CORDON" adopt "$rec" "$$" "$root" 2>"$lab/err"
ok $([ $? = 125 ]; echo $?) "a parent that is not the root's is refused"
kill $extra 2>/dev/null

# A changed record.
chmod u+w "$rec/plan.json"
cp -p "$rec/plan.json" "$lab/plan.good"
sed -i 's/"sleep"/"sleeq"/' "$rec/plan.json"
"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"
ok $([ $? = 125 ] && grep -q 'does not match its digest' "$lab/err"; echo $?) "a changed record is refused"
cp -p "$lab/plan.good" "$rec/plan.json"
"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"
ok $? "control: the record restored is adopted again"
[ -s "$lab/err" ] && echo "# $(cat "$lab/err")"

# The sandbox stopped: an exited root leaves nothing to prove.
kill -TERM "$root"
wait "$parent" 2>/dev/null
for _ in $(seq 100); do kill -0 "$root" 2>/dev/null || break; sleep 0.05; done
ok $(pgrep -f "^sleep 31$" >/dev/null && echo 1 || echo 0) "after TERM no process of the sandbox remains"
"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"
ok $? "an exited sandbox is adopted"
[ -s "$lab/err" ] && echo "# $(cat "$lab/err")"

# An exited root proves nothing while its sandbox's processes run on: the
# record names the sandbox's first process (sandbox-root: pid 1 of its pid
# namespace, by pid and start time), and that process still running
# refuses adoption. A live one stands in for it (a sleep in a pid
# namespace of its own, as root); the control names one that is gone.
if [ "$(id -u)" = 0 ] && unshare --pid --fork true 2>/dev/null; then
	unshare --pid --fork sleep 34 &
	holder=$!
	# (its child, the namespace's first process, once it runs sleep)
	for _ in $(seq 100); do
		inner=$(child_pids "$holder")
		[ -n "$inner" ] && [ "$(cat "/proc/$inner/comm" 2>/dev/null)" = sleep ] && break
		sleep 0.05
	done
	cp -p "$rec/sandbox-root" "$lab/root.good"
	chmod u+w "$rec/sandbox-root"
	printf '%s %s\n' "$inner" "$(awk '{print $22}' "/proc/$inner/stat")" > "$rec/sandbox-root"
	"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"
	ok $([ $? = 125 ] && grep -q "the root has exited but the first process of its sandbox still runs" "$lab/err"; echo $?) \
		"an exited root whose sandbox still has a process is refused"
	[ -s "$lab/err" ] && echo "# $(cat "$lab/err")"
	# (KILL: the namespace's first process has no handler for TERM)
	kill_tree KILL "$holder"; wait "$holder" 2>/dev/null
	cp -p "$lab/root.good" "$rec/sandbox-root"
	"$CORDON" adopt "$rec" "$parent" "$root" 2>"$lab/err"
	ok $? "control: with its own first process (gone) named again, it is adopted"
else
	n=$((n + 1)); echo "ok $n # skip a pid namespace of its own for the stand-in needs root"
	n=$((n + 1)); echo "ok $n # skip as above"
fi

tap_done
