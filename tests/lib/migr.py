#!/usr/bin/env python3
# Where the threads of some cgroups run, measured from outside the scheduler.
#
#   tests/lib/migr.py --seconds S --domains LIST [--delay S] [--cgroup NAME=PATH ...]
#                     [--ready FILE --go FILE] [--done FILE]
#
# --domains: the cache domains as CPU lists separated by '/', e.g.
#            "0-3/4-7/8-11/12-15".
# Two sources, both the kernel's own:
# - the sched:sched_migrate_task trace event (every change of a task's CPU,
#   wakeup placement and load balancing alike): migrations and cross-domain
#   migrations per cgroup;
# - the CPU each thread last ran on (/proc/PID/task/TID/stat field 39),
#   sampled every 100 ms: samples per domain.
# Prints one JSON object: {NAME: {"threads", "migrations", "xdom",
# "samples": {domain: n}}}. --ready/--go: set up (python started, the
# trace buffer sized), make the --ready file, and only then wait for the --go
# file before --delay: started beside a hog on every vCPU, that setup took
# 20-50 s on 16 vCPUs of a 2-core host. --done: made once the window is
# over (the trace stopped, the samples taken), before the trace is read: the
# caller can stop its load then, and the reading takes seconds, not the
# 13-21 s it took beside a hog on every vCPU. One python process for the whole run: under
# TCG, forks are expensive and would disturb what is measured.
import argparse
import json
import os
import sys
import time

from tracefs import cpus_of as parse_cpus, find, size, start, stop, threads_of, wr


def last_cpu(tid):
    try:
        with open(f"/proc/{tid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    # the command may hold spaces and parentheses: fields start after the last ')'
    return int(s[s.rindex(")") + 2:].split()[36])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--delay", type=float, default=0)
    ap.add_argument("--domains", required=True)
    ap.add_argument("--cgroup", action="append", default=[])
    ap.add_argument("--ready")
    ap.add_argument("--go")
    ap.add_argument("--done")
    a = ap.parse_args()
    if bool(a.ready) != bool(a.go):
        print("migr.py: --ready and --go go together", file=sys.stderr)
        return 2
    doms = [parse_cpus(x) for x in a.domains.split("/")]
    dom_of = {c: i for i, d in enumerate(doms) for c in d}
    cgs = dict(x.split("=", 1) for x in a.cgroup)
    for n, cg in cgs.items():
        if not os.path.isdir(os.path.join("/sys/fs/cgroup", cg.lstrip("/"))):
            print(f"migr.py: no cgroup {cg} (--cgroup {n}={cg})", file=sys.stderr)
            return 2
    tr = find("sched/sched_migrate_task")
    if not tr:
        print("migr.py: no sched_migrate_task trace event (tracefs not mounted?)", file=sys.stderr)
        return 2

    if a.go:
        size(tr)
        open(a.ready, "w").close()
        while not os.path.exists(a.go):
            time.sleep(0.05)
    if a.delay:
        time.sleep(a.delay)
    start(tr, ["sched/sched_migrate_task"])
    tids = {n: set() for n in cgs}
    samples = {n: {} for n in cgs}
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        for n, cg in cgs.items():
            for t in threads_of(cg):
                tids[n].add(t)
                c = last_cpu(t)
                if c is not None and c in dom_of:
                    d = dom_of[c]
                    samples[n][d] = samples[n].get(d, 0) + 1
        time.sleep(0.1)
    stop(tr, ["sched/sched_migrate_task"])
    if a.done:
        open(a.done, "w").close()

    owner = {t: n for n, ts in tids.items() for t in ts}
    res = {n: {"threads": len(tids[n]), "migrations": 0, "xdom": 0,
               "samples": {str(k): v for k, v in sorted(samples[n].items())}} for n in cgs}
    lost = 0
    with open(tr + "/trace") as f:
        for line in f:
            if "sched_migrate_task:" not in line:
                if "LOST" in line:
                    lost += 1
                continue
            kv = dict(x.split("=", 1) for x in line.split("sched_migrate_task:", 1)[1].split()
                      if "=" in x)
            try:
                pid, o, d = int(kv["pid"]), int(kv["orig_cpu"]), int(kv["dest_cpu"])
            except (KeyError, ValueError):
                # a format this does not read would count no migration at all
                print(f"migr.py: cannot read this sched_migrate_task line: {line.strip()}", file=sys.stderr)
                return 2
            n = owner.get(pid)
            if n is None:
                continue
            res[n]["migrations"] += 1
            if dom_of.get(o) != dom_of.get(d):
                res[n]["xdom"] += 1
    wr(tr + "/trace", "")
    res["_lost_events"] = lost
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
