#!/bin/bash
# The gateway's reserved toolbelt name: with --toolbelt-socket, a request
# for toolbelt.cordon.internal:80 (plain HTTP, a CONNECT tunnel, SOCKS5)
# reaches that unix socket and nothing else, never looked up; another port
# of the name is refused; without the flag the name is a name like any
# other, refused as not listed (the control for the reach). Each decision
# is audited.
. "$(dirname "$0")/gwlab.sh"
gw_lab toolbelt

# a stand-in toolbelt: an HTTP server on a unix socket
cat > "$LAB/tb.py" <<'PY'
import http.server, os, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("toolbelt-here " + self.path + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    def get_request(self):
        r, _ = self.socket.accept()
        return r, ("unix", 0)
S(sys.argv[1], H).serve_forever()
PY
timeout 120 "$PY" "$LAB/tb.py" "$LAB/tb.sock" & GW_PIDS+=($!)
for _ in $(seq 100); do [ -S "$LAB/tb.sock" ] && break; sleep 0.05; done

start_gw G --toolbelt-socket "$LAB/tb.sock" || exit 1
start_gw N || exit 1
G=127.0.0.1:$G N=127.0.0.1:$N
name=toolbelt.cordon.internal

out=$(pcurl -x "http://$G" "http://$name/v1/x" 2>&1)
ok $([ "$out" = "toolbelt-here /v1/x" ]; echo $?) "plain HTTP for $name reaches the toolbelt socket ($out)"
out=$(pcurl -p -x "http://$G" "http://$name/v1/y" 2>&1)
ok $([ "$out" = "toolbelt-here /v1/y" ]; echo $?) "... and a CONNECT tunnel to it"
out=$(pcurl --socks5-hostname "$G" "http://$name/v1/z" 2>&1)
ok $([ "$out" = "toolbelt-here /v1/z" ]; echo $?) "... and SOCKS5"
code=$(pcurl -o /dev/null -w '%{http_code}' -x "http://$G" "http://$name:81/v1/x" 2>/dev/null)
ok $([ "$code" = 403 ]; echo $?) "another port of the name: 403"
code=$(pcurl -o /dev/null -w '%{http_code}' -x "http://$N" "http://$name/v1/x" 2>/dev/null)
ok $([ "$code" = 403 ] && grep -q "\"host\":\"$name\".*\"verdict\":\"deny\".*host not in network.allow" "$LAB/N.jsonl"; echo $?) \
	"without --toolbelt-socket the name is refused as not listed (the control)"
ok $(grep -q "\"host\":\"$name\".*\"verdict\":\"allow\".*\"reason\":\"toolbelt\"" "$LAB/G.jsonl"; echo $?) \
	"the toolbelt's connections are audited (reason toolbelt)"
stop_gw G
stop_gw N
tap_done
