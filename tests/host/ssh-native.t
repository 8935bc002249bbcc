#!/bin/bash
# The SSH provider's "isolation": "native" through the daemon, on the
# SSH lab (tests/host/ssh-lib.sh: a real sshd on loopback, an account of
# its own, a filesystem of its own for /tmp, /var/tmp, /home and /run).
# cordon's static binary and the recorded plan go to the run's records
# there, and the command runs in cordon's native sandbox on the remote;
# its proxies relay over the ssh connection to a gateway in the host's
# helper, so the allowlist and the audit log are the host's. The
# isolation suite's network and filesystem cases hold inside the remote
# run, each with its control: the same probe run on the remote as the
# same account, outside the sandbox, succeeds. An allowed host is reached
# (npm install of a real package from the registry) and a denied one gets
# 403, both in the host's audit log; a direct connection goes nowhere;
# the toolbelt answers through the gateway; the daemon's doctor reports
# each remote's last pass. After `kill -9` of the
# daemon, a live native run is adopted with its helper and its network
# still works; one whose helper is gone is adopted without it: watched
# to its end, its changes and status taken.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
need_exec "$CORDON_HELPERS/probe" "the probe helper"
. "$here/ssh-lib.sh"
ssh_skip
static=${CORDON_STATIC:-$(cd "$(dirname "$CORDON")" && cd .. && pwd)/cordon-static}
[ -x "$static" ] || static=$(cd "$(dirname "$CORDON")" && pwd)/cordon-static
[ -x "$static" ] || bail "no cordon-static (make build/cordon-static)"
host_lab /var/tmp/cordon-sshn.XXXXXX
tcp_pid=
cleanup() {
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	[ -n "$tcp_pid" ] && { kill -KILL "$tcp_pid"; wait "$tcp_pid"; } 2>/dev/null
	sshd_cleanup
	host_cleanup
}
trap cleanup EXIT
host_own_cordon
cp "$static" "$lab/bin/cordon-static" || exit 1
sshd_up
mkdir -p "$lab/home" "$lab/ws/bin"
cp "$CORDON_HELPERS/probe" "$lab/ws/bin/probe" || exit 1
echo keep > "$lab/ws/kept.txt"
lab_env "$lab"
rsh() { ssh_lab_ssh "$@" 2>/dev/null; }
on_remote() { for _ in $(seq 300); do rsh test -e "$1" && return 0; sleep 0.1; done; return 1; }
runs_left() { rsh 'ls -A "$HOME/.cordon/runs" 2>/dev/null | grep -c .'; }
rhome=$(rsh 'echo $HOME')
pol='{"write": ["{workspace}"], "network": {"allow": ["registry.npmjs.org"]}}'
remote() { # EXTRA
	printf '{"provider": "ssh", "remote": "%s", "host_key": "%s", "identity": "%s"%s, "policy": %s}' \
		"$SSH_LAB_REMOTE" "$SSH_LAB_HOSTKEY_PUB" "$SSH_LAB_IDENTITY" "$1" "$pol"
}
cat > "$lab/config.json" <<JSON
{"bindings": {
  "nat": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}, "grace": 1,
          "container": $(remote ''), "operations": ["job.status"]},
  "sc": {"executor": {"kind": "shell"}, "workspace": {"scratch": true}, "grace": 1,
          "container": $(remote ', "isolation": "native"')},
  "far": {"executor": {"kind": "shell"}, "workspace": {"scratch": true},
          "container": $(remote '' | sed "s|@127.0.0.1:$SSH_LAB_PORT|@127.0.0.1:1|")}
}}
JSON
start_daemon || { echo "Bail out! the daemon did not start"; sed 's/^/# /' "$lab/daemon.err"; exit 1; }

# what the controls reach on the remote, outside any sandbox: a TCP
# listener of the host's loopback (the lab's remote shares the host's
# network), a unix socket of the remote's, the account's own files
python3 -c 'import socket,time
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(16); print(s.getsockname()[1], flush=True)
while True: c,_=s.accept(); c.close()' > "$lab/tcp.port" &
tcp_pid=$!
for _ in $(seq 50); do [ -s "$lab/tcp.port" ] && break; sleep 0.1; done
tcp_port=$(cat "$lab/tcp.port")
rsh 'setsid python3 -c "import socket,os
s=socket.socket(socket.AF_UNIX); s.bind(\"/var/tmp/remote.sock\"); s.listen(16)
while True: c,_=s.accept(); c.close()" </dev/null >/dev/null 2>&1 &'
rsh 'setsid python3 -c "import socket,os
s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(\"/var/tmp/remote.dgram\")
a=socket.socket(socket.AF_UNIX); a.bind(\"\\0cordon-sshn-'$$'\"); a.listen(16)
while True: c,_=a.accept(); c.close()" </dev/null >/dev/null 2>&1 &'
on_remote /var/tmp/remote.sock
on_remote /var/tmp/remote.dgram
rsh 'cat > "$HOME/probe" && chmod 755 "$HOME/probe"' < "$CORDON_HELPERS/probe"
P=(env ASAN_OPTIONS=detect_leaks=0:abort_on_error=0)
ctl() { rsh "${P[*]} \$HOME/probe $*" | head -n 1; }

# ---- the probes inside the remote run, one line each
cat > "$lab/ws/inside.sh" <<SH
pr() { ${P[*]} ./bin/probe "\$@" 2>/dev/null | head -n 1; }
echo "user=\$(id -un)"
echo "tcp=\$(pr connect-tcp 127.0.0.1 $tcp_port)"
echo "unix=\$(pr connect-unix /var/tmp/remote.sock)"
echo "abstract=\$(pr connect-unix @cordon-sshn-$$)"
echo "rawpair=\$(pr raw-socketpair-send /var/tmp/remote.dgram)"
echo "dns=\$(getent hosts registry.npmjs.org >/dev/null 2>&1 && echo ok || echo fail)"
echo "keys=\$(pr read $rhome/.ssh/authorized_keys)"
echo "records=\$(pr list $rhome/.cordon/runs)"
echo "plant=\$(pr write $rhome/.profile)"
echo "vartmp=\$(pr write /var/tmp/out.txt)"
echo "ws=\$(pr write $lab/ws/made.txt)"
echo "direct=\$(curl -s --noproxy '*' -m 10 -o /dev/null -w '%{http_code}' https://registry.npmjs.org/ 2>/dev/null)"
echo "allowed=\$(curl -s -m 30 -o /dev/null -w '%{http_code}' https://registry.npmjs.org/ 2>/dev/null)"
echo "denied=\$(curl -s -m 30 -o /dev/null -w '%{http_code}' http://example.com/ 2>/dev/null)"
tb() { curl -s -m 10 -x http://127.0.0.1:3128 -H "Authorization: Bearer \$1" http://toolbelt.cordon.internal/v1/ops; }
echo "toolbelt=\$(tb "\$(cat "\$CORDON_TOOLBELT")" | grep -o 'job[.]status' | head -1)"
echo "toolbelt_bad=\$(tb not-the-token | grep -c 'job[.]status')"
exit 3
SH
id=$(job start nat -- sh ./inside.sh)
job wait "$id" >/dev/null 2>&1; rc=$?
log=$state/runs/$id/log
rec=$state/runs/$id/sandbox/1
audit=$rec/network.jsonl
v() { sed -n "s/^$1=//p" "$log" | head -n 1; }
ok $([ "$rc" = 3 ] && [ "$(v user)" = "$SSH_LAB_USER" ]; echo $?) \
	"a native run on the remote: as its account, its status the job's (3)"
ok $(python3 - "$rec/plan.json" "$static" <<'PY'
import hashlib, json, sys
c = json.load(open(sys.argv[1]))["data"]["container"]
want = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
sys.exit(0 if c["isolation"] == "native" and c["network"] == "gateway" and c["runtime"] == want else 1)
PY
echo $?) "the plan records the native isolation, the gateway and the runtime's digest (the default isolation)"
ok $([ "$(v ws)" = ok ] && [ -f "$lab/ws/made.txt" ]; echo $?) \
	"the write grant holds inside (the probe's write comes back to the host)"
c=$(ctl connect-tcp 127.0.0.1 "$tcp_port")
ok $([ "$c" = ok ] && [ -n "$(v tcp)" ] && [ "$(v tcp)" != ok ]; echo $?) \
	"network: a TCP listener the remote reaches (control: $c) is not reached inside ($(v tcp))"
c=$(ctl connect-unix /var/tmp/remote.sock)
ok $([ "$c" = ok ] && [ -n "$(v unix)" ] && [ "$(v unix)" != ok ]; echo $?) \
	"network: a unix socket of the remote (control: $c) is refused inside ($(v unix))"
c=$(ctl connect-unix "@cordon-sshn-$$")
ok $([ "$c" = ok ] && [ -n "$(v abstract)" ] && [ "$(v abstract)" != ok ]; echo $?) \
	"network: an abstract unix socket of the remote (control: $c) is not reached inside ($(v abstract))"
c=$(ctl raw-socketpair-send /var/tmp/remote.dgram)
ok $([ "$c" = ok ] && [ -n "$(v rawpair)" ] && [ "$(v rawpair)" != ok ]; echo $?) \
	"network: a SOCK_RAW unix socketpair's sendto a remote socket (control: $c) is refused inside ($(v rawpair))"
c=$(rsh 'getent hosts registry.npmjs.org >/dev/null 2>&1 && echo ok || echo fail')
ok $([ "$c" = ok ] && [ "$(v dns)" = fail ]; echo $?) \
	"network: a name the remote resolves (control: $c) does not resolve inside ($(v dns))"
c=$(rsh "curl -s --noproxy '*' -m 10 -o /dev/null -w '%{http_code}' https://registry.npmjs.org/")
ok $([ "$c" = 200 ] && [ "$(v direct)" = 000 ]; echo $?) \
	"network: the registry reached directly from the remote (control: $c) is not reached directly inside ($(v direct))"
ok $([ "$(v allowed)" = 200 ] && grep -q '"host":"registry.npmjs.org".*"verdict":"allow"' "$audit"; echo $?) \
	"an allowed host is reached through the host's gateway (200), in the host's audit log"
ok $([ "$(v denied)" = 403 ] && grep -q '"host":"example.com".*"verdict":"deny"' "$audit"; echo $?) \
	"a denied host gets 403 from the host's gateway, in the host's audit log"
c=$(ctl read "$rhome/.ssh/authorized_keys")
ok $([ "$c" = ok ] && [ -n "$(v keys)" ] && [ "$(v keys)" != ok ]; echo $?) \
	"filesystem: the remote account's own keys (control: $c) are not readable inside ($(v keys))"
c=$(ctl list "$rhome/.cordon/runs")
ok $([ "${c%% *}" = ok ] && [ -n "$(v records)" ] && [ "$(v records | cut -d' ' -f1)" != ok ]; echo $?) \
	"filesystem: the run's records on the remote (control: ${c%% *}) are not listable inside ($(v records))"
c=$(ctl write /var/tmp/ctl.txt)
ok $([ "$c" = ok ] && [ -n "$(v vartmp)" ] && [ "$(v vartmp)" != ok ]; echo $?) \
	"filesystem: a write outside the grant (control: $c) is refused inside ($(v vartmp))"
c=$(ctl write "$rhome/.ctl-profile")
ok $([ "$c" = ok ] && [ -n "$(v plant)" ] && [ "$(v plant)" != ok ] && ! rsh test -e "$rhome/.profile"; echo $?) \
	"filesystem: a file planted in the remote account's home (control: $c) is refused inside ($(v plant))"
ok $([ "$(v toolbelt)" = job.status ] && [ "$(v toolbelt_bad)" = 0 ]; echo $?) \
	"the toolbelt answers through the host's gateway with the job's token (another token: not)"
ok $([ "$(runs_left)" = 0 ]; echo $?) "once its status is known, nothing of the run is left on the remote"

# ---- the daemon's doctor: the last pass of each remote's checks (never
# a call from the loop): the lab's stands after a launch; a remote never
# checked is not ready
api GET /v1/doctor | cut -d' ' -f2- > "$lab/doctor.json"
ok $(python3 - "$lab/doctor.json" "$SSH_LAB_REMOTE" "$SSH_LAB_HOSTKEY_PUB" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = {x["binding"]: x for x in d["bindings"]}
lab = d["providers"]["ssh %s %s" % (sys.argv[2], sys.argv[3])]
far = [v for k, v in d["providers"].items() if k.startswith("ssh ") and ":1 " in k]
sys.exit(0 if lab["ready"] and lab["isolation"] == "native" and b["nat"]["ready"] and far and
         not far[0]["ready"] and not b["far"]["ready"] and "ten minutes" in far[0]["detail"] else 1)
PY
echo $?) "the daemon's doctor: the lab's pass stands after a launch (ready); a remote never checked is not ready"

# ---- npm, the real client: an install from the registry through the
# host's gateway, and what it wrote comes back
rm -rf "$lab/ws/node_modules"
# (the cache in the run dir: a shell job's HOME is not its to write)
id=$(job start nat -- sh -c 'npm_config_cache="$CORDON_RUN/npm" npm_config_update_notifier=false npm install --no-audit --no-fund --no-package-lock --no-save --loglevel=error is-number@7.0.0')
job wait "$id" >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 0 ] && grep -q '"version": *"7.0.0"' "$lab/ws/node_modules/is-number/package.json" 2>/dev/null &&
	grep -q '"host":"registry.npmjs.org".*"verdict":"allow"' "$state/runs/$id/sandbox/1/network.jsonl"; echo $?) \
	"npm install on the remote through the host's gateway: the package comes back, the registry in the host's audit log"
[ -f "$lab/ws/node_modules/is-number/package.json" ] || { echo "# rc=$rc"; sed 's/^/# /' "$state/runs/$id/log" | tail -n 20; job show --json "$id" | grep -i 'reason\|result' | sed 's/^/# /'; }
rm -rf "$lab/ws/node_modules"

# ---- the recover table after kill -9 of the daemon
respawn() { kill -KILL "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=; }
helper_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$state/runs/$1/sandbox/1/wrapper.json" 2>/dev/null; }
fetch='curl -s -m 30 -o /dev/null -w "%{http_code}" https://registry.npmjs.org/'
idA=$(job start sc -- sh -c "touch \"\$CORDON_RUN/up\"; while [ ! -e \"\$CORDON_RUN/go\" ]; do sleep 0.1; done; $fetch > \"\$CORDON_RUN/after.txt\"; exit 4")
idB=$(job start sc -- sh -c "touch \"\$CORDON_RUN/up\"; while [ ! -e \"\$CORDON_RUN/go\" ]; do sleep 0.1; done; $fetch > \"\$CORDON_RUN/b.txt\"; exit 6")
for i in "$idA" "$idB"; do on_remote "$state/runs/$i/run/up"; done
respawn
kill -KILL "$(helper_of "$idB")"
start_daemon || echo "# the daemon did not start again"
sA=$(job show --json "$idA"); sB=$(job show --json "$idB")
ok $(grep -q "adopted segment 1 of $idA" "$lab/daemon.err" && [ "$(printf '%s' "$sA" | jfield segments.0.result)" = running ]; echo $?) \
	"recover: a live native run with its helper: adopted"
rsh touch "$state/runs/$idA/run/go"
job wait "$idA" >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 4 ] && [ "$(cat "$state/runs/$idA/run/after.txt" 2>/dev/null)" = 200 ]; echo $?) \
	"recover: the adopted run reaches the network through its helper's gateway after the restart, and ends with its status (4)"
ok $([ "$(printf '%s' "$sB" | jfield segments.0.result)" = running ]; echo $?) \
	"recover: a live native run whose helper is gone: adopted without it (running)"
rsh touch "$state/runs/$idB/run/go"
job wait "$idB" >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 6 ] && [ "$(cat "$state/runs/$idB/run/b.txt" 2>/dev/null)" = 200 ] && [ "$(runs_left)" = 0 ]; echo $?) \
	"recover: taken up without its helper: its network through a new gateway (200), its status (6), its changes copied back, nothing left on the remote"
sanitizer_ok
tap_done
