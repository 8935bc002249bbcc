#!/usr/bin/env python3
"""dnsserver.py: a small authoritative DNS server for cordon's tests.

Serves a fixed zone over UDP and TCP on 127.0.0.1: A and AAAA queries are
answered from the zone (only the addresses of the asked family; none of it
is NODATA), unknown names get NXDOMAIN, anything malformed is dropped. No
compression is read in queries (clients do not compress a lone question).

Zone: --zone FILE, a JSON object {"name": ["1.2.3.4", "2001:db8::1"], ...},
and/or --record name=addr[,addr...] (repeatable). A key "*.suffix" matches
any name under suffix; "*" matches every name nothing else does.

--port 0 picks a free port; the port is printed alone on the first line of
stdout. --log FILE appends "name type" for every query (tests check what
reached DNS). --drop name/TYPE (A or AAAA, repeatable) leaves those
queries unanswered, as a server that lost them. Stops on SIGTERM or SIGINT and after --max-seconds (default
300) by itself. Python 3 standard library only.
"""

import argparse
import ipaddress
import json
import selectors
import signal
import socket
import struct
import sys
import time

T_A, T_AAAA = 1, 28
RCODE_OK, RCODE_FORMERR, RCODE_NXDOMAIN, RCODE_NOTIMP = 0, 1, 3, 4


class Stop(Exception):
    pass


def load_zone(args):
    zone = {}
    if args.zone:
        with open(args.zone, encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, dict):
            sys.exit("dnsserver: the zone file must hold a JSON object")
        for name, addrs in data.items():
            zone[norm(name)] = [ipaddress.ip_address(a) for a in addrs]
    for rec in args.record or []:
        name, _, addrs = rec.partition("=")
        zone[norm(name)] = [ipaddress.ip_address(a)
                            for a in addrs.split(",") if a]
    return zone


def norm(name):
    return name.strip().rstrip(".").lower()


def lookup(zone, name):
    """The addresses for name, or None when the name does not exist."""
    if name in zone:
        return zone[name]
    labels = name.split(".")
    for i in range(1, len(labels)):
        key = "*." + ".".join(labels[i:])
        if key in zone:
            return zone[key]
    return zone.get("*")


def parse_question(msg):
    """(id, flags, qname bytes, name, qtype, qclass) or None."""
    if len(msg) < 12:
        return None
    qid, flags, qdcount = struct.unpack("!HHH", msg[:6])
    if flags & 0x8000 or qdcount != 1:
        return None
    pos, labels = 12, []
    while True:
        if pos >= len(msg):
            return None
        n = msg[pos]
        if n & 0xC0:
            return None  # compression in a query: not handled
        pos += 1
        if n == 0:
            break
        if pos + n > len(msg):
            return None
        labels.append(msg[pos:pos + n].decode("ascii", "replace"))
        pos += n
    if pos + 4 > len(msg):
        return None
    qtype, qclass = struct.unpack("!HH", msg[pos:pos + 4])
    return qid, flags, msg[12:pos + 4], norm(".".join(labels)), qtype, qclass


def answer(zone, msg, log, drop, udp_limit=None):
    q = parse_question(msg)
    if q is None:
        return None
    qid, qflags, question, name, qtype, _ = q
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{name} {qtype}\n")
    if (name, qtype) in drop:
        return None
    rcode, rrs = RCODE_OK, []
    if (qflags >> 11) & 0xF:
        rcode = RCODE_NOTIMP
    else:
        addrs = lookup(zone, name)
        if addrs is None:
            rcode = RCODE_NXDOMAIN
        else:
            want = {T_A: 4, T_AAAA: 6}.get(qtype)
            for a in addrs:
                if a.version == want:
                    data = a.packed
                    # name: a pointer to the question's name at offset 12
                    rrs.append(struct.pack("!HHHIH", 0xC00C, qtype, 1, 60,
                                           len(data)) + data)
    # QR, AA, RA; opcode and RD copied from the query
    flags = 0x8000 | (qflags & 0x7800) | 0x0400 | (qflags & 0x0100) | 0x0080
    flags |= rcode
    size = 12 + len(question) + sum(len(rr) for rr in rrs)
    if udp_limit and size > udp_limit:
        flags |= 0x0200  # TC, no EDNS here: the client asks again on TCP
        rrs = []
    head = struct.pack("!HHHHHH", qid, flags, 1, len(rrs), 0, 0)
    return head + question + b"".join(rrs)


def bind_pair(port):
    """A UDP and a TCP socket on 127.0.0.1, on the same port."""
    for _ in range(50):
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", port))
        got = udp.getsockname()[1]
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind(("127.0.0.1", got))
        except OSError:
            udp.close()
            tcp.close()
            if port:
                raise
            continue
        tcp.listen(16)
        return udp, tcp
    sys.exit("dnsserver: no free port for both UDP and TCP")


def serve(zone, udp, tcp, deadline, log, drop):
    sel = selectors.DefaultSelector()
    sel.register(udp, selectors.EVENT_READ, "udp")
    sel.register(tcp, selectors.EVENT_READ, "listen")
    bufs = {}
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        for key, _ in sel.select(min(left, 1.0)):
            kind, sock = key.data, key.fileobj
            if kind == "udp":
                try:
                    msg, peer = sock.recvfrom(65535)
                except OSError:
                    continue
                reply = answer(zone, msg, log, drop, udp_limit=512)
                if reply is not None:
                    sock.sendto(reply, peer)
            elif kind == "listen":
                try:
                    conn, _ = sock.accept()
                except OSError:
                    continue
                conn.setblocking(False)
                bufs[conn] = b""
                sel.register(conn, selectors.EVENT_READ, "tcp")
            else:
                try:
                    data = sock.recv(65535)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(sock)
                    del bufs[sock]
                    sock.close()
                    continue
                buf = bufs[sock] + data
                while len(buf) >= 2:
                    n = struct.unpack("!H", buf[:2])[0]
                    if len(buf) < 2 + n:
                        break
                    reply = answer(zone, buf[2:2 + n], log, drop)
                    buf = buf[2 + n:]
                    if reply is not None:
                        sock.setblocking(True)
                        sock.sendall(struct.pack("!H", len(reply)) + reply)
                        sock.setblocking(False)
                bufs[sock] = buf


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--zone")
    ap.add_argument("--record", action="append")
    ap.add_argument("--log")
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--max-seconds", type=float, default=300.0)
    args = ap.parse_args()

    def stop(signum, frame):
        raise Stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    zone = load_zone(args)
    drop = set()
    for d in args.drop:
        name, _, qtype = d.rpartition("/")
        if qtype not in ("A", "AAAA"):
            sys.exit(f"dnsserver: --drop {d}: want name/A or name/AAAA")
        drop.add((norm(name), T_A if qtype == "A" else T_AAAA))
    udp, tcp = bind_pair(args.port)
    print(udp.getsockname()[1], flush=True)
    try:
        serve(zone, udp, tcp, time.monotonic() + args.max_seconds, args.log,
              drop)
    except Stop:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
