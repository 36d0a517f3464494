#!/usr/bin/env python3
# Node CPU busy, measured from outside the scheduler, over consecutive windows.
#
#   tests/lib/busy.py [--delay S] [--windows N] [--seconds S] [--cgroup NAME=PATH ...]
#
# --delay: start first, measure after S seconds. Under a saturating ONLINE
# load a fresh python takes seconds to start (every wakeup waits a slice);
# starting it before the load avoids that.
# One process for the whole measurement, so the measuring itself adds no
# fork/exec bursts (expensive under TCG) to the load it measures.
#
# busy: the kernel's own run time of every task (se.sum_exec_runtime from
#       /proc/*/task/*/schedstat, brought up to date at each tick), over
#       elapsed time x online CPUs. /proc/schedstat's rq_cpu_time is not used:
#       it only grows when a task is switched out, so a task that keeps its
#       CPU for seconds would be missed. Tasks that exit during a window lose
#       their last part; tests measure steady loads.
# stat: /proc/stat (user+nice+system+irq+softirq over all). Tick-sampled;
#       under QEMU TCG it reads 10-15 points above "busy" even for EEVDF with
#       a cpu.max cap, so tests judge on "busy" and print "stat" for the record.
# NAME: share of the node used by cgroup PATH (cpu.stat usage_usec).
import argparse
import os
import sys
import time


def task_runtimes():
    """{tid: sum_exec_runtime ns} for every task on the node."""
    out = {}
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
                    out[int(tid)] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return out


def ran_ns(before, after):
    """Run time between two task_runtimes() samples (new tasks count whole)."""
    return sum(v - before.get(t, 0) for t, v in after.items() if v >= before.get(t, 0))


def procstat():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = v[0] + v[1] + v[2] + v[5] + v[6]
    return busy, busy + v[3] + v[4]


def cg_usage_us(path):
    with open(os.path.join("/sys/fs/cgroup", path.lstrip("/"), "cpu.stat")) as f:
        for line in f:
            k, val = line.split()
            if k == "usage_usec":
                return int(val)
    raise ValueError(f"{path}: no usage_usec in cpu.stat")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--windows", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--cgroup", action="append", default=[], metavar="NAME=PATH")
    a = ap.parse_args()
    cgs = []
    for spec in a.cgroup:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            sys.exit(f"busy.py: --cgroup wants NAME=PATH, got '{spec}'")
        cgs.append((name, path))
    ncpu = os.sysconf("SC_NPROCESSORS_ONLN")
    if a.delay > 0:
        time.sleep(a.delay)
    t0, r0, s0 = time.monotonic(), task_runtimes(), procstat()
    c0 = [cg_usage_us(p) for _, p in cgs]
    for _ in range(a.windows):
        time.sleep(a.seconds)
        t1, r1, s1 = time.monotonic(), task_runtimes(), procstat()
        c1 = [cg_usage_us(p) for _, p in cgs]
        cap_ns = (t1 - t0) * 1e9 * ncpu
        out = [f"busy {round(ran_ns(r0, r1) * 100 / cap_ns)}",
               f"stat {round((s1[0] - s0[0]) * 100 / max(1, s1[1] - s0[1]))}"]
        for (name, _), u0, u1 in zip(cgs, c0, c1):
            out.append(f"{name} {round((u1 - u0) * 1000 * 100 / cap_ns)}")
        print(" ".join(out), flush=True)
        t0, r0, s0, c0 = t1, r1, s1, c1


if __name__ == "__main__":
    main()
