#!/usr/bin/env bash
# vm: --cpus 4 --timeout 400
# Load scx_tidemark in the VM: it must take over every task, survive fork,
# CPU and affinity churn without a watchdog exit, restart itself after CPU
# hotplug (a recoverable exit), and exit cleanly on SIGINT.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../vmlib.sh"

expect_eq "no scheduler before load" disabled "$(scx_state)"

log=/tmp/scx.log
build/scx_tidemark --timeout-ms 5000 --stats 1 --json >"$log" 2>&1 &
pid=$!
if wait_state enabled 10; then ok "state enabled after load"; else not_ok "state enabled after load" "$(cat $log)"; fi
expect_eq "root ops is tidemark" tidemark "$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
expect_eq "all tasks switched (not partial)" 1 "$(cat /sys/kernel/sched_ext/switch_all 2>/dev/null)"
# A task started now runs in the ext class.
expect_eq "new task scheduled by sched_ext" ext "$(task_class $$)"

note "stress: cpu, fork and affinity churn for 30 s"
stress-ng --temp-path /tmp --cpu 4 --cpu-method int64 --fork 4 --affinity 4 \
	--timeout 30s --metrics-brief >/tmp/stress.log 2>&1 &
spid=$!
bad=0
for _ in $(seq 30); do
	sleep 1
	[ "$(scx_state)" = enabled ] || bad=$((bad + 1))
done
wait $spid
src=$?
expect_eq "stress-ng finished cleanly" 0 "$src"
expect_eq "scheduler stayed enabled through the stress" 0 "$bad"
if kill -0 $pid 2>/dev/null; then ok "loader alive after stress"; else not_ok "loader alive after stress" "$(tail -20 $log)"; fi

stats=$(grep '^{' "$log" | tail -n 1)
note "counters: $stats"
for c in enq_hi dispatch_hi enq_direct enq_local_pinned; do
	v=$(json_field "$stats" "$c")
	if [ "${v:-0}" -gt 0 ]; then ok "counter $c counts ($v)"; else not_ok "counter $c counts" "$stats"; fi
done

note "hotplug: CPU 3 offline must make the kernel ask for a restart"
echo 0 >/sys/devices/system/cpu/cpu3/online
if wait_log "$log" "kernel asked for a restart" 10 && wait_state enabled 10; then
	ok "restarted after CPU hotplug"
else
	not_ok "restarted after CPU hotplug" "$(tail -20 $log)"
fi
echo 1 >/sys/devices/system/cpu/cpu3/online
wait_log "$log" "loaded" 10 >/dev/null
sleep 2
expect_eq "enabled after CPU 3 returned" enabled "$(scx_state)"
if kill -0 $pid 2>/dev/null; then ok "loader alive after hotplug"; else not_ok "loader alive after hotplug" "$(tail -20 $log)"; fi

kill -INT $pid
t0=$(date +%s)
wait $pid
rc=$?
expect_eq "loader exits 0 on SIGINT" 0 "$rc"
if [ $(($(date +%s) - t0)) -le 5 ]; then ok "exit within 5 s"; else not_ok "exit within 5 s"; fi
if grep -q "^EXIT: unregistered from user space" "$log"; then ok "exit reason printed"; else not_ok "exit reason printed" "$(tail -5 $log)"; fi
expect_eq "state disabled after exit" disabled "$(scx_state)"
if dmesg | grep -qi "sched_ext.*\(error\|stall\|watchdog\)"; then
	not_ok "no sched_ext error in the kernel log" "$(dmesg | grep -i sched_ext | tail -5)"
else
	ok "no sched_ext error in the kernel log"
fi
tap_done
