#!/bin/bash
# The address guard: a name is resolved by the gateway (here from a test
# DNS server on 127.0.0.1) and refused when any of its addresses is in a
# refused class, even when the name is allowed, and then never dialled.
# Controls: an allowed IP literal is reached as it is; a name that does not
# resolve is 502, not 403. Also: the spelling of names in the lists.
. "$(dirname "$0")/gwlab.sh"

# The positive control the loopback lab cannot give: a name answering only
# public-looking addresses is resolved, checked and dialled. Run as
# `guard.t --pubnet LAB` inside `unshare -n` (a fresh network namespace):
# a second namespace holds the "public" origin on 44.0.0.2 and 44.0.0.4,
# joined by a veth pair to this one's 44.0.0.1; neither reaches the host's
# networks. Prints "RESULT status description" lines for the caller.
pubnet() {
	local i code out
	GW_BIN=$1/bin LAB=$1/pubnet
	mkdir -p "$LAB/www" || exit 1
	trap gw_cleanup EXIT
	ok() { echo "RESULT $1 $2"; }
	echo "public origin" > "$LAB/www/index.html"
	netns_peer 44.0.0.2/29 44.0.0.4/29 || exit 1
	GW_PREFIX=(nsenter -t "$PEER" -n)
	start_server PUB http --isolated-netns --bind 44.0.0.2 --dir "$LAB/www" || exit 1
	GW_PREFIX=()
	start_dns DNS --record pub.net.test=44.0.0.2 --record pubmixed.net.test=44.0.0.2,10.1.2.3 \
		--record pubmixed6.net.test=44.0.0.2,fd12::1 --record two.net.test=44.0.0.4,44.0.0.2 \
		--record '*.wild.test=44.0.0.2' --record own.net.test=44.0.0.1 --record anyip.net.test=44.2.0.1 || exit 1
	# 44.2.0.0/24 is this namespace's by a local route (AnyIP), on no
	# interface: a service listening on 0.0.0.0 here answers on it.
	ip route add local 44.2.0.0/24 dev lo || exit 1
	start_server ANY http --isolated-netns --bind 0.0.0.0 --dir "$LAB/www" || exit 1
	start_gw N --allow pub.net.test --allow pubmixed.net.test --allow pubmixed6.net.test \
		--allow two.net.test --allow '*.wild.test' --deny deny.wild.test --allow own.net.test \
		--allow anyip.net.test --dns "127.0.0.1:$DNS" || exit 1
	for i in $(seq 50); do curl -s -o /dev/null "http://44.0.0.2:$PUB/" && break; sleep 0.1; done
	code=$(pcurl -x "http://127.0.0.1:$N" -o "$LAB/body" -w '%{http_code}' "http://pub.net.test:$PUB/index.html")
	ok $([ "$code" = 200 ] && [ "$(cat "$LAB/body")" = "public origin" ]; echo $?) \
		"control: pub.net.test (44.0.0.2 only), allowed by name, is dialled: 200 ($code)"
	code=$(pcurl -x "http://127.0.0.1:$N" -o "$LAB/body" -w '%{http_code}' "http://pubmixed.net.test:$PUB/index.html")
	ok $([ "$code" = 403 ]; echo $?) "pubmixed.net.test (44.0.0.2 and 10.1.2.3): 403 ($code)"
	code=$(pcurl -x "http://127.0.0.1:$N" -o "$LAB/body" -w '%{http_code}' "http://pubmixed6.net.test:$PUB/index.html")
	ok $([ "$code" = 403 ]; echo $?) "pubmixed6.net.test (44.0.0.2 and fd12::1): 403 ($code)"
	code=$(pcurl -p -x "http://127.0.0.1:$N" -o "$LAB/body" -w '%{http_code}' "http://pub.net.test:$PUB/index.html")
	ok $([ "$code" = 200 ]; echo $?) "control: CONNECT to pub.net.test: 200 ($code)"
	code=$(pcurl -x "socks5h://127.0.0.1:$N" -o "$LAB/body" -w '%{http_code}' "http://pub.net.test:$PUB/index.html")
	ok $([ "$code" = 200 ]; echo $?) "control: SOCKS5 with the name (socks5h) to pub.net.test: 200 ($code)"
	code=$(pcurl -x "http://127.0.0.1:$N" -o "$LAB/body" -w '%{http_code}' "http://two.net.test:$PUB/index.html")
	ok $([ "$code" = 200 ]; echo $?) "two.net.test (44.0.0.4 closed, 44.0.0.2 listening): the checked addresses dialled in turn, 200 ($code)"
	code=$(pcurl -x "http://127.0.0.1:$N" -o "$LAB/body" -w '%{http_code}' "http://a.wild.test:$PUB/index.html")
	ok $([ "$code" = 200 ]; echo $?) "--allow '*.wild.test' --deny deny.wild.test: a.wild.test reached, 200 ($code)"
	code=$(pcurl -x "http://127.0.0.1:$N" -D "$LAB/head" -o "$LAB/body" -w '%{http_code}' "http://deny.wild.test:$PUB/index.html")
	ok $([ "$code" = 403 ] && grep -qi '^x-cordon-refused: host in network.deny' "$LAB/head"; echo $?) \
		"... deny.wild.test (resolving to the same address) refused as denied ($code)"
	code=$(pcurl -x "http://127.0.0.1:$N" -D "$LAB/head" -o "$LAB/body" -w '%{http_code}' "http://own.net.test:$PUB/index.html")
	ok $([ "$code" = 403 ] && grep -qi "^x-cordon-refused: name resolves to a this host's own address" "$LAB/head"; echo $?) \
		"own.net.test (44.0.0.1, this namespace's public-looking address): 403 as this host's own ($code)"
	code=$(pcurl -x "http://127.0.0.1:$N" -o "$LAB/body" -w '%{http_code}' "http://anyip.net.test:$ANY/index.html")
	ok $([ "$code" = 403 ]; echo $?) \
		"anyip.net.test (44.2.0.1, local by a route, on no interface): 403, not a host service ($code)"
	out=$("$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["host"] == "two.net.test": print(",".join(r["addresses"]), r["verdict"])' "$LAB/N.jsonl")
	ok $([ "$out" = "44.0.0.4,44.0.0.2 allow" ] || [ "$out" = "44.0.0.2,44.0.0.4 allow" ]; echo $?) \
		"audit: two.net.test lists both checked addresses ($out)"
	stop_gw N
	# a gateway told an address is the host's (a container's companion
	# is told the host's): the name answering it is refused as above,
	# where the control gateway reached it (200)
	start_gw H --allow pub.net.test --dns "127.0.0.1:$DNS" --host-address 44.0.0.2 || exit 1
	code=$(pcurl -x "http://127.0.0.1:$H" -D "$LAB/head" -o "$LAB/body" -w '%{http_code}' "http://pub.net.test:$PUB/index.html")
	ok $([ "$code" = 403 ] && grep -qi "^x-cordon-refused: name resolves to a this host's own address" "$LAB/head"; echo $?) \
		"--host-address 44.0.0.2: pub.net.test refused as this host's own ($code)"
	stop_gw H
}
if [ "${1:-}" = --pubnet ]; then
	pubnet "$2"
	exit 0
fi

gw_lab guard

mkdir -p "$LAB/www"
echo "guarded origin" > "$LAB/www/index.html"
start_server WWW http --dir "$LAB/www" || exit 1
# A listener that records every connection: what the gateway dials.
: > "$LAB/dialled.log"
start_server REC record --log "$LAB/dialled.log" || exit 1

# name=addresses, class reason expected
cases=(
	"lo2.guard.test=127.0.0.2|loopback address"
	"lo123.guard.test=127.1.2.3|loopback address"
	"ten.guard.test=10.0.0.1|private address"
	"meta.guard.test=169.254.169.254|link-local address (cloud metadata)"
	"cgnat.guard.test=100.64.0.1|shared address (carrier-grade NAT)"
	"v6lo.guard.test=::1|loopback address"
	"ula.guard.test=fd00::1|unique local address"
	"mapped.guard.test=::ffff:127.0.0.1|loopback address"
	"zero.guard.test=0.0.0.0|unspecified address"
	"mixed.guard.test=93.184.216.34,10.1.2.3|private address"
	"mixed6.guard.test=93.184.216.34,fd12:3456::7|unique local address"
)
# One of this host's own addresses (not loopback), whatever its class.
own=$(ip -o addr show 2>/dev/null | awk '$3 == "inet" && $4 !~ /^127\./ { sub("/.*", "", $4); print $4; exit }')
[ -n "$own" ] && cases+=("own.guard.test=$own|this host's own address")
dnsargs=() allow=()
for c in "${cases[@]}"; do
	rec=${c%%|*}
	dnsargs+=(--record "$rec")
	allow+=(--allow "${rec%%=*}")
done
# 40 public-looking addresses and a private one last: more than the
# gateway keeps for dialling (16) and more than a UDP answer holds (TCP).
many=$(for i in $(seq 1 40); do printf '93.184.%d.%d,' $((i / 200)) $((i % 200 + 1)); done)10.9.9.9
start_dns DNS "${dnsargs[@]}" --record '*.evil.test=127.0.0.2' --record "many.guard.test=$many" \
	--drop slow.guard.test/A --drop slow.guard.test/AAAA --log "$LAB/dns.log" || exit 1
touch "$LAB/dns.log"
start_gw G "${allow[@]}" --allow '*.evil.test' --allow nx.guard.test --allow localhost \
	--allow "127.0.0.2:$WWW" --allow "127.0.0.2:$REC" --allow many.guard.test --allow slow.guard.test \
	--dns "127.0.0.1:$DNS" || exit 1
XG=http://127.0.0.1:$G

fetch() {
	local proxy=$1 url=$2
	shift 2
	rm -f "$LAB/body" "$LAB/head"
	pcurl -x "$proxy" -D "$LAB/head" -o "$LAB/body" -w '%{http_code}' "$@" "$url" 2>"$LAB/curl.err"
}
refused_hdr() { sed -n 's/^[Xx]-[Cc]ordon-[Rr]efused: *//p' "$LAB/head" | tr -d '\r'; }
dialled() { wc -l < "$LAB/dialled.log"; }

# Control first: an allowed literal is dialled as it is, loopback or not.
code=$(fetch "$XG" "http://127.0.0.2:$WWW/index.html")
ok $([ "$code" = 200 ] && [ "$(cat "$LAB/body")" = "guarded origin" ]; echo $?) \
	"control: the listed literal 127.0.0.2:$WWW is reached as it is ($code)"
pcurl -x "$XG" -o /dev/null "http://127.0.0.2:$REC/" 2>/dev/null
ok $([ "$(dialled)" = 1 ]; echo $?) "control: the listed literal 127.0.0.2:$REC is dialled (the recorder saw $(dialled))"
: > "$LAB/dialled.log"

for c in "${cases[@]}"; do
	rec=${c%%|*} want=${c#*|}
	name=${rec%%=*} addrs=${rec#*=}
	code=$(fetch "$XG" "http://$name:$REC/")
	ok $([ "$code" = 403 ] && [ "$(refused_hdr)" = "name resolves to a $want" ] &&
		[ "$(cat "$LAB/body")" = "name resolves to a $want" ]; echo $?) \
		"$name ($addrs), allowed by name: 403, '$(refused_hdr)'"
done
ok $([ "$(dialled)" = 0 ]; echo $?) "none of them was dialled (the recorder on 127.0.0.2:$REC saw $(dialled))"
ok $(for c in "${cases[@]}"; do n0=${c%%=*}; grep -q "^$n0 " "$LAB/dns.log" || exit 1; done; echo $?) \
	"each of them was looked up (the refusal came from the answer)"

# The same names through CONNECT and SOCKS5.
code=$(fetch "$XG" "http://lo2.guard.test:$REC/" -p)
ok $([ "$code" = 403 ] || grep -q 'CONNECT.*403' "$LAB/curl.err"; echo $?) "CONNECT to lo2.guard.test: 403"
out=$(gwc raw "127.0.0.1:$G" --wait 3 --data "CONNECT lo2.guard.test:$REC HTTP/1.1\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 403 ] && [ "$(field "$out" refused)" = "name resolves to a loopback address" ]; echo $?) \
	"CONNECT: the reason names the class ($(field "$out" refused))"
out=$(gwc raw "127.0.0.1:$G" --wait 3 --data "CONNECT 127.0.0.2:$WWW HTTP/1.1\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 200 ]; echo $?) "control: CONNECT to the listed literal: 200"
for nm in lo2.guard.test meta.guard.test v6lo.guard.test mixed.guard.test; do
	out=$(gwc socks "127.0.0.1:$G" --atyp 3 --addr "$nm" --port "$REC")
	ok $([ "$(field "$out" reply)" = 02 ]; echo $?) "SOCKS5 to $nm: 0x02 ($(field "$out" reply))"
done
out=$(gwc socks "127.0.0.1:$G" --atyp 1 --addr 127.0.0.2 --port "$WWW" --send 'GET /index.html HTTP/1.0\r\n\r\n')
ok $([ "$(field "$out" reply)" = 00 ] && field "$out" data | grep -q 'guarded origin'; echo $?) \
	"control: SOCKS5 to the listed literal: 0x00 and the origin answers"
ok $([ "$(dialled)" = 0 ]; echo $?) "still nothing dialled on 127.0.0.2:$REC ($(dialled))"

# Every address of an answer is checked, not only those kept for dialling.
code=$(fetch "$XG" "http://many.guard.test:$REC/")
ok $([ "$code" = 403 ] && [ "$(refused_hdr)" = "name resolves to a private address" ]; echo $?) \
	"an answer of 40 public-looking addresses and 10.9.9.9 last (over TCP): 403 private ($code, $(refused_hdr))"

# DNS is off the event loop: a lookup that never gets an answer fails on
# its own while other requests are served.
pcurl -x "$XG" -o "$LAB/slow.body" -w '%{http_code}' "http://slow.guard.test:$REC/" >"$LAB/slow.code" 2>/dev/null &
slow=$!
sleep 0.5
code=$(fetch "$XG" "http://127.0.0.2:$WWW/index.html")
ok $([ "$code" = 200 ]; echo $?) "while a lookup waits for an answer that never comes, another request gets 200 ($code)"
wait "$slow"
code=$(cat "$LAB/slow.code")
ok $([ "$code" = 502 ] || [ "$code" = 504 ]; echo $?) \
	"... and the unanswered lookup ends in 502 or 504 ($code, $(cat "$LAB/slow.body" 2>/dev/null))"
ok $([ "$(dialled)" = 0 ]; echo $?) "nothing dialled ($(dialled))"

# A wildcard covering names whose answers someone else controls.
code=$(fetch "$XG" "http://anything.evil.test:$REC/")
ok $([ "$code" = 403 ] && [ "$(refused_hdr)" = "name resolves to a loopback address" ]; echo $?) \
	"*.evil.test allowed, anything.evil.test resolves to 127.0.0.2: 403 ($code, $(refused_hdr))"
code=$(fetch "$XG" "http://deep.down.evil.test:$REC/")
ok $([ "$code" = 403 ]; echo $?) "... deep.down.evil.test too ($code)"
code=$(fetch "$XG" "http://localhost:$REC/")
ok $([ "$code" = 403 ] && refused_hdr | grep -q 'loopback'; echo $?) "localhost, allowed by name: 403 loopback ($code, $(refused_hdr))"
ok $([ "$(dialled)" = 0 ]; echo $?) "nothing dialled ($(dialled))"

# Not resolving is a failure, not a refusal.
code=$(fetch "$XG" "http://nx.guard.test/")
ok $([ "$code" = 502 ] && grep -q 'name does not resolve' "$LAB/body"; echo $?) \
	"an allowed name that does not resolve: 502 ($code, $(cat "$LAB/body" 2>/dev/null))"
out=$(gwc socks "127.0.0.1:$G" --atyp 3 --addr nx.guard.test --port 80)
ok $([ "$(field "$out" reply)" = 04 ]; echo $?) "... through SOCKS5: 0x04 ($(field "$out" reply))"

# A listed literal does not let a name resolving to it through.
code=$(fetch "$XG" "http://lo2.guard.test:$WWW/index.html")
ok $([ "$code" = 403 ]; echo $?) "127.0.0.2:$WWW is listed, lo2.guard.test:$WWW (resolving to it) still 403 ($code)"

# --- spelling: a deny entry in another case and with a final dot
start_gw S --deny Bad.Example.Test. --allow '*.example.test' --dns "127.0.0.1:$DNS" || exit 1
for spell in bad.example.test BAD.example.test. Bad.Example.Test bad.example.test.; do
	out=$(gwc raw "127.0.0.1:$S" --wait 3 --data "GET http://$spell/ HTTP/1.1\\r\\nHost: $spell\\r\\n\\r\\n")
	ok $([ "$(field "$out" status)" = 403 ] && [ "$(field "$out" refused)" = "host in network.deny" ]; echo $?) \
		"--deny Bad.Example.Test.: GET http://$spell/ refused as denied ($(field "$out" status), $(field "$out" refused))"
done
for spell in BAD.example.test. bad.EXAMPLE.test; do
	out=$(gwc raw "127.0.0.1:$S" --wait 3 --data "CONNECT $spell:443 HTTP/1.1\\r\\n\\r\\n")
	ok $([ "$(field "$out" refused)" = "host in network.deny" ]; echo $?) \
		"... CONNECT $spell:443 refused as denied ($(field "$out" refused))"
	out=$(gwc socks "127.0.0.1:$S" --atyp 3 --addr "$spell" --port 443)
	ok $([ "$(field "$out" reply)" = 02 ]; echo $?) "... SOCKS5 $spell refused ($(field "$out" reply))"
done
ok $(! grep -qi '^bad.example.test' "$LAB/dns.log"; echo $?) "... and no spelling of it was looked up"
ok $(grep -c '"reason":"host in network.deny"' "$LAB/S.jsonl" | grep -qx 8; echo $?) \
	"... the audit log gives all 8 the deny reason ($(grep -c '"reason":"host in network.deny"' "$LAB/S.jsonl"))"
out=$(gwc raw "127.0.0.1:$S" --wait 3 --data "GET http://Good.Example.Test./ HTTP/1.1\\r\\n\\r\\n")
ok $([ "$(field "$out" status)" = 502 ]; echo $?) \
	"control: Good.Example.Test. passes the lists (does not resolve: 502) ($(field "$out" status))"

stop_gw G
stop_gw S

netns_part --pubnet 10
tap_done
