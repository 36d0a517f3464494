#!/usr/bin/env python3
# Share of the node used by cgroups, from their cpu.stat usage_usec, sampled
# until a stop file appears: one line per sample,
#
#   <wall-clock s> <interval s> <share % of NAME1> <share % of NAME2> ...
#
#   tests/lib/cgsample.py --interval S --stop FILE [--usec] NAME=PATH [NAME=PATH ...]
#
# --usec: "<CLOCK_MONOTONIC s> <usage_usec of NAME1> ...", the counters
# themselves, to be read at the times of another record on that clock
# (tidemarkctl trace's span).
# PATH is under /sys/fs/cgroup. A cgroup that cannot be read (gone, or no
# cpu controller) ends the sampler with exit 2 and a message naming it: read
# as 0 it made a cap or a line look held. The
# interval is measured (monotonic), so a late sample is weighed by its own
# length; a window's share is the interval-weighted mean of its samples.
import argparse
import os
import sys
import time


def usage(path):
    f = f"/sys/fs/cgroup/{path}/cpu.stat"
    try:
        with open(f) as fh:
            key, val = fh.readline().split()
        if key != "usage_usec":
            raise ValueError(f"first field {key}, not usage_usec")
        return int(val)
    except (OSError, ValueError) as e:
        print(f"cgsample.py: cannot read {f}: {e}", file=sys.stderr, flush=True)
        sys.exit(2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--stop", required=True)
    ap.add_argument("--usec", action="store_true")
    ap.add_argument("cgroups", nargs="+", metavar="NAME=PATH")
    a = ap.parse_args()
    paths = []
    for spec in a.cgroups:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            sys.exit(f"cgsample.py: want NAME=PATH, got '{spec}'")
        paths.append(path)
    n = os.cpu_count()
    prev, t0 = [usage(p) for p in paths], time.monotonic()
    while not os.path.exists(a.stop):
        time.sleep(a.interval)
        cur, t = [usage(p) for p in paths], time.monotonic()
        if a.usec:
            print("%.6f %s" % (t, " ".join(map(str, cur))), flush=True)
            continue
        dt = t - t0
        shares = " ".join("%.2f" % (100 * max(0, c - p) / (dt * 1e6 * n)) for c, p in zip(cur, prev))
        print("%.3f %.4f %s" % (time.clock_gettime(time.CLOCK_REALTIME), dt, shares), flush=True)
        prev, t0 = cur, t


if __name__ == "__main__":
    main()
