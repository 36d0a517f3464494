#!/usr/bin/env bash
# vm: --cpus 2 --timeout 240
# plan: 3
# A wakee only one CPU may run goes straight to that CPU's local queue, with
# no kick: the kernel reschedules an idle CPU after such an insert
# (local_dsq_post_enq), and a kick from enqueue costs an irq_work self-IPI.
# Checked from outside the scheduler: a pipe ping-pong between a task pinned
# to CPU 0 and one pinned to CPU 1, the second idle between rounds. Were the
# idle CPU not woken, each round would wait for its next interrupt.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
echo +cpu >$cg/cgroup.subtree_control
mkdir -p $cg/online $cg/be

# 200 rounds, 20 ms apart (CPU 1 idles between them, long enough for its
# tick to stop): "p50 p90 max" round trip in us
pingpong() {
	(echo $BASHPID >$cg/online/cgroup.procs && exec python3 -c '
import os, statistics, time
a, b = os.pipe(), os.pipe()
if os.fork() == 0:
    os.sched_setaffinity(0, {1})
    while os.read(a[0], 1) == b"x":
        os.write(b[1], b"y")
    os._exit(0)
os.sched_setaffinity(0, {0})
os.write(a[1], b"x"); os.read(b[0], 1)  # the child is pinned and ready
rt = []
for _ in range(200):
    time.sleep(0.02)
    t = time.perf_counter_ns()
    os.write(a[1], b"x")
    os.read(b[0], 1)
    rt.append((time.perf_counter_ns() - t) / 1000)
os.write(a[1], b"q")
os.wait()
rt.sort()
print("%.0f %.0f %.0f" % (statistics.median(rt), rt[179], rt[-1]))
')
}

read -r e50 e90 emax < <(pingpong)
note "EEVDF: round trip p50 ${e50} us, p90 ${e90} us, max ${emax} us"

build/scx_tidemark --online /online --be /be --stats 1 --json >/tmp/scx.out 2>/tmp/scx.log &
pid=$!
wait_state enabled 20 || { not_ok "scheduler loads" "$(cat /tmp/scx.log)"; tap_done; }
sleep 2
l0=$(json_field "$(grep '^{' /tmp/scx.out | tail -1)" enq_local_wake)
read -r t50 t90 tmax < <(pingpong)
sleep 1.2
l1=$(json_field "$(grep '^{' /tmp/scx.out | tail -1)" enq_local_wake)
note "tidemark: round trip p50 ${t50} us, p90 ${t90} us, max ${tmax} us"
# the pinned wakees took the path under test: 200 rounds, three wakeups each
if [ $((${l1:-0} - ${l0:-0})) -ge 400 ]; then
	ok "the pinned wakeups went to their CPU's local queue ($((l1 - l0)) enq_local_wake)"
else
	not_ok "the pinned wakeups went to their CPU's local queue" "enq_local_wake ${l0:-?} -> ${l1:-?}"
fi
# an idle CPU left to its next interrupt would wait for a timer of its own:
# none is due within the 20 ms gap. A round trip is two cross-CPU wakeups,
# 1.0-1.6 ms at p50 under EEVDF here (TCG, python).
if [ -n "$t50" ] && [ "$t50" -le 10000 ]; then
	ok "the idle CPU is woken at once: round trip p50 ${t50} us (EEVDF ${e50} us)"
else
	not_ok "the idle CPU is woken at once" "round trip p50 '${t50}' us, EEVDF ${e50} us"
fi
kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"
tap_done
