#!/usr/bin/env bash
# Inside the VM: start the scheduler TM_LOADS times (default 5) and record
# each start's time to "enabled" in ms, one per line, in $TM_SHARE/loads.txt.
# Both ends are the kernel's own timestamps: a mark written to /dev/kmsg by
# the process that then becomes the loader, and sched_ext's "enabled" line.
# Polling the state from a shell (a cat and a sleep per look) added 0.1-0.2 s.
# TM_LOADER picks another loader binary (to measure an older build).
set -uo pipefail
loader=${TM_LOADER:-build/scx_tidemark}
mkdir -p /sys/fs/cgroup/be /sys/fs/cgroup/online
# user writes to /dev/kmsg are rate-limited by default
echo on >/proc/sys/kernel/printk_devkmsg
state() { cat /sys/kernel/sched_ext/state 2>/dev/null; }
# the last line of the kernel log matching $1, as its timestamp in us
stamp() {
	dmesg | grep -F -- "$1" | tail -n 1 | sed -n 's/^\[ *\([0-9]*\)\.\([0-9]*\)\].*/\1\2/p'
}
for i in $(seq "${TM_LOADS:-5}"); do
	(
		echo "tidemark-load-start $i" >/dev/kmsg
		exec "$loader" --be /be --online /online >/tmp/scx.log 2>&1
	) &
	pid=$!
	until [ "$(state)" = enabled ]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "load-guest: the scheduler exited before it was enabled" >&2
			cat /tmp/scx.log >&2
			exit 1
		fi
		sleep 0.02
	done
	t0=$(stamp "tidemark-load-start $i")
	t1=$(stamp 'sched_ext: BPF scheduler "tidemark" enabled')
	if [ -z "$t0" ] || [ -z "$t1" ] || [ "$t1" -le "$t0" ]; then
		echo "load-guest: load $i: no start ('$t0') or enabled ('$t1') line in the kernel log" >&2
		exit 1
	fi
	echo $(((t1 - t0) / 1000)) >>"$TM_SHARE/loads.txt"
	kill -INT "$pid"
	wait "$pid"
	until [ "$(state)" = disabled ]; do sleep 0.02; done
done
