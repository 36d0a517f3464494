#!/usr/bin/env python3
# A stand-in for systemd's notification socket: binds a datagram socket at
# PATH and prints each message it receives (newlines as '|'), with the
# seconds since it started, until killed or after SECONDS.
#
#   tests/lib/notifysock.py PATH SECONDS
import os
import socket
import sys
import time

path, limit = sys.argv[1], float(sys.argv[2])
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
t0 = time.monotonic()
while True:
    left = limit - (time.monotonic() - t0)
    if left <= 0:
        break
    s.settimeout(left)
    try:
        msg = s.recv(4096)
    except socket.timeout:
        break
    print(f"{time.monotonic() - t0:.3f} {msg.decode(errors='replace').strip().replace(chr(10), '|')}",
          flush=True)
