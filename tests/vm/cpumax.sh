#!/usr/bin/env bash
# vm: --cpus 2 --icount --timeout 400
# plan: 17
# cgroup cpu.max under scx_tidemark, side by side with EEVDF's own cpu.max on
# the same load in the same VM run (icount: virtual time, comparable runs):
# - a Burstable-pod-like cgroup at 500m (cpu.max "50000 100000") with two
#   busy threads uses 0.5 CPU within 5% in every second, ONLINE and BE alike;
# - nested limits hold (a parent at 800m over two children at 600m);
# - a changed cpu.max acts within --rescan-ms, "max" lifts it;
# - the per-cgroup counters (tidemarkctl bw, tidemarkd's /metrics) count
#   periods, throttles and throttled time.
# Usage is measured from outside the scheduler: the cgroup's cpu.stat.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
echo "+cpu" >$cg/cgroup.subtree_control
mkdir -p $cg/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podx.slice \
	$cg/be/job $cg/nest/a $cg/nest/b
echo "+cpu" >$cg/kubepods.slice/cgroup.subtree_control
echo "+cpu" >$cg/kubepods.slice/kubepods-burstable.slice/cgroup.subtree_control
echo "+cpu" >$cg/be/cgroup.subtree_control
echo "+cpu" >$cg/nest/cgroup.subtree_control
pod=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podx.slice
echo "50000 100000" >$cg/$pod/cpu.max
echo "50000 100000" >$cg/be/job/cpu.max
echo "80000 100000" >$cg/nest/cpu.max
echo "60000 100000" >$cg/nest/a/cpu.max
echo "60000 100000" >$cg/nest/b/cpu.max

HOG="stress-ng --temp-path /tmp --cpu-method int64 --cpu 2 --timeout 300s"
# Per-second usage (ms of CPU) of each cgroup over N seconds, one line of
# "s1 s2 ..." per cgroup. Seconds are whole periods (1 s = 10 x 100 ms) on an
# absolute schedule starting while the first cgroup is held back (its usage
# still): a cgroup at its limit runs in a burst at each period's start, and a
# sample edge cutting a burst would move up to half a quota between seconds
# (the same for EEVDF) without saying anything about the limit.
persec() { # seconds cgroup...
	python3 - "$@" <<'EOF'
import sys, time
n = int(sys.argv[1]); cgs = sys.argv[2:]
def use(c):
    for l in open(f"/sys/fs/cgroup/{c}/cpu.stat"):
        k, v = l.split()
        if k == "usage_usec":
            return int(v)
last = use(cgs[0])
for _ in range(400):
    time.sleep(0.004)
    u = use(cgs[0])
    if u == last:
        break
    last = u
t0 = time.monotonic(); prev = [use(c) for c in cgs]; out = [[] for _ in cgs]; t = t0
for k in range(1, n + 1):
    time.sleep(max(0, t0 + k - time.monotonic()))
    now = [use(c) for c in cgs]; t2 = time.monotonic()
    for i in range(len(cgs)):
        out[i].append(round((now[i] - prev[i]) / 1000 / (t2 - t)))
    prev, t = now, t2
for o in out:
    print(" ".join(map(str, o)))
EOF
}
# every value of a line within [lo, hi]
all_within() { # N "values" lo hi: N values, each within [lo, hi] (none read is not "all within")
	local v n=0
	for v in $2; do
		within "$v" "$3" "$4" || return 1
		n=$((n + 1))
	done
	[ "$n" -eq "$1" ]
}
# both workers of a hog started (tests/lib/vmlib.sh), else the test ends:
# what follows would measure a start-up, not a limit
hogs_up() { # cg
	wait_workers "$1" 2 60 && return 0
	not_ok "the hog in $1 started" "$(cat /sys/fs/cgroup/$1/cgroup.procs | xargs ps -o pid,args -p 2>&1)"
	tap_done
}
mean() { awk '{s=0; for(i=1;i<=NF;i++) s+=$i; print int(s/NF)}' <<<"$1"; }

# --- EEVDF's own cpu.max: the reference, same load, same run
in_cgroup $pod $HOG >/dev/null 2>&1
h1=$!
hogs_up $pod
ref=$(persec 6 $pod)
note "EEVDF, pod at 500m, ms/s: $ref"
kill $h1 2>/dev/null
wait $h1 2>/dev/null

# --- the same under tidemark (the pod ONLINE by the kubelet rules)
log=/tmp/scx.log
sched_start --be /be --timeout-ms 5000
pid=$sched_pid
ok "scheduler loads"
# the BE line out of the way: the limits are what is measured
build/tidemarkctl set suppress_pct=100 >/dev/null
check "the loader says it enforces the limits" grep -q "cgroup CPU limits (cpu.max) enforced" "$log"
in_cgroup $pod $HOG >/dev/null 2>&1
h1=$!
hogs_up $pod
got=$(persec 6 $pod)
note "tidemark, ONLINE pod at 500m, ms/s: $got"
if all_within 6 "$got" 475 525; then ok "ONLINE pod at 500m: 0.5 CPU +-5% every second ($got)"; else not_ok "ONLINE pod at 500m: 0.5 CPU +-5% every second" "tidemark $got, EEVDF $ref"; fi
m=$(mean "$got")
r=$(mean "$ref")
note "mean: tidemark $m ms/s, EEVDF $r ms/s"
if within "$m" $((r * 95 / 100)) $((r * 105 / 100)); then ok "within 5% of EEVDF's cpu.max ($m vs $r ms/s)"; else not_ok "within 5% of EEVDF's cpu.max" "$m vs $r"; fi

# a change of cpu.max acts within --rescan-ms (1 s) and a period
echo "25000 100000" >$cg/$pod/cpu.max
sleep 2
got=$(persec 4 $pod)
note "after cpu.max 25000 100000, ms/s: $got"
if all_within 4 "$got" 237 263; then ok "a lowered cpu.max holds after the rescan ($got)"; else not_ok "a lowered cpu.max holds after the rescan" "$got"; fi
echo "max 100000" >$cg/$pod/cpu.max
sleep 2
got=$(persec 3 $pod)
note "after cpu.max max, ms/s: $got"
if all_within 3 "$got" 1800 2100; then ok "'max' lifts the limit ($got)"; else not_ok "'max' lifts the limit" "$got"; fi
echo "50000 100000" >$cg/$pod/cpu.max
kill $h1 2>/dev/null
wait $h1 2>/dev/null

# --- a BE cgroup at its limit, the same way
in_cgroup be/job $HOG >/dev/null 2>&1
h2=$!
hogs_up be/job
got=$(persec 4 be/job)
note "tidemark, BE job at 500m, ms/s: $got"
if all_within 4 "$got" 475 525; then ok "BE job at 500m: 0.5 CPU +-5% every second ($got)"; else not_ok "BE job at 500m: 0.5 CPU +-5% every second" "$got"; fi
kill $h2 2>/dev/null
wait $h2 2>/dev/null

# --- nested: /nest 800m over /nest/a and /nest/b at 600m each (SYSTEM: no rule)
in_cgroup nest/a $HOG >/dev/null 2>&1
ha=$!
in_cgroup nest/b $HOG >/dev/null 2>&1
hb=$!
hogs_up nest/a
hogs_up nest/b
out=$(persec 4 nest nest/a nest/b)
n=$(sed -n 1p <<<"$out")
a=$(sed -n 2p <<<"$out")
b=$(sed -n 3p <<<"$out")
note "nested, ms/s: parent $n, a $a, b $b"
if all_within 4 "$n" 760 840; then ok "the parent's 800m holds over both children ($n)"; else not_ok "the parent's 800m holds over both children" "$n"; fi
if all_within 4 "$a" 0 630 && all_within 4 "$b" 0 630; then ok "each child within its 600m ($a / $b)"; else not_ok "each child within its 600m" "$a / $b"; fi
ma=$(mean "$a")
mb=$(mean "$b")
if within "$ma" 300 500 && within "$mb" 300 500; then ok "the children share the parent ($ma / $mb)"; else not_ok "the children share the parent" "$ma / $mb"; fi
# one child alone is held by its own 600m, under the parent's 800m
kill $hb 2>/dev/null
wait $hb 2>/dev/null
sleep 1
a=$(persec 3 nest/a)
note "child a alone, ms/s: $a"
if all_within 3 "$a" 570 630; then ok "a child alone holds its own 600m ($a)"; else not_ok "a child alone holds its own 600m" "$a"; fi
kill $ha 2>/dev/null
wait $ha 2>/dev/null

# --- counters, as cpu.stat's
out=$(build/tidemarkctl bw --json)
note "tidemarkctl bw: $out"
podline=$(python3 -c '
import json, sys
for e in json.loads(sys.argv[1])["cgroups"]:
    if e["path"].endswith("podx.slice"):
        print(e["quota_us"], e["period_us"], e["nr_periods"], e["nr_throttled"], e["throttled_usec"])
' "$out")
read -r q p np nt tu <<<"$podline"
expect_eq "the pod's quota as cpu.max says" "50000 100000" "$q $p"
if [ "${np:-0}" -ge 50 ] && [ "${nt:-0}" -ge 40 ] && [ "${tu:-0}" -ge 1000000 ]; then
	ok "periods, throttles and throttled time counted ($np, $nt, $tu us)"
else
	not_ok "periods, throttles and throttled time counted" "$podline"
fi

# the same counters on tidemarkd's /metrics, as Prometheus reads them
cat >/tmp/td.json <<EOC
{"version": 1, "report": {"listen": "127.0.0.1:9477", "sample_s": 1}}
EOC
build/tidemarkd --config /tmp/td.json 2>/tmp/td.log &
dpid=$!
if wait_log /tmp/td.log "tidemarkd: running" 20; then
	sleep 2
	python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9477/metrics", timeout=5).read().decode(), end="")' >/tmp/metrics.txt
	label="{cgroup=\"/$pod\"}"
	mt=$(awk -v k="tidemark_cgroup_cpu_throttled_periods_total$label" '$1 == k {print $2}' /tmp/metrics.txt)
	ml=$(awk -v k="tidemark_cgroup_cpu_limit_cores$label" '$1 == k {print $2}' /tmp/metrics.txt)
	if [ "$ml" = 0.500000 ] && [ "${mt:-0}" -ge "${nt:-1}" ]; then
		ok "/metrics: the pod's limit and throttles (${ml} cores, $mt throttled periods)"
	else
		not_ok "/metrics: the pod's limit and throttles" "$(grep tidemark_cgroup_cpu_ /tmp/metrics.txt | head -20)"
	fi
	if promtool check metrics </tmp/metrics.txt >/tmp/promtool.out 2>&1; then ok "/metrics passes promtool check metrics"; else not_ok "/metrics passes promtool" "$(head -5 /tmp/promtool.out)"; fi
else
	not_ok "tidemarkd starts" "$(cat /tmp/td.log)"
fi
kill $dpid 2>/dev/null
wait $dpid 2>/dev/null

kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"
check "no stall, no error exit" bash -c "! grep -q 'runnable task stall\|EXIT: .*error' $log"
tap_done
