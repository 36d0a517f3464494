#!/usr/bin/env python3
"""Stand-in cgroup CPU counters for host tests: every 10 ms, rewrite each
DIR/cpu.stat so that usage_usec = RATE_MCPU x seconds since start, until
STOPFILE exists. Usage: fakecpu.py STOPFILE DIR=RATE_MCPU...

It asks for a real-time priority (SCHED_FIFO 1, where allowed): a writer
starved by host load (a package build beside the test) writes late and
then catches up, and a reader sees a rate spike that was never there."""
import os
import sys
import time

stop, pairs = sys.argv[1], [a.rsplit("=", 1) for a in sys.argv[2:]]
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
except OSError:
    pass  # not root: the counters may lag under load
t0 = time.monotonic()
while not os.path.exists(stop):
    dt = time.monotonic() - t0
    for d, rate in pairs:
        tmp = os.path.join(d, "cpu.stat.tmp")
        with open(tmp, "w") as f:
            f.write("usage_usec %d\nuser_usec 0\nsystem_usec 0\n" % int(dt * int(rate) * 1000))
        os.replace(tmp, os.path.join(d, "cpu.stat"))  # a reader never sees half a file
    time.sleep(0.01)
