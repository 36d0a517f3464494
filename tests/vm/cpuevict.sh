#!/usr/bin/env bash
# vm: --cpus 2 --timeout 240
# plan: 14
# Satisfaction-based CPU eviction (tidemarkd cpu_eviction): BE requests ~2 CPUs
# (a 1000m job, and a kubelet BestEffort pod: cpu.weight 1, no request, so
# default_request_mcpu 1000);
# with no ONLINE load the node lets BE have 65% of 2 CPUs (satisfaction
# ~65%, above the 60% bound: nothing happens). An ONLINE surge takes a CPU,
# BE's budget falls to ~0.3 CPU (satisfaction ~15%) for the whole window:
# dry-run decides and does nothing, then the real run kills the lowest
# priority BE cgroup, one per round, and spares the other.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
echo "+cpu +memory" >$cg/cgroup.subtree_control
mkdir -p $cg/online $cg/be
echo "+cpu +memory" >$cg/be/cgroup.subtree_control
mkdir -p $cg/be/low
# a BestEffort pod as kubelet (systemd driver) makes it: weight 1, no quota
bep=kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234.slice
mkdir -p $cg/kubepods.slice
echo "+cpu +memory" >$cg/kubepods.slice/cgroup.subtree_control
mkdir -p $cg/kubepods.slice/kubepods-besteffort.slice
echo "+cpu +memory" >$cg/kubepods.slice/kubepods-besteffort.slice/cgroup.subtree_control
mkdir -p $cg/$bep
echo 1 >$cg/kubepods.slice/kubepods-besteffort.slice/cpu.weight
echo 1 >$cg/$bep/cpu.weight
# kubelet rules (auto) make the pod BE
sched_start --online /online --be /be --suppress-pct 65
spid=$sched_pid
ok "scheduler loads"

config() { # dry_run
	# a dry-run kill starts the cool-down too: the real run's kill comes
	# cooldown_s after it
	# evict_pct 95: this is the satisfaction rule alone; the evict watermark
# (cpuhigh, tests/vm/cpuhigh.sh) would also act on a node near 70%
cat >/tmp/td.json <<EOC
{"version": 1,
 "watermarks": {"cpu": {"forbid_pct": 60, "suppress_pct": 65, "evict_pct": 95}},
 "memory_eviction": {"enabled": false},
 "cpu_eviction": {"dry_run": $1, "window_s": 10, "min_coverage_pct": 80, "lower_pct": 60,
                  "upper_pct": 80, "usage_gate_pct": 80, "cooldown_s": 15, "max_per_round": 1},
 "cgroups": {"be": [{"path": "/be/low", "priority": -1, "request_mcpu": 1000},
                    "/kubepods.slice/kubepods-besteffort.slice/*"],
             "online": ["/online"]},
 "report": {"listen": "127.0.0.1:9477"}}
EOC
}
config true
in_cgroup be/low timeout 200 bash -c 'while :; do :; done'
low=$!
in_cgroup $bep timeout 200 bash -c 'while :; do :; done'
high=$!
daemon_start
dpid=$daemon_pid
ok "daemon starts"
sleep 14
if ! grep -q "strategy=cpu_eviction" /tmp/td.log; then ok "BE alone (satisfaction ~65%, bound 60%): no eviction"; else not_ok "BE alone: no eviction" "$(grep cpu_eviction /tmp/td.log)"; fi

note "ONLINE surge: one CPU of ONLINE work"
in_cgroup online timeout 200 bash -c 'while :; do :; done'
on=$!
wait_log /tmp/td.log "strategy=cpu_eviction action=kill dry_run=true" 30 && ok "dry-run decides a kill" || not_ok "dry-run decides a kill" "$(tail -5 /tmp/td.log)"
note "$(grep -m1 "strategy=cpu_eviction" /tmp/td.log)"
if grep -m1 "strategy=cpu_eviction" /tmp/td.log | grep -q "cgroup=/be/low "; then ok "the victim is the lowest priority BE cgroup"; else not_ok "victim is /be/low" "$(grep -m1 cpu_eviction /tmp/td.log)"; fi
sat=$(grep -m1 "strategy=cpu_eviction" /tmp/td.log | sed -n 's/.*satisfaction_pct=\([0-9]*\).*/\1/p')
if [ -n "$sat" ] && [ "$sat" -lt 60 ]; then ok "satisfaction under the bound ($sat%)"; else not_ok "satisfaction under the bound" "'$sat'"; fi
if kill -0 $low && kill -0 $high; then ok "dry-run killed nothing"; else not_ok "dry-run killed nothing"; fi
req=$(grep -m1 "strategy=cpu_eviction" /tmp/td.log | sed -n 's/.*be_request_mcpu=\([0-9]*\).*/\1/p')
expect_eq "BE request: 1000 (job) + default_request_mcpu 1000 (BestEffort pod at weight 1)" 2000 "$req"

config false
kill -HUP $dpid
wait_log /tmp/td.log "strategy=cpu_eviction action=kill dry_run=false" 30 && ok "real run kills" || not_ok "real run kills" "$(tail -5 /tmp/td.log)"
sleep 1
if ! kill -0 $low 2>/dev/null; then ok "/be/low killed"; else not_ok "/be/low killed"; fi
if kill -0 $high 2>/dev/null; then ok "the BestEffort pod spared (one victim per round)"; else not_ok "the BestEffort pod spared"; fi
kill -0 $on && ok "ONLINE untouched" || not_ok "ONLINE untouched"
n=$(grep -c "strategy=cpu_eviction action=kill dry_run=false" /tmp/td.log)
expect_eq "one kill in the round (cool-down 15 s)" 1 "$n"

kill $dpid
wait $dpid
kill $on $high 2>/dev/null
wait $on $high $low 2>/dev/null
kill -INT $spid
wait $spid
expect_eq "loader exits 0" 0 "$?"
tap_done
