#!/usr/bin/env bash
# Inside the bench VM (tools/bench/run.sh boots it): the same colocation
# workload under each setup, one after the other, in one VM run. Writes one
# JSON object per measurement to $TM_SHARE/results.jsonl.
#
#   tools/bench/guest.sh quick|full|bursty|preempt
#
# bursty (run on 2 and 4 vCPUs by run.sh): a request-driven ONLINE service
# whose work comes in bursts across several CPUs (one messenger, one worker
# per CPU, BENCH_RATE_PER_CPU requests/s per CPU) next to BE saturating, in
# ROUNDS rounds with the setups interleaved; node busy is measured per 5 ms
# window from the kernel's sched_switch events (tests/lib/busywin.py), not
# from the scheduler's own counters. Besides the peers, split (ONLINE on half of the
# cores, BE on the rest capped at the line) and split-alone (that ONLINE
# half, no BE): what BE costs ONLINE with no CPU in common; and eevdf-room,
# BE at cpu.idle under a cpu.max of the room (the line less what ONLINE
# alone used in the same round): the best an agent with the cgroup knobs
# of EEVDF can do on this service, holding the line on average.
#
# The bursty mode then runs the same setups under a request service of
# another shape (tm-svc: a dispatcher and a pool of one worker per CPU,
# each request two wakeups, dispatcher -> worker -> dispatcher), judged
# by cpu.stat and by 100 ms windows cut to the service's own span.
#
# preempt (run by run.sh on 2 vCPUs): the kernel's preemption model, switched
# at run time (CONFIG_PREEMPT_DYNAMIC, /sys/kernel/debug/sched/preempt)
# between the kernel's default and full in interleaved rounds, and put back
# however the run ends: hackbench without BE under EEVDF and tidemark, and
# the ONLINE service at 30% next to BE whose work is mostly in the kernel
# (fork and mmap churn), where the model decides how soon a wakeup gets in.
#
# ONLINE: tm-probe (request/response, schbench-style) at a load level
# (% of the CPUs), plus cyclictest in full mode. BE: stress-ng cpu hogs (full:
# also matrix, a cache antagonist and hackbench-style fork/IPC churn), one
# per CPU plus one, so BE alone would take the whole machine.
#
# On a machine booted with a sched_ext kernel (`tools/bench/run.sh host`,
# TM_BENCH_HOST=1) the same runs go in cgroups under /tidemark-bench, which
# are removed at the end; in the VM they are /online and /be. Where perf
# counts (a PMU), the ONLINE service runs under `perf stat` (cycles,
# instructions, LLC loads and misses).
#
# Shorter runs (the VM test of host mode): BENCH_SECONDS (seconds per run),
# BENCH_ROUNDS (rounds: quick 3, full 2, bursty 3), BENCH_LOOPS (hackbench -l, default 200);
# BENCH_SETUPS (a subset of the setups, e.g. "eevdf-idle tidemark");
# BENCH_LEVELS (ONLINE load levels, % of the CPUs, 5-90, instead of the
# mode's: quick 30, full 10 30 50 70);
# BENCH_SETTLE_S (seconds after a scheduler loads before anything is
# measured, default 3); BENCH_RATE_PER_CPU (the bursty service's requests/s
# per CPU, 10-2000, default 200: a host whose CPUs serve 1 ms requests with
# more or less overhead than the VM's may need another rate for the same load).
# Ranges and their checks: tools/bench/knobs.sh.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
where=vm base=""
if [ "${TM_BENCH_HOST:-0}" = 1 ]; then
	where=host base=/tidemark-bench
elif [ "${TM_VM:-0}" != 1 ]; then
	echo "bench: run through tools/bench/run.sh" >&2
	exit 2
fi
ONL=$base/online BEG=$base/be
mode=${1:-quick}
out=$TM_SHARE/results.jsonl
: >"$out"
n=$(nproc)
cg=/sys/fs/cgroup
SUPPRESS=65
# shellcheck source=knobs.sh
. tools/bench/knobs.sh
bench_knobs || exit 2
echo "+cpu +cpuset" >$cg/cgroup.subtree_control || exit 1
if [ -n "$base" ]; then
	mkdir -p $cg$base && echo "+cpu +cpuset" >$cg$base/cgroup.subtree_control || exit 1
fi
PEERS=build/peers
tmp=$(mktemp -d)
# Whatever stops the run, nothing of it stays: its scheduler, its hogs, its
# cgroups (on a host they are the machine's, not a throw-away VM's).
cleanup() {
	local pids c
	[ -n "${sched_pid:-}" ] && teardown
	[ -n "${preempt_orig:-}" ] && echo "$preempt_orig" >$PREEMPT_FILE
	pids=$(jobs -p) # the hogs and meters started in the background
	[ -n "$pids" ] && kill $pids 2>/dev/null
	for c in $ONL $BEG; do
		pids=$(cat $cg$c/cgroup.procs 2>/dev/null)
		[ -n "$pids" ] && kill $pids 2>/dev/null
	done
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		rmdir $cg$ONL $cg$BEG 2>/dev/null
		[ -e $cg$ONL ] || [ -e $cg$BEG ] || break
		sleep 0.2
	done
	[ -n "$base" ] && rmdir $cg$base 2>/dev/null
	rm -rf "$tmp"
}
PREEMPT_FILE=/sys/kernel/debug/sched/preempt
trap cleanup EXIT
# said in the log, so that a run stopped from outside is told from one that ended
trap 'log "stopped by SIGINT"; exit 130' INT
trap 'log "stopped by SIGTERM"; exit 143' TERM
mkdir -p $cg$ONL $cg$BEG || exit 1
# perf stat around the ONLINE service where a PMU counts (machine.py says)
machine=$(python3 tools/bench/machine.py --where $where) || { echo "bench: machine facts not read" >&2; exit 1; }
pmu=$(python3 -c 'import json,sys; print(int(json.loads(sys.argv[1])["pmu"]))' "$machine")
PERF_EVENTS=cycles,instructions,LLC-loads,LLC-load-misses

if [ "$mode" = bursty ]; then
	SETUPS="eevdf-idle eevdf-cpumax eevdf-room scx_simple split-alone split tidemark"
	SECONDS_RUN=10
	ROUNDS=${ROUNDS_ASKED:-3}
elif [ "$mode" = preempt ]; then
	SETUPS="eevdf-idle tidemark"
	SECONDS_RUN=8
	ROUNDS=${ROUNDS_ASKED:-3}
elif [ "$mode" = full ]; then
	LEVELS="10 30 50 70"
	SECONDS_RUN=20
	ROUNDS=${ROUNDS_ASKED:-2}
	SETUPS="eevdf-weight1 eevdf-idle eevdf-cpumax scx_simple scx_flatcg tidemark"
else
	LEVELS="30"
	SECONDS_RUN=8
	ROUNDS=${ROUNDS_ASKED:-3}
	SETUPS="eevdf-weight1 eevdf-idle eevdf-cpumax scx_simple scx_flatcg tidemark"
fi

[ -n "$SECONDS_ASKED" ] && SECONDS_RUN=$SECONDS_ASKED
# BENCH_LEVELS: the ONLINE load levels (% of the CPUs) of quick and full
# mode instead of the mode's own, e.g. "10 50 70"
[ -n "$LEVELS_ASKED" ] && LEVELS=${LEVELS_ASKED% }
# BENCH_SETUPS: only these of the mode's setups (alone always runs), in the
# mode's order (knobs.sh refused a name no mode runs)
if [ -n "$SETUPS_ASKED" ]; then
	keep=""
	for s in $SETUPS; do [[ " $SETUPS_ASKED " == *" $s "* ]] && keep+=" $s"; done
	SETUPS=${keep# }
fi

log() { echo "bench: $*" >&2; }
emit() { echo "$1" >>"$out"; }

state() { cat /sys/kernel/sched_ext/state; }
wait_disabled() {
	for _ in $(seq 100); do [ "$(state)" = disabled ] && return 0; sleep 0.1; done
	return 1
}

# A setup's run that measured nothing, or not under its setup: a row with
# the reason, which the report lists. An "error" (the bench's own failure, or
# tidemark's) makes run.sh fail; a "peer_left" is a result: a peer that left
# mid-run (scx_flatcg's kernel watchdog ejection, "runnable task stall",
# seen with its BE cgroup at weight 1 on 2 CPUs).
LEFT="the scheduler left during the run"
row_json() { # key value ...: one JSON object of strings, quoted by python
	python3 -c 'import json, sys; a = sys.argv[1:]; print(json.dumps(dict(zip(a[::2], a[1::2]))))' "$@"
}
fail_row() { # setup what why
	local kind=error
	[[ $1 == scx_* && $3 == "$LEFT"* ]] && kind=peer_left
	emit "$(row_json kind "$kind" setup "$1" what "$2" why "$3")"
	log "$1, $2: $3"
}
# End a setup's run: tear it down; 1, with its failed row written, where
# the scheduler left meanwhile or the run's RESULT came back empty.
finish() { # setup what result why-if-empty
	local left=""
	intact || left=$fail_why
	[ -z "$3" ] && left=${left:-$4}
	teardown
	[ -z "$left" ] && return 0
	fail_row "$1" "$2" "$left"
	return 1
}
# What a scheduler said of its end: its "EXIT: ..." line (UEI_REPORT, the
# kernel's reason) where it printed one, else the end of its output
sched_said() { # log
	local l
	l=$(grep -m1 '^EXIT: ' "$1")
	[ -n "$l" ] || l=$(tail -c 600 "$1")
	printf '%s' "${l//$'\n'/ }"
}

# Load a scheduler: start CMD in the background ($sched_pid, output to
# $sched_log) and wait until it is enabled, or it has exited, or 60 s
# (scx_flatcg's verification alone takes 1.5-2 s on an idle 2-vCPU TCG
# guest); keep the enable count that names this load. One that exited
# while loading is started once more: the run measures a scheduler, not
# its start, and a start that failed is kept in a "retry" row, with the
# scheduler's own words, that the report lists. $fail_why says what went
# wrong.
sched_seq="" fail_why=""
alive() { # pid: running, and not an exited job left to reap (kill -0 says yes to those)
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}
load_sched() { # name log cmd...
	local name=$1 try
	sched_log=$2
	shift 2
	for try in 1 2; do
		"$@" >"$sched_log" 2>&1 &
		sched_pid=$!
		for _ in $(seq 600); do
			[ "$(state)" = enabled ] && break
			alive "$sched_pid" || break
			sleep 0.1
		done
		if [ "$(state)" = enabled ]; then
			sched_seq=$(cat /sys/kernel/sched_ext/enable_seq)
			log "$name loaded (enable count $sched_seq)"
			return 0
		fi
		if alive "$sched_pid"; then
			fail_why="$name did not load (not enabled after 60 s): $(sched_said "$sched_log")"
			return 1
		fi
		wait "$sched_pid"
		fail_why="$name did not load (exited $?): $(sched_said "$sched_log")"
		sched_pid=""
		wait_disabled
		[ $try = 1 ] && emit "$(row_json kind retry setup "$name" why "$fail_why")" &&
			log "$fail_why; started again"
	done
	return 1
}
# Still under the setup's scheduler, loaded once since setup: 1 and $fail_why
# if it was ejected (or restarted) meanwhile, whose run then measured
# partly another scheduler.
intact() {
	[ -z "$sched_pid" ] && return 0
	[ "$(state)" = enabled ] && [ "$(cat /sys/kernel/sched_ext/enable_seq)" = "$sched_seq" ] &&
		alive "$sched_pid" && return 0
	sleep 0.5 # its last words: the UEI report follows the kernel's exit
	fail_why="$LEFT (state $(state), enable count $sched_seq then, $(cat /sys/kernel/sched_ext/enable_seq) now): $(sched_said "$sched_log")"
	return 1
}

# The split setups' halves: whole cores (thread_siblings_list, never CPU
# numbering: Zen numbers a core's threads c and c+N), the first half of the
# cores for ONLINE and the rest for BE; by threads where there is one core.
# Sets SPLIT_ON and SPLIT_BE (cpuset lists) and SPLIT_N (ONLINE's CPUs).
split_cpus() {
	local v
	v=$(PYTHONPATH=tests/lib python3 -c '
from smtshare import siblings
cores = sorted({tuple(sorted([c] + s)) for c, s in siblings().items()})
if len(cores) < 2:  # one core: by threads
    cores = [(c,) for t in cores for c in t]
half = len(cores) // 2
on = [c for t in cores[:half] for c in t]
be = [c for t in cores[half:] for c in t]
print(",".join(map(str, on)), ",".join(map(str, be)), len(on))') || return 1
	read -r SPLIT_ON SPLIT_BE SPLIT_N <<<"$v"
}

# Configure /online and /be (and load a scheduler) for a setup; undo with teardown.
sched_pid="" sched_log="" split_json=""
# ONLINE's CPU alone in the last alone round, 0.1% of the node (eevdf-room)
ALONE_ON_PM=""
setup() {
	echo 0 >$cg$BEG/cpu.idle	# first: an idle group refuses a weight
	echo 100 >$cg$BEG/cpu.weight
	echo max >$cg$BEG/cpu.max
	echo "" >$cg$ONL/cpuset.cpus	# empty: the parent's CPUs
	echo "" >$cg$BEG/cpuset.cpus
	fail_why="" split_json=""
	case $1 in
	alone | eevdf-none) ;;
	split-alone | split)
		# A static partition under EEVDF: ONLINE on half of the cores, BE
		# on the rest with cpu.max at the line less ONLINE's half, so the
		# node holds the line whatever ONLINE does. split-alone is the same
		# ONLINE half without BE: against it, split shows what BE costs
		# ONLINE with no CPU shared.
		[ "$n" -ge 2 ] || { fail_why="needs 2 CPUs or more"; return 1; }
		split_cpus || { fail_why="the CPU topology not read"; return 1; }
		echo "$SPLIT_ON" >$cg$ONL/cpuset.cpus || { fail_why="cpuset $SPLIT_ON refused"; return 1; }
		local quota=$((SUPPRESS * 1000 * n - SPLIT_N * 100000))
		[ $quota -ge 1000 ] || quota=1000
		split_json=",\"online_cpus\":\"$SPLIT_ON\",\"be_cpus\":\"$SPLIT_BE\",\"be_quota_us\":$quota"
		if [ "$1" = split ]; then
			echo "$SPLIT_BE" >$cg$BEG/cpuset.cpus || { fail_why="cpuset $SPLIT_BE refused"; return 1; }
			echo "$quota 100000" >$cg$BEG/cpu.max
		fi
		;;
	eevdf-weight1) echo 1 >$cg$BEG/cpu.weight ;;
	eevdf-idle) echo 1 >$cg$BEG/cpu.idle ;;
	eevdf-cpumax) echo "$((SUPPRESS * 1000 * n)) 100000" >$cg$BEG/cpu.max ;;
	eevdf-room)
		# the room under the line, as ONLINE alone left it this round
		[ -n "$ALONE_ON_PM" ] || { fail_why="no alone round before it to size the room"; return 1; }
		local quota=$(((SUPPRESS * 10 - ALONE_ON_PM) * n * 100))
		[ $quota -ge 1000 ] || quota=1000
		echo 1 >$cg$BEG/cpu.idle
		echo "$quota 100000" >$cg$BEG/cpu.max || { fail_why="cpu.max $quota refused"; return 1; }
		split_json=",\"be_quota_us\":$quota"
		;;
	scx_flatcg | scx_simple)
		# flatcg honours cgroup weights: use them
		[ "$1" = scx_flatcg ] && echo 1 >$cg$BEG/cpu.weight
		load_sched "$1" "$tmp/$1.log" "$PEERS/$1" || return 1
		;;
	tidemark)
		load_sched tidemark "$tmp/tm.log" build/scx_tidemark --online $ONL --be $BEG --suppress-pct $SUPPRESS ||
			return 1
		;;
	esac
	# Enabling switches every task over and the loader then does its first
	# rounds (rules, limits, homes); under TCG that is seconds of CPU, as
	# SYSTEM. A probe started then measured the start-up: ONLINE requests
	# backed up for seconds on 2 vCPUs.
	[ -n "$sched_pid" ] && sleep "$SETTLE_S"
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

# BE hogs for S seconds; their stress-ng metrics go to $tmp/be.out
be_start() { # seconds kind
	local s=$1 kind=${2:-cpu}
	case $kind in
	cpu) set -- --cpu $((n + 1)) --cpu-method int64 ;;
	matrix) set -- --matrix $((n + 1)) ;;
	cache) set -- --cache $((n + 1)) ;;
	churn) set -- --fork $((n + 1)) ;;
	kernel) set -- --fork "$n" --mmap 1 --mmap-bytes 32M ;;
	esac
	(echo $BASHPID >$cg$BEG/cgroup.procs &&
		exec stress-ng --temp-path $tmp "$@" --timeout "${s}s" --metrics-brief) >$tmp/be.out 2>&1 &
	be_pid=$!
}
be_ops() { # bogo ops/s (real time) summed over the stressors
	awk '/metrc:/ && $5 ~ /^[0-9]+$/ {s += $(NF-1)} END {printf "%.1f", s}' $tmp/be.out
}

# The ONLINE service's command, under perf stat where a PMU counts; its
# counts go to $tmp/perf.csv, read by perf_json.
online_cmd() {
	rm -f "$tmp/perf.csv"
	if [ "$pmu" = 1 ]; then
		echo perf stat -x, -o "$tmp/perf.csv" -e $PERF_EVENTS --
	fi
}
perf_json() { # -> ,"perf":{...} or nothing
	[ -s "$tmp/perf.csv" ] || return 0
	python3 - "$tmp/perf.csv" <<'PY'
import json, sys
v = {}
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) > 2 and f[2]:
        v[f[2].replace("-", "_").lower()] = int(f[0]) if f[0].isdigit() else None
print(',"perf":' + json.dumps(v), end="")
PY
}

probe() { # level seconds -> JSON on stdout
	# requests/s x 1 ms of CPU = level % of n CPUs; arrivals jittered by half
	# a period, so that runs are not phase-locked to the tick (tests/vm/priority.sh)
	local rate=$(($1 * n * 10))
	(echo $BASHPID >$cg$ONL/cgroup.procs &&
		exec $(online_cmd) build/tm-probe --messengers 1 --workers $((n * 2 + 2)) --rate $rate --work-us 1000 \
			--jitter-us $((500000 / rate)) --seconds "$2" --json) 2>/dev/null
}

cyclic() { # seconds -> "avg max p99" us
	(echo $BASHPID >$cg$ONL/cgroup.procs &&
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

log "$where: kernel $(uname -r), $n CPUs, mode $mode"
# the commit that ran (a report regenerated later names it, not its own)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
emit "{\"kind\":\"meta\",\"kernel\":\"$(uname -r)\",\"cpus\":$n,\"mode\":\"$mode\",\"where\":\"$where\",\"commit\":\"$commit\"}"
emit "$machine"

# the setups that run ONLINE without BE: references, not peers
no_be() { [ "$1" = alone ] || [ "$1" = split-alone ]; }

# One round of the bursty service next to BE (none for alone): the probe's
# latencies, the cgroups' cpu.stat, node busy per 5 ms window from outside.
bursty_run() { # setup round
	local s=$1 round=$2 rate=$((RATE_PER_CPU * n)) p bw t0 t1 o0 o1 b0 b1 r0 r1 keep_series="" ser=""
	setup "$s" || { fail_row "$s" "bursty round $round" "$fail_why"; teardown; return; }
	# tidemark's use over time, for the report's picture of the line
	[ "$s" = tidemark ] && keep_series=1
	# started before the load: a fresh python next to BE hogs can take
	# seconds to start under a scheduler that does not favour it. It
	# parses its trace only after the probe (--hold, SIGUSR1 below):
	# parsed while the probe ran, seconds of python CPU competed with the
	# service's last requests, and more so under tidemark, where it is a
	# SYSTEM task in the ONLINE queue (tidemark p99 26.7 and 7.6 ms
	# against 6.4 and 6.1 ms held, 2 vCPUs, one boot).
	rm -f $tmp/bursty.series
	python3 tests/lib/busywin.py --hold --seconds $((SECONDS_RUN - 1)) --delay 2 --line $SUPPRESS \
		${keep_series:+--series $tmp/bursty.series} --cgroup online=$ONL --cgroup be=$BEG \
		>$tmp/bw.json 2>$tmp/bw.err &
	local bwp=$!
	sleep 0.5
	no_be "$s" || be_start $((SECONDS_RUN + 3)) cpu
	sleep 1
	t0=$(now_us) o0=$(usage $ONL) b0=$(usage $BEG) r0=$(usage "")
	p=$( (echo $BASHPID >$cg$ONL/cgroup.procs &&
		exec $(online_cmd) build/tm-probe --messengers 1 --workers "$n" --rate $rate --work-us 1000 \
			--jitter-us $((500000 / rate)) --seconds "$SECONDS_RUN" --json) 2>/dev/null)
	t1=$(now_us) o1=$(usage $ONL) b1=$(usage $BEG) r1=$(usage "")
	kill -USR1 $bwp 2>/dev/null
	wait $bwp
	if ! no_be "$s"; then
		kill $be_pid 2>/dev/null
		wait $be_pid 2>/dev/null
	fi
	bw=$(cat $tmp/bw.json)
	# the 5 ms windows in 100 ms ones
	[ -n "$keep_series" ] && [ -s $tmp/bursty.series ] &&
		ser=$(python3 tests/lib/cutwin.py --group 20 --keep $tmp/bursty.series - 2>/dev/null |
			python3 -c 'import json,sys; print(",\"series\":" + json.dumps(json.load(sys.stdin)["series"]))')
	finish "$s" "bursty round $round" "${p:+$bw}" \
		"no result (probe: ${p:-none}; busywin: $(cat $tmp/bw.err))" || return
	# cpu.stat shares in 0.1% of the node
	local on_pm=$(((o1 - o0) * 1000 / ((t1 - t0) * n)))
	[ "$s" = alone ] && ALONE_ON_PM=$on_pm
	emit "{\"kind\":\"bursty\",\"setup\":\"$s\",\"round\":$round,\"cpus\":$n,\"line\":$SUPPRESS,\"probe\":$p,\"windows\":$bw,\"online_pm\":$on_pm,\"be_pm\":$(((b1 - b0) * 1000 / ((t1 - t0) * n))),\"node_pm\":$(((r1 - r0) * 1000 / ((t1 - t0) * n))),\"be_ops\":$(no_be "$s" && echo 0 || be_ops)$ser$split_json$(perf_json)}"
	# busywin.py's own json.dumps: "node" and its "mean" lead (no python
	# started for a log line: a start costs about a second under TCG)
	log "bursty $s round $round: node $(sed -n 's/.*"node": {"mean": \([0-9.]*\).*/\1/p' <<<"$bw")% of $n CPUs"
}

# cpu.stat's usage_usec of cgroup $1 with bash builtins: read in the middle
# of a measured run, where a fork would be counted in its windows
usage_b() { # cgroup
	local k v
	while read -r k v; do
		[ "$k" = usage_usec ] && echo "$v" && return 0
	done <"$cg$1/cpu.stat"
	return 1
}

# One round of the request service next to BE (none for alone): tm-svc, a
# dispatcher handing 1 ms requests to a pool of one worker per CPU, every
# reply back through the dispatcher, so that each request is two wakeups.
# Node use by the cgroups' cpu.stat over the run (less its first second and
# last half) and by 100 ms sched_switch windows cut to the service's own
# span (busywin.py --clock mono, cutwin.py); the scheduler's own counters
# over the same time for tidemark.
svc_run() { # setup round
	local s=$1 round=$2 rate=$((RATE_PER_CPU * n)) v cut t0 t1 o0 o1 b0 b1 svp bwp stp="" st=null
	setup "$s" || { fail_row "$s" "svc round $round" "$fail_why"; teardown; return; }
	rm -f $tmp/svc.json $tmp/svc.series $tmp/st.json
	python3 tests/lib/busywin.py --hold --seconds $((SECONDS_RUN + 3)) --window-ms 100 --clock mono \
		--series $tmp/svc.series --cgroup online=$ONL --cgroup be=$BEG >/dev/null 2>$tmp/bw.err &
	bwp=$!
	no_be "$s" || be_start $((SECONDS_RUN + 6)) cpu
	# python's imports take a second or more under TCG: the trace is on first
	sleep 2
	(echo $BASHPID >$cg$ONL/cgroup.procs &&
		exec $(online_cmd) build/tm-svc --rate $rate --work-us 1000 --footprint-kb 256 \
			--jitter-us $((500000 / rate)) --seconds "$SECONDS_RUN" --json) >$tmp/svc.json 2>$tmp/svc.err &
	svp=$!
	# the scheduler's counters over SECONDS_RUN - 3 s: the tool started in
	# the first second, which no window counts (started at 1 s in, under
	# TCG, it made a window 99.8% busy, 32 points of it SYSTEM), and done
	# before the arrivals end even if it takes a second to start
	sleep 0.2
	if [ "$s" = tidemark ]; then
		build/tidemarkctl stats --interval $((SECONDS_RUN - 3)) --once --json >$tmp/st.json 2>/dev/null &
		stp=$!
	fi
	sleep 0.8
	t0=$EPOCHREALTIME o0=$(usage_b $ONL) b0=$(usage_b $BEG)
	sleep $((SECONDS_RUN - 2)).5
	t1=$EPOCHREALTIME o1=$(usage_b $ONL) b1=$(usage_b $BEG)
	wait $svp
	[ -n "$stp" ] && wait $stp && [ -s $tmp/st.json ] && st=$(cat $tmp/st.json)
	kill -USR1 $bwp 2>/dev/null
	wait $bwp
	if ! no_be "$s"; then
		kill $be_pid 2>/dev/null
		wait $be_pid 2>/dev/null
	fi
	v=$(cat $tmp/svc.json 2>/dev/null)
	cut=$(python3 tests/lib/cutwin.py --line $SUPPRESS --min 50 ${stp:+--keep} $tmp/svc.series $tmp/svc.json \
		2>$tmp/cut.err)
	finish "$s" "svc round $round" "${v:+$cut}" \
		"no result (tm-svc: ${v:-none} $(cat $tmp/svc.err); windows: $(cat $tmp/cut.err $tmp/bw.err))" || return
	# cpu.stat shares in 0.1% of the node, over t0-t1 (microseconds)
	local us=$(((${t1/./} - ${t0/./}) * n))
	[ "$s" = alone ] && ALONE_ON_PM=$(((o1 - o0) * 1000 / us))
	emit "{\"kind\":\"svc\",\"setup\":\"$s\",\"round\":$round,\"cpus\":$n,\"line\":$SUPPRESS,\"svc\":$v,\"windows\":$cut,\"online_pm\":$(((o1 - o0) * 1000 / us)),\"be_pm\":$(((b1 - b0) * 1000 / us)),\"stats\":$st$split_json$(perf_json)}"
	log "svc $s round $round: done"
}

# hackbench without BE under setup $1, in round $2; emits a row of kind $3.
# In round 1 of the overhead rows, a sched_ext setup then runs hackbench
# once more, untimed (the BPF statistics cost time), for its callbacks'
# costs over exactly that run (tidemarkctl progs -- CMD).
hackbench_run() { # setup round kind [extra JSON]
	local s=$1 round=$2 cb="" t0 t1 hs
	setup "$s" || { fail_row "$s" "hackbench round $round" "$fail_why"; teardown; return; }
	if [ "$s" != eevdf-none ] && [ "$round" = 1 ] && [ "$3" = overhead ]; then
		cb=1
	fi
	# context switches: how often the setup hands the CPU over, which
	# hackbench pays for (the node's count, hackbench nearly all of it)
	c0=$(awk '/^ctxt /{print $2}' /proc/stat)
	t0=$(date +%s.%N)
	(echo $BASHPID >$cg$ONL/cgroup.procs && exec hackbench -g 4 -l $LOOPS >/dev/null 2>&1)
	t1=$(date +%s.%N)
	c1=$(awk '/^ctxt /{print $2}' /proc/stat)
	if [ -n "$cb" ]; then
		# shellcheck disable=SC2016
		build/tidemarkctl progs --json -- sh -c 'echo $$ >"$1/cgroup.procs" && exec hackbench -g 4 -l "$2" >/dev/null 2>&1' \
			sh "$cg$ONL" "$LOOPS" >$tmp/progs.json 2>$tmp/progs.err
	fi
	finish "$s" "hackbench round $round" ran || return
	hs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	cs=$(awk -v a="$t0" -v b="$t1" -v n=$((c1 - c0)) 'BEGIN { printf "%.0f", n / (b - a) }')
	emit "{\"kind\":\"$3\",\"setup\":\"$s\",\"round\":$round,\"loops\":$LOOPS,\"hackbench_s\":$hs,\"ctxt_per_s\":$cs${4:-}}"
	log "hackbench $s round $round: $hs s"
	if [ -n "$cb" ]; then
		if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' $tmp/progs.json 2>/dev/null; then
			emit "{\"kind\":\"callbacks\",\"setup\":\"$s\",\"stats\":$(cat $tmp/progs.json)}"
		else
			log "callback costs of $s not read: $(cat $tmp/progs.err)"
		fi
	fi
}

preempt_model() { sed -n 's/.*(\([a-z]*\)).*/\1/p' $PREEMPT_FILE; }

if [ "$mode" = preempt ]; then
	if [ ! -w $PREEMPT_FILE ] || [ -z "$(preempt_model)" ]; then
		why="$PREEMPT_FILE is not there (a kernel without CONFIG_PREEMPT_DYNAMIC, or debugfs not mounted)"
		log "preempt: $why"
		emit "{\"kind\":\"preempt_none\",\"why\":\"$why\"}"
		exit 0
	fi
	preempt_orig=$(preempt_model)
	models="$preempt_orig full"
	[ "$preempt_orig" = full ] && models="full voluntary"
	emit "{\"kind\":\"preempt_models\",\"default\":\"$preempt_orig\",\"models\":\"$models\",\"cpus\":$n}"
	for round in $(seq "$ROUNDS"); do
		for model in $models; do
			echo "$model" >$PREEMPT_FILE || { log "preempt: $model refused"; exit 1; }
			[ "$(preempt_model)" = "$model" ] || { log "preempt: $model not taken ($(cat $PREEMPT_FILE))"; exit 1; }
			for s in eevdf-none tidemark; do
				hackbench_run "$s" "$round" preempt ",\"model\":\"$model\",\"what\":\"hackbench\""
			done
			setup alone
			p=$(probe 30 "$SECONDS_RUN")
			if [ -n "$p" ]; then
				emit "{\"kind\":\"preempt\",\"model\":\"$model\",\"what\":\"probe\",\"setup\":\"alone\",\"round\":$round,\"probe\":$p}"
			else
				fail_row alone "preempt $model round $round" "tm-probe gave no result"
			fi
			for s in $SETUPS; do
				setup "$s" || { fail_row "$s" "preempt $model round $round" "$fail_why"; teardown; continue; }
				be_start $((SECONDS_RUN + 2)) kernel
				sleep 1
				p=$(probe 30 "$SECONDS_RUN")
				wait $be_pid
				finish "$s" "preempt $model round $round" "$p" "tm-probe gave no result" || continue
				emit "{\"kind\":\"preempt\",\"model\":\"$model\",\"what\":\"probe\",\"setup\":\"$s\",\"round\":$round,\"probe\":$p,\"be_ops\":$(be_ops)}"
				log "preempt $model round $round: $s done"
			done
		done
	done
	log "done"
	exit 0
fi

if [ "$mode" = bursty ]; then
	be_start "$SECONDS_RUN" cpu
	wait $be_pid
	emit "{\"kind\":\"be_alone\",\"be_ops\":$(be_ops)}"
	for round in $(seq "$ROUNDS"); do
		for s in alone $SETUPS; do
			bursty_run "$s" "$round"
		done
		for s in alone $SETUPS; do
			svc_run "$s" "$round"
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

# ROUNDS rounds per level, the setups interleaved in each (a drift of the
# machine hits every setup alike); cyclictest and the antagonists once.
for level in $LEVELS; do
	for round in $(seq "$ROUNDS"); do
		setup alone
		p=$(probe "$level" "$SECONDS_RUN")
		if [ -n "$p" ]; then
			emit "{\"kind\":\"probe\",\"setup\":\"alone\",\"level\":$level,\"round\":$round,\"probe\":$p$(perf_json)}"
		else
			fail_row alone "level $level% round $round" "tm-probe gave no result"
		fi
		log "level $level% round $round: alone done"
		once=0
		[ "$mode" = full ] && [ "$level" = 30 ] && [ "$round" = 1 ] && once=1
		if [ $once = 1 ]; then
			read -r ca cm cp < <(cyclic "$SECONDS_RUN")
			emit "{\"kind\":\"cyclictest\",\"setup\":\"alone\",\"avg_us\":$ca,\"max_us\":$cm,\"p99_us\":$cp}"
		fi
		for s in $SETUPS; do
			setup "$s" || { fail_row "$s" "level $level% round $round" "$fail_why"; teardown; continue; }
			be_start $((SECONDS_RUN + 2)) cpu
			sleep 1
			t0=$(now_us) o0=$(usage $ONL) b0=$(usage $BEG)
			p=$(probe "$level" "$SECONDS_RUN")
			t1=$(now_us) o1=$(usage $ONL) b1=$(usage $BEG)
			wait $be_pid
			on=$(((o1 - o0) * 100 / ((t1 - t0) * n)))
			be=$(((b1 - b0) * 100 / ((t1 - t0) * n)))
			busy=$((on + be))
			# the rows go out once the scheduler is known to have stayed
			rows=()
			[ -n "$p" ] && rows+=("{\"kind\":\"probe\",\"setup\":\"$s\",\"level\":$level,\"round\":$round,\"probe\":$p,\"busy\":$busy,\"online\":$on,\"be\":$be,\"be_ops\":$(be_ops)$(perf_json)}")
			if [ $once = 1 ] && [ -n "$p" ]; then
				be_start $((SECONDS_RUN + 3)) cpu
				read -r ca cm cp < <(cyclic "$SECONDS_RUN")
				kill $be_pid 2>/dev/null
				wait $be_pid 2>/dev/null
				rows+=("{\"kind\":\"cyclictest\",\"setup\":\"$s\",\"avg_us\":$ca,\"max_us\":$cm,\"p99_us\":$cp}")
				for kind in matrix cache churn; do
					be_start $((SECONDS_RUN + 2)) $kind
					sleep 1
					p=$(probe 30 "$SECONDS_RUN")
					kill $be_pid 2>/dev/null
					wait $be_pid 2>/dev/null
					[ -n "$p" ] || { fail_row "$s" "antagonist $kind" "tm-probe gave no result"; continue; }
					rows+=("{\"kind\":\"antagonist\",\"setup\":\"$s\",\"be\":\"$kind\",\"probe\":$p}")
				done
			fi
			finish "$s" "level $level% round $round" "${rows[*]}" "tm-probe gave no result" || continue
			for r in "${rows[@]}"; do emit "$r"; done
			log "level $level% round $round: $s done"
		done
	done
done

# Reaction: BE saturating, then an ONLINE burst on every CPU. Time until BE's
# CPU use (sampled every 2 ms from cpu.stat) is held at its new budget.
for s in tidemark eevdf-cpumax; do
	setup "$s" || { fail_row "$s" reaction "$fail_why"; teardown; continue; }
	be_start 8 cpu
	sleep 2
	r=$(tools/bench/react.py --be $BEG --online $ONL --cpus "$n" --burst-s 2 --floor-pct 15)
	kill $be_pid 2>/dev/null
	wait $be_pid 2>/dev/null
	finish "$s" reaction "$r" "react.py gave no result" || continue
	emit "{\"kind\":\"reaction\",\"setup\":\"$s\",\"reaction\":$r}"
	log "reaction $s: $r"
done

# Scheduler overhead without BE: hackbench (rt-tests) under EEVDF, the
# simplest sched_ext scheduler and tidemark, ROUNDS interleaved rounds; for
# the two sched_ext ones, what each callback costs meanwhile in round 1
# (tidemarkctl progs: the kernel's BPF run-time statistics, switched on for
# those seconds only).
for round in $(seq "$ROUNDS"); do
	for s in eevdf-none scx_simple tidemark; do
		hackbench_run "$s" "$round" overhead
	done
done
log "done"
