#!/usr/bin/env bash
# vm: host
# plan: 13
# pool: boots, layouts and exit codes; its one time bound (under 40 s for a 15 s --timeout) holds on half the host
# tools/vm/run itself: L3 layouts seen in the guest's sysfs, exit status
# passthrough, argument errors, timeout and guest panic end with a clear
# message and never hang.
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=../lib/lib.sh
. tests/lib/lib.sh

# L3 domains as the guest's sysfs lists them, one "cpus" list per line.
l3_layout='for c in /sys/devices/system/cpu/cpu[0-9]*; do cat $c/cache/index3/shared_cpu_list; done | sort -n -u | tr "\n" " "'

# The guest's output alone (what tools/vm/run says of the VM, such as a
# boot repeated after QEMU crashed, goes to stderr), stderr shown on failure.
err=$(mktemp)
trap 'rm -f "$err"' EXIT
layout() { # name expected vm/run options...
	local name=$1 want=$2 out
	shift 2
	out=$(tools/vm/run "$@" -- sh -c "$l3_layout" 2>"$err")
	if [ "$out" = "$want" ]; then
		ok "$name"
	else
		not_ok "$name" "expected: $want" "got: $out" "stderr: $(tail -n 5 "$err")"
	fi
}
layout "2 CPUs, 1 L3" "0-1 " --cpus 2 --llcs 1 --timeout 120
layout "16 CPUs, 2 L3 domains" "0-7 8-15 " --cpus 16 --llcs 2 --timeout 180
layout "16 CPUs, 4 L3 domains" "0-3 4-7 8-11 12-15 " --cpus 16 --llcs 4 --timeout 180

out=$(tools/vm/run --timeout 120 -- sh -c 'pwd; exit 7' 2>&1)
rc=$?
expect_eq "command's exit status passed through" 7 "$rc"
expect_eq "working directory is the checkout" "$PWD" "$out"

out=$(tools/vm/run --timeout 120 -- sh -c 'touch /work-ro-probe 2>/dev/null && echo rw || echo ro; echo x >$TM_SHARE/f && cat $TM_SHARE/f; cgroup=$(stat -f -c %T /sys/fs/cgroup); echo $cgroup' 2>&1)
expect_eq "root read-only, share writable, cgroup2 mounted" "ro x cgroup2fs" "$(echo $out)"

# resident probes (tools/vm/run, tools/vm/init): each traced scheduler and
# IPI event registered at boot in two instances, then soft-disabled, so that
# tracing it rewrites no kernel text; a --kprobe registered at boot and held
# the same way in the top instance, recording when enabled
out=$(tools/vm/run --timeout 120 --kprobe 'p:tm_vmrun/dq,dequeue_task,flags=$arg3:u32' -- sh -c '
	t=/sys/kernel/tracing
	for i in 1 2; do for e in sched/sched_switch sched/sched_wakeup sched/sched_wakeup_new sched/sched_waking sched/sched_migrate_task ipi/ipi_send_cpu irq_vectors/reschedule_entry; do cat $t/instances/tm-resident$i/events/$e/enable; done; done | sort | uniq -c
	echo "kprobe: $(cat $t/kprobe_events) $(cat $t/events/tm_vmrun/dq/enable)"
	echo 1 >$t/events/tm_vmrun/dq/enable; echo >$t/trace; sleep 0.2; echo 0 >$t/events/tm_vmrun/dq/enable
	grep -q " dq: .*flags=" $t/trace && echo recorded; cat $t/events/tm_vmrun/dq/enable' 2>&1)
expect_eq "seven events held by two soft-disabled probes each" "14 0*" "$(echo "$out" | sed -n 1p | xargs)"
expect_eq "a --kprobe registered at boot, soft-disabled, records when enabled and stays" \
	"kprobe: p:tm_vmrun/dq dequeue_task flags=\$arg3:u32 0*|recorded|0*" "$(echo "$out" | sed -n 2,4p | paste -sd'|')"
out=$(tools/vm/run --kprobe 'p:g/n dequeue_task' -- true 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "is not p:GROUP/NAME,FUNC" <<<"$out"; then ok "a --kprobe with a space rejected"; else not_ok "a --kprobe with a space rejected" "exit $rc: $out"; fi

out=$(tools/vm/run --cpus 3 --llcs 2 -- true 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "cannot be split evenly" <<<"$out"; then ok "uneven --llcs rejected"; else not_ok "uneven --llcs rejected" "exit $rc: $out"; fi
out=$(tools/vm/run --cpus x -- true 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "needs a whole number, got 'x'" <<<"$out"; then ok "bad --cpus rejected"; else not_ok "bad --cpus rejected" "exit $rc: $out"; fi

t0=$(date +%s)
out=$(tools/vm/run --timeout 15 -- sleep 600 2>&1)
rc=$?
el=$(($(date +%s) - t0))
if [ $rc -eq 124 ] && grep -q "timed out after 15s" <<<"$out" && [ $el -lt 40 ]; then
	ok "timeout kills the VM (exit 124 after ${el}s)"
else
	not_ok "timeout kills the VM" "exit $rc after ${el}s: $out"
fi

out=$(tools/vm/run --timeout 120 -- sh -c 'echo c >/proc/sysrq-trigger; sleep 100' 2>&1)
rc=$?
if [ $rc -eq 125 ] && grep -q "guest kernel panicked" <<<"$out"; then
	ok "guest panic ends the VM (exit 125)"
else
	not_ok "guest panic ends the VM" "exit $rc: $out"
fi
tap_done
