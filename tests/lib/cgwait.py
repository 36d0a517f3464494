#!/usr/bin/env python3
# Mean run-queue wait of an ONLINE cgroup between two points of a
# scx_tidemark --stats --json log, from the scheduler's own cumulative
# per-cgroup histograms (log2 us buckets): no process of ours runs during
# the window being measured.
#
#   tests/lib/cgwait.py LOG FROM_LINE TO_LINE CGROUP   -> "MEAN_US N"
# MEAN_US: mean of all but the slowest 1% of the N waits (bucket midpoints).
# FROM_LINE/TO_LINE: line counts of LOG taken at the two points (wc -l).
import json
import sys

log, a, b, cg = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
lines = open(log).read().splitlines()


def hist_at(n):
    """The last stats line at or before line n: the cgroup's histogram."""
    for l in reversed(lines[:n]):
        if l.startswith("{"):
            d = json.loads(l)
            for c in d.get("online_cgroups", []):
                if c["cgroup"] == cg:
                    return c["wait_hist_log2_us"]
            return None
    return None


h0, h1 = hist_at(a), hist_at(b)
if h1 is None:
    print("nan 0")
    sys.exit(1)
h0 = h0 or [0] * len(h1)
counts = [y - x for x, y in zip(h0, h1)]
total = sum(counts)
# the slowest 1% left out: one stray stall (the loader's rescan, a timer)
# moves a 10 s mean by tens of us and says nothing about the antagonist
drop = total // 100
for k in range(len(counts) - 1, -1, -1):
    d = min(drop, counts[k])
    counts[k] -= d
    drop -= d
n = s = 0
for k, c in enumerate(counts):
    mid = 0.75 * (1 << k) if k else 0.5
    n += c
    s += c * mid
print("%.1f %d" % (s / n if n else float("nan"), total))
