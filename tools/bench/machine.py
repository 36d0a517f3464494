#!/usr/bin/env python3
# The facts of the machine a bench ran on, as one JSON object (kind
# "machine"): CPU model, online and possible CPUs, L3 domains and SMT (the
# project's own topology reader, cross-checked with sysfs there), HZ, the
# preemption model, whether it is a guest, whether a PMU counts, the
# kernel and its command line. What cannot be found is null, never guessed.
#   machine.py --where vm|host [--tidemarkctl PATH]
import argparse
import gzip
import json
import platform
import re
import subprocess
import time


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def kconfig():
    """the running kernel's config text, or None"""
    text = read("/boot/config-" + platform.release())
    if text is None:
        try:
            with gzip.open("/proc/config.gz", "rt") as f:
                text = f.read()
        except OSError:
            pass
    return text


def hz(cfg):
    """(HZ, how it was found)"""
    if cfg:
        m = re.search(r"^CONFIG_HZ=(\d+)$", cfg, re.M)
        if m:
            return int(m[1]), "kernel config"
    # jiffies over half a second of wall time, rounded to a HZ Linux offers
    def jiffies():
        t = read("/proc/timer_list")
        m = re.search(r"^jiffies: (\d+)$", t or "", re.M)
        return int(m[1]) if m else None
    a, t0 = jiffies(), time.monotonic()
    if a is None:
        return None, "not found (no kernel config, no /proc/timer_list)"
    time.sleep(0.5)
    b, t1 = jiffies(), time.monotonic()
    rate = (b - a) / (t1 - t0)
    best = min((100, 250, 300, 1000), key=lambda h: abs(h - rate))
    return best, "measured from jiffies (%.0f/s)" % rate


def preempt(cfg):
    """(model, how it was found)"""
    dyn = read("/sys/kernel/debug/sched/preempt")
    if dyn:
        m = re.search(r"\((\w+)\)", dyn)
        if m:
            return m[1], "dynamic, /sys/kernel/debug/sched/preempt (%s)" % dyn.strip()
    if cfg:
        for key, name in (("CONFIG_PREEMPT_RT", "rt"), ("CONFIG_PREEMPT", "full"),
                          ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"), ("CONFIG_PREEMPT_NONE", "none")):
            if re.search(r"^%s=y$" % key, cfg, re.M):
                if not re.search(r"^CONFIG_PREEMPT_DYNAMIC=y$", cfg, re.M):
                    return name, "kernel config"
                m = re.search(r"(?:^| )preempt=(\w+)", read("/proc/cmdline") or "")
                if m:
                    return m[1], "dynamic, preempt= on the kernel command line"
                return name, "dynamic, the kernel config's boot default"
    v = platform.version()
    for word, name in (("PREEMPT_RT", "rt"), ("PREEMPT_DYNAMIC", None), ("PREEMPT", "full")):
        if word in v.split():
            if name is None:
                return None, "dynamic, but /sys/kernel/debug/sched/preempt is not readable"
            return name, "uname -v"
    # CONFIG_PREEMPT and PREEMPT_RT kernels say so in their version string
    return "none or voluntary", "no kernel config; uname -v names no PREEMPT"


def ncpus(text):
    """the number of CPUs in a sysfs list such as 0-3,8"""
    if not text:
        return None
    n = 0
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def pmu():
    """(counts, why): whether perf stat counts instructions here"""
    try:
        r = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "--", "true"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, "perf not usable: %s" % e
    for line in r.stderr.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2].startswith("instructions"):
            if f[0].isdigit():
                return True, "perf stat counts instructions"
            return False, "perf stat: instructions %s" % f[0]
    return False, "perf stat: %s" % (r.stderr.strip().splitlines() or ["no output"])[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--where", choices=("vm", "host"), required=True)
    ap.add_argument("--tidemarkctl", default="build/tidemarkctl")
    a = ap.parse_args()
    cpuinfo = read("/proc/cpuinfo") or ""
    m = re.search(r"^model name\s*:\s*(.*)$", cpuinfo, re.M)
    cfg = kconfig()
    h, hz_how = hz(cfg)
    p, p_how = preempt(cfg)
    counts, pmu_how = pmu()
    topo = None
    try:
        topo = json.loads(subprocess.run([a.tidemarkctl, "topology", "--json"], capture_output=True,
                                         text=True, timeout=60, check=True).stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    smt = (read("/sys/devices/system/cpu/smt/control") or "").strip() or None
    out = {
        "kind": "machine",
        "where": a.where,
        "cpu_model": m[1].strip() if m else None,
        "cpus_online": ncpus(read("/sys/devices/system/cpu/online")),
        "cpus_possible": (read("/sys/devices/system/cpu/possible") or "").strip() or None,
        "l3": [d["cpus"] for d in topo["domains"]] if topo else None,
        "threads_per_core": topo["threads_per_core"] if topo else None,
        "smt_control": smt,
        "hz": h,
        "hz_how": hz_how,
        "preempt": p,
        "preempt_how": p_how,
        "guest": bool(re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.M)),
        "pmu": counts,
        "pmu_how": pmu_how,
        "kernel": platform.release(),
        "cmdline": (read("/proc/cmdline") or "").strip(),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
