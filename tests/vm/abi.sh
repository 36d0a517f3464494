#!/usr/bin/env bash
# vm: --cpus 2 --timeout 300
# plan: 19
# pool: loads, refusals and the ABI; its waits poll, nothing timed
# The pinned-map ABI: the scheduler publishes its version; tidemarkctl and
# tidemarkd refuse a scheduler of another version with a message naming
# both, and work again once it matches. Tunables written by concurrent
# writers through the scheduler's tunables_update lose nothing.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
pins=/sys/fs/bpf/tidemark
want=$(sed -n 's/^#define TM_ABI_VERSION \([0-9]*\).*/\1/p' bpf/tidemark_abi.h)
mkdir -p $cg/be $cg/t
sched_start --be /be
pid=$sched_pid
ok "scheduler loads"

hex() { python3 -c 'import struct,sys; print(struct.pack(sys.argv[1], *map(int, sys.argv[2:])).hex())' "$@"; }
abi=$(tests/lib/bpfmap.py lookup $pins/abi "$(hex "<I" 0)" | cut -c1-32)
ver=$(python3 -c 'import struct,sys; print(struct.unpack("<IIII", bytes.fromhex(sys.argv[1]))[0])' "$abi")
expect_eq "the scheduler publishes ABI version $want" "$want" "$ver"
for p in classes tunables stats cg_waits homes be_caps tunables_update cg_bw bw_update abi; do
	[ -e $pins/$p ] || missing="$missing $p"
done
expect_eq "every pinned object is there" "" "${missing:-}"

# concurrent writers: each loop changes its own field; none may be lost
gen0=$(build/tidemarkctl show | sed -n 's/.*class_gen=\([0-9]*\).*/\1/p')
(for i in $(seq 100 139); do build/tidemarkctl set max_be_wait_ms=$i >/dev/null || echo fail; done) >/tmp/wa &
wa=$!
(for i in $(seq 200 239); do build/tidemarkctl set be_floor_mcpu=$i >/dev/null || echo fail; done) >/tmp/wb &
wb=$!
(for i in $(seq 1 20); do build/tidemarkctl class /t be >/dev/null && build/tidemarkctl class /t none >/dev/null || echo fail; done) >/tmp/wc &
wc=$!
wait $wa $wb $wc
expect_eq "no concurrent write failed" "" "$(cat /tmp/wa /tmp/wb /tmp/wc)"
show=$(build/tidemarkctl show | head -n 1)
note "after: $show"
check "the last max_be_wait_ms kept (139)" grep -q "max_be_wait_ms=139 " <<<"$show"
check "the last be_floor_mcpu kept (239)" grep -q "be_floor_mcpu=239 " <<<"$show"
gen1=$(sed -n 's/.*class_gen=\([0-9]*\).*/\1/p' <<<"$show")
if [ $((gen1 - gen0)) -ge 40 ]; then ok "every class change bumped class_gen ($gen0 -> $gen1, 40 changes)"; else not_ok "every class change bumped class_gen" "$gen0 -> $gen1"; fi
out=$(build/tidemarkctl set be_floor_mcpu=1900 2>&1)
expect_eq "a floor above the line refused (exit 2)" 2 "$?"
check "the error says why ($out)" grep -q "above the suppress line" <<<"$out"
check "nothing changed" grep -q "be_floor_mcpu=239 " <<<"$(build/tidemarkctl show | head -n 1)"

# a scheduler of another ABI version
tests/lib/bpfmap.py update $pins/abi "$(hex "<I" 0)" "$(hex "<IIII" 999 0 0 0)"
out=$(build/tidemarkctl show 2>&1)
check "tidemarkctl refuses another ABI version" test $? -ne 0
check "its error names both versions ($out)" grep -q "version 999, tidemarkctl is built for version $want" <<<"$out"
out=$(build/tidemarkctl set suppress_pct=50 2>&1)
check "and changes nothing" test $? -ne 0
cat >/tmp/td.json <<EOC
{"version": 1, "memory_eviction": {"enabled": false}, "cpu_eviction": {"enabled": false},
 "interference": {"enabled": false}, "cgroups": {"be": ["/be"]},
 "watermarks": {"cpu": {"forbid_pct": 30, "suppress_pct": 40}}, "report": {"listen": "127.0.0.1:9477"}}
EOC
build/tidemarkd --config /tmp/td.json 2>/tmp/td.log &
dpid=$!
if wait_log /tmp/td.log "version 999, tidemarkd is built for version $want" 10; then ok "tidemarkd names both versions"; else not_ok "tidemarkd names both versions" "$(cat /tmp/td.log)"; fi
sleep 2
check "tidemarkd leaves the tunables alone (suppress_pct still 65)" grep -q "suppress_pct=65 " <<<"$(tests/lib/bpfmap.py lookup $pins/tunables "$(hex "<I" 0)" | python3 -c 'import struct,sys; v=struct.unpack("<IIII", bytes.fromhex(sys.stdin.read().strip())[:16]); print("suppress_pct=%d " % v[0])' 2>&1)"
expect_eq "said once, not every tick" 1 "$(grep -c 'version 999' /tmp/td.log)"

tests/lib/bpfmap.py update $pins/abi "$(hex "<I" 0)" "$abi"
if wait_log /tmp/td.log "action=set" 15; then ok "matching again: tidemarkd applies its line"; else not_ok "matching again: tidemarkd applies its line" "$(cat /tmp/td.log)"; fi
check "suppress_pct 40 applied" grep -q "suppress_pct=40 " <<<"$(build/tidemarkctl show | head -n 1)"
kill $dpid
wait $dpid

kill -INT $pid
wait $pid
rc=$?
expect_eq "scheduler exits cleanly" 0 "$rc"
tap_done
