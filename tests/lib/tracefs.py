"""The kernel's trace events for the test helpers (migr.py, smtshare.py):
find tracefs, switch events on and off around a run, and what they share
(CPU lists, a cgroup's threads)."""
import os

TRACEFS = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]


def wr(path, val):
    with open(path, "w") as f:
        f.write(val)


def find(event):
    """The tracefs mount that has @event ("sched/sched_switch"), or None."""
    return next((t for t in TRACEFS if os.path.exists(f"{t}/events/{event}")), None)


def start(tr, events, buffer_kb=16384):
    """An empty buffer of @buffer_kb per CPU, @events on, tracing on."""
    wr(tr + "/tracing_on", "0")
    wr(tr + "/buffer_size_kb", str(buffer_kb))
    wr(tr + "/trace", "")
    for e in events:
        wr(f"{tr}/events/{e}/enable", "1")
    wr(tr + "/tracing_on", "1")


def stop(tr, events):
    wr(tr + "/tracing_on", "0")
    for e in events:
        wr(f"{tr}/events/{e}/enable", "0")


def cpus_of(s):
    """A kernel CPU list ("0-3,8") as a set."""
    out = set()
    for part in s.strip().split(","):
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        elif part:
            out.add(int(part))
    return out


def threads_of(cg):
    """The thread ids in cgroup @cg (relative to /sys/fs/cgroup)."""
    try:
        with open(os.path.join("/sys/fs/cgroup", cg.lstrip("/"), "cgroup.threads")) as f:
            return {int(x) for x in f.read().split()}
    except OSError:
        return set()
