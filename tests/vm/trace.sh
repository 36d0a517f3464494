#!/usr/bin/env bash
# vm: --cpus 2 --timeout 300
# plan: 32
# tidemarkctl trace against a scheduler another process started: the events
# it records add up to what cgroup cpu.stat says over the trace's own span
# (the stops' ran_us, ONLINE's and BE's), every run is closed by its stop on
# the same CPU,
# the Perfetto form is a valid Chrome trace with a track per CPU; one reader
# at a time; a reader killed mid-trace leaves no trace running past its
# deadline; bad options are refused. The cost when off: tests/bench/trace-cost.sh.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
expect_fail "no scheduler: refused" 1 "is scx_tidemark running" build/tidemarkctl trace --seconds 1
mkdir -p $cg/be $cg/online
sched_start --be /be --online /online --suppress-pct 50
ok "scheduler loads (started by another process)"

expect_fail "--seconds is required" 2 "needs --seconds" build/tidemarkctl trace
expect_fail "--seconds 0 refused" 2 "'0' must be 1-3600" build/tidemarkctl trace --seconds 0
expect_fail "--format json refused" 2 "must be text or perfetto" build/tidemarkctl trace --seconds 1 --format json
expect_fail "--kinds with an unknown event refused" 2 "unknown event 'wakeup'" build/tidemarkctl trace --seconds 1 --kinds run,wakeup
expect_fail "an output in a missing directory refused" 1 "cannot write /nonexistent/t.txt" build/tidemarkctl trace --seconds 1 --output /nonexistent/t.txt

# ONLINE: one CPU hog and a request/response service; BE: two hogs
in_cgroup be stress-ng --temp-path /tmp --cpu-method int64 --cpu 2 --timeout 120s >/dev/null 2>&1
hogs=$!
in_cgroup online stress-ng --temp-path /tmp --cpu-method int64 --cpu 1 --timeout 120s >/dev/null 2>&1
on=$!
in_cgroup online build/tm-probe --rate 200 --work-us 500 --seconds 100 >/dev/null 2>&1
probe=$!
sleep 2

# cpu.stat every 20 ms on CLOCK_MONOTONIC, read at the trace's own span
tests/lib/cgsample.py --interval 0.02 --usec --stop /tmp/use.stop online=online be=be >/tmp/use.log &
sampler=$!
# python's start under TCG takes seconds: its first sample before the trace
for _ in $(seq 100); do [ -s /tmp/use.log ] && break; sleep 0.1; done
build/tidemarkctl trace --seconds 3 --output /tmp/trace.txt 2>/tmp/trace.err
rc=$?
touch /tmp/use.stop
wait $sampler
expect_eq "a 3 s text trace" 0 $rc
note "$(tail -1 /tmp/trace.err)"
check "nothing lost" grep -q "; lost 0 (ring buffer full)" /tmp/trace.err
for k in enqueue run stop preempt throttle window; do
	check "$k events recorded" grep -qE "^ +[0-9.]+ +[0-9]+ $k( |$)" /tmp/trace.txt
done
check "no temporary file left" test -z "$(ls /tmp/trace.txt.tmp.* 2>/dev/null)"

# What ran on each CPU, from the events' timestamps: a run until its stop; a
# CPU's first stop, or a run marked running_at_start, from the trace's start;
# a run still open, to its end. CPU time per class over the trace's span,
# against cpu.stat over the same span (its CLOCK_MONOTONIC times in the
# trace's last line; the counters read in between). Not over the command's
# interval: that adds its start and its end, when ONLINE's rate differs
# (1191 against 1271 mCPU once in CI).
read -r span ron rbe paired unpaired overlaps kon kbe < <(python3 - /tmp/trace.txt <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    if not line.startswith("#"):
        f = line.split()
        rows.append((float(f[0]), f[1], f[2], f[3:]))
start, end = rows[0][0], rows[-1][0]
cur, seen = {}, set()
ran = {"online": 0.0, "be": 0.0, "system": 0.0}
# the stops' ran_us, the kernel's own count of each run (a run begun before
# the trace only from its start); runs still open at the end to it
acct = {"online": 0.0, "be": 0.0, "system": 0.0}
paired = unpaired = overlaps = 0
for ts, cpu, kind, rest in rows:
    first = cpu not in seen
    seen.add(cpu)
    if kind == "stop":
        us = [float(x[7:]) for x in rest if x.startswith("ran_us=")][0]
        acct[rest[0]] = acct.get(rest[0], 0) + min(us / 1e6, ts - start)
    if kind == "run":
        if cpu in cur:
            overlaps += 1
        cur[cpu] = (start if "running_at_start" in rest else ts, rest[0], rest[1])
    elif kind == "stop":
        r = cur.pop(cpu, None)
        if r and r[2] == rest[1]:
            paired += 1
        elif first:
            r = (start, rest[0], rest[1])
        else:
            unpaired += 1
            r = None
        if r:
            ran[r[1]] = ran.get(r[1], 0) + ts - r[0]
for b, cls, pid in cur.values():
    ran[cls] = ran.get(cls, 0) + end - b
    acct[cls] = acct.get(cls, 0) + end - b
span = end - start
print("%.3f %d %d %d %d %d %d %d" % (span, ran["online"] / span * 1000, ran["be"] / span * 1000,
                                     paired, unpaired, overlaps, acct["online"] / span * 1000,
                                     acct["be"] / span * 1000))
PY
)
# Each counter at the span's ends, linear between the samples around them;
# what the two samples' counters differ by bounds the error at that end
# (the class ran at any rate between them): con/cbe and their bounds, mCPU.
read -r con uon cbe ube < <(python3 - /tmp/trace.txt /tmp/use.log <<'PY'
import re, sys
m = re.search(r"^# span: first event at ([0-9.]+) s, last at ([0-9.]+) s", open(sys.argv[1]).read(), re.M)
rows = [list(map(float, l.split())) for l in open(sys.argv[2])]
def at(t, i):
    for a, b in zip(rows, rows[1:]):
        if a[0] <= t <= b[0]:
            return a[i] + (b[i] - a[i]) * (t - a[0]) / (b[0] - a[0]), b[i] - a[i]
    sys.exit("cpu.stat samples do not cover %.3f s (%.3f-%.3f)" % (t, rows[0][0], rows[-1][0]))
t0, t1 = float(m.group(1)), float(m.group(2))
out = []
for i in (1, 2):
    (u0, e0), (u1, e1) = at(t0, i), at(t1, i)
    out += ["%d" % ((u1 - u0) / 1e3 / (t1 - t0)), "%d" % ((e0 + e1) / 1e3 / (t1 - t0) + 1)]
print(" ".join(out))
PY
)
note "trace span $span s; ONLINE: stops' ran_us $kon mCPU, cpu.stat $con ± $uon mCPU, run to stop times $ron mCPU; BE: $kbe, $cbe ± $ube, $rbe mCPU"
# within 2% and what the samples leave open
agrees() { [ -n "$2" ] && [ -n "$3" ] && within "$1" $(($2 - $2 / 50 - $3)) $(($2 + $2 / 50 + $3)); }
if agrees "$kon" "$con" "$uon"; then ok "ONLINE's runs in the trace add up to cpu.stat ($kon vs $con ± $uon mCPU)"; else not_ok "ONLINE's runs add up to cpu.stat" "$kon vs $con ± $uon mCPU"; fi
if agrees "$kbe" "$cbe" "$ube"; then ok "BE's runs in the trace add up to cpu.stat ($kbe vs $cbe ± $ube mCPU)"; else not_ok "BE's runs add up to cpu.stat" "$kbe vs $cbe ± $ube mCPU"; fi
if [ "$unpaired" -le $((paired / 100)) ] && [ "$overlaps" -le $((paired / 100)) ]; then
	ok "runs and stops pair up per CPU ($paired paired, $unpaired unpaired, $overlaps overlapping)"
else
	not_ok "runs and stops pair up per CPU" "$paired paired, $unpaired unpaired, $overlaps overlapping"
fi

# Perfetto: a Chrome trace with a track per CPU, runs as slices
build/tidemarkctl trace --seconds 2 --format perfetto --kinds run,stop,preempt,window --output /tmp/trace.json 2>/tmp/trace.err
expect_eq "a perfetto trace" 0 $?
res=$(python3 - /tmp/trace.json <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
ev = o["traceEvents"]
names = sorted(e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name")
x = [e for e in ev if e.get("ph") == "X"]
bad_x = [e for e in x if e["dur"] < 0 or e["args"]["class"] not in ("online", "be", "system")]
online = [e for e in x if e["args"]["class"] == "online" and e["args"]["cgroup"] == "/online"]
c = [e for e in ev if e.get("ph") == "C" and e["name"] == "BE budget"]
pre = [e for e in ev if e.get("ph") == "i" and e["name"] == "preempt"]
enq = [e for e in ev if e.get("ph") == "i" and e["name"] == "enqueue"]
print(";".join(str(v) for v in ("+".join(names), len(x), len(bad_x), len(online), len(c), len(pre), len(enq))))
PY
)
IFS=';' read -r tracks nx nbad nonline nc npre nenq <<<"$res"
note "perfetto: tracks $tracks, $nx slices ($nonline of /online), $nc budget samples, $npre preemptions, $nenq enqueues"
expect_eq "a track per CPU" "CPU 0+CPU 1" "$tracks"
check "run slices, well formed ($nx, $nbad bad)" test "$nx" -gt 100 -a "$nbad" = 0
check "/online's runs named with class and cgroup ($nonline)" test "$nonline" -gt 10
check "the BE budget as a counter ($nc)" test "$nc" -gt 100
check "preemptions as instants ($npre)" test "$npre" -gt 0
expect_eq "--kinds leaves the others out" 0 "$nenq"

# One reader at a time
build/tidemarkctl trace --seconds 3 --output /tmp/t1.txt 2>/dev/null &
first=$!
sleep 1
expect_fail "a second reader refused" 1 "already being taken" build/tidemarkctl trace --seconds 1 --output /tmp/t2.txt
wait $first
expect_eq "the first one finishes" 0 $?

# A reader killed mid-trace: the scheduler stops at the deadline by itself.
# The next reader says how old the newest event the dead one left is: it
# must predate the deadline (3 s after the start, 6.5 s before the next one).
build/tidemarkctl trace --seconds 3 --output /tmp/t3.txt 2>/tmp/t3.err &
reader=$!
# killed once it has asked for the trace (it says so after writing trace_ctl)
wait_log /tmp/t3.err "tracing every event for 3 s" 10 || not_ok "the reader starts tracing" "$(cat /tmp/t3.err)"
t0=$(date +%s%N)
kill -9 $reader
wait $reader 2>/dev/null
check "no file left by the killed reader" test ! -e /tmp/t3.txt
sleep $(((6500 - ($(date +%s%N) - t0) / 1000000) / 1000)).5
build/tidemarkctl trace --seconds 1 --output /tmp/t4.txt 2>/tmp/t4.err
expect_eq "a new reader may trace" 0 $?
age=$(sed -n 's/.*skipped [0-9]* events an earlier trace left (the newest written \([0-9.]*\) s ago).*/\1/p' /tmp/t4.err)
note "$(head -1 /tmp/t4.err)"
check "the dead reader's trace stopped at its deadline (newest event left ${age:-none} s old, >= 2.5)" \
	awk -v a="${age:-0}" 'BEGIN {exit !(a >= 2.5)}'

kill $hogs $on $probe 2>/dev/null
wait $hogs $on $probe 2>/dev/null
kill -INT $sched_pid
wait $sched_pid
expect_eq "scheduler exits cleanly" 0 "$?"
tap_done
