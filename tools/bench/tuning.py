#!/usr/bin/env python3
# Turn a tuning sweep (JSON lines from tools/bench/sweep.sh) into the tuning
# guide: markdown on stdout, one plot per tunable in PLOTS (gnuplot).
#
#   tuning.py RESULTS.jsonl [--plots DIR] [--link-prefix P] [--elapsed S] [--commit C]
#
# Every figure and every recommendation is computed from RESULTS; nothing
# here knows what a tunable "should" do.
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

UNITS = {"slice_us": "us", "wake_gran_us": "us", "window_us": "us", "suppress_pct": "%", "be_floor_mcpu": "mCPU",
         "max_be_wait_ms": "ms"}
# Recorded so a reader knows what each run saw; names are the scheduler's counters.
FORCED = ("be_forced", "be_floor")


class BadInput(Exception):
    pass


def load(path):
    rows = []
    try:
        f = open(path)
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}")
    with f:
        for i, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                o = json.loads(line)
            except json.JSONDecodeError as e:
                raise BadInput(f"{path}:{i}: not JSON ({e.msg})")
            if not isinstance(o, dict) or "kind" not in o:
                raise BadInput(f"{path}:{i}: an object with a \"kind\" was expected")
            rows.append(o)
    return rows


def pct_of(sorted_v, p):
    if not sorted_v:
        return float("nan")
    k = min(len(sorted_v) - 1, max(0, int(round(p / 100 * (len(sorted_v) - 1)))))
    return sorted_v[k]


def measure(r, cpus, where):
    """One run's figures, from the raw record."""
    try:
        iv = r["interval_us"]
        u = r["node_usage"]
        busy = []
        for (t0, u0), (t1, u1) in zip(u, u[1:]):
            if t1 > t0:
                busy.append(100.0 * (u1 - u0) / ((t1 - t0) * cpus))
        busy.sort()
        s = r["sched"]
        dt = s["interval_s"]
        line = s["line_pct"]
        return {
            "wake_p50": r["light"]["wakeup_us"]["p50"],
            "wake_p99": r["light"]["wakeup_us"]["p99"],
            "req_p99": r["light"]["request_us"]["p99"],
            "heavy_p99": r["heavy"]["request_us"]["p99"],
            "served": r["light"]["requests"] / max(1, r["light"]["seconds"] * r["light"]["target_rate"]),
            "online": 100.0 * r["online_us"] / (iv * cpus),
            "be": 100.0 * r["be_us"] / (iv * cpus),
            "busy": 100.0 * (u[-1][1] - u[0][1]) / ((u[-1][0] - u[0][0]) * cpus),
            "busy_p10": pct_of(busy, 10),
            "busy_p90": pct_of(busy, 90),
            "over": statistics.fmean([max(0.0, b - line) for b in busy]) if busy else float("nan"),
            "line": line,
            "be_wait_p99": s["wait"]["be"]["p99_us"],
            "forced": sum(s["counters"].get(c, 0) for c in FORCED) / dt,
        }
    except (KeyError, IndexError, TypeError, ZeroDivisionError) as e:
        raise BadInput(f"{where}: a sweep record lacks what it needs ({type(e).__name__}: {e})")


def agg(runs, key):
    v = sorted(m[key] for m in runs)
    return statistics.median(v), v[0], v[-1]


def fmt(x, unit=""):
    if x != x:
        return "n/a"
    if unit == "us":
        return f"{x / 1000:.1f} ms" if x >= 10000 else f"{x:.0f} us"
    if unit == "%":
        return f"{x:.0f}%"
    return f"{x:.1f}"


def cell(a, unit):
    """median (min-max), the range in the median's scale"""
    med, lo, hi = a
    if lo == hi:
        return fmt(med, unit)
    if unit == "us":
        d, f, u = (1000, "%.1f", " ms") if med >= 10000 else (1, "%.0f", " us")
        return f"{f % (med / d)}{u} ({f % (lo / d)}-{f % (hi / d)})"
    if unit == "%":
        return f"{med:.0f}% ({lo:.0f}-{hi:.0f})"
    return f"{med:.1f} ({lo:.1f}-{hi:.1f})"


def quartiles(v):
    """lower quartile, median, upper quartile (linear interpolation)"""
    v = sorted(v)

    def q(p):
        x = p * (len(v) - 1)
        i = int(x)
        return v[i] if i + 1 >= len(v) else v[i] + (x - i) * (v[i + 1] - v[i])
    return q(0.25), q(0.5), q(0.75)


def noise(runs, dflt):
    """The run's own noise: every measurement taken with every tunable at its
    default (each swept tunable's default point), per figure, as quartiles
    and range. None when the defaults were never measured."""
    pool = []
    for t, by_value in runs.items():
        d = dflt.get(t)
        if d is not None and d in by_value:
            pool.extend(by_value[d])
    if not pool:
        return None
    return {k: (quartiles([m[k] for m in pool]), min(m[k] for m in pool), max(m[k] for m in pool), len(pool))
            for k in ("req_p99", "heavy_p99", "be", "over")}


def recommend(t, vals, stats, dfl, nz):
    """Sentences drawn from the measurement, and the value chosen by the rule
    stated in the document (the all-defaults runs @nz are the noise: only an
    effect every repeat shows counts; the default is the reference)."""
    out = []
    lo_v = min(vals, key=lambda v: stats[v]["req_p99"][0])
    hi_v = max(vals, key=lambda v: stats[v]["req_p99"][0])
    out.append(f"ONLINE request p99 (median of the repeats) was lowest at {t}={lo_v} "
               f"({fmt(stats[lo_v]['req_p99'][0], 'us')}) and highest at {t}={hi_v} "
               f"({fmt(stats[hi_v]['req_p99'][0], 'us')}).")
    be_lo = min(vals, key=lambda v: stats[v]["be"][0])
    be_hi = max(vals, key=lambda v: stats[v]["be"][0])
    out.append(f"BE got {fmt(stats[be_lo]['be'][0], '%')} of the node at {t}={be_lo} and "
               f"{fmt(stats[be_hi]['be'][0], '%')} at {t}={be_hi}; node busy ran "
               f"{fmt(min(stats[v]['busy'][0] for v in vals), '%')}-{fmt(max(stats[v]['busy'][0] for v in vals), '%')} "
               f"and its 100 ms samples were above the line by {min(stats[v]['over'][0] for v in vals):.1f}-"
               f"{max(stats[v]['over'][0] for v in vals):.1f} points on average.")
    if nz is None or dfl is None:
        out.append("The defaults were not measured in this run, so nothing here tells noise from effect: "
                   "no choice is drawn.")
        return "none drawn", " ".join(out)
    (q1, _, q3), _, _, _ = nz["req_p99"]
    (_, _, h3), _, _, _ = nz["heavy_p99"]
    _, blo, bhi, _ = nz["be"]
    (_, _, o3), _, _, _ = nz["over"]
    # Consistent effects only: every repeat past the defaults' quartile. The
    # default is the reference, never better or worse than itself.
    others = [v for v in vals if v != dfl]
    worse = [v for v in others if stats[v]["req_p99"][1] > q3 or stats[v]["heavy_p99"][1] > h3]
    better = [v for v in others if stats[v]["req_p99"][2] < q1 and v not in worse]
    loose = [v for v in others if stats[v]["over"][0] > o3 + 1.0]
    out.append(f"Against the all-defaults runs' upper quartiles (light {fmt(q3, 'us')}, heavy {fmt(h3, 'us')}) and "
               f"the light one's lower quartile ({fmt(q1, 'us')}), every repeat past them: "
               + (f"better ONLINE tail at {', '.join(map(str, better))}" if better else "no value better on ONLINE tail")
               + "; " + (f"worse (light or heavy) at {', '.join(map(str, worse))}" if worse else "none worse") + "; "
               + (f"the line held worse at {', '.join(map(str, loose))} (above line past {o3 + 1.0:.1f} points)"
                  if loose else "the line held as well as with the defaults at every value") + ".")
    ok = [v for v in vals if v not in worse and v not in loose]
    if not ok:
        out.append("Every value was worse on ONLINE tail or on the line than the defaults: no choice drawn.")
        return "none drawn", " ".join(out)
    pool = [v for v in ok if v in better] or ok
    top = max(stats[v]["be"][0] for v in pool)
    tie = [v for v in pool if stats[v]["be"][0] >= top - max(bhi - blo, 0.5)]
    choice = dfl if dfl in tie else max(tie, key=lambda v: (stats[v]["be"][0], -abs(v - dfl)))
    c = stats[choice]
    if choice == dfl:
        out.append(f"**Measured choice: keep the default {t}={dfl}** (ONLINE p99 {fmt(c['req_p99'][0], 'us')}, "
                   f"BE {fmt(c['be'][0], '%')}, {c['over'][0]:.1f} points above the line).")
    else:
        d = stats.get(dfl)
        versus = (f"; the default {dfl} gave {fmt(d['req_p99'][0], 'us')}, {fmt(d['be'][0], '%')} and "
                  f"{d['over'][0]:.1f}" if d else "")
        out.append(f"**Measured choice: {t}={choice}**: ONLINE p99 {fmt(c['req_p99'][0], 'us')} "
                   f"({'consistently better than' if choice in better else 'not consistently worse than'} "
                   "the defaults), "
                   f"BE {fmt(c['be'][0], '%')}, {c['over'][0]:.1f} points above the line{versus}.")
    return choice, " ".join(out)


def plot(t, vals, stats, plots, dfl):
    """tools/bench/tuning.gp on a data file: value, then median/min/max of
    the plotted figures."""
    keys = ("wake_p99", "req_p99", "be", "busy", "busy_p10", "busy_p90", "line")
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as f:
        for v in vals:
            f.write(str(v))
            for k in keys:
                f.write(" %g %g %g" % stats[v][k])
            f.write("\n")
        dat = f.name
    png = os.path.join(plots, f"tuning-{t}.png")
    gp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tuning.gp")
    try:
        subprocess.run(["gnuplot", "-e", f"datafile='{dat}'; outfile='{png}'; tunable='{t}'; "
                        f"logx={1 if max(vals) >= 20 * max(1, min(vals)) else 0}", gp],
                       check=True, stdout=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError) as e:
        raise BadInput(f"gnuplot failed for {t}: {e}")
    finally:
        os.unlink(dat)
    return os.path.basename(png)


def main():
    ap = argparse.ArgumentParser(description="docs/tuning.md from a tuning sweep")
    ap.add_argument("results")
    ap.add_argument("--plots", help="directory for tuning-TUNABLE.png (no plots without it)")
    ap.add_argument("--link-prefix", default="bench/", help="how the markdown reaches the plots")
    ap.add_argument("--elapsed", type=int, help="wall time of the sweep, seconds")
    ap.add_argument("--commit", default="", help="tidemark commit measured")
    a = ap.parse_args()

    rows = load(a.results)
    meta = next((r for r in rows if r["kind"] == "meta"), None)
    if meta is None:
        raise BadInput(f"{a.results}: no meta record (is it a sweep.sh result?)")
    cpus = meta.get("cpus")
    if not isinstance(cpus, int) or cpus < 1:
        raise BadInput(f"{a.results}: meta.cpus must be a positive whole number")
    dflt = dict(kv.split("=", 1) for kv in meta.get("defaults", "").split() if "=" in kv)
    errors = [r for r in rows if r["kind"] == "error"]
    runs = {}
    order = []
    for i, r in enumerate(rows, 1):
        if r["kind"] != "sweep":
            continue
        t = r.get("tunable")
        if t not in UNITS:
            raise BadInput(f"{a.results}: record {i} sweeps '{t}', which is not a swept tunable")
        if t not in runs:
            runs[t] = {}
            order.append(t)
        runs[t].setdefault(r["value"], []).append(measure(r, cpus, f"{a.results} record {i}"))
    if not runs:
        raise BadInput(f"{a.results}: no sweep records")

    out = []
    w = out.append
    w("# Tuning tidemark: what each tunable did, measured")
    w("")
    w("Generated by `make bench BENCH_MODE=sweep` (`tools/bench/sweep.sh`, then `tools/bench/tuning.py`); "
      f"raw results in `docs/bench/sweep.jsonl`. Kernel {meta.get('kernel', '?')}, {cpus} CPUs"
      + (f", tidemark commit `{a.commit}`" if a.commit else "")
      + (f", {a.elapsed} s wall time" if a.elapsed else "") + ".")
    w("")
    lt, hv = meta.get("light", {}), meta.get("heavy", {})
    w("**Workload** (the same for every point). ONLINE: a light service, `tm-probe` with "
      f"{lt.get('work_us', '?')} us requests at {lt.get('rate', '?')}/s (its latency is what the tables "
      f"show), and a heavy one with {hv.get('work_us', '?')} us requests at {hv.get('rate', '?')}/s, "
      "behind which a light request may wait on a CPU. BE: "
      f"`{meta.get('be', '?')}` throughout. One `scx_tidemark` for the whole sweep; each value is set with "
      "`tidemarkctl set` (no reload), left 1 s to settle, then measured for "
      f"{meta.get('seconds', '?')} s; every value {meta.get('repeats', '?')} times, the values of a tunable "
      "interleaved. One tunable moves at a time; the others stay at their defaults.")
    w("")
    w("**Figures.** Each cell is the median of the repeats with their range in brackets. ONLINE latency is "
      "`tm-probe`'s (request = scheduled time to completion, wakeup = hand-off to running). BE and node busy "
      "come from cgroup `cpu.stat` (outside the scheduler): BE is the BE cgroup's CPU over the run, busy is "
      "the root cgroup's over the run, and *busy p10-p90* and *above line* are from its 100 ms samples "
      "(*above line*: the mean of how far each sample was over the line, in points). BE wait p99 and "
      "forced runs (`be_forced` + `be_floor`, per second) are the scheduler's own, from "
      "`tidemarkctl stats` over the same run.")
    w("")
    dflt_int = {t: int(dflt[t]) for t in runs if t in dflt and dflt[t].isdigit()}
    nz = noise(runs, dflt_int)
    if nz:
        (q1, med, q3), lo, hi, npool = nz["req_p99"]
        (b1, bmed, b3), blo, bhi, _ = nz["be"]
        w(f"**Noise.** Every tunable's default point is the same configuration (all defaults): this run "
          f"measured it {npool} times. Its light service's request p99 had median {fmt(med, 'us')}, quartiles "
          f"{fmt(q1, 'us')}-{fmt(q3, 'us')} and range {fmt(lo, 'us')}-{fmt(hi, 'us')}; the heavy one's median "
          f"{fmt(nz['heavy_p99'][0][1], 'us')}, quartiles {fmt(nz['heavy_p99'][0][0], 'us')}-"
          f"{fmt(nz['heavy_p99'][0][2], 'us')}; its BE CPU median "
          f"{bmed:.1f}% (quartiles {b1:.1f}-{b3:.1f}, range {blo:.1f}-{bhi:.1f}). A p99 from "
          f"{meta.get('seconds', '?')} s of requests rests on its slowest few, so single runs of one "
          "configuration differ this much; a value's median inside those quartiles is no measured effect.")
        w("")
    w("**How a choice is drawn.** Each value is set against the all-defaults runs. It is worse on ONLINE "
      "tail when every repeat of either ONLINE service (light or heavy) had its request p99 above their upper "
      "quartile, and better when it is not worse and every repeat of the light service was below their lower "
      "quartile: a consistent effect, not one lucky run. Values worse on ONLINE tail, or holding the line worse (median "
      "points above the line past the defaults' upper quartile plus one), are out. Of the rest, those better "
      "on ONLINE tail come first, then the most BE CPU; BE within the all-defaults runs' range of the best "
      "is a tie, and a tie goes to the default. The rule reads only this run; on other hardware, run the "
      "sweep there (below).")
    w("")
    if "icount" in meta.get("vm", ""):
        w(f"**Caveat.** This run is a QEMU TCG guest in icount mode ({meta['vm']}): a wakeup sent to another "
          "vCPU waits for that vCPU's turn (1-8 ms), so every multi-CPU latency here is pessimistic and the "
          "absolute figures are the emulator's; the comparison between values of one run is what holds.")
        w("")
    if errors:
        w(f"**{len(errors)} point(s) failed** and are not in the tables: "
          + "; ".join(f"{e.get('tunable')}={e.get('value')}: {e.get('what')}" for e in errors) + ".")
        w("")
    w("| tunable | default | measured choice |")
    w("|---|---|---|")
    summary_at = len(out)
    sections = []
    for t in order:
        vals = sorted(runs[t])
        stats = {v: {k: agg(runs[t][v], k) for k in runs[t][v][0]} for v in vals}
        dfl = int(dflt[t]) if t in dflt and dflt[t].isdigit() else None
        choice, text = recommend(t, vals, stats, dfl, nz)
        s = []
        s.append(f"## {t} ({UNITS[t]})")
        s.append("")
        s.append(text)
        s.append("")
        s.append(f"| {t} | request p99 | wakeup p50 / p99 | heavy request p99 | BE CPU | node busy | busy p10-p90 "
                 "| above line | BE wait p99 | forced runs/s |")
        s.append("|" + "---|" * 10)
        for v in vals:
            x = stats[v]
            mark = " (default)" if v == dfl else ""
            s.append(f"| {v}{mark} | {cell(x['req_p99'], 'us')} | {fmt(x['wake_p50'][0], 'us')} / "
                     f"{cell(x['wake_p99'], 'us')} | {cell(x['heavy_p99'], 'us')} | {cell(x['be'], '%')} | "
                     f"{cell(x['busy'], '%')} (line {x['line'][0]:.0f}%) | {fmt(x['busy_p10'][0], '%')}-"
                     f"{fmt(x['busy_p90'][0], '%')} | {x['over'][0]:.1f} | {fmt(x['be_wait_p99'][0], 'us')} | "
                     f"{x['forced'][0]:.1f} |")
        s.append("")
        if a.plots:
            png = plot(t, vals, stats, a.plots, dfl)
            s.append(f"![{t}]({a.link_prefix}{png})")
            s.append("")
        sections.append(s)
        out.insert(summary_at, f"| `{t}` | {dfl if dfl is not None else '?'} | {choice} |")
        summary_at += 1
    w("")
    for s in sections:
        out.extend(s)
    w("## Running the sweep")
    w("")
    w("`make bench BENCH_MODE=sweep` boots the test kernel (2 vCPUs, icount) and rewrites this file, "
      "`docs/bench/sweep.jsonl` and the plots. On a machine booted with a sched_ext kernel, as root, after "
      "`make all`: `tools/bench/sweep.sh --out sweep.jsonl` (`--only slice_us --values 1000,5000`, "
      "`--seconds`, `--repeats`, `--light-pct`, `--heavy-pct` narrow it), then "
      "`tools/bench/tuning.py sweep.jsonl --plots DIR > tuning.md`. It uses cgroups under `/tm-sweep` and "
      "refuses to start while another sched_ext scheduler is loaded.")
    print("\n".join(out))


if __name__ == "__main__":
    try:
        main()
    except BadInput as e:
        print(f"tuning.py: {e}", file=sys.stderr)
        sys.exit(2)
