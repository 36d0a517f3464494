#!/usr/bin/env bash
# vm: --cpus 1 --icount --timeout 300
# plan: 7
# ONLINE priority over BE: the same request/response probe (tm-probe) runs
# alone and then with BE hogs saturating the CPU, in one VM run (icount:
# virtual time, so the two runs are comparable). p99 wakeup latency with BE
# must stay within 1.1x of alone: 1.00-1.05x in ten CI runs; BE not
# preempted, or the old fixed 5 ms grid's bad phase (1.65x), is far out.
#
# One vCPU on purpose: in icount mode QEMU runs vCPUs round-robin on one
# thread, and an IPI to a busy vCPU waits for its turn. Measured on 2 vCPUs:
# remote preemption kicks took 1-8 ms to land (local ones 64-128 us), and
# EEVDF with BE at cpu.weight 1 showed the same (p99 wakeup 3.6 ms vs 146 us
# alone). One vCPU measures the policy, not the emulator.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

mkdir -p /sys/fs/cgroup/be /sys/fs/cgroup/online
log=/tmp/scx.log
sched_start --be /be --online /online --stats 1 --json
pid=$sched_pid
ok "scheduler loads"

# Arrivals jittered by up to 2 ms (gaps stay >= 3 ms, longer than the 1 ms of
# work): on a fixed 5 ms grid the requests are phase-locked to the 4 ms tick
# (HZ=250), and each run samples a single tick phase. Measured: a tick in the
# hand-off window adds ~50 us; one run in six landed there for 25% of its
# requests (p90 99.8 vs 67.8 us) and the next got none, so alone-vs-BE
# compared luck. Jittered, both runs meet the tick as often (p99 96-101 us).
PROBE="build/tm-probe --messengers 1 --workers 4 --rate 200 --work-us 1000 --jitter-us 2000 --seconds 10 --json"
probe() { # out
	(echo $BASHPID >/sys/fs/cgroup/online/cgroup.procs && exec $PROBE) >"$1" 2>&1
}

probe /tmp/alone.json
note "alone:   $(cat /tmp/alone.json)"
in_cgroup be stress-ng --temp-path /tmp --cpu-method int64 --cpu 2 --timeout 60s >/dev/null 2>&1
hogs=$!
sleep 1
probe /tmp/be.json
note "with BE: $(cat /tmp/be.json)"
kill $hogs 2>/dev/null
wait $hogs

read -r a b ra rb served < <(json_figs /tmp/alone.json:wakeup_us.p99 /tmp/be.json:wakeup_us.p99 \
	/tmp/alone.json:request_us.p99 /tmp/be.json:request_us.p99 /tmp/be.json:requests)
note "p99 wakeup: alone ${a} us, with BE ${b} us; p99 request: alone ${ra} us, with BE ${rb} us"
if is_num "$a" "$b" && awk "BEGIN { exit !($a > 0 && $b <= 1.1 * $a) }"; then
	ok "p99 wakeup with BE hogs within 1.1x of alone ($b <= 1.1 x $a us)"
else
	not_ok "p99 wakeup with BE hogs within 1.1x of alone" "alone ${a:-none} us, with BE ${b:-none} us"
fi
if [ "${served:-0}" -ge 1980 ]; then ok "every request served with BE ($served of 2000)"; else not_ok "every request served with BE" "${served:-none} of 2000"; fi
stats=$(grep '^{' "$log" | tail -n 1)
note "scheduler counters: $stats"
n=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(sum(c["n"] for c in d["online_cgroups"] if c["cgroup"] == "/online"))' "$stats")
if [ "${n:-0}" -ge 4000 ]; then ok "per-cgroup ONLINE wait histogram for /online ($n waits)"; else not_ok "per-cgroup ONLINE wait histogram for /online" "$stats"; fi
# The CPU is idle ~15% of the time here (line 65%, ONLINE ~20%): a floor owed
# after the budget ran out must be served then, not ahead of an ONLINE task.
# It was served ahead 14 times in 20 s, each one a ~0.6 ms stall of a request;
# now 0-2 (a floor still owed when a window closes on a busy CPU).
fl=$(json_field "$stats" be_floor)
fi_=$(json_field "$stats" be_floor_idle)
if [ "${fl:-99}" -le 5 ]; then ok "BE floor not run ahead of ONLINE with idle CPU time about (be_floor $fl, be_floor_idle $fi_)"; else not_ok "BE floor not run ahead of ONLINE" "be_floor $fl, be_floor_idle $fi_"; fi
pre=$(json_field "$stats" be_preempted)
if [ "${pre:-0}" -gt 0 ]; then ok "BE preempted for ONLINE wakeups ($pre)"; else not_ok "BE preempted for ONLINE wakeups" "$stats"; fi

kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"
tap_done
