#!/usr/bin/env bash
# vm: --cpus 2 --icount --timeout 400
# plan: 5
# What BE is owed when a load comes and goes: the integral and the floor
# judged in the windows where they differ, measured from outside the
# scheduler (sched_switch in 5 ms windows, tests/lib/busywin.py --series).
#  1. Capacity nobody wanted is no credit. ONLINE holds one CPU steadily;
#     BE (two hogs) is frozen and thawed every 50 ms. While BE is away the
#     node is under its line, but BE did not want that room: when it comes
#     back it gets what is under the line, not the room it missed on top
#     (credited, the node ran full for about a window's line after each
#     return).
#  2. The floor is owed only while BE is short of it. BE (two hogs) runs
#     throughout; ONLINE (two hogs) is thawed for 60 ms every 200 ms and
#     takes both CPUs. BE had far more than its floor (200 mCPU, 10% of the
#     node) between the bursts, and its recent rate stays above it through
#     a burst (1300 mCPU decaying by 1/8 a window: 260 after 12 windows), so
#     none is owed in them: BE gets next to nothing there (owed in every
#     window, the floor put BE on top of each burst).
# icount: virtual time, so what is judged is the policy on this load.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

LINE=65
FLOOR=200
S=8
cg=/sys/fs/cgroup
cg_make online be
ncpu=$(nproc)
sched_start --online /online --be /be --suppress-pct $LINE --be-floor-mcpu 100
ok "scheduler loads"

# toggle CG's cgroup.freeze: thawed ON s, frozen OFF s, until killed; no
# process started inside the measured run (nap reads a FIFO)
toggle() { # cg on_s off_s
	while :; do
		echo 0 >"$cg/$1/cgroup.freeze"
		nap "$2"
		echo 1 >"$cg/$1/cgroup.freeze"
		nap "$3"
	done
}

# measure NAME: busywin over S - 1 s into /tmp/NAME.json and .series
measure() {
	python3 tests/lib/busywin.py --hold --seconds $((S - 1)) --delay 1 --line $LINE \
		--cgroup online=/online --cgroup be=/be --series "/tmp/$1.series" \
		>"/tmp/$1.json" 2>"/tmp/$1.err" &
	bw=$!
	nap $((S + 1))
	kill -USR1 $bw
	wait $bw
}

# 1. BE held to its room next to a steady ONLINE hog, then frozen: wanting
# nothing, BE is not held back, and the windows under the line while it is
# away must not lower the node's running error (the decision trace's
# over_us; lowered, it is credit BE spends above the line when it is back)
in_cgroup online stress-ng --temp-path /tmp --cpu 1 --cpu-method int64 --timeout 60s >/dev/null 2>&1
on=$!
in_cgroup be stress-ng --temp-path /tmp --cpu "$ncpu" --cpu-method int64 --timeout 60s >/dev/null 2>&1
be=$!
if ! wait_workers online 1 60 || ! wait_workers be "$ncpu" 60; then
	not_ok "the hogs started"
	tap_done
fi
nap 2
echo 1 >$cg/be/cgroup.freeze
nap 0.3
build/tidemarkctl trace --seconds 2 --kinds window >/tmp/lull.trace 2>/tmp/lull.err
echo 0 >$cg/be/cgroup.freeze
echo 1 >$cg/online/cgroup.kill
wait $on 2>/dev/null
# windows seen, those with BE in them, and those whose over_us fell
read -r n withbe fell first last < <(python3 -c '
import re, sys
over, be = [], 0
for line in open(sys.argv[1]):
    m = re.search(r" be_us=(\d+) over_us=(-?[0-9.]+)", line)
    if m:
        be += int(m.group(1)) > 0
        over.append(float(m.group(2)))
fell = sum(1 for a, b in zip(over, over[1:]) if b < a)
print(len(over), be, fell, over[0] if over else "-", over[-1] if over else "-")' /tmp/lull.trace 2>>/tmp/lull.err)
note "BE frozen, ONLINE at one CPU: $n windows traced, $withbe with BE, over_us $first -> $last"
if [ -z "$n" ] || [ "$n" -lt 200 ] || [ "$withbe" -gt 0 ]; then
	not_ok "idle room is no credit: the lull traced" "${n:-no} windows (200 or more due), ${withbe:-?} with BE (none due)" \
		"$(cat /tmp/lull.err)"
else
	check "idle room is no credit: over_us never fell in $n windows of a lull ($fell fell)" test "$fell" -eq 0
fi
echo 1 >$cg/be/cgroup.kill
wait $be 2>/dev/null

# 2. ONLINE bursts over every CPU next to BE running throughout, the floor
# raised (in phase 1 a floor above the room ONLINE left would be owed, and
# rightly lower the running error)
build/tidemarkctl set be_floor_mcpu=$FLOOR >/dev/null || { not_ok "be_floor_mcpu=$FLOOR set"; tap_done; }
in_cgroup be stress-ng --temp-path /tmp --cpu "$ncpu" --cpu-method int64 --timeout 60s >/dev/null 2>&1
be=$!
echo 1 >$cg/online/cgroup.freeze
in_cgroup online stress-ng --temp-path /tmp --cpu "$ncpu" --cpu-method int64 --timeout 60s >/dev/null 2>&1
on=$!
echo 0 >$cg/online/cgroup.freeze
if ! wait_workers online "$ncpu" 60 || ! wait_workers be "$ncpu" 60; then
	not_ok "the hogs started"
	tap_done
fi
toggle online 0.06 0.14 &
tg=$!
measure burst
kill $tg
wait $tg 2>/dev/null
echo 0 >$cg/online/cgroup.freeze

# the bursts' windows: runs of windows where ONLINE held half the node or
# more, less each run's first and last (partly outside the burst). Picked
# by ONLINE's share alone, not by how much it left: "ONLINE at 85% or
# more" left out the very windows where BE ran its floor (a mutant that
# owes the floor always read 0.7%, BE's floor in them dropped them)
read -r n bein beall < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
on, w, run = d["online"], [], []
for i, o in enumerate(on + [0]):
    if o >= 50:
        run.append(i)
    else:
        w += run[1:-1]
        run = []
print(len(w), round(sum(d["be"][i] for i in w) / max(1, len(w)), 2), round(sum(d["be"]) / len(d["be"]), 2))' \
	/tmp/burst.series 2>/tmp/burst.err2)
# BE had plenty between the bursts (it is their share that makes the floor
# not owed): a BE that never ran judges nothing
if [ -z "$n" ] || [ "$n" -lt 100 ] || python3 -c 'import sys; sys.exit(float(sys.argv[1]) >= 10)' "$beall"; then
	not_ok "ONLINE's bursts measured from sched_switch" \
		"${n:-no} windows inside bursts of ONLINE, BE ${beall:-no}% of the node over the run (10 or more due)" \
		"$(cat /tmp/burst.err /tmp/burst.err2)"
	tap_done
fi
ok "ONLINE's bursts measured from sched_switch ($n windows of 5 ms inside them)"
floor_pct=$(python3 -c "print(round($FLOOR / (10 * $ncpu), 2))")
note "BE $beall% of the node over the run, $bein% in ONLINE's bursts (the floor: $floor_pct%)"
# a fifth of the floor (the owed floor's first grants come a window late)
check "no floor owed in bursts after plenty: BE $bein% of the node in them <= $floor_pct% / 5" \
	python3 -c 'import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]) / 5)' "$bein" "$floor_pct"

kill $on $be 2>/dev/null
wait $on $be 2>/dev/null
kill -INT $sched_pid
wait $sched_pid
expect_eq "loader exits 0" 0 $?
tap_done
