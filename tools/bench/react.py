#!/usr/bin/env python3
# Reaction to an ONLINE burst, measured from outside the scheduler: with BE
# saturating the node, start one ONLINE CPU hog per CPU and sample the
# cgroups' cpu.stat every 2 ms. t0 is the first sample where ONLINE has run;
# the reaction is the time from t0 until BE's CPU use over 10 ms windows is
# at or under FLOOR % of the node and stays there for 100 ms.
#   react.py --be /be --online /online --cpus N --burst-s S --floor-pct P
# Prints JSON: {"reaction_ms": x or null, "be_pct_before": y, "be_pct_after": z}
import argparse
import json
import os
import subprocess
import time

ROOT = "/sys/fs/cgroup"


def usage_us(cg):
    with open(f"{ROOT}{cg}/cpu.stat") as f:
        for line in f:
            k, v = line.split()
            if k == "usage_usec":
                return int(v)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--be", required=True)
    ap.add_argument("--online", required=True)
    ap.add_argument("--cpus", type=int, required=True)
    ap.add_argument("--burst-s", type=float, default=2)
    ap.add_argument("--floor-pct", type=float, default=15)
    a = ap.parse_args()
    samples = []  # (t, be_us, online_us)

    def sample():
        samples.append((time.monotonic(), usage_us(a.be), usage_us(a.online)))

    end = time.monotonic() + 0.2
    while time.monotonic() < end:
        sample()
        time.sleep(0.002)
    procs = f"{ROOT}{a.online}/cgroup.procs"

    def enter():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))

    hogs = [subprocess.Popen(["timeout", str(a.burst_s), "bash", "-c", "while :; do :; done"],
                             preexec_fn=enter) for _ in range(a.cpus)]
    end = time.monotonic() + a.burst_s
    while time.monotonic() < end:
        sample()
        time.sleep(0.002)
    for h in hogs:
        h.wait()

    cap_us = a.cpus * 1e6  # CPU-us per second of wall time
    base_online = samples[0][2]
    t0 = next((t for t, _, o in samples if o > base_online), None)

    def be_pct(t_from, t_to):
        pts = [(t, b) for t, b, _ in samples if t_from <= t <= t_to]
        if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
            return None
        return 100.0 * (pts[-1][1] - pts[0][1]) / ((pts[-1][0] - pts[0][0]) * cap_us)

    res = {"reaction_ms": None, "be_pct_before": be_pct(samples[0][0], samples[0][0] + 0.15),
           "samples": len(samples)}
    if t0 is not None:
        # the sampler competes for the CPUs too, so samples may be sparse: BE is
        # held once its rate over the next 20 ms and the next 100 ms is at or
        # under the floor (a floor or bounded-wait run may fall in any 2 ms)
        for t, _, _ in samples:
            if t < t0:
                continue
            p20, p100 = be_pct(t, t + 0.02), be_pct(t, t + 0.1)
            if p20 is not None and p100 is not None and p20 <= a.floor_pct and p100 <= a.floor_pct:
                res["reaction_ms"] = round((t - t0) * 1000, 1)
                break
        res["be_pct_after"] = be_pct(t0 + 0.5, t0 + a.burst_s - 0.1)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
