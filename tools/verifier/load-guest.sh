#!/usr/bin/env bash
# Inside the VM: start the scheduler TM_LOADS times (default 5) and record
# each start's time to "enabled" in ms, one per line, in $TM_SHARE/loads.txt.
# Both ends are the kernel's own timestamps: a mark written to /dev/kmsg by
# the process that then becomes the loader, and the first sched_ext
# "enabled" line after it. Polling the state from a shell (a cat and a sleep
# per look) added 0.1-0.2 s.
# TM_LOADER picks another loader binary (to measure an older build).
set -uo pipefail
loader=${TM_LOADER:-build/scx_tidemark}
enabled='sched_ext: BPF scheduler "tidemark" enabled'
mkdir -p /sys/fs/cgroup/be /sys/fs/cgroup/online
# user writes to /dev/kmsg are rate-limited by default
echo on >/proc/sys/kernel/printk_devkmsg
state() { cat /sys/kernel/sched_ext/state 2>/dev/null; }
# "<start us> <enabled us>" of start $1: its mark and the first enabled line
# after it (the state reads "enabled" just before the kernel prints it)
stamps() {
	dmesg | awk -v mark="tidemark-load-start $1" -v en="$enabled" '
		function us(l) { sub(/^\[ */, "", l); sub(/\].*/, "", l); sub(/\./, "", l); return l }
		$0 ~ (mark "$") { s = us($0); e = ""; next }
		s != "" && e == "" && index($0, en) { e = us($0) }
		END { if (s != "" && e != "") print s, e }'
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
	t=
	for _ in $(seq 100); do
		t=$(stamps "$i")
		[ -n "$t" ] && break
		sleep 0.05
	done
	if [ -z "$t" ]; then
		echo "load-guest: load $i: no start mark, or no '$enabled' line after it, in the kernel log" >&2
		exit 1
	fi
	read -r t0 t1 <<<"$t"
	echo $(((t1 - t0) / 1000)) >>"$TM_SHARE/loads.txt"
	kill -INT "$pid"
	wait "$pid"
	until [ "$(state)" = disabled ]; do sleep 0.02; done
done
