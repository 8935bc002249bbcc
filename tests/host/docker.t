#!/bin/bash
# The Docker provider through the daemon, against a dockerd this test
# starts itself (data under the lab, stopped at the end), with an image
# made here from busybox-static (no registry) and the gateway image cordon
# makes from its own static binary. Container bindings run shell jobs end
# to end. From inside: only the workspace, the run dir and /tmp are
# writable; .git/config, hooks and info are not; the job's toolbelt token
# is readable and nothing else of the state; no route, no DNS, no host
# port by any address, while the gateway (the companion) reaches the one
# allowed host by HTTP and CONNECT and refuses another with 403; no
# capabilities; the operator's uid; workspace writes owned by the
# operator; the job's toolbelt answering through the relay. Each with a control outside. A secret reaches the command
# but not the container's environment as the API shows it, and its file
# is gone once read. The containers are made hardened (network none,
# capabilities dropped, read-only root, no-new-privileges, the labels)
# and removed with their companion, network and volume at the end.
# The gateway image is known by what it holds: newer images carrying its
# label (the job's image relabelled, one made from it with a file more,
# one whose gateway adds a host of this machine to every list) are never
# the companion: a job whose policy allows no host gets 403 for it. The workload runs no healthcheck of its
# image's, and an image carrying a workspace's attach label locks no one
# out of that workspace.
# Fail-closed: a missing image, a socket, a linked .git/config each
# refused with nothing created; a second container refused while one of
# the job runs; a job on a workspace another live job runs on refused. Process control: the exit status, interrupt reaching the
# command's trap (the host's), a TERM sent past the host settling as
# interrupted, a stop confirmed. The recover table after `kill -9` of
# the daemon: a live helper adopted; a dead helper with its container
# exited (its status), running (stopped by the host) or gone (confirmed);
# a daemon that cannot be asked (unverified, nothing run again). A start
# helper killed under a live daemon: its container settled by a child of
# the daemon (stopped, confirmed, removed). Doctor
# reports the Docker checks a launch ran; reconcile's sweep removes what
# an ended job left and keeps a live job's and another host's, and a
# container whose image gave it a job's labels is neither swept nor
# listed as cordon's.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need_exec "$CORDON" CORDON
. "$here/docker-lib.sh"
docker_skip
docker_static
host_lab /var/tmp/cordon-docker.XXXXXX
spid=
cleanup() {
	[ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	# (only once this test's dockerd runs: before, DOCKER_HOST may be another's)
	[ -n "$ddpid" ] && docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1
	# (the lab, not only dockerd's directory: its containers mount the
	# lab's workspaces and the state's run dirs)
	dockerd_cleanup "$lab"
	host_cleanup
}
trap cleanup EXIT
host_own_cordon
cp "$static" "$lab/bin/cordon-static" || exit 1
mkdir -p "$lab/home" "$lab/ws/.git/hooks" "$lab/ws/.git/info" "$lab/ws2/.git" "$lab/www"
ln -s "$lab/ws" "$lab/wslink"
touch "$lab/ws/.git/config" "$lab/elsewhere"
ln -s "$lab/elsewhere" "$lab/ws2/.git/config"
lab_env "$lab"
dockerd_up "$lab/dk"

# ---- images: busybox (the job's), the gateway (cordon's own)
image=$(busybox_image cordon-docker-test:1)
gw=$("$CORDON" docker gateway-image --endpoint "unix://$sock" 2>"$lab/gw.err")
ok $([ -n "$image" ] && [ "$(docker image inspect -f '{{index .Config.Labels "dev.cordon.runtime"}}' "$gw" 2>/dev/null)" = \
	"$(sha256sum "$lab/bin/cordon-static" | cut -c1-64)" ]; echo $?) \
	"cordon docker gateway-image makes the gateway image from the static binary, labelled with its digest"
gw2=$("$CORDON" docker gateway-image --endpoint "unix://$sock" 2>/dev/null)
ok $([ "$gw2" = "$gw" ]; echo $?) "made once: a second call finds the same image"
# impostors: images newer than the gateway image that carry its label and
# hold something else (the daemon lists the newest first, by the second
# each was made in): the job's image relabelled, and one made from the
# gateway image with a file more
label=$(sha256sum "$lab/bin/cordon-static" | cut -c1-64)
sleep 1
imp1=$(tar -C "$dk/rootfs" -cf - . | docker import --change "LABEL dev.cordon.runtime=$label" - 2>/dev/null)
c=$(docker create "$gw" 2>/dev/null)
echo planted > "$lab/extra"
docker cp "$lab/extra" "$c:/extra" >/dev/null 2>&1
sleep 1
imp2=$(docker commit "$c" 2>/dev/null)
docker rm "$c" >/dev/null 2>&1
ok $([ -n "$imp1" ] && [ -n "$imp2" ] &&
	[ "$(docker images -q --no-trunc --filter "label=dev.cordon.runtime=$label" | tr '\n' ' ')" = "$imp2 $imp1 $gw " ]; echo $?) \
	"control: two images newer than the gateway image carry its label, and the daemon lists them first"
gw3=$("$CORDON" docker gateway-image --endpoint "unix://$sock" 2>/dev/null)
ok $([ "$gw3" = "$gw" ]; echo $?) "gateway-image takes neither: the gateway image is found by what it holds"
# the job's image carrying the label of the workspace an attach runs on
# (the first 16 hex digits of its path's hash)
wslabel=$(printf '%s' "$lab/ws" | sha256sum | cut -c1-16)
lockimg=$(tar -C "$dk/rootfs" -cf - . | docker import --change "LABEL dev.cordon.workspace=$wslabel" - 2>/dev/null)

# ---- a stand-in for an allowed host: on this host's own address
hostip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.' | grep -v '^127\.' | head -1)
echo standin-ok > "$lab/www/index.html"
python3 -u -m http.server --bind 0.0.0.0 0 --directory "$lab/www" >"$lab/standin.out" 2>&1 &
spid=$!
for _ in $(seq 100); do port=$(grep -o 'port [0-9]*' "$lab/standin.out" | head -1 | cut -d' ' -f2); [ -n "$port" ] && break; sleep 0.05; done
# the review's impostor, newest of all: a gateway that adds the stand-in
# to every companion's list, carrying the gateway image's label
mkdir -p "$lab/imp/bin"
cp "$dk/rootfs/bin/busybox" "$lab/imp/bin/busybox" && ln -s busybox "$lab/imp/bin/sh"
cp "$lab/bin/cordon-static" "$lab/imp/real-cordon"
printf '#!/bin/sh\nexec /real-cordon "$@" --allow %s:%s\n' "$hostip" "$port" > "$lab/imp/cordon"
chmod 755 "$lab/imp/cordon"
sleep 1
imp3=$(tar -C "$lab/imp" -cf - . | docker import --change "LABEL dev.cordon.runtime=$label" \
	--change 'ENTRYPOINT ["/cordon"]' - 2>/dev/null)
printf '%s\n' "tok-$RANDOM-$RANDOM-secret" > "$lab/secret"
secret=$(cat "$lab/secret")
ep="unix://$sock"
container() { printf '{"provider": "docker", "image": "%s", "endpoint": "%s", "policy": %s}' "$image" "$ep" "$1"; }
pol='{"write": ["{workspace}"], "network": {"allow": ["'"$hostip:$port"'"]}}'
cat > "$lab/config.json" <<JSON
{"bindings": {
  "box": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}, "grace": 1,
          "container": $(container "$pol"), "operations": ["job.status"],
          "secrets": {"API_TOKEN": {"file": "$lab/secret"}}},
  "sc": {"executor": {"kind": "shell"}, "workspace": {"scratch": true},
          "container": $(container '{"write": ["{workspace}"]}')},
  "again": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"}, "retries": 1,
          "container": $(container '{"write": ["{workspace}"]}')},
  "alias": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/wslink/"},
          "container": $(container '{"write": ["{workspace}"]}')},
  "nat": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/wslink/"},
          "sandbox": {"provider": "native", "policy": {"write": ["{workspace}"]}}},
  "noimage": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
          "container": {"provider": "docker", "endpoint": "$ep",
                        "image": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}},
  "sock": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws"},
          "container": $(container '{"write": ["{workspace}"], "sockets": ["/run/x.sock"], "unix_sockets": "all"}')},
  "nohooks": {"executor": {"kind": "shell"}, "workspace": {"dir": "$lab/ws2"},
          "container": $(container '{"write": ["{workspace}"]}')},
  "bare": {"executor": {"kind": "shell"}, "workspace": {"scratch": true},
          "container": $(container '{"write": ["{workspace}"]}')},
  "lock": {"executor": {"kind": "shell"}, "workspace": {"scratch": true},
          "container": {"provider": "docker", "endpoint": "$ep", "image": "$lockimg",
                        "policy": {"write": ["{workspace}"]}}}
}}
JSON
start_daemon || { echo "Bail out! the daemon did not start"; sed 's/^/# /' "$lab/daemon.err"; exit 1; }
hostlabel=$(printf '%s' "$state" | sha256sum | cut -c1-16)
labelled() { # what dockerd holds of a job: containers, networks, volumes
	{ docker ps -aq --filter "label=dev.cordon.job=$1"
	  docker network ls -q --filter "label=dev.cordon.job=$1"
	  docker volume ls -q --filter "label=dev.cordon.job=$1"; } 2>/dev/null | grep -c .
}
workload_of() { docker ps -q --filter "label=dev.cordon.job=$1" --filter label=dev.cordon.role=workload 2>/dev/null | head -1; }
wait_for() { for _ in $(seq 300); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }

# ---- a job end to end, and isolation from inside
cat > "$lab/ws/inside.sh" <<'SH'
r() { n=$1; shift; if "$@" >/dev/null 2>&1; then echo "$n=ok"; else echo "$n=no"; fi; }
r ws_write sh -c 'echo w > out.txt'
r run_write sh -c 'echo w > "$CORDON_RUN/r.txt"'
r tmp_write sh -c 'echo w > /tmp/t'
r root_write touch /x
r etc_write touch /etc/x
r git_config sh -c 'echo y >> .git/config'
r git_config_mv mv .git/config .git/c2
r git_hooks touch .git/hooks/post-checkout
r git_info touch .git/info/attributes
r token_read cat "$CORDON_TOOLBELT"
r state_token cat "$STATE/private/operator.token"
r state_db cat "$STATE/cordon.db"
r runtime_write sh -c 'echo x > /.cordon/x'
echo "uid=$(id -u) gid=$(id -g)"
echo "cap=$(grep CapEff /proc/self/status | tr -d '\t')"
echo "routes=$(tail -n +2 /proc/net/route | grep -c .)"
r dns nslookup registry.npmjs.org
# (busybox's wget is broken in Debian's busybox-static: nc speaks HTTP here)
r direct_host sh -c 'echo | nc -w 3 "$HOSTIP" "$PORT"'
r direct_lo sh -c 'echo | nc -w 3 127.0.0.1 "$PORT"'
get() { (printf 'GET http://%s/ HTTP/1.0\r\nHost: %s\r\n\r\n' "$1" "$1"; sleep 2) | nc -w 5 127.0.0.1 3128 2>&1; }
echo "proxied=$(get "$HOSTIP:$PORT" | grep -o standin-ok | head -1)"
echo "denied=$(get "127.0.0.1:$PORT" | head -1 | grep -o ' 403 ' | tr -d ' ')"
echo "connect=$( (printf 'CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n' "$HOSTIP" "$PORT" "$HOSTIP" "$PORT"; sleep 1;
	printf 'GET / HTTP/1.0\r\nHost: x\r\n\r\n'; sleep 2) | nc -w 5 127.0.0.1 3128 2>&1 | grep -o standin-ok | head -1)"
tb() { (printf 'CONNECT toolbelt.cordon.internal:80 HTTP/1.1\r\nHost: toolbelt.cordon.internal:80\r\n\r\n'; sleep 1
	printf 'GET /v1/ops HTTP/1.0\r\nHost: toolbelt.cordon.internal\r\nAuthorization: Bearer %s\r\n\r\n' "$1"; sleep 2) |
	nc -w 5 127.0.0.1 3128 2>&1; }
echo "toolbelt=$(tb "$(cat "$CORDON_TOOLBELT")" | grep -o 'job[.]status' | head -1)"
echo "toolbelt_bad=$(tb not-the-token | grep -c 'job[.]status')"
echo "secret=$API_TOKEN"
r secrets_file test -e "$CORDON_RUN/.cordon-secrets"
echo "proxy=$HTTP_PROXY"
SH
id=$(job start box -- sh -c "STATE=$state HOSTIP=$hostip PORT=$port sh ./inside.sh; while [ ! -e \"\$CORDON_RUN/done\" ]; do sleep 0.1; done")
run=$state/runs/$id/run
for _ in $(seq 300); do [ -n "$(workload_of "$id")" ] && grep -q '^proxy=' "$state/runs/$id/log" 2>/dev/null && break; sleep 0.1; done
w=$(workload_of "$id")
g=$(docker ps -q --filter "label=dev.cordon.job=$id" --filter label=dev.cordon.role=gateway | head -1)
insp=$(docker inspect "$w" 2>/dev/null)
ginsp=$(docker inspect "$g" 2>/dev/null)
q() { printf '%s' "$insp" | python3 -c "import json,sys; d=json.load(sys.stdin)[0]; print($1)" 2>/dev/null; }
gq() { printf '%s' "$ginsp" | python3 -c "import json,sys; d=json.load(sys.stdin)[0]; print($1)" 2>/dev/null; }
ok $([ "$(q 'd["HostConfig"]["NetworkMode"]')" = none ] && [ "$(q 'd["HostConfig"]["CapDrop"]')" = "['ALL']" ] &&
	[ "$(q 'd["HostConfig"]["ReadonlyRootfs"]')" = True ] && [ "$(q 'd["HostConfig"]["SecurityOpt"]')" = "['no-new-privileges']" ] &&
	[ "$(q 'd["Config"]["User"]')" = "$(id -u):$(id -g)" ] && [ "$(q 'd["HostConfig"]["RestartPolicy"]["Name"]')" = no ] &&
	[ "$(q 'd["HostConfig"]["PidsLimit"]')" = 4096 ] && [ "$(q 'd["Config"]["Image"]')" = "$image" ]; echo $?) \
	"the workload: network none, every capability dropped, read-only root, no-new-privileges, the operator's uid, restart no, pids 4096, the pinned image"
ok $([ "$(q 'd["Config"]["Labels"]["dev.cordon.job"]')" = "$id" ] && [ "$(q 'd["Config"]["Labels"]["dev.cordon.host"]')" = "$hostlabel" ] &&
	[ "$(q 'd["Config"]["Labels"]["dev.cordon.segment"]')" = 1 ] &&
	[ "$(q 'd["Config"]["Labels"]["dev.cordon.digest"]')" = "$(job show --json "$id" | jfield segments.0.digest)" ]; echo $?) \
	"the workload carries the four labels: host, job, segment, the pinned digest"
ok $([ -n "$g" ] && [ "$(gq 'd["HostConfig"]["NetworkMode"]')" != none ] && [ "$(gq 'd["HostConfig"]["CapDrop"]')" = "['ALL']" ] &&
	[ "$(gq 'd["HostConfig"]["ReadonlyRootfs"]')" = True ] && [ "$(gq 'd["Config"]["User"]')" = "$(id -u):$(id -g)" ] &&
	[ "$(gq 'd["Config"]["Image"]')" = "$gw" ]; echo $?) \
	"the companion: the gateway image on the job's own network, hardened as the workload"
ok $([ -n "$g" ] && [ "$(gq 'd["Image"]')" = "$gw" ] && [ "$(gq 'd["Image"]')" != "$imp2" ]; echo $?) \
	"the companion is cordon's gateway image, not the newer images that carry its label"
ok $([ "$(q 'd["Config"]["Healthcheck"]["Test"]')" = "['NONE']" ]; echo $?) \
	"the workload runs no healthcheck of its image's (it would run beside cinit, outside its confinement)"
ok $(printf '%s' "$ginsp" | python3 -c 'import json,sys; a=json.load(sys.stdin)[0]["Args"]; sys.exit(0 if sys.argv[1] in [a[i+1] for i in range(len(a)-1) if a[i]=="--host-address"] else 1)' "$hostip"; echo $?) \
	"the companion is told the host's addresses ($hostip among them): a name resolving to one is refused"
ok $(printf '%s' "$insp" | grep -q "$secret"; [ $? = 1 ] && [ -n "$insp" ]; echo $?) \
	"the secret is not in the container's inspect (its environment as the API shows it)"
ok $(grep -rqs "$secret" "$state/runs/$id/sandbox" "$state/cordon.db"; [ $? = 1 ]; echo $?) "the secret is in no record and not in the database"
touch "$run/done"
job wait "$id" >/dev/null 2>&1; rc=$?
log=$(cat "$state/runs/$id/log")
v() { printf '%s\n' "$log" | grep "^$1=" | head -1 | cut -d= -f2-; }
ok $([ "$rc" = 0 ]; echo $?) "the job ran in its container and completed"
ok $([ "$(v ws_write)" = ok ] && [ "$(v run_write)" = ok ] && [ "$(v tmp_write)" = ok ]; echo $?) \
	"writable inside: the workspace, the run dir, /tmp (the controls)"
ok $([ "$(v root_write)" = no ] && [ "$(v etc_write)" = no ] && [ "$(v runtime_write)" = no ]; echo $?) \
	"not writable: the root, /etc, the runtime's volume"
ok $([ "$(v git_config)" = no ] && [ "$(v git_config_mv)" = no ] && [ "$(v git_hooks)" = no ] && [ "$(v git_info)" = no ] &&
	[ ! -e "$lab/ws/.git/hooks/post-checkout" ] && [ ! -s "$lab/ws/.git/config" ]; echo $?) \
	".git/config (written or moved), .git/hooks and .git/info: refused inside, untouched on the host"
ok $([ "$(v token_read)" = ok ] && [ "$(v state_token)" = no ] && [ "$(v state_db)" = no ] && [ -r "$state/private/operator.token" ]; echo $?) \
	"the job's toolbelt token is readable; the operator's token and the database are not (they are on the host)"
ok $([ "$(v uid)" = "$(id -u) gid" ] || [ "$(printf '%s\n' "$log" | grep -c "^uid=$(id -u) gid=$(id -g)$")" = 1 ]; echo $?) "the operator's uid and gid"
ok $([ "$(stat -c %u:%g "$lab/ws/out.txt" 2>/dev/null)" = "$(id -u):$(id -g)" ]; echo $?) "a workspace write is the operator's on the host"
ok $([ "$(v cap)" = "CapEff:0000000000000000" ]; echo $?) "no capabilities"
ok $([ "$(v routes)" = 0 ] && [ "$(v dns)" = no ]; echo $?) "no route and no DNS"
ctl=$(curl -s --noproxy '*' -m 3 "http://$hostip:$port/" 2>/dev/null)
ok $([ "$ctl" = standin-ok ] && [ "$(v direct_host)" = no ] && [ "$(v direct_lo)" = no ]; echo $?) \
	"no host port by the host's address or loopback (control: the host itself reaches it)"
ok $([ "$(v proxied)" = standin-ok ] && [ "$(v connect)" = standin-ok ]; echo $?) \
	"through the gateway: the allowed host ($hostip:$port) is reached, by HTTP and by CONNECT"
ok $([ "$(v denied)" = 403 ]; echo $?) "through the gateway: a host not allowed gets 403"
ok $([ "$(v proxy)" = http://127.0.0.1:3128 ]; echo $?) "clients are pointed at the relay on the container's loopback"
ok $([ "$(v toolbelt)" = job.status ] && [ "$(v toolbelt_bad)" = 0 ]; echo $?) \
	"the job's toolbelt answers inside the workload, through the relay and the companion (another token: not)"
ok $([ "$(v secret)" = "$secret" ] && [ "$(v secrets_file)" = no ]; echo $?) \
	"the secret reaches the command, and its file is gone before the command runs"
audit=$(cat "$state/runs/$id/container/1-gateway/audit.log" 2>/dev/null)
ok $(printf '%s' "$audit" | grep -q '"allow' && printf '%s' "$audit" | grep -q 'deny'; echo $?) \
	"the companion's audit log is in the job's container records"
ok $([ "$(labelled "$id")" = 0 ]; echo $?) "after the job: its containers, companion, network and volume are removed"
ok $(job show --json "$id" | jfield segments.0.container.container | grep -q "^$w"; echo $?) \
	"the segment's pin names its container ($(echo "$w" | cut -c1-12)) with its image and daemon"

# ---- a policy that allows no host: the impostor's wider list is not in force
job start bare --wait -- sh -c "(printf 'GET http://$hostip:$port/ HTTP/1.0\r\nHost: x\r\n\r\n'; sleep 2) |
	nc -w 5 127.0.0.1 3128 2>&1 | head -1" >"$lab/o6" 2>&1
id=$(head -1 "$lab/o6")
out=$(cat "$state/runs/$id/log" 2>/dev/null)
ok $([ -n "$imp3" ] && [ "$(docker images -q --no-trunc --filter "label=dev.cordon.runtime=$label" | head -1)" = "$imp3" ] &&
	[ "$(v proxied)" = standin-ok ]; echo $?) \
	"control: an image that would add the stand-in to every companion's list carries the label and is listed first; the stand-in answers when a policy allows it"
ok $(printf '%s' "$out" | grep -q ' 403 ' && ! printf '%s' "$out" | grep -q standin-ok; echo $?) \
	"a job whose policy allows no host gets 403 for the host's port from its companion: the impostor is not its gateway"
printf '%s' "$out" | grep -q ' 403 ' || printf '%s\n' "$out" | head -3 | sed 's/^/# /'

# ---- exit status
job start box --wait -- sh -c 'exit 7' >/dev/null 2>&1
ok $([ $? = 7 ]; echo $?) "the container's exit status is the job's (7)"

# ---- fail-closed
count_all() { { docker ps -aq; docker network ls -q --filter label=dev.cordon.host; docker volume ls -q; } 2>/dev/null | grep -c .; }
before=$(count_all)
jid=$(job start noimage -- true); job wait "$jid" >/dev/null 2>&1; rc=$?; job show --json "$jid" | jfield reason > "$lab/e1" 2>&1
ok $([ "$rc" = 125 ] && grep -q 'sandbox_unavailable' "$lab/e1" && grep -q 'not on the daemon' "$state/runs/$jid/log" &&
	[ "$(count_all)" = "$before" ]; echo $?) \
	"an image the daemon lacks: refused (sandbox_unavailable), nothing created"
jid=$(job start sock -- true); job wait "$jid" >/dev/null 2>&1; rc=$?; job show --json "$jid" | jfield reason > "$lab/e2" 2>&1
ok $([ "$rc" = 125 ] && grep -q 'sandbox_denied' "$lab/e2" && [ "$(count_all)" = "$before" ]; echo $?) \
	"a unix socket granted by path: refused (sandbox_denied), nothing created"
jid=$(job start nohooks -- true); job wait "$jid" >/dev/null 2>&1; rc=$?; job show --json "$jid" | jfield reason > "$lab/e3" 2>&1
ok $([ "$rc" = 125 ] && grep -q 'sandbox_' "$lab/e3" && [ "$(count_all)" = "$before" ]; echo $?) \
	"a .git/config that is a symbolic link: refused, nothing created"

# ---- no second container: one of the job's running refuses its retry
id=$(job start again -- sh -c 'while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done; exit 1')
for _ in $(seq 300); do [ -n "$(workload_of "$id")" ] && break; sleep 0.1; done
planted=$(docker run -d --label "dev.cordon.host=$hostlabel" --label "dev.cordon.job=$id" \
	--label dev.cordon.role=workload --network none "$image" sleep 60 2>/dev/null)
touch "$state/runs/$id/run/go"
job wait "$id" >/dev/null 2>&1; rc=$?
show=$(job show --json "$id")
ok $([ "$rc" = 125 ] && grep -q container_running "$state/runs/$id/log" &&
	[ "$(docker inspect -f '{{.State.Running}}' "$planted" 2>/dev/null)" = true ]; echo $?) \
	"a retry beside a running container of the job is refused (container_running); the running one is left alone"
docker rm -f "$planted" >/dev/null 2>&1

# ---- process control: interrupt (the host's), a TERM past the host, stop
id=$(job start box -- sh -c 'trap "echo trapped; exit 5" TERM; touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
wait_for "$state/runs/$id/run/up"
job interrupt "$id" >/dev/null 2>&1
job wait "$id" >/dev/null 2>&1; rc=$?
ok $([ "$rc" = 5 ] && grep -q trapped "$state/runs/$id/log" && job show --json "$id" | jfield segments.0.reason | grep -q '(term)' &&
	grep -q '"signal":15' "$state/runs/$id/container/signals"; echo $?) \
	"interrupt: TERM recorded as the host's, then reaches the command's trap (5), settled as the host's interrupt"
id=$(job start box -- sh -c 'trap "exit 0" TERM; touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
wait_for "$state/runs/$id/run/up"
docker kill -s TERM "$(workload_of "$id")" >/dev/null 2>&1
job wait "$id" >/dev/null 2>&1; rc=$?
reason=$(job show --json "$id" | jfield segments.0.reason)
ok $([ "$rc" != 0 ] || printf '%s' "$(job show --json "$id" | jfield result)" | grep -qv exited; printf '%s' "$reason" | grep -q 'did not send'; echo $?) \
	"a TERM sent past the host (docker kill) settles as interrupted, a failure even with status 0 ($reason)"
id=$(job start box -- sh -c 'trap "" TERM; touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
wait_for "$state/runs/$id/run/up"
w=$(workload_of "$id")
job stop "$id" >/dev/null 2>&1
job wait "$id" >/dev/null 2>&1
ok $([ "$(job show --json "$id" | jfield segments.0.result)" = stopped ] && [ -z "$(docker ps -q --filter "id=$w")" ] &&
	[ "$(labelled "$id")" = 0 ]; echo $?) \
	"stop: a command that ignores TERM is killed after the grace, its container confirmed gone"

# ---- one job at a time on a workspace a container mounts
id=$(job start box -- sh -c 'touch "$CORDON_RUN/up"; while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done')
wait_for "$state/runs/$id/run/up"
before=$(count_all)
job start box -- true >"$lab/o4" 2>"$lab/e4"; rc=$?
ok $([ "$rc" != 0 ] && grep -q "in use by job $id" "$lab/e4" && [ "$(count_all)" = "$before" ]; echo $?) \
	"a container job on a workspace another live job runs on is refused (its mounts could be swapped), nothing created"
job start alias -- true >"$lab/o4" 2>"$lab/e4"; rc=$?
ok $([ "$rc" != 0 ] && grep -q "in use by job $id" "$lab/e4" && [ "$(count_all)" = "$before" ]; echo $?) \
	"... spelled through a link and a trailing '/' too (by identity), nothing created"
rm -f "$lab/ws/nat-ran"
job start nat -- touch nat-ran >"$lab/o4" 2>"$lab/e4"; rc=$?
ok $([ "$rc" != 0 ] && grep -q "in use by job $id" "$lab/e4" && [ ! -e "$lab/ws/nat-ran" ]; echo $?) \
	"a native job on the live container job's workspace (through a link and a '/') is refused too, nothing run"
touch "$state/runs/$id/run/go"
job wait "$id" >/dev/null 2>&1
job start box --wait -- true >/dev/null 2>&1
ok $([ $? = 0 ]; echo $?) "control: once that job has ended, the next one runs"
job start nat --wait -- touch nat-ran >/dev/null 2>&1
ok $([ $? = 0 ] && [ -e "$lab/ws/nat-ran" ]; echo $?) "control: ... and the native one"
rm -f "$lab/ws/nat-ran"
# a job whose image carries the attach label of that workspace, running on
# a workspace of its own, locks no one out of it
id=$(job start lock -- sh -c 'touch "$CORDON_RUN/up"; while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done')
wait_for "$state/runs/$id/run/up"
ok $([ "$(docker inspect -f '{{index .Config.Labels "dev.cordon.workspace"}}' "$(workload_of "$id")" 2>/dev/null)" = "$wslabel" ]; echo $?) \
	"control: the container of a job whose image carries a workspace's attach label carries it too"
[ -n "$(workload_of "$id")" ] || { job show --json "$id"; tail -5 "$state/runs/$id/log"; } 2>&1 | head -20 | sed 's/^/# /'
job start box --wait -- true >"$lab/o5" 2>&1; rc=$?
ok $([ "$rc" = 0 ]; echo $?) "... and a job on that workspace still runs: only a container cordon made as an attach holds it"
[ "$rc" = 0 ] || sed 's/^/# /' "$lab/o5" | head -5
touch "$state/runs/$id/run/go"
job wait "$id" >/dev/null 2>&1

# ---- the recover table: the daemon killed with -9
respawn() { kill -KILL "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; dpid=; }
helper_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$state/runs/$1/sandbox/1/wrapper.json" 2>/dev/null; }
# a: the helper alive, the container the pinned one: adopted, and it goes on
idA=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done; exit 4')
# b: the helper dead, the container exited: its status
idB=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done; exit 6')
# c: the helper dead, the container running: stopped by the host
idC=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
# d: the helper dead, the container gone
idD=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
for j in $idA $idB $idC $idD; do wait_for "$state/runs/$j/run/up"; done
wB=$(workload_of "$idB"); wC=$(workload_of "$idC"); wD=$(workload_of "$idD")
respawn
kill -KILL "$(helper_of "$idB")" "$(helper_of "$idC")" "$(helper_of "$idD")"
touch "$state/runs/$idB/run/go"
docker wait "$wB" >/dev/null 2>&1
docker rm -f "$wD" >/dev/null 2>&1
start_daemon || echo "# the daemon did not start again"
sA=$(job show --json "$idA"); sB=$(job show --json "$idB"); sC=$(job show --json "$idC"); sD=$(job show --json "$idD")
ok $(grep -q "adopted segment 1 of $idA" "$lab/daemon.err" && [ "$(printf '%s' "$sA" | jfield segments.0.result)" = running ]; echo $?) \
	"recover: helper alive, container the pinned one: adopted"
touch "$state/runs/$idA/run/go"
job wait "$idA" >/dev/null 2>&1
ok $([ $? = 4 ]; echo $?) "recover: the adopted segment goes on and ends with its status (4)"
ok $([ "$(printf '%s' "$sB" | jfield segments.0.result)" = exited ] && [ "$(printf '%s' "$sB" | jfield segments.0.code)" = 6 ] &&
	[ "$(labelled "$idB")" = 0 ]; echo $?) "recover: helper dead, container exited: its status (6) is the result, and it is removed"
ok $([ "$(printf '%s' "$sC" | jfield segments.0.result)" = lost ] && [ -z "$(docker ps -q --filter "id=$wC")" ] &&
	[ "$(labelled "$idC")" = 0 ]; echo $?) "recover: helper dead, container running: stopped by the host, confirmed, removed"
ok $([ "$(printf '%s' "$sD" | jfield segments.0.result)" = lost ] &&
	printf '%s' "$sD" | jfield segments.0.reason | grep -q 'not running'; echo $?) \
	"recover: the container gone on the same daemon: confirmed not running"
# e: the Docker daemon cannot be asked
idE=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
wait_for "$state/runs/$idE/run/up"
respawn
kill -KILL "$(helper_of "$idE")" 2>/dev/null
dockerd_stop
start_daemon || echo "# the daemon did not start again"
sE=$(job show --json "$idE")
ok $([ "$(printf '%s' "$sE" | jfield segments.0.result)" = lost ] &&
	printf '%s' "$sE" | jfield segments.0.reason | grep -q container_stop_unverified; echo $?) \
	"recover: a Docker daemon that cannot be asked: not adopted, the stop unverified"
dockerd_start || echo "# dockerd did not start again"

# ---- the start helper killed while the daemon runs: its container
# settled by a child of the daemon (stopped, confirmed, removed)
idK=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while :; do sleep 0.1; done')
wait_for "$state/runs/$idK/run/up"
wK=$(workload_of "$idK")
kill -KILL "$(helper_of "$idK")" 2>/dev/null
job wait "$idK" >/dev/null 2>&1; rc=$?
sK=$(job show --json "$idK")
ok $([ -n "$wK" ] && [ "$rc" != 0 ] && [ "$(printf '%s' "$sK" | jfield segments.0.result)" = lost ] &&
	[ -z "$(docker ps -q --filter "id=$wK")" ] && [ "$(labelled "$idK")" = 0 ] &&
	grep -q '"verified": true' "$state/runs/$idK/sandbox/1/settle.json"; echo $?) \
	"a start helper killed under a live daemon: its container stopped (confirmed) and removed by the daemon's settle child, the segment lost"

# ---- doctor and reconcile's sweep
jd=$(api GET /v1/doctor | cut -d" " -f2-)
ok $(printf '%s' "$jd" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["providers"]["docker"]["ready"] else 1)' 2>/dev/null; echo $?) \
	"job doctor: the Docker checks a launch ran stand (ready)"
idL=$(job start sc -- sh -c 'touch "$CORDON_RUN/up"; while [ ! -e "$CORDON_RUN/go" ]; do sleep 0.1; done')
wait_for "$state/runs/$idL/run/up"
keyB=$(printf '%s/%s' "$hostlabel" "$idB" | sha256sum | cut -c1-12)
lc=$(docker create --name "cordon-$keyB-9" --label "dev.cordon.host=$hostlabel" --label "dev.cordon.job=$idB" \
	--label dev.cordon.role=workload --network none "$image" true 2>/dev/null)
# an operator's own container of an image that carries the labels of that
# ended job: the labels are its image's, the name is not one cordon gives
labimg=$(tar -C "$dk/rootfs" -cf - . | docker import --change "LABEL dev.cordon.host=$hostlabel" \
	--change "LABEL dev.cordon.job=$idB" --change "LABEL dev.cordon.role=workload" - 2>/dev/null)
mine=$(docker create --network none "$labimg" true 2>/dev/null)
printf '{"provider": "docker", "endpoint": "%s", "image": "%s"}' "$ep" "$image" > "$lab/list.json"
listed=$("$CORDON" container list --config "$lab/list.json" --state-dir "$state" --job "$idB" 2>"$lab/list.err")
ok $([ -n "$mine" ] && [ -n "$(docker ps -aq --no-trunc --filter "label=dev.cordon.host=$hostlabel" --filter "label=dev.cordon.job=$idB" \
	--filter label=dev.cordon.role=workload | grep -x "$mine")" ] && printf '%s\n' "$listed" | grep -qx "$lc"; echo $?) \
	"control: a container of an image carrying an ended job's labels is found by them; container list names the job's own"
ok $(printf '%s\n' "$listed" | grep -qx "$mine"; [ $? = 1 ]; echo $?) \
	"... container list does not name it: it is not cordon's (its name is not one cordon gives)"
ln=$(docker network create --label "dev.cordon.host=$hostlabel" --label "dev.cordon.job=$idB" "cordon-$keyB-9-net" 2>/dev/null)
lv=$(docker volume create --label "dev.cordon.host=$hostlabel" --label "dev.cordon.job=$idB" "cordon-$keyB-9-ch" 2>/dev/null)
other=$(docker create --label "dev.cordon.host=0000000000000000" --label "dev.cordon.job=$idB" --network none "$image" true 2>/dev/null)
respawn
start_daemon || echo "# the daemon did not start again"
for _ in $(seq 150); do
	[ -z "$(docker ps -aq --filter "id=$lc")" ] && [ -z "$(docker volume ls -q --filter "name=cordon-$keyB-9-ch")" ] && break
	sleep 0.2
done
ok $([ -n "$lc" ] && [ -n "$ln" ] && [ -n "$lv" ] && [ -z "$(docker ps -aq --filter "id=$lc")" ] &&
	[ -z "$(docker network ls -q --filter "id=$ln")" ] && [ -z "$(docker volume ls -q --filter "name=cordon-$keyB-9-ch")" ]; echo $?) \
	"reconcile: what an ended job left (a container, a network, a volume) is swept"
ok $([ -n "$(workload_of "$idL")" ] && [ -n "$(docker ps -aq --filter "id=$other")" ]; echo $?) \
	"reconcile: a live job's container and another host's are kept"
ok $([ -n "$(docker ps -aq --filter "id=$mine")" ]; echo $?) \
	"reconcile: a container that carries an ended job's labels from its image, not made by cordon, is kept"
touch "$state/runs/$idL/run/go"
job wait "$idL" >/dev/null 2>&1
ok $([ $? = 0 ]; echo $?) "the live job, adopted across the restart, completes"
sanitizer_ok
tap_done
