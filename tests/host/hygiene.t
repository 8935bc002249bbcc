#!/bin/bash
# What a job shares with the daemon and with other jobs, and what it can
# make the host keep, each case beside its control:
# - secrets: a variable of the daemon's environment that a binding names
#   as a secret's source is in no job's environment (another binding's
#   sandbox, the binding's own when the secret is git's only, a job
#   without a sandbox), while the binding's selected secret reaches its
#   own job under its name and a plain variable of the daemon's reaches a
#   sandbox (the controls);
# - inherited descriptors: a file the daemon's starter left open (fd 7)
#   is not readable by a job without a sandbox, nor open in the daemon,
#   while the same read from the starter works (the control);
# - outputs: job.output keeps at most 256 names and 1 MiB in all per
#   job, past either refused with sandbox_denied, a name already saved
#   still replaceable, and the operator's views of the job whole; inject
#   refused once the inbox holds 1024 messages (taken before: the
#   control);
# - the log: a retry's command cannot truncate what an earlier segment
#   said (ftruncate on its stdout, which works on a file of its own: the
#   control), native and srt; a command's flood is held to the log's
#   256 MiB, said in the log, and notify is refused past it (allowed
#   before: the control).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
# (a short name: srt's socket dir, <state>/srt, leaves room for its sockets)
host_lab /var/tmp/cordon-hy.XXXXXX
# (host_cleanup ends every process of the jobs, by their pinned roots)
trap host_cleanup EXIT
host_own_cordon
mkdir -p "$lab/home" "$lab/ws" "$lab/ws2" "$lab/ws3" "$lab/ws4" "$lab/ws5" "$lab/ws6"
lab_env "$lab"
providers=(native)
command -v srt >/dev/null && providers+=(srt)
deploy=deploy-value-$$-$RANDOM
forge=forge-value-$$-$RANDOM
plain=plain-value-$$-$RANDOM
private=private-content-$$-$RANDOM
cat > "$lab/config.json" <<JSON
{"bindings": {
  "x": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
        "secrets": {"JOB_KEY": {"env": "DEPLOY_KEY"}, "FORGE": {"env": "FORGE_PAT"}},
        "git": {"credentials": [{"host": "forge.example", "secret": "FORGE"}]},
        "operations": ["job.output", "notify"],
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}},
  "y": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws2"},
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}},
  "y-srt": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws2"},
        "sandbox": {"provider": "srt", "policy": {"write": ["{workspace}"]}}},
  "u": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws3"}},
  "native": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws4"}, "retries": 1,
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}},
  "srt": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws5"}, "retries": 1,
        "sandbox": {"provider": "srt", "policy": {"write": ["{workspace}"]}}},
  "flood": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws6"},
        "operations": ["notify"],
        "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}}}}
JSON
printf '%s\n' "$private" > "$lab/private"
chmod 600 "$lab/private"
# the daemon's starter leaves fd 7 open on a private file (no close-on-exec)
exec 7< "$lab/private"
DEPLOY_KEY=$deploy FORGE_PAT=$forge CORDON_HYGIENE_PLAIN=$plain start_daemon
ok $? "the daemon starts"
exec 7<&-
TB="ASAN_OPTIONS=detect_leaks=0 $CORDON tb call"

# ---- secrets cross no binding
for y in y "${providers[@]/#/y-}"; do
	[ "$y" = y-native ] && continue
	rm -f "$lab/ws2/env.out"
	job start "$y" --wait -- sh -c 'env > env.out' >/dev/null
	ok $(grep -qx "CORDON_HYGIENE_PLAIN=$plain" "$lab/ws2/env.out"; echo $?) \
		"$y: a plain variable of the daemon's reaches another binding's sandbox (the control)"
	ok $(! grep -q "$deploy\|$forge\|^DEPLOY_KEY=\|^FORGE_PAT=" "$lab/ws2/env.out"; echo $?) \
		"$y: binding x's secret sources (DEPLOY_KEY, FORGE_PAT) are not in it"
done
job start x --wait -- sh -c 'env > env.out' >/dev/null
ok $(grep -qx "JOB_KEY=$deploy" "$lab/ws/env.out"; echo $?) \
	"x: its selected secret reaches its own job as JOB_KEY (the control)"
ok $(! grep -q "^DEPLOY_KEY=\|$forge\|^FORGE_PAT=\|^FORGE=" "$lab/ws/env.out"; echo $?) \
	"x: neither the source variable nor its git-only credential is in its own job's environment"
job start u --wait -- sh -c 'env > env.out; cat 2> fd7.err > fd7.out <&7; exit 0' >/dev/null
ok $([ -n "$(grep '^HOME=' "$lab/ws3/env.out")" ] && ! grep -q "$deploy\|$forge" "$lab/ws3/env.out"; echo $?) \
	"u (no sandbox): its base variables, no secret source"

# ---- inherited descriptors
ctl=$(sh -c 'cat <&7' 7< "$lab/private" 2>/dev/null)
ok $([ "$ctl" = "$private" ]; echo $?) "a command given the starter's fd 7 reads the private file through it (the control)"
ok $([ ! -s "$lab/ws3/fd7.out" ] && grep -q 'Bad file descriptor' "$lab/ws3/fd7.err"; echo $?) \
	"a job without a sandbox has no fd 7 from the daemon's starter (read $(wc -c < "$lab/ws3/fd7.out") bytes; $(head -c 60 "$lab/ws3/fd7.err"))"
held=$(for f in /proc/"$dpid"/fd/*; do readlink "$f"; done 2>/dev/null | grep -c "$lab/private")
ok $([ "$held" = 0 ]; echo $?) "the daemon holds no descriptor of it"

# ---- outputs: a bound on the count and the total, per job
id=$(job start x -- sh -c ': cordon-hygiene; while [ ! -e go ]; do sleep 0.1; done')
for _ in $(seq 600); do [ -S "$state/toolbelt/$id/toolbelt.sock" ] && break; sleep 0.05; done
tok=$(cat "$state/toolbelt/$id/token")
out() { # NAME VALUE: the HTTP status
	curl -s -o "$lab/out.answer" -w '%{http_code}' --unix-socket "$state/toolbelt/$id/toolbelt.sock" \
		-H "Authorization: Bearer $tok" -X POST \
		-d "{\"op\": \"job.output\", \"args\": {\"name\": \"$1\", \"value\": \"$2\"}}" http://cordon/v1/call
}
codes=$(for i in $(seq 1 300); do out "n$i" "v$i"; echo; done | sort | uniq -c | tr -s ' ' | tr '\n' ';')
ok $([ "$codes" = " 256 200; 44 403;" ]; echo $?) "300 outputs: 256 saved, the rest refused ($codes)"
ok $(grep -q '"sandbox_denied"' "$lab/out.answer" && grep -q '256 outputs, 1 MiB' "$lab/out.answer"; echo $?) \
	"... as sandbox_denied, saying the bound"
ok $([ "$(out n7 again)" = 200 ]; echo $?) "a name already saved is still replaced at the bound"
touch "$lab/ws/go"; job wait "$id" >/dev/null; rm -f "$lab/ws/go"
ok $([ "$(job show --json "$id" | python3 -c 'import json,sys; o=json.load(sys.stdin)["outputs"]; print(len(o), o["n7"], "n257" in o)')" = "256 again False" ]; echo $?) \
	"cordon job show has the 256 kept"
id=$(job start x -- sh -c ': cordon-hygiene; while [ ! -e go ]; do sleep 0.1; done')
for _ in $(seq 600); do [ -S "$state/toolbelt/$id/toolbelt.sock" ] && break; sleep 0.05; done
tok=$(cat "$state/toolbelt/$id/token")
big=$(head -c 16384 /dev/zero | tr '\0' a)
codes=$(for i in $(seq 1 70); do out "b$i" "$big"; echo; done | sort | uniq -c | tr -s ' ' | tr '\n' ';')
ok $([ "$codes" = " 64 200; 6 403;" ]; echo $?) "70 outputs of 16 KiB: 1 MiB saved, the rest refused ($codes)"
touch "$lab/ws/go"; job wait "$id" >/dev/null; rm -f "$lab/ws/go"
ok $(job show "$id" >/dev/null && job wait "$id" >/dev/null && [ "$(job show --json "$id" | jfield result)" = exited ]; echo $?) \
	"the operator's views of the job answer"

# ---- the inbox: a bound on the count
id=$(job start y -- sh -c ': cordon-hygiene; while [ ! -e fill ]; do sleep 0.1; done; i=0
while [ $i -lt 1023 ]; do i=$((i + 1)); : > "$CORDON_INBOX/m$i"; done; touch filled
while [ ! -e go ]; do sleep 0.1; done')
for _ in $(seq 600); do [ -d "$state/runs/$id/run/inbox" ] && break; sleep 0.05; done
job inject "$id" first > /dev/null 2> "$lab/inject1.err"; rc1=$?
touch "$lab/ws2/fill"
for _ in $(seq 600); do [ -e "$lab/ws2/filled" ] && break; sleep 0.05; done
job inject "$id" second > /dev/null 2> "$lab/inject2.err"; rc2=$?
touch "$lab/ws2/go"; job wait "$id" >/dev/null; rm -f "$lab/ws2/go" "$lab/ws2/fill" "$lab/ws2/filled"
ok $([ "$rc1" = 0 ]; echo $?) "inject into a job's inbox is taken (the control)"
ok $([ "$rc2" != 0 ] && grep -q "not_accepting.*inbox is full" "$lab/inject2.err" &&
	[ "$(ls "$state/runs/$id/run/inbox" | wc -l)" = 1024 ]; echo $?) \
	"... refused as not_accepting once the inbox holds 1024 messages ($(head -c 100 "$lab/inject2.err"))"

# ---- the log: a retry cannot erase an earlier segment's words
trunc='n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > count
echo "segment-$n-said-this"
python3 -c "import os; os.ftruncate(1, 0)" 2> trunc.$n
python3 -c "import os; f = os.open(\"own\", os.O_WRONLY | os.O_CREAT); os.write(f, b\"x\"); os.ftruncate(f, 0); print(os.fstat(f).st_size)" > own.$n
exit 3'
for p in "${providers[@]}"; do
	ws=$lab/ws4; [ "$p" = srt ] && ws=$lab/ws5
	id=$(job start "$p" --wait -- sh -c "$trunc")
	ok $([ "$(cat "$ws/own.1")" = 0 ] && [ "$(cat "$ws/own.2")" = 0 ]; echo $?) \
		"$p: ftruncate works inside on a file of the command's own (the control)"
	ok $([ "$(job show --json "$id" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["segments"]))')" = 2 ] &&
		grep -qx 'segment-1-said-this' "$state/runs/$id/log" && grep -qx 'segment-2-said-this' "$state/runs/$id/log"; echo $?) \
		"$p: after the retry the log still has what segment 1 said (its command's stdout is not the log)"
	rm -f "$ws/count"
done

# ---- the log: held to its bound
id=$(job start flood --wait -- sh -c "$TB notify '{\"text\": \"before the flood\"}' > before.out 2>&1; head -c 300M /dev/zero | tr '\\0' a; echo; $TB notify '{\"text\": \"after the flood\"}' > after.out 2>&1; exit 0")
size=$(stat -c %s "$state/runs/$id/log")
ok $(grep -q 'cordon: notify: before the flood' "$state/runs/$id/log"; echo $?) "notify writes in the log below the bound (the control)"
ok $([ "$size" -le $((256 * 1024 * 1024 + 200)) ] && grep -aq "the job's log reached its bound of 256 MiB" "$state/runs/$id/log"; echo $?) \
	"300 MiB of output: the log is held to 256 MiB and says so (size $size)"
ok $(grep -q 'sandbox_denied' "$lab/ws6/after.out" && ! grep -aq 'after the flood' "$state/runs/$id/log"; echo $?) \
	"notify past the bound is refused as sandbox_denied ($(head -c 120 "$lab/ws6/after.out"))"
rm -rf "$state/runs/$id/log"

stop_daemon
sanitizer_ok
tap_done
