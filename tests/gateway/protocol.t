#!/bin/bash
# The gateway's protocols and its allow and deny lists, against a
# standalone `cordon gateway` and origins on 127.0.0.2: absolute-form
# http://, CONNECT, SOCKS5 (names and addresses), half-close, refusals
# (403 with X-Cordon-Refused, SOCKS 0x02, 0x07), the Host header never
# deciding, and the audit log. Every refusal has its control: the same
# request to an allowed target goes through.
. "$(dirname "$0")/gwlab.sh"
gw_lab protocol

mkdir -p "$LAB/www"
echo "hello from the origin" > "$LAB/www/index.html"
head -c 1048576 /dev/urandom > "$LAB/www/big.bin"
big_sum=$(sha256sum < "$LAB/www/big.bin")

start_server P1 http --dir "$LAB/www" || exit 1
start_server P2 http --dir "$LAB/www" || exit 1
start_server P3 echoclose || exit 1
start_server P6 http --bind ::1 --dir "$LAB/www" 2>/dev/null || P6=	# no IPv6 here: skipped
# Every name is unknown here: an allowed name ends in 502, a refused one
# never reaches DNS (the log says which were asked).
start_dns DNS --log "$LAB/dns.log" || exit 1
touch "$LAB/dns.log"
O1=127.0.0.2:$P1 O2=127.0.0.2:$P2 O3=127.0.0.2:$P3

# A: port-pinned literals, a wildcard with a denied name under it.
start_gw A --allow "$O1" --allow "$O3" --allow "[::1]:${P6:-1}" --allow '*.example.test' --allow named.test \
	--deny bad.example.test --deny denied.example --dns "127.0.0.1:$DNS" || exit 1
# B: the whole address allowed, one port of it denied; C: the control.
start_gw B --allow 127.0.0.2 --deny "$O2" || exit 1
start_gw C --allow 127.0.0.2 || exit 1
XA=http://127.0.0.1:$A XB=http://127.0.0.1:$B XC=http://127.0.0.1:$C

# fetch PROXY URL [CURL ARGS]: prints the status; body in $LAB/body,
# response head in $LAB/head.
fetch() {
	local proxy=$1 url=$2
	shift 2
	rm -f "$LAB/body" "$LAB/head"
	pcurl -x "$proxy" -D "$LAB/head" -o "$LAB/body" -w '%{http_code}' "$@" "$url" 2>"$LAB/curl.err"
}
refused_hdr() { sed -n 's/^[Xx]-[Cc]ordon-[Rr]efused: *//p' "$LAB/head" | tr -d '\r'; }
body_is() { [ "$(cat "$LAB/body" 2>/dev/null)" = "$1" ]; }
sum_ok() { [ "$(sha256sum < "$LAB/body")" = "$big_sum" ]; }
# what curl said when a transfer failed, and how much came, also on
# stderr (prove shows it where it hides a failing case's name)
curl_said() {
	local said
	! [ -s "$LAB/curl.err" ] && sum_ok && return
	said=$(printf ', %s bytes, curl: %s' "$(stat -c %s "$LAB/body" 2>/dev/null || echo no)" \
		"$(head -c 120 "$LAB/curl.err" | tr '\n' ' ')")
	echo "# protocol.t case $((n + 1))$said" >&2
	printf '%s' "$said"
}

# --- the protocols, each reaching an allowed origin
code=$(fetch "$XA" "http://$O1/index.html")
ok $([ "$code" = 200 ] && body_is "hello from the origin"; echo $?) "absolute-form GET to an allowed literal: 200, body intact ($code)"
code=$(fetch "$XA" "http://$O1/big.bin")
ok $([ "$code" = 200 ] && sum_ok; echo $?) "absolute-form GET of 1 MiB: 200, bytes intact ($code$(curl_said))"
code=$(fetch "$XA" "http://$O1/big.bin" -p)
ok $([ "$code" = 200 ] && sum_ok; echo $?) "CONNECT tunnel (curl -p): 200, 1 MiB intact ($code$(curl_said))"
code=$(fetch "socks5h://127.0.0.1:$A" "http://$O1/big.bin")
ok $([ "$code" = 200 ] && sum_ok; echo $?) "SOCKS5 with remote resolution (socks5h): 200, 1 MiB intact ($code$(curl_said))"
code=$(fetch "socks5://127.0.0.1:$A" "http://$O1/index.html")
ok $([ "$code" = 200 ] && body_is "hello from the origin"; echo $?) "SOCKS5 with an IPv4 address (socks5): 200 ($code)"
out=$(gwc socks "127.0.0.1:$A" --atyp 3 --addr 127.0.0.2 --port "$P1" \
	--send 'GET /index.html HTTP/1.0\r\n\r\n')
ok $([ "$(field "$out" reply)" = 00 ] && field "$out" data | grep -q 'hello from the origin'; echo $?) \
	"SOCKS5 CONNECT with a domain-type address (ATYP 3): reply 00 and the origin answers"
out=$(gwc socks "127.0.0.1:$A" --atyp 3 --addr named.test --port 80)
ok $([ "$(field "$out" reply)" = 04 ]; echo $?) \
	"SOCKS5 to an allowed name that does not resolve: 0x04, not 0x02 ($(field "$out" reply))"
out=$(gwc socks "127.0.0.1:$A" --atyp 3 --addr other.test --port 80)
ok $([ "$(field "$out" reply)" = 02 ]; echo $?) \
	"SOCKS5 to a name not in the allow list: 0x02 ($(field "$out" reply))"
out=$(gwc socks "127.0.0.1:$A" --atyp 1 --addr 127.0.0.2 --port "$P2")
ok $([ "$(field "$out" reply)" = 02 ]; echo $?) \
	"SOCKS5 to the allowed address on another port: 0x02 ($(field "$out" reply))"

# IPv6 literals: listed with brackets and a port, reached as they are.
if [ -n "$P6" ]; then
	code=$(fetch "$XA" "http://[::1]:$P6/index.html")
	ok $([ "$code" = 200 ] && body_is "hello from the origin"; echo $?) "absolute-form GET to the listed [::1]:$P6: 200 ($code)"
	code=$(fetch "$XA" "http://[::1]:$P6/index.html" -p)
	ok $([ "$code" = 200 ] && body_is "hello from the origin"; echo $?) "CONNECT [::1]:$P6: 200 ($code)"
	out=$(gwc socks "127.0.0.1:$A" --atyp 4 --addr ::1 --port "$P6" --send 'GET /index.html HTTP/1.0\r\n\r\n')
	ok $([ "$(field "$out" reply)" = 00 ] && field "$out" data | grep -q 'hello from the origin'; echo $?) \
		"SOCKS5 with an IPv6 address (ATYP 4) to [::1]:$P6: 0x00 and the body"
	code=$(fetch "$XA" "http://[::1]:$P1/index.html")
	ok $([ "$code" = 403 ]; echo $?) "[::1] on a port not listed: 403 ($code)"
	code=$(fetch "$XA" "http://[::ffff:127.0.0.2]:$P1/index.html")
	ok $([ "$code" = 403 ]; echo $?) "the IPv4-mapped spelling [::ffff:127.0.0.2]:$P1 of a listed literal is not listed: 403 ($code)"
	out=$(gwc socks "127.0.0.1:$A" --atyp 4 --addr ::ffff:127.0.0.2 --port "$P1")
	ok $([ "$(field "$out" reply)" = 02 ]; echo $?) "... nor through SOCKS5 ATYP 4 ($(field "$out" reply))"
else
	for _ in 1 2 3 4 5 6; do skip "no IPv6 loopback here"; done
fi

# What reaches the origin: origin-form target, Host from the target,
# hop-by-hop and proxy headers gone, the rest kept.
code=$(fetch "$XA" "http://$O1/echo-headers?q=1" -H 'Proxy-Authorization: Basic c2VjcmV0' \
	-H 'Proxy-Connection: keep-alive' -H 'Connection: X-Secret, keep-alive' -H 'X-Secret: s' \
	-H 'Keep-Alive: 300' -H 'TE: trailers' -H 'Upgrade: h2c' -H 'X-Custom: kept')
hdrs=$(tr 'A-Z' 'a-z' < "$LAB/body")
ok $([ "$code" = 200 ] && printf '%s\n' "$hdrs" | grep -qx 'target=/echo-headers?q=1' &&
	printf '%s\n' "$hdrs" | grep -qx "host: $O1" && printf '%s\n' "$hdrs" | grep -qx 'x-custom: kept' &&
	printf '%s\n' "$hdrs" | grep -qx 'connection: close'; echo $?) \
	"the origin gets the origin-form target, Host $O1, Connection: close and the end-to-end headers ($code)"
ok $(! printf '%s\n' "$hdrs" | grep -q '^proxy-authorization\|^proxy-connection\|^x-secret\|^keep-alive\|^te:\|^upgrade'; echo $?) \
	"... and none of Proxy-Authorization, Proxy-Connection, Keep-Alive, TE, Upgrade or a header Connection names"
printf '%s\n' "$hdrs" | grep '^proxy-\|^x-secret\|^keep-alive\|^te:\|^upgrade' | sed 's/^/# leaked: /'
out=$(gwc raw "127.0.0.1:$A" --wait 5 --data "GET http://$O1 HTTP/1.1\r\n\r\n")
ok $([ "$(field "$out" status)" = 200 ] && field "$out" body | grep -q 'hello from the origin'; echo $?) \
	"an absolute-form target without a path is forwarded as / ($(field "$out" status))"

# Request bodies go through whole: Content-Length and chunked, both forms.
big_hex=$(sha256sum "$LAB/www/big.bin" | cut -d' ' -f1)
code=$(fetch "$XA" "http://$O1/post" --data-binary @"$LAB/www/big.bin" -H 'Content-Type: application/octet-stream')
ok $([ "$code" = 200 ] && [ "$(cat "$LAB/body")" = "len=1048576 sha256=$big_hex" ]; echo $?) \
	"absolute-form POST of 1 MiB (Content-Length): the origin gets it whole ($code, $(cat "$LAB/body"))"
code=$(fetch "$XA" "http://$O1/post" --data-binary @"$LAB/www/big.bin" -H 'Transfer-Encoding: chunked')
ok $([ "$code" = 200 ] && [ "$(cat "$LAB/body")" = "len=1048576 sha256=$big_hex" ]; echo $?) \
	"absolute-form POST of 1 MiB, chunked: the origin gets it whole ($code)"
code=$(fetch "$XA" "http://$O1/post" -p --data-binary @"$LAB/www/big.bin")
ok $([ "$code" = 200 ] && [ "$(cat "$LAB/body")" = "len=1048576 sha256=$big_hex" ]; echo $?) \
	"POST of 1 MiB through a CONNECT tunnel: whole ($code)"
code=$(fetch "$XA" "http://$O2/post" --data-binary @"$LAB/www/big.bin")
ok $([ "$code" = 403 ] && [ "$(refused_hdr)" = "host not in network.allow" ]; echo $?) \
	"a 1 MiB POST to a refused target: the client reads the 403 whole ($code, curl: $(head -c 80 "$LAB/curl.err"))"
{ printf 'POST http://%s/post HTTP/1.1\r\nContent-Length: 1048576\r\n\r\n' "$O2"; cat "$LAB/www/big.bin"; } > "$LAB/post.req"
out=$(gwc raw "127.0.0.1:$A" --wait 5 --file "$LAB/post.req")
ok $([ "$(field "$out" status)" = 403 ] && [ "$(field "$out" refused)" = "host not in network.allow" ]; echo $?) \
	"... also when the body is sent at once without waiting: the 403 is not lost ($(field "$out" status))"

# Bytes sent before the answer (no round trip) are kept for the origin.
out=$(gwc raw "127.0.0.1:$A" --wait 5 --data "CONNECT $O1 HTTP/1.1\\r\\n\\r\\nGET /index.html HTTP/1.0\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 200 ] && field "$out" body | grep -q 'HTTP/1.0 200.*hello from the origin'; echo $?) \
	"CONNECT with the tunnelled request in the same write: established, and the origin answers it"
port_hex=$(printf '%04x' "$P1")
out=$(gwc raw "127.0.0.1:$A" --wait 5 \
	--data "\\x05\\x01\\x00\\x05\\x01\\x00\\x01\\x7f\\x00\\x00\\x02\\x${port_hex:0:2}\\x${port_hex:2:2}GET /index.html HTTP/1.0\\r\\n\\r\\n")
ok $(case $(field "$out" hex) in 050005000001*) true ;; *) false ;; esac && field "$out" text | grep -q 'hello from the origin'; echo $?) \
	"SOCKS5 greeting, request and data in one write: both replies, then the origin's answer"

# A connection that fails is 502 (SOCKS5: 0x05), not 403.
closed=$(free_port)
code=$(fetch "$XC" "http://127.0.0.2:$closed/")
ok $([ "$code" = 502 ] && [ "$(refused_hdr)" = "cannot connect to the host" ]; echo $?) \
	"an allowed address with nothing listening: 502 ($code, $(refused_hdr))"
out=$(gwc socks "127.0.0.1:$C" --atyp 1 --addr 127.0.0.2 --port "$closed")
ok $([ "$(field "$out" reply)" = 05 ]; echo $?) "... through SOCKS5: 0x05 ($(field "$out" reply))"
ok $(grep -q "\"port\":$closed,.*\"verdict\":\"fail\",\"reason\":\"cannot connect to the host\"" "$LAB/C.jsonl"; echo $?) \
	"... audited as fail"

# --- the lists
code=$(fetch "$XA" "http://$O2/index.html")
ok $([ "$code" = 403 ] && [ "$(refused_hdr)" = "host not in network.allow" ]; echo $?) \
	"--allow $O1: the same address on port $P2 is refused, 403 ($code, $(refused_hdr))"
code=$(fetch "$XC" "http://$O2/index.html")
ok $([ "$code" = 200 ] && body_is "hello from the origin"; echo $?) "control: --allow 127.0.0.2 reaches port $P2 ($code)"
code=$(fetch "$XB" "http://$O2/index.html")
ok $([ "$code" = 403 ] && [ "$(refused_hdr)" = "host in network.deny" ]; echo $?) \
	"--allow 127.0.0.2 --deny $O2: port $P2 refused as denied ($code, $(refused_hdr))"
code=$(fetch "$XB" "http://$O1/index.html")
ok $([ "$code" = 200 ] && body_is "hello from the origin"; echo $?) "... and port $P1 of the same address allowed ($code)"
code=$(fetch "$XB" "http://$O2/index.html" -p)
ok $([ "$code" = 403 ] || grep -q 'CONNECT.* 403' "$LAB/curl.err" "$LAB/head"; echo $?) \
	"... the deny entry refuses CONNECT to port $P2 too"
code=$(fetch "$XA" "http://other.test/")
ok $([ "$code" = 403 ] && [ "$(refused_hdr)" = "host not in network.allow" ] &&
	body_is "host not in network.allow"; echo $?) \
	"a name not in the allow list: 403, the reason in X-Cordon-Refused and the body ($code)"
ok $(! grep -q '^other.test ' "$LAB/dns.log"; echo $?) "... and it was never looked up"
code=$(fetch "$XA" "http://bad.example.test/")
ok $([ "$code" = 403 ] && [ "$(refused_hdr)" = "host in network.deny" ]; echo $?) \
	"--allow '*.example.test' --deny bad.example.test: bad.example.test refused as denied ($code, $(refused_hdr))"
ok $(! grep -q '^bad.example.test ' "$LAB/dns.log"; echo $?) "... and never looked up"
code=$(fetch "$XA" "http://good.example.test/")
ok $([ "$code" = 502 ] && grep -q '^good.example.test ' "$LAB/dns.log"; echo $?) \
	"control: good.example.test passes the lists (looked up, does not resolve: 502) ($code)"
code=$(fetch "$XA" "http://example.test/")
ok $([ "$code" = 403 ] && [ "$(refused_hdr)" = "host not in network.allow" ]; echo $?) \
	"'*.example.test' does not cover example.test itself ($code)"

# --- the Host header never decides
code=$(fetch "$XA" "http://$O1/echo-host" -H 'Host: denied.example')
ok $([ "$code" = 200 ] && grep -qx "host=$O1" "$LAB/body" && grep -qx 'target=/echo-host' "$LAB/body"; echo $?) \
	"allowed target with a forged Host: denied.example reaches the target, which sees Host $O1 ($code)"
code=$(fetch "$XA" "http://$O2/echo-host" -H "Host: $O1")
ok $([ "$code" = 403 ]; echo $?) "denied target with Host: $O1 (allowed) is refused ($code)"
out=$(gwc raw "127.0.0.1:$A" --wait 3 --data "CONNECT $O2 HTTP/1.1\\r\\nHost: $O1\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 403 ]; echo $?) "CONNECT to a denied target with Host: $O1 is refused ($(field "$out" status))"
out=$(gwc raw "127.0.0.1:$A" --wait 3 --data "CONNECT $O1 HTTP/1.1\\r\\nHost: $O2\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 200 ]; echo $?) "control: CONNECT to $O1 with Host: $O2 is established ($(field "$out" status))"

# --- half-close passed through both ways
out=$(gwc halfclose "127.0.0.1:$A" "$O3" --send 'ping through CONNECT')
ok $([ "$(field "$out" status)" = 200 ] && [ "$(field "$out" reply)" = 'echo:ping through CONNECT' ]; echo $?) \
	"CONNECT: the client's shutdown(SHUT_WR) reaches the origin, its reply comes back ($(field "$out" reply))"
out=$(gwc socks "127.0.0.1:$A" --atyp 1 --addr 127.0.0.2 --port "$P3" --send 'ping through SOCKS' --half-close)
ok $([ "$(field "$out" data)" = 'echo:ping through SOCKS' ]; echo $?) \
	"SOCKS5: half-close passed through too ($(field "$out" data))"

# --- SOCKS commands and versions
for c in 2:BIND 3:'UDP ASSOCIATE'; do
	out=$(gwc socks "127.0.0.1:$A" --cmd "${c%%:*}" --atyp 1 --addr 127.0.0.2 --port "$P1")
	ok $([ "$(field "$out" reply)" = 07 ]; echo $?) "SOCKS5 ${c#*:}: reply 0x07 ($(field "$out" reply))"
done
out=$(gwc socks "127.0.0.1:$A" --cmd 1 --atyp 1 --addr 127.0.0.2 --port "$P1")
ok $([ "$(field "$out" reply)" = 00 ]; echo $?) "control: SOCKS5 CONNECT to the same address: 0x00"
# On the shared listener the first byte tells SOCKS5 (5) from HTTP: SOCKS4
# is not SOCKS5, so it is read as HTTP and refused (400) and closed; it
# must never get a SOCKS4 grant (0x5a).
not_socks4_granted() {
	[ "$(field "$1" closed)" = yes ] && case $(field "$1" hex) in 005a*) false ;; *) true ;; esac
}
out=$(gwc raw "127.0.0.1:$A" --wait 5 --data '\x04\x01\x00\x50\x7f\x00\x00\x02cordon\x00')
ok $(not_socks4_granted "$out"; echo $?) \
	"SOCKS4 request: refused and closed ($(field "$out" len) bytes back, status $(field "$out" status))"
out=$(gwc raw "127.0.0.1:$A" --wait 5 --data '\x04\x01\x00\x50\x00\x00\x00\x01cordon\x00named.test\x00')
ok $(not_socks4_granted "$out"; echo $?) \
	"SOCKS4a request: refused and closed ($(field "$out" len) bytes back)"
code=$(fetch "$XA" "http://$O1/index.html")
ok $([ "$code" = 200 ]; echo $?) "control: the gateway still serves after them ($code)"

# --- the audit log: one JSON line per connection, at its end
sleep 0.5
"$PY" - "$LAB/A.jsonl" "$O1" > "$LAB/audit.out" 2>&1 <<'PY'
import json, sys
path, o1 = sys.argv[1], sys.argv[2]
fields = {"time": str, "client": str, "protocol": str, "host": str, "port": int,
          "addresses": list, "verdict": str, "reason": str, "bytes_up": int,
          "bytes_down": int, "duration_ms": int}
lines = open(path, encoding="utf-8").read().splitlines()
recs, bad = [], 0
for ln in lines:
    try:
        r = json.loads(ln)
    except ValueError:
        bad += 1
        continue
    if set(r) != set(fields) or any(not isinstance(r[k], t) for k, t in fields.items()):
        print("odd record:", ln)
        bad += 1
    elif r["verdict"] not in ("allow", "deny", "fail"):
        print("odd verdict:", ln)
        bad += 1
    recs.append(r)
print("lines=%d" % len(lines))
print("bad=%d" % bad)
host, port = o1.split(":")
def has(**kw):
    return any(all(kw[k](r[k]) if callable(kw[k]) else r[k] == kw[k] for k in kw) for r in recs)
print("big_http=%d" % has(protocol="http", host=host, port=int(port), verdict="allow",
                          addresses=[host], bytes_up=lambda v: v > 0,
                          bytes_down=lambda v: v > 1048576))
print("big_connect=%d" % has(protocol="http-connect", host=host, verdict="allow",
                             bytes_up=lambda v: v > 0, bytes_down=lambda v: v > 1048576))
print("big_socks=%d" % has(protocol="socks5", host=host, verdict="allow",
                           bytes_down=lambda v: v > 1048576))
print("denied_name=%d" % has(host="other.test", port=80, verdict="deny",
                             reason="host not in network.allow", bytes_up=0, bytes_down=0))
print("denied_entry=%d" % has(host="bad.example.test", verdict="deny", reason="host in network.deny"))
print("failed_name=%d" % has(host="good.example.test", verdict="fail", reason="name does not resolve"))
print("socks_denied=%d" % has(protocol="socks5", host="other.test", verdict="deny"))
print("times=%d" % all(r["time"].endswith("Z") and "T" in r["time"] for r in recs))
PY
audit=$(cat "$LAB/audit.out")
ok $([ "$(field "$audit" bad)" = 0 ] && [ "$(field "$audit" lines)" -ge 20 ]; echo $?) \
	"audit: every line is a JSON object with exactly the fields, typed ($(field "$audit" lines) lines, $(field "$audit" bad) bad)"
[ "$(field "$audit" bad)" = 0 ] || printf '%s\n' "$audit" | sed 's/^/# /'
ok $([ "$(field "$audit" big_http)" = 1 ]; echo $?) "audit: the 1 MiB absolute-form GET is allow, with its address and byte counts > 0"
ok $([ "$(field "$audit" big_connect)" = 1 ]; echo $?) "audit: the CONNECT transfer (http-connect) counts its bytes"
ok $([ "$(field "$audit" big_socks)" = 1 ]; echo $?) "audit: the SOCKS5 transfer counts its bytes"
ok $([ "$(field "$audit" denied_name)" = 1 ] && [ "$(field "$audit" denied_entry)" = 1 ]; echo $?) \
	"audit: refused requests are deny, with the reason and no bytes"
ok $([ "$(field "$audit" failed_name)" = 1 ]; echo $?) "audit: a name that does not resolve is fail"
ok $([ "$(field "$audit" socks_denied)" = 1 ]; echo $?) "audit: a refused SOCKS5 request is logged as socks5 deny"
ok $([ "$(field "$audit" times)" = 1 ]; echo $?) "audit: times are UTC ISO 8601"
ok $(grep -q '"verdict":"allow"' "$LAB/B.jsonl" && grep -q '"reason":"host in network.deny"' "$LAB/B.jsonl"; echo $?) \
	"audit of B holds its allowed and its denied request"

# The listener: a unix socket serves too; TCP only on loopback.
"$CORDON" gateway --listen "unix:$LAB/gw.sock" --allow "$O1" --audit "$LAB/U.jsonl" \
	</dev/null >"$LAB/U.out" 2>"$LAB/U.err" &
upid=$!
GW_PIDS+=("$upid")
for _ in $(seq 100); do [ -S "$LAB/gw.sock" ] && break; sleep 0.1; done
out=$(gwc raw "unix:$LAB/gw.sock" --wait 5 --data "GET http://$O1/index.html HTTP/1.1\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 200 ] && field "$out" body | grep -q 'hello from the origin'; echo $?) \
	"--listen unix:PATH: an absolute-form GET through it: 200"
out=$(gwc raw "unix:$LAB/gw.sock" --wait 5 --data "GET http://$O2/index.html HTTP/1.1\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 403 ]; echo $?) "... and the same to a target not listed: 403"
kill -TERM "$upid"
wait "$upid"
ok $([ $? = 0 ] && grep -q '"client":"unix"' "$LAB/U.jsonl" && ! grep -q Sanitizer "$LAB/U.err"; echo $?) \
	"... its audit names the client unix; it ends 0 on TERM"
for l in tcp:0.0.0.0 tcp:192.0.2.1 'tcp:[::]'; do
	p=$(free_port)
	timeout 10 "$CORDON" gateway --listen "$l:$p" </dev/null >/dev/null 2>"$LAB/l.err"
	rc=$?
	ok $([ $rc != 0 ] && [ $rc != 124 ] && grep -q 'loopback' "$LAB/l.err"; echo $?) \
		"--listen $l:PORT is refused: not loopback ($rc: $(head -c 90 "$LAB/l.err"))"
done

for g in A B C; do stop_gw "$g"; done
tap_done
