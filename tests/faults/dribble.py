#!/usr/bin/env python3
"""Slow clients of a unix socket, for tests/faults/clients.t.

dribble.py SOCKET PROCS CONNS SECONDS: PROCS processes, each opening CONNS
connections and sending one byte of a request head on each every second
(a head that never ends), for SECONDS. Prints, once all are done:
"opened=N cut_early=N cut=N held=N" (cut: the server ended the
connection, early: within the first 5 seconds; held: still open at the
end)."""
import os, socket, sys, time, select

path, procs, conns, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
HEAD = b"GET /v1/jobs HTTP/1.1\r\nHost: cordon\r\nX-Slow: " + b"a" * 4096


def one(w):
    alive_round = [0]  # the next whole second a byte goes out
    socks = []
    for _ in range(conns):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
        except OSError:
            s.close()
            continue
        s.setblocking(False)
        socks.append(s)
    opened, early, cut = len(socks), 0, 0
    alive = {s: 0 for s in socks}
    t0 = time.monotonic()
    while alive and time.monotonic() - t0 < secs:
        # what the server ended since the last round
        r, _, _ = select.select(list(alive), [], [], 0.5)
        for s in r:
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                cut += 1
                early += time.monotonic() - t0 < 5
                del alive[s]
                s.close()
        if time.monotonic() - t0 < alive_round[0]:
            continue
        alive_round[0] += 1
        for s in list(alive):
            try:
                s.send(HEAD[alive[s]:alive[s] + 1])
                alive[s] += 1
            except OSError:
                cut += 1
                early += time.monotonic() - t0 < 5
                del alive[s]
                s.close()
    os.write(w, f"{opened} {early} {cut} {len(alive)}\n".encode())
    os._exit(0)


r, w = os.pipe()
kids = []
for _ in range(procs):
    pid = os.fork()
    if pid == 0:
        os.close(r)
        one(w)
    kids.append(pid)
os.close(w)
for pid in kids:
    os.waitpid(pid, 0)
tot = [0, 0, 0, 0]
for line in os.fdopen(r).read().split("\n"):
    if line:
        for i, v in enumerate(line.split()):
            tot[i] += int(v)
print("opened=%d cut_early=%d cut=%d held=%d" % tuple(tot))
