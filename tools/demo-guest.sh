#!/usr/bin/env bash
# Inside the test VM: a short colocation scenario under tidemark.
set -uo pipefail
cd "$(dirname "$0")/.."
[ "${TM_VM:-0}" = 1 ] || { echo "demo-guest: run through tools/vm/run" >&2; exit 2; }

echo "demo: kernel $(uname -r), $(nproc) CPUs, sched_ext state: $(cat /sys/kernel/sched_ext/state)"
mkdir -p /sys/fs/cgroup/online /sys/fs/cgroup/be
build/scx_tidemark --online /online --be /be --stats 5 >/tmp/scx.log 2>&1 &
pid=$!
for _ in $(seq 50); do
	[ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break
	sleep 0.1
done
echo "demo: active scheduler: $(cat /sys/kernel/sched_ext/root/ops) (state $(cat /sys/kernel/sched_ext/state))"

echo "demo: 10 s: 4 BE CPU hogs in /be, an ONLINE latency probe (cyclictest, 2 ms) in /online"
(echo $BASHPID >/sys/fs/cgroup/be/cgroup.procs &&
	exec stress-ng --temp-path /tmp --cpu 4 --cpu-method int64 --timeout 10s --metrics-brief) >/tmp/hogs.log 2>&1 &
hogs=$!
(echo $BASHPID >/sys/fs/cgroup/online/cgroup.procs &&
	exec cyclictest --policy=other -t 2 -i 2000 -D 10 -q) >/tmp/cyc.log 2>&1
wait $hogs
echo "demo: latency probe (wakeup latency, us):"
grep -E "^T:" /tmp/cyc.log | sed 's/^/    /'
echo "demo: CPU hogs:"
grep -E "cpu " /tmp/hogs.log | tail -n 1 | sed 's/^.*info: *\[[0-9]*\] */    /'

kill -INT $pid
wait $pid
echo "demo: tidemark counters and exit:"
sed 's/^/    /' /tmp/scx.log | tail -n 12
echo "demo: sched_ext state after exit: $(cat /sys/kernel/sched_ext/state)"
