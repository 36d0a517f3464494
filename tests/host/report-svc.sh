#!/usr/bin/env bash
# plan: 11
# tools/bench/report.py's request-service section on synthetic rows: node
# use by cpu.stat plus the trace's rest, judged in every round against the
# line; BE's share of its room; the served rate and p50/p99 of each round
# against the alone of the same round; the scheduler's count beside
# cpu.stat's. The same code must read met on one data set and missed on
# another.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# fixture FILE TM_ONLINE_PM TM_BE_PM TM_P50 TM_SERVED2: two rounds of alone,
# eevdf-idle and tidemark on 2 vCPUs, a 65% line, the rest 1% throughout
fixture() {
	python3 - "$@" <<'PY'
import json, sys
path, on, be, p50, served2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
rows = [{"kind": "meta", "kernel": "test", "cpus": 2, "mode": "bursty", "where": "vm"}]
def svc(rate, p50, p99):
    return {"target_rate": 400.0, "served_rate": rate, "request_us": {"p50": p50, "p99": p99},
            "dispatcher_wakeup_us": {"p99": 900}, "worker_wakeup_us": {"p99": 400}}
def win(node, p95):
    return {"windows": 85, "node": {"mean": node, "p95": p95}, "other": {"mean": 1.0}}
for r in (1, 2):
    rows.append({"kind": "svc", "setup": "alone", "round": r, "cpus": 2, "line": 65, "svc": svc(400.0, 1300, 6000),
                 "windows": win(31, 33), "online_pm": 300, "be_pm": 0, "stats": None})
    rows.append({"kind": "svc", "setup": "eevdf-idle", "round": r, "cpus": 2, "line": 65,
                 "svc": svc(398.0, 1500, 9000), "windows": win(98, 99), "online_pm": 320, "be_pm": 660,
                 "stats": None})
    for sp, (p50s, p99s) in (("split-alone", (1400, 5000)), ("split", (1540, 6000))):
        rows.append({"kind": "svc", "setup": sp, "round": r, "cpus": 2, "line": 65, "svc": svc(400.0, p50s, p99s),
                     "windows": win(50, 60), "online_pm": 300, "be_pm": 190 if sp == "split" else 0,
                     "stats": None})
    tw = win(64, 68)
    if r == 1:
        # kept windows, for the picture: three of 100 ms
        tw["series"] = {"window_ms": 100.0, "t_s": [0.0, 0.1, 0.2], "node": [64.0, 65.0, 66.0],
                        "online": [40.0, 41.0, 42.0], "be": [23.0, 23.0, 23.0], "other": [1.0, 1.0, 1.0]}
    rows.append({"kind": "svc", "setup": "tidemark", "round": r, "cpus": 2, "line": 65,
                 "svc": svc(400.0 if r == 1 else served2, p50, 6300), "windows": tw,
                 "online_pm": on, "be_pm": be, "stats": {"cpu": {"online": {"pct": on / 10 - 0.3}}}})
with open(path, "w") as f:
    f.write("\n".join(json.dumps(x) for x in rows) + "\n")
PY
}
report() { python3 tools/bench/report.py bursty "$1" 10 2>"$dir/err"; }

fixture "$dir/a.jsonl" 400 230 1350 399.0
report "$dir/a.jsonl" >"$dir/a.md"
check "the table: tidemark's node by cpu.stat and the trace's rest, BE's share of its room" \
	grep -qF "| tidemark | 64.0 | 64.0 | 68.0 | 40.0 | 23.0 | 96% | 399.5 (399.0-400.0) | 1350 | 6300 | 1.04x / 1.05x | 900 / 400 |" "$dir/a.md"
check "the table: a peer past the line is not given a share" \
	grep -qF "| eevdf-idle | 99.0 | 98.0 | 99.0 | 32.0 | 66.0 | line not held |" "$dir/a.md"
check "the line held in every round by cpu.stat: met" \
	grep -qF -- "- 2 vCPUs, request service: node use by cpu.stat within the line +2 in every round (64.0/64.0% against 65%): met." "$dir/a.md"
check "served within 1% of the same round's alone: met" \
	grep -qF -- "served within 1% of alone in every round (400.0 of 400.0, 399.0 of 400.0): met." "$dir/a.md"
check "the scheduler's count beside cpu.stat's" \
	grep -qF -- "the scheduler counts ONLINE as cpu.stat does: 39.7% against 40.0%, 39.7% against 40.0%." "$dir/a.md"
check "what BE on other CPUs costs ONLINE: split against split-alone" \
	grep -qF -- "- 2 vCPUs, request service: BE on CPUs ONLINE does not use (split) costs ONLINE p50 1.10x and p99 1.20x of the same service alone on the same CPUs (split-alone), served 400.0 of 400.0 requests/s." "$dir/a.md"
check "the picture: tidemark's first round's windows, ONLINE, BE and the rest, for line.gp" \
	bash -c "[ \"\$(sed -n 2,4p '$dir/bursty-line-svc-2.dat' | tr '\n' ' ')\" = '0.000 40.00 23.00 1.00 0.100 41.00 23.00 1.00 0.200 42.00 23.00 1.00 ' ] &&
		grep -qF 'line = 65' '$dir/bursty-line-svc-2.gp'"
check "the picture named in the report with its figures" \
	bash -c "grep -qF '3 windows, node 65.0% on average, 66.0% at most (the line 65%).' '$dir/a.md' &&
		grep -qF '](bench/bursty-line-svc-2.png)' '$dir/a.md'"

# ONLINE 44%, BE 25%: 70% with the rest, past the line; round 2 served
# 5 of 400 fewer, more than 1% short; p50 1.2x alone
fixture "$dir/b.jsonl" 440 250 1560 395.0
report "$dir/b.jsonl" >"$dir/b.md"
check "past the line by cpu.stat: missed, BE's share not judged" \
	bash -c "grep -qF -- '- 2 vCPUs, request service: node use by cpu.stat within the line +2 in every round (70.0/70.0% against 65%): **missed**.' '$dir/b.md' &&
		grep -qF 'BE at >= 90% of its room in every round: 125%, not judged, the line was not held.' '$dir/b.md'"
check "a round served 1% short of its alone: missed" \
	grep -qF -- "served within 1% of alone in every round (400.0 of 400.0, 395.0 of 400.0): **missed**." "$dir/b.md"
check "p50 at 1.2x alone in every round: missed" \
	grep -qF -- "request p50 within 1.1x alone in every round: 1.20x/1.20x, **missed**" "$dir/b.md"
tap_done
