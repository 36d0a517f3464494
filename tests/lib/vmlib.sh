# shellcheck shell=bash
# Helpers for tests that run inside the test VM. Sourced after lib.sh.
[ "${TM_VM:-0}" = 1 ] || { echo "not ok 1 must run inside the test VM (tools/vm/run)"; exit 1; }

scx_state() { cat /sys/kernel/sched_ext/state 2>/dev/null || echo missing; }

wait_state() { # state timeout_s
	local i
	for i in $(seq $(($2 * 10))); do
		[ "$(scx_state)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

wait_log() { # file pattern timeout_s
	local i
	for i in $(seq $(($3 * 10))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

wait_log_count() { # file pattern n timeout_s: the pattern on at least n lines
	local i
	for i in $(seq $(($4 * 10))); do
		[ "$(grep -c "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

wait_file() { # file value timeout_s: until the file reads value (a daemon
	# audits an action before it writes, so its line can come first)
	local i
	for i in $(seq $(($3 * 10))); do
		[ "$(cat "$1" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# Start build/scx_tidemark ARGS in the background (log /tmp/scx.log, pid in
# $sched_pid) and wait until sched_ext says it is enabled: 0, or 1 with the
# test failed and ended (the log as the reason).
sched_start() {
	build/scx_tidemark "$@" >/tmp/scx.log 2>&1 &
	# shellcheck disable=SC2034 # the test's: it kills and waits for it
	sched_pid=$!
	wait_state enabled 30 && return 0
	not_ok "scheduler loads" "$(cat /tmp/scx.log)"
	tap_done
}

# Start build/tidemarkd --config FILE (default /tmp/td.json) in the
# background (stderr to /tmp/td.log, pid in $daemon_pid) and wait until it
# says it runs: 0, or the test failed and ended (the log as the reason).
daemon_start() { # [config [option...]]
	build/tidemarkd --config "${1:-/tmp/td.json}" "${@:2}" 2>/tmp/td.log &
	# shellcheck disable=SC2034 # the test's: it kills and waits for it
	daemon_pid=$!
	wait_log /tmp/td.log "tidemarkd: running" 20 && return 0
	not_ok "daemon starts" "$(cat /tmp/td.log)"
	tap_done
}

# Make cgroups (paths under /sys/fs/cgroup), each parent giving its
# children the controllers named by CG_CONTROLLERS ("+cpu" unless set).
cg_make() { # path...
	local p d part
	for p in "$@"; do
		d=/sys/fs/cgroup
		for part in ${p//\// }; do
			echo "${CG_CONTROLLERS:-+cpu}" >"$d/cgroup.subtree_control" || return 1
			d=$d/$part
			mkdir -p "$d" || return 1
		done
	done
}

# Scheduling class of a task as /proc/PID/sched reports its policy's class.
task_class() {
	if grep -q '^ext\.enabled *: *1' "/proc/$1/sched" 2>/dev/null; then echo ext; else echo fair; fi
}

json_field() { # json name -> number
	sed -n "s/.*\"$2\":\([0-9-]*\).*/\1/p" <<<"$1"
}

# json_figs FILE:KEY.KEY...: the figures asked for, in order, on one line,
# read by one python (a python start costs about a second in a loaded or
# icount guest; a test that read each figure with its own paid tens)
json_figs() {
	python3 -c '
import json, sys
docs, out = {}, []
for a in sys.argv[1:]:
    f, path = a.split(":", 1)
    if f not in docs:
        docs[f] = json.load(open(f))
    d = docs[f]
    for k in path.split("."):
        d = d[k]
    out.append(str(d))
print(*out)' "$@"
}

# Node CPU busy: tests/lib/busy.py (exact task run time, not /proc/stat ticks).

# CPU a cgroup used, usec, into VAR, and a wait of S seconds, neither
# starting a process: a process started inside a measured window costs the
# hogs beside it a varying share under TCG (with sed, date, sleep and a
# tidemarkctl start in its windows, floor.sh saw ONLINE's share move by up
# to 130 mCPU between phases; without them, ONLINE and BE by 6 at most).
cg_usage() { # VAR cg (path under /sys/fs/cgroup)
	local k v
	while read -r k v; do
		if [ "$k" = usage_usec ]; then
			printf -v "$1" %s "$v"
			return 0
		fi
	done <"/sys/fs/cgroup/$2/cpu.stat"
	return 1
}
nap() { # S
	# two naps at once (a test's own and a background loop's) race here
	[ -p /tmp/tm-nap ] || mkfifo /tmp/tm-nap 2>/dev/null || [ -p /tmp/tm-nap ]
	read -rt "$1" _ <>/tmp/tm-nap
	return 0
}
# mCPU each cgroup used over S seconds, in the order given, on one line
cg_mcpu() { # S cg...
	local s=$1 t0 t1 u c i out=""
	local -a mcpu_t0=() mcpu_t1=()
	shift
	for c in "$@"; do
		cg_usage u "$c"
		mcpu_t0+=("$u")
	done
	t0=${EPOCHREALTIME/./}
	nap "$s"
	for c in "$@"; do
		cg_usage u "$c"
		mcpu_t1+=("$u")
	done
	t1=${EPOCHREALTIME/./}
	for i in "${!mcpu_t0[@]}"; do
		out+="${out:+ }$(((mcpu_t1[i] - mcpu_t0[i]) * 1000 / (t1 - t0)))"
	done
	echo "$out"
}

# Run CMD inside cgroup CG (path under /sys/fs/cgroup), in the background.
in_cgroup() { # cg cmd...
	local cg=$1
	shift
	(echo $BASHPID >"/sys/fs/cgroup/$cg/cgroup.procs" && exec "$@") &
}

# Wait until N stress-ng workers in cgroup CG have started their work (their
# title says "[run]"). A fixed sleep is not enough: the first start of
# stress-ng in a VM reads it over 9p, and with icount's sleep=off the host's
# time for that read becomes guest time (a reference second of 117 ms instead
# of 500 in a CI run). 1 if not all started within TIMEOUT_S.
wait_workers() { # cg n timeout_s
	local i pid n
	for i in $(seq $(($3 * 20))); do
		n=0
		for pid in $(cat "/sys/fs/cgroup/$1/cgroup.procs" 2>/dev/null); do
			tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q '\[run\]' && n=$((n + 1))
		done
		[ "$n" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}


# The ONLINE neighbour of tests/vm/cpumax-neighbour.sh and wake-preempt.sh:
# four stress-ng CPU hogs in cgroup online/nb, started and waited for (the
# test ends if they do not start).
nb_start() {
	in_cgroup online/nb stress-ng --temp-path /tmp --cpu-method int64 --cpu 4 --timeout 60s >/dev/null 2>&1
	nb=$!
	wait_workers online/nb 4 60 || { not_ok "the neighbour's four workers started"; tap_done; }
}
# every task of the neighbour gone (its workers too), not only stress-ng's
# parent: lingering hogs slow the next step (loading took over 10 s once)
nb_stop() {
	echo 1 >/sys/fs/cgroup/online/nb/cgroup.kill
	wait $nb 2>/dev/null
	for _ in $(seq 100); do
		[ -z "$(cat /sys/fs/cgroup/online/nb/cgroup.procs)" ] && break
		sleep 0.1
	done
}
