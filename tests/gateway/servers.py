#!/usr/bin/env python3
"""servers.py: origin servers for cordon's gateway tests.

    servers.py KIND [--bind ADDR] [--port N] [--max-seconds S] [options]

KIND:
  http      serve --dir over HTTP/1.0 (python's SimpleHTTPRequestHandler);
            GET /echo-host answers "host=<Host header>" and the request
            line's target, so a test sees what the gateway forwarded;
            GET /echo-headers answers the target and every header line;
            POST answers "len=N sha256=HEX" for the body it received
            (Content-Length or chunked).
  tls       the same over TLS, with --cert and --key (PEM).
  echoclose read until the client's EOF, then answer "echo:" + what was
            read and close: a half-close must be passed through for the
            client to get an answer.
  record    accept, append one line "conn <peer>" to --log, close: proves
            whether anything dialled this address.
  keepalive an HTTP/1.1 origin that keeps every connection open whatever
            the request says (as an origin the sandbox runs may) and answers
            each request on it, pipelined ones too: "origin <port> request
            <n> <target>" (n counts requests on that connection); a target
            ending in /chunky gets that in three chunks and a trailer, and
            one ending in /unframed gets it with no length, then the
            close; HEAD gets the head alone; Expect: 100-continue gets a
            100 Continue before the body is read. Each
            request's head is appended to --log as received, then
            "body <len>", then "--". Bodies: Content-Length or chunked.
  echo      asyncio echo server for many connections: raises its own
            open-file soft limit to the hard limit first.
  source    on each connection, send up to --bytes (default 256 KiB) as
            fast as the peer takes it, never read, keep it open: with a
            client that does not read either, the gateway's relay stalls.
            Raises its open-file limit like echo.

Binds --bind (default 127.0.0.2; loopback only is accepted, unless
--isolated-netns: guard.t's throwaway network namespaces) on --port
(default 0: a free one) and prints the port alone on the first line of
stdout. Lives at most --max-seconds (default 300): SIGALRM ends it.
Python 3 standard library only.
"""

import argparse
import asyncio
import http.server
import ipaddress
import os
import resource
import selectors
import signal
import socket
import socketserver
import ssl
import sys
import threading


def loopback_only(addr):
    if not ipaddress.ip_address(addr).is_loopback:
        sys.exit(f"servers.py: {addr} is not a loopback address")


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        if self.path.startswith("/echo-headers"):
            body = ("target=%s\n" % self.path).encode()
            body += b"".join(b"%s: %s\n" % (k.encode(), v.encode())
                             for k, v in self.headers.items())
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path.startswith("/echo-host"):
            body = ("host=%s\ntarget=%s\n" % (self.headers.get("Host"),
                                              self.path)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def do_POST(self):
        """Answer with the length and sha256 of the body received."""
        import hashlib
        body = b""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        out = ("len=%d sha256=%s\n" % (len(body), hashlib.sha256(body).hexdigest())).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    address_family = socket.AF_INET
    allow_reuse_address = True
    request_queue_size = 128


def serve_http(args, tls):
    handler = lambda *a, **k: Handler(*a, directory=args.dir, **k)  # noqa: E731
    Server.address_family = family(args.bind)
    srv = Server((args.bind, args.port), handler)
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def listener(args, backlog=128):
    s = socket.socket(family(args.bind), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((args.bind, args.port))
    s.listen(backlog)
    print(s.getsockname()[1], flush=True)
    return s


def serve_echoclose(args):
    s = listener(args)

    def one(c):
        with c:
            c.settimeout(30)
            data = b""
            try:
                while True:
                    b = c.recv(65536)
                    if not b:
                        break
                    data += b
                c.sendall(b"echo:" + data)
            except OSError:
                pass

    while True:
        c, _ = s.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


def serve_record(args):
    s = listener(args)
    while True:
        c, peer = s.accept()
        with open(args.log, "a", encoding="utf-8") as f:
            f.write("conn %s:%d\n" % peer[:2])
        c.close()


def serve_keepalive(args):
    s = listener(args)
    port = s.getsockname()[1]
    lock = threading.Lock()

    def read_until(c, buf, sep):
        while sep not in buf:
            b = c.recv(65536)
            if not b:
                return None, buf
            buf += b
        i = buf.index(sep) + len(sep)
        return buf[:i], buf[i:]

    def read_n(c, buf, n):
        while len(buf) < n:
            b = c.recv(65536)
            if not b:
                return None, buf
            buf += b
        return buf[:n], buf[n:]

    def body_of(c, buf, head):
        lines = head.split(b"\r\n")
        hdr = {}
        for line in lines[1:]:
            if b":" in line:
                k, v = line.split(b":", 1)
                hdr[k.strip().lower()] = v.strip()
        if b"chunked" in hdr.get(b"transfer-encoding", b"").lower():
            body = b""
            while True:
                line, buf = read_until(c, buf, b"\r\n")
                if line is None:
                    return None, buf
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    while True:
                        line, buf = read_until(c, buf, b"\r\n")
                        if line in (None, b"\r\n"):
                            return (body if line else None), buf
                chunk, buf = read_n(c, buf, size + 2)
                if chunk is None:
                    return None, buf
                body += chunk[:size]
        return read_n(c, buf, int(hdr.get(b"content-length", b"0")))

    def one(c):
        buf, n = b"", 0
        with c:
            c.settimeout(30)
            try:
                while True:
                    head, buf = read_until(c, buf, b"\r\n\r\n")
                    if head is None:
                        return
                    if b"\r\nexpect: 100-continue\r\n" in head.lower():
                        c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                    body, buf = body_of(c, buf, head)
                    n += 1
                    with lock, open(args.log, "ab") as f:
                        f.write(head + b"body %d\n--\n" % (len(body or b"")))
                    if body is None:
                        return
                    target = head.split(b" ")[1] if head.count(b" ") >= 2 else b"?"
                    out = b"origin %d request %d %s\n" % (port, n, target)
                    common = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                              b"Keep-Alive: timeout=30\r\nConnection: keep-alive\r\n")
                    if head.startswith(b"HEAD "):
                        c.sendall(common + b"Content-Length: %d\r\n\r\n" % len(out))
                    elif target.endswith(b"/chunky"):
                        third = len(out) // 3
                        parts = [out[:third], out[third:2 * third], out[2 * third:]]
                        c.sendall(common + b"Transfer-Encoding: chunked\r\n\r\n" +
                                  b"".join(b"%x;x=y\r\n%s\r\n" % (len(q), q) for q in parts) +
                                  b"0\r\nX-Trailer: t\r\n\r\n")
                    elif target.endswith(b"/unframed"):
                        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + out)
                        return
                    else:
                        c.sendall(common + b"Content-Length: %d\r\n\r\n%s" % (len(out), out))
            except (OSError, ValueError):
                pass

    while True:
        c, _ = s.accept()
        threading.Thread(target=one, args=(c,), daemon=True).start()


def serve_echo(args):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    async def one(reader, writer):
        try:
            while True:
                b = await reader.read(65536)
                if not b:
                    break
                writer.write(b)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def main():
        s = listener(args, backlog=4096)
        srv = await asyncio.start_server(one, sock=s, backlog=4096)
        async with srv:
            await srv.serve_forever()

    asyncio.run(main())


def serve_source(args):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    s = listener(args, backlog=4096)
    s.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(s, selectors.EVENT_READ, None)
    chunk = b"s" * 16384
    held = []
    while True:
        for key, _ in sel.select():
            if key.data is None:
                while True:
                    try:
                        c, _ = s.accept()
                    except BlockingIOError:
                        break
                    c.setblocking(False)
                    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
                    sel.register(c, selectors.EVENT_WRITE, [0])
                continue
            c, left = key.fileobj, key.data
            try:
                while left[0] < args.bytes:
                    left[0] += c.send(chunk[:args.bytes - left[0]])
            except BlockingIOError:
                continue
            except OSError:
                pass
            sel.unregister(c)
            held.append(c)  # never read, never closed: the peer must wait


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=["http", "tls", "echoclose", "record", "echo", "source",
                                       "keepalive"])
    ap.add_argument("--bind", default="127.0.0.2")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--max-seconds", type=int, default=300)
    ap.add_argument("--dir", default=".")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--log")
    ap.add_argument("--bytes", type=int, default=256 * 1024)
    ap.add_argument("--isolated-netns", action="store_true",
                    help="allow a non-loopback --bind: only for a throwaway "
                    "network namespace with no route to the host's networks")
    args = ap.parse_args()
    if not args.isolated_netns:
        loopback_only(args.bind)
    signal.alarm(max(1, args.max_seconds))  # default action: the end
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    if args.kind in ("http", "tls"):
        serve_http(args, args.kind == "tls")
    elif args.kind == "echoclose":
        serve_echoclose(args)
    elif args.kind == "record":
        if not args.log:
            sys.exit("servers.py: record needs --log")
        serve_record(args)
    elif args.kind == "source":
        serve_source(args)
    elif args.kind == "keepalive":
        if not args.log:
            sys.exit("servers.py: keepalive needs --log")
        serve_keepalive(args)
    else:
        serve_echo(args)


if __name__ == "__main__":
    main()
