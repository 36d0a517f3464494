"""The kernel's trace events for the test helpers (migr.py, smtshare.py,
busywin.py): find tracefs, switch events on and off around a run, record
one while naming cgroups' threads, and what they share (CPU lists, a
cgroup's threads)."""
import os
import re
import time

# "comm-pid [cpu] flags timestamp: event: fields"; pid: the current task
EVENT = re.compile(r"-(\d+)\s+\[(\d+)\].*?\s(\d+\.\d+): (\w+): (.*)$")

TRACEFS = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]


def wr(path, val):
    with open(path, "w") as f:
        f.write(val)


def find(event):
    """The tracefs mount that has @event ("sched/sched_switch"), or None."""
    return next((t for t in TRACEFS if os.path.exists(f"{t}/events/{event}")), None)


def size(tr, buffer_kb=16384):
    """Tracing off, a buffer of @buffer_kb per CPU. Slow with many vCPUs
    busy (10 s for 16 on a 2-core host): done ahead, start() keeps it."""
    wr(tr + "/tracing_on", "0")
    wr(tr + "/buffer_size_kb", str(buffer_kb))


def start(tr, events, buffer_kb=16384, on=True, clock="local"):
    """An empty buffer of @buffer_kb per CPU, @events on, tracing on (with
    @on false, left off: the events are then armed but record nothing),
    time stamped by @clock (a trace_clock: "mono" is CLOCK_MONOTONIC)."""
    size(tr, buffer_kb)
    wr(tr + "/trace_clock", clock)
    wr(tr + "/trace", "")
    for e in events:
        wr(f"{tr}/events/{e}/enable", "1")
    if on:
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


def record(tr, events, seconds, cgs, delay=0.0, clock="local"):
    """After @delay s, trace @events for @seconds while naming the threads of
    each cgroup in @cgs ({name: path}, read every 200 ms); {tid: name}.
    The buffer is sized and emptied and the events switched on before the
    delay, while the load is not on yet; after it only tracing_on is
    switched. Done at the delay's end (16 MB per CPU allocated, the events
    switched on, under the load), they held a bursty service up, and the
    first windows measured caught it catching up: ONLINE 90-98% busy for up
    to 300 ms, a point of bursty.sh's node mean. @clock as for start()."""
    start(tr, events, on=False, clock=clock)
    if delay:
        time.sleep(delay)
    wr(tr + "/tracing_on", "1")
    owner = {}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for n, cg in cgs.items():
            for t in threads_of(cg):
                owner[t] = n
        time.sleep(min(0.2, max(0.0, end - time.monotonic())))
    stop(tr, events)
    return owner


def append(path, val):
    """O_APPEND without a seek (python's "a" seeks to the end: EINVAL on
    kprobe_events, and a truncating open would drop every probe)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, val.encode())
    finally:
        os.close(fd)


def kprobe_add(tr, group, name, spec):
    """A kprobe event @group/@name ("FUNCTION FETCHARGS", kprobetrace
    syntax), replacing one a crashed run left."""
    kprobe_del(tr, group, name)
    if not os.path.exists(tr + "/kprobe_events"):
        raise OSError(f"{tr}/kprobe_events: no kprobe events (CONFIG_KPROBE_EVENTS)")
    append(tr + "/kprobe_events", f"p:{group}/{name} {spec}\n")


def kprobe_del(tr, group, name):
    if not os.path.exists(f"{tr}/events/{group}/{name}"):
        return
    wr(f"{tr}/events/{group}/{name}/enable", "0")
    append(tr + "/kprobe_events", f"-:{group}/{name}\n")


def events(tr):
    """What the buffer holds: ([(cpu, seconds, event name, {field: value})],
    how many LOST markers), then the buffer emptied. The fields have
    "common_pid" too: the task that was current."""
    out, lost = [], 0
    with open(tr + "/trace") as f:
        for line in f:
            m = EVENT.search(line)
            if not m:
                lost += "LOST" in line
                continue
            kv = dict(x.split("=", 1) for x in m.group(5).split() if "=" in x)
            kv["common_pid"] = m.group(1)
            out.append((int(m.group(2)), float(m.group(3)), m.group(4), kv))
    wr(tr + "/trace", "")
    return out, lost
