#!/usr/bin/env bash
# vm: --cpus 2 --timeout 240
# plan: 18
# The CPU evict watermark (tidemarkd cpu_high): BE alone at the 65% line
# leaves the node under evict_pct 70, nothing happens. ONLINE at ~85% of
# the node leaves BE only its floor, the node runs near 90%: dry-run
# decides and kills nothing, then the real run kills the lowest priority BE
# cgroup, waits the cool-down, judges a fresh window and kills the next;
# with no BE left nothing more happens although ONLINE alone stays above.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
CG_CONTROLLERS="+cpu +memory" cg_make online be/a be/b
sched_start --online /online --be /be --suppress-pct 65
spid=$sched_pid
ok "scheduler loads"

config() { # dry_run
	cat >/tmp/td.json <<EOC
{"version": 1,
 "watermarks": {"cpu": {"forbid_pct": 60, "suppress_pct": 65, "evict_pct": 70, "evict_window_s": 3}},
 "memory_eviction": {"enabled": false},
 "interference": {"enabled": false},
 "cpu_eviction": {"dry_run": $1, "lower_pct": 1, "upper_pct": 2, "cooldown_s": 4, "max_per_round": 1},
 "cgroups": {"be": [{"path": "/be/b", "priority": -1}, "/be/a"], "online": ["/online"]},
 "report": {"listen": "127.0.0.1:9477"}}
EOC
}
config true
in_cgroup be/a timeout 200 bash -c 'while :; do :; done'
a=$!
in_cgroup be/b timeout 200 bash -c 'while :; do :; done'
b=$!
daemon_start
dpid=$daemon_pid
ok "daemon starts"
sleep 8
r=$(curl -s http://127.0.0.1:9477/report)
pct=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["cpu_high"]["node_cpu_pct"])' "$r" 2>&1)
note "BE alone: node CPU over the window $pct%"
if ! grep -q "strategy=cpu_high" /tmp/td.log; then ok "BE alone at the 65% line: no eviction"; else not_ok "BE alone: no eviction" "$(grep cpu_high /tmp/td.log)"; fi
if python3 -c 'import sys; sys.exit(not 55 <= float(sys.argv[1]) <= 70)' "$pct" 2>/dev/null; then
	ok "/report cpu_high.node_cpu_pct near the line ($pct)"
else
	not_ok "/report cpu_high.node_cpu_pct near the line" "$pct"
fi

note "ONLINE at ~85% of the node"
in_cgroup online stress-ng --temp-path /tmp --cpu 2 --cpu-method int64 --cpu-load 85 --timeout 200s >/dev/null 2>&1
on=$!
wait_log /tmp/td.log "strategy=cpu_high action=kill dry_run=true" 30 && ok "dry-run decides a kill" || not_ok "dry-run decides a kill" "$(tail -5 /tmp/td.log)"
line=$(grep -m1 "strategy=cpu_high" /tmp/td.log)
note "$line"
if grep -q "cgroup=/be/b " <<<"$line"; then ok "the victim is the lowest priority BE cgroup"; else not_ok "victim is /be/b" "$line"; fi
node=$(sed -n 's/.*node_cpu_pct=\([0-9.]*\).*/\1/p' <<<"$line")
if python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 70)' "$node" 2>/dev/null; then ok "node above evict_pct when decided ($node%)"; else not_ok "node above evict_pct" "'$node'"; fi
check "the audit line names the scheduler as the source" grep -q "source=scheduler" <<<"$line"
if kill -0 $a && kill -0 $b; then ok "dry-run killed nothing"; else not_ok "dry-run killed nothing"; fi

config false
kill -HUP $dpid
wait_log /tmp/td.log "strategy=cpu_high action=kill dry_run=false" 30 && ok "real run kills" || not_ok "real run kills" "$(tail -5 /tmp/td.log)"
sleep 1
if ! kill -0 $b 2>/dev/null; then ok "/be/b killed first"; else not_ok "/be/b killed first"; fi
if kill -0 $a 2>/dev/null; then ok "/be/a spared in that round"; else not_ok "/be/a spared in that round"; fi
t0=$(date +%s)
for _ in $(seq 300); do
	[ "$(grep -c "strategy=cpu_high action=kill dry_run=false" /tmp/td.log)" -ge 2 ] && break
	sleep 0.1
done
dt=$(($(date +%s) - t0))
if [ "$(grep -c "strategy=cpu_high action=kill dry_run=false" /tmp/td.log)" -ge 2 ]; then ok "next round after the cool-down and a fresh window kills /be/a (${dt}s)"; else not_ok "next round kills /be/a" "$(grep cpu_high /tmp/td.log)"; fi
if grep "strategy=cpu_high action=kill dry_run=false" /tmp/td.log | tail -1 | grep -q "cgroup=/be/a "; then ok "second victim /be/a"; else not_ok "second victim /be/a" "$(grep cpu_high /tmp/td.log | tail -1)"; fi
sleep 9
n=$(grep -c "strategy=cpu_high action=kill dry_run=false" /tmp/td.log)
expect_eq "no BE left: ONLINE alone above the line kills nothing more" 2 "$n"
kill -0 $on && ok "ONLINE untouched" || not_ok "ONLINE untouched"
m=$(curl -s http://127.0.0.1:9477/metrics | grep '^tidemark_node_cpu_window_ratio ')
note "$m"
if [ -n "$m" ]; then ok "/metrics has tidemark_node_cpu_window_ratio"; else not_ok "/metrics has tidemark_node_cpu_window_ratio"; fi

kill $dpid
wait $dpid
kill $on 2>/dev/null
wait $on $a $b 2>/dev/null
kill -INT $spid
wait $spid
expect_eq "loader exits 0" 0 "$?"
tap_done
