#!/usr/bin/env bash
# The tuning sweep (make bench BENCH_MODE=sweep boots it in a VM; as root on
# any machine with sched_ext it runs as is): one colocation workload, one
# scheduler lifetime, one tunable changed at a time with `tidemarkctl set`
# (no reload), every value measured REPEATS times, the values interleaved so
# that drift over the run does not line up with a value. One JSON object per
# measurement to OUT; tools/bench/tuning.py turns them into docs/tuning.md.
#
#   tools/bench/sweep.sh --out FILE [--seconds S] [--repeats R]
#                        [--only TUNABLE[,TUNABLE...]] [--values V,V,...]
#                        [--light-pct P] [--heavy-pct P] [--vm DESCRIPTION]
#
# Workload, under cgroups of its own (/tm-sweep): ONLINE is a light service
# (tm-probe, 1 ms requests at 20% of the CPUs: the latency measured) and a
# heavy one (20 ms requests at 20%: what a light request may wait behind on
# a CPU, which is where slice_us shows); BE is one stress-ng CPU hog per CPU
# plus one, running throughout. Node busy is sampled every 100 ms from the
# root cgroup's cpu.stat (outside the scheduler); the scheduler's own view
# over the same interval comes from `tidemarkctl stats --once --json`.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

out="" seconds=10 repeats=3 only="" values="" light_pct=10 heavy_pct=10 vm="" 
die() { echo "sweep: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--out) [ $# -ge 2 ] || die "--out needs a file"; out=$2; shift 2 ;;
	--seconds) [[ ${2:-} =~ ^[0-9]+$ ]] && ((10#$2 >= 1 && 10#$2 <= 600)) || die "--seconds must be 1-600, got '${2:-}'"; seconds=$2; shift 2 ;;
	--repeats) [[ ${2:-} =~ ^[0-9]+$ ]] && ((10#$2 >= 1 && 10#$2 <= 20)) || die "--repeats must be 1-20, got '${2:-}'"; repeats=$2; shift 2 ;;
	--light-pct) [[ ${2:-} =~ ^[0-9]+$ ]] && ((10#$2 >= 1 && 10#$2 <= 90)) || die "--light-pct must be 1-90, got '${2:-}'"; light_pct=$2; shift 2 ;;
	--heavy-pct) [[ ${2:-} =~ ^[0-9]+$ ]] && ((10#$2 >= 1 && 10#$2 <= 90)) || die "--heavy-pct must be 1-90, got '${2:-}'"; heavy_pct=$2; shift 2 ;;
	--vm) [ $# -ge 2 ] || die "--vm needs a description"; vm=$2; shift 2 ;;
	--only) [ $# -ge 2 ] || die "--only needs tunable names"; only=$2; shift 2 ;;
	--values) [ $# -ge 2 ] || die "--values needs a list"; values=$2; shift 2 ;;
	*) die "unknown option '$1'" ;;
	esac
done
[ -n "$out" ] || die "--out FILE is required"
# Each tunable's useful range (the default among them). --values applies to
# a single --only tunable.
declare -A RANGE=(
	[slice_us]="500 1000 2000 5000 20000"
	[wake_gran_us]="0 500 1000 2000 4000"
	[window_us]="1000 2000 5000 20000 100000"
	[suppress_pct]="40 50 65 80 95"
	[be_floor_mcpu]="0 100 250 500 1000"
	[max_be_wait_ms]="10 20 50 200 1000"
)
ORDER="slice_us wake_gran_us window_us suppress_pct be_floor_mcpu max_be_wait_ms"
if [ -n "$only" ]; then
	ORDER=${only//,/ }
	for t in $ORDER; do
		[ -n "${RANGE[$t]:-}" ] || die "--only: '$t' is not swept (one of: ${!RANGE[*]})"
	done
fi
if [ -n "$values" ]; then
	[ "$(wc -w <<<"$ORDER")" = 1 ] || die "--values needs exactly one --only tunable"
	[[ $values =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--values must be whole numbers separated by commas, got '$values'"
	RANGE[$ORDER]=${values//,/ }
fi

[ "$(id -u)" = 0 ] || die "needs root (cgroups, BPF)"
[ -r /sys/kernel/sched_ext/state ] || die "this kernel has no sched_ext"
[ "$(cat /sys/kernel/sched_ext/state)" = disabled ] || die "a sched_ext scheduler is already loaded"
for b in build/scx_tidemark build/tidemarkctl build/tm-probe; do
	[ -x $b ] || die "$b missing: run make all"
done
command -v stress-ng >/dev/null || die "stress-ng missing: run make deps"

n=$(nproc)
cg=/sys/fs/cgroup
top=$cg/tm-sweep
: >"$out" || die "cannot write $out"
sched=""
stress=""
cleanup() {
	[ -n "$stress" ] && kill "$stress" 2>/dev/null && wait "$stress" 2>/dev/null
	if [ -n "$sched" ]; then
		kill -INT "$sched" 2>/dev/null
		wait "$sched" 2>/dev/null
	fi
	for d in $top/be $top/online/light $top/online/heavy $top/online $top; do
		[ -d $d ] || continue
		# anything left goes back to the root before the cgroup is removed
		while read -r p; do echo "$p" >$cg/cgroup.procs 2>/dev/null; done <$d/cgroup.procs
		rmdir $d 2>/dev/null
	done
}
trap cleanup EXIT
log() { echo "sweep: $*" >&2; }
emit() { echo "$1" >>"$out"; }

echo "+cpu" >$cg/cgroup.subtree_control
mkdir -p $top && echo "+cpu" >$top/cgroup.subtree_control
mkdir -p $top/online $top/be && echo "+cpu" >$top/online/cgroup.subtree_control
mkdir -p $top/online/light $top/online/heavy

build/scx_tidemark --online /tm-sweep/online --be /tm-sweep/be >/tmp/tm-sweep-sched.log 2>&1 &
sched=$!
for _ in $(seq 100); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.1; done
[ "$(cat /sys/kernel/sched_ext/state)" = enabled ] || die "scx_tidemark did not load: $(cat /tmp/tm-sweep-sched.log)"
defaults=$(build/tidemarkctl show | head -1) || die "tidemarkctl show failed"
[[ $defaults == suppress_pct=* ]] || die "tidemarkctl show printed '$defaults'"
log "kernel $(uname -r), $n CPUs; $defaults"

(echo $BASHPID >$top/be/cgroup.procs &&
	exec stress-ng --temp-path /tmp --cpu $((n + 1)) --cpu-method int64 --timeout 86400s) >/dev/null 2>&1 &
stress=$!

usage() { local k v; while read -r k v; do [ "$k" = usage_usec ] && echo "$v" && return; done <"$1/cpu.stat"; }

# Node busy every 100 ms for S seconds: "t_us usage_us" lines (bash builtins
# only, apart from sleep: the sampler itself should cost nothing measurable)
sampler() {
	local end=$((${EPOCHREALTIME/./} + $1 * 1000000)) t k v fd
	# read -t on a FIFO nobody writes: a 100 ms sleep without a fork
	rm -f /tmp/tm-sweep-tick && mkfifo /tmp/tm-sweep-tick && exec {fd}<>/tmp/tm-sweep-tick
	while :; do
		t=${EPOCHREALTIME/./}
		while read -r k v; do [ "$k" = usage_usec ] && break; done <$cg/cpu.stat
		echo "$t $v"
		((t < end)) || break
		read -r -t 0.1 -u $fd
	done
	exec {fd}<&-
}

probe() { # cgroup rate work_us seconds
	local jitter=$((500000 / $2))
	(echo $BASHPID >$top/online/$1/cgroup.procs &&
		exec build/tm-probe --messengers 1 --workers $((n * 2 + 2)) --rate "$2" --work-us "$3" \
			--jitter-us "$jitter" --seconds "$4" --seed $RANDOM --json) 2>/dev/null
}

# light: 1 ms x rate = light_pct % of the CPUs; heavy: 20 ms x rate = heavy_pct %
light_rate=$((n * light_pct * 10))
heavy_rate=$(((n * heavy_pct + 1) / 2))
emit "{\"kind\":\"meta\",\"kernel\":\"$(uname -r)\",\"cpus\":$n,\"seconds\":$seconds,\"repeats\":$repeats,\"light\":{\"rate\":$light_rate,\"work_us\":1000},\"heavy\":{\"rate\":$heavy_rate,\"work_us\":20000},\"be\":\"stress-ng --cpu $((n + 1)) --cpu-method int64\",\"defaults\":\"$defaults\",\"vm\":\"${vm//\"/}\"}"
sleep 2

measure() { # tunable value repeat
	local t0 b0 o0 t1 b1 o1 st light heavy samples hp sp applied msg
	if ! msg=$(build/tidemarkctl set "$1=$2" 2>&1 >/dev/null); then
		msg=${msg//[\"\\]/}
		emit "{\"kind\":\"error\",\"tunable\":\"$1\",\"value\":$2,\"what\":\"${msg//$'\n'/ }\"}"
		return 1
	fi
	applied=$(build/tidemarkctl show | head -1)
	[[ " $applied " == *" $1=$2 "* ]] || { emit "{\"kind\":\"error\",\"tunable\":\"$1\",\"value\":$2,\"what\":\"not in effect after set: $applied\"}"; return 1; }
	sleep 1
	probe heavy "$heavy_rate" 20000 $((seconds + 1)) >/tmp/tm-sweep-heavy.json &
	hp=$!
	sleep 0.3
	sampler "$seconds" >/tmp/tm-sweep-samples &
	sp=$!
	build/tidemarkctl stats --interval "$seconds" --once --json >/tmp/tm-sweep-stats.json 2>&1 &
	st=$!
	t0=${EPOCHREALTIME/./} o0=$(usage $top/online) b0=$(usage $top/be)
	light=$(probe light "$light_rate" 1000 "$seconds")
	t1=${EPOCHREALTIME/./} o1=$(usage $top/online) b1=$(usage $top/be)
	wait $st $sp $hp
	heavy=$(cat /tmp/tm-sweep-heavy.json)
	samples=$(awk '{if (NR > 1) printf ","; printf "[%s,%s]", $1, $2}' /tmp/tm-sweep-samples)
	[ -n "$light" ] && [ -n "$heavy" ] || { emit "{\"kind\":\"error\",\"tunable\":\"$1\",\"value\":$2,\"what\":\"a probe printed nothing\"}"; return 1; }
	grep -q '^{' /tmp/tm-sweep-stats.json || { emit "{\"kind\":\"error\",\"tunable\":\"$1\",\"value\":$2,\"what\":\"tidemarkctl stats: $(head -c 200 /tmp/tm-sweep-stats.json)\"}"; return 1; }
	emit "{\"kind\":\"sweep\",\"tunable\":\"$1\",\"value\":$2,\"repeat\":$3,\"interval_us\":$((t1 - t0)),\"online_us\":$((o1 - o0)),\"be_us\":$((b1 - b0)),\"light\":$light,\"heavy\":$heavy,\"node_usage\":[$samples],\"sched\":$(cat /tmp/tm-sweep-stats.json)}"
}

fail=0
for t in $ORDER; do
	dfl=$(grep -o "$t=[0-9]*" <<<"$defaults" | cut -d= -f2)
	[ -n "$dfl" ] || die "no default for $t in '$defaults'"
	for r in $(seq "$repeats"); do
		for v in ${RANGE[$t]}; do
			measure "$t" "$v" "$r" || fail=1
			log "$t=$v repeat $r done"
		done
	done
	build/tidemarkctl set "$t=$dfl" >/dev/null || die "could not put $t back to $dfl"
	[[ " $(build/tidemarkctl show | head -1) " == *" $t=$dfl "* ]] || die "$t is not back at $dfl"
	log "$t back to $dfl"
done
[ "$(cat /sys/kernel/sched_ext/state)" = enabled ] || { log "the scheduler is no longer enabled"; fail=1; }
exit $fail
