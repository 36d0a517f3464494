#!/usr/bin/env bash
# plan: 11
# tests/lib/smtshare.py's analysis on a made-up trace, and the kprobe
# helpers of tests/lib/tracefs.py on a fake tracefs: a run that ends in
# sleep ends where its task took itself off the run queue (the kprobe on
# dequeue_task with DEQUEUE_SLEEP, current = that task), not at the switch
# that follows, so BE a sibling starts in between did not start next to it;
# any other dequeue leaves the run as the switch says; and how much of
# ONLINE's time next to BE had a reschedule IPI on its way to the sibling.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
lib=$(cd "$(dirname "$0")/../lib" && pwd)

# CPUs 0 and 1 are siblings. ONLINE (pid 10) on CPU 1, BE (pid 20) on CPU 0.
sw() { # cpu time prev_comm prev_pid next_comm next_pid
	printf ' %s-%s [%03d] d..2. %s: sched_switch: prev_comm=%s prev_pid=%s prev_prio=120 prev_state=S ==> next_comm=%s next_pid=%s next_prio=120\n' \
		"$3" "$4" "$1" "$2" "$3" "$4" "$5" "$6"
}
kp() { # cpu time comm pid flags
	printf ' %s-%s [%03d] d..2. %s: blocked: (dequeue_task+0x0/0x1b0) flags=%s\n' "$3" "$4" "$1" "$2" "$5"
}
{
	# 1: ONLINE goes to sleep at 1.003, the switch comes at 1.010; BE
	# starts on the sibling at 1.005 (after the sleep)
	sw 1 1.000000 swapper/1 0 on 10
	sw 0 1.000000 swapper/0 0 be 20
	sw 0 1.001000 be 20 swapper/0 0
	kp 1 1.003000 on 10 1
	sw 0 1.005000 swapper/0 0 be 20
	sw 1 1.010000 on 10 swapper/1 0
	sw 0 1.020000 be 20 swapper/0 0
	# 2: BE starts at 2.004 while ONLINE runs (until 2.006); ONLINE
	# sleeps at 2.009; a dequeue that is no sleep (flags 0) and one
	# whose current task is not the one running there change nothing
	sw 1 2.000000 swapper/1 0 on 10
	kp 1 2.001000 on 10 0
	kp 1 2.002000 other 30 1
	sw 0 2.004000 swapper/0 0 be 20
	sw 0 2.006000 be 20 swapper/0 0
	kp 1 2.009000 on 10 9
	sw 1 2.010000 on 10 swapper/1 0
	# 3: BE on CPU 0 from 3.000 to 3.004, ONLINE on CPU 1 from 3.001;
	# a kick to CPU 0 sent at 3.0015 is taken there at 3.0035: 2 ms of
	# the 3 ms next to BE had it on its way; one to CPU 1 counts not
	sw 0 3.000000 swapper/0 0 be 20
	sw 1 3.001000 swapper/1 0 on 10
	printf ' on-10 [001] d.h1. 3.001500: ipi_send_cpu: cpu=0 callsite=kick_cpus_irq_workfn+0xd0/0x32f callback=0x0\n'
	printf ' be-20 [000] d.h1. 3.001600: ipi_send_cpu: cpu=1 callsite=x callback=0x0\n'
	printf ' on-10 [001] dnh1. 3.001700: reschedule_entry: vector=253\n'
	printf ' be-20 [000] dnh1. 3.003500: reschedule_entry: vector=253\n'
	sw 0 3.004000 be 20 swapper/0 0
	kp 1 3.008000 on 10 1
	sw 1 3.009000 on 10 swapper/1 0
} >"$dir/trace"
echo 0 >"$dir/tracing_on"

python3 - "$dir" "$lib" >"$dir/out" 2>"$dir/err" <<'EOF'
import json, sys
d, lib = sys.argv[1], sys.argv[2]
sys.path.insert(0, lib)
import smtshare, tracefs
evs, lost = tracefs.events(d)
owner = {10: "online", 20: "be"}
sib = {0: [1], 1: [0]}
with_cut = smtshare.analyse(evs, lost, owner, ["online", "be"], sib)
# the same without the kprobe's events: what the switches alone say
no_kp = [e for e in evs if e[2] != smtshare.KPROBE[1]]
switch_only = smtshare.analyse(no_kp, lost, owner, ["online", "be"], sib)
pids = [e[3]["common_pid"] for e in evs if e[2] == smtshare.KPROBE[1]]
print(json.dumps({"cut": with_cut, "sw": switch_only, "pids": pids}))
EOF
check "the analysis runs on the made-up trace" test $? -eq 0 -a -s "$dir/out" || cat "$dir/err"
out=$(cat "$dir/out")
q() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$out" "$1"; }
expect_eq "the current task of each kprobe line read (common_pid)" "['10', '10', '30', '10', '10']" "$(q 'd["pids"]')"
expect_eq "ONLINE's runs end at its sleep: 3 ms + 9 ms + 7 ms" 0.019 "$(q 'd["cut"]["online"]["run_s"]')"
expect_eq "BE started after ONLINE slept is not next to it; BE started while it ran is (2 ms)" \
	"0.002 1" "$(q '"%s %d" % (d["cut"]["_split"]["b_arrived_s"], d["cut"]["_split"]["b_arrivals"])')"
expect_eq "ONLINE next to BE: 1 ms (BE there first) + 2 ms + 3 ms (there first)" 0.006 "$(q 'd["cut"]["online"]["with_sibling_s"]["be"]')"
expect_eq "of that, a kick on its way to the BE sibling: 2 ms, of 2 kicks" "0.002 2" \
	"$(q '"%s %d" % (d["cut"]["_split"]["b_ipi_in_flight_s"], d["cut"]["_split"]["ipis"])')"
expect_eq "by the switches alone: 10 ms + 10 ms + 8 ms, BE next to it 5 + 2 ms" "0.028 0.007 2" \
	"$(q '"%s %s %d" % (d["sw"]["online"]["run_s"], d["sw"]["_split"]["b_arrived_s"], d["sw"]["_split"]["b_arrivals"])')"
expect_eq "BE there first (1 ms, 3 ms) counted alike both ways" "0.004 0.004" \
	"$(q '"%s %s" % (d["cut"]["_split"]["b_there_first_s"], d["sw"]["_split"]["b_there_first_s"])')"

# the kprobe helpers: added to kprobe_events, one a crashed run left
# removed first (disabled, then "-:")
mkdir -p "$dir/fs/events/g/n"
echo 1 >"$dir/fs/events/g/n/enable"
: >"$dir/fs/kprobe_events"
python3 - "$dir/fs" "$lib" 2>"$dir/err" <<'EOF'
import sys
d, lib = sys.argv[1], sys.argv[2]
sys.path.insert(0, lib)
import tracefs
tracefs.kprobe_add(d, "g", "n", "dequeue_task flags=$arg3:u32")
EOF
check "kprobe_add on a fake tracefs" test $? -eq 0 || cat "$dir/err"
expect_eq "the stale probe disabled and removed, then the new one added" \
	"0|-:g/n|p:g/n dequeue_task flags=\$arg3:u32" "$(cat "$dir/fs/events/g/n/enable")|$(paste -sd'|' "$dir/fs/kprobe_events")"
rm "$dir/fs/kprobe_events"
msg=$(python3 - "$dir/fs" "$lib" 2>&1 <<'EOF'
import sys
d, lib = sys.argv[1], sys.argv[2]
sys.path.insert(0, lib)
import tracefs
rmdir = __import__("shutil").rmtree
rmdir(d + "/events/g")
try:
    tracefs.kprobe_add(d, "g", "n", "dequeue_task")
except OSError as e:
    print(e)
EOF
)
check "no kprobe_events: an error that names it ($msg)" grep -q "kprobe_events.*CONFIG_KPROBE_EVENTS" <<<"$msg"
tap_done
