# shellcheck shell=bash
# SMT expel, measured (tests/vm/smt-*.sh set CORES, MAX_ON, MIN_RATIO,
# JUDGE_LEAVE):
# the siblings come from the topology (hwloc's cores, cross-checked with
# sysfs); with smt_expel, regular BE does not run next to ONLINE on a core.
# Measured from outside the scheduler: sched_switch tracing
# (tests/lib/smtshare.py), the share of ONLINE run time during which a
# sibling ran BE, with smt_expel on and then off in the same boot, split
# into BE already there when ONLINE started (the expel's latency: a kick
# to another vCPU) and BE starting next to running ONLINE (the hold); and
# the BE CPU time (cgroup cpu.stat) it costs. ONLINE: one thread about 40%
# busy in 3 ms bursts; BE: a hog per CPU.
cg=/sys/fs/cgroup
echo "+cpu" >$cg/cgroup.subtree_control
mkdir -p $cg/online $cg/be

topo=$(build/tidemarkctl topology --json)
tpc=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cores"], d["threads_per_core"])' <<<"$topo")
expect_eq "the topology: $CORES cores of 2 threads" "$CORES 2" "$tpc"
expect_eq "hwloc's cores and L3s agree with sysfs (nothing said)" "" "$(build/tidemarkctl topology 2>&1 >/dev/null)"
note "$(build/tidemarkctl topology 2>/dev/null | head -1)"

log=/tmp/scx.log
# The floor off: its runs go ahead of ONLINE, next to it by design (a
# guarantee, never expelled). On, 14-52 of them in 8 s moved ONLINE's
# time next to BE between 0.025 and 0.062 in smt-1x2.sh; what is judged
# here is regular BE.
build/scx_tidemark --online /online --be /be --be-floor-mcpu 0 --stats 1 --json >"$log" 2>&1 &
spid=$!
wait_state enabled 20 || { not_ok "scheduler loads" "$(cat $log)"; tap_done; }
ok "scheduler loads"
check "the loader says SMT and smt_expel on" grep -q "SMT: $CORES cores of up to 2 threads, smt_expel on" "$log"

# ONLINE: one thread about 40% busy, in short bursts (its sleeps let the
# scheduler place it again at every wakeup); BE: a hog per CPU.
in_cgroup online stress-ng --temp-path /tmp --cpu 1 --cpu-method int64 --cpu-load 40 --cpu-load-slice 3 --timeout 300s >/dev/null 2>&1
on=$!
in_cgroup be stress-ng --temp-path /tmp --cpu $((CORES * 2)) --cpu-method int64 --timeout 300s >/dev/null 2>&1
be=$!
sleep 3

usage() { sed -n 's/^usage_usec \([0-9]*\)/\1/p' $cg/$1/cpu.stat; }
# one 8 s trace; prints "share be_ms_per_s online_ms_per_s ..." (share:
# of ONLINE's run time, a sibling ran BE with no kick on its way to it)
measure() {
	local b0 o0 t0 b1 o1 t1 j
	b0=$(usage be) o0=$(usage online) t0=$(date +%s%N)
	j=$(tests/lib/smtshare.py --seconds 8 --cgroup online=/online --cgroup be=/be)
	b1=$(usage be) o1=$(usage online) t1=$(date +%s%N)
	python3 - "$j" "$b0" "$b1" "$o0" "$o1" "$t0" "$t1" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
b0, b1, o0, o1, t0, t1 = map(int, sys.argv[2:])
dt = (t1 - t0) / 1e9
on = j["online"]
sp, w = j["_split"], j["_wake"]
# less the time a reschedule IPI was on its way to the BE sibling: its
# vCPU was not running (the host's, not the guest's)
share = (on["with_sibling_s"]["be"] - sp["b_ipi_in_flight_s"]) / on["run_s"] if on["run_s"] else -1
print("%.3f %d %d %.3f %s %.3f %s %s %s" % (
    share, (b1 - b0) / 1e3 / dt, (o1 - o0) / 1e3 / dt, on["run_s"], j["_lost_events"],
    sp["b_arrived_s"], sp["leave_p50_ms"], w["remote_p50_ms"] if w["remote_n"] >= 20 else -1,
    "next-to-BE:%.3fs,of-which-IPI-in-flight:%.3fs,BE-there-first:%.3fs,"
    "arrived:%.3fs(n=%d,p50/p90/max:%s/%s/%sms),starts:%d,leave-p50/p90:%s/%sms,"
    "ONLINE-wakeup-p50/p90:%s/%sms(n=%d),from-another-CPU:%s/%sms(n=%d),"
    "onto-a-BE-CPU:%s/%sms(n=%d)"
    % (on["with_sibling_s"]["be"], sp["b_ipi_in_flight_s"], sp["b_there_first_s"],
       sp["b_arrived_s"], sp["b_arrivals"], sp["arrived_p50_ms"], sp["arrived_p90_ms"],
       sp["arrived_max_ms"], sp["starts_next_to_b"], sp["leave_p50_ms"], sp["leave_p90_ms"],
       w["p50_ms"], w["p90_ms"], w["n"], w["remote_p50_ms"], w["remote_p90_ms"], w["remote_n"],
       w["onto_b_p50_ms"], w["onto_b_p90_ms"], w["onto_b_n"])))
PY
}
counters() { # name...: their values in the loader's last --stats line
	grep '^{"scheduler"' "$log" | tail -1 |
		python3 -c 'import json, sys; d = json.load(sys.stdin); print(*(d[k] for k in sys.argv[1:]))' "$@"
}

read -r e0 h0 f0 g0 < <(counters smt_expelled smt_held be_forced be_floor)
read -r s_on be_on on_on run_on lost_on arr leave_on wake_on split_on < <(measure)
sleep 1.2
read -r e1 h1 f1 g1 < <(counters smt_expelled smt_held be_forced be_floor)
[ -n "$arr" ] || { not_ok "ONLINE and BE traced with smt_expel on (tests/lib/smtshare.py: above)"; tap_done; }
ex=$((e1 - e0)) held=$((h1 - h0))
build/tidemarkctl set smt_expel=0 >/dev/null
sleep 1.2
read -r e0 < <(counters smt_expelled)
read -r s_off be_off on_off run_off lost_off arr_off _ _ split_off < <(measure)
[ -n "$arr_off" ] || { not_ok "ONLINE and BE traced with smt_expel off (tests/lib/smtshare.py: above)"; tap_done; }
sleep 1.2
read -r e1 < <(counters smt_expelled)
ex_off=$((e1 - e0))
build/tidemarkctl set smt_expel=1 >/dev/null
note "smt_expel on:  ONLINE ran with BE on its sibling (no kick on its way) ${s_on} of its time (${run_on} s traced); BE ${be_on} ms/s, ONLINE ${on_on} ms/s; expelled ${ex}, held ${held}; BE runs forced $((f1 - f0)), ahead for the floor $((g1 - g0)); lost events ${lost_on}; ${split_on}"
note "smt_expel off: ONLINE ran with BE on its sibling (no kick on its way) ${s_off} of its time (${run_off} s traced); BE ${be_off} ms/s, ONLINE ${on_off} ms/s; expelled ${ex_off}; ${split_off}"
# MAX_ON holds where a kick lands in 0.2 ms (0.16-0.18 ms p50 in the CI
# runs it was set by). Most of what is left is BE already there when ONLINE
# starts, which lasts until the kick lands: where this run's kicks land
# slower (ONLINE woken from another CPU, p50; 0.53 ms once in CI on a
# loaded host, with 0.114 of ONLINE's time), the bound grows with them.
# That the kick itself goes at once is judged below. Left out: time with a
# reschedule IPI sent to the BE sibling and not yet taken there, when its
# vCPU did not run (in smt-1x2.sh one took 3.5 ms once, the sibling's only
# event meanwhile; a running vCPU takes one at once). Only with a host core
# per vCPU (JUDGE_LEAVE=1): with more vCPUs, MAX_ON was set with the host's
# slower kicks in it.
max_on=$MAX_ON
[ "${JUDGE_LEAVE:-0}" = 1 ] &&
	max_on=$(awk -v m="$MAX_ON" -v w="$wake_on" 'BEGIN { f = w > 0.2 ? w / 0.2 : 1; printf "%.3f", m * f }')
awk -v a="$s_on" -v m="$max_on" 'BEGIN{exit !(a >= 0 && a <= m)}' &&
	ok "smt_expel on: ONLINE next to BE at most $max_on of its time (${s_on}; kicks here ${wake_on} ms)" ||
	not_ok "smt_expel on: ONLINE next to BE at most $max_on of its time" "$s_on (kicks here ${wake_on} ms)"
awk -v a="$s_on" -v b="$s_off" -v r="$MIN_RATIO" 'BEGIN{exit !(b >= 0.2 && b >= r * a)}' &&
	ok "smt_expel off: ONLINE next to BE ${s_off} of its time, ${MIN_RATIO}x more at least" ||
	not_ok "smt_expel off: ONLINE next to BE ${MIN_RATIO}x more" "on ${s_on}, off ${s_off}"
# What the policy itself decides: BE starting next to running ONLINE (the
# hold; what is left is a dispatch racing ONLINE's start, ended by a
# kick): at most 2% of ONLINE's time. ONLINE's runs end where it goes to
# sleep (smtshare.py): ended at the switch that follows, they took in the
# kernel's dispatch for the next task, which the host stretched in 2x2
# (ONLINE already asleep, 0.036-0.107 s of 3.4 s); ended at the sleep,
# 0.001 s there in 6 boots (3-5 runs, 0.5 ms at most), 0.013 s once,
# against 0.43-0.57 s off.
awk -v a="$arr" -v r="$run_on" 'BEGIN{exit !(r > 0 && a / r <= 0.02)}' &&
	ok "smt_expel on: BE started next to running ONLINE for at most 2% of its time (${arr} of ${run_on} s; ${arr_off} s off)" ||
	not_ok "smt_expel on: BE held off siblings running ONLINE" "$arr of $run_on s (${arr_off} s off)"
# The expel is a kick: BE on the sibling leaves about as fast as a kick
# lands in this guest (ONLINE woken from another CPU, wakeup to run, same
# run; -1: fewer than 20 such). Judged where each vCPU has a host core of
# its own (JUDGE_LEAVE=1): with more vCPUs than host cores a kick to a busy
# vCPU waits for the host to run its thread (a few ms), however soon it
# was sent, which the note shows.
if [ "${JUDGE_LEAVE:-0}" = 1 ]; then
	awk -v l="$leave_on" -v w="$wake_on" 'BEGIN{exit !(w >= 0 && l <= 1.5 * w + 0.5)}' &&
		ok "smt_expel on: BE leaves the sibling in ${leave_on} ms (p50), a kick's time here (ONLINE woken from another CPU: ${wake_on} ms to run)" ||
		not_ok "smt_expel on: BE leaves the sibling about as fast as a kick lands" "leave ${leave_on} ms, ONLINE woken from another CPU ${wake_on} ms"
fi
# a trace that lost events missed switches: its shares would read low
expect_eq "the trace lost no events (smt_expel on, off)" "0 0" "${lost_on:-none} ${lost_off:-none}"
check "expels and holds counted by the scheduler ($ex, $held)" test "$ex" -gt 0 -a "$held" -gt 0
expect_eq "no expel with smt_expel off" 0 "$ex_off"
check "ONLINE got its 40% with smt_expel on (${on_on} ms/s; ${on_off} off)" test "$on_on" -ge 300
note "BE cost of smt_expel: $(((be_off - be_on) * 100 / (be_off > 0 ? be_off : 1)))% of its CPU time (${be_off} -> ${be_on} ms/s)"

kill $on $be 2>/dev/null
wait $on $be 2>/dev/null
kill -INT $spid
wait $spid
expect_eq "loader exits 0" 0 "$?"
