#!/bin/bash
# The gateway end to end from inside `cordon run` (native sandbox): plain
# HTTP, HTTPS through CONNECT, SOCKS5, a refused host (403 inside, a note
# at exit unless -q), names checked through CORDON_GATEWAY_DNS, no way out
# but the gateway, a git clone over dumb HTTP into the workspace, and the
# audit log in the run's record dir. Everything a sandboxed command runs
# or reads lives in the lab under /var/tmp (the sandbox's /tmp is private
# and the build tree may be under /tmp).
. "$(dirname "$0")/gwlab.sh"
gw_lab sandbox
export HOME=$LAB/home
unset XDG_STATE_HOME XDG_CONFIG_HOME XDG_RUNTIME_DIR SSH_AUTH_SOCK GIT_DIR
STATE=$LAB/state WS=$LAB/ws SRV=$LAB/srv
mkdir -p "$HOME" "$WS" "$SRV"
echo "sandbox origin" > "$SRV/index.html"

# A bare repository served over dumb HTTP.
(
	export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=lab GIT_AUTHOR_EMAIL=lab@cordon.invalid \
		GIT_COMMITTER_NAME=lab GIT_COMMITTER_EMAIL=lab@cordon.invalid
	git init -q "$LAB/src-repo" &&
	cd "$LAB/src-repo" &&
	echo "cloned readme" > README && mkdir -p sub && echo deep > sub/file &&
	git add README sub/file && git -c commit.gpgsign=false commit -q -m initial &&
	git clone -q --bare "$LAB/src-repo" "$SRV/repo.git" &&
	git -C "$SRV/repo.git" update-server-info
) || bail "cannot build the lab's git repository"

# A TLS origin with a self-signed certificate for its IP.
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.2 -addext subjectAltName=IP:127.0.0.2 \
	-days 2 -keyout "$LAB/key.pem" -out "$LAB/cert.pem" >/dev/null 2>&1 ||
	bail "openssl cannot make the lab's certificate"
chmod 0644 "$LAB/cert.pem"

start_server P http --dir "$SRV" || exit 1
start_server D http --dir "$SRV" || exit 1
start_server T tls --dir "$SRV" --cert "$LAB/cert.pem" --key "$LAB/key.pem" || exit 1
: > "$LAB/dialled.log"
start_server R record --bind 127.0.0.1 --log "$LAB/dialled.log" || exit 1
start_dns DNS --record lo2.sandbox.test=127.0.0.2 || exit 1
export CORDON_GATEWAY_DNS=127.0.0.1:$DNS
O=127.0.0.2:$P

# run_in [-q] [CORDON OPTS...] -- CMD...: stdout printed, cordon's stderr in
# $LAB/in.err, the run's record dir (with network.jsonl) in $LAB/last.rec.
run_in() {
	local before rc
	before=$(ls "$STATE/runs" 2>/dev/null)
	timeout -k 5 120 "$CORDON" run --state-dir "$STATE" -w "$WS" "$@" </dev/null 2>"$LAB/in.err"
	rc=$?
	comm -13 <(printf '%s\n' "$before" | sort) <(ls "$STATE/runs" 2>/dev/null | sort) | head -n1 |
		sed "s|^|$STATE/runs/|; s|\$|/sandbox/1|" > "$LAB/last.rec"
	return $rc
}
last_audit() { echo "$(cat "$LAB/last.rec")/network.jsonl"; }
CURL=(curl -sS --max-time 20)

# --- allowed traffic
out=$(run_in -q --allow-host "$O" -- "${CURL[@]}" "http://$O/index.html")
rc=$?
ok $([ $rc = 0 ] && [ "$out" = "sandbox origin" ]; echo $?) "http:// to an allowed 127.0.0.2 server through HTTP_PROXY: 200 and the body ($rc)"
ok $(grep -q "\"host\":\"127.0.0.2\",\"port\":$P,.*\"verdict\":\"allow\"" "$(last_audit)"; echo $?) \
	"... logged as allow in the run's network.jsonl"
out=$(run_in -q --allow-host "127.0.0.2:$T" -- "${CURL[@]}" --cacert "$LAB/cert.pem" "https://127.0.0.2:$T/index.html")
rc=$?
ok $([ $rc = 0 ] && [ "$out" = "sandbox origin" ]; echo $?) "https:// through CONNECT to a local TLS server, certificate checked ($rc)"
ok $(grep -q "\"protocol\":\"http-connect\",\"host\":\"127.0.0.2\",\"port\":$T,.*\"verdict\":\"allow\"" "$(last_audit)"; echo $?) \
	"... logged as an allowed http-connect"
out=$(run_in -q --allow-host "$O" -- "${CURL[@]}" -x socks5h://127.0.0.1:1080 "http://$O/index.html")
rc=$?
ok $([ $rc = 0 ] && [ "$out" = "sandbox origin" ]; echo $?) "SOCKS5 (socks5h://127.0.0.1:1080): the body ($rc)"
ok $(grep -q '"protocol":"socks5".*"verdict":"allow"' "$(last_audit)"; echo $?) "... logged as an allowed socks5 connection"

# --- a refused host: 403 inside, a note at exit, -q silences it
cmd="${CURL[*]} -o /dev/null -w '%{http_code} ' http://127.0.0.2:$D/index.html; ${CURL[*]} -o /dev/null -w '%{http_code}' http://$O/index.html"
out=$(run_in --allow-host "$O" -- sh -c "$cmd")
rc=$?
ok $([ $rc = 0 ] && [ "$out" = "403 200" ]; echo $?) "a host not allowed gets 403 inside, the allowed one 200 in the same run ($out)"
ok $(grep -q "^cordon: network: refused 127\\.0\\.0\\.2:$D (host not in network\\.allow" "$LAB/in.err"; echo $?) \
	"cordon run prints 'cordon: network: refused 127.0.0.2:$D (...)' on stderr at exit"
grep 'network: refused' "$LAB/in.err" | sed 's/^/# /'
ok $(! grep -q "refused 127\\.0\\.0\\.2:$P" "$LAB/in.err"; echo $?) "... and nothing for the allowed host"
audit=$(last_audit)
ok $(grep -q "\"port\":$D,.*\"verdict\":\"deny\",\"reason\":\"host not in network.allow\"" "$audit" &&
	grep -q "\"port\":$P,.*\"verdict\":\"allow\"" "$audit"; echo $?) \
	"the run's audit log has the refused and the allowed request"
"$PY" -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$audit" 2>/dev/null
ok $? "... every line of it is JSON"
out=$(run_in -q --allow-host "$O" -- sh -c "$cmd")
ok $([ "$out" = "403 200" ] && ! grep -q 'network: refused' "$LAB/in.err"; echo $?) "with -q: the same run, no note ($out)"
out=$(run_in -q --allow-host "$O" -- "${CURL[@]}" --cacert "$LAB/cert.pem" "https://127.0.0.2:$T/index.html")
rc=$?
ok $([ $rc != 0 ] && [ -z "$out" ]; echo $?) "https:// to a host not allowed: CONNECT refused, nothing fetched (curl $rc)"
out=$(run_in --allow-host "$O" -- "${CURL[@]}" -x socks5h://127.0.0.1:1080 "http://127.0.0.2:$D/index.html")
rc=$?
ok $([ $rc != 0 ] && [ -z "$out" ]; echo $?) "SOCKS5 to a host not allowed: refused (curl $rc)"
ok $(grep -q "^cordon: network: refused 127\\.0\\.0\\.2:$D (" "$LAB/in.err"; echo $?) "... and noted at exit"

# --- names, checked by the gateway through CORDON_GATEWAY_DNS
out=$(run_in --allow-host "lo2.sandbox.test:$P" -- "${CURL[@]}" -o /dev/null -w '%{http_code}' "http://lo2.sandbox.test:$P/index.html")
ok $([ "$out" = 403 ] && grep -q "^cordon: network: refused lo2\\.sandbox\\.test:$P (name resolves to a loopback address)" "$LAB/in.err"; echo $?) \
	"an allowed name resolving to 127.0.0.2: 403 inside, the note names the class ($out)"
grep 'network: refused' "$LAB/in.err" | sed 's/^/# /'
out=$(run_in -q --allow-host "lo2.sandbox.test:$P" --allow-range 0.0.0.0/1 -- "${CURL[@]}" -o /dev/null -w '%{http_code}' "http://lo2.sandbox.test:$P/index.html")
ok $([ "$out" = 403 ]; echo $?) "... with --allow-range 0.0.0.0/1 (holding it, not inside 127.0.0.0/8): still 403 ($out)"
out=$(run_in -q --allow-host "lo2.sandbox.test:$P" --allow-range 127.0.0.2/32 -- "${CURL[@]}" "http://lo2.sandbox.test:$P/index.html")
ok $([ "$out" = "sandbox origin" ] &&
	grep -q '"host":"lo2.sandbox.test".*"verdict":"allow".*"allow_ranges":\["127.0.0.2/32"\]' "$(last_audit)"; echo $?) \
	"... with --allow-range 127.0.0.2/32: reached, the range in the run's audit line ($out)"
out=$(run_in -q --allow-host "nx.sandbox.test:$P" -- "${CURL[@]}" -o /dev/null -w '%{http_code}' "http://nx.sandbox.test:$P/index.html")
ok $([ "$out" = 502 ]; echo $?) "an allowed name that does not resolve: 502 ($out)"

# --- no way out but the gateway
out=$(run_in -q --allow-host "$O" -- "${CURL[@]}" --noproxy '*' "http://$O/index.html")
rc=$?
ok $([ $rc != 0 ] && [ -z "$out" ]; echo $?) "the allowed server without the proxy (--noproxy '*'): no route (curl $rc)"
out=$(pcurl --noproxy '*' "http://$O/index.html")
ok $([ "$out" = "sandbox origin" ]; echo $?) "control: the same request on the host reaches it"
out=$(run_in -q --allow-host "127.0.0.1:$R" -- "${CURL[@]}" "http://127.0.0.1:$R/")
rc=$?
ok $([ $rc != 0 ] && [ "$(wc -l < "$LAB/dialled.log")" = 0 ]; echo $?) \
	"a host listener on 127.0.0.1 (NO_PROXY, so direct): not reached from inside (curl $rc, $(wc -l < "$LAB/dialled.log") connections)"
pcurl --noproxy '*' -o /dev/null "http://127.0.0.1:$R/" 2>/dev/null
ok $([ "$(wc -l < "$LAB/dialled.log")" = 1 ]; echo $?) "control: from the host it is ($(wc -l < "$LAB/dialled.log") connection)"
out=$(run_in -q --allow-host "$O" -- "$PY" "$LAB/bin/gwclient.py" raw 127.0.0.1:1080 --wait 5 \
	--data '\x04\x01\x00\x50\x7f\x00\x00\x02lab\x00')
ok $([ "$(field "$out" closed)" = yes ] && [ "$(field "$out" len)" = 0 ]; echo $?) \
	"SOCKS4 on the SOCKS listener inside: closed, nothing answered ($(field "$out" len) bytes)"
out=$(run_in -q --allow-host "$O" -- "$PY" "$LAB/bin/gwclient.py" socks 127.0.0.1:1080 --atyp 1 \
	--addr 127.0.0.2 --port "$P" --send 'GET /index.html HTTP/1.0\r\n\r\n')
ok $([ "$(field "$out" reply)" = 00 ] && field "$out" data | grep -q 'sandbox origin'; echo $?) \
	"control: SOCKS5 on the same listener from the same client: 0x00 and the body"

# --- git clone over dumb HTTP into the workspace
rm -rf "$WS/clone"
out=$(run_in -q --allow-host "$O" -- git clone -q "http://$O/repo.git" clone 2>&1)
rc=$?
ok $([ $rc = 0 ]; echo $?) "git clone http://$O/repo.git inside the sandbox exits 0 ($rc)"
[ $rc = 0 ] || { printf '%s\n' "$out"; cat "$LAB/in.err"; } | sed 's/^/# /' | head -20
ok $([ "$(cat "$WS/clone/README" 2>/dev/null)" = "cloned readme" ] && [ "$(cat "$WS/clone/sub/file" 2>/dev/null)" = deep ]; echo $?) \
	"the clone's files are on the host afterwards"
ok $([ "$(git -C "$WS/clone" rev-parse HEAD 2>/dev/null)" = "$(git -C "$LAB/src-repo" rev-parse HEAD)" ]; echo $?) \
	"... at the source's commit"
ok $([ "$(grep -c '"verdict":"allow"' "$(last_audit)")" -ge 2 ]; echo $?) \
	"the clone's requests are in the run's audit log ($(grep -c '"verdict":"allow"' "$(last_audit)") allowed)"
rm -rf "$WS/clone2"
run_in -q --allow-host "127.0.0.2:$D" -- git clone -q "http://$O/repo.git" clone2 >/dev/null 2>&1
rc=$?
ok $([ $rc != 0 ] && [ ! -e "$WS/clone2/README" ]; echo $?) "control: the same clone with another host allowed fails ($rc)"

tap_done
