# shellcheck shell=bash
# Body of the VM placement tests (tests/vm/placement-*.sh), sourced after
# lib.sh and vmlib.sh with DOMAINS ("0-3/4-7/...") and DEMAND (mCPU, more
# than half a domain, so two cgroups cannot share one) set.
#
# Two ONLINE services (tm-probe: request/response, wakeup-heavy) and BE hogs
# on every spare CPU, run twice with the same load: under EEVDF and under
# tidemark. Checked from outside the scheduler (tests/lib/migr.py: the
# sched_migrate_task trace event and each thread's last CPU): with tidemark
# each service stays inside its own domain and crosses domains >= 10x less.
# Demand comes from two sources: cpu.max for a, a --home rule for b.
# c is soft (a hog per CPU of a domain, a --home demand of 1 CPU): it overflows its home after
# home_wait_us. A task of a pinned outside a's home runs where it is pinned.
cg=/sys/fs/cgroup
echo "+cpu +cpuset" >$cg/cgroup.subtree_control
mkdir -p $cg/online/a $cg/online/b $cg/online/c $cg/be
echo "+cpu +cpuset" >$cg/online/cgroup.subtree_control
echo "$((DEMAND * 100)) 100000" >$cg/online/a/cpu.max
ndom=$(tr '/' '\n' <<<"$DOMAINS" | wc -l)
dom_cpus=$(($(nproc) / ndom))
ncpu=$(nproc)
# each service: 2 messengers x 4 workers, work 1 ms; rate for ~60% of DEMAND
rate=$((DEMAND * 6 / 10))
PROBE="build/tm-probe --messengers 2 --workers 4 --rate $rate --work-us 1000 --seconds 120"

start_load() {
	in_cgroup online/a $PROBE >/dev/null 2>&1
	pa=$!
	in_cgroup online/b $PROBE >/dev/null 2>&1
	pb=$!
	hogs=()
	# c wants a whole domain but says 1 CPU: its home cannot hold it next to a
	for _ in $(seq "$dom_cpus"); do
		in_cgroup online/c timeout 120 bash -c 'while :; do :; done'
		hogs+=($!)
	done
	# BE saturates the node: one hog per CPU
	for _ in $(seq "$ncpu"); do
		in_cgroup be timeout 120 bash -c 'while :; do :; done'
		hogs+=($!)
	done
}

# ONLINE's threads (what the checks of homes rest on) all up: a probe's main
# thread, 2 messengers and 8 workers; c's hogs, each timeout and its bash.
# Not BE's: held to the line under tidemark, its 16 hogs on 2l3 took 90 s
# more to start. Counted by bash itself ($(...) forks, each costs seconds).
load_up() { # timeout_s
	local t c up
	for _ in $(seq $(($1 * 10))); do
		up=1
		for c in online/a:11 online/b:11 online/c:$((2 * dom_cpus)); do
			mapfile -t t <"$cg/${c%:*}/cgroup.threads"
			[ ${#t[@]} -ge "${c#*:}" ] || { up=0; break; }
		done
		[ $up = 1 ] && return 0
		sleep 0.1
	done
	return 1
}

stop_load() {
	kill $pa $pb "${hogs[@]}" 2>/dev/null
	wait $pa $pb "${hogs[@]}" 2>/dev/null
}

# Until migr.py makes FILE or ends, at most S seconds; polled without a
# fork (a sleep started under the load takes seconds to return).
migr_wait() { # file s
	for _ in $(seq $(($2 * 10))); do
		[ -e "$1" ] || ! kill -0 $migr_pid 2>/dev/null && return 0
		nap 0.1
	done
}

# migr.py set up while the node is idle, then the load, then its window.
# Returns when the window is over (migr.py's --done), migr.py still reading
# the trace as $migr_pid: the caller stops the load before it waits for it.
measure() { # out
	rm -f /tmp/migr.ready /tmp/migr.go /tmp/migr.done
	tests/lib/migr.py --ready /tmp/migr.ready --go /tmp/migr.go --done /tmp/migr.done \
		--delay 3 --seconds 10 \
		--domains "$DOMAINS" --cgroup a=/online/a --cgroup b=/online/b --cgroup c=/online/c \
		--cgroup be=/be >"$1" &
	migr_pid=$!
	migr_wait /tmp/migr.ready 60
	start_load
	# ONLINE's threads up before the window: under tidemark a's
	# probe once showed 1 thread of its 11 through the whole window (a
	# start beside c's hogs in a's home domain, 16 vCPUs on 2 host cores),
	# so a left its domain to c and c had no need to overflow its home
	load_up 120 || not_ok "ONLINE's threads start within 120 s" \
		"$(wc -l $cg/online/a/cgroup.threads $cg/online/b/cgroup.threads $cg/online/c/cgroup.threads)"
	touch /tmp/migr.go
	# the window: 3 s of delay and 10 s. A window cut short by the load's
	# end would judge fewer samples: no result then, not a pass
	migr_wait /tmp/migr.done 120
	[ -e /tmp/migr.done ] || not_ok "migr.py's window ends within 120 s" "$(ls /tmp/migr.*)"
}

err=$(build/scx_tidemark --online /online/a --be /be --home /be=strict 2>&1 >/dev/null)
rc=$?
if [ $rc -ne 0 ] && grep -q -- "--home /be: not an ONLINE cgroup" <<<"$err" && [ "$(scx_state)" = disabled ]; then
	ok "--home on a cgroup that is not placed: refused, nothing loaded"
else
	not_ok "--home on a cgroup that is not placed is refused" "exit $rc, state $(scx_state): $err"
fi

note "EEVDF: same load, no sched_ext scheduler"
measure /tmp/eevdf.json
note "BE hogs running: $(wc -l <$cg/be/cgroup.procs) processes"

stop_load
wait $migr_pid
note "eevdf: $(cat /tmp/eevdf.json)"

log=/tmp/scx.log
build/scx_tidemark --online /online/a --online /online/b --online /online/c --be /be \
	--home "/online/b=strict,$DEMAND" --home /online/c=soft,1000 --stats 1 --json >/tmp/scx.out 2>"$log" &
pid=$!
wait_state enabled 20 || { not_ok "scheduler loads" "$(cat $log)"; tap_done; }
ok "scheduler loads"
# Under this load every process started costs seconds (16 vCPUs on the
# host's 2): cpu.stat and the pinned task's stat are read by bash itself.
be0='' be1=''
cg_usage be0 be
measure /tmp/tm.json
cg_usage be1 be
be_use=$((be1 - be0))
ha=$(sed -n 's/.*home \/online\/a -> [A-Za-z0-9]* \([0-9,]*\) .*/\1/p' "$log" | tail -1)
# a thread of a pinned to a CPU outside a's home: runs there, no error
other=$(( (${ha:-0} + 1) % ndom ))
pin=$(tr '/' '\n' <<<"$DOMAINS" | sed -n "$((other + 1))p" | cut -d- -f1)
in_cgroup online/a taskset -c "$pin" timeout 120 bash -c 'while :; do :; done'
pinned=$!
sleep 3
st=()
read -ra st 2>/dev/null <"/proc/$pinned/stat" # its comm, "timeout", has no space
pin_cpu=${st[38]:-} pin_ticks=${st[13]:-}
kill $pinned 2>/dev/null
wait $pinned 2>/dev/null
sleep 1.5
stop_load
wait $migr_pid
kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"
note "tidemark: $(cat /tmp/tm.json)"
while read -r l; do note "$l"; done < <(grep -- "-> " "$log")

hb=$(sed -n 's/.*home \/online\/b -> [A-Za-z0-9]* \([0-9,]*\) .*/\1/p' "$log" | tail -1)
hc=$(sed -n 's/.*home \/online\/c -> [A-Za-z0-9]* \([0-9,]*\) .*/\1/p' "$log" | tail -1)
# every figure from migr.py's two results in one python (a start is ~1 s)
declare -A F=()
while read -r k v; do F[$k]=$v; done < <(python3 -c '
import json, sys
e, t = (json.load(open(f)) for f in ("/tmp/eevdf.json", "/tmp/tm.json"))
ha, hb, hc = sys.argv[1:]
s = lambda d, c: d[c]["samples"]
for c, h in (("a", ha), ("b", hb)):
    print("in_" + c, s(t, c).get(h, 0))
    print("all_" + c, sum(s(t, c).values()))
for n, d in (("e", e), ("t", t)):
    print("x" + n, d["a"]["xdom"] + d["b"]["xdom"])
    print("m" + n, d["a"]["migrations"] + d["b"]["migrations"])
    print("th" + n, d["a"]["threads"] + d["b"]["threads"])
print("lost", t["_lost_events"])
print("out_c", sum(v for k, v in s(t, "c").items() if k != hc))
print("all_c", sum(s(t, "c").values()))' "$ha" "$hb" "$hc")
if grep -q "home /online/a .*demand $DEMAND mCPU from cpu.max" "$log"; then ok "a: demand from cpu.max"; else not_ok "a: demand from cpu.max" "$(grep home "$log")"; fi
if grep -q "home /online/b .*demand $DEMAND mCPU from rule" "$log"; then ok "b: demand from the --home rule"; else not_ok "b: demand from the --home rule" "$(grep home "$log")"; fi
if [ -n "$ha" ] && [ -n "$hb" ] && [ "$ha" != "$hb" ] && [[ $ha != *,* ]] && [[ $hb != *,* ]]; then
	ok "a and b each get a domain of their own ($ha, $hb)"
else
	not_ok "a and b each get a domain of their own" "a: '$ha' b: '$hb'"
fi
for s in a b; do
	h=$([ $s = a ] && echo "$ha" || echo "$hb")
	in=${F[in_$s]:-} all=${F[all_$s]:-}
	if [ "$all" -gt 0 ] && [ "$in" -eq "$all" ]; then ok "$s: every sampled run inside domain $h ($in/$all)"; else not_ok "$s: every sampled run inside domain $h" "$in of $all samples"; fi
done
xe=${F[xe]:-} xt=${F[xt]:-} me=${F[me]:-} mt=${F[mt]:-}
note "ONLINE migrations in 10 s: EEVDF $me ($xe across domains), tidemark $mt ($xt across domains)"
# 0 is >= 10x fewer than anything; EEVDF's own count varies (4-68 seen).
# EEVDF's window must show some (else the comparison says nothing), and
# both windows must have seen ONLINE's threads.
the=${F[the]:-0} tht=${F[tht]:-0}
if [ "$the" -gt 0 ] && [ "$tht" -gt 0 ] && [ "${xe:-0}" -ge 1 ] && { [ "$xt" -eq 0 ] || [ $((xt * 10)) -le "$xe" ]; }; then
	ok "cross-domain migrations of ONLINE tasks >= 10x fewer than EEVDF ($xt vs $xe)"
else
	not_ok "cross-domain migrations >= 10x fewer than EEVDF" "tidemark $xt, EEVDF ${xe:-none} (threads seen: $tht, $the)"
fi
if [ "${F[lost]:-}" = 0 ]; then ok "no trace events lost"; else not_ok "no trace events lost" "'${F[lost]:-}' LOST lines"; fi

out_c=${F[out_c]:-} all_c=${F[all_c]:-}
if [ -n "$hc" ] && [ "$out_c" -gt 0 ]; then ok "c (soft, home $hc too small) also runs outside its home ($out_c of $all_c samples)"; else not_ok "c (soft) overflows its home" "home '$hc', $out_c of $all_c samples outside"; fi
if [ "$pin_cpu" = "$pin" ] && [ "${pin_ticks:-0}" -gt 0 ]; then ok "a task of a pinned outside a's home runs on CPU $pin ($pin_ticks ticks)"; else not_ok "a pinned task runs where its affinity allows" "pinned to $pin, last CPU '$pin_cpu', utime '$pin_ticks'"; fi
last=$(grep '^{' /tmp/scx.out | tail -1)
expect_eq "runs_outside_home is 0 (strict homes)" 0 "$(json_field "$last" runs_outside_home)"
if [ "$(json_field "$last" runs_outside_soft_home)" -gt 0 ]; then ok "runs_outside_soft_home counts c's overflow ($(json_field "$last" runs_outside_soft_home))"; else not_ok "runs_outside_soft_home counts c's overflow" "$last"; fi
if [ "$(json_field "$last" home_unreachable)" -gt 0 ]; then ok "home_unreachable counts the pinned task ($(json_field "$last" home_unreachable))"; else not_ok "home_unreachable counts the pinned task" "$last"; fi
note "runs_outside_home_pinned $(json_field "$last" runs_outside_home_pinned), be_avoided $(json_field "$last" be_avoided), xdom_migrations_online $(json_field "$last" xdom_migrations_online)"
if [ "${be_use:-0}" -gt 1000000 ]; then ok "BE still runs ($((be_use / 1000)) ms of CPU in ~13 s)"; else not_ok "BE still runs" "BE usage ${be_use:-?} us"; fi
# BE kept off the home domains: per-domain BE load from the last reports
bes=$(grep '^{' /tmp/scx.out | tail -8 | python3 -c '
import json, sys
ha, hb = sys.argv[1], sys.argv[2]
home = {int(ha), int(hb)}
h = o = 0.0
for line in sys.stdin:
    for d in json.loads(line).get("domains", []):
        if d["id"] in home: h += d["be_pct"]
        else: o += d["be_pct"]
print(int(h), int(o))' "${ha:-0}" "${hb:-0}")
note "BE load summed over the last reports: home domains / others: $bes"
note "last report: $(grep '^{' /tmp/scx.out | tail -1 | sed 's/.*"domains"/"domains"/')"
read -r bh bo <<<"$bes"
if [ "$ndom" -le 2 ]; then
	note "every domain hosts a home: no domain to keep BE in"
elif [ "$bo" -gt "$bh" ]; then
	ok "BE runs mostly outside the home domains ($bh vs $bo)"
else
	not_ok "BE kept off the home domains" "home $bh, others $bo"
fi
