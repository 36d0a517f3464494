#!/usr/bin/env bash
# vm: --cpus 2 --timeout 300
# plan: 4
# An ONLINE wakeup placed on an idle CPU (select_cpu) lands in that CPU's
# local queue later, under its lock; the CPU may have started BE meanwhile
# (woken to run BE by the window timer or a BE enqueue). The wakee must go
# first and preempt that BE run, not wait out BE's grant behind it. The
# bursty service (one messenger, two workers, 400 requests/s) next to BE
# saturating gives ~2,000 such placements in 6 s; the scheduler's own trace
# names each placement (queue=idle_cpu), the BE runs on that CPU before the
# wakee's run, and the wakee's wait. Not icount: there the preempting IPI to
# the other vCPU itself lands 1.4-2.8 ms later. Measured: before the fix,
# 3 runs, 16-24 such races, waiting up to 5.3-9.8 ms (most past 2 ms: BE's
# grant; upper quartile 4.0-4.9 ms); after, 6 runs, 19-39 races, waiting at
# most 0.84 ms (upper quartile 0.20-0.36 ms in 6 runs).
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

S=10
cg=/sys/fs/cgroup
cg_make online be
sched_start --online /online --be /be --suppress-pct 65
ok "scheduler loads"
sleep 3
(echo $BASHPID >$cg/be/cgroup.procs &&
	exec stress-ng --temp-path /tmp --cpu 3 --cpu-method int64 --timeout $((S + 3))s) >/dev/null 2>&1 &
be=$!
sleep 1
(sleep 2 && exec build/tidemarkctl trace --seconds 6 --kinds enqueue,run --format text --output /tmp/tr.txt) \
	>/tmp/tr.log 2>&1 &
tr=$!
(echo $BASHPID >$cg/online/cgroup.procs &&
	exec build/tm-probe --messengers 1 --workers 2 --rate 400 --work-us 1000 --jitter-us 1250 \
		--seconds $S --json) >/tmp/probe.json 2>/dev/null
wait $tr
trc=$?
kill $be 2>/dev/null
wait $be 2>/dev/null
expect_eq "trace taken" 0 $trc || sed 's/^/#   /' /tmp/tr.log

# per idle-CPU placement of an ONLINE task: did BE start on that CPU before
# the task ran there, and how long did the task wait
read -r n raced q3 waits < <(python3 - /tmp/tr.txt <<'PY'
import sys
pend, n, raced = {}, 0, []
for line in open(sys.argv[1]):
    f = line.split(None, 7)
    if line.startswith("#") or len(f) < 8:
        continue
    cpu, kind, cls, pid, rest = int(f[1]), f[2], f[3], f[4], f[7]
    if kind == "enqueue" and cls == "online":
        pend[pid] = [cpu, "queue=idle_cpu" in rest, False]
        n += "queue=idle_cpu" in rest
    elif kind == "run" and cls == "be":
        for p in pend.values():
            p[2] |= p[1] and p[0] == cpu
    elif kind == "run" and cls == "online" and pid in pend:
        p = pend.pop(pid)
        if p[2] and p[0] == cpu and "wait_us=" in rest:
            raced.append(float(rest.split("wait_us=")[1].split()[0]))
raced.sort()
# the upper quartile: BE's grants put most raced wakees ms behind; one
# vCPU the host did not run for a while (gaps of up to 7 ms seen without
# icount) must not decide
q3 = raced[max(0, -(-3 * len(raced) // 4) - 1)] if raced else 0
print(n, len(raced), round(q3), ",".join("%.0f" % w for w in raced) or "-")
PY
)
note "ONLINE placed on an idle CPU: $n; BE ran there first: $raced (waits us: $waits)"
check "the service woke onto idle CPUs ($n placements)" test "${n:-0}" -ge 100
# BE's grants are ms long: a wakee queued behind one waits that long. No
# race seen is no evidence (19-39 a run, before and after the fix): at
# least 5 are judged.
check "wakees on an idle CPU not queued behind BE there (upper quartile of ${raced:-no} raced waits ${q3} us < 1000)" \
	test "${raced:-0}" -ge 5 -a "${q3:-99999}" -lt 1000

kill -INT $sched_pid
wait $sched_pid
tap_done
