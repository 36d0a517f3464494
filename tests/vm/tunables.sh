#!/usr/bin/env bash
# vm: --cpus 2 --llcs 2 --timeout 400
# plan: 30
# Every tunable at runtime, on a scheduler another process started: slice_us
# and window_us take effect without a reload (measured from outside: context
# switches of two CPU hogs sharing a CPU, and the scheduler's window count),
# placement is cleared and restored, bad values and load-time settings are
# refused with nothing changed.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
mkdir -p $cg/online/web $cg/be
log=/tmp/scx.log
sched_start --timeout-ms 5000 --online /online/web --be /be --rescan-ms 200
pid=$sched_pid
ok "scheduler loads (started by another process than the tools)"
seq0=$(cat /sys/kernel/sched_ext/enable_seq)

show=$(build/tidemarkctl show | head -n 1)
for n in suppress_pct max_be_wait_ms be_floor_mcpu slice_us wake_gran_us window_us home_wait_us be_avoid_homes placement home_slack_pct; do
	check "show lists $n" grep -q "$n=" <<<"$show"
done

# windows per second over 3 s, from the scheduler's own counter
windows_per_s() {
	build/tidemarkctl stats --once --json --interval 3 | python3 -c 'import json,sys
o=json.load(sys.stdin); print(int(o["counters"]["windows"] / o["interval_s"]))'
}
w5=$(windows_per_s)
out=$(build/tidemarkctl set window_us=20000 2>&1)
check "set window_us says what changed" grep -q "window_us 5000 -> 20000 (from the next window)" <<<"$out"
sleep 0.1
w20=$(windows_per_s)
note "budget windows: $w5/s at window_us 5000, $w20/s at 20000"
check "window_us 5000: 150-205 windows/s ($w5)" within "$w5" 150 205
check "window_us 20000: 40-52 windows/s ($w20)" within "$w20" 40 52

# Two ONLINE hogs on CPU 1: each switch between them is a slice ending
# (the kernel's nonvoluntary_ctxt_switches, per second).
in_cgroup online/web taskset -c 1 sh -c 'while :; do :; done'
h1=$!
in_cgroup online/web taskset -c 1 sh -c 'while :; do :; done'
h2=$!
sleep 1
nvcsw() { awk '/^nonvoluntary_ctxt_switches/{s+=$2} END{print s}' /proc/$h1/status /proc/$h2/status; }
switches_per_s() {
	local a b
	a=$(nvcsw)
	sleep 3
	b=$(nvcsw)
	echo $(((b - a) / 3))
}
build/tidemarkctl set slice_us=20000 >/dev/null
sleep 0.2
s20=$(switches_per_s)
out=$(build/tidemarkctl set slice_us=2000 2>&1)
check "set slice_us says what changed" grep -q "slice_us 20000 -> 2000 (from the next window)" <<<"$out"
sleep 0.2
s2=$(switches_per_s)
note "hog switches: $s20/s at slice_us 20000, $s2/s at 2000 (HZ 250 ticks end a slice at 4 ms at the earliest)"
check "slice_us 20000: 40-55 switches/s ($s20)" within "$s20" 40 55
check "slice_us 2000: at least 3x as many ($s2)" test "$s2" -ge $((3 * s20))
kill $h1 $h2
wait $h1 $h2 2>/dev/null

expect_eq "no reload: the same sched_ext instance" "$seq0" "$(cat /sys/kernel/sched_ext/enable_seq)"
check "the loader did not restart" bash -c "! grep -q reloading $log"

note "refused: out of range, load-time settings, nothing changed"
before=$(build/tidemarkctl show | head -n 1)
expect_fail "slice_us=50 refused" 2 "slice_us must be within 100-100000" \
	build/tidemarkctl set window_us=5000 slice_us=50
expect_fail "timeout_ms refused: a load-time setting" 2 "timeout_ms is fixed for the scheduler's lifetime" \
	build/tidemarkctl set timeout_ms=1000
expect_fail "a boolean takes 0/1/off/on" 2 "be_avoid_homes needs 0, 1, off or on" \
	build/tidemarkctl set be_avoid_homes=maybe
expect_eq "refused sets changed nothing (window_us not applied with the bad slice_us)" "$before" "$(build/tidemarkctl show | head -n 1)"

note "placement off and on at runtime (2 L3 domains)"
in_cgroup online/web sh -c 'while :; do sleep 0.01; done'
web=$!
id=$(stat -c %i $cg/online/web)
key=$(python3 -c 'import struct,sys; print(struct.pack("<Q", int(sys.argv[1])).hex())' "$id")
has_home() { tests/lib/bpfmap.py lookup /sys/fs/bpf/tidemark/homes "$key" >/dev/null 2>&1; }
for i in $(seq 30); do has_home && break; sleep 0.1; done
check "/online/web has a home" has_home || note "$(grep home "$log")"
out=$(build/tidemarkctl set placement=off 2>&1)
check "set placement=off says scx_tidemark applies it" grep -q "placement 1 -> 0 (scx_tidemark applies it within --rescan-ms)" <<<"$out"
for i in $(seq 30); do has_home || break; sleep 0.1; done
check "its home is cleared within --rescan-ms" bash -c "! tests/lib/bpfmap.py lookup /sys/fs/bpf/tidemark/homes $key"
check "the loader says so" grep -q "placement off: every home cleared" "$log"
build/tidemarkctl set placement=on >/dev/null
for i in $(seq 30); do has_home && break; sleep 0.1; done
check "placement=on gives it a home again" has_home
kill $web
wait $web 2>/dev/null
expect_eq "still the same instance" "$seq0" "$(cat /sys/kernel/sched_ext/enable_seq)"

kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"
tap_done
