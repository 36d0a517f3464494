#!/usr/bin/env bash
# vm: --cpus 2 --icount --timeout 500
# plan: 7
# The line under a bursty ONLINE service on several CPUs (issue 15 item 1):
# a request-driven service (one messenger handing 1 ms requests to two
# workers, 400 requests/s, about a third of the node, in bursts over both
# CPUs) next to BE saturating. Node busy is measured from outside the
# scheduler: the kernel's sched_switch events cut into 5 ms windows
# (tests/lib/busywin.py); the scheduler's own view (tidemarkctl stats over
# the same run) is printed next to it. icount: virtual time, so what is
# judged is the policy on this load, not how busy the host was.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

LINE=65
S=10
cg=/sys/fs/cgroup
cg_make online be
sched_start --online /online --be /be --suppress-pct $LINE
ok "scheduler loads"
# enabling and the loader's first rounds take seconds of CPU under TCG
sleep 3

# the meter first: it sleeps until the load is on, and reads its trace
# only once the probe is done (--hold, SIGUSR1 below)
python3 tests/lib/busywin.py --hold --seconds $((S - 1)) --delay 2 --line $LINE \
	--cgroup online=/online --cgroup be=/be >/tmp/bw.json 2>/tmp/bw.err &
bw=$!
sleep 0.5
(echo $BASHPID >$cg/be/cgroup.procs &&
	exec stress-ng --temp-path /tmp --cpu 3 --cpu-method int64 --timeout $((S + 4))s) >/dev/null 2>&1 &
be=$!
sleep 1
build/tidemarkctl stats --interval $((S - 1)) --once --json >/tmp/st.json 2>/tmp/st.err &
st=$!
p=$( (echo $BASHPID >$cg/online/cgroup.procs &&
	exec build/tm-probe --messengers 1 --workers 2 --rate 400 --work-us 1000 --jitter-us 1250 \
		--seconds $S --json) 2>/tmp/probe.err)
kill -USR1 $bw
wait $bw $st
kill $be 2>/dev/null
wait $be 2>/dev/null

if ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' /tmp/bw.json 2>/dev/null; then
	not_ok "node busy measured from sched_switch" "$(cat /tmp/bw.err)"
	tap_done
fi
ok "node busy measured from sched_switch"
read -r node p99 on be other over nwin l95 lmax lwin < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["node"]["mean"], d["node"]["p99"], d["online"]["mean"], d["be"]["mean"], d["other"]["mean"],
      d["over_line_2"], d["windows"], d["node_100ms"]["p95"], d["node_100ms"]["max"], d["node_100ms"]["windows"])' /tmp/bw.json)
note "outside, $nwin windows of 5 ms: node $node% (p99 window $p99%), ONLINE $on%, BE $be%, rest $other%;" \
	"$(python3 -c 'import sys; print(round(100 * float(sys.argv[1])))' "$over")% of windows above the line + 2;" \
	"$lwin windows of 100 ms: p95 $l95%, max $lmax%"
note "the scheduler over the run: $(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("busy %.1f%%, ONLINE %.1f%%, BE %.1f%%, SYSTEM %.1f%%" % (d["busy_pct"], d["cpu"]["online"]["pct"],
      d["cpu"]["be"]["pct"], d["cpu"]["system"]["pct"]))' /tmp/st.json 2>&1)"
# the line holds: the mean over the windows within 2 points of it
check "node busy at the line: $node% <= $((LINE + 2))% (mean of ${nwin} windows)" \
	python3 -c 'import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))' "$node" $((LINE + 2))
# and over 100 ms windows: a 5 ms window holds one burst or none (p99
# 100%), a line is held over many of them
check "node busy at the line in 100 ms windows: p95 $l95% <= $((LINE + 5))% (${lwin} windows)" \
	python3 -c 'import sys; sys.exit(not (int(sys.argv[2]) >= 80 and float(sys.argv[1]) <= float(sys.argv[3])))' "$l95" "$lwin" $((LINE + 5))
# BE gets what is under the line: at least 80% of line - ONLINE - the rest
check "BE uses the capacity under the line: $be% of $(python3 -c "print(round($LINE - $on - $other, 1))")% left" \
	python3 -c 'import sys; b, o, r, l = map(float, sys.argv[1:]); sys.exit(b < 0.8 * (l - o - r))' \
	"$be" "$on" "$other" $LINE
# ONLINE keeps up: every request served at the offered rate, no backlog
read -r rate p50 p99r < <(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
print(d["rate"], d["request_us"]["p50"], d["request_us"]["p99"])' "$p")
note "ONLINE: $rate requests/s served of 400, request p50 ${p50} us, p99 ${p99r} us"
check "ONLINE served at the offered rate ($rate of 400 requests/s)" \
	python3 -c 'import sys; sys.exit(float(sys.argv[1]) < 392)' "$rate"
# a backlog (requests queued behind busy workers) puts p50 at many ms
check "ONLINE requests not backed up (p50 ${p50} us < 5000)" \
	python3 -c 'import sys; sys.exit(float(sys.argv[1]) >= 5000)' "$p50"

kill -INT $sched_pid
wait $sched_pid
tap_done
