#!/usr/bin/env bash
# vm: --cpus 2 --timeout 600
# plan: 27
# `make bench` host mode (tools/bench/run.sh host), run here as it would be
# on a server booted with a sched_ext kernel: refused while another
# sched_ext scheduler is loaded or a bench's cgroups are left, then a short
# quick run (2 s per setup, one bursty round, hackbench -l 20) whose report
# must carry the machine's facts as this kernel gives them, a row for every
# setup, and nothing left behind; then, in one more run, a peer killed
# mid-run must be named as having left (not measured as if it ran), and a
# run stopped half-way must clean up too. The figures of so short a run
# are not judged: the bench's own targets are (docs/benchmarks.md).
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
out=$(mktemp -d)
# 1 s, not 3, after a scheduler loads: these figures are not judged
short() { env BENCH_OUT="$out" BENCH_SECONDS=2 BENCH_ROUNDS=1 BENCH_LOOPS=20 BENCH_SETTLE_S=1 "$@"; }

# refused, with nothing touched, while another scheduler runs
build/peers/scx_simple >/dev/null 2>&1 &
simple=$!
wait_state enabled 10 || not_ok "scx_simple loads"
expect_fail "refused while scx_simple is loaded, named" 1 "a sched_ext scheduler is loaded (simple)" \
	short tools/bench/run.sh host quick
check "nothing created then" test ! -e $cg/tidemark-bench
kill -INT $simple
wait $simple 2>/dev/null
wait_state disabled 10
mkdir $cg/tidemark-bench
expect_fail "refused while a bench's cgroups are left" 1 "/sys/fs/cgroup/tidemark-bench exists" \
	short tools/bench/run.sh host quick
rmdir $cg/tidemark-bench

t0=$(date +%s)
short tools/bench/run.sh host quick >"$out/run.log" 2>&1
rc=$?
note "host mode, quick, short: $(($(date +%s) - t0)) s"
expect_eq "host mode runs" 0 $rc || cat "$out/run.log" | sed 's/^/#   /'
md=$out/benchmarks.md
check "the report, its results and its plots are written" test -s "$md" -a -s "$out/results.jsonl" -a -s "$out/latency.png" -a -s "$out/tradeoff.png"

# the machine's facts, as this kernel and sysfs give them
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
check "the CPU model" grep -qF "| CPU | $model, a virtual machine" "$md"
check "the CPUs" grep -qF "| CPUs | $(nproc) online; possible CPU ids $(cat /sys/devices/system/cpu/possible) |" "$md"
l3=$(cat /sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list)
check "the L3 domain from the topology reader" grep -qF "| L3 domains | 1: $l3 |" "$md"
hz=$(zcat /proc/config.gz | sed -n 's/^CONFIG_HZ=//p')
check "HZ from the kernel's config ($hz)" grep -qF "| HZ | $hz (kernel config) |" "$md"
# the fragment's PREEMPT_DYNAMIC: the model the kernel runs now, from debugfs
if [ -r /sys/kernel/debug/sched/preempt ]; then
	pm=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' /sys/kernel/debug/sched/preempt)
	check "the preemption model as the kernel runs it ($pm, dynamic)" \
		grep -qF "| preemption | $pm (dynamic, /sys/kernel/debug/sched/preempt" "$md"
else
	pm=$(zcat /proc/config.gz | grep -q '^CONFIG_PREEMPT_VOLUNTARY=y' && echo voluntary)
	check "the preemption model from the kernel's config ($pm)" grep -qF "| preemption | $pm (kernel config) |" "$md"
fi
if perf stat -x, -e instructions -- true 2>&1 | grep -q '^[0-9]*,.*instructions'; then
	check "a PMU: the ONLINE service's IPC per setup" grep -q "ONLINE IPC" "$md"
else
	check "no PMU here (TCG): said, and no IPC column" \
		bash -c "grep -q '^| PMU | none (perf stat' '$md' && ! grep -q 'ONLINE IPC' '$md'"
fi
check "the run says where it ran" grep -q "On this machine directly, $(nproc) CPUs online" "$md"
check "and nothing of the VM's method" bash -c "! grep -q 'QEMU\|icount\|vCPU' '$md'"

# every setup measured: the latency table, the bursty table, hackbench (with
# its context switches per second). A peer may instead be listed as left
# mid-run with the kernel's reason: scx_flatcg, its BE cgroup at weight 1,
# stalled BE until the kernel's watchdog ejected it in one run here
# ("runnable task stall", BE runnable 40 s on its cgroup's queue while both
# CPUs idled); that is the peer's result, and the bench's to report.
missing=""
for s in eevdf-weight1 eevdf-idle eevdf-cpumax scx_simple scx_flatcg tidemark; do
	grep -q "^| $s | [0-9]* / [0-9]* / [0-9]* |" "$md" && continue
	if [[ $s == scx_* ]] && grep -q "^- $s, level 30% round 1: the scheduler left during the run .*EXIT: " "$md"; then
		note "$(grep "^- $s, level 30% round 1: " "$md")"
		continue
	fi
	missing+=" latency:$s"
done
for s in alone eevdf-idle eevdf-cpumax eevdf-room scx_simple split-alone split tidemark; do
	grep -q "^| $s | [0-9.]* |" "$md" || missing+=" bursty:$s"
done
for s in EEVDF scx_simple tidemark; do
	grep -q "^| $s | [0-9.]* [^|]*| [0-9.]*x | [0-9][0-9 ()-]* |" "$md" || missing+=" hackbench:$s"
done
expect_eq "a row for every setup (latency, bursty, hackbench)" "" "$missing" ||
	grep '^bench: ' "$out/run.log" | sed 's/^/#   /'
check "no failed run listed" bash -c "! grep -q 'failed and' '$md'"
# a scheduler started twice (the first exited while loading): its words
grep 'started again$' "$out/run.log" | sed 's/^/# /'
check "the bursty table is for this machine's CPUs" grep -q "^## A bursty service on $(nproc) CPUs" "$md"
check "callback costs of scx_simple and tidemark, each over a hackbench run of its own" \
	grep -q "^| dispatch | [1-9][0-9]* | [1-9][0-9]* | [1-9][0-9]* | [1-9][0-9]* |" "$md"
check "hackbench's loops as run" grep -q "hackbench -g 4 -l 20\`" "$md"

leftovers() {
	local l=""
	[ -e $cg/tidemark-bench ] && l+=" cgroups"
	[ "$(scx_state)" = disabled ] || l+=" scheduler($(scx_state))"
	pgrep -x stress-ng >/dev/null && l+=" stress-ng"
	pgrep -f build/tm-probe >/dev/null && l+=" tm-probe"
	pgrep -f "tools/bench/(run|guest)[.]sh" >/dev/null && l+=" bench-shells"
	echo "${l# }"
}
expect_eq "nothing left behind" "" "$(leftovers)"

# a peer ejected mid-run (killed here): its run is named as left, not
# measured under EEVDF as if it were the peer's; then stopped half-way
# (tidemark loaded, hogs running): still nothing left. Only these two
# setups, so that each step comes at a known point.
rm -rf "${out:?}"/*
# Each setup measures 20 s here, not 2: the stop must land inside the
# tidemark round, and with 2 s the round could end between the test's
# sighting of it and its signal (a loaded host once let the run go on to its
# end, exit 0)
BENCH_SETUPS="scx_simple tidemark" short env BENCH_SECONDS=20 tools/bench/run.sh host quick >"$out/run2.log" 2>&1 &
run=$!
# by the bench's word that it holds the scheduler, not the kernel's state:
# killed while the bench still waited for it to load, scx_simple would be
# a start that failed and started again (a retry row), not a peer that left
blog() { wait_log "$out/run2.log" "^bench: $1" 120; } # the bench's line, up to 120 s
blog "scx_simple loaded" || not_ok "scx_simple loaded by the bench"
simple=$(pgrep -x scx_simple)
[ -n "$simple" ] && kill -KILL "$simple"
blog "scx_simple, level 30% round 1: "
check "a peer ejected mid-run: its run named as left, with why" \
	grep -q "^bench: scx_simple, level 30% round 1: the scheduler left during the run (state disabled," "$out/run2.log" ||
	grep '^bench: ' "$out/run2.log" | sed 's/^/#   /'
check "and no row measured for it" bash -c "! grep -q 'level 30% round 1: scx_simple done' '$out/run2.log'"
blog "tidemark loaded" || not_ok "tidemark loaded by the bench"
# its hogs running: BE's cgroup populated (the round's own first step)
for _ in $(seq 50); do
	[ -n "$(cat $cg/tidemark-bench/be/cgroup.procs 2>/dev/null)" ] && break
	sleep 0.1
done
# the quick run's own shell: run.sh's child of that name (its subshells
# are the shell's children, and nothing older of that name can be taken)
runsh=$(pgrep -f "tools/bench/run.sh host quick")
victim=$(pgrep -P "${runsh:-0}" -f "tools/bench/guest.sh quick")
expect_eq "stopped half-way: with tidemark loaded" "enabled tidemark" "$(scx_state) $(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
check "stopped half-way: the quick run's shell found ($victim, child of $runsh)" test -n "$victim" ||
	grep '^bench: ' "$out/run2.log" | tail -5 | sed 's/^/#   /'
check "stopped half-way: SIGTERM delivered" kill -TERM "${victim:-0}"
wait $run
rc=$?
wait_state disabled 10
sleep 1
expect_eq "stopped half-way: nothing left behind" "" "$(leftovers)" ||
	sed 's/^/#   /' "$out/run2.log"
check "stopped half-way: the bench says it was stopped, in the round" \
	bash -c "grep -q '^bench: stopped by SIGTERM' '$out/run2.log' && ! grep -q 'level 30% round 1: tidemark done' '$out/run2.log'" ||
	grep '^bench: ' "$out/run2.log" | sed 's/^/#   /'
check "stopped half-way: the run says it failed (exit $rc)" test $rc != 0
rm -rf "$out"
tap_done
