#!/usr/bin/env bash
# Inside the VM: start the scheduler TM_LOADS times (default 5) and record
# each start's time to "enabled" in ms, one per line, in $TM_SHARE/loads.txt.
# TM_LOADER picks another loader binary (to measure an older build).
set -uo pipefail
loader=${TM_LOADER:-build/scx_tidemark}
mkdir -p /sys/fs/cgroup/be /sys/fs/cgroup/online
state() { cat /sys/kernel/sched_ext/state 2>/dev/null; }
for _ in $(seq "${TM_LOADS:-5}"); do
	t0=$(date +%s%N)
	"$loader" --be /be --online /online >/tmp/scx.log 2>&1 &
	pid=$!
	until [ "$(state)" = enabled ]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "load-guest: the scheduler exited before it was enabled" >&2
			cat /tmp/scx.log >&2
			exit 1
		fi
		sleep 0.02
	done
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000)) >>"$TM_SHARE/loads.txt"
	kill -INT "$pid"
	wait "$pid"
	until [ "$(state)" = disabled ]; do sleep 0.02; done
done
