#!/usr/bin/env bash
# Inside the test VM: a short colocation scenario under tidemark. An ONLINE
# request/response service (tm-probe) runs alone, then next to best-effort
# CPU hogs that want every CPU; the result is the service's latency in both
# runs and how busy the node was against the suppress line.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
[ "${TM_VM:-0}" = 1 ] || { echo "demo-guest: run through tools/vm/run" >&2; exit 2; }

n=$(nproc)
echo "demo: kernel $(uname -r), $n CPUs, sched_ext state: $(cat /sys/kernel/sched_ext/state)"
mkdir -p /sys/fs/cgroup/online /sys/fs/cgroup/be
build/scx_tidemark --online /online --be /be --stats 30 >/tmp/scx.log 2>&1 &
pid=$!
for _ in $(seq 50); do
	[ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break
	sleep 0.1
done
echo "demo: active scheduler: $(cat /sys/kernel/sched_ext/root/ops) (suppress line 65%)"

rate=$((n * 100))
probe() { # label
	(echo $BASHPID >/sys/fs/cgroup/online/cgroup.procs &&
		exec build/tm-probe --messengers 2 --workers $n --rate $rate --work-us 1000 \
			--jitter-us $((1000000 / rate)) --seconds 10 --json) >/tmp/probe.$1 2>&1
}
echo "demo: ONLINE service alone for 10 s ($rate requests/s x 1 ms of CPU: ~$((rate / n / 10))% of the node)"
probe alone
echo "demo: the same with $n BE CPU hogs in /be (they would take every CPU)"
(echo $BASHPID >/sys/fs/cgroup/be/cgroup.procs &&
	exec stress-ng --temp-path /tmp --cpu $n --cpu-method int64 --timeout 60s) >/dev/null 2>&1 &
hogs=$!
# the measurer covers seconds 2-7 of the 10 s run
tests/lib/busy.py --delay 2 --seconds 5 --cgroup online=/online --cgroup be=/be >/tmp/busy.out &
m=$!
probe be
wait $m
kill $hogs 2>/dev/null
wait $hogs

python3 - /tmp/probe.alone /tmp/probe.be /tmp/busy.out <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
busy = dict(zip(*[iter(open(sys.argv[3]).read().split())] * 2))
print("demo: result (microseconds)")
print("    %-22s %10s %10s %10s %10s %9s" % ("ONLINE service", "wake p50", "wake p99", "req p50", "req p99", "served"))
for name, d in (("alone", a), ("with BE hogs", b)):
    print("    %-22s %10.0f %10.0f %10.0f %10.0f %9d" % (name, d["wakeup_us"]["p50"], d["wakeup_us"]["p99"],
          d["request_us"]["p50"], d["request_us"]["p99"], d["requests"]))
print("    p99 request latency with BE: %.2fx alone" % (b["request_us"]["p99"] / a["request_us"]["p99"]))
print("    node busy %s%% (suppress line 65%%): ONLINE %s%%, BE %s%%" % (busy["busy"], busy["online"], busy["be"]))
PY
kill -INT $pid
wait $pid
echo "demo: scheduler exit: $(grep '^EXIT' /tmp/scx.log)"
echo "demo: (timings under multi-threaded TCG follow host noise; tests/vm/priority.sh measures priority in icount mode, see docs/testing.md)"
