#!/usr/bin/env bash
# vm: --cpus 2 --timeout 120
# ONLINE cgroups share the CPUs by cgroup cpu.weight (set before and changed
# while the scheduler runs).
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
echo +cpu >$cg/cgroup.subtree_control
mkdir -p $cg/svc/a $cg/svc/b
echo +cpu >$cg/svc/cgroup.subtree_control
echo 100 >$cg/svc/a/cpu.weight
echo 300 >$cg/svc/b/cpu.weight
log=/tmp/scx.log
build/scx_tidemark --online /svc >"$log" 2>&1 &
pid=$!
wait_state enabled 10 || { not_ok "scheduler loads" "$(cat $log)"; tap_done; }
ok "scheduler loads"

HOG="stress-ng --temp-path /tmp --cpu-method int64 --cpu 2 --timeout 60s"
tests/lib/busy.py --delay 2 --windows 2 --seconds 2 --cgroup a=/svc/a --cgroup b=/svc/b >/tmp/w1 &
m=$!
in_cgroup svc/a $HOG >/dev/null 2>&1
ha=$!
in_cgroup svc/b $HOG >/dev/null 2>&1
hb=$!
wait $m
while read -r l; do note "weights 100/300: $l"; done </tmp/w1
a=$(awk '{s+=$6} END{print int(s/NR)}' /tmp/w1)
b=$(awk '{s+=$8} END{print int(s/NR)}' /tmp/w1)
if within "$a" 15 35 && within "$b" 65 85; then ok "cpu.weight 100 vs 300 -> 25/75 +-10 ($a/$b)"; else not_ok "cpu.weight 100 vs 300 -> 25/75 +-10" "a $a% b $b%"; fi

tests/lib/busy.py --delay 1.5 --windows 2 --seconds 2 --cgroup a=/svc/a --cgroup b=/svc/b >/tmp/w2 &
m=$!
echo 300 >$cg/svc/a/cpu.weight
echo 100 >$cg/svc/b/cpu.weight
wait $m
while read -r l; do note "weights 300/100: $l"; done </tmp/w2
a=$(awk '{s+=$6} END{print int(s/NR)}' /tmp/w2)
b=$(awk '{s+=$8} END{print int(s/NR)}' /tmp/w2)
if within "$a" 65 85 && within "$b" 15 35; then ok "weights swapped at runtime followed: 75/25 +-10 ($a/$b)"; else not_ok "weights swapped at runtime followed: 75/25 +-10" "a $a% b $b%"; fi
kill $ha $hb 2>/dev/null
wait $ha $hb

kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"
tap_done
