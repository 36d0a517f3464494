#!/usr/bin/env bash
# Inside the VM: load the scheduler, record each program's verifier count.
# TM_LOADER picks another loader binary (to measure an older build).
set -uo pipefail
loader=${TM_LOADER:-build/scx_tidemark}
mkdir -p /sys/fs/cgroup/be /sys/fs/cgroup/online
"$loader" --be /be --online /online >/tmp/scx.log 2>&1 &
pid=$!
for _ in $(seq 100); do
	[ "$(cat /sys/kernel/sched_ext/state 2>/dev/null)" = enabled ] && break
	sleep 0.1
done
if ! build/tm-insns tidemark_ tunables_update bw_update >"$TM_SHARE/insns.txt"; then
	cat /tmp/scx.log >&2
	exit 1
fi
kill -INT $pid
wait $pid
