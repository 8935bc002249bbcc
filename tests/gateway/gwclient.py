#!/usr/bin/env python3
"""gwclient.py: clients for cordon's gateway tests, each bounded in time.

    gwclient.py raw PROXY (--data BYTES | --file F) [--half-close] [--wait S]
        Send bytes (python escapes: \\r \\n \\x00 ...) to PROXY (host:port
        or unix:PATH),
        read until the gateway closes or --wait seconds (default 10) pass.
        Prints: closed=yes|no, status=N (HTTP), refused=<X-Cordon-Refused>,
        body=<body on one line>, hex=<the first 64 bytes>, len=N,
        text=<all of it on one line>.
    gwclient.py socks PROXY --addr A [--atyp 1|3|4] [--cmd N] --port P
                [--send BYTES] [--half-close] [--methods HEX]
                [--user U --password P]
        SOCKS5 greeting (offering --methods, default 00: no
        authentication), then a request; prints method=XX, reply=XX; with
        --send, sends it after a success, reads to the end and prints
        data=<what came back>. When the gateway picks username/password
        (02), sends --user and --password (RFC 1929) and prints auth=XX
        (the status), and closed=yes|no when it is not 00.
        --addr-hex gives a name's bytes in hex (a NUL inside, say).
    gwclient.py flood PROXY --n N [--data BYTES]
        N connections one after another, each sending --data (default an
        absolute-form GET) and reading to the end; prints n=, and
        status_<code>= for the HTTP statuses seen (status_none: no answer).
    gwclient.py halfclose PROXY TARGET [--send BYTES]
        CONNECT TARGET, send, shutdown(SHUT_WR), read to the end; prints
        status=N and reply=<what came back>.
    gwclient.py slow PROXY --url URL [--n 500] [--seconds 5] [--wait-close S]
        N connections each sending one byte of a request head about every
        second for --seconds while one normal GET of URL goes through the
        proxy; prints opened=, good_status=, and with --wait-close, how
        many of the slow ones the gateway closed within that bound.
    gwclient.py many PROXY TARGET [--n 9000] [--hold-file F] [--hold S]
        N concurrent CONNECT tunnels to an echo server at TARGET, one
        message echoed on each; once all are up prints "holding" and waits
        for F to exist (at most --hold seconds) before closing them all;
        prints established=, echoed=, errors=.
    gwclient.py stall PROXY TARGET [--n 5000] [--hold-file F] [--hold S]
        N concurrent CONNECT tunnels to TARGET (servers.py source) that
        never read past the 200 (a tiny receive buffer): the gateway's
        relay towards them stalls. Once all are up prints "holding" and
        waits for F (at most --hold seconds), then closes them all; prints
        established=, errors=.
Python 3 standard library only.
"""

import argparse
import asyncio
import codecs
import os
import resource
import select
import socket
import struct
import sys
import threading
import time


def unescape(s):
    return codecs.escape_decode(s.encode())[0]


def hostport(s):
    h, _, p = s.rpartition(":")
    return h.strip("[]"), int(p)


def connect(proxy, timeout=10):
    """host:port, or unix:PATH."""
    if proxy.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(proxy[5:])
        return s
    return socket.create_connection(hostport(proxy), timeout=timeout)


def read_all(s, wait):
    """Read until EOF or wait seconds; (data, closed)."""
    end = time.monotonic() + wait
    data = b""
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return data, False
        r, _, _ = select.select([s], [], [], left)
        if not r:
            return data, False
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            return data, True
        except OSError:
            return data, True
        if not b:
            return data, True
        data += b


def report_http(data, closed):
    print("closed=%s" % ("yes" if closed else "no"))
    print("len=%d" % len(data))
    print("hex=%s" % data[:64].hex())
    print("text=%s" % "".join(chr(b) if 32 <= b < 127 else "\\x%02x" % b for b in data))
    head, sep, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if lines and lines[0].startswith(b"HTTP/"):
        parts = lines[0].split(b" ")
        if len(parts) > 1:
            print("status=%s" % parts[1].decode("ascii", "replace"))
        for ln in lines[1:]:
            k, _, v = ln.partition(b":")
            if k.strip().lower() == b"x-cordon-refused":
                print("refused=%s" % v.strip().decode("ascii", "replace"))
        print("body=%s" % body.decode("utf-8", "replace").replace("\n", "\\n"))


def cmd_raw(a):
    data = unescape(a.data) if a.data is not None else open(a.file, "rb").read()
    s = connect(a.proxy)
    try:
        s.sendall(data)
    except OSError:
        pass
    if a.half_close:
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    got, closed = read_all(s, a.wait)
    s.close()
    report_http(got, closed)


def recv_exact(s, n, wait=10):
    end = time.monotonic() + wait
    data = b""
    while len(data) < n and time.monotonic() < end:
        r, _, _ = select.select([s], [], [], max(0, end - time.monotonic()))
        if not r:
            break
        b = s.recv(n - len(data))
        if not b:
            break
        data += b
    return data


def cmd_socks(a):
    s = connect(a.proxy)
    methods = bytes.fromhex(a.methods)
    s.sendall(bytes([5, len(methods)]) + methods)
    g = recv_exact(s, 2)
    print("method=%s" % (g[1:2].hex() if len(g) == 2 else "none"))
    if g == b"\x05\x02" and a.user is not None:
        u, p = a.user.encode(), a.password.encode()
        s.sendall(bytes([1, len(u)]) + u + bytes([len(p)]) + p)
        st = recv_exact(s, 2)
        print("auth=%s" % (st[1:2].hex() if len(st) == 2 else "none"))
        if st != b"\x01\x00":
            _, closed = read_all(s, 5)
            print("closed=%s" % ("yes" if closed else "no"))
            return
    elif g != b"\x05\x00":
        _, closed = read_all(s, 5)
        print("closed=%s" % ("yes" if closed else "no"))
        return
    if a.atyp == 1:
        addr = socket.inet_pton(socket.AF_INET, a.addr)
    elif a.atyp == 4:
        addr = socket.inet_pton(socket.AF_INET6, a.addr)
    else:
        name = bytes.fromhex(a.addr_hex) if a.addr_hex else a.addr.encode()
        addr = bytes([len(name)]) + name
    s.sendall(bytes([5, a.cmd, 0, a.atyp]) + addr + struct.pack("!H", a.port))
    rep = recv_exact(s, 10)
    print("reply=%s" % (rep[1:2].hex() if len(rep) >= 2 else "none"))
    if len(rep) == 10 and rep[1] == 0 and a.send is not None:
        s.sendall(unescape(a.send))
        if a.half_close:
            s.shutdown(socket.SHUT_WR)
        data, closed = read_all(s, 10)
        print("data=%s" % data.decode("utf-8", "replace").replace("\n", "\\n"))
    else:
        _, closed = read_all(s, 5)
        print("closed=%s" % ("yes" if closed else "no"))
    s.close()


def cmd_flood(a):
    data = unescape(a.data)
    seen = {}
    for _ in range(a.n):
        try:
            s = connect(a.proxy)
            try:
                s.sendall(data)
            except OSError:
                pass
            got, _ = read_all(s, 5)
            s.close()
        except OSError:
            got = b""
        parts = got.split(b" ")
        code = parts[1].decode("ascii", "replace") if got.startswith(b"HTTP/") and len(parts) > 1 else "none"
        seen[code] = seen.get(code, 0) + 1
    print("n=%d" % a.n)
    for k, v in sorted(seen.items()):
        print("status_%s=%d" % (k, v))


def read_head(s, wait=10):
    data = b""
    end = time.monotonic() + wait
    while b"\r\n\r\n" not in data and time.monotonic() < end:
        r, _, _ = select.select([s], [], [], max(0, end - time.monotonic()))
        if not r:
            break
        b = s.recv(1)  # byte by byte: nothing of the tunnel is taken
        if not b:
            break
        data += b
    return data


def cmd_halfclose(a):
    s = connect(a.proxy)
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (a.target.encode(), a.target.encode()))
    head = read_head(s)
    parts = head.split(b" ")
    print("status=%s" % (parts[1].decode() if len(parts) > 1 else "none"))
    if not head.startswith(b"HTTP/1.1 200"):
        return
    s.sendall(unescape(a.send))
    s.shutdown(socket.SHUT_WR)
    data, closed = read_all(s, 10)
    print("reply=%s" % data.decode("utf-8", "replace"))
    print("closed=%s" % ("yes" if closed else "no"))
    s.close()


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def cmd_slow(a):
    raise_nofile()
    host = a.url.split("/")[2]
    head = (b"GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: slow\r\n\r\n"
            % (a.url.encode(), host.encode()))
    socks = []
    for _ in range(a.n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(hostport(a.proxy))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        socks.append(s)
    print("opened=%d" % len(socks), flush=True)
    good = {}

    def normal():
        time.sleep(1.5)
        try:
            c = connect(a.proxy)
            c.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                      % (a.url.encode(), host.encode()))
            data, _ = read_all(c, 10)
            c.close()
            good["status"] = data.split(b" ")[1].decode() if b" " in data else "none"
        except OSError as e:
            good["status"] = "error:%s" % e

    t = threading.Thread(target=normal)
    t.start()
    end = time.monotonic() + a.seconds
    i = 0
    gone = set()
    while time.monotonic() < end and i < len(head) - 2:
        for s in socks:
            if s in gone:
                continue
            try:
                s.send(head[i:i + 1])
            except OSError:
                gone.add(s)
        i += 1
        time.sleep(1)
    t.join(15)
    print("sent_bytes=%d" % i)
    print("good_status=%s" % good.get("status", "none"))
    if a.wait_close:
        end = time.monotonic() + a.wait_close
        open_ = [s for s in socks if s not in gone]
        closed = len(gone)
        while open_ and time.monotonic() < end:
            r, _, _ = select.select(open_, [], [], 1)
            for s in r:
                try:
                    b = s.recv(4096)
                except OSError:
                    b = b""
                if not b:
                    closed += 1
                    open_.remove(s)
        print("closed_by_gateway=%d" % closed)
    for s in socks:
        s.close()


def cmd_many(a):
    raise_nofile()
    host, port = hostport(a.proxy)
    stats = {"established": 0, "echoed": 0, "errors": 0}
    errs = {}
    all_up = asyncio.Event()
    release = asyncio.Event()
    gate = asyncio.Semaphore(256)  # connects in flight: under the backlog
    done = [0]

    def finish_one():
        done[0] += 1
        if done[0] == a.n:
            all_up.set()

    async def one(i):
        w = None
        try:
            async with gate:
                r, w = await asyncio.open_connection(host, port)
                w.write(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (a.target.encode(), a.target.encode()))
                h = await r.readuntil(b"\r\n\r\n")
            if not h.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(h.split(b"\r\n")[0].decode())
            stats["established"] += 1
            msg = b"tunnel %d\n" % i
            w.write(msg)
            got = await r.readexactly(len(msg))
            if got != msg:
                raise RuntimeError("echo mismatch")
            stats["echoed"] += 1
        except Exception as e:  # noqa: BLE001 (counted and shown)
            stats["errors"] += 1
            k = type(e).__name__ + ":" + str(e)[:60]
            errs[k] = errs.get(k, 0) + 1
        finish_one()
        await release.wait()
        if w:
            w.close()

    async def hold():
        await all_up.wait()
        print("holding established=%d" % stats["established"], flush=True)
        end = time.monotonic() + a.hold
        while time.monotonic() < end and not (a.hold_file and os.path.exists(a.hold_file)):
            await asyncio.sleep(0.2)
        release.set()

    async def main():
        tasks = [asyncio.create_task(one(i)) for i in range(a.n)]
        await asyncio.wait_for(asyncio.gather(hold(), *tasks), a.limit)

    try:
        asyncio.run(main())
    except asyncio.TimeoutError:
        print("timeout=yes")
    for k, v in stats.items():
        print("%s=%d" % (k, v))
    for k, v in sorted(errs.items(), key=lambda kv: -kv[1])[:5]:
        print("error %d x %s" % (v, k))


def cmd_stall(a):
    raise_nofile()
    host, port = hostport(a.proxy)
    stats = {"established": 0, "errors": 0}
    errs = {}
    held = []

    async def one(i, gate):
        loop = asyncio.get_running_loop()
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setblocking(False)
        try:
            async with gate:
                await loop.sock_connect(s, (host, port))
                await loop.sock_sendall(s, b"CONNECT %s HTTP/1.1\r\n\r\n" % a.target.encode())
                head = b""
                while b"\r\n\r\n" not in head:
                    b = await asyncio.wait_for(loop.sock_recv(s, 1), 30)
                    if not b:
                        raise RuntimeError("closed before the answer")
                    head += b
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(head.split(b"\r\n")[0].decode())
            stats["established"] += 1
            held.append(s)  # never read again
        except Exception as e:  # noqa: BLE001 (counted and shown)
            stats["errors"] += 1
            k = type(e).__name__ + ":" + str(e)[:60]
            errs[k] = errs.get(k, 0) + 1
            s.close()

    async def main():
        gate = asyncio.Semaphore(256)
        await asyncio.gather(*[one(i, gate) for i in range(a.n)])
        print("holding established=%d" % stats["established"], flush=True)
        end = time.monotonic() + a.hold
        while time.monotonic() < end and not (a.hold_file and os.path.exists(a.hold_file)):
            await asyncio.sleep(0.2)

    try:
        asyncio.run(asyncio.wait_for(main(), a.limit))
    except asyncio.TimeoutError:
        print("timeout=yes")
    for s in held:
        s.close()
    for k, v in stats.items():
        print("%s=%d" % (k, v))
    for k, v in sorted(errs.items(), key=lambda kv: -kv[1])[:5]:
        print("error %d x %s" % (v, k))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="sub", required=True)
    p = sub.add_parser("raw")
    p.add_argument("proxy")
    p.add_argument("--data")
    p.add_argument("--file")
    p.add_argument("--half-close", action="store_true")
    p.add_argument("--wait", type=float, default=10)
    p = sub.add_parser("socks")
    p.add_argument("proxy")
    p.add_argument("--addr", default="")
    p.add_argument("--addr-hex")
    p.add_argument("--atyp", type=int, default=3)
    p.add_argument("--cmd", type=int, default=1)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--send")
    p.add_argument("--half-close", action="store_true")
    p.add_argument("--methods", default="00")
    p.add_argument("--user")
    p.add_argument("--password")
    p = sub.add_parser("flood")
    p.add_argument("proxy")
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--data", default="GET http://127.0.0.2:9/ HTTP/1.1\\r\\n\\r\\n")
    p = sub.add_parser("halfclose")
    p.add_argument("proxy")
    p.add_argument("target")
    p.add_argument("--send", default="ping")
    p = sub.add_parser("slow")
    p.add_argument("proxy")
    p.add_argument("--url", required=True)
    p.add_argument("--n", type=int, default=500)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--wait-close", type=float, default=0)
    p = sub.add_parser("many")
    p.add_argument("proxy")
    p.add_argument("target")
    p.add_argument("--n", type=int, default=9000)
    p.add_argument("--hold-file")
    p.add_argument("--hold", type=float, default=30)
    p.add_argument("--limit", type=float, default=120)
    p = sub.add_parser("stall")
    p.add_argument("proxy")
    p.add_argument("target")
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--hold-file")
    p.add_argument("--hold", type=float, default=30)
    p.add_argument("--limit", type=float, default=120)
    a = ap.parse_args()
    try:
        {"raw": cmd_raw, "socks": cmd_socks, "halfclose": cmd_halfclose,
         "slow": cmd_slow, "many": cmd_many, "stall": cmd_stall,
         "flood": cmd_flood}[a.sub](a)
    except OSError as e:
        print("error=%s" % e)
        sys.exit(3)


if __name__ == "__main__":
    main()
