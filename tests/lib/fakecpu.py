#!/usr/bin/env python3
"""Stand-in cgroup CPU counters for host tests: every 50 ms, rewrite each
DIR/cpu.stat so that usage_usec = RATE_MCPU x seconds since start, until
STOPFILE exists. Usage: fakecpu.py STOPFILE DIR=RATE_MCPU..."""
import os
import sys
import time

stop, pairs = sys.argv[1], [a.rsplit("=", 1) for a in sys.argv[2:]]
t0 = time.monotonic()
while not os.path.exists(stop):
    dt = time.monotonic() - t0
    for d, rate in pairs:
        tmp = os.path.join(d, "cpu.stat.tmp")
        with open(tmp, "w") as f:
            f.write("usage_usec %d\nuser_usec 0\nsystem_usec 0\n" % int(dt * int(rate) * 1000))
        os.replace(tmp, os.path.join(d, "cpu.stat"))  # a reader never sees half a file
    time.sleep(0.05)
