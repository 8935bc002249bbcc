# The container conformance suite: what the host's lifecycle relies on
# of any container provider (src/container/contract.h), checked through a
# program that takes `container ...` as cordon-host does (cordon-host
# itself, or tests/helpers/fakectr), for one binding's container config.
# Sourced; the caller defines TAP's `ok STATUS DESCRIPTION` (as
# tests/host/lib.sh does) and prints the plan. Nothing here is specific to
# a provider. It drives `container wrap` over a SOCK_SEQPACKET control
# socket as the daemon does (the request, the pin answered, the word 'g'),
# and asks `container inspect|list|stop|remove` about what it made:
#   created: made and not started (inspect says created, no status or
#     start time; nothing ran); the pin checked against its labels (the
#     job's, segment's and digest's: another's is an error, 125);
#   listed: under its job and in the host's whole listing; not under
#     another job (whose own container is there: the control), nor a job
#     that has none, nor for another state dir (another host label);
#   started on the word: the wrapper exits with the command's status and
#     writes it to exit.json; what it made is removed once its status is
#     known (inspect says gone, it is not listed);
#   running while it runs (a start time, no status); its start helper
#     killed, it runs on and its end is reported: exited, its status, a
#     start time, still listed; a stop of an exited one is 0;
#   removed: remove 0; inspect then says gone (exit 0, not an error);
#     not listed; remove again 0;
#   a stop: while one of a job runs a second is refused
#     (container_running); stop confirms it is not running (0), and its
#     wrapper ends with its status (137, killed);
#   never started: no word, nothing runs, and what create made is gone.
# Then that the program ran clean under the sanitizers (any build).
#
# conformance_run DRIVER CONFIG_JSON WORKSPACE STATE_DIR
#   DRIVER       a program taking `container ...` (cordon-host, fakectr)
#   CONFIG_JSON  the binding's container config, as JSON text
#   WORKSPACE    an existing directory: each case's workspace is made in it
#   STATE_DIR    the state dir the wrappers record in (made when missing)
# Prints the TAP lines through `ok` (each description prefixed with
# $CONFORMANCE_PREFIX when set) and, after a failure, `# ` lines with
# what the program said. Returns 0. Everything it made (its containers
# through `remove`, the wrappers it started, its scratch dir) is gone when
# it returns. CONFORMANCE_TIMEOUT: seconds a wrapper's answer or a change
# of state may take (default 120).
# Where the command runs: a provider whose runs see the host's files
# through mounts (docker, the fake) needs nothing; one that copies them
# (ssh) sets CONFORMANCE_EXISTS and CONFORMANCE_TOUCH to commands that
# test for and make a path there (its copy), given the path.
conf_where_exists() { if [ -n "${CONFORMANCE_EXISTS:-}" ]; then $CONFORMANCE_EXISTS "$1"; else [ -e "$1" ]; fi; }
conf_where_touch() { if [ -n "${CONFORMANCE_TOUCH:-}" ]; then $CONFORMANCE_TOUCH "$1"; else touch "$1"; fi; }

# conf_member KEY JSON: a flat member of compact JSON (what inspect and
# exit.json hold): a string's text, a number; else "absent"
conf_member() {
	local re="\"$1\":(\"([^\"\\\\]*)\"|(-?[0-9]+))"
	if [[ $2 =~ $re ]]; then echo "${BASH_REMATCH[2]}${BASH_REMATCH[3]}"; else echo absent; fi
}

# conf_ok STATUS DESCRIPTION [FILE]: ok, prefixed; FILE's tail after a failure
conf_ok() {
	ok "$1" "${CONFORMANCE_PREFIX:-}$2"
	[ "$1" = 0 ] || [ -z "${3:-}" ] || [ ! -s "$3" ] || tail -5 "$3" | sed 's/^/# /'
}

# conf_wrap NAME JOB SEGMENT ARGV_JSON: the wrapper started for a request
# in the workspace $conf_ws/NAME, driven from $conf_s/NAME (drive.py says
# what it leaves there); 0 once it answered a pin
conf_wrap() {
	local d=$conf_s/$1
	mkdir -p "$d" "$conf_ws/$1" || return 1
	python3 "$conf_s/drive.py" "$conf_drv" "$d" "$conf_timeout" "$conf_cfg" "$conf_ws/$1" \
		"$conf_state" "$2" "$3" "$4" &
	conf_pids+=("$!")
	for _ in $(seq $((conf_timeout * 10))); do
		[ -e "$d/answer" ] && break
		[ -e "$d/status" ] && break
		sleep 0.1
	done
	[ -s "$d/pin.json" ]
}

# conf_answer NAME FIELD: a member of NAME's answer ("" when none)
conf_answer() { cat "$conf_s/$1/$2" 2>/dev/null; }

# conf_word NAME g|nogo: the daemon's word (nogo: the socket closed)
conf_word() { touch "$conf_s/$1/$2"; }

# conf_status NAME: the wrapper's exit status, once it ended ("none"
# after the timeout; a signal's as 128+N)
conf_status() {
	for _ in $(seq $((conf_timeout * 10))); do
		[ -e "$conf_s/$1/status" ] && { cat "$conf_s/$1/status"; return 0; }
		sleep 0.1
	done
	echo none
}

# conf_cmd NAME VERB [ARGS...]: `container VERB --pin NAME's pin ARGS`;
# $conf_out its stdout, $conf_rc its status, stderr kept in $conf_s/NAME/cmd.err
conf_cmd() {
	local name=$1 verb=$2
	shift 2
	conf_out=$("$conf_drv" container "$verb" --pin "$conf_s/$name/pin.json" "$@" \
		2>>"$conf_s/$name/cmd.err")
	conf_rc=$?
}

# conf_state_is NAME: inspect's status of NAME ("error" when inspect failed)
conf_state_is() {
	conf_cmd "$1" inspect
	if [ "$conf_rc" = 0 ]; then conf_member status "$conf_out"; else echo error; fi
}

# conf_while NAME STATUS: inspect until NAME's status is no longer STATUS
# (or the timeout); $conf_out and $conf_rc are the last inspect's
conf_while() {
	for _ in $(seq $((conf_timeout * 10))); do
		conf_cmd "$1" inspect
		[ "$conf_rc" = 0 ] && [ "$(conf_member status "$conf_out")" = "$2" ] || return 0
		sleep 0.1
	done
	return 1
}

# conf_list [ARGS...]: `container list --config ... ARGS` (--state-dir
# $conf_state unless ARGS names one); $conf_out, $conf_rc
conf_list() {
	local sd=(--state-dir "$conf_state")
	[[ " $* " == *" --state-dir "* ]] && sd=()
	conf_out=$("$conf_drv" container list --config "$conf_s/config.json" "${sd[@]}" "$@" \
		2>>"$conf_s/list.err")
	conf_rc=$?
}

# conf_listed ID: is ID a line of the last listing?
conf_listed() { [ -n "$1" ] && printf '%s\n' "$conf_out" | grep -qxF -- "$1"; }

# conf_id NAME: the container ID NAME's pin names ("" when none)
conf_id() { conf_answer "$1" id; }

conf_driver_py() {
	cat > "$conf_s/drive.py" <<'PY'
# drive.py DRIVER DIR TIMEOUT CONFIG WORKSPACE STATE JOB SEGMENT ARGV:
# `DRIVER container wrap --ctl 3` over a SOCK_SEQPACKET pair, as the
# daemon drives it: the request sent; the answer to DIR/answer, its
# "container" (the pin) to DIR/pin.json, its digest, record, error and
# message to files of those names, the pin's container ID to DIR/id; then the word when DIR/g appears,
# none (the socket closed) on DIR/nogo, the wrapper's end, or 3*TIMEOUT
# s; the wrapper's status to DIR/status (a signal's as 128+N). Each file
# is written whole, then renamed into place.
import json, os, socket, subprocess, sys, time
drv, d, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
req = {"policy": {"write": ["{workspace}"]}, "container": json.loads(sys.argv[4]),
       "workspace": sys.argv[5], "state_dir": sys.argv[6], "execution": sys.argv[7],
       "segment": int(sys.argv[8]), "argv": json.loads(sys.argv[9]), "quiet": True,
       "job_dirs": True}
def put(name, text):
    with open(os.path.join(d, name + ".tmp"), "w") as f:
        f.write(text)
    os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
with open(os.path.join(d, "out"), "wb") as out, open(os.path.join(d, "err"), "wb") as err:
    p = subprocess.Popen([drv, "container", "wrap", "--ctl", str(b.fileno())],
                         pass_fds=[b.fileno()], stdin=subprocess.DEVNULL, stdout=out, stderr=err)
b.close()
put("pid", str(p.pid))
a.send(json.dumps(req).encode())
a.settimeout(timeout)
try:
    ans = a.recv(1 << 20).decode()
except (socket.timeout, OSError):
    ans = ""
try:
    j = json.loads(ans)
except ValueError:
    j = {}
for k in ("digest", "record", "error", "message"):
    if isinstance(j, dict) and isinstance(j.get(k), str):
        put(k, j[k])
if isinstance(j, dict) and isinstance(j.get("container"), dict):
    put("pin.json", json.dumps(j["container"]))
    if isinstance(j["container"].get("container"), str):
        put("id", j["container"]["container"])
put("answer", ans)
end = time.time() + 3 * timeout
while time.time() < end and p.poll() is None:
    if os.path.exists(os.path.join(d, "g")):
        a.send(b"g")
        break
    if os.path.exists(os.path.join(d, "nogo")):
        break
    time.sleep(0.05)
a.close()
rc = p.wait()
put("status", str(rc if rc >= 0 else 128 - rc))
PY
}

conformance_run() {
	local conf_drv=$1 conf_cfg=$2 conf_ws=$3 conf_state=$4
	local conf_timeout=${CONFORMANCE_TIMEOUT:-120}
	local conf_s conf_out='' conf_rc=0 conf_pids=() tag ja jb jc jd other st rec id_a id_b id_c
	local p d
	conf_s=$(mktemp -d "${TMPDIR:-/tmp}/cordon-conformance.XXXXXX") || return 1
	other=$conf_s/other-state
	mkdir -p "$conf_state" "$other"
	printf '%s\n' "$conf_cfg" > "$conf_s/config.json"
	conf_driver_py
	tag=conf-$$-$RANDOM
	ja=$tag-a jb=$tag-b jc=$tag-c jd=$tag-d

	# ---- created, not started
	conf_wrap a "$ja" 1 '["sh", "-c", "echo ran > ran; exit 3"]'
	conf_ok $? "the wrapper answers a pin naming a container, before the word" "$conf_s/a/err"
	id_a=$(conf_id a)
	conf_cmd a inspect
	conf_ok $([ "$conf_rc" = 0 ] && [ "$(conf_member status "$conf_out")" = created ] &&
		[ "$(conf_member exit_code "$conf_out")" = absent ] &&
		[ "$(conf_member started_at "$conf_out")" = absent ]; echo $?) \
		"made, not started: inspect says created, with no status and no start time ($conf_out)" "$conf_s/a/cmd.err"
	conf_ok $(! conf_where_exists "$conf_ws/a/ran"; echo $?) "... and nothing ran"
	conf_cmd a inspect --job "$ja" --segment 1 --digest "$(conf_answer a digest)"
	conf_ok $([ "$conf_rc" = 0 ] && [ "$(conf_member status "$conf_out")" = created ]; echo $?) \
		"the pin checked against its own job, segment and digest: created (the control)" "$conf_s/a/cmd.err"
	conf_cmd a inspect --job "$jb" --segment 1
	st=$conf_rc
	conf_cmd a inspect --job "$ja" --segment 2
	conf_ok $([ "$st" = 125 ] && [ "$conf_rc" = 125 ]; echo $?) \
		"checked against another job or another segment: an error (125), not a status"
	conf_cmd a inspect --job "$ja" --segment 1 --digest 0000000000000000000000000000000000000000000000000000000000000000
	conf_ok $([ "$conf_rc" = 125 ]; echo $?) "... or another digest: an error (125)"

	# ---- listed for its job and host only
	conf_wrap b "$jb" 1 '["sh", "-c", "echo ran > ran; while [ ! -e release ]; do sleep 0.1; done; exit 3"]'
	conf_ok $? "a second job's container is made too (the listings' control)" "$conf_s/b/err"
	id_b=$(conf_id b)
	conf_list --job "$ja"
	conf_ok $([ "$conf_rc" = 0 ] && conf_listed "$id_a" && ! conf_listed "$id_b"; echo $?) \
		"list --job: its job's listing has it, and not another job's" "$conf_s/list.err"
	conf_list
	conf_ok $([ "$conf_rc" = 0 ] && conf_listed "$id_a" && conf_listed "$id_b"; echo $?) \
		"list: the host's whole listing has both" "$conf_s/list.err"
	conf_list --job "$jb"
	conf_ok $([ "$conf_rc" = 0 ] && ! conf_listed "$id_a" && conf_listed "$id_b"; echo $?) \
		"another job's listing does not have it (and has its own: the control)" "$conf_s/list.err"
	conf_list --job "$tag-none"
	conf_ok $([ "$conf_rc" = 0 ] && [ -z "$conf_out" ]; echo $?) \
		"a job with no container: an empty listing, exit 0" "$conf_s/list.err"
	conf_list --state-dir "$other"
	conf_ok $([ "$conf_rc" = 0 ] && ! conf_listed "$id_a" && ! conf_listed "$id_b"; echo $?) \
		"another state dir (another host label): neither is listed, exit 0" "$conf_s/list.err"

	# ---- started on the word: its status; removed once known
	conf_word a g
	st=$(conf_status a)
	conf_ok $([ "$st" = 3 ] && [ -e "$conf_ws/a/ran" ]; echo $?) \
		"on the word it runs, and the wrapper exits with the command's status (3: $st)" "$conf_s/a/err"
	rec=$(conf_answer a record)
	conf_ok $([ "$(conf_member code "$(cat "$rec/exit.json" 2>/dev/null)")" = 3 ]; echo $?) "... which exit.json records"
	conf_list --job "$ja"
	st=$conf_rc
	d=$conf_out
	conf_cmd a inspect
	conf_ok $([ "$conf_rc" = 0 ] && [ "$(conf_member status "$conf_out")" = gone ] &&
		[ "$st" = 0 ] && [ -z "$d" ]; echo $?) \
		"what it made is removed once its status is known: inspect says gone ($conf_out), not listed" \
		"$conf_s/a/cmd.err"

	# ---- running; its start helper killed; its end reported
	conf_word b g
	conf_while b created
	conf_ok $([ "$conf_rc" = 0 ] && [ "$(conf_member status "$conf_out")" = running ] &&
		[ "$(conf_member started_at "$conf_out")" != absent ] &&
		[ "$(conf_member exit_code "$conf_out")" = absent ]; echo $?) \
		"started: inspect says running, with a start time and no status ($conf_out)" "$conf_s/b/cmd.err"
	for _ in $(seq 100); do conf_where_exists "$conf_ws/b/ran" && break; sleep 0.1; done
	conf_ok $(conf_where_exists "$conf_ws/b/ran"; echo $?) "... and its command runs (the control)"
	p=$(cat "$conf_s/b/pid" 2>/dev/null)
	[ -n "$p" ] && kill -KILL "$p" 2>/dev/null
	st=$(conf_status b)
	conf_ok $([ "$(conf_state_is b)" = running ]; echo $?) \
		"its start helper killed ($st), it runs on: inspect says running" "$conf_s/b/cmd.err"
	conf_where_touch "$conf_ws/b/release"
	conf_while b running
	conf_ok $([ "$conf_rc" = 0 ] && [ "$(conf_member status "$conf_out")" = exited ] &&
		[ "$(conf_member exit_code "$conf_out")" = 3 ] &&
		[ "$(conf_member started_at "$conf_out")" != absent ]; echo $?) \
		"once it ends: inspect says exited, with its status (3) and its start time ($conf_out)" "$conf_s/b/cmd.err"
	conf_list --job "$jb"
	conf_ok $([ "$conf_rc" = 0 ] && conf_listed "$id_b"; echo $?) "an exited container is listed until removed" "$conf_s/list.err"
	conf_cmd b stop
	st=$conf_rc
	conf_ok $([ "$st" = 0 ] && [ "$(conf_state_is b)" = exited ]; echo $?) \
		"stop of an exited one: 0, and it stays exited" "$conf_s/b/cmd.err"

	# ---- removed, and removable again
	conf_cmd b remove
	conf_ok $([ "$conf_rc" = 0 ]; echo $?) "remove: 0" "$conf_s/b/cmd.err"
	conf_cmd b inspect
	conf_ok $([ "$conf_rc" = 0 ] && [ "$(conf_member status "$conf_out")" = gone ]; echo $?) \
		"a removed one: inspect says gone, exit 0, not an error (exit $conf_rc: $conf_out)" "$conf_s/b/cmd.err"
	conf_list --job "$jb"
	st=$conf_rc
	d=$conf_out
	conf_list
	conf_ok $([ "$st" = 0 ] && [ -z "$d" ] && [ "$conf_rc" = 0 ] && ! conf_listed "$id_b"; echo $?) \
		"... and listed no more" "$conf_s/list.err"
	conf_cmd b remove
	conf_ok $([ "$conf_rc" = 0 ]; echo $?) "remove again: 0 (removable again)" "$conf_s/b/cmd.err"
	conf_cmd b stop
	conf_ok $([ "$conf_rc" = 0 ]; echo $?) "stop of a gone one: 0" "$conf_s/b/cmd.err"

	# ---- a stop; no second container of a job beside a running one
	conf_wrap c "$jc" 1 '["sh", "-c", "echo ran > ran; while :; do sleep 1; done"]'
	conf_ok $? "a container to stop is made" "$conf_s/c/err"
	id_c=$(conf_id c)
	conf_word c g
	conf_while c created
	conf_ok $([ "$(conf_member status "$conf_out")" = running ]; echo $?) \
		"it runs ($conf_out)" "$conf_s/c/cmd.err"
	conf_wrap c2 "$jc" 2 '["sh", "-c", "echo ran > ran"]'
	conf_ok $([ -n "$(conf_answer c2 error)" ] && conf_answer c2 message | grep -q container_running &&
		[ "$(conf_status c2)" = 125 ] && ! conf_where_exists "$conf_ws/c2/ran"; echo $?) \
		"while it runs, a second container of its job is refused (container_running), nothing run" "$conf_s/c2/err"
	conf_list --job "$jc"
	conf_ok $([ "$conf_rc" = 0 ] && [ "$conf_out" = "$id_c" ]; echo $?) "... and its job has the one container" "$conf_s/list.err"
	conf_cmd c stop
	st=$conf_rc
	conf_ok $([ "$st" = 0 ] && [[ "$(conf_state_is c)" =~ ^(exited|gone)$ ]]; echo $?) \
		"stop: 0, and inspect then says it is not running" "$conf_s/c/cmd.err"
	st=$(conf_status c)
	conf_ok $([ "$st" = 137 ]; echo $?) "its wrapper ends with the container's status (137, killed: $st)" "$conf_s/c/err"
	conf_ok $([ "$(conf_state_is c)" = gone ]; echo $?) "... and removed what it made" "$conf_s/c/cmd.err"

	# ---- never started: no word
	conf_wrap d "$jd" 1 '["sh", "-c", "echo ran > ran"]'
	conf_ok $? "a container the word never comes for is made" "$conf_s/d/err"
	conf_word d nogo
	st=$(conf_status d)
	conf_list --job "$jd"
	conf_ok $([ "$st" = 125 ] && ! conf_where_exists "$conf_ws/d/ran" && [ "$(conf_state_is d)" = gone ] && [ -z "$conf_out" ]; echo $?) \
		"without the word nothing runs (125), and what create made is gone" "$conf_s/d/err"

	if grep -qs 'ERROR: AddressSanitizer\|runtime error\|LeakSanitizer' "$conf_s"/*/err "$conf_s"/*/cmd.err "$conf_s/list.err"; then
		conf_ok 1 "the program ran clean under the sanitizers"
		grep -hs -A5 'ERROR: AddressSanitizer\|runtime error\|LeakSanitizer' "$conf_s"/*/err "$conf_s"/*/cmd.err \
			"$conf_s/list.err" | head -30 | sed 's/^/# /'
	else
		conf_ok 0 "the program ran clean under the sanitizers"
	fi

	# ---- what it made goes, whatever happened above
	for d in "$conf_s"/*/; do
		[ -s "$d/pin.json" ] &&
			"$conf_drv" container remove --pin "$d/pin.json" >/dev/null 2>&1
		p=$(cat "$d/pid" 2>/dev/null)
		[ -n "$p" ] && [ ! -e "$d/status" ] && kill -KILL "$p" 2>/dev/null
	done
	for p in "${conf_pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$conf_s"
	return 0
}
