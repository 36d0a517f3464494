#!/usr/bin/env bash
# vm: --cpus 2 --timeout 200
# plan: 10
# pool: counts calls and run time, judges neither against a clock
# tidemarkctl progs: each sched_ext callback's calls and run time over an
# interval or a command's run, from the kernel's BPF statistics, switched on for the interval
# only; for tidemark and for another scheduler (scx_simple, as the bench
# compares them).
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
mkdir -p $cg/online $cg/be
out=$(build/tidemarkctl progs --seconds 0.2 2>&1)
check "no scheduler: said ($out)" grep -q "no sched_ext scheduler loaded" <<<"$out"

judge() { # json scheduler-prefix
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
by = {p["name"]: p for p in d["progs"]}
need = [sys.argv[2] + s for s in ("_enqueue", "_dispatch", "_running", "_stopping")]
bad = [n for n in need if n not in by or by[n]["calls"] <= 0 or by[n]["ns_per_call"] <= 0]
print(" ".join("%s=%d/%.0fns" % (n, by[n]["calls"], by[n]["ns_per_call"]) for n in need if n in by))
sys.exit(1 if bad else 0)
PY
}
sched_start --online /online --be /be
spid=$sched_pid
in_cgroup online stress-ng --temp-path /tmp --cpu 2 --cpu-method int64 --cpu-load 30 --timeout 20s >/dev/null 2>&1
load=$!
j=$(build/tidemarkctl progs --seconds 2 --json)
if r=$(judge "$j" tidemark); then ok "tidemark's callbacks counted with their cost ($r)"; else not_ok "tidemark's callbacks counted" "$j"; fi
expect_eq "BPF statistics off again afterwards" 0 "$(cat /proc/sys/kernel/bpf_stats_enabled)"

# over a command's run instead of a fixed window: its status passed through
# shellcheck disable=SC2016
j=$(build/tidemarkctl progs --json -- sh -c 'echo $$ >/sys/fs/cgroup/online/cgroup.procs && stress-ng --temp-path /tmp --cpu 2 --cpu-method int64 --timeout 2s >/dev/null 2>&1; exit 3')
rc=$?
expect_eq "a command's exit status passed through" 3 "$rc"
if r=$(judge "$j" tidemark) && python3 -c 'import json,sys; s=json.loads(sys.argv[1])["seconds"]; sys.exit(not 1.5 <= s <= 30)' "$j"; then
	ok "over the command's run: callbacks counted, its run time as the interval ($r)"
else
	not_ok "over the command's run" "$j"
fi
out=$(build/tidemarkctl progs -- /nonexistent/cmd 2>&1)
rc=$?
if [ $rc = 127 ] && grep -q "cannot run '/nonexistent/cmd'" <<<"$out"; then ok "a command that cannot run: 127, said"; else not_ok "a command that cannot run" "exit $rc: $out"; fi
out=$(build/tidemarkctl progs --seconds 1 -- true 2>&1)
rc=$?
if [ $rc = 2 ] && grep -q "not both" <<<"$out"; then ok "--seconds and a command: refused"; else not_ok "--seconds and a command refused" "exit $rc: $out"; fi
expect_eq "BPF statistics off again after the command" 0 "$(cat /proc/sys/kernel/bpf_stats_enabled)"
kill -INT $spid
wait $spid
wait_state disabled 10
build/peers/scx_simple >/tmp/simple.log 2>&1 &
ppid=$!
if wait_state enabled 20; then
	j=$(build/tidemarkctl progs --seconds 2 --json)
	if r=$(judge "$j" simple); then ok "scx_simple's callbacks counted the same way ($r)"; else not_ok "scx_simple's callbacks counted" "$j"; fi
	# a node where another scheduler holds sched_ext: the loader cannot
	# attach, and its preflight report says which one is in the way
	out=$(timeout 60 build/scx_tidemark 2>&1)
	rc=$?
	if [ $rc = 1 ] && grep -q "MISSING  sched_ext_free .*another sched_ext scheduler, simple, is enabled" <<<"$out"; then
		ok "scx_tidemark beside scx_simple: exits 1, its preflight names simple"
	else
		not_ok "scx_tidemark beside scx_simple: exits 1, its preflight names simple" "exit $rc" "$out"
	fi
	kill -INT $ppid
	wait $ppid
else
	not_ok "scx_simple loads (build/peers: make bench builds it)" "$(cat /tmp/simple.log)"
fi
kill $load 2>/dev/null
wait $load 2>/dev/null
tap_done
