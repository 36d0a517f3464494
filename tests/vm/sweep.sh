#!/usr/bin/env bash
# vm: --cpus 2 --icount --timeout 400
# plan: 20
# The tuning sweep end to end, short (make bench BENCH_MODE=sweep runs the
# long one): two slice_us values (the default one of them) under one scheduler, changed with
# tidemarkctl set, each one in effect while measured; a value outside the
# tunable's range is recorded as an error with the range, not measured;
# tuning.py turns the records into the guide; nothing is left behind.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

res=/tmp/sweep.jsonl
tools/bench/sweep.sh --out $res --only slice_us --values 1000,20000 --repeats 1 --seconds 3 --vm test 2>/tmp/sweep.err
expect_eq "a short sweep exits 0" 0 $?
n=$(grep -c '"kind":"sweep"' $res)
expect_eq "two measured points" 2 "$n"
check "no error records" test "$(grep -c '"kind":"error"' $res)" = 0
for v in 1000 20000; do
	rec=$(grep "\"value\":$v," $res)
	# the scheduler's own stats over the run, and the probes, are there
	check "slice_us=$v: ONLINE light and heavy measured" grep -q '"light":{"requests":[1-9].*"heavy":{"requests":[1-9]' <<<"$rec"
	check "slice_us=$v: the scheduler's view over the run" grep -q '"sched":{"interval_s":' <<<"$rec"
	samples=$(python3 -c 'import json,sys; print(len(json.loads(sys.stdin.read())["node_usage"]))' <<<"$rec")
	# 3 s of 100 ms samples: a forking sampler managed a third of that
	check "slice_us=$v: $samples node samples in 3 s (at least 20)" within "$samples" 20 40
done
check "the sweep put slice_us back to its default" grep -q "slice_us back to 20000" /tmp/sweep.err
check "no scheduler left" test "$(cat /sys/kernel/sched_ext/state)" = disabled
check "no cgroup left" test ! -d /sys/fs/cgroup/tm-sweep

mkdir -p /tmp/plots
tools/bench/tuning.py $res --plots /tmp/plots >/tmp/tuning.md 2>/tmp/tuning.err
expect_eq "tuning.py reads the sweep" 0 $?
check "the guide has slice_us's table" grep -q '^| 1000 | ' /tmp/tuning.md
# the default among the values: the rule has its noise reference and always
# draws a choice (the default is never out)
check "and a measured choice" grep -q '^| `slice_us` | 20000 | \(1000\|20000\) |$' /tmp/tuning.md
check "and the plot" test -s /tmp/plots/tuning-slice_us.png

tools/bench/sweep.sh --out $res --only slice_us --values 50 --repeats 1 --seconds 1 2>/tmp/sweep.err
expect_eq "a value out of range: the sweep exits 1" 1 $?
check "recorded as an error with the range ($(grep error $res))" grep -q '"kind":"error","tunable":"slice_us","value":50,"what":".*slice_us must be within 100-100000' $res
check "not measured" test "$(grep -c '"kind":"sweep"' $res)" = 0
check "no scheduler left after it" test "$(cat /sys/kernel/sched_ext/state)" = disabled
tap_done
