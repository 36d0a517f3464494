#!/usr/bin/env python3
# Node busy per short window, measured from outside the scheduler.
#
#   tests/lib/busywin.py --seconds S [--delay S] [--window-ms W] [--line PCT]
#                        [--cgroup NAME=PATH ...] [--hold] [--series FILE]
#                        [--clock mono]
#
# The kernel's sched:sched_switch trace event gives, per CPU, when something
# other than the idle task ran; cut into windows of W ms (default 5), each
# window's busy share of all online CPUs is one sample. The threads of each
# named cgroup (cgroup.threads, read every 200 ms) give that cgroup's share
# of each window too; what no name owns is "other" (kthreads, SYSTEM).
# Prints one JSON object:
#   {"window_ms", "windows", "cpus", "node": {"mean", "p50", "p95", "p99", "max"},
#    "node_100ms": the same over 100 ms windows, with their count "windows",
#    NAME: {"mean", "p99"}, ..., "other": {...}, "other_top": the five
#    commands that took most of "other" (their mean share), "lost_events",
#    with --line: "over_line_2": share of windows more than 2 points above}
# --series FILE: every window's shares too, for a test that judges windows
# picked by what ran in them: {"window_ms", "node": [...], NAME: [...], ...,
# "other": [...]}, one percent per window, in order.
# --clock mono: the trace on CLOCK_MONOTONIC, and "start_s" (the first
# window's start, that clock's seconds) in both, so that windows can be
# matched to a load that reports its own span on that clock (tm-svc).
# Percent of the node's capacity, two decimals. One python process for the
# whole run (forks are dear under TCG); the trace is read after the run.
# With --hold, it is read only once the process gets SIGUSR1: parsing a
# 10 s trace is seconds of CPU under TCG, and done while the measured load
# still ran it competed with that load (under tidemark, as a SYSTEM task
# in the ONLINE queue: the bursty service's p99 read 26.7 and 7.6 ms
# against 6.4 and 6.1 ms with the parse held, 2 vCPUs, one boot).
import signal

# first, before the slow imports: a SIGUSR1 that comes early stays pending
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from tracefs import events, find, record, wr  # noqa: E402

HOLD_MAX_S = 3600

EVENTS = ["sched/sched_switch"]


def pct(v, q):
    """The @q quantile of sorted @v (nearest rank)."""
    if not v:
        return 0.0
    return v[min(len(v) - 1, max(0, int(q * len(v) + 0.999999) - 1))]


def summary(v):
    s = sorted(v)
    return {"mean": round(sum(s) / len(s), 2) if s else 0.0, "p50": round(pct(s, 0.5), 2),
            "p95": round(pct(s, 0.95), 2), "p99": round(pct(s, 0.99), 2), "max": round(s[-1], 2) if s else 0.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--delay", type=float, default=0)
    ap.add_argument("--window-ms", type=float, default=5.0)
    ap.add_argument("--line", type=float)
    ap.add_argument("--cgroup", action="append", default=[])
    ap.add_argument("--hold", action="store_true")
    ap.add_argument("--series")
    ap.add_argument("--clock", choices=("local", "mono"), default="local")
    a = ap.parse_args()
    if a.seconds <= 0 or a.window_ms <= 0:
        print("busywin.py: --seconds and --window-ms must be positive", file=sys.stderr)
        return 2
    cgs = {}
    for x in a.cgroup:
        if "=" not in x:
            print(f"busywin.py: --cgroup wants NAME=PATH, got '{x}'", file=sys.stderr)
            return 2
        n, p = x.split("=", 1)
        cgs[n] = p
    tr = find("sched/sched_switch")
    if not tr:
        print("busywin.py: no sched_switch trace event (tracefs not mounted?)", file=sys.stderr)
        return 2
    ncpu = os.sysconf("SC_NPROCESSORS_ONLN")
    owner = record(tr, EVENTS, a.seconds, cgs, a.delay, a.clock)
    if a.hold and signal.sigtimedwait({signal.SIGUSR1}, HOLD_MAX_S) is None:
        print(f"busywin.py: --hold: no SIGUSR1 in {HOLD_MAX_S} s", file=sys.stderr)
        return 1

    # every non-idle run as (start, end, pid); before a CPU's first switch
    # its prev_pid ran since the trace began, after its last its next_pid
    # runs until the trace ends (a hog that never switched still counts)
    runs, cur, first, comm = [], {}, {}, {}
    t0 = t1 = None
    evs, lost = events(tr)
    if a.clock != "local":
        wr(tr + "/trace_clock", "local")
    for cpu, ts, _, kv in evs:
        try:
            prev, nxt = int(kv["prev_pid"]), int(kv["next_pid"])
        except (KeyError, ValueError):
            continue
        comm.setdefault(prev, kv.get("prev_comm", "?"))
        t0 = ts if t0 is None else min(t0, ts)
        t1 = ts if t1 is None else max(t1, ts)
        if cpu in cur:
            since, pid = cur[cpu]
            if pid != 0 and ts > since:
                runs.append((since, ts, pid))
        else:
            first[cpu] = (ts, prev)
        cur[cpu] = (ts, nxt)
    if t0 is None:
        print("busywin.py: no sched_switch event in the trace", file=sys.stderr)
        return 1
    for cpu, (ts, pid) in first.items():
        if pid != 0 and ts > t0:
            runs.append((t0, ts, pid))
    for cpu, (ts, pid) in cur.items():
        if pid != 0 and t1 > ts:
            runs.append((ts, t1, pid))
    w = a.window_ms / 1000.0
    nwin = int((t1 - t0) / w)
    if nwin < 1:
        print("busywin.py: the trace covers less than one window", file=sys.stderr)
        return 1
    names = list(cgs) + ["other"]
    busy = {n: [0.0] * nwin for n in names}
    others = {}
    for s, e, pid in runs:
        s, e = max(s, t0), min(e, t0 + nwin * w)
        if s >= e:
            continue
        n = owner.get(pid, "other")
        if n == "other":
            c = "%s:%d" % (comm.get(pid, "?"), pid)
            others[c] = others.get(c, 0.0) + e - s
        i = int((s - t0) / w)
        while s < e and i < nwin:
            we = t0 + (i + 1) * w
            seg = min(e, we) - s
            if seg > 0:
                busy[n][i] += seg
            s = we
            i += 1
    cap = w * ncpu / 100.0
    node = [sum(busy[n][i] for n in names) / cap for i in range(nwin)]
    res = {"window_ms": a.window_ms, "windows": nwin, "cpus": ncpu, "node": summary(node)}
    if a.clock != "local":
        res.update(clock=a.clock, start_s=t0)
    # the same over 100 ms windows (whole groups of the short ones): the
    # scale a line is held at, where a 5 ms window is one burst or none
    k = max(1, round(100 / a.window_ms))
    long_w = [sum(node[i:i + k]) / k for i in range(0, nwin - k + 1, k)]
    res["node_100ms"] = dict(summary(long_w), windows=len(long_w))
    for n in names:
        sm = summary([x / cap for x in busy[n]])
        res[n] = {"mean": sm["mean"], "p99": sm["p99"]}
    top = sorted(others.items(), key=lambda x: -x[1])[:5]
    res["other_top"] = {c: round(100 * v / (nwin * w * ncpu), 2) for c, v in top}
    if a.line is not None:
        res["line"] = a.line
        res["over_line_2"] = round(sum(1 for x in node if x > a.line + 2) / nwin, 4)
    res["lost_events"] = lost
    if a.series:
        ser = {"window_ms": a.window_ms, "node": [round(x, 2) for x in node]}
        if a.clock != "local":
            ser.update(clock=a.clock, start_s=t0)
        for n in names:
            ser[n] = [round(x / cap, 2) for x in busy[n]]
        with open(a.series, "w") as f:
            json.dump(ser, f)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
