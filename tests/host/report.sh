#!/usr/bin/env bash
# tools/bench/report.py on synthetic results: the scheduler-overhead table
# gives each setup's rounds (median and range) and judges the median, and the
# preemption-model section names the model its own figures support (full only
# where every round of it beats every round of the default on ONLINE's p99,
# at no more than 3% hackbench cost), so the same code must read differently
# for different data; a kernel without dynamic preemption is said so.
. "$(dirname "$0")/../lib/lib.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# fixture FILE DEFAULT_P99S FULL_P99S DEFAULT_HB FULL_HB: two rounds each, the
# request p99s (us) of tidemark's rounds under each model, hackbench seconds
fixture() {
	python3 - "$@" <<'EOF'
import json, sys
path, dp, fp, dh, fh = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
rows = [{"kind": "meta", "kernel": "test", "cpus": 1, "mode": "quick", "where": "vm"},
        {"kind": "preempt_models", "default": "voluntary", "models": "voluntary full", "cpus": 2}]
for r, (eo, tm) in enumerate(((10.0, 10.9), (10.2, 10.5), (10.1, 10.7)), 1):
    rows += [{"kind": "overhead", "setup": "eevdf-none", "round": r, "loops": 200, "hackbench_s": eo},
             {"kind": "overhead", "setup": "scx_simple", "round": r, "loops": 200, "hackbench_s": 9.0},
             {"kind": "overhead", "setup": "tidemark", "round": r, "loops": 200, "hackbench_s": tm,
              "ctxt_per_s": 1400 + 20 * r}]
def probe(p99):
    return {"wakeup_us": {"p50": 90, "p99": p99 - 1000}, "request_us": {"p50": 1100, "p99": p99}}
for r in (0, 1):
    for m, p99s, hb in (("voluntary", dp, dh), ("full", fp, fh)):
        for s, t in (("eevdf-none", 15.0), ("tidemark", hb)):
            rows.append({"kind": "preempt", "model": m, "what": "hackbench", "setup": s, "round": r + 1,
                         "loops": 200, "hackbench_s": t})
        rows.append({"kind": "preempt", "model": m, "what": "probe", "setup": "alone", "round": r + 1,
                     "probe": probe(1200)})
        rows.append({"kind": "preempt", "model": m, "what": "probe", "setup": "tidemark", "round": r + 1,
                     "probe": probe(float(p99s.split(",")[r])), "be_ops": 500})
with open(path, "w") as f:
    f.write("\n".join(json.dumps(x) for x in rows) + "\n")
EOF
}
report() { python3 tools/bench/report.py quick "$1" 10 2>"$dir/err"; }

fixture "$dir/a.jsonl" 4000,4200 2500,2600 15.0 15.3
report "$dir/a.jsonl" >"$dir/a.md"
check "overhead: each setup's rounds, median and range" grep -qF "| tidemark | 10.700 (10.500-10.900) | 1.06x | 1440 (1420-1460) |" "$dir/a.md"
check "overhead: no switch count where the rows have none" grep -qF "| scx_simple | 9.000 | 0.89x | - |" "$dir/a.md"
check "overhead: three rounds said" grep -qF "3 interleaved rounds, median (range)" "$dir/a.md"
check "overhead judged on the median against EEVDF: +5.9%, missed" \
	grep -qF -- "- hackbench no slower than under EEVDF: +5.9%, **missed**." "$dir/a.md"
check "preempt: full below in every round at +2.0% hackbench: ship full" \
	grep -qF "By this run the fragment should ship **full**" "$dir/a.md"
check "preempt: the rounds' figures in the sentence" \
	grep -qF "is 2550 (2500-2600) us with full and 4100 (4000-4200) us with voluntary" "$dir/a.md"
check "preempt: a target line" grep -qF -- "- Preemption model: this run says full" "$dir/a.md"

fixture "$dir/b.jsonl" 4000,2400 2500,2600 15.0 15.3
report "$dir/b.jsonl" >"$dir/b.md"
check "preempt: overlapping rounds keep the default" \
	grep -qF "By this run the fragment should ship **voluntary**" "$dir/b.md"
check "preempt: and say the rounds overlap" grep -qF ": the rounds overlap;" "$dir/b.md"

fixture "$dir/c.jsonl" 4000,4200 2500,2600 15.0 15.9
report "$dir/c.jsonl" >"$dir/c.md"
check "preempt: better tail at +6.0% hackbench keeps the default" \
	grep -qF "By this run the fragment should ship **voluntary**" "$dir/c.md"
check "preempt: the cost said" grep -qF "hackbench under tidemark +6.0% with full" "$dir/c.md"

printf '%s\n' '{"kind": "meta", "kernel": "t", "cpus": 2, "mode": "quick", "where": "vm"}' \
	'{"kind": "preempt_none", "why": "no dynamic preemption here"}' >"$dir/d.jsonl"
report "$dir/d.jsonl" >"$dir/d.md"
check "preempt: a kernel without it is said so" grep -qF "Not measured: no dynamic preemption here." "$dir/d.md"
check "preempt: no verdict then" bash -c "! grep -q 'should ship' $dir/d.md"
tap_done
