#!/usr/bin/env bash
# Inside the bench VM (tools/bench/run.sh boots it): the same colocation
# workload under each setup, one after the other, in one VM run. Writes one
# JSON object per measurement to $TM_SHARE/results.jsonl.
#
#   tools/bench/guest.sh quick|full|bursty
#
# bursty (run on 2 and 4 vCPUs by run.sh): a request-driven ONLINE service
# whose work comes in bursts across several CPUs (one messenger, one worker
# per CPU, 200 requests/s per CPU) next to BE saturating, in ROUNDS rounds
# with the setups interleaved; node busy is measured per 5 ms window from
# the kernel's sched_switch events (tests/lib/busywin.py), not from the
# scheduler's own counters.
#
# ONLINE: tm-probe (request/response, schbench-style) at a load level
# (% of the CPUs), plus cyclictest in full mode. BE: stress-ng cpu hogs (full:
# also matrix, a cache antagonist and hackbench-style fork/IPC churn), one
# per CPU plus one, so BE alone would take the whole machine.
set -uo pipefail
cd "$(dirname "$0")/../.."
[ "${TM_VM:-0}" = 1 ] || { echo "bench: run through tools/bench/run.sh" >&2; exit 2; }
mode=${1:-quick}
out=$TM_SHARE/results.jsonl
: >"$out"
n=$(nproc)
cg=/sys/fs/cgroup
SUPPRESS=65
echo "+cpu +cpuset" >$cg/cgroup.subtree_control
mkdir -p $cg/online $cg/be
PEERS=build/peers

if [ "$mode" = bursty ]; then
	SETUPS="eevdf-idle eevdf-cpumax scx_simple tidemark"
	SECONDS_RUN=10
	ROUNDS=${BENCH_ROUNDS:-3}
elif [ "$mode" = full ]; then
	LEVELS="10 30 50 70"
	SECONDS_RUN=20
	SETUPS="eevdf-weight1 eevdf-idle eevdf-cpumax scx_simple scx_flatcg tidemark"
else
	LEVELS="30"
	SECONDS_RUN=8
	SETUPS="eevdf-weight1 eevdf-idle eevdf-cpumax scx_simple scx_flatcg tidemark"
fi

log() { echo "bench: $*" >&2; }
emit() { echo "$1" >>"$out"; }

state() { cat /sys/kernel/sched_ext/state; }
wait_enabled() {
	for _ in $(seq 100); do [ "$(state)" = enabled ] && return 0; sleep 0.1; done
	return 1
}
wait_disabled() {
	for _ in $(seq 100); do [ "$(state)" = disabled ] && return 0; sleep 0.1; done
	return 1
}

# Configure /be (and load a scheduler) for a setup; undo with teardown.
sched_pid=""
setup() {
	echo 0 >$cg/be/cpu.idle	# first: an idle group refuses a weight
	echo 100 >$cg/be/cpu.weight
	echo max >$cg/be/cpu.max
	case $1 in
	alone | eevdf-none) ;;
	eevdf-weight1) echo 1 >$cg/be/cpu.weight ;;
	eevdf-idle) echo 1 >$cg/be/cpu.idle ;;
	eevdf-cpumax) echo "$((SUPPRESS * 1000 * n)) 100000" >$cg/be/cpu.max ;;
	scx_flatcg)
		echo 1 >$cg/be/cpu.weight	# flatcg honours cgroup weights: use them
		$PEERS/$1 >/tmp/$1.log 2>&1 &
		sched_pid=$!
		wait_enabled || { log "$1 did not load: $(cat /tmp/$1.log)"; return 1; }
		;;
	scx_simple)
		$PEERS/$1 >/tmp/$1.log 2>&1 &
		sched_pid=$!
		wait_enabled || { log "$1 did not load: $(cat /tmp/$1.log)"; return 1; }
		;;
	tidemark)
		build/scx_tidemark --online /online --be /be --suppress-pct $SUPPRESS >/tmp/tm.log 2>&1 &
		sched_pid=$!
		wait_enabled || { log "tidemark did not load: $(cat /tmp/tm.log)"; return 1; }
		;;
	esac
	# Enabling switches every task over and the loader then does its first
	# rounds (rules, limits, homes); under TCG that is seconds of CPU, as
	# SYSTEM. A probe started then measured the start-up: ONLINE requests
	# backed up for seconds on 2 vCPUs.
	[ -n "$sched_pid" ] && sleep 3
	return 0
}
teardown() {
	if [ -n "$sched_pid" ]; then
		kill -INT "$sched_pid" 2>/dev/null
		wait "$sched_pid" 2>/dev/null
		sched_pid=""
		wait_disabled
	fi
}

# CPU used by a cgroup so far, us. Read with the shell: a measuring python
# would compete with the ONLINE probe (as SYSTEM under tidemark, as a peer
# under EEVDF) and perturb what it measures.
usage() { sed -n 's/^usage_usec //p' "$cg$1/cpu.stat"; }
now_us() { echo $(($(date +%s%N) / 1000)); }

# BE hogs for S seconds; their stress-ng metrics go to /tmp/be.out
be_start() { # seconds kind
	local s=$1 kind=${2:-cpu}
	case $kind in
	cpu) set -- --cpu $((n + 1)) --cpu-method int64 ;;
	matrix) set -- --matrix $((n + 1)) ;;
	cache) set -- --cache $((n + 1)) ;;
	churn) set -- --fork $((n + 1)) ;;
	esac
	(echo $BASHPID >$cg/be/cgroup.procs &&
		exec stress-ng --temp-path /tmp "$@" --timeout "${s}s" --metrics-brief) >/tmp/be.out 2>&1 &
	be_pid=$!
}
be_ops() { # bogo ops/s (real time) summed over the stressors
	awk '/metrc:/ && $5 ~ /^[0-9]+$/ {s += $(NF-1)} END {printf "%.1f", s}' /tmp/be.out
}

probe() { # level seconds -> JSON on stdout
	# requests/s x 1 ms of CPU = level % of n CPUs; arrivals jittered by half
	# a period, so that runs are not phase-locked to the tick (tests/vm/priority.sh)
	local rate=$(($1 * n * 10))
	(echo $BASHPID >$cg/online/cgroup.procs &&
		exec build/tm-probe --messengers 1 --workers $((n * 2 + 2)) --rate $rate --work-us 1000 \
			--jitter-us $((500000 / rate)) --seconds "$2" --json) 2>/dev/null
}

cyclic() { # seconds -> "avg max p99" us
	(echo $BASHPID >$cg/online/cgroup.procs &&
		exec cyclictest -q -t "$n" -i 1000 -D "$1" -h 20000) 2>/dev/null | python3 -c '
import sys
hist, avg, mx = {}, [], 0
for line in sys.stdin:
    if line.startswith("# Avg Latencies:"):
        avg = [int(x) for x in line.split(":")[1].split()]
    elif line.startswith("# Max Latencies:"):
        mx = max(int(x) for x in line.split(":")[1].split())
    elif line[:1].isdigit():
        f = line.split()
        hist[int(f[0])] = sum(int(x) for x in f[1:])
tot = sum(hist.values()); acc = 0; p99 = 0
for us in sorted(hist):
    acc += hist[us]
    if acc >= 0.99 * tot:
        p99 = us
        break
print(sum(avg) / max(len(avg), 1), mx, p99)'
}

log "kernel $(uname -r), $n CPUs, mode $mode"
emit "{\"kind\":\"meta\",\"kernel\":\"$(uname -r)\",\"cpus\":$n,\"mode\":\"$mode\"}"

# One round of the bursty service next to BE (none for alone): the probe's
# latencies, the cgroups' cpu.stat, node busy per 5 ms window from outside.
bursty_run() { # setup round
	local s=$1 round=$2 rate=$((200 * n)) p bw t0 t1 o0 o1 b0 b1 r0 r1
	setup "$s" || { emit "{\"kind\":\"error\",\"setup\":\"$s\"}"; teardown; return; }
	# started before the load: a fresh python next to BE hogs can take
	# seconds to start under a scheduler that does not favour it
	python3 tests/lib/busywin.py --seconds $((SECONDS_RUN - 1)) --delay 2 --line $SUPPRESS \
		--cgroup online=/online --cgroup be=/be >/tmp/bw.json 2>/tmp/bw.err &
	local bwp=$!
	sleep 0.5
	[ "$s" != alone ] && be_start $((SECONDS_RUN + 3)) cpu
	sleep 1
	t0=$(now_us) o0=$(usage /online) b0=$(usage /be) r0=$(usage "")
	p=$( (echo $BASHPID >$cg/online/cgroup.procs &&
		exec build/tm-probe --messengers 1 --workers "$n" --rate $rate --work-us 1000 \
			--jitter-us $((500000 / rate)) --seconds "$SECONDS_RUN" --json) 2>/dev/null)
	t1=$(now_us) o1=$(usage /online) b1=$(usage /be) r1=$(usage "")
	wait $bwp
	if [ "$s" != alone ]; then
		kill $be_pid 2>/dev/null
		wait $be_pid 2>/dev/null
	fi
	teardown
	bw=$(cat /tmp/bw.json)
	if [ -z "$p" ] || [ -z "$bw" ]; then
		log "bursty $s round $round: no result (probe: ${p:-none}; busywin: $(cat /tmp/bw.err))"
		emit "{\"kind\":\"error\",\"setup\":\"$s\"}"
		return
	fi
	# cpu.stat shares in 0.1% of the node
	emit "{\"kind\":\"bursty\",\"setup\":\"$s\",\"round\":$round,\"cpus\":$n,\"line\":$SUPPRESS,\"probe\":$p,\"windows\":$bw,\"online_pm\":$(((o1 - o0) * 1000 / ((t1 - t0) * n))),\"be_pm\":$(((b1 - b0) * 1000 / ((t1 - t0) * n))),\"node_pm\":$(((r1 - r0) * 1000 / ((t1 - t0) * n))),\"be_ops\":$([ "$s" = alone ] && echo 0 || be_ops)}"
	log "bursty $s round $round: node $(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["node"]["mean"])' <<<"$bw")% of $n CPUs"
}

if [ "$mode" = bursty ]; then
	be_start "$SECONDS_RUN" cpu
	wait $be_pid
	emit "{\"kind\":\"be_alone\",\"be_ops\":$(be_ops)}"
	for round in $(seq "$ROUNDS"); do
		for s in alone $SETUPS; do
			bursty_run "$s" "$round"
		done
	done
	log "done"
	exit 0
fi

# BE alone: the reference for BE work done
setup alone
be_start "$SECONDS_RUN" cpu
wait $be_pid
emit "{\"kind\":\"be_alone\",\"be_ops\":$(be_ops)}"
log "BE alone: $(be_ops) bogo ops/s"

for level in $LEVELS; do
	setup alone
	emit "{\"kind\":\"probe\",\"setup\":\"alone\",\"level\":$level,\"probe\":$(probe "$level" "$SECONDS_RUN")}"
	log "level $level%: alone done"
	if [ "$mode" = full ] && [ "$level" = 30 ]; then
		read -r ca cm cp < <(cyclic "$SECONDS_RUN")
		emit "{\"kind\":\"cyclictest\",\"setup\":\"alone\",\"avg_us\":$ca,\"max_us\":$cm,\"p99_us\":$cp}"
	fi
	for s in $SETUPS; do
		setup "$s" || { emit "{\"kind\":\"error\",\"setup\":\"$s\"}"; teardown; continue; }
		be_start $((SECONDS_RUN + 2)) cpu
		sleep 1
		t0=$(now_us) o0=$(usage /online) b0=$(usage /be)
		p=$(probe "$level" "$SECONDS_RUN")
		t1=$(now_us) o1=$(usage /online) b1=$(usage /be)
		wait $be_pid
		on=$(((o1 - o0) * 100 / ((t1 - t0) * n)))
		be=$(((b1 - b0) * 100 / ((t1 - t0) * n)))
		busy=$((on + be))
		emit "{\"kind\":\"probe\",\"setup\":\"$s\",\"level\":$level,\"probe\":$p,\"busy\":$busy,\"online\":$on,\"be\":$be,\"be_ops\":$(be_ops)}"
		if [ "$mode" = full ] && [ "$level" = 30 ]; then
			be_start $((SECONDS_RUN + 3)) cpu
			read -r ca cm cp < <(cyclic "$SECONDS_RUN")
			kill $be_pid 2>/dev/null
			wait $be_pid 2>/dev/null
			emit "{\"kind\":\"cyclictest\",\"setup\":\"$s\",\"avg_us\":$ca,\"max_us\":$cm,\"p99_us\":$cp}"
			for kind in matrix cache churn; do
				be_start $((SECONDS_RUN + 2)) $kind
				sleep 1
				p=$(probe 30 "$SECONDS_RUN")
				kill $be_pid 2>/dev/null
				wait $be_pid 2>/dev/null
				emit "{\"kind\":\"antagonist\",\"setup\":\"$s\",\"be\":\"$kind\",\"probe\":$p}"
			done
		fi
		teardown
		log "level $level%: $s done"
	done
done

# Reaction: BE saturating, then an ONLINE burst on every CPU. Time until BE's
# CPU use (sampled every 2 ms from cpu.stat) is held at its new budget.
for s in tidemark eevdf-cpumax; do
	setup "$s" || continue
	be_start 8 cpu
	sleep 2
	r=$(tools/bench/react.py --be /be --online /online --cpus "$n" --burst-s 2 --floor-pct 15)
	kill $be_pid 2>/dev/null
	wait $be_pid 2>/dev/null
	teardown
	emit "{\"kind\":\"reaction\",\"setup\":\"$s\",\"reaction\":$r}"
	log "reaction $s: $r"
done

# Scheduler overhead without BE: hackbench (rt-tests) under EEVDF, the
# simplest sched_ext scheduler and tidemark; for the two sched_ext ones,
# what each callback costs meanwhile (tidemarkctl progs: the kernel's BPF
# run-time statistics, switched on for those seconds only).
for s in eevdf-none scx_simple tidemark; do
	setup "$s" || continue
	cb=""
	if [ "$s" != eevdf-none ]; then
		(sleep 0.5 && exec build/tidemarkctl progs --seconds 3 --json) >/tmp/progs.json 2>/tmp/progs.err &
		cb=$!
	fi
	t0=$(date +%s.%N)
	(echo $BASHPID >$cg/online/cgroup.procs && exec hackbench -g 4 -l 200 >/dev/null 2>&1)
	t1=$(date +%s.%N)
	[ -n "$cb" ] && wait "$cb"
	teardown
	emit "{\"kind\":\"overhead\",\"setup\":\"$s\",\"hackbench_s\":$(python3 -c "print(round($t1 - $t0, 3))")}"
	log "hackbench $s: $(python3 -c "print(round($t1 - $t0, 3))") s"
	if [ -n "$cb" ]; then
		if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' /tmp/progs.json 2>/dev/null; then
			emit "{\"kind\":\"callbacks\",\"setup\":\"$s\",\"stats\":$(cat /tmp/progs.json)}"
		else
			log "callback costs of $s not read: $(cat /tmp/progs.err)"
		fi
	fi
done
log "done"
