#!/bin/bash
# The proxy token and the connection cap of a standalone `cordon gateway`.
# --listen-any (a listen address that is not loopback) only with
# --token-file; the token file's mode and content checked; with a token,
# HTTP needs Proxy-Authorization: Basic (407 otherwise) and SOCKS5 the
# username/password method (0xff to a client without it, status 1 for a
# wrong password); the token never reaches the audit log, stderr or the
# origin. Over --max-conns, HTTP gets 503 and SOCKS5 the general
# failure, while a client within the cap is served. Every refusal has
# its control: the same request with the token, or within the cap.
. "$(dirname "$0")/gwlab.sh"
gw_lab auth

mkdir -p "$LAB/www"
echo "hello through the token" > "$LAB/www/index.html"
start_server P1 http --dir "$LAB/www" || exit 1
start_server P2 http --dir "$LAB/www" || exit 1
start_server E echo || exit 1
O1=127.0.0.2:$P1 O2=127.0.0.2:$P2

# A token no test string could hit by chance; a wrong one of the same shape.
TOKEN=cordonTok$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
WRONG=cordonTok$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$TOKEN" > "$LAB/token"
chmod 0600 "$LAB/token"
CREDS_B64=$(printf 'agent:%s' "$TOKEN" | base64 -w0)

# run_gw ARGS...: a gateway that is expected to refuse to start; its exit
# status in $rc, stderr in $LAB/run.err.
run_gw() {
	timeout 10 "$CORDON" gateway "$@" </dev/null >"$LAB/run.out" 2>"$LAB/run.err"
	rc=$?
}
err_has() { grep -q -- "$1" "$LAB/run.err"; }
errline() { head -c 160 "$LAB/run.err" | tr '\n' ' '; }

# --- what is refused at start
p=$(free_port)
run_gw --listen "tcp:0.0.0.0:$p" --listen-any --allow "$O1"
ok $([ $rc = 125 ] && err_has 'sandbox_config' && err_has '--listen-any needs --token-file'; echo $?) \
	"--listen-any without --token-file: refused, sandbox_config ($rc: $(errline))"
p=$(free_port)
run_gw --listen "tcp:0.0.0.0:$p" --token-file "$LAB/token" --allow "$O1"
ok $([ $rc = 125 ] && err_has 'not a loopback address' && err_has 'unless --listen-any'; echo $?) \
	"a non-loopback address with a token but without --listen-any: refused ($rc: $(errline))"
run_gw --listen "unix:$LAB/any.sock" --listen-any --token-file "$LAB/token"
ok $([ $rc = 125 ] && err_has 'tcp: listen address only' && [ ! -e "$LAB/any.sock" ]; echo $?) \
	"--listen-any with a unix: address: refused, nothing bound ($rc: $(errline))"
for mode in 0640 0604 0660 0620 0602; do
	cp "$LAB/token" "$LAB/token.$mode"
	chmod "$mode" "$LAB/token.$mode"
	p=$(free_port)
	run_gw --listen "tcp:127.0.0.1:$p" --token-file "$LAB/token.$mode"
	ok $([ $rc = 125 ] && err_has 'sandbox_config' && err_has "group or others may access it (mode $mode)" &&
		! port_open "$p"; echo $?) "a token file of mode $mode: refused before listening ($rc: $(errline))"
done
printf 'short\n' > "$LAB/token.too-short"
printf 'has a space in it, long enough\n' > "$LAB/token.with-spaces"
printf '%s\n%s\n' "$TOKEN" "$TOKEN" > "$LAB/token.two-lines"
head -c 256 /dev/zero | tr '\0' a > "$LAB/token.too-long"
: > "$LAB/token.empty"
for f in too-short with-spaces two-lines too-long empty; do
	chmod 0600 "$LAB/token.$f"
	run_gw --listen "tcp:127.0.0.1:$(free_port)" --token-file "$LAB/token.$f"
	ok $([ $rc = 125 ] && err_has 'the token must be 16 to 255 visible ASCII characters'; echo $?) \
		"a token file $f: refused ($rc: $(errline))"
done
ok $(! grep -qF "$TOKEN" "$LAB/run.err" && ! grep -q 'has a space' "$LAB/run.err"; echo $?) \
	"... and no message quotes the file's content"
if [ "$(id -u)" = 0 ]; then
	cp "$LAB/token" "$LAB/token.theirs"
	chown 65534 "$LAB/token.theirs"
	chmod 0600 "$LAB/token.theirs"
	run_gw --listen "tcp:127.0.0.1:$(free_port)" --token-file "$LAB/token.theirs"
	ok $([ $rc = 125 ] && err_has 'owned by uid 65534, not by the user running cordon'; echo $?) \
		"a mode 0600 token file owned by another user: refused ($rc: $(errline))"
else
	skip "a token file owned by another user: needs root to make one"
fi
run_gw --listen "tcp:127.0.0.1:$(free_port)" --token-file "$LAB/no-such-file"
ok $([ $rc = 125 ] && err_has 'sandbox_config' && err_has 'no-such-file'; echo $?) \
	"a token file that does not exist: refused ($rc: $(errline))"
run_gw --listen "tcp:127.0.0.1:$(free_port)" --max-conns 0
ok $([ $rc = 125 ] && err_has '--max-conns'; echo $?) "--max-conns 0: refused ($rc: $(errline))"

# --- a token on any address: T listens on 0.0.0.0 and is reached on an
# address of this machine that is not loopback, where there is one.
CIP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }')
[ -n "$CIP" ] || CIP=127.0.0.1
GW_LISTEN_IP=0.0.0.0 start_gw T --listen-any --token-file "$LAB/token" --allow "$O1" \
	--allow "127.0.0.2:$E" || exit 1
ok 0 "control: --listen tcp:0.0.0.0 --listen-any with a mode 0600 token file starts"
diag "the gateway on 0.0.0.0:$T is reached on $CIP"
TP=$CIP:$T XT=http://$CIP:$T

# fetch PROXY URL [CURL ARGS]: prints the status; body in $LAB/body,
# response head in $LAB/head.
fetch() {
	local proxy=$1 url=$2
	shift 2
	rm -f "$LAB/body" "$LAB/head"
	pcurl -x "$proxy" -D "$LAB/head" -o "$LAB/body" -w '%{http_code}' "$@" "$url" 2>"$LAB/curl.err"
}
hdr() { sed -n "s/^$1: *//Ip" "$LAB/head" | tr -d '\r' | head -n1; }
body_is() { [ "$(cat "$LAB/body" 2>/dev/null)" = "$1" ]; }

code=$(fetch "$XT" "http://$O1/index.html" --proxy-user "agent:$TOKEN")
ok $([ "$code" = 200 ] && body_is "hello through the token"; echo $?) \
	"absolute-form GET with the token as the Basic password: 200 ($code)"
code=$(fetch "$XT" "http://$O1/index.html")
ok $([ "$code" = 407 ] && [ "$(hdr Proxy-Authenticate)" = 'Basic realm="cordon"' ] &&
	[ "$(hdr X-Cordon-Refused)" = "proxy authentication required" ] &&
	body_is "proxy authentication required"; echo $?) \
	"... without Proxy-Authorization: 407, Proxy-Authenticate: Basic realm=\"cordon\", the reason in header and body ($code)"
code=$(fetch "$XT" "http://$O1/index.html" --proxy-user "agent:$WRONG")
ok $([ "$code" = 407 ] && [ "$(hdr X-Cordon-Refused)" = "proxy authentication failed" ]; echo $?) \
	"... with a wrong token: 407, proxy authentication failed ($code)"
code=$(fetch "$XT" "http://$O1/index.html" --proxy-user "$TOKEN:agent")
ok $([ "$code" = 407 ]; echo $?) "... with the token as the user name instead: 407 ($code)"
code=$(fetch "$XT" "http://$O1/index.html" --proxy-user "agent:${TOKEN}x")
ok $([ "$code" = 407 ]; echo $?) "... with the token and one more byte: 407 ($code)"
code=$(fetch "$XT" "http://$O1/index.html" --proxy-user "agent:${TOKEN%?}")
ok $([ "$code" = 407 ]; echo $?) "... with the token less its last byte: 407 ($code)"
code=$(fetch "$XT" "http://$O1/index.html" --proxy-user "other-user:$TOKEN")
ok $([ "$code" = 200 ]; echo $?) "control: any user name with the token: 200 ($code)"
out=$(gwc raw "$TP" --wait 5 --data "GET http://$O1/index.html HTTP/1.1\\r\\nProxy-Authorization: bAsIc   $CREDS_B64\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 200 ]; echo $?) "the scheme name in any case, spaces before the credentials: 200 ($(field "$out" status))"
out=$(gwc raw "$TP" --wait 5 --data "GET http://$O1/index.html HTTP/1.1\\r\\nProxy-Authorization: Bearer $TOKEN\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 407 ] && [ "$(field "$out" closed)" = yes ]; echo $?) \
	"the token as a Bearer credential: 407 and closed ($(field "$out" status))"
out=$(gwc raw "$TP" --wait 5 --data "GET http://$O1/index.html HTTP/1.1\\r\\nProxy-Authorization: Basic $CREDS_B64\\r\\nProxy-Authorization: Basic $CREDS_B64\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 407 ]; echo $?) "two Proxy-Authorization headers, both right: 407 ($(field "$out" status))"
out=$(gwc raw "$TP" --wait 5 --data "GET http://$O1/index.html HTTP/1.1\\r\\nProxy-Authorization: Basic ${CREDS_B64%?}\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 407 ]; echo $?) "credentials that are not whole base64: 407 ($(field "$out" status))"

# The origin never sees the credentials.
code=$(fetch "$XT" "http://$O1/echo-headers" --proxy-user "agent:$TOKEN" -H 'X-Custom: kept')
ok $([ "$code" = 200 ] && grep -qi '^x-custom: kept' "$LAB/body" && ! grep -qi 'proxy-authorization' "$LAB/body" &&
	! grep -qF "$CREDS_B64" "$LAB/body"; echo $?) \
	"absolute-form: Proxy-Authorization is not forwarded to the origin ($code)"

# CONNECT.
code=$(fetch "$XT" "http://$O1/index.html" -p --proxy-user "agent:$TOKEN")
ok $([ "$code" = 200 ] && body_is "hello through the token"; echo $?) "CONNECT with the token: 200 through the tunnel ($code)"
rm -f "$LAB/head"
connect_code=$(pcurl -x "$XT" -p -o /dev/null -w '%{http_connect}' "http://$O1/index.html" 2>/dev/null)
ok $([ "$connect_code" = 407 ]; echo $?) "CONNECT without the token: 407 ($connect_code)"
connect_code=$(pcurl -x "$XT" -p --proxy-user "agent:$WRONG" -o /dev/null -w '%{http_connect}' "http://$O1/index.html" 2>/dev/null)
ok $([ "$connect_code" = 407 ]; echo $?) "CONNECT with a wrong token: 407 ($connect_code)"
out=$(gwc raw "$TP" --wait 5 --data "CONNECT 127.0.0.2:$E HTTP/1.1\\r\\nProxy-Authorization: Basic $CREDS_B64\\r\\n\\r\\nping")
ok $([ "$(field "$out" status)" = 200 ] && field "$out" text | grep -q 'ping$'; echo $?) \
	"CONNECT with the token and data in the same write: established, the data echoed"

# The policy still decides once the client is known, and only then.
code=$(fetch "$XT" "http://$O2/index.html" --proxy-user "agent:$TOKEN")
ok $([ "$code" = 403 ] && [ "$(hdr X-Cordon-Refused)" = "host not in network.allow" ]; echo $?) \
	"with the token, a host not in the allow list: 403 ($code)"
code=$(fetch "$XT" "http://$O2/index.html")
ok $([ "$code" = 407 ]; echo $?) "... without it, the same: 407, not 403: no policy is shown before the token ($code)"

# SOCKS5.
out=$(gwc socks "$TP" --methods 0002 --user agent --password "$TOKEN" --atyp 1 --addr 127.0.0.2 \
	--port "$P1" --send 'GET /index.html HTTP/1.0\r\n\r\n')
ok $([ "$(field "$out" method)" = 02 ] && [ "$(field "$out" auth)" = 00 ] && [ "$(field "$out" reply)" = 00 ] &&
	field "$out" data | grep -q 'hello through the token'; echo $?) \
	"SOCKS5 offering none and username/password: 02 is chosen, the token granted (00), the origin answers"
out=$(gwc socks "$TP" --methods 02 --user agent --password "$WRONG" --atyp 1 --addr 127.0.0.2 --port "$P1")
ok $([ "$(field "$out" method)" = 02 ] && [ "$(field "$out" auth)" = 01 ] && [ "$(field "$out" closed)" = yes ] &&
	[ -z "$(field "$out" reply)" ]; echo $?) \
	"SOCKS5 with a wrong password: status 01 and closed, no request taken ($(field "$out" auth))"
out=$(gwc socks "$TP" --methods 02 --user agent --password "" --atyp 1 --addr 127.0.0.2 --port "$P1")
ok $([ "$(field "$out" auth)" = 01 ] && [ "$(field "$out" closed)" = yes ]; echo $?) \
	"SOCKS5 with an empty password: status 01 and closed ($(field "$out" auth))"
out=$(gwc socks "$TP" --methods 00 --atyp 1 --addr 127.0.0.2 --port "$P1")
ok $([ "$(field "$out" method)" = ff ] && [ "$(field "$out" closed)" = yes ]; echo $?) \
	"SOCKS5 offering only no-authentication: 0xff and closed ($(field "$out" method))"
out=$(gwc raw "$TP" --wait 5 --data '\x05\x02\x02\x00\x02\x05agent\x05abcde')
ok $([ "$(field "$out" hex)" = 05020101 ] && [ "$(field "$out" closed)" = yes ]; echo $?) \
	"SOCKS5 with a bad sub-negotiation version: status 01 and closed ($(field "$out" hex))"
code=$(fetch "socks5h://$TP" "http://$O1/index.html" --proxy-user "agent:$TOKEN")
ok $([ "$code" = 200 ] && body_is "hello through the token"; echo $?) "curl through socks5h with the token: 200 ($code)"
code=$(fetch "socks5h://$TP" "http://$O1/index.html" --proxy-user "agent:$WRONG")
ok $([ "$code" != 200 ]; echo $?) "... with a wrong token: no answer ($code)"

# The token is nowhere: not in the audit, not on stderr or stdout.
sleep 0.5
ok $(! grep -qF "$TOKEN" "$LAB/T.jsonl" "$LAB/T.err" "$LAB/T.out" &&
	! grep -qF "$WRONG" "$LAB/T.jsonl" "$LAB/T.err" "$LAB/T.out" &&
	! grep -qF "$CREDS_B64" "$LAB/T.jsonl" "$LAB/T.err" "$LAB/T.out" &&
	! grep -qi 'agent' "$LAB/T.jsonl"; echo $?) \
	"neither the token, a wrong one, the Basic credentials nor a user name is in the audit, stderr or stdout"
ok $(grep -q '"verdict":"refused","reason":"proxy authentication required"' "$LAB/T.jsonl" &&
	grep -q '"protocol":"http","host":"127.0.0.2","port":'"$P1"',"addresses":\[\],"verdict":"refused","reason":"proxy authentication failed"' "$LAB/T.jsonl" &&
	grep -q '"protocol":"http-connect".*"verdict":"refused"' "$LAB/T.jsonl" &&
	grep -q '"protocol":"socks5".*"verdict":"refused","reason":"proxy authentication failed"' "$LAB/T.jsonl" &&
	grep -q '"protocol":"socks5".*"verdict":"refused","reason":"proxy authentication required"' "$LAB/T.jsonl"; echo $?) \
	"audit: each unauthenticated request is one refused line with its reason (HTTP, CONNECT, SOCKS5)"
ok $(grep -q "\"client\":\"$CIP:[0-9]*\",\"protocol\":\"http\",.*\"verdict\":\"allow\"" "$LAB/T.jsonl"; echo $?) \
	"audit: the allowed requests came from $CIP"
grep -c . "$LAB/T.jsonl" | sed 's/^/# audit lines: /'
stop_gw T

# A token on a loopback listener works the same; without a token nothing
# changes (protocol.t): here the control of the SOCKS5 no-auth refusal.
# (its token comes through a pipe: nothing on disk)
start_gw L --token-file <(printf '%s\n' "$TOKEN") --allow "$O1" || exit 1
start_gw N --allow "$O1" || exit 1
code=$(fetch "http://127.0.0.1:$L" "http://$O1/index.html" --proxy-user "agent:$TOKEN")
ok $([ "$code" = 200 ]; echo $?) "a token read from a pipe, on a loopback listener: with it 200 ($code)"
code=$(fetch "http://127.0.0.1:$L" "http://$O1/index.html")
ok $([ "$code" = 407 ]; echo $?) "... without it 407 ($code)"
out=$(gwc socks "127.0.0.1:$N" --methods 00 --atyp 1 --addr 127.0.0.2 --port "$P1" --send 'GET /index.html HTTP/1.0\r\n\r\n')
ok $([ "$(field "$out" method)" = 00 ] && field "$out" data | grep -q 'hello through the token'; echo $?) \
	"control: without a token, SOCKS5 no-authentication is taken (00) and served"
code=$(fetch "http://127.0.0.1:$N" "http://$O1/index.html" --proxy-user "agent:$WRONG")
ok $([ "$code" = 200 ]; echo $?) "control: without a token, any Proxy-Authorization is ignored: 200 ($code)"
stop_gw L
stop_gw N

# --- the connection cap: two tunnels fill --max-conns 2.
start_gw C --max-conns 2 --allow "$O1" --allow "127.0.0.2:$E" || exit 1
CP=127.0.0.1:$C
code=$(fetch "http://$CP" "http://$O1/index.html")
ok $([ "$code" = 200 ]; echo $?) "control: within --max-conns 2, a request is served ($code)"
fds() { ls "/proc/$GWPID_C/fd" | wc -l; }
base=$(fds)
exec 7<>"/dev/tcp/127.0.0.1/$C" 8<>"/dev/tcp/127.0.0.1/$C"
printf 'CONNECT 127.0.0.2:%s HTTP/1.1\r\n\r\n' "$E" >&7
printf 'CONNECT 127.0.0.2:%s HTTP/1.1\r\n\r\n' "$E" >&8
read -r -t 10 l7 <&7 && read -r -t 10 _ <&7	# the status line, the empty line
read -r -t 10 l8 <&8 && read -r -t 10 _ <&8
ok $(case "$l7$l8" in 'HTTP/1.1 200'*'HTTP/1.1 200'*) true ;; *) false ;; esac; echo $?) \
	"two CONNECT tunnels fill the cap ($(printf '%s' "$l7" | tr -d '\r'))"
for _ in $(seq 50); do [ "$(fds)" -ge $((base + 4)) ] && break; sleep 0.1; done
out=$(gwc raw "$CP" --wait 5 --data "GET http://$O1/index.html HTTP/1.1\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 503 ] && [ "$(field "$out" refused)" = "connection cap reached" ] &&
	[ "$(field "$out" body)" = 'connection cap reached\n' ] && [ "$(field "$out" closed)" = yes ]; echo $?) \
	"a third HTTP client: 503, connection cap reached, closed ($(field "$out" status), $(field "$out" refused))"
out=$(gwc socks "$CP" --atyp 1 --addr 127.0.0.2 --port "$P1")
ok $([ "$(field "$out" method)" = 00 ] && [ "$(field "$out" reply)" = 01 ]; echo $?) \
	"a third SOCKS5 client: general failure (01) ($(field "$out" method) then $(field "$out" reply))"
out=$(GWC_TIMEOUT=120 gwc flood "$CP" --n 300 --data "GET http://$O1/index.html HTTP/1.1\\r\\n\\r\\n")
ok $([ "$(field "$out" status_503)" = 300 ]; echo $?) \
	"300 more HTTP clients one after another: each gets 503 ($(printf '%s' "$out" | tr '\n' ' '))"
ok $(gw_alive C; echo $?) "the gateway is still running"
printf 'tunnel 7\n' >&7
read -r -t 10 e7 <&7
e7=${e7%$'\r'}
ok $([ "$e7" = "tunnel 7" ]; echo $?) "the tunnels within the cap still carry data ($e7)"
exec 7>&- 8>&-
code=000
for _ in $(seq 50); do
	code=$(fetch "http://$CP" "http://$O1/index.html")
	[ "$code" = 200 ] && break
	sleep 0.1
done
ok $([ "$code" = 200 ] && body_is "hello through the token"; echo $?) "once they close, a request is served again ($code)"
sleep 1.5 # the audit's one-second window ends; the sweep writes the count
stop_gw C
"$PY" - "$LAB/C.jsonl" > "$LAB/cap.out" <<'PY'
import json, re, sys
one = more = other = 0
for ln in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(ln)
    if r["verdict"] != "refused":
        other += 1
    elif r["reason"] == "connection cap reached":
        one += 1
    else:
        m = re.fullmatch(r"connection cap reached: (\d+) more connections refused, not logged one by one", r["reason"])
        more += int(m.group(1))
print("one=%d" % one)
print("more=%d" % more)
print("other=%d" % other)
PY
audit=$(cat "$LAB/cap.out")
ok $([ $(( $(field "$audit" one) + $(field "$audit" more) )) = 302 ]; echo $?) \
	"audit: all 302 refusals are counted ($(field "$audit" one) lines of their own, $(field "$audit" more) in counts)"
ok $([ "$(field "$audit" one)" -lt 302 ]; echo $?) "audit: a flood is not one line a connection"
ok $(grep -q '"protocol":"http",.*"verdict":"refused","reason":"connection cap reached"' "$LAB/C.jsonl" &&
	grep -q '"protocol":"socks5",.*"verdict":"refused","reason":"connection cap reached"' "$LAB/C.jsonl"; echo $?) \
	"audit: the first refusals are lines of their own, HTTP and SOCKS5"
tap_done
