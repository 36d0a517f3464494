#!/usr/bin/env bash
# vm: --cpus 2 --timeout 300
# plan: 26
# Protection when the scheduler is gone: kill -9 scx_tidemark with BE
# saturating; tidemarkd puts the BE cgroup under CFS (cpu.idle, cpu.max from
# the line) within 0.4 s and the node is back near the line; a tidemarkd
# killed during the fallback leaves records the next one uses; when the
# scheduler is back the original values return exactly. Memory eviction's
# lowered memory.high, left by a killed tidemarkd, is restored at start.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
echo "+cpu +memory" >$cg/cgroup.subtree_control
mkdir -p $cg/online $cg/be
# values of the operator's own, to be found again afterwards
echo "150000 100000" >$cg/be/cpu.max
echo 50 >$cg/be/cpu.weight
orig_max=$(cat $cg/be/cpu.max)
orig_idle=$(cat $cg/be/cpu.idle)

scx() { build/scx_tidemark --online /online --be /be >>/tmp/scx.log 2>&1 & spid=$!; }
scx
wait_state enabled 20 || { not_ok "scheduler loads" "$(cat /tmp/scx.log)"; tap_done; }
ok "scheduler loads"
cat >/tmp/td.json <<EOC
{"version": 1,
 "watermarks": {"cpu": {"forbid_pct": 60, "suppress_pct": 65, "evict_pct": 70}},
 "memory_eviction": {"enabled": false}, "cpu_eviction": {"enabled": false},
 "interference": {"enabled": false},
 "cgroups": {"be": ["/be"], "online": ["/online"]},
 "report": {"listen": "127.0.0.1:9477"}}
EOC
td() { build/tidemarkd --config /tmp/td.json 2>>/tmp/td.log & dpid=$!; }
td
wait_log /tmp/td.log "tidemarkd: running" 10 || { not_ok "daemon starts" "$(cat /tmp/td.log)"; tap_done; }
ok "daemon starts"
in_cgroup be stress-ng --temp-path /tmp --cpu 2 --cpu-method int64 --timeout 200s >/dev/null 2>&1
hogs=$!
sleep 2
b=$(tests/lib/busy.py --windows 1 | awk '{print $2}')
note "under tidemark: node busy $b% (line 65)"
check "no fallback while tidemark runs" test "$(grep -c "strategy=fallback action=enter" /tmp/td.log)" -eq 0
# readiness: what a rollout waits on (answer CODE BODY)
readyz() { local c; c=$(curl -s -o /tmp/readyz -w '%{http_code}' http://127.0.0.1:9477/readyz); echo "$c $(cat /tmp/readyz)"; }
r=$(readyz)
if [[ $r == "200 ready: tidemark is the scheduler"* ]]; then ok "/readyz 200 while tidemark is attached"; else not_ok "/readyz 200 while tidemark is attached" "$r"; fi

# The meter started, and ready, before the kill: its python's start (CPU
# seconds under TCG, SYSTEM use) in the measured seconds is what the
# fallback takes from BE's next second (the line less ONLINE and SYSTEM's
# last second): started at the second's mark, BE read 54% once.
rm -f /tmp/busy.ready /tmp/busy.go
tests/lib/busy.py --ready /tmp/busy.ready --go /tmp/busy.go --windows 2 --cgroup be=/be >/tmp/busy.out &
meter=$!
for _ in $(seq 600); do [ -e /tmp/busy.ready ] && break; sleep 0.1; done
check "the meter is ready" test -e /tmp/busy.ready
sleep 1
note "kill -9 scx_tidemark"
t0=$(date +%s.%N)
kill -9 $spid
wait $spid 2>/dev/null
wait_log /tmp/td.log "strategy=fallback action=enter" 3 || not_ok "fallback entered" "$(tail -3 /tmp/td.log)"
# when the daemon entered, by its own audit line: the shell's polling for
# it (0.1 s, and a grep to start on a node BE saturates) is not the
# daemon's delay (one run read 1.06 s so)
t1=$(sed -n 's/^audit ts=\([0-9.]*\) strategy=fallback action=enter .*/\1/p' /tmp/td.log | head -n 1)
# awk, not python, from here to the windows' end: a python start is CPU
# seconds of SYSTEM use under TCG, taken from BE's next second
dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
# it looks every 250 ms: 0.05-0.25 s in ten CI runs; 0.4 s leaves a
# round of its loop, and a look once a second (the recompute's) misses it.
# No audit time read is a failure, not "now".
if [ -z "$t1" ]; then
	not_ok "fallback within 0.4 s" "no time in the daemon's audit line: $(grep -m1 "strategy=fallback action=enter" /tmp/td.log)"
elif awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a <= 0.4) }'; then ok "fallback entered ${dt}s after the scheduler died (at most 0.4 s)"; else not_ok "fallback within 0.4 s" "${dt}s"; fi
note "$(grep -m1 "strategy=fallback action=enter" /tmp/td.log)"
expect_eq "sched_ext gone" disabled "$(scx_state)"
wait_file $cg/be/cpu.idle 1 2
expect_eq "BE cgroup cpu.idle 1" 1 "$(cat $cg/be/cpu.idle)"
# the second second after the scheduler died: BE back at the line (+5)
sleep "$(awk -v a="$t0" -v now="$(date +%s.%N)" 'BEGIN { d = a + 1 - now; print (d > 0 ? d : 0) }')"
touch /tmp/busy.go
wait $meter
mapfile -t w </tmp/busy.out
note "EEVDF + fallback, 1-2 s and 2-3 s after: ${w[*]}"
b=$(awk '{print $2}' <<<"${w[0]}")
if [ "$b" -le 70 ]; then ok "node busy $b% within 2 s: not above the line + 5 (65)"; else not_ok "node back at the line within 2 s" "busy $b%"; fi
# BE's own share, not the node's: what is not BE (4-6% here) would read
# as BE's in node busy. 59-63% in ten CI runs at a 65 line.
read -r _ b _ _ _ bbe _ <<<"${w[1]}"
if is_num "$b" "$bbe" && within "$bbe" 55 70 && [ "$b" -le 70 ]; then
	ok "and BE gets the line's worth, 2-3 s after (BE $bbe%, node $b%)"
else
	not_ok "BE gets the line's worth, 2-3 s after (BE 55-70%, node at most 70%)" "BE ${bbe:-none}%, node ${b:-none}%"
fi
note "cpu.max during the fallback: $(cat $cg/be/cpu.max)"
m=$(curl -s http://127.0.0.1:9477/metrics | grep '^tidemark_fallback_active ')
expect_eq "metric tidemark_fallback_active" "tidemark_fallback_active 1" "$m"
r=$(readyz)
if [[ $r == "503 not ready: tidemark is not attached: "*"the CFS fallback holds BE meanwhile"* ]]; then
	ok "/readyz 503 with the scheduler dead, the fallback named"
else
	not_ok "/readyz 503 with the scheduler dead, the fallback named" "$r"
fi

note "kill -9 tidemarkd during the fallback, start another"
kill -9 $dpid
wait $dpid 2>/dev/null
check "records left in /run/tidemark/saved.json" grep -q '"owner": "fallback"' /run/tidemark/saved.json
td
wait_log /tmp/td.log "recorded_values=3" 10 && ok "the new tidemarkd takes over the records (3 values)" || not_ok "the new tidemarkd takes over the records" "$(grep fallback /tmp/td.log | tail -2)"
sleep 1.5
check "still limited (cpu.idle 1) while the scheduler is away" test "$(cat $cg/be/cpu.idle)" = 1

note "scheduler back"
scx
wait_state enabled 20 || not_ok "scheduler loads again" "$(tail -3 /tmp/scx.log)"
t0=$(date +%s.%N)
wait_log /tmp/td.log "strategy=fallback action=leave" 5 || not_ok "fallback left" "$(tail -3 /tmp/td.log)"
t1=$(date +%s.%N)
dt=$(python3 -c "print(round($t1 - $t0, 2))")
if python3 -c "import sys; sys.exit(not $t1 - $t0 <= 2.0)"; then ok "fallback left ${dt}s after the scheduler was enabled"; else not_ok "fallback left within 2 s" "${dt}s"; fi
note "$(grep "strategy=fallback action=leave" /tmp/td.log | tail -1)"
# all three at once, cpu.idle before the cpu.weight saved ahead of it (a
# weight written while the cgroup is idle is refused, and cpu.idle 0 resets it)
check "every recorded value put back as it leaves (restored=3 gone=0)" \
	grep -q "strategy=fallback action=leave .*restored=3 gone=0 " /tmp/td.log
# its maps are pinned just after it attaches (what the fallback waits on)
for _ in $(seq 50); do r=$(readyz); [[ $r == 200* ]] && break; sleep 0.1; done
if [[ $r == "200 ready: tidemark is the scheduler"* ]]; then ok "/readyz 200 again within 5 s of the scheduler's return"; else not_ok "/readyz 200 again within 5 s of the scheduler's return" "$r"; fi
expect_eq "cpu.max restored exactly" "$orig_max" "$(cat $cg/be/cpu.max)"
expect_eq "cpu.idle restored exactly" "$orig_idle" "$(cat $cg/be/cpu.idle)"
expect_eq "cpu.weight untouched" 50 "$(cat $cg/be/cpu.weight)"
check "no records left" grep -q '"saved": \[\]' /run/tidemark/saved.json
kill $dpid
wait $dpid

# written under tidemark 0.6.0's name for memory eviction (memevict): the
# renamed strategy takes the record over
note "memory.high left lowered by a killed tidemarkd (0.6.0's record) is restored at start"
orig_high=$(cat $cg/be/memory.high)
echo 100000000 >$cg/be/memory.high
printf '{"version": 1, "saved": [{"owner": "memevict", "cgroup": "/be", "file": "memory.high", "value": "%s"}]}\n' "$orig_high" >/run/tidemark/saved.json
td
check "restored by memory_eviction, the record's owner as named now" \
	wait_log /tmp/td.log "strategy=memory_eviction action=unthrottle.*restored=1" 10
expect_eq "memory.high back to $orig_high" "$orig_high" "$(cat $cg/be/memory.high)"
echo '{"version": 1, "saved": [{"owner": "memory_eviction"}]}' >/run/tidemark/saved.json
kill $dpid
wait $dpid
out=$(build/tidemarkd --config /tmp/td.json 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "saved.json: entry 0 is not" <<<"$out"; then ok "a damaged record file is refused, named"; else not_ok "a damaged record file is refused" "$rc: $out"; fi

kill $hogs 2>/dev/null
wait $hogs 2>/dev/null
kill -INT $spid
wait $spid
expect_eq "loader exits 0" 0 "$?"
tap_done
