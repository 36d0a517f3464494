#!/usr/bin/env python3
# Poll tidemarkd's /metrics once a second until an ONLINE cgroup's run-queue
# wait is back near its baseline (not interfered, value <= max(1.5 x
# baseline, baseline + 50 us)) for N samples in a row. One process for the
# whole wait: a python start per sample is slow under load in the VM.
#
#   tests/ifwait.py CGROUP [--timeout S] [--need N] [--url URL] [--baseline US]
# Exit 0 when reached, 1 on timeout. Prints one line per sample.
import argparse
import sys
import time
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("cgroup")
ap.add_argument("--timeout", type=float, default=40)
ap.add_argument("--need", type=int, default=5)
ap.add_argument("--url", default="http://127.0.0.1:9477/metrics")
ap.add_argument("--baseline", type=float, help="judge against this (us), not the daemon's")
a = ap.parse_args()


def sample():
    t = urllib.request.urlopen(a.url, timeout=5).read().decode()
    lab = 'cgroup="%s"' % a.cgroup
    got = {}
    for l in t.splitlines():
        if lab not in l:
            continue
        name = l.split("{")[0]
        if name in ("tidemark_interference_signal", "tidemark_interference_baseline") \
                and 'signal="rq_wait_us"' not in l:
            continue
        got[name] = float(l.split()[-1])
    return (got.get("tidemark_interference_signal"), got.get("tidemark_interference_baseline"),
            got.get("tidemark_interference_interfered"))


end = time.monotonic() + a.timeout
run = 0
while time.monotonic() < end:
    try:
        v, b, f = sample()
    except OSError as e:
        print("# metrics: %s" % e)
        v = b = f = None
    if a.baseline is not None:
        b = a.baseline
    good = v is not None and b is not None and f == 0 and v <= max(1.5 * b, b + 50)
    run = run + 1 if good else 0
    print("# rq_wait %s us, baseline %s us, interfered %s%s" % (v, b, f, " (ok %d)" % run if good else ""))
    sys.stdout.flush()
    if run >= a.need:
        sys.exit(0)
    time.sleep(1)
sys.exit(1)
