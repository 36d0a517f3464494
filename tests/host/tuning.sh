#!/usr/bin/env bash
# plan: 28
# tools/bench/tuning.py, which writes docs/tuning.md from a sweep: its tables
# and its choices follow the data it is given (two sweeps that differ only in
# their measurements must read differently), and bad input is refused by
# name. Also tools/bench/sweep.sh's own option checks.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# A synthetic sweep: slice_us over three values, three repeats each.
# P99[v] and BE[v] are per-value request p99 (us) and BE share (%); repeat r
# adds r-1 times SPREAD us.
fixture() { # file "v:p99:be ..." spread
	python3 - "$@" <<'EOF'
import json, sys
path, spec, spread = sys.argv[1], sys.argv[2], float(sys.argv[3])
cpus = 2
with open(path, "w") as f:
    f.write(json.dumps({"kind": "meta", "kernel": "test", "cpus": cpus, "seconds": 10, "repeats": 3,
                        "light": {"rate": 200, "work_us": 1000}, "heavy": {"rate": 10, "work_us": 20000},
                        "be": "stress-ng", "defaults": "suppress_pct=65 slice_us=5000 window_us=5000",
                        "vm": ""}) + "\n")
    for r in (1, 2, 3):
        for item in spec.split():
            v, p99, be = item.split(":")
            iv = 10_000_000
            # node usage: 60% then 70% of the node in alternate 100 ms samples
            u, t, samples = 0, 0, []
            for k in range(101):
                samples.append([t, u])
                t += 100_000
                u += int(100_000 * cpus * (0.6 if k % 2 else 0.7))
            rec = {"kind": "sweep", "tunable": "slice_us", "value": int(v), "repeat": r,
                   "interval_us": iv, "online_us": int(0.3 * iv * cpus), "be_us": int(float(be) / 100 * iv * cpus),
                   "light": {"requests": 2000, "seconds": 10.0, "target_rate": 200.0,
                             "wakeup_us": {"p50": 90, "p99": 5000}, "request_us": {"p99": float(p99) + (r - 1) * spread}},
                   "heavy": {"request_us": {"p99": 40000}},
                   "node_usage": samples,
                   "sched": {"interval_s": 10.0, "line_pct": 65, "wait": {"be": {"p99_us": 32768}},
                             "counters": {"be_forced": 30, "be_floor": 10}}}
            f.write(json.dumps(rec) + "\n")
EOF
}

# 1000 is clearly the lowest p99 and no other value's range reaches it
fixture $dir/a.jsonl "1000:10000:30 5000:20000:30 20000:30000:31" 1000
out=$(tools/bench/tuning.py $dir/a.jsonl --plots $dir 2>&1)
expect_eq "tuning.py on sweep A" 0 $?
check "A: choice 1000 in the summary" grep -q '^| `slice_us` | 5000 | 1000 |$' <<<"$out"
check "A: the section says 1000" grep -q '\*\*Measured choice: slice_us=1000\*\*: ONLINE p99 11.0 ms (consistently better than the defaults), BE 30%, 2.5 points above the line; the default 5000 gave 21.0 ms, 30% and 2.5' <<<"$out"
check "A: 20000 is worse, every repeat" grep -q 'better ONLINE tail at 1000; worse (light or heavy) at 20000;' <<<"$out"
check "A: the noise from the defaults' runs" grep -q "measured it 3 times. Its light service's request p99 had median 21.0 ms, quartiles 20.5 ms-21.5 ms" <<<"$out"
# medians and ranges of the repeats: 10000, 11000, 12000 us
check "A: 1000's row has the median and range of its repeats" grep -q '^| 1000 | 11.0 ms (10.0-12.0) |' <<<"$out"
check "A: the default's row is marked" grep -q '^| 5000 (default) | 21.0 ms (20.0-22.0) |' <<<"$out"
# 60/70% alternating samples against a 65% line: 2.5 points over on average
check "A: above line from the 100 ms samples" grep -q '| 60%-70% | 2.5 |' <<<"$out"
check "A: forced runs per second from the counters" grep -q '| 4.0 |$' <<<"$out"
check "A: a plot per tunable" test -s $dir/tuning-slice_us.png
check "A: the markdown links it" grep -qF '![slice_us](bench/tuning-slice_us.png)' <<<"$out"

# The same values, but repeats spread so wide that no value is consistently
# better or worse than the defaults, and the default gives BE the most: kept
fixture $dir/b.jsonl "1000:10000:30 5000:12000:33 20000:14000:31" 5000
out=$(tools/bench/tuning.py $dir/b.jsonl 2>&1)
expect_eq "tuning.py on sweep B" 0 $?
check "B: the default kept" grep -q '\*\*Measured choice: keep the default slice_us=5000\*\*' <<<"$out"
check "B: no value consistently better or worse" grep -q "no value better on ONLINE tail; none worse;" <<<"$out"

# Without the defaults measured there is no noise to judge by: no choice
fixture $dir/c.jsonl "1000:10000:30 20000:30000:31" 1000
out=$(tools/bench/tuning.py $dir/c.jsonl 2>&1)
check "C: no defaults, no choice" grep -q '^| `slice_us` | 5000 | none drawn |$' <<<"$out"
if grep -qF '![' <<<"$out"; then not_ok "B: no plot asked, none linked"; else ok "B: no plot asked, none linked"; fi

# Bad input: named, nothing on stdout, exit 2
bad() { # description pattern file
	local o e rc
	o=$(tools/bench/tuning.py "$3" 2>$dir/err)
	rc=$?
	e=$(cat $dir/err)
	if [ $rc = 2 ] && [ -z "$o" ] && grep -q -- "$2" <<<"$e"; then ok "$1 refused: $e"; else not_ok "$1 refused" "rc $rc, stdout '${o:0:80}', stderr '$e'"; fi
}
bad "a missing file" "nope.jsonl: No such file" $dir/nope.jsonl
printf '{"kind":"meta","cpus":2}\nnot json\n' >$dir/c.jsonl
bad "a line that is not JSON" "c.jsonl:2: not JSON" $dir/c.jsonl
grep -v '"meta"' $dir/a.jsonl >$dir/d.jsonl
bad "no meta record" "no meta record" $dir/d.jsonl
head -1 $dir/a.jsonl >$dir/e.jsonl
bad "no sweep records" "no sweep records" $dir/e.jsonl
{ head -1 $dir/a.jsonl; sed -n 2p $dir/a.jsonl | python3 -c 'import json,sys; o=json.load(sys.stdin); del o["sched"]["wait"]; print(json.dumps(o))'; } >$dir/f.jsonl
bad "a record without the scheduler's waits" "record 2: a sweep record lacks what it needs (KeyError: 'wait')" $dir/f.jsonl
{ head -1 $dir/a.jsonl; sed -n 2p $dir/a.jsonl | sed 's/"slice_us"/"colour"/'; } >$dir/g.jsonl
bad "an unknown tunable" "sweeps 'colour', which is not a swept tunable" $dir/g.jsonl

# sweep.sh refuses bad options before it touches anything
expect_fail "sweep.sh --only colour" 2 "'colour' is not swept" tools/bench/sweep.sh --out $dir/x --only colour
expect_fail "sweep.sh --values with two tunables" 2 "exactly one --only" tools/bench/sweep.sh --out $dir/x --only slice_us,window_us --values 1,2
expect_fail "sweep.sh --values 1,x" 2 "whole numbers separated by commas" tools/bench/sweep.sh --out $dir/x --only slice_us --values 1,x
expect_fail "sweep.sh --seconds 0" 2 "must be 1-600" tools/bench/sweep.sh --out $dir/x --seconds 0
expect_fail "sweep.sh without --out" 2 "--out FILE is required" tools/bench/sweep.sh
check "sweep.sh wrote nothing" test ! -e $dir/x
tap_done
