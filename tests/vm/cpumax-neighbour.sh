#!/usr/bin/env bash
# vm: --cpus 2 --icount --timeout 400
# plan: 5
# An ONLINE pod at its limit does not delay other ONLINE pods: a
# request/response service (tm-probe) in one ONLINE pod, a neighbour ONLINE
# pod at cpu.max 500m with four busy threads. The service's wakeup latency
# with the neighbour at its limit is compared with the service alone, under
# tidemark, and with EEVDF holding the same neighbour to the same cpu.max,
# all in one VM run (icount: virtual time). Held tasks wait in their own DSQ,
# so they never sit in the ONLINE queue ahead of the service: its median
# request stays as alone. Its tail is not compared with alone: the neighbour's
# allowed 500m runs as four threads in a burst at each period's start, and the
# service waits up to a slice behind them then, under EEVDF as under tidemark.
# That is the neighbour's share, judged against the peer. Measured: p99 wakeup
# 118-133 us alone, 2178-3730 us with the neighbour (p999 5.0-5.2 ms: one
# slice at most), 3914-4499 us for EEVDF. Before sleepers' credit counted from
# the least advanced waiting task, the service queued behind neighbour threads
# that had waited longer: up to two slices (p999 8-10 ms), p99 up to 5034 us,
# and this check failed in a CI run.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
echo "+cpu" >$cg/cgroup.subtree_control
mkdir -p $cg/online/svc $cg/online/nb
echo "+cpu" >$cg/online/cgroup.subtree_control
echo "50000 100000" >$cg/online/nb/cpu.max
PROBE="build/tm-probe --messengers 1 --workers 2 --rate 200 --work-us 500 --jitter-us 2000 --seconds 15 --json"
probe() { (echo $BASHPID >$cg/online/svc/cgroup.procs && exec $PROBE) >"$1" 2>&1; }

# EEVDF with its own cpu.max on the neighbour: the peer
nb_start
probe /tmp/eevdf.json
nb_stop
sched_start --online /online
pid=$sched_pid
ok "scheduler loads"
probe /tmp/alone.json
nb_start
u0=$(sed -n 's/^usage_usec //p' $cg/online/nb/cpu.stat)
probe /tmp/nb.json
u1=$(sed -n 's/^usage_usec //p' $cg/online/nb/cpu.stat)
nb_stop
for f in eevdf alone nb; do note "$f: $(cat /tmp/$f.json)"; done
read -r a n e a50 n50 e50 n90 e90 < <(json_figs /tmp/alone.json:wakeup_us.p99 /tmp/nb.json:wakeup_us.p99 \
	/tmp/eevdf.json:wakeup_us.p99 /tmp/alone.json:request_us.p50 /tmp/nb.json:request_us.p50 \
	/tmp/eevdf.json:request_us.p50 /tmp/nb.json:wakeup_us.p90 /tmp/eevdf.json:wakeup_us.p90)
note "p99 wakeup: alone $a us, neighbour at its limit $n us, EEVDF with the same neighbour $e us"
note "p50 request: alone $a50 us, neighbour at its limit $n50 us, EEVDF $e50 us"
note "neighbour used $(((u1 - u0) / 15000)) ms/s during the probe (limit 500)"
if awk "BEGIN { exit !($n50 <= 1.1 * $a50) }"; then
	ok "p50 request with the neighbour at its limit within 1.1x of alone ($n50 vs $a50 us)"
else
	not_ok "p50 request with the neighbour at its limit within 1.1x of alone" "$n50 vs $a50 us"
fi
if awk "BEGIN { exit !($n90 <= 1.25 * $e90 && $n <= 1.25 * $e) }"; then
	ok "wakeup tail no worse than EEVDF holding the same neighbour (p90 $n90 vs $e90, p99 $n vs $e us)"
else
	not_ok "wakeup tail no worse than EEVDF holding the same neighbour" "p90 $n90 vs $e90, p99 $n vs $e us"
fi
if within $(((u1 - u0) / 15000)) 470 530; then ok "the neighbour held at its 500m"; else not_ok "the neighbour held at its 500m" "$(((u1 - u0) / 15000)) ms/s"; fi
kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"
tap_done
