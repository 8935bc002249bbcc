#!/bin/bash
# network.allow_ranges (`cordon gateway --allow-range CIDR`): a listed name
# may resolve into a listed range. Loopback opens only under a range inside
# 127.0.0.0/8; unspecified, multicast and this host's own addresses under
# none; a range never lets an IP literal in. Documentation and
# benchmarking addresses need no range at all. Each case beside its
# control, each allowed one audited with the range that allowed it.
. "$(dirname "$0")/gwlab.sh"

# audit_of LOG HOST: "verdict|reason|ranges" of HOST's last line in LOG.
audit_of() {
	"$PY" -c 'import json,sys
out = ""
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["host"] == sys.argv[2]:
        out = "%s|%s|%s" % (r["verdict"], r["reason"], ",".join(r.get("allow_ranges", [])))
print(out)' "$1" "$2"
}

# The part that needs addresses off loopback: run inside `unshare -n` as
# `ranges.t --netns LAB`. A peer namespace, joined by a veth pair, holds
# an origin answering on a documentation address (203.0.113.7), a
# benchmarking one (198.18.0.7) and a private one (10.20.0.7), none of
# them this namespace's own. Prints "RESULT status description" lines.
netns() {
	local i code
	GW_BIN=$1/bin LAB=$1/netns
	mkdir -p "$LAB/www" || exit 1
	trap gw_cleanup EXIT
	ok() { echo "RESULT $1 $2"; }
	echo "ranged origin" > "$LAB/www/index.html"
	netns_peer 44.0.0.2/29 203.0.113.7/32 198.18.0.7/32 10.20.0.7/32 &&
		ip route add 203.0.113.7/32 dev cgw0 && ip route add 198.18.0.7/32 dev cgw0 &&
		ip route add 10.20.0.7/32 dev cgw0 || exit 1
	GW_PREFIX=(nsenter -t "$PEER" -n)
	start_server WWW http --isolated-netns --bind 0.0.0.0 --dir "$LAB/www" || exit 1
	GW_PREFIX=()
	start_dns DNS --record doc.r.test=203.0.113.7 --record bench.r.test=198.18.0.7 \
		--record ten.r.test=10.20.0.7 || exit 1
	for i in $(seq 50); do curl -s -o /dev/null "http://203.0.113.7:$WWW/" && break; sleep 0.1; done
	local allow=(--allow doc.r.test --allow bench.r.test --allow ten.r.test --dns "127.0.0.1:$DNS")
	start_gw N "${allow[@]}" || exit 1
	start_gw R "${allow[@]}" --allow-range 10.20.0.0/16 || exit 1
	start_gw W "${allow[@]}" --allow-range 10.21.0.0/16 || exit 1
	get() { pcurl -x "http://127.0.0.1:$1" -D "$LAB/head" -o "$LAB/body" -w '%{http_code}' "$2"; }
	code=$(get "$N" "http://doc.r.test:$WWW/index.html")
	ok $([ "$code" = 200 ] && [ "$(cat "$LAB/body")" = "ranged origin" ]; echo $?) \
		"doc.r.test (203.0.113.7, documentation), allowed by name, no range: dialled, 200 ($code)"
	code=$(get "$N" "http://bench.r.test:$WWW/index.html")
	ok $([ "$code" = 200 ]; echo $?) \
		"bench.r.test (198.18.0.7, benchmarking), allowed by name, no range: dialled, 200 ($code)"
	code=$(get "$N" "http://ten.r.test:$WWW/index.html")
	ok $([ "$code" = 403 ] && grep -qi '^x-cordon-refused: name resolves to a private address' "$LAB/head"; echo $?) \
		"ten.r.test (10.20.0.7) without a range: 403 private ($code)"
	code=$(get "$R" "http://ten.r.test:$WWW/index.html")
	ok $([ "$code" = 200 ] && [ "$(cat "$LAB/body")" = "ranged origin" ]; echo $?) \
		"... with --allow-range 10.20.0.0/16: dialled, 200 ($code)"
	code=$(get "$R" "http://ten.r.test:$WWW/index.html" -p)
	ok $([ "$code" = 200 ]; echo $?) "... through CONNECT too: 200 ($code)"
	code=$(get "$W" "http://ten.r.test:$WWW/index.html")
	ok $([ "$code" = 403 ]; echo $?) "... with --allow-range 10.21.0.0/16 (not holding it): 403 ($code)"
	code=$(get "$R" "http://10.20.0.7:$WWW/index.html")
	ok $([ "$code" = 403 ] && grep -qi '^x-cordon-refused: host not in network.allow' "$LAB/head"; echo $?) \
		"the literal 10.20.0.7, unlisted, inside the range: 403, a range lets no literal in ($code)"
	out=$(audit_of "$LAB/R.jsonl" ten.r.test)
	ok $([ "$out" = "allow|address in network.allow_ranges|10.20.0.0/16" ]; echo $?) \
		"audit: ten.r.test allowed by the range, named ($out)"
	out=$(audit_of "$LAB/N.jsonl" doc.r.test)
	ok $([ "$out" = "allow||" ]; echo $?) "audit: doc.r.test allowed with no range named ($out)"
	out=$(audit_of "$LAB/W.jsonl" ten.r.test)
	ok $([ "$out" = "deny|name resolves to a private address|" ]; echo $?) "audit: the refusal ($out)"
	stop_gw N
	stop_gw R
	stop_gw W
}
if [ "${1:-}" = --netns ]; then
	netns "$2"
	exit 0
fi

gw_lab ranges
mkdir -p "$LAB/www"
echo "loopback origin" > "$LAB/www/index.html"
start_server WWW http --dir "$LAB/www" || exit 1
: > "$LAB/dialled.log"
start_server REC record --bind 127.0.0.3 --log "$LAB/dialled.log" || exit 1
own=$(ip -o addr show 2>/dev/null | awk '$3 == "inet" && $4 !~ /^127\./ { sub("/.*", "", $4); print $4; exit }')
recs=(--record lo2.r.test=127.0.0.2 --record lo3.r.test=127.0.0.3 --record zero.r.test=0.0.0.0
	--record mc.r.test=224.0.0.1 --record v6lo.r.test=::1)
[ -n "$own" ] && recs+=(--record "own.r.test=$own")
start_dns DNS "${recs[@]}" || exit 1
names=(--allow lo2.r.test --allow lo3.r.test --allow zero.r.test --allow mc.r.test --allow own.r.test
	--allow v6lo.r.test --dns "127.0.0.1:$DNS")
start_gw NONE "${names[@]}" || exit 1
start_gw BROAD "${names[@]}" --allow-range 0.0.0.0/1 --allow-range 10.0.0.0/7 --allow-range ::/1 || exit 1
start_gw LO8 "${names[@]}" --allow-range 127.0.0.0/8 --allow-range ::1/128 || exit 1
start_gw LO2 "${names[@]}" --allow-range 127.0.0.2/32 || exit 1
never=(--allow-range 0.0.0.0/8 --allow-range 224.0.0.0/4)
[ -n "$own" ] && never+=(--allow-range "$own/32")
start_gw NEVER "${names[@]}" "${never[@]}" || exit 1
get() { pcurl -x "http://127.0.0.1:$1" -D "$LAB/head" -o "$LAB/body" -w '%{http_code}' "$2"; }
refused() { sed -n 's/^[Xx]-[Cc]ordon-[Rr]efused: *//p' "$LAB/head" | tr -d '\r'; }

code=$(get "$NONE" "http://lo2.r.test:$WWW/index.html")
ok $([ "$code" = 403 ] && [ "$(refused)" = "name resolves to a loopback address" ]; echo $?) \
	"lo2.r.test (127.0.0.2), no range: 403 loopback ($code)"
code=$(get "$BROAD" "http://lo2.r.test:$WWW/index.html")
ok $([ "$code" = 403 ] && [ "$(refused)" = "name resolves to a loopback address" ]; echo $?) \
	"... under 0.0.0.0/1, 10.0.0.0/7 and ::/1 (0.0.0.0/1 holds it): still 403 loopback ($code)"
code=$(get "$BROAD" "http://v6lo.r.test:$WWW/index.html")
ok $([ "$code" = 403 ] && [ "$(refused)" = "name resolves to a loopback address" ]; echo $?) \
	"... v6lo.r.test (::1) under ::/1: 403 loopback ($code)"
code=$(get "$LO8" "http://lo2.r.test:$WWW/index.html")
ok $([ "$code" = 200 ] && [ "$(cat "$LAB/body")" = "loopback origin" ]; echo $?) \
	"lo2.r.test under --allow-range 127.0.0.0/8: dialled, 200 ($code)"
code=$(get "$LO2" "http://lo2.r.test:$WWW/index.html")
ok $([ "$code" = 200 ]; echo $?) "lo2.r.test under --allow-range 127.0.0.2/32: 200 ($code)"
code=$(get "$LO2" "http://lo3.r.test:$REC/")
ok $([ "$code" = 403 ] && [ "$(refused)" = "name resolves to a loopback address" ]; echo $?) \
	"lo3.r.test (127.0.0.3) under 127.0.0.2/32: 403 loopback ($code)"
ok $([ ! -s "$LAB/dialled.log" ]; echo $?) "... and 127.0.0.3 was never dialled"
code=$(get "$LO8" "http://lo3.r.test:$REC/" 2>/dev/null)
ok $([ -s "$LAB/dialled.log" ]; echo $?) "control: lo3.r.test under 127.0.0.0/8 is dialled (recorder: $(wc -l < "$LAB/dialled.log"))"
code=$(get "$LO8" "http://127.0.0.2:$WWW/index.html")
ok $([ "$code" = 403 ] && [ "$(refused)" = "host not in network.allow" ]; echo $?) \
	"the literal 127.0.0.2 under 127.0.0.0/8, unlisted: 403, not in network.allow ($code)"
code=$(get "$NEVER" "http://zero.r.test:$REC/")
ok $([ "$code" = 403 ] && [ "$(refused)" = "name resolves to a unspecified address" ]; echo $?) \
	"zero.r.test (0.0.0.0) under 0.0.0.0/8: 403 unspecified ($code, $(refused))"
code=$(get "$NEVER" "http://mc.r.test:$REC/")
ok $([ "$code" = 403 ] && [ "$(refused)" = "name resolves to a multicast address" ]; echo $?) \
	"mc.r.test (224.0.0.1) under 224.0.0.0/4: 403 multicast ($code)"
if [ -n "$own" ]; then
	code=$(get "$NEVER" "http://own.r.test:$REC/")
	ok $([ "$code" = 403 ] && [ "$(refused)" = "name resolves to a this host's own address" ]; echo $?) \
		"own.r.test ($own, this host's) under $own/32: 403 this host's own ($code, $(refused))"
else
	skip "no non-loopback IPv4 address here"
fi
out=$(audit_of "$LAB/LO8.jsonl" lo2.r.test)
ok $([ "$out" = "allow|address in network.allow_ranges|127.0.0.0/8" ]; echo $?) \
	"audit: lo2.r.test allowed by 127.0.0.0/8, named ($out)"
out=$(audit_of "$LAB/BROAD.jsonl" lo2.r.test)
ok $([ "$out" = "deny|name resolves to a loopback address|" ]; echo $?) "audit: the broad ranges' refusal ($out)"

# The command line: a bad range is refused before anything listens.
for bad in 10.20.0.0 10.20.0.1/16 0.0.0.0/0 10.20.0.0/33 'fe80::%1/64'; do
	"$CORDON" gateway --listen "tcp:127.0.0.1:$(free_port)" --allow-range "$bad" >/dev/null 2>"$LAB/bad.err"
	rc=$?
	ok $([ $rc = 125 ] && grep -q -- '--allow-range' "$LAB/bad.err"; echo $?) \
		"--allow-range $bad refused, exit 125 ($rc: $(head -c 120 "$LAB/bad.err"))"
done

for g in NONE BROAD LO8 LO2 NEVER; do stop_gw "$g"; done

netns_part --netns 13
tap_done
