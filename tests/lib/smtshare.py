#!/usr/bin/env python3
# What ran next to what on SMT siblings, measured from outside the scheduler.
#
#   tests/lib/smtshare.py --seconds S [--delay S] --cgroup NAME=PATH ...
#
# The kernel's sched:sched_switch trace event gives, per CPU, who ran when;
# a run that ends in sleep ends where the task took itself off the run
# queue (a kprobe on dequeue_task with DEQUEUE_SLEEP, in its own context),
# not at the switch: between the two the kernel runs the scheduler's
# balance and dispatch for the next task, and the scheduler was told the
# task stopped (ops.stopping), so a sibling may rightly start BE. Under
# TCG the host can make that gap ms long (a vCPU thread preempted there):
# by the switch alone, 17 of 21 of smt_expel's "BE arriving next to
# running ONLINE" in one smt-2x2.sh run came with ONLINE already asleep
# (the scheduler's own trace said so: the other 4 it had not traced); the threads of each cgroup (cgroup.threads, sampled every 200 ms) name
# them; /sys/devices/system/cpu/cpuN/topology/thread_siblings_list gives
# the siblings. Prints one JSON object:
#   {NAME: {"run_s": CPU time in the trace,
#           "with_sibling_s": {OTHER: of that, time some sibling ran OTHER}}}
#   plus, for the first two names A and B (e.g. online and be), "_split":
#   of A's time next to B, how much came from B already running when A
#   started (the time B took to leave: an expel's latency, with its
#   per-start p50/p90 in ms) and how much from B starting next to A
#   (b_arrivals such runs, their p50/p90/max in ms);
#   "_wake": the first name's wakeup-to-run latency (sched_wakeup to its
#   switch in, p50/p90 ms), woken on its own CPU and woken from another
#   (remote_*: that CPU was kicked), and from another onto a CPU running
#   the second name (onto_b_*: a preempting kick to a busy CPU, what an
#   expel is): what a kick takes here, to compare;
#   "_split" also has "b_ipi_in_flight_s": of A's time next to B, how much
#   had a reschedule IPI (a kick) sent to that sibling and not yet taken
#   there (ipi:ipi_send_cpu to irq_vectors:reschedule_entry): a vCPU that
#   runs, interrupts on, takes one at once, so that is time the host did
#   not run the sibling (0 where those events do not exist), and "ipis";
#   "_siblings": {cpu: [siblings]} and "_lost_events".
# One python process for the whole run (forks are dear under TCG).
import argparse
import bisect
import json
import os
import re
import sys

from tracefs import cpus_of, events, find, kprobe_add, kprobe_del, record

KPROBE = ("tidemark_smtshare", "blocked")
KPROBE_AT = "dequeue_task flags=$arg3:u32"
EVENTS = ["sched/sched_switch", "sched/sched_wakeup", "/".join(KPROBE)]
# a reschedule IPI sent to a CPU, and its arrival there (kicks are these)
IPI_EVENTS = ["ipi/ipi_send_cpu", "irq_vectors/reschedule_entry"]
DEQUEUE_SLEEP = 0x01  # kernel/sched/sched.h


def siblings():
    sib = {}
    base = "/sys/devices/system/cpu"
    for d in os.listdir(base):
        if not re.fullmatch(r"cpu\d+", d):
            continue
        try:
            with open(f"{base}/{d}/topology/thread_siblings_list") as f:
                sib[int(d[3:])] = sorted(cpus_of(f.read()) - {int(d[3:])})
        except OSError:
            pass
    return sib


def union(iv):
    """Sorted, merged (start, end) intervals."""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def intersect(a, b):
    """The intersection of two merged interval lists, merged."""
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def overlap(a, b):
    """Total overlap of two merged interval lists."""
    return sum(e - s for s, e in intersect(a, b))


def in_flight(runs, sib, a, b, blind):
    """Of A's time next to B, how much had a reschedule IPI on its way to
    the sibling running B (@blind: {cpu: merged [sent, arrived]})."""
    tot = 0.0
    for cpu, by in runs.items():
        mine = union(by.get(a, []))
        for s in sib.get(cpu, []):
            both = intersect(mine, union(runs.get(s, {}).get(b, [])))
            tot += overlap(both, blind.get(s, []))
    return tot


def split(runs, sib, a, b):
    """A's overlap with B on siblings: B there first (until it left) or B
    arriving while A ran."""
    first = arrived = 0.0
    waits, stays = [], []
    for cpu, by in runs.items():
        mine = union(by.get(a, []))
        theirs = union([x for s in sib.get(cpu, []) for x in runs.get(s, {}).get(b, [])])
        for s, e in mine:
            for ts, te in theirs:
                if te <= s or ts >= e:
                    continue
                ov = min(e, te) - max(s, ts)
                if ts <= s:
                    first += ov
                    waits.append(ov)
                else:
                    arrived += ov
                    stays.append(ov)
    waits.sort()
    stays.sort()
    pct = lambda v, q: round(1000 * v[int(q * (len(v) - 1))], 3) if v else 0
    return {"b_there_first_s": round(first, 4), "b_arrived_s": round(arrived, 4),
            "starts_next_to_b": len(waits), "leave_p50_ms": pct(waits, 0.5),
            "leave_p90_ms": pct(waits, 0.9), "b_arrivals": len(stays),
            "arrived_p50_ms": pct(stays, 0.5), "arrived_p90_ms": pct(stays, 0.9),
            "arrived_max_ms": pct(stays, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--delay", type=float, default=0)
    ap.add_argument("--cgroup", action="append", default=[])
    a = ap.parse_args()
    cgs = dict(x.split("=", 1) for x in a.cgroup)
    tr = find("sched/sched_switch")
    if not tr:
        print("smtshare.py: no sched_switch trace event (tracefs not mounted?)", file=sys.stderr)
        return 2
    # dequeue_task(rq, p, flags): fires for every dequeue; the one whose
    # current task is the task dequeued, with DEQUEUE_SLEEP, is a task
    # going to sleep (p is not fetched: current is the task that runs
    # schedule() there)
    # in the test VM it is registered at boot and kept (tools/vm/run
    # --kprobe): added and removed here, it left an int3 in dequeue_task
    # that a vCPU hit after the removal ("Oops: int3", smt-2x2.sh)
    resident = os.environ.get("TM_VM") == "1"
    if resident and not os.path.exists(f"{tr}/events/{'/'.join(KPROBE)}"):
        print("smtshare.py: no kprobe registered at boot for it: tools/vm/run "
              f"--kprobe 'p:{'/'.join(KPROBE)},{KPROBE_AT.replace(' ', ',')}'",
              file=sys.stderr)
        return 2
    try:
        if not resident:
            kprobe_add(tr, *KPROBE, KPROBE_AT)
        owner = record(tr, EVENTS + [e for e in IPI_EVENTS if find(e)], a.seconds, cgs, a.delay)
        evs, lost = events(tr)
    except OSError as e:
        print(f"smtshare.py: {e}", file=sys.stderr)
        return 2
    finally:
        if not resident:
            kprobe_del(tr, *KPROBE)
    print(json.dumps(analyse(evs, lost, owner, list(cgs), siblings())))
    return 0


def analyse(evs, lost, owner, cgs, sib):
    """The result printed, from the events (tracefs.events()), {tid: name},
    the names in order, and {cpu: [siblings]}."""
    runs = {}  # cpu -> name -> [(start, end)]
    cur = {}  # cpu -> (pid, since)
    slept = {}  # cpu -> when its current task took itself off the run queue
    sent, taken = {}, {}  # cpu -> reschedule IPIs sent to it, and taken there
    woke = {}  # pid -> when it was woken, until it runs
    wake_lat, wake_remote, wake_onto_b = [], [], []
    first_name = next(iter(cgs), None)
    second_name = list(cgs)[1] if len(cgs) > 1 else None
    for cpu, ts, ev, kv in evs:
        if ev == KPROBE[1]:
            try:
                if (int(kv["flags"]) & DEQUEUE_SLEEP and cpu in cur and
                        cur[cpu][0] == int(kv["common_pid"])):
                    slept.setdefault(cpu, ts)
            except (KeyError, ValueError):
                pass
            continue
        if ev == "ipi_send_cpu":
            if kv.get("callback") == "0x0" and kv.get("cpu", "").isdigit():
                sent.setdefault(int(kv["cpu"]), []).append(ts)
            continue
        if ev == "reschedule_entry":
            taken.setdefault(cpu, []).append(ts)
            continue
        if ev == "sched_wakeup":
            try:
                # woken from another CPU than its target: that CPU
                # had to be kicked (an IPI)
                tgt = int(kv["target_cpu"])
                busy = cur.get(tgt, (None, 0))[0]
                woke[int(kv["pid"])] = (ts, tgt != cpu,
                                        tgt != cpu and owner.get(busy) == second_name)
            except (KeyError, ValueError):
                pass
            continue
        try:
            nxt = int(kv["next_pid"])
        except (KeyError, ValueError):
            continue
        if nxt in woke:
            wts, remote, onto_b = woke.pop(nxt)
            if owner.get(nxt) == first_name:
                (wake_remote if remote else wake_lat).append(ts - wts)
                if onto_b:
                    wake_onto_b.append(ts - wts)
        end = slept.pop(cpu, ts)
        if cpu in cur:
            pid, since = cur[cpu]
            n = owner.get(pid)
            if n is not None and end > since:
                runs.setdefault(cpu, {}).setdefault(n, []).append((since, end))
        cur[cpu] = (nxt, ts)

    res = {n: {"run_s": 0.0, "with_sibling_s": {o: 0.0 for o in cgs}} for n in cgs}
    for cpu, by in runs.items():
        for n, iv in by.items():
            mine = union(iv)
            res[n]["run_s"] += sum(e - s for s, e in mine)
            for o in cgs:
                theirs = union([x for s in sib.get(cpu, []) for x in runs.get(s, {}).get(o, [])])
                res[n]["with_sibling_s"][o] += overlap(mine, theirs)
    for n in res:
        res[n]["run_s"] = round(res[n]["run_s"], 4)
        res[n]["with_sibling_s"] = {o: round(v, 4) for o, v in res[n]["with_sibling_s"].items()}
    names = list(cgs)
    if len(names) >= 2:
        res["_split"] = split(runs, sib, names[0], names[1])
        # each IPI sent until the next one taken on that CPU: its vCPU
        # did not run meanwhile (one that runs takes an IPI at once)
        blind = {}
        for c, v in sent.items():
            t = sorted(taken.get(c, []))
            iv = []
            for x in sorted(v):
                k = bisect.bisect_left(t, x)
                if k < len(t):
                    iv.append((x, t[k]))
            blind[c] = union(iv)
        res["_split"]["b_ipi_in_flight_s"] = round(in_flight(runs, sib, names[0], names[1], blind), 4)
        res["_split"]["ipis"] = sum(len(v) for v in sent.values())
    def q(v, f):
        v.sort()
        return round(1000 * v[int(f * (len(v) - 1))], 3) if v else 0
    res["_wake"] = {"n": len(wake_lat), "p50_ms": q(wake_lat, 0.5), "p90_ms": q(wake_lat, 0.9),
                    "remote_n": len(wake_remote), "remote_p50_ms": q(wake_remote, 0.5),
                    "remote_p90_ms": q(wake_remote, 0.9), "onto_b_n": len(wake_onto_b),
                    "onto_b_p50_ms": q(wake_onto_b, 0.5), "onto_b_p90_ms": q(wake_onto_b, 0.9)}
    res["_siblings"] = {str(c): s for c, s in sorted(sib.items())}
    res["_lost_events"] = lost
    return res


if __name__ == "__main__":
    sys.exit(main())
