#!/usr/bin/env python3
# Slow HTTP clients against a report endpoint (the "slowloris" shape): opens
# N connections from source address SRC, sends the start of a request and
# then one header byte per second, never finishing it. Prints one JSON line
# when done: how many connections were accepted, how many the server closed
# and the longest time one of them stayed open.
#
#   tests/lib/slowclient.py HOST PORT SRC N SECONDS
import json
import socket
import sys
import time

host, port, src, n, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
conns = []
t0 = time.monotonic()
for _ in range(n):
    s = socket.socket()
    s.bind((src, 0))
    try:
        s.connect((host, port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    except OSError:
        s.close()
        continue
    s.setblocking(False)
    conns.append({"s": s, "at": time.monotonic(), "closed": None})
print(json.dumps({"opened": len(conns)}), flush=True)
while time.monotonic() - t0 < secs:
    for c in conns:
        if c["closed"] is not None:
            continue
        try:
            c["s"].send(b"X")
            if c["s"].recv(4096) == b"":
                c["closed"] = time.monotonic()
        except BlockingIOError:
            pass
        except OSError:
            c["closed"] = time.monotonic()
    time.sleep(1.0)
end = time.monotonic()
life = [((c["closed"] or end) - c["at"]) for c in conns]
print(json.dumps({
    "opened": len(conns),
    "closed_by_server": sum(1 for c in conns if c["closed"] is not None),
    "max_open_s": round(max(life) if life else 0, 2),
}), flush=True)
