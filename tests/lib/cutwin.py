#!/usr/bin/env python3
# The windows of a busywin.py --series that lie inside a load's own run.
#
#   tests/lib/cutwin.py SERIES LOAD_JSON|- [--skip-s S] [--line PCT] [--min N]
#                       [--group K] [--keep]
#
# SERIES: busywin.py --clock mono --series (windows from "start_s" on
# CLOCK_MONOTONIC); LOAD_JSON: the load's own result with its span on that
# clock ("start_s", "end_s": tm-svc --json). Kept: the windows wholly inside
# [start_s + S, end_s] (S default 1: the load's threads starting, its
# buffers faulted in). Prints one JSON object over them:
#   {"window_ms", "windows", "node": {"mean", "p50", "p95", "p99", "max"},
#    NAME: {"mean", "p99"} for each name of the series, with --line:
#    "line", "over_line_2": the share of windows more than 2 points above}
# LOAD_JSON "-": every window kept, on whatever clock (a load that gives
# no span). --group K: each K consecutive windows kept made one (their mean;
# a last group short of K dropped), before anything is summed. --keep: the
# windows themselves too, as "series": {"window_ms", "t_s": each window's
# start from the first one's, "node": [...], NAME: [...]}, for a picture.
# Fewer than N windows kept (default 20), or a series not on the load's
# clock: exit 1, naming what is missing.
import argparse
import json
import sys


def pct(v, q):
    """The @q quantile of sorted @v (nearest rank)."""
    return v[min(len(v) - 1, max(0, int(q * len(v) + 0.999999) - 1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("series")
    ap.add_argument("load")
    ap.add_argument("--skip-s", type=float, default=1.0)
    ap.add_argument("--line", type=float)
    ap.add_argument("--min", type=int, default=20)
    ap.add_argument("--group", type=int, default=1)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if a.group < 1:
        print("cutwin.py: --group must be 1 or more", file=sys.stderr)
        return 2
    try:
        with open(a.series) as f:
            ser = json.load(f)
        load = None
        if a.load != "-":
            with open(a.load) as f:
                load = json.load(f)
    except (OSError, ValueError) as e:
        print(f"cutwin.py: {e}", file=sys.stderr)
        return 1
    w = ser["window_ms"] / 1000.0
    if load is None:
        idx = list(range(len(ser["node"])))
        lo = hi = None
    else:
        if ser.get("clock") != "mono" or "start_s" not in ser:
            print(f"cutwin.py: {a.series} is not on CLOCK_MONOTONIC (busywin.py --clock mono)", file=sys.stderr)
            return 1
        if "start_s" not in load or "end_s" not in load:
            print(f"cutwin.py: {a.load} gives no start_s and end_s", file=sys.stderr)
            return 1
        lo, hi = load["start_s"] + a.skip_s, load["end_s"]
        idx = [i for i in range(len(ser["node"]))
               if ser["start_s"] + i * w >= lo and ser["start_s"] + (i + 1) * w <= hi]
    names = [n for n in ser if n not in ("window_ms", "clock", "start_s")]
    k = a.group
    # the kept windows, each group of k made one
    cols = {n: [sum(ser[n][i] for i in idx[j:j + k]) / k for j in range(0, len(idx) - k + 1, k)] for n in names}
    t0 = idx[0] if idx else 0
    t_s = [round((idx[j] - t0) * w, 3) for j in range(0, len(idx) - k + 1, k)]
    nw = len(t_s)
    if nw < a.min:
        print("cutwin.py: %d windows of %g ms inside the load's run%s, fewer than %d; the trace began%s with"
              " %d windows" % (nw, ser["window_ms"] * k, "" if lo is None else " (%.3f-%.3f s)" % (lo, hi),
                               a.min, "" if "start_s" not in ser else " at %.3f s" % ser["start_s"],
                               len(ser["node"])), file=sys.stderr)
        return 1
    node = sorted(cols["node"])
    res = {"window_ms": ser["window_ms"] * k, "windows": nw,
           "node": {"mean": round(sum(node) / nw, 2), "p50": round(pct(node, 0.5), 2),
                    "p95": round(pct(node, 0.95), 2), "p99": round(pct(node, 0.99), 2), "max": round(node[-1], 2)}}
    for n in names:
        if n == "node":
            continue
        s = sorted(cols[n])
        res[n] = {"mean": round(sum(s) / nw, 2), "p99": round(pct(s, 0.99), 2)}
    if a.line is not None:
        res["line"] = a.line
        res["over_line_2"] = round(sum(1 for x in node if x > a.line + 2) / nw, 4)
    if a.keep:
        res["series"] = dict({"window_ms": ser["window_ms"] * k, "t_s": t_s},
                             **{n: [round(x, 2) for x in cols[n]] for n in names})
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
