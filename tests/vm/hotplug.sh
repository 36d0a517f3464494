#!/usr/bin/env bash
# vm: --cpus 4 --icount --timeout 400
# plan: 11
# The watermark's capacity follows the CPUs that are online: with a CPU
# taken offline the kernel has the scheduler restart, the loader counts the
# online CPUs again, and BE holds at suppress_pct of what is left (counting
# the offline CPU would let BE take 4 x 40% = 1.6 CPUs, 53% of the 3 left).
# The line set at runtime before the restart is the one kept.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
pins=/sys/fs/bpf/tidemark
mkdir -p $cg/be
log=/tmp/scx.log
sched_start --be /be --suppress-pct 50
pid=$sched_pid
ok "scheduler loads on 4 CPUs"

hex() { python3 -c 'import struct,sys; print(struct.pack(sys.argv[1], *map(int, sys.argv[2:])).hex())' "$@"; }
cap_cpus() {
	tests/lib/bpfmap.py lookup $pins/abi "$(hex "<I" 0)" |
		python3 -c 'import struct,sys; print(struct.unpack("<IIII", bytes.fromhex(sys.stdin.read().strip())[:16])[2])'
}
expect_eq "capacity counts 4 CPUs" 4 "$(cap_cpus)"

in_cgroup be stress-ng --temp-path /tmp --cpu-method int64 --cpu 4 --timeout 120s >/dev/null 2>&1
hogs=$!
mapfile -t w < <(tests/lib/busy.py --delay 2 --windows 2)
for l in "${w[@]}"; do note "4 CPUs online: $l"; done
b=$(awk '{s+=$2} END{print int(s/NR+0.5)}' < <(printf '%s\n' "${w[@]}"))
if within "$b" 45 55; then ok "BE at 50% of 4 CPUs ($b%)"; else not_ok "BE at 50% of 4 CPUs" "busy $b%"; fi

# a line set at runtime (as tidemarkd sets its own) survives the restart
build/tidemarkctl set suppress_pct=40 >/dev/null
# each hotplug is a restart: wait for its reload by the count of "loaded"
# lines, not a fixed sleep
nload=$(grep -c "scx_tidemark: loaded" "$log")
echo 0 >/sys/devices/system/cpu/cpu3/online
if wait_log "$log" "asked for a restart" 20; then ok "CPU 3 offline: the kernel asks for a restart"; else not_ok "CPU 3 offline: restart" "$(tail -5 $log)"; fi
wait_log_count "$log" "scx_tidemark: loaded" $((nload + 1)) 30
wait_state enabled 20
expect_eq "scheduler back" enabled "$(scx_state)"
for i in $(seq 50); do [ -e $pins/abi ] && break; sleep 0.1; done
expect_eq "capacity counts the 3 online CPUs" 3 "$(cap_cpus)"
check "the runtime line kept through the restart (40, not the command line's 50)" \
	grep -q "^suppress_pct=40 " <<<"$(build/tidemarkctl show)"
check "the loader says so" grep -q "tunables kept from the previous instance (suppress_pct=40" "$log"
mapfile -t w < <(tests/lib/busy.py --delay 2 --windows 2)
for l in "${w[@]}"; do note "3 CPUs online: $l"; done
b=$(awk '{s+=$2} END{print int(s/NR+0.5)}' < <(printf '%s\n' "${w[@]}"))
if within "$b" 35 45; then ok "BE at 40% of the 3 online CPUs ($b%; counting 4 would give 53%)"; else not_ok "BE at 40% of the 3 online CPUs" "busy $b% of 3 CPUs"; fi

echo 1 >/sys/devices/system/cpu/cpu3/online
wait_log_count "$log" "scx_tidemark: loaded" $((nload + 2)) 30
wait_state enabled 20
for i in $(seq 50); do [ "$(cap_cpus 2>/dev/null)" = 4 ] && break; sleep 0.1; done
expect_eq "CPU 3 back: capacity counts 4 again" 4 "$(cap_cpus)"

kill $hogs 2>/dev/null
wait $hogs 2>/dev/null
kill -INT $pid
wait $pid
expect_eq "scheduler exits cleanly" 0 "$?"
tap_done
