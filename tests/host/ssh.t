#!/bin/bash
# The SSH provider through the daemon, against a real OpenSSH server this
# test starts (tests/host/ssh-lib.sh: loopback, a host key made for the
# run, an account of its own, a mount namespace where /tmp, /var/tmp and
# /home are the remote's own). Jobs run there end to end on mirrored
# paths: the workspace is not on the remote until copied (the control:
# it is on the host), the command's changes come back and its writes
# outside the write grants do not; a secret reaches the command but not
# the plan, ssh's command line or the remote's records once read; the
# toolbelt answers through the forwarded socket (a wrong token does not);
# a run replacing .git with a link, a set-ID file and a FIFO come back as
# the rules say. A config whose key is not the remote's is refused with
# the value to set, and nothing is run there; an ssh configuration that
# adds a forward is refused. Process control: the exit
# status, a stop's TERM reaching the command (the host's), a lost
# connection stopping the remote run and copying its changes back (125).
# The recover table after `kill -9` of the daemon: a live run adopted
# with its helper; without it, a running one taken up again (a stop then
# reaches it) and an exited one taken up for its status; a remote that
# presents another key
# by then: nothing adopted or confirmed stopped (the run still runs).
# Reconcile's sweep removes what an ended job left on the remote.
# A remote account is a tenant (each binding here has an account of its
# own): a stop ends what the command left in the run's group; labels
# that say state=gone do not shadow the status; a second none job on a
# busy account is refused, so it never writes the first's copies; a
# reader left on the account never sees the secret; a forced command on
# the account's key refuses the run; changes to read-only needs are said
# on the log; a key changed within a pass is refused naming both keys; a
# config sharing a none binding's account is refused at load; a native
# run on an account that ran none work is refused; both still when the
# other binding pins another of the remote's host keys and spells the
# host another way (an account is the user on the machine); a none
# binding on an account another none binding's work ran on is refused.
# Each with its control.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
. "$here/ssh-lib.sh"
ssh_skip
# (a native run, on an account that never ran none work: the control of
# the last case)
static=${CORDON_STATIC:-$(cd "$(dirname "$CORDON")" && cd .. && pwd)/cordon-static}
[ -x "$static" ] || static=$(cd "$(dirname "$CORDON")" && pwd)/cordon-static
[ -x "$static" ] || bail "no cordon-static (make build/cordon-static)"
host_lab /var/tmp/cordon-ssh.XXXXXX
cleanup() {
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	sshd_cleanup
	host_cleanup
}
trap cleanup EXIT
host_own_cordon
cp "$static" "$lab/bin/cordon-static" || exit 1
# an account per binding that runs (isolation none: each binding's own)
# (and a second host key, ecdsa, as a stock sshd has: the last case's)
SSH_LAB_HOSTKEY2=1 SSH_LAB_ACCOUNTS=6 sshd_up
read -r u_box u_sc u_sc2 u_sc3 u_nofwd u_fresh _ <<< "$SSH_LAB_USERS"
mkdir -p "$lab/home" "$lab/ws/.git/hooks" "$lab/ws/.git/info" "$lab/ws/sub"
echo '[core]' > "$lab/ws/.git/config"
echo 'ref: refs/heads/main' > "$lab/ws/.git/HEAD"
echo keep > "$lab/ws/kept.txt"
echo gone > "$lab/ws/sub/gone.txt"
lab_env "$lab"
printf '%s\n' "tok-$RANDOM-$RANDOM-secret" > "$lab/secret"
secret=$(cat "$lab/secret")
ssh-keygen -q -N '' -t ed25519 -f "$lab/otherkey" || exit 1
read -r ot ok_ _ < "$lab/otherkey.pub"
remote() { # KEY POLICY USER [ISOLATION]
	local iso='"isolation": "none", "network": "host"'
	[ "${4:-none}" = none ] || iso="\"isolation\": \"$4\""
	printf '{"provider": "ssh", "remote": "%s@127.0.0.1:%s", "host_key": "%s", "identity": "%s", %s, "policy": %s}' \
		"$3" "$SSH_LAB_PORT" "$1" "$SSH_LAB_IDENTITY" "$iso" "$2"
}
pol='{"write": ["{workspace}"]}'
# (badkey and fwd never sign in: accounts of no one)
cat > "$lab/config.json" <<JSON
{"bindings": {
  "box": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}, "grace": 1,
          "container": $(remote "$SSH_LAB_HOSTKEY_PUB" "$pol" "$u_box"), "operations": ["job.status"],
          "secrets": {"API_TOKEN": {"file": "$lab/secret"}}},
  "sc": {"executor": {"kind": "shell"}, "workspace": {"scratch": true}, "grace": 1,
          "container": $(remote "$SSH_LAB_HOSTKEY_PUB" "$pol" "$u_sc")},
  "sc2": {"executor": {"kind": "shell"}, "workspace": {"scratch": true}, "grace": 1,
          "container": $(remote "$SSH_LAB_HOSTKEY_PUB" "$pol" "$u_sc2")},
  "sc3": {"executor": {"kind": "shell"}, "workspace": {"scratch": true}, "grace": 1,
          "container": $(remote "$SSH_LAB_HOSTKEY_PUB" "$pol" "$u_sc3")},
  "badkey": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
          "container": $(remote "$ot $ok_" "$pol" nobody-badkey)},
  "fwd": {"executor": {"kind": "shell"}, "workspace": {"scratch": true},
          "container": $(remote "$SSH_LAB_HOSTKEY_PUB" "$pol" nobody-fwd | sed "s|^{|{\"ssh_config\": \"$lab/fwd.conf\", |")},
  "nofwd": {"executor": {"kind": "shell"}, "workspace": {"scratch": true},
          "container": $(remote "$SSH_LAB_HOSTKEY_PUB" "$pol" "$u_nofwd" | sed "s|^{|{\"ssh_config\": \"$lab/nofwd.conf\", |")}
}}
JSON
printf 'Host *\n  RemoteForward %s/fwd.sock %s/host.sock\n' "$lab" "$lab" > "$lab/fwd.conf"
printf 'Host *\n  ServerAliveInterval 10\n' > "$lab/nofwd.conf"
start_daemon || { echo "Bail out! the daemon did not start"; sed 's/^/# /' "$lab/daemon.err"; exit 1; }
rsh() { ssh_lab_ssh "$@" 2>/dev/null; }
on_remote() { for _ in $(seq 300); do rsh test -e "$1" && return 0; sleep 0.1; done; return 1; }
# (the lab's accounts share a uid: one sees every account's records)
runs_left() { rsh 'ls -d /home/*/.cordon/runs/* 2>/dev/null | grep -c .'; }

# ---- mirrored, not mounted: the workspace is not on the remote before
ok $([ -d "$lab/ws" ] && ! rsh test -e "$lab/ws"; echo $?) \
	"the remote's filesystem is its own: the workspace is on the host (control) and not on the remote"

# ---- a job end to end
cat > "$lab/ws/inside.sh" <<'SH'
echo "user=$(id -un)"
echo "seen=$(cat kept.txt)"
echo changed > kept.txt
echo new > new.txt
rm sub/gone.txt
mkdir -p deep/er && echo d > deep/er/f.txt
echo outside > "$HOME_OUTSIDE/outside.txt" 2>/dev/null
echo "secret=$API_TOKEN"
echo "env_file=$(grep -rlF "$API_TOKEN" "$HOME/.cordon/runs/" 2>/dev/null | grep -c .)"
# the toolbelt, through the forwarded socket beside the token
tb() { python3 - "$1" "$(dirname "$CORDON_TOOLBELT")/toolbelt.sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[2])
s.sendall(("GET /v1/ops HTTP/1.0\r\nHost: toolbelt.cordon.internal\r\nAuthorization: Bearer %s\r\n\r\n" % sys.argv[1]).encode())
out = b""
while True:
    d = s.recv(65536)
    if not d: break
    out += d
print(out.decode(errors="replace"))
PY
}
echo "toolbelt=$(tb "$(cat "$CORDON_TOOLBELT")" | grep -o 'job[.]status' | head -1)"
echo "toolbelt_bad=$(tb not-the-token | grep -c 'job[.]status')"
sleep 1
exit 7
SH
id=$(job start box -- sh -c "HOME_OUTSIDE=$lab sh ./inside.sh")
# while it runs: ssh's command line on the host holds no secret
seen_cmdline=1
for _ in $(seq 50); do
	pids=$(pgrep -x ssh)
	[ -n "$pids" ] && { seen_cmdline=0; for p in $pids; do tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -q "$secret" && seen_cmdline=2; done; break; }
	sleep 0.1
done
job wait "$id" >/dev/null 2>&1; rc=$?
log=$state/runs/$id/log
ok $([ "$rc" = 7 ]; echo $?) "the job's status is the remote command's (7)"
ok $(grep -q "^user=$SSH_LAB_USER\$" "$log" && grep -q '^seen=keep$' "$log"; echo $?) \
	"it ran on the remote as its account, on the copy of the workspace"
ok $([ "$(cat "$lab/ws/kept.txt")" = changed ] && [ "$(cat "$lab/ws/new.txt")" = new ] &&
	[ ! -e "$lab/ws/sub/gone.txt" ] && [ -d "$lab/ws/sub" ] && [ "$(cat "$lab/ws/deep/er/f.txt")" = d ] &&
	[ "$(stat -c %U "$lab/ws/new.txt")" = root ]; echo $?) \
	"its changes came back: a change, a new file, a deletion, new directories (owned by the operator)"
ok $([ ! -e "$lab/outside.txt" ]; echo $?) "a write outside the write grants stays on the remote"
ok $(grep -q "^secret=$secret\$" "$log" && grep -q '^env_file=0$' "$log"; echo $?) \
	"the secret reaches the command, and no file of the run's records on the remote holds it"
ok $([ "$seen_cmdline" = 0 ] && ! grep -rqF "$secret" "$state/runs/$id/sandbox" "$state/runs/$id/pins.json"; echo $?) \
	"the secret is not on ssh's command line nor in the plan and records"
ok $(grep -q '^toolbelt=job.status$' "$log" && grep -q '^toolbelt_bad=0$' "$log"; echo $?) \
	"the toolbelt answers through the forwarded socket with the job's token (another token: not)"
ok $([ "$(runs_left)" = 0 ] && ! rsh test -e "$lab/ws"; echo $?) \
	"once its status is known, the run's records and copies are gone from the remote"

# ---- the copy back's rules, end to end (each rule's negative control
# in tests/unit/mirror.c)
mkfifo "$lab/fifo.made" 2>/dev/null
id=$(job start box -- sh -c 'rm -rf .git && mkdir -p /var/tmp/evil && echo "[core] hooksPath=/x" > /var/tmp/evil/config &&
	ln -s /var/tmp/evil .git && echo s > suid && chmod 4755 suid && mkfifo fifo && echo ok > plain')
job wait "$id" >/dev/null 2>&1
ok $([ -d "$lab/ws/.git" ] && [ ! -L "$lab/ws/.git" ] && [ "$(cat "$lab/ws/.git/config")" = '[core]' ] &&
	[ "$(cat "$lab/ws/.git/HEAD")" = 'ref: refs/heads/main' ]; echo $?) \
	".git replaced by a link on the remote: the host's .git, its config and HEAD as they were"
ok $([ -f "$lab/ws/suid" ] && [ "$(stat -c %a "$lab/ws/suid")" = 755 ] && [ ! -e "$lab/ws/fifo" ] &&
	[ "$(cat "$lab/ws/plain")" = ok ]; echo $?) \
	"a set-ID file comes back without the bit, a FIFO not at all (the control: a plain file comes back)"
rm -f "$lab/ws/suid" "$lab/ws/plain"

# ---- a run's changes to read-only needs (.git/config, a hook) do not
# come back, and the log says so (the control: its plain change came back)
id=$(job start box -- sh -c 'echo "[core] fsmonitor=evil" >> .git/config && printf "#!/bin/sh\n" > .git/hooks/pre-commit && echo ok > plain2')
job wait "$id" >/dev/null 2>&1
log=$state/runs/$id/log
ok $([ "$(cat "$lab/ws/.git/config")" = '[core]' ] && [ ! -e "$lab/ws/.git/hooks/pre-commit" ] &&
	[ "$(cat "$lab/ws/plain2")" = ok ] && grep -q "copy back refused $lab/ws/.git/config: a read-only path" "$log" &&
	grep -q "copy back refused $lab/ws/.git/hooks/pre-commit: a read-only path" "$log" &&
	grep -q 'copied back from the remote: .* [1-9][0-9]* refused$' "$log"; echo $?) \
	"changes to .git/config and a new hook: not copied back, and each said on the log with the count (the control: a plain change came back)"
grep -q 'copy back refused' "$log" || grep 'cordon:' "$log" | sed 's/^/# /'
rm -f "$lab/ws/plain2"

# ---- a key that is not the remote's: refused with the value to set
id=$(job start badkey -- sh -c 'echo ran > ran.txt')
job wait "$id" >/dev/null 2>&1; rc=$?
why=$(job show --json "$id" | jfield reason 2>/dev/null; cat "$state/runs/$id/log" 2>/dev/null)
ok $([ "$rc" != 0 ] && printf '%s' "$why" | grep -qF "presents another key: \"$SSH_LAB_HOSTKEY_PUB\"" &&
	[ ! -e "$lab/ws/ran.txt" ] && [ "$(runs_left)" = 0 ]; echo $?) \
	"a config pinned to another key: refused, naming the remote's key to set; nothing run there"

# ---- an ssh configuration that adds a forward: refused (the helper's
# connection would carry it); the same configuration without: runs
id=$(job start fwd -- sh -c 'echo ran')
job wait "$id" >/dev/null 2>&1; rc=$?
why=$(job show --json "$id" | jfield reason 2>/dev/null; cat "$state/runs/$id/log" 2>/dev/null)
id2=$(job start nofwd -- sh -c 'echo ran-nofwd')
job wait "$id2" >/dev/null 2>&1; rc2=$?
ok $([ "$rc" != 0 ] && printf '%s' "$why" | grep -q 'configuration forwards.*remoteforward' &&
	[ "$rc2" = 0 ] && grep -q '^ran-nofwd$' "$state/runs/$id2/log"; echo $?) \
	"ssh_config adding a RemoteForward: refused before anything runs (the control: the config without it runs)"

# ---- process control: a stop's TERM reaches the command's trap
id=$(job start sc -- sh -c 'trap "echo trapped; exit 5" TERM; touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
on_remote "$state/runs/$id/run/up"
job stop "$id" >/dev/null 2>&1
job wait "$id" >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 5 ] && grep -q trapped "$state/runs/$id/log"; echo $?) \
	"a stop's TERM reaches the remote command's trap, and its status is the job's (5)"

# ---- a stop of a none run ends what its command left in the run's
# process group too (the TERM reaches the command only; the stub kills
# its group once the status is recorded)
id=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; sleep 317; true')
on_remote "$state/runs/$id/run/up"
sleeps() { rsh 'ps -eo args=' | grep -c '^sleep 317$'; }
before=$(sleeps)
job stop "$id" >/dev/null 2>&1
job wait "$id" >/dev/null 2>&1
for _ in $(seq 50); do after=$(sleeps); [ "$after" = 0 ] && break; sleep 0.1; done
ok $([ "$before" = 1 ] && [ "$after" = 0 ]; echo $?) \
	"a stop of a none run: its command's child (sleep 317) ran before it (control: $before) and runs no more after it ($after)"

# ---- a labels file never shadows the status: a run that writes
# state=gone and code=0 at the head of its labels still reads as running,
# and a stop is 0 only once it is not
# (the lab's accounts share a uid: every home is the run's to write)
id=$(job start sc -- sh -c 'for l in /home/*/.cordon/runs/*/labels; do { echo state=gone; echo code=0; cat "$l"; } > "$l.n" && mv "$l.n" "$l"; done
	touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
on_remote "$state/runs/$id/run/up"
job show --json "$id" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["segments"][0]["container"]))' > "$lab/pin.json"
planted=$(SSH_LAB_AS=$u_sc rsh 'head -n 1 .cordon/runs/*/labels')
insp=$("$CORDON" container inspect --pin "$lab/pin.json" 2>/dev/null | jfield status)
"$CORDON" container stop --pin "$lab/pin.json" >/dev/null 2>&1; src=$?
after=$("$CORDON" container inspect --pin "$lab/pin.json" 2>/dev/null | jfield status)
# (a stop through the daemon too: a run the stop did not end ends here)
job stop "$id" >/dev/null 2>&1
job wait "$id" >/dev/null 2>&1
ok $([ "$planted" = state=gone ] && [ "$insp" = running ] && [ "$src" = 0 ] && [ "$after" != running ]; echo $?) \
	"labels saying state=gone first (planted: '$planted'): the run still reads as running ($insp), and a stop is 0 once it is not ($after)"

# ---- isolation none: one run at a time on the account. Another job's
# run there while one runs is refused, so it never writes the first's
# copies (which that job's copy back would bring to the host, outside the
# second's grant); once the first has ended, the next runs (the control)
idA=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done')
on_remote "$state/runs/$idA/run/up"
idB=$(job start sc -- sh -c "echo planted > '$state/runs/$idA/run/planted.txt'")
job wait "$idB" >/dev/null 2>&1; rcB=$?
whyB=$(cat "$state/runs/$idB/log" 2>/dev/null)
rsh touch "$state/runs/$idA/run/go"
job wait "$idA" >/dev/null 2>&1; rcA=$?
idB2=$(job start sc -- sh -c 'echo next')
job wait "$idB2" >/dev/null 2>&1; rcB2=$?
ok $([ "$rcB" = 125 ] && printf '%s' "$whyB" | grep -q "container_busy: the remote account \`$u_sc@" &&
	[ "$rcA" = 0 ] && [ ! -e "$state/runs/$idA/run/planted.txt" ] && [ "$rcB2" = 0 ]; echo $?) \
	"a second none job on a busy account: refused (container_busy), the first's copy back brings nothing of it; the next, once the first ended, runs"
[ "$rcB" = 125 ] || printf '%s\n' "rcB=$rcB rcA=$rcA rcB2=$rcB2 planted.txt in the first's run dir on the host: $(cat "$state/runs/$idA/run/planted.txt" 2>&1)" "$whyB" | sed 's/^/# /'

# ---- secrets never rest in a file on the remote: a process left on the
# account (what a none run can leave) reads every file of every run's
# records there as they come and go; it sees the run's records (the
# control) and never the secret
rsh 'setsid sh -c "while :; do cat /home/*/.cordon/runs/*/* 2>/dev/null; sleep 0.01; done >> /var/tmp/loot" </dev/null >/dev/null 2>&1 & echo $!' > "$lab/looter"
id=$(job start box -- sh -c 'echo "got=${#API_TOKEN}"')
job wait "$id" >/dev/null 2>&1; rc=$?
rsh "kill $(cat "$lab/looter")"
seen=$(rsh "grep -c '^job=$id\$' /var/tmp/loot")
ok $([ "$rc" = 0 ] && grep -q "^got=${#secret}\$" "$state/runs/$id/log" && [ "${seen:-0}" -gt 0 ] &&
	! rsh grep -qF "$secret" /var/tmp/loot; echo $?) \
	"the secret reaches the run over its connection: a reader of the account's records saw them ($seen times), never the secret"
rsh grep -qF "$secret" /var/tmp/loot && echo "# the reader on the account has the secret"
rsh rm -f /var/tmp/loot

# ---- a forced command on the account's key runs before cordon's calls:
# the create sees it and refuses before records or secrets go there
# (the control: the forced command did run on cordon's connections)
# (the provider's master connections, which signed in before, end first)
ssh_masters_end "$state"
printf 'command="echo owned >> /var/tmp/owned; exec /bin/sh -c \\"$SSH_ORIGINAL_COMMAND\\"" %s\n' "$(cat "$SSH_LAB_IDENTITY.pub")" |
	SSH_LAB_AS=$u_nofwd rsh 'cat > .ssh/ak.new && mv .ssh/ak.new .ssh/authorized_keys'
id=$(job start nofwd -- sh -c 'echo ran-forced')
job wait "$id" >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 125 ] && grep -q 'refused: ~/.ssh/authorized_keys holds a forced command' "$state/runs/$id/log" &&
	! grep -q ran-forced "$state/runs/$id/log" && rsh test -s /var/tmp/owned; echo $?) \
	"a forced command on the account's key (it ran on cordon's calls: the control): the run is refused before anything is sent"
[ "$rc" = 125 ] || sed 's/^/# /' "$state/runs/$id/log"

# ---- a lost connection: the run stopped (TERM), its changes back, 125
id=$(job start sc -- sh -c 'echo before > "$CORDON_RUN/part.txt"; trap "echo termed > \"\$CORDON_RUN/term.txt\"; exit 0" TERM;
	touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
on_remote "$state/runs/$id/run/up"
rid=$(job show --json "$id" | jfield segments.0.container.container)
for p in $(pgrep -x ssh); do
	# (the start call's: its script, then "cordon 'ID' 'ID' '<ms>'")
	tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -qE " cordon '$rid' '$rid' '[0-9]+' *\$" &&
		kill -KILL "$p"
done
job wait "$id" >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 125 ] && [ "$(cat "$state/runs/$id/run/part.txt" 2>/dev/null)" = before ] &&
	[ "$(cat "$state/runs/$id/run/term.txt" 2>/dev/null)" = termed ] && [ "$(runs_left)" = 0 ]; echo $?) \
	"a lost connection: the remote run stopped by TERM, its changes copied back, the segment 125"

# ---- the recover table after kill -9 of the daemon
respawn() { kill -KILL "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=; }
helper_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$state/runs/$1/sandbox/1/wrapper.json" 2>/dev/null; }
idA=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done; exit 4')
idB=$(job start sc2 -- sh -c 'touch "$CORDON_RUN/up"; while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done; exit 6')
idC=$(job start sc3 -- sh -c 'touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
for i in "$idA" "$idB" "$idC"; do on_remote "$state/runs/$i/run/up"; done
respawn
kill -KILL "$(helper_of "$idB")" "$(helper_of "$idC")"
rsh touch "$state/runs/$idB/run/go"
rundir_of() { rsh "grep -l 'job=$1' /home/*/.cordon/runs/*/labels 2>/dev/null | head -n 1 | xargs -r dirname"; }
rB=$(rundir_of "$idB")
for _ in $(seq 100); do [ -n "$rB" ] && rsh test -f "$rB/status" && break; sleep 0.1; done
start_daemon || echo "# the daemon did not start again"
sA=$(job show --json "$idA"); sC=$(job show --json "$idC")
ok $(grep -q "adopted segment 1 of $idA" "$lab/daemon.err" && [ "$(printf '%s' "$sA" | jfield segments.0.result)" = running ]; echo $?) \
	"recover: a live run with its helper: adopted"
rsh touch "$state/runs/$idA/run/go"
job wait "$idA" >/dev/null 2>&1
ok $([ $? = 4 ]; echo $?) "recover: the adopted run goes on and ends with its status (4)"
job wait "$idB" >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 6 ] && [ "$(job show --json "$idB" | jfield segments.0.result)" = exited ] &&
	grep -q "taken up again without its start helper" "$lab/daemon.err"; echo $?) \
	"recover: helper dead, run exited: taken up, its status (6) the result"
ok $([ "$(printf '%s' "$sC" | jfield segments.0.result)" = running ] && [ -n "$(rundir_of "$idC")" ]; echo $?) \
	"recover: helper dead, run running: taken up again without its helper (still running)"
job stop "$idC" >/dev/null 2>&1
job wait "$idC" >/dev/null 2>&1
ok $([ "$(job show --json "$idC" | jfield segments.0.result)" = stopped ] && [ -z "$(rundir_of "$idC")" ]; echo $?) \
	"recover: a stop of the run taken up reaches it, and nothing of it is left on the remote"

# a remote that presents another key by the time the daemon is back:
# nothing adopted or confirmed stopped; the run still runs there
idE=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done')
on_remote "$state/runs/$idE/run/up"
respawn
kill -KILL "$(helper_of "$idE")"
passes=$(ls "$state"/containers/ssh/*.pass 2>/dev/null | grep -c .)
cp "$SSH_LAB_DIR/etc/ssh_host_ed25519_key" "$lab/hostkey.orig"
cp "$SSH_LAB_DIR/etc/ssh_host_ed25519_key.pub" "$lab/hostkey.orig.pub"
cp "$lab/otherkey" "$SSH_LAB_DIR/etc/ssh_host_ed25519_key"
cp "$lab/otherkey.pub" "$SSH_LAB_DIR/etc/ssh_host_ed25519_key.pub"
# (until the remote presents it: sshd re-reads its keys on HUP)
presents() { for _ in $(seq 100); do ssh-keyscan -t ed25519 -p "$SSH_LAB_PORT" 127.0.0.1 2>/dev/null | grep -qF "$1" && return 0; sleep 0.1; done; return 1; }
kill -HUP $(child_pids "$sshd_upid") 2>/dev/null; presents "$ok_" || echo "# the lab's sshd did not take the other key"
# (the provider's master connection, made while the remote presented its
# own key, would still carry calls for up to a minute: ended, so that the
# daemon's calls connect, and check the key, again)
ssh_masters_end "$state"
# (the binding pinned to the other key goes: its sweep would now reach the
# remote, rightly, and remove the run this case looks for)
python3 - "$lab/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); del c["bindings"]["badkey"]
json.dump(c, open(sys.argv[1], "w"))
PY
start_daemon || echo "# the daemon did not start again"
sE=$(job show --json "$idE")
# a launch while the remote presents another key, a pass of its checks
# made a minute ago (the control: it was there): refused, naming the key
# presented and the pinned one (no pass outlives a key change)
idK=$(job start box -- sh -c 'echo ran-k')
job wait "$idK" >/dev/null 2>&1; rcK=$?
fp=$(ssh-keygen -lf "$lab/hostkey.orig.pub" | cut -d' ' -f2)
ok $([ "$rcK" = 125 ] && [ "$passes" -gt 0 ] && grep -qF "presents another key: \"$ot $ok_\", not the pinned host key ($fp)" "$state/runs/$idK/log" &&
	! grep -q ran-k "$state/runs/$idK/log"; echo $?) \
	"a key changed within a pass's ten minutes ($passes passes stood): the launch is refused naming both keys"
grep -qF "presents another key: \"$ot $ok_\"" "$state/runs/$idK/log" || sed 's/^/# /' "$state/runs/$idK/log"
# (looked at while the remote presents the other key, before a sweep
# could run on the restored one)
printf 'cordon-lab %s %s\n' "$ot" "$ok_" > "$lab/other.kh"
leftE=$(SSH_LAB_KNOWN_HOSTS=$lab/other.kh rundir_of "$idE")
cp "$lab/hostkey.orig" "$SSH_LAB_DIR/etc/ssh_host_ed25519_key"
cp "$lab/hostkey.orig.pub" "$SSH_LAB_DIR/etc/ssh_host_ed25519_key.pub"
kill -HUP $(child_pids "$sshd_upid") 2>/dev/null; presents "$(cut -d' ' -f2 "$lab/hostkey.orig.pub")" || echo "# the lab's sshd did not take its key back"
ok $([ "$(printf '%s' "$sE" | jfield segments.0.result)" = lost ] &&
	printf '%s' "$sE" | jfield segments.0.reason | grep -q 'container_stop_unverified.*pinned host key' &&
	! grep -q "adopted segment 1 of $idE" "$lab/daemon.err" &&
	[ -n "$leftE" ]; echo $?) \
	"recover: a remote presenting another key: not adopted, the stop unverified, and nothing done there (its run is still there)"
[ "$(printf '%s' "$sE" | jfield segments.0.result)" = lost ] || { printf '%s\n' "$sE" | sed 's/^/# /'; tail -n 8 "$lab/daemon.err" | sed 's/^/# /'; }

# ---- reconcile's sweep: what the ended job left on the remote goes
# (a daemon sweeps as it starts, then every minute)
respawn
start_daemon || echo "# the daemon did not start again"
for _ in $(seq 100); do [ -z "$(rundir_of "$idE")" ] && break; sleep 0.2; done
r=$([ -z "$(rundir_of "$idE")" ]; echo $?)
ok "$r" "reconcile's sweep removes the run an ended job left on the remote (its group killed)"
[ "$r" = 0 ] || { job show --json "$idE" | sed 's/^/# /'; tail -25 "$lab/daemon.err" | sed 's/^/# /'; rsh 'ls -la $HOME/.cordon/runs/*; ps -eo pid,pgid,stat,args' | sed 's/^/# /'; }
# ---- a none binding's account is its own: a config that gives it to
# another binding too is refused where it loads (the control: the
# suite's config, each binding its own account, loaded and serves)
python3 - "$lab/config.json" "$lab/shared.json" "$(remote "$SSH_LAB_HOSTKEY_PUB" "$pol" "$u_sc" native)" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["bindings"]["nat"] = {"executor": {"kind": "shell"}, "workspace": {"scratch": True}, "container": json.loads(sys.argv[3])}
json.dump(c, open(sys.argv[2], "w"))
PY
mkdir -p "$lab/st2"
timeout 60 "$CORDON" daemon --state-dir "$lab/st2" --config "$lab/shared.json" 2>"$lab/shared.err" >/dev/null; rc=$?
ok $([ "$rc" = 125 ] && grep -q "sandbox_config: .*the account \`$u_sc@127.0.0.1\` runs isolation none work.*binding \`nat\`" "$lab/shared.err" &&
	api GET /v1/health >/dev/null 2>&1; echo $?) \
	"a config giving a none binding's account to a native binding too: refused at load (the control: the suite's own config serves)"
[ "$rc" = 125 ] || sed 's/^/# /' "$lab/shared.err"

# ---- an account that ran none work is never a native run's again: the
# none binding gone, the same account given to a native binding is
# refused at launch (the control: a native binding on an account that
# never ran none work runs)
python3 - "$lab/config.json" "$(remote "$SSH_LAB_HOSTKEY_PUB" "$pol" "$u_sc" native)" "$(remote "$SSH_LAB_HOSTKEY_PUB" "$pol" "$u_fresh" native)" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); del c["bindings"]["sc"]
c["bindings"]["nat"] = {"executor": {"kind": "shell"}, "workspace": {"scratch": True}, "container": json.loads(sys.argv[2])}
c["bindings"]["nat2"] = {"executor": {"kind": "shell"}, "workspace": {"scratch": True}, "container": json.loads(sys.argv[3])}
json.dump(c, open(sys.argv[1], "w"))
PY
respawn
start_daemon || echo "# the daemon did not start again"
id=$(job start nat -- sh -c 'echo ran-nat')
job wait "$id" >/dev/null 2>&1; rc=$?
id2=$(job start nat2 -- sh -c 'echo ran-nat2')
job wait "$id2" >/dev/null 2>&1; rc2=$?
ok $([ "$rc" = 125 ] && grep -q "the remote account \`$u_sc@127.0.0.1:$SSH_LAB_PORT\` ran isolation none work (job " "$state/runs/$id/log" &&
	! grep -q ran-nat "$state/runs/$id/log" && [ "$rc2" = 0 ] && grep -q '^ran-nat2$' "$state/runs/$id2/log"; echo $?) \
	"a native binding on an account that ran none work: refused at launch, naming the job (the control: on a fresh account it runs)"
[ "$rc" = 125 ] && [ "$rc2" = 0 ] || sed 's/^/# /' "$state/runs/$id/log" "$state/runs/$id2/log"

# ---- an account is the user on the remote machine, whatever key pins
# it: the lab's sshd presents an ecdsa key beside its ed25519 one. Pinned
# by it, the host spelled 127.1: a native binding on the account sc's
# none runs used is refused (the mark), and a none binding on sc2's
# account is refused at launch, naming sc2, and so is sc2 (the config
# loads: its load cannot see two keys are one machine's). The control:
# a native binding pinned the same way on a fresh account runs.
pin2() { remote "$SSH_LAB_HOSTKEY2_PUB" "$pol" "$1" "${2:-none}" | sed 's/@127\.0\.0\.1:/@127.1:/'; }
python3 - "$lab/config.json" "$(pin2 "$u_sc" native)" "$(pin2 "$u_fresh" native)" "$(pin2 "$u_sc2")" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for name, cont in (("k2nat", sys.argv[2]), ("k2fresh", sys.argv[3]), ("k2none", sys.argv[4])):
    c["bindings"][name] = {"executor": {"kind": "shell"}, "workspace": {"scratch": True}, "container": json.loads(cont)}
json.dump(c, open(sys.argv[1], "w"))
PY
respawn
start_daemon || echo "# the daemon did not start again"
run_one() { local i; i=$(job start "$1" -- sh -c "echo ran-$1"); job wait "$i" >/dev/null 2>&1; echo "$? $i"; }
read -r rcN idN <<< "$(run_one k2nat)"
read -r rcF idF <<< "$(run_one k2fresh)"
read -r rcX idX <<< "$(run_one k2none)"
read -r rcS idS <<< "$(run_one sc2)"
ok $([ "$rcN" = 125 ] && grep -q "the remote account \`$u_sc@127.1:$SSH_LAB_PORT\` ran isolation none work (job " "$state/runs/$idN/log" &&
	[ "$rcX" = 125 ] && grep -q "sandbox_config: bindings.k2none.container.remote: .*binding \`sc2\`" "$state/runs/$idX/log" &&
	[ "$rcS" = 125 ] && grep -q "sandbox_config: bindings.sc2.container.remote: .*binding \`k2none\`" "$state/runs/$idS/log" &&
	! grep -q '^ran-' "$state/runs/$idN/log" "$state/runs/$idX/log" "$state/runs/$idS/log" &&
	[ "$rcF" = 0 ] && grep -q '^ran-k2fresh$' "$state/runs/$idF/log"; echo $?) \
	"bindings pinned by the remote's other host key (ecdsa, as user@127.1): a native one on an account that ran none work and a none one beside sc2 are refused at launch, and sc2 too (the control: on a fresh account it runs: $rcF)"
[ "$rcN$rcX$rcS$rcF" = 1251251250 ] || sed 's/^/# /' "$state/runs/$idN/log" "$state/runs/$idX/log" "$state/runs/$idS/log" "$state/runs/$idF/log"

# ---- ... and for as long as it exists: the first none binding's. sc gone
# from the config, another none binding on its account (by the ecdsa key,
# as 127.1) is refused at launch, naming sc (the control: box, a none
# binding on the account it marked itself, runs)
python3 - "$lab/config.json" "$(pin2 "$u_sc")" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for name in ("nat", "k2nat", "k2none"):
    del c["bindings"][name]
c["bindings"]["k2sc"] = {"executor": {"kind": "shell"}, "workspace": {"scratch": True}, "container": json.loads(sys.argv[2])}
json.dump(c, open(sys.argv[1], "w"))
PY
respawn
start_daemon || echo "# the daemon did not start again"
read -r rcO idO <<< "$(run_one k2sc)"
read -r rcB idB <<< "$(run_one box)"
ok $([ "$rcO" = 125 ] && grep -q "the remote account \`$u_sc@127.1:$SSH_LAB_PORT\` ran isolation none work of binding \`sc\` (job .*not \`k2sc\`'s" "$state/runs/$idO/log" &&
	! grep -q '^ran-' "$state/runs/$idO/log" && [ "$rcB" = 0 ] && grep -q '^ran-box$' "$state/runs/$idB/log"; echo $?) \
	"a none binding on an account another none binding's work ran on (by its other host key): refused at launch, naming it (the control: box on its own account runs: $rcB)"
[ "$rcO$rcB" = 1250 ] || sed 's/^/# /' "$state/runs/$idO/log" "$state/runs/$idB/log"

sanitizer_ok
tap_done
