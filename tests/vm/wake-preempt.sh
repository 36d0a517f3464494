#!/usr/bin/env bash
# vm: --cpus 2 --icount --timeout 420
# Wakeup preemption between ONLINE tasks (wake_gran_us): a request/response
# service (tm-probe) in one ONLINE cgroup next to four busy threads of another
# at the same weight, which keep both CPUs busy. The service's wakeups find no
# idle CPU and no BE to take; without wakeup preemption each waits out the
# running hog's slice however far behind it is. Measured in one VM run: EEVDF
# as the peer, then tidemark with wake_gran_us at 1000 (the default) and at
# 100000 (more than a slice: a run's start is renewed every slice, so nothing
# is ever preempted), interleaved twice on the same scheduler (tidemarkctl
# set). The preemptions are the scheduler's own count; the latencies are the
# service's. Measured (seven runs): about 1,600 preemptions in 10 s in fast
# runs (800-1,100 in slow ones, below), none at 100000; p50 request
# 1.29-1.74 ms against 2.93-3.30 ms without, p50 wakeup 77.5-77.7 us against
# 94.8-94.9 (EEVDF 71-73).
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
echo "+cpu" >$cg/cgroup.subtree_control
mkdir -p $cg/online/svc $cg/online/nb
echo "+cpu" >$cg/online/cgroup.subtree_control
PROBE="build/tm-probe --messengers 1 --workers 2 --rate 200 --work-us 500 --jitter-us 2000 --seconds 10 --json"
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]])' "$@"; }
# the service next to the neighbour; with a scheduler, its counters over the
# same 10 s
measure() { # name [stats]
	local st=""
	nb_start
	if [ -n "${2:-}" ]; then
		build/tidemarkctl stats --once --json --interval 10 >/tmp/$1.stats 2>&1 &
		st=$!
	fi
	(echo $BASHPID >$cg/online/svc/cgroup.procs && exec $PROBE) >/tmp/$1.json 2>&1
	[ -n "$st" ] && wait $st
	nb_stop
	note "$1: $(cat /tmp/$1.json)"
}
preempts() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["counters"]["wake_preempt"])' /tmp/$1.stats 2>/dev/null ||
		echo "none ($(head -c 300 /tmp/$1.stats))"
}

measure eevdf
sched_start --online /online
ok "scheduler loads"
# interleaved, so that a change of the emulator's pace during the run
# (its vCPU turns follow the host's speed) falls on both alike
for r in 1 2; do
	build/tidemarkctl set wake_gran_us=1000 >/dev/null
	measure on$r stats
	build/tidemarkctl set wake_gran_us=100000 >/dev/null
	measure off$r stats
done
kill -INT $sched_pid
wait $sched_pid

p_on1=$(preempts on1) p_on2=$(preempts on2) p_off1=$(preempts off1) p_off2=$(preempts off2)
note "wake_preempt over 10 s: $p_on1, $p_on2 at 1000 us; $p_off1, $p_off2 at 100000 us"
check "wakeups preempt a hog ahead of the service at 1000 us ($p_on1, $p_on2)" \
	python3 -c "import sys; sys.exit(0 if $p_on1 > 0 and $p_on2 > 0 else 1)"
expect_eq "nothing preempted with the granularity over a slice" "0 0" "$p_off1 $p_off2"

for s in eevdf on1 on2 off1 off2; do
	eval "w_$s=\$(field /tmp/$s.json wakeup_us p50) r_$s=\$(field /tmp/$s.json request_us p50)"
done
note "p50 wakeup us: EEVDF $w_eevdf; tidemark $w_on1, $w_on2 with wakeup preemption, $w_off1, $w_off2 without"
note "p50 request us: EEVDF $r_eevdf; tidemark $r_on1, $r_on2 with wakeup preemption, $r_off1, $r_off2 without"
# Judged on the sums of each setting's two rounds. The runs come in two
# paces: in some VM runs tidemark serves the service 2-4x slower in every
# setting, for the whole run (p50 request 5.1-11.7 ms against 1.3-3.3 ms,
# p50 wakeup 94-95 us with preemption as without, half the preemptions),
# while EEVDF in the same run may be at its best (709 us once). The pace
# holds for a boot (6 of 6 setups, each a fresh scheduler, fast in one boot,
# 6 of 6 slow in the next) and changes with the host's state; it is not the
# guest's TSC calibration, not the neighbour's first seconds, and preempting
# the waker's own CPU first (no IPI) did not help. The cause is open.
# Preemption's gain held in both paces: 0.45-0.55x the requests without it
# in the fast runs, 0.65-0.75x in the slow ones.
check "p50 request with wakeup preemption at most 0.9x without ($r_on1 + $r_on2 vs $r_off1 + $r_off2 us)" \
	python3 -c "import sys; sys.exit(0 if $r_on1 + $r_on2 <= 0.9 * ($r_off1 + $r_off2) else 1)"
check "p50 wakeup with wakeup preemption no slower than without ($w_on1 + $w_on2 vs $w_off1 + $w_off2 us)" \
	python3 -c "import sys; sys.exit(0 if $w_on1 + $w_on2 <= 1.02 * ($w_off1 + $w_off2) else 1)"
tap_done
