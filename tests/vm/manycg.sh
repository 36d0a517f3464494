#!/usr/bin/env bash
# vm: --cpus 2 --mem 2048 --timeout 500
# plan: 12
# pool: which cgroup is killed and what the report lists; its waits poll, nothing timed
# No silent caps: with 600 BE cgroups the memory hog far down the glob order
# (/be/j590; the eviction candidates used to stop at the first 256) is the
# one killed, once; the innocents before it keep running with memory.high
# put back; /report lists every cgroup. Then 1,000 BE cgroups: tidemarkd's
# CPU and memory reported.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
echo "+cpu +memory" >$cg/cgroup.subtree_control
mkdir -p $cg/online $cg/be
echo "+cpu +memory" >$cg/be/cgroup.subtree_control
mkdir -p $cg/be/j{000..599} # one process: a fork and exec costs ~0.1 s here

sched_start --online /online --be /be
spid=$sched_pid

mem_pct() { awk '/^MemTotal/{t=$2} /^MemAvailable/{a=$2} END{print int((t-a)*100/t)}' /proc/meminfo; }
total_mib=$(awk '/^MemTotal/{print int($2/1024)}' /proc/meminfo)
# innocents early in the glob order, 10 MiB each
innocents="j001 j002 j100 j255"
for j in $innocents; do
	in_cgroup be/$j python3 -c 'import time; b = bytearray(10 << 20); b[::4096] = b"x" * len(b[::4096]); time.sleep(600)'
done
sleep 3
base=$(mem_pct)
evict=$((base + 20))
lower=$((evict - 3))
note "memory: ${total_mib} MiB, ${base}% used; evict at ${evict}%, down to ${lower}%"
cat >/tmp/td.json <<EOC
{"version": 1,
 "watermarks": {"cpu": {"forbid_pct": 50, "suppress_pct": 60, "evict_pct": 90},
                "memory": {"forbid_pct": $((lower - 1)), "evict_lower_pct": $lower, "evict_pct": $evict}},
 "memory_eviction": {"poll_ms": 100, "cooldown_ms": 1000},
 "cpu_eviction": {"enabled": false},
 "cgroups": {"be": ["/be/*"], "online": ["/online"]},
 "report": {"listen": "127.0.0.1:9477", "sample_s": 1}}
EOC
daemon_start
dpid=$daemon_pid

hog_mib=$((total_mib * (evict - base + 15) / 100))
in_cgroup be/j590 stress-ng --temp-path /tmp --vm 1 --vm-bytes ${hog_mib}M --vm-keep --vm-populate --timeout 90s
gone=
for _ in $(seq 300); do
	if [ -z "$(cat $cg/be/j590/cgroup.procs)" ]; then gone=1; break; fi
	sleep 0.1
done
if [ -n "$gone" ]; then ok "the hog at glob position 590 of 600 killed"; else not_ok "the hog at glob position 590 killed" "$(grep memory_eviction /tmp/td.log | tail -5)"; fi
sleep 5 # five cool-downs pass: nothing more may be killed or written again
kills=$(grep -c "strategy=memory_eviction action=kill" /tmp/td.log)
expect_eq "one kill written, no repeats" 1 "$kills"
check "the kill names /be/j590" grep -q "strategy=memory_eviction action=kill.*cgroup=/be/j590" /tmp/td.log
alive=0
for j in $innocents; do [ -n "$(cat $cg/be/$j/cgroup.procs)" ] && alive=$((alive + 1)); done
expect_eq "the four innocents still run" 4 "$alive"
zero=$(grep "action=throttle" /tmp/td.log | grep -v "cgroup=/be/j590" | grep -c "memory_high=0 ")
expect_eq "no innocent's memory.high set to 0" 0 "$zero"
highs=$(for j in $innocents; do cat $cg/be/$j/memory.high; done | sort -u | tr '\n' ' ')
expect_eq "memory.high put back on the innocents after the episode" "max " "$highs"
note "$(grep "strategy=memory_eviction" /tmp/td.log | grep -v "action=throttle" | head -4)"

n=$(curl -s http://127.0.0.1:9477/report | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["cgroups"]))')
if [ "${n:-0}" -ge 601 ]; then ok "/report lists every cgroup ($n: 600 BE and /online)"; else not_ok "/report lists every cgroup" "$n"; fi
hits=$(curl -s http://127.0.0.1:9477/metrics | awk '/^tidemark_limit_hits_total/ { s += $2 } END { print s + 0 }')
expect_eq "no table limit hit at 600 cgroups" 0 "$hits"

# 1,000 BE cgroups, each with a task: what tidemarkd costs at rest (the
# memory line moved out of the way: 1,000 tasks take more than the 20
# points left under it, and evictions would be measured instead)
sed -i 's/"evict_pct": [0-9]*}/"evict_pct": 95}/; s/"evict_lower_pct": [0-9]*/"evict_lower_pct": 90/; s/"memory": {"forbid_pct": [0-9]*/"memory": {"forbid_pct": 85/' /tmp/td.json
kill -HUP $dpid
wait_log /tmp/td.log "configuration reloaded" 10 || not_ok "memory line moved to 95%" "$(tail -3 /tmp/td.log)"
kills0=$(grep -c "action=kill" /tmp/td.log)
f0=$(date +%s)
mkdir -p $cg/be/j{600..999}
# each task a forked shell waiting on a FIFO no one writes: no exec each
mkfifo /tmp/never
for i in $(seq -w 0 999); do
	read -r first <$cg/be/j$i/cgroup.procs 2>/dev/null
	[ -n "$first" ] && { first=""; continue; }
	(echo $BASHPID >$cg/be/j$i/cgroup.procs && read -r _ <>/tmp/never) &
done
note "1,000 BE cgroups made and filled in $(($(date +%s) - f0)) s"
sleep 5
ticks() { awk '{ print $14 + $15 }' /proc/$dpid/stat; }
# 5 s: 50 of its rounds; the CPU figure is noted, not judged (a speed
# target belongs in make bench), and 20 s cost make test 15 s more
t0=$(ticks)
s0=$(date +%s%N)
sleep 5
t1=$(ticks)
s1=$(date +%s%N)
hz=$(getconf CLK_TCK)
cpu=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v ns=$((s1 - s0)) 'BEGIN { printf "%.1f", 100 * t / hz / (ns / 1e9) }')
rss=$(awk '/^VmRSS/ { print $2 }' /proc/$dpid/status)
note "tidemarkd at 1,000 BE cgroups: ${cpu}% of one CPU over 5 s (utime+stime), VmRSS ${rss} kB"
n=$(curl -s http://127.0.0.1:9477/report | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["cgroups"]))')
if [ "${n:-0}" -ge 1001 ]; then ok "/report lists all 1,000 BE cgroups ($n); tidemarkd ${cpu}% CPU, ${rss} kB"; else not_ok "/report lists all 1,000 BE cgroups" "$n"; fi
# 16-18 MB in ten CI runs; a leak of 1 kB per cgroup and round would be
# 50 MB more here. The CPU figure is TCG's (42-92% of one CPU in the same
# runs): a bench figure, not judged here.
if is_num "$rss" && [ "$rss" -le 24576 ]; then ok "tidemarkd's memory at 1,000 BE cgroups at most 24 MiB (VmRSS ${rss} kB)"; else not_ok "tidemarkd's memory at 1,000 BE cgroups at most 24 MiB" "VmRSS ${rss:-none} kB"; fi
expect_eq "no kill while 1,000 cgroups were measured" "$kills0" "$(grep -c "action=kill" /tmp/td.log)"
check "tidemarkd still running" kill -0 $dpid
kill $dpid
wait $dpid
kill -INT $spid
wait $spid
tap_done
