#!/usr/bin/env bash
# plan: 11
# tests/lib/busywin.py --hold on a fake tracefs: the trace is recorded, then
# not parsed until SIGUSR1 (the bench sends it once the measured service is
# done, so that the parse does not compete with it); a SIGUSR1 that comes
# while it still records is kept, not lost and not fatal; without --hold it
# parses at once.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

dir=$(mktemp -d)
pids=""
trap '[ -n "$pids" ] && kill $pids 2>/dev/null; rm -rf "$dir"' EXIT
mkdir -p "$dir/events/sched/sched_switch"
echo 0 >"$dir/tracing_on"
echo 1408 >"$dir/buffer_size_kb"
echo 0 >"$dir/events/sched/sched_switch/enable"
# CPU 0 busy for 10 ms (two 5 ms windows), the others idle
cat >"$dir/fake" <<'EOF'
 <idle>-0 [000] d..2. 1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=100 next_prio=120
 a-100 [000] d..2. 1.010000: sched_switch: prev_comm=a prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
EOF

# busywin.py's main() with tracefs pointed at $dir; what the kernel would
# have recorded appears when tracing stops, and a marker file says so
cat >"$dir/run.py" <<'EOF'
import os, shutil, sys
d, lib = sys.argv[1], sys.argv[2]
sys.path.insert(0, lib)
import tracefs
tracefs.TRACEFS = [d]
real_stop = tracefs.stop
def stop(tr, events):
    real_stop(tr, events)
    shutil.copy(os.path.join(d, "fake"), os.path.join(d, "trace"))
    open(os.path.join(d, "stopped"), "w").close()
tracefs.stop = stop
import busywin
open(os.path.join(d, "started"), "w").close()
sys.argv = ["busywin.py"] + sys.argv[3:]
sys.exit(busywin.main())
EOF

wait_for() { # file
	for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.05; done
	return 1
}
n=$(nproc)
want=$(python3 -c "print(round(100 / $n, 2))")
mean() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["node"]["mean"])' "$1" 2>/dev/null; }

# 1. held: recorded, then nothing until SIGUSR1
python3 "$dir/run.py" "$dir" "$(dirname "$0")/../lib" --hold --seconds 0.1 >"$dir/out1" 2>"$dir/err1" &
p=$! pids=$p
check "--hold: the trace is recorded" wait_for "$dir/stopped"
sleep 0.5
check "--hold: not parsed before SIGUSR1 (still running, nothing printed)" \
	bash -c "kill -0 $p && ! [ -s '$dir/out1' ]"
kill -USR1 $p
wait $p
rc=$?
check "--hold: parsed after SIGUSR1 (exit $rc: $(cat "$dir/err1"))" test $rc -eq 0
check "--hold: the node's busy share read from the trace ($(mean "$dir/out1")% of $n CPUs, $want% due)" \
	test "$(mean "$dir/out1")" = "$want"

# 2. a SIGUSR1 that comes while it still records waits for the parse
rm -f "$dir/stopped" "$dir/started"
python3 "$dir/run.py" "$dir" "$(dirname "$0")/../lib" --hold --seconds 1 >"$dir/out2" 2>"$dir/err2" &
p=$! pids=$p
wait_for "$dir/started"
kill -USR1 $p
check "--hold: an early SIGUSR1 does not end the recording" \
	bash -c "sleep 0.3; kill -0 $p && ! [ -e '$dir/stopped' ]"
wait $p
rc=$?
check "--hold: an early SIGUSR1 is kept: parsed once recorded (exit $rc)" \
	test $rc -eq 0 -a "$(mean "$dir/out2")" = "$want"

# 3. without --hold: parsed as soon as recorded, no signal needed
python3 "$dir/run.py" "$dir" "$(dirname "$0")/../lib" --seconds 0.1 >"$dir/out3" 2>"$dir/err3" &
p=$! pids=$p
for _ in $(seq 200); do kill -0 $p 2>/dev/null || break; sleep 0.05; done
check "without --hold: done with no signal" bash -c "! kill -0 $p 2>/dev/null"
wait $p
check "without --hold: the same reading ($(mean "$dir/out3")%)" test "$(mean "$dir/out3")" = "$want"

# 4. --series: each window's shares, the node's and each name's, in order
python3 "$dir/run.py" "$dir" "$(dirname "$0")/../lib" --seconds 0.1 --series "$dir/ser" >"$dir/out4" 2>"$dir/err4"
ser=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["window_ms"], d["node"], d["other"])' "$dir/ser" 2>&1)
expect_eq "--series: both windows busy on one CPU, owned by no named cgroup" "5.0 [$want, $want] [$want, $want]" "$ser"

# 5. --clock mono: the trace on CLOCK_MONOTONIC, the first window's start
# given on that clock; the clock put back to the default once read
python3 "$dir/run.py" "$dir" "$(dirname "$0")/../lib" --seconds 0.1 --clock mono --series "$dir/ser5" \
	>"$dir/out5" 2>"$dir/err5"
expect_eq "--clock mono: the trace clock set, the run's start on it, in both outputs" "mono 1.0 1.0" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["clock"], json.load(open(sys.argv[1]))["start_s"], json.load(open(sys.argv[2]))["start_s"])' "$dir/out5" "$dir/ser5" 2>&1)"
expect_eq "--clock mono: the default clock back once the trace is read" local "$(cat "$dir/trace_clock")"
pids=""
tap_done
