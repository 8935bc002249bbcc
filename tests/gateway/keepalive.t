#!/bin/bash
# One request per absolute-form http:// connection. The origins here keep
# every connection open whatever the request says and answer pipelined
# requests (as an origin the sandbox runs may), and log each request head
# they get. Checked: a client that reuses the proxy connection (curl with
# two URLs) has its second request, to an unlisted host, refused and
# audited, never sent to the first origin; pipelined requests never reach
# the origin past the first request's body (Content-Length and chunked);
# the proxy token and Proxy-Connection never reach an origin; each answer
# says Connection: close. Controls: each first request answered 200.
. "$(dirname "$0")/gwlab.sh"
gw_lab keepalive

TOKEN=ka-Tq8Zr2Lw0Xv5Nn7Pp3Hs6Jd9Gf4Kc1
printf '%s\n' "$TOKEN" > "$LAB/token"
chmod 0600 "$LAB/token"
AUTH=$(printf 'u:%s' "$TOKEN" | base64 -w0)
: > "$LAB/a.log"
: > "$LAB/b.log"
start_server A keepalive --log "$LAB/a.log" || exit 1
start_server B keepalive --log "$LAB/b.log" || exit 1
start_gw G --token-file "$LAB/token" --allow "127.0.0.2:$A" || exit 1
start_gw N --allow "127.0.0.2:$A" || exit 1
requests() { grep -c '^--$' "$1"; }
leaked() { grep -qiE "proxy-authorization|proxy-connection|$TOKEN|$AUTH" "$LAB/a.log" "$LAB/b.log"; }
audit_lines() { "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%s:%s %s %s" % (r["host"], r["port"], r["verdict"], r["reason"]))' "$1"; }

# --- curl reusing its proxy connection for a second URL
out=$(pcurl -x "http://u:$TOKEN@127.0.0.1:$G" -D "$LAB/head" -o "$LAB/body1" -o "$LAB/body2" \
	-w '%{http_code} ' "http://127.0.0.2:$A/a" "http://127.0.0.2:$B/b")
ok $([ "$out" = "200 403 " ] && grep -q "^origin $A request 1 /a" "$LAB/body1"; echo $?) \
	"curl, two URLs through one proxy: A's /a 200 (the control), B's /b 403 ($out)"
ok $(grep -qi '^connection: close' "$LAB/head" && ! grep -qi '^connection: keep-alive' "$LAB/head" &&
	! grep -qi '^keep-alive:' "$LAB/head"; echo $?) \
	"... A's answer says Connection: close (its keep-alive dropped)"
ok $([ "$(requests "$LAB/a.log")" = 1 ] && [ "$(requests "$LAB/b.log")" = 0 ]; echo $?) \
	"... A got one request, B none (A: $(requests "$LAB/a.log"), B: $(requests "$LAB/b.log"))"
ok $(! leaked; echo $?) "... no Proxy-Authorization, Proxy-Connection or token reached an origin"
out=$(audit_lines "$LAB/G.jsonl")
ok $(printf '%s\n' "$out" | grep -qx "127.0.0.2:$A allow " &&
	printf '%s\n' "$out" | grep -qx "127.0.0.2:$B deny host not in network.allow"; echo $?) \
	"... both audited: A allowed, B denied ($(printf '%s' "$out" | tr '\n' ';'))"

# --- pipelined: a second request in the same write as the first
: > "$LAB/a.log"
second="GET http://127.0.0.2:$B/b HTTP/1.1\\r\\nHost: 127.0.0.2\\r\\nProxy-Authorization: Basic $AUTH\\r\\nProxy-Connection: keep-alive\\r\\n\\r\\n"
first="GET http://127.0.0.2:$A/a HTTP/1.1\\r\\nHost: 127.0.0.2\\r\\nProxy-Authorization: Basic $AUTH\\r\\nProxy-Connection: keep-alive\\r\\n\\r\\n"
out=$(gwc raw "127.0.0.1:$G" --wait 5 --data "$first$second")
ok $([ "$(field "$out" status)" = 200 ] && [ "$(field "$out" closed)" = yes ] &&
	field "$out" text | grep -q "origin $A request 1 /a" && ! field "$out" text | grep -q 'request 2'; echo $?) \
	"pipelined A then B: A's one answer, then the connection closed ($(field "$out" status), closed $(field "$out" closed))"
ok $([ "$(requests "$LAB/a.log")" = 1 ] && [ "$(requests "$LAB/b.log")" = 0 ] && ! leaked; echo $?) \
	"... A got the first request only, B nothing, no proxy header or token at either (A: $(requests "$LAB/a.log"))"
out=$(audit_lines "$LAB/G.jsonl" | tail -n2)
ok $(printf '%s\n' "$out" | grep -q "^127.0.0.2:$A allow" &&
	printf '%s\n' "$out" | grep -q "^127.0.0.2:$B deny .*one request per connection"; echo $?) \
	"... the second request audited as refused ($(printf '%s' "$out" | tr '\n' ';'))"

# Pipelined to the same allowed origin: the second is not sent either.
: > "$LAB/a.log"
out=$(gwc raw "127.0.0.1:$N" --wait 5 --data "${first}GET http://127.0.0.2:$A/again HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 200 ] && [ "$(requests "$LAB/a.log")" = 1 ] && ! grep -q again "$LAB/a.log"; echo $?) \
	"pipelined A twice: one request reaches A ($(requests "$LAB/a.log"))"

# A body of Content-Length bytes goes, the request after it does not.
: > "$LAB/a.log"
out=$(gwc raw "127.0.0.1:$N" --wait 5 --data "POST http://127.0.0.2:$A/post HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 11\\r\\n\\r\\nhello worldGET http://127.0.0.2:$A/smuggled HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 200 ] && [ "$(requests "$LAB/a.log")" = 1 ] && grep -qx 'body 11' "$LAB/a.log" &&
	! grep -q smuggled "$LAB/a.log"; echo $?) \
	"POST with Content-Length 11 and a request after it: the 11 bytes reach A, the request does not ($(requests "$LAB/a.log"))"

# A chunked body likewise: the request after its last chunk stays.
: > "$LAB/a.log"
out=$(gwc raw "127.0.0.1:$N" --wait 5 --data "POST http://127.0.0.2:$A/chunked HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n5\\r\\nhello\\r\\n6;ext=1\\r\\n world\\r\\n0\\r\\nTrailer-X: 1\\r\\n\\r\\nGET http://127.0.0.2:$A/smuggled HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 200 ] && [ "$(requests "$LAB/a.log")" = 1 ] && grep -qx 'body 11' "$LAB/a.log" &&
	! grep -q smuggled "$LAB/a.log"; echo $?) \
	"POST chunked (11 bytes in two chunks) and a request after it: the body reaches A, the request does not ($(requests "$LAB/a.log"))"
# A broken chunk size ends the connection; nothing after it is sent.
: > "$LAB/a.log"
out=$(gwc raw "127.0.0.1:$N" --wait 5 --data "POST http://127.0.0.2:$A/badchunk HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\nzz\\r\\nGET http://127.0.0.2:$A/smuggled HTTP/1.1\\r\\n\\r\\n")
ok $([ "$(field "$out" closed)" = yes ] && ! grep -q smuggled "$LAB/a.log"; echo $?) \
	"a malformed chunk size: the connection ends, nothing after it reaches A"

# --- responses of each framing reach the client whole, then the end
for t in chunky unframed plain; do
	out=$(gwc raw "127.0.0.1:$N" --wait 5 --data "GET http://127.0.0.2:$A/$t HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
	ok $([ "$(field "$out" status)" = 200 ] && [ "$(field "$out" closed)" = yes ] &&
		{ [ $t = chunky ] || field "$out" text | grep -q "origin $A request 1 /$t"; } &&
		field "$out" text | grep -qi 'connection: close'; echo $?) \
		"a $t response: whole, Connection: close, then closed ($(field "$out" status), closed $(field "$out" closed))"
done
out=$(gwc raw "127.0.0.1:$N" --wait 5 --data "HEAD http://127.0.0.2:$A/h HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 200 ] && [ "$(field "$out" closed)" = yes ] && ! field "$out" text | grep -q 'origin'; echo $?) \
	"HEAD: the head alone, then closed, though the origin keeps the connection ($(field "$out" closed))"
body=$(pcurl -x "http://127.0.0.1:$N" "http://127.0.0.2:$A/x/chunky")
ok $([ "$body" = "origin $A request 1 /x/chunky" ]; echo $?) "curl reads the chunked answer as sent ($body)"

# Expect: 100-continue: the origin's 100 reaches the client before the
# body is sent (the client would wait longer for it than curl may run),
# then the final answer.
head -c 3000 /dev/zero > "$LAB/upload"
: > "$LAB/a.log"
code=$(pcurl -x "http://127.0.0.1:$N" -H 'Expect: 100-continue' --expect100-timeout 60 -D "$LAB/head" \
	-o "$LAB/body" -w '%{http_code}' --data-binary @"$LAB/upload" "http://127.0.0.2:$A/upload")
ok $([ "$code" = 200 ] && grep -q '^HTTP/1.1 100 Continue' "$LAB/head" && grep -qx 'body 3000' "$LAB/a.log"; echo $?) \
	"Expect: 100-continue: the 100 passed on, the 3000-byte body reached A, 200 ($code)"

# --- control: CONNECT stays a tunnel, several requests through it
out=$(gwc raw "127.0.0.1:$N" --wait 3 --data "CONNECT 127.0.0.2:$A HTTP/1.1\\r\\n\\r\\nGET /t1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\nGET /t2 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
ok $(field "$out" text | grep -q "request 1 /t1.*request 2 /t2"; echo $?) \
	"control: through a CONNECT tunnel both requests reach A (a tunnel carries what the client sends)"

stop_gw G
stop_gw N
tap_done
