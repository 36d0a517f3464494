#!/usr/bin/env bash
# vm: --cpus 2 --timeout 300
# plan: 17
# Per-cgroup BE CPU cap (map be_caps, tidemarkctl cap): a capped BE cgroup
# runs at its cap while another BE cgroup takes the rest; removing the cap
# gives it its share back; a cap below the cgroup's own cpu.max quota
# holds (the lesser of the two wins). The cap is what the interference ladder's
# "throttle" step uses (cgroup cpu.max is not enforced for sched_ext tasks).
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
mkdir -p $cg/be/a/sub $cg/be/b
sched_start --be /be
pid=$sched_pid
ok "scheduler loads"
# the line out of the way: the cap is the only limit on /be/a
build/tidemarkctl set suppress_pct=100 >/dev/null

out=$(build/tidemarkctl cap /be/a 0 2>&1)
expect_eq "cap 0 refused (exit 2)" 2 "$?"
check "the error names the value" grep -q "cap '0' must be 1-512000" <<<"$out"
out=$(build/tidemarkctl cap /be/nonexistent 300 2>&1)
check "cap on a missing cgroup refused" test $? -ne 0
check "the error names the path" grep -q "nonexistent" <<<"$out"

HOG="stress-ng --temp-path /tmp --cpu-method int64 --cpu 2 --timeout 60s"
in_cgroup be/a/sub $HOG >/dev/null 2>&1
ha=$!
in_cgroup be/b $HOG >/dev/null 2>&1
hb=$!
sleep 1
out=$(build/tidemarkctl cap /be/a 300)
check "cap /be/a at 300 mCPU ($out)" grep -q "2 cgroups" <<<"$out"
tests/lib/busy.py --delay 1 --windows 3 --seconds 2 --cgroup a=/be/a --cgroup b=/be/b >/tmp/w1
while read -r l; do note "capped: $l"; done </tmp/w1
a=$(awk '{s+=$6} END{print int(s/NR)}' /tmp/w1)
b=$(awk '{s+=$8} END{print int(s/NR)}' /tmp/w1)
# 300 mCPU of 2 CPUs = 15% of the node
if within "$a" 10 20; then ok "capped cgroup at ~15% of the node ($a%)"; else not_ok "capped cgroup at ~15% of the node" "a $a% b $b%"; fi
if [ "$b" -ge 70 ]; then ok "the other BE cgroup takes the rest ($b%)"; else not_ok "the other BE cgroup takes the rest" "a $a% b $b%"; fi

# the cgroup's own quota above the cap: the cap moved to the cgroup the
# hogs run in (its parent uncapped), which gets 1 CPU (half the node) of
# cpu.max; the cap, 15%, still holds
build/tidemarkctl cap /be/a off >/dev/null
out=$(build/tidemarkctl cap /be/a/sub 300)
cg_make be/a/sub
echo "100000 100000" >$cg/be/a/sub/cpu.max
check "/be/a/sub alone capped at 300 mCPU ($out), its cpu.max 1 CPU" \
	test "$(grep -c '(1 cgroup)' <<<"$out")|$(cat $cg/be/a/sub/cpu.max)" = "1|100000 100000"
tests/lib/busy.py --delay 0.5 --windows 2 --seconds 2 --cgroup a=/be/a --cgroup b=/be/b >/tmp/w1q
while read -r l; do note "capped under cpu.max 1 CPU: $l"; done </tmp/w1q
a=$(awk '{s+=$6} END{print int(s/NR)}' /tmp/w1q)
b=$(awk '{s+=$8} END{print int(s/NR)}' /tmp/w1q)
if within "$a" 10 20; then ok "capped below its cpu.max (1 CPU, 50%): still ~15% of the node ($a%)"; else
	not_ok "capped below its cpu.max (1 CPU, 50%): still ~15% of the node" "a $a% b $b%"
fi
echo "max 100000" >$cg/be/a/sub/cpu.max || not_ok "cpu.max lifted" "$(cat $cg/be/a/sub/cpu.max)"
build/tidemarkctl cap /be/a/sub off >/dev/null
build/tidemarkctl cap /be/a 300 >/dev/null

out=$(build/tidemarkctl cap /be/a off)
check "cap removed ($out)" grep -q "removed" <<<"$out"
tests/lib/busy.py --delay 1 --windows 2 --seconds 2 --cgroup a=/be/a --cgroup b=/be/b >/tmp/w2
while read -r l; do note "uncapped: $l"; done </tmp/w2
a=$(awk '{s+=$6} END{print int(s/NR)}' /tmp/w2)
b=$(awk '{s+=$8} END{print int(s/NR)}' /tmp/w2)
if within "$a" 35 65; then ok "uncapped: back to about half ($a% vs $b%)"; else not_ok "uncapped: back to about half" "a $a% b $b%"; fi

# A cap left by a tidemarkd killed mid-episode (owner 1, written here with
# bpftool) is cleared by the next tidemarkd; an operator's cap stays.
build/tidemarkctl cap /be/a 300 >/dev/null
idb=$(stat -c %i $cg/be/b)
hex8() { python3 -c 'import struct,sys; print(struct.pack(sys.argv[1], *map(int, sys.argv[2:])).hex())' "$@"; }
caps=/sys/fs/bpf/tidemark/be_caps
tests/lib/bpfmap.py update $caps "$(hex8 "<Q" "$idb")" "$(hex8 "<II" 300 1)"
check "stale tidemarkd cap written for /be/b ($(tests/lib/bpfmap.py lookup $caps "$(hex8 "<Q" "$idb")" | cut -c1-16))" tests/lib/bpfmap.py lookup $caps "$(hex8 "<Q" "$idb")"
cat >/tmp/td.json <<EOC
{"version": 1, "memory_eviction": {"enabled": false}, "cpu_eviction": {"enabled": false},
 "cgroups": {"be": ["/be/*"]}, "report": {"listen": "127.0.0.1:9477"}}
EOC
build/tidemarkd --config /tmp/td.json 2>/tmp/td.log &
dpid=$!
if wait_log /tmp/td.log "action=clear_stale_caps dry_run=false cgroups=1 " 10; then ok "tidemarkd clears the stale cap (1 cgroup)"; else not_ok "tidemarkd clears the stale cap" "$(cat /tmp/td.log)"; fi
if tests/lib/bpfmap.py lookup $caps "$(hex8 "<Q" "$idb")" >/dev/null; then not_ok "/be/b's stale cap gone"; else ok "/be/b's stale cap gone"; fi
ida=$(stat -c %i $cg/be/a)
check "the operator's cap on /be/a stays" tests/lib/bpfmap.py lookup $caps "$(hex8 "<Q" "$ida")"
kill $dpid
wait $dpid

kill $ha $hb 2>/dev/null
wait $ha $hb 2>/dev/null
kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"
tap_done
