#!/usr/bin/env bash
# vm: --cpus 2 --timeout 420
# plan: 15
# A real Prometheus server (Debian's) scrapes tidemarkd every second; PromQL
# over its HTTP API then finds what the metrics claim: BE's CPU rate (from
# the cgroups' cpu.stat counters) at the line with BE saturating, the
# scheduler's own BE run time close to it, the ONLINE wait histogram's
# median (histogram_quantile) in the same log2 bucket, or the next, as the
# scheduler's own histogram read by tidemarkctl over the same span, the
# per-cgroup histogram counting the same waits, and build_info present; the
# monitoring pack's alert rules evaluate without error and none fires, its
# dashboard's queries run, and every metric they read is served.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

command -v prometheus >/dev/null || { not_ok "prometheus is installed (tools/deps.sh)"; tap_done; }
cg=/sys/fs/cgroup
line=50
echo "+cpu +memory" >$cg/cgroup.subtree_control
mkdir -p $cg/be $cg/online
sched_start --be /be --online /online --suppress-pct $line || tap_done
cat >/tmp/td.json <<EOC
{"version": 1,
 "watermarks": {"cpu": {"forbid_pct": 45, "suppress_pct": $line, "evict_pct": 95}},
 "memory_eviction": {"enabled": false}, "cpu_eviction": {"enabled": false},
 "interference": {"enabled": false},
 "cgroups": {"be": ["/be"], "online": ["/online"]},
 "report": {"listen": "127.0.0.1:9477", "sample_s": 1}}
EOC
daemon_start
dpid=$daemon_pid
# the alert rules of the monitoring pack, evaluated every second
tests/lib/monitoring.py rules /tmp/rules.yaml || not_ok "the PrometheusRule's groups read"
cat >/tmp/prom.yml <<EOC
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [/tmp/rules.yaml]
scrape_configs:
  - job_name: tidemark
    static_configs: [{targets: ["127.0.0.1:9477"]}]
EOC
prometheus --config.file=/tmp/prom.yml --storage.tsdb.path=/tmp/prom \
	--web.listen-address=127.0.0.1:9090 >/tmp/prom.log 2>&1 &
ppid=$!
# PromQL -> the first result's value, or nothing; evaluated at $qtime when
# set. Figures compared with each other must be evaluated at one instant:
# tidemarkd's samples (every second) and the scrapes (every second) alias,
# so a [20s] window evaluated a moment later can begin or end on the other
# side of a sample, and two rates of series that step together differed by
# up to two samples' worth (0.31 against 0.34 once).
qtime=""
q() {
	curl -s -G --data-urlencode "query=$1" ${qtime:+--data-urlencode "time=$qtime"} \
		http://127.0.0.1:9090/api/v1/query |
		python3 -c '
import json, sys
try:  # empty, or not JSON, while Prometheus starts
    r = json.loads(sys.stdin.read())
except ValueError:
    r = {}
v = r.get("data", {}).get("result", [])
print(v[0]["value"][1] if v else "")'
}
for i in $(seq 120); do
	[ "$(q 'up{job="tidemark"}')" = 1 ] && break
	sleep 0.5
done
expect_eq "Prometheus scrapes tidemarkd (up)" 1 "$(q 'up{job="tidemark"}')"

in_cgroup be stress-ng --temp-path /tmp --cpu-method int64 --cpu 2 --timeout 300s >/dev/null 2>&1
# ONLINE that sleeps and wakes: waits to measure
in_cgroup online stress-ng --temp-path /tmp --cpu-method int64 --cpu 1 --cpu-load 20 --timeout 300s >/dev/null 2>&1
sleep 8
# the scheduler's own histogram over 20 s, and Prometheus over the same span
build/tidemarkctl stats --interval 20 --once --json >/tmp/stats.json
sleep 2 # the last sample and its scrape
qtime=$(date +%s.%N)
ctl_p50=$(python3 -c 'import json; print(json.load(open("/tmp/stats.json"))["wait"]["online"]["p50_us"])')
ctl_n=$(python3 -c 'import json; print(json.load(open("/tmp/stats.json"))["wait"]["online"]["samples"])')
prom_p50=$(q 'histogram_quantile(0.5, increase(tidemark_sched_wait_seconds_bucket{class="online"}[20s] offset 2s)) * 1e6')
prom_n=$(q 'increase(tidemark_sched_wait_seconds_count{class="online"}[20s] offset 2s)')
note "ONLINE wait p50: tidemarkctl ${ctl_p50} us (bucket bound, $ctl_n waits); histogram_quantile ${prom_p50} us ($prom_n waits)"
if python3 -c "
import sys
c, p = float('$ctl_p50'), float('${prom_p50:-nan}')
# tidemarkctl gives the bucket's upper bound 2^k; Prometheus interpolates
# inside a bucket, so the same one is (c/2, c]; the next on either side
# allows for the two spans not being the same samples
sys.exit(not (c / 4 < p <= c * 2))"; then
	ok "histogram_quantile of the ONLINE wait in the scheduler's p50 bucket or the next (${prom_p50} us vs ${ctl_p50} us)"
else
	not_ok "histogram_quantile of the ONLINE wait agrees with the scheduler" "${prom_p50:-none} us vs ${ctl_p50} us"
fi
if python3 -c "import sys; a, b = float('${prom_n:-0}'), float('$ctl_n'); sys.exit(not (b > 100 and abs(a - b) <= 0.25 * b))"; then
	ok "waits counted: Prometheus $prom_n, tidemarkctl $ctl_n (within 25%)"
else
	not_ok "waits counted alike" "Prometheus ${prom_n:-none}, tidemarkctl $ctl_n"
fi
# The per-cgroup count against the class count at the same scrapes, not
# by increase(): increase() extrapolates each series from its own first and
# last point in the window, so one series missing a scrape at an edge would
# read a second's worth of waits apart (5% here). A missed scrape is its own
# failure; between two scrapes the counts differ only by the waits a CPU
# holds back before adding them to the cgroup (at most 64 per CPU).
for m in 'tidemark_sched_wait_seconds_count{class="online"}' \
	'tidemark_cgroup_wait_seconds_count{cgroup="/online"}'; do
	curl -s -G --data-urlencode "query=${m}[20s]" \
		--data-urlencode "time=$(python3 -c "print($qtime - 2)")" \
		http://127.0.0.1:9090/api/v1/query
	echo
done >/tmp/waitcounts.json
read -r gaps cls_d cg_d lag < <(python3 -c '
import json, sys
try:
    a, b = ({float(t): float(v) for t, v in json.loads(l)["data"]["result"][0]["values"]}
            for l in open(sys.argv[1]).read().split("\n")[:2])
except (ValueError, KeyError, IndexError):
    print("unread none none none")
    sys.exit()
miss = sorted(set(a) ^ set(b))
both = sorted(set(a) & set(b))
if len(both) < 2:
    print("%d none none none" % len(miss))
    sys.exit()
lag = ",".join("%.0f" % (a[t] - b[t]) for t in both)
print(len(miss), a[both[-1]] - a[both[0]], b[both[-1]] - b[both[0]], lag)' /tmp/waitcounts.json)
note "class less /online cgroup wait count at each scrape: $lag"
if [ "$gaps" = 0 ]; then
	ok "the class and the /online cgroup's wait counts are in every scrape of the window"
else
	not_ok "the class and the /online cgroup's wait counts are in every scrape of the window" \
		"scrapes in one series only: ${gaps:-none}" "$(cat /tmp/waitcounts.json)"
fi
if python3 -c "import sys; a, b = float('${cg_d:-nan}'), float('${cls_d:-nan}'); sys.exit(not (b > 100 and abs(a - b) <= 0.05 * b))"; then
	ok "the /online cgroup's histogram counts the same waits ($cg_d of the class's $cls_d between the window's first and last scrape)"
else
	not_ok "the /online cgroup's histogram counts the same waits" "${cg_d:-none} vs the class's ${cls_d:-none}" "$(cat /tmp/waitcounts.json)"
fi

be=$(q 'sum(rate(tidemark_cgroup_cpu_seconds_total{class="be"}[20s])) / scalar(tidemark_node_cpu_capacity_cores)')
be_sched=$(q 'rate(tidemark_sched_run_seconds_total{class="be"}[20s]) / scalar(tidemark_node_cpu_capacity_cores)')
be_node=$(q 'rate(tidemark_node_cpu_seconds_total{class="be"}[20s]) / scalar(tidemark_node_cpu_capacity_cores)')
on=$(q 'rate(tidemark_node_cpu_seconds_total{class="online"}[20s]) / scalar(tidemark_node_cpu_capacity_cores)')
# SYSTEM (Prometheus itself among it) from the scheduler's own run time:
# /proc/stat's ticks read high under TCG
sys=$(q 'rate(tidemark_sched_run_seconds_total{class="system"}[20s]) / scalar(tidemark_node_cpu_capacity_cores)')
ratio=$(q 'tidemark_scheduler_be_line_ratio')
note "BE: cgroups $be, node class counter $be_node, scheduler's run time $be_sched; ONLINE $on; SYSTEM $sys; line $ratio"
expect_eq "the line as a ratio" 0.5 "$ratio"
# BE gets the line less ONLINE's and SYSTEM's use: not above it, and not far below
if python3 -c "import sys; b, o, y = float('${be:-nan}'), float('${on:-nan}'), float('${sys:-nan}'); sys.exit(not (b + o <= $line / 100 + 0.05 and b >= $line / 100 - o - y - 0.08))"; then
	ok "rate(BE cgroups' CPU) at the line: BE $be + ONLINE $on (+ SYSTEM $sys) of the node, line 0.5"
else
	not_ok "rate(BE cgroups' CPU) at the line" "BE ${be:-none} ONLINE ${on:-none} SYSTEM ${sys:-none}"
fi
if python3 -c "import sys; a, b = float('${be_node:-nan}'), float('${be:-nan}'); sys.exit(not abs(a - b) <= 0.03)"; then
	ok "the node's class counter agrees with the cgroups' ($be_node vs $be)"
else
	not_ok "the node's class counter agrees with the cgroups'" "$be_node vs $be"
fi
# the scheduler charges BE a little above cpu.stat (see stats.sh): printed, near
if python3 -c "import sys; a, b = float('${be_sched:-nan}'), float('${be:-nan}'); sys.exit(not abs(a - b) <= 0.1)"; then
	ok "the scheduler's BE run time near cpu.stat's ($be_sched vs $be)"
else
	not_ok "the scheduler's BE run time near cpu.stat's" "$be_sched vs $be"
fi
bi=$(q 'tidemark_build_info')
expect_eq "tidemark_build_info is 1" 1 "$bi"
check "no scrape errors logged by Prometheus" bash -c "! grep -i 'level=warn.*scrape\|level=error' /tmp/prom.log"

# The monitoring pack against this live tidemarkd and Prometheus: every
# metric the alert rules and the dashboard read is a family /metrics
# declares, every rule evaluates without error, every dashboard query runs
curl -s http://127.0.0.1:9477/metrics | awk '/^# TYPE /{print $3}' | sort -u >/tmp/families
missing=$(tests/lib/monitoring.py names | while read -r m; do
	[ "$m" = up ] && continue
	f=$m
	case $m in *_bucket | *_sum | *_count) f=${m%_*} ;; esac
	grep -qxF "$f" /tmp/families || echo "$m"
done)
expect_eq "every metric the rules and the dashboard read is served by /metrics ($(wc -l </tmp/families) families)" "" "$missing"
curl -s http://127.0.0.1:9090/api/v1/rules >/tmp/rules.json
rules=$(python3 -c '
import json
g = json.load(open("/tmp/rules.json"))["data"]["groups"]
r = [x for y in g for x in y["rules"]]
bad = [x["name"] + ": " + x.get("lastError", "") for x in r
       if x.get("health") != "ok" or x.get("lastEvaluation", "").startswith("0001")]
print(len(r), "; ".join(bad))')
if [ "${rules%% *}" -ge 7 ] && [ -z "${rules#* }" ]; then
	ok "Prometheus evaluates all ${rules%% *} alert rules without error"
else
	not_ok "Prometheus evaluates the alert rules without error" "$rules"
fi
# the scheduler and tidemarkd run, nothing was refused: none of those
# alerts may even be pending (TidemarkNodeAboveLine left out: this test holds
# the node at its line, where a 5-minute rate may read either side)
firing=$(curl -s http://127.0.0.1:9090/api/v1/alerts | python3 -c '
import json, sys
print(" ".join(sorted(a["labels"]["alertname"] for a in json.load(sys.stdin)["data"]["alerts"]
                      if a["labels"]["alertname"] != "TidemarkNodeAboveLine")))')
expect_eq "no alert pending or firing on a healthy node" "" "$firing"
qerr=$(tests/lib/monitoring.py queries | while IFS=$'\t' read -r title e; do
	curl -s -G --data-urlencode "query=$e" http://127.0.0.1:9090/api/v1/query |
		python3 -c 'import json, sys; r = json.load(sys.stdin); sys.exit(r.get("status") != "success")' ||
		echo "$title: $e"
done)
expect_eq "every dashboard query runs in Prometheus" "" "$qerr"

kill $ppid $dpid
wait $ppid $dpid 2>/dev/null
pkill stress-ng
kill -INT $sched_pid
wait $sched_pid
tap_done
