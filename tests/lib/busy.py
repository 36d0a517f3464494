#!/usr/bin/env python3
# Node CPU busy, measured from outside the scheduler, over consecutive windows.
#
#   tests/lib/busy.py [--delay S] [--ready FILE] [--go FILE] [--windows N]
#                     [--seconds S] [--cgroup NAME=PATH ...] [--scan-delay S]
#
# --delay: start first, measure after S seconds. Under a saturating ONLINE
# load a fresh python takes seconds to start (every wakeup waits a slice);
# starting it before the load avoids that.
# --ready FILE: created once python has started (imports done, arguments
# read); --go FILE: then wait for FILE to exist, and --delay counts from
# there. A test that starts the meter, waits for it to be ready and then
# makes its event, places the window against the event however long
# python took to start, and python's own start (seconds of CPU under TCG,
# reading the standard library over 9p) is not in the window.
# One process for the whole measurement, so the measuring itself adds no
# fork/exec bursts (expensive under TCG) to the load it measures.
#
# busy: the kernel's own run time of every task (se.sum_exec_runtime from
#       /proc/*/task/*/schedstat, brought up to date at each tick), over
#       elapsed time x online CPUs. /proc/schedstat's rq_cpu_time is not used:
#       it only grows when a task is switched out, so a task that keeps its
#       CPU for seconds would be missed. Tasks that exit during a window lose
#       their last part; tests measure steady loads.
#       Each task's run time is divided by the time between its own two
#       reads: a scan of /proc takes 30-130 ms under TCG on a busy host, and
#       one clock for the whole scan put a slow scan's extra time into the
#       window of every task read late in it (45% read for a node at 41%).
# stat: /proc/stat (user+nice+system+irq+softirq over all). Tick-sampled;
#       under QEMU TCG it reads 10-15 points above "busy" even for EEVDF with
#       a cpu.max cap, so tests judge on "busy" and print "stat" for the record.
# NAME: share of the node used by cgroup PATH (cpu.stat usage_usec).
# meter: this process's own share of the node (its /proc scans, 30-130 ms
#       each under TCG), which is in "busy": a SYSTEM load that appears with
#       the measurement, for tests that judge a controller which only sees
#       SYSTEM's use after the fact. Always the last field.
# --scan-delay: every scan but the first starts S seconds late, as a vCPU
#       stalled by the host would (tests/host/busy.sh checks the result).
import argparse
import os
import sys
import time


def task_runtimes(delay=0.0):
    """{tid: (sum_exec_runtime ns, monotonic s when read)} for every task."""
    out = {}
    if delay > 0:
        time.sleep(delay)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    ns = int(f.read().split()[0])
                out[int(tid)] = (ns, time.monotonic())
            except (OSError, ValueError, IndexError):
                pass
    return out


def cpus_used(before, after, t0):
    """CPUs in use between two task_runtimes() samples: each task's run time
    over the time between its own reads; a task new since @before counts its
    whole run time over the time since the window began at @t0."""
    s = 0.0
    for t, (v, at) in after.items():
        v0, at0 = before.get(t, (0, t0))
        if v >= v0 and at > at0:
            s += (v - v0) / 1e9 / (at - at0)
    return s


def procstat():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = v[0] + v[1] + v[2] + v[5] + v[6]
    return busy, busy + v[3] + v[4]


def cg_usage_us(path):
    """(cpu.stat usage_usec, monotonic s when read) of cgroup @path."""
    with open(os.path.join("/sys/fs/cgroup", path.lstrip("/"), "cpu.stat")) as f:
        for line in f:
            k, val = line.split()
            if k == "usage_usec":
                return int(val), time.monotonic()
    raise ValueError(f"{path}: no usage_usec in cpu.stat")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--windows", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--cgroup", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--scan-delay", type=float, default=0.0)
    ap.add_argument("--ready", metavar="FILE")
    ap.add_argument("--go", metavar="FILE")
    a = ap.parse_args()
    cgs = []
    for spec in a.cgroup:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            sys.exit(f"busy.py: --cgroup wants NAME=PATH, got '{spec}'")
        cgs.append((name, path))
    ncpu = os.sysconf("SC_NPROCESSORS_ONLN")
    own = {int(t) for t in os.listdir("/proc/self/task")}
    if a.ready:
        open(a.ready, "w").close()
    if a.go:
        while not os.path.exists(a.go):
            time.sleep(0.01)
    if a.delay > 0:
        time.sleep(a.delay)
    t0, r0, s0 = time.monotonic(), task_runtimes(), procstat()
    c0 = [cg_usage_us(p) for _, p in cgs]
    for _ in range(a.windows):
        time.sleep(a.seconds)
        t1, r1, s1 = time.monotonic(), task_runtimes(a.scan_delay), procstat()
        c1 = [cg_usage_us(p) for _, p in cgs]
        out = [f"busy {round(cpus_used(r0, r1, t0) * 100 / ncpu)}",
               f"stat {round((s1[0] - s0[0]) * 100 / max(1, s1[1] - s0[1]))}"]
        for (name, _), (u0, at0), (u1, at1) in zip(cgs, c0, c1):
            out.append(f"{name} {round((u1 - u0) / 1e6 / (at1 - at0) * 100 / ncpu)}")
        me = {t: v for t, v in r1.items() if t in own}
        out.append(f"meter {round(cpus_used(r0, me, t0) * 100 / ncpu)}")
        print(" ".join(out), flush=True)
        t0, r0, s0, c0 = t1, r1, s1, c1


if __name__ == "__main__":
    main()
