#!/usr/bin/env python3
# Print the CLOCK_REALTIME time at which node memory used (MemTotal -
# MemAvailable) first reaches PCT %, sampled every 10 ms; nothing if it does
# not within SECONDS.
#   tests/lib/memwatch.py --pct PCT --seconds S
import argparse
import time


def used_pct():
    t = a = 0
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split()[:2]
            if k == "MemTotal:":
                t = int(v)
            elif k == "MemAvailable:":
                a = int(v)
    return (t - a) * 100 // t


ap = argparse.ArgumentParser()
ap.add_argument("--pct", type=int, required=True)
ap.add_argument("--seconds", type=float, required=True)
a = ap.parse_args()
end = time.monotonic() + a.seconds
while time.monotonic() < end:
    if used_pct() >= a.pct:
        print("%.3f" % time.time())
        break
    time.sleep(0.01)
