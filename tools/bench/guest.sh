#!/usr/bin/env bash
# Inside the bench VM (tools/bench/run.sh boots it): the same colocation
# workload under each setup, one after the other, in one VM run. Writes one
# JSON object per measurement to $TM_SHARE/results.jsonl.
#
#   tools/bench/guest.sh quick|full
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

if [ "$mode" = full ]; then
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
