#!/usr/bin/env bash
# vm: --cpus 1 --icount --timeout 400
# plan: 30
# Interference detection (tidemarkd strategy "interfere"). An ONLINE service
# (tm-probe) runs next to an innocent BE CPU hog. Then a BE antagonist
# starts: fork/exit churn, whose exiting tasks the scheduler runs as SYSTEM,
# so ONLINE wakeups queue behind them (measured in the bench: p99 x40).
# Dry run first: detected and decided, nothing done. Then for real: the
# antagonist is named by the fourth sample after it starts, the ladder lowers the line, caps it and
# then kills it, in that order; ONLINE's run-queue wait returns to its baseline; the
# innocent hog is never acted on. Between the two, fork churn outside BE
# (SYSTEM) is detected and no BE cgroup named for it.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
CG_CONTROLLERS="+cpu +memory" cg_make online be/innocent be/antagonist
sched_start --online /online --be /be --stats 1 --json
spid=$sched_pid
ok "scheduler loads"

config() { # dry_run
	cat >/tmp/td.json <<EOC
{"version": 1,
 "memory_eviction": {"enabled": false},
 "cpu_eviction": {"enabled": false},
 "interference": {"dry_run": $1, "sample_ms": 1000, "warmup_samples": 8, "cooldown_s": 4,
                  "recover_s": 600, "throttle_mcpu": 50},
 "cgroups": {"be": ["/be/innocent", "/be/antagonist"], "online": ["/online"]},
 "report": {"listen": "127.0.0.1:9477"}}
EOC
}
# a metric of /online from tidemarkd (curl and sed: a python start on this
# one vCPU is itself SYSTEM work the detector rightly sees as interference;
# so is curl's, 0.2 s of CPU, but not in the window it judges)
metric() { # family stat
	curl -s http://127.0.0.1:9477/metrics |
		sed -n "s/^$1{cgroup=\"\/online\",stat=\"$2\"} //p"
}

in_cgroup be/innocent stress-ng --temp-path /tmp --cpu-method int64 --cpu 1 --timeout 400s >/dev/null 2>&1
inn=$!
in_cgroup online build/tm-probe --messengers 1 --workers 4 --rate 100 --work-us 1000 \
	--jitter-us 5000 --seconds 3600 --json >/tmp/probe.json 2>&1
probe=$!

antagonist() {
	in_cgroup be/antagonist stress-ng --temp-path /tmp --fork 4 --timeout 400s >/dev/null 2>&1
	ant=$!
}

# report field: interference.<key> (string or bool)
ifield() {
	curl -s http://127.0.0.1:9477/report | python3 -c 'import json,sys; print(json.load(sys.stdin)["interference"][sys.argv[1]])' "$1"
}

phase() { # dry_run
	config "$1"
	: >/tmp/td.log
	# debug: a line per sample, what the latency is counted in
	daemon_start /tmp/td.json --log-level debug
	dpid=$daemon_pid
	sleep 4
	mark_a=$(wc -l </tmp/scx.log)
	sleep 10	# baselines: 8 warm-up samples and some more
	mark_b=$(wc -l </tmp/scx.log)
	# Until the antagonist starts, nothing heavier than wc and grep: a curl
	# start is 0.2 s of CPU on this one vCPU (measured), work ahead of
	# ONLINE that the detector rightly took for interference once (CPU
	# delay 148 ms/s against a 7.4 baseline, when the baseline was read
	# here).
	if grep -q "strategy=interference" /tmp/td.log; then
		not_ok "no action before the antagonist (dry_run=$1)" "$(grep strategy=interference /tmp/td.log)"
	else
		ok "no action before the antagonist (dry_run=$1)"
	fi
	from=$(wc -l </tmp/td.log)
	t0=$EPOCHREALTIME
	antagonist
	if wait_log /tmp/td.log "strategy=interference .*culprit=/be/antagonist " 20; then
		line=$(grep -m1 "strategy=interference .*culprit=/be/antagonist " /tmp/td.log)
		ts=$(sed -n 's/^audit ts=\([0-9.]*\) .*/\1/p' <<<"$line")
		ms=$(python3 -c "print(int(($ts - $t0) * 1000))")
		# In samples, not seconds: where the start falls inside a 1 s
		# sample is chance, and whether the sample straddling it is
		# already an outlier too (CI saw a 2.5 and a 3.5 s naming, both
		# the earliest possible). Expected: the first sample since the
		# start at which one signal has 3 (need_n) outliers among its
		# last 5 (of_m), counting the ones before the start.
		read -r want n < <(awk -v from="$from" -v need=3 -v m=5 '
			NR > from && /strategy=interference .*culprit=\/be\/antagonist / { named = k; exit }
			/interference sample=[0-9]+ sufferer=\/online / {
				if (NR > from) k++
				for (i = 1; i <= NF; i++) {
					f = $i; gsub(/"/, "", f)
					if (f !~ /^[a-z_]+=[0-9.]+\/[0-9.]+\*?$/) continue
					sig = substr(f, 1, index(f, "=") - 1)
					h[sig] = substr(h[sig] (f ~ /\*$/ ? 1 : 0), 1 + (length(h[sig]) >= m))
					t = h[sig]
					if (NR > from && !want && gsub(/1/, "", t) >= need) want = k
				}
			}
			END { print (want ? want : "none"), (named ? named : "none") }' /tmp/td.log)
		note "$(grep -m1 "action=detect" /tmp/td.log)"
		note "$line"
		note "$(tail -n +$((from + 1)) /tmp/td.log | grep -m5 "interference sample=")"
		note "antagonist named ${ms} ms after it started, at sample $n since; need_n outliers at sample $want"
		if is_num "$n" && [ "$n" = "$want" ]; then
			ok "antagonist named at the sample of its third outlier ($n since its start, dry_run=$1)"
		else
			not_ok "antagonist named at the sample of its third outlier" "named at sample ${n:-none}, third outlier at ${want:-none}"
		fi
		# a sample a second (sample_ms): at most 1.1 s a sample
		if is_num "$n" && is_num "$ms" && [ "$ms" -le $((n * 1100)) ]; then
			ok "samples 1 s apart: named $ms ms after the start, within $n x 1.1 s (dry_run=$1)"
		else
			not_ok "samples 1 s apart: named within n x 1.1 s of the start" "$ms ms, $n samples"
		fi
	else
		not_ok "antagonist identified (dry_run=$1)" "$(tail -5 /tmp/td.log)"
	fi
	base=$(metric tidemark_interference_rq_wait_seconds baseline)
	note "dry_run=$1: /online rq_wait baseline ${base:-none} s"
}

# --- dry run: decides, does nothing; CPU delay from schedstat ---
sysctl -qw kernel.task_delayacct=0
phase true
expect_eq "delay accounting off: CPU delay from /proc/TID/schedstat" schedstat "$(ifield delay_source)"
check "the daemon says why" grep -q "CPU delay from /proc/TID/schedstat: kernel.task_delayacct is 0" /tmp/td.log
if grep -q "no CPI signal" /tmp/td.log; then
	ok "no PMU in this VM: CPI left out, said once ($(grep -m1 'no CPI' /tmp/td.log | cut -d'(' -f2 | tr -d ')'))"
	expect_eq "report: cpi false" False "$(ifield cpi)"
else
	expect_eq "report: cpi true (a PMU counts cycles)" True "$(ifield cpi)"
fi
wait_log /tmp/td.log "action=throttle" 20 || true
sleep 1
note "$(grep "strategy=interference" /tmp/td.log | grep -v detect | head -3)"
if grep -q "action=throttle dry_run=true cgroup=/be/antagonist " /tmp/td.log; then
	ok "dry run: the throttle names the antagonist"
else
	# what the ladder saw: each signal's value and baseline, the step held
	not_ok "dry run: the throttle names the antagonist" \
		"$(grep "strategy=interference" /tmp/td.log | tail -n 8)" \
		"$(curl -s http://127.0.0.1:9477/report | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["interference"]))')"
fi
expect_eq "dry run: the line is left alone" "suppress_pct=65" "$(build/tidemarkctl show | head -1 | cut -d' ' -f1)"
if kill -0 $ant 2>/dev/null; then ok "dry run: antagonist still runs"; else not_ok "dry run: antagonist still runs"; fi
capped=$(grep '^{' /tmp/scx.log | tail -n 1 | sed -n 's/.*"bw_throttled":\([0-9]*\).*/\1/p')
expect_eq "dry run: nothing held by a cap (bw_throttled)" 0 "${capped:-missing}"
kill $dpid; wait $dpid 2>/dev/null
kill $ant 2>/dev/null; wait $ant 2>/dev/null
pkill -f "stress-ng --temp-path /tmp --fork" 2>/dev/null
sleep 5

# --- interference from outside BE: fork churn in the root cgroup (SYSTEM)
# beside the innocent hog. Detected, and no BE cgroup named: the hog's use
# does not follow the sufferer's wait, it only gives way to the churn ---
config true
: >/tmp/td.log
build/tidemarkd --config /tmp/td.json 2>/tmp/td.log &
dpid=$!
wait_log /tmp/td.log "tidemarkd: running" 10 || not_ok "daemon starts (SYSTEM churn)" "$(cat /tmp/td.log)"
sleep 12	# baselines: 8 warm-up samples and some more
stress-ng --temp-path /tmp --fork 4 --timeout 10s >/dev/null 2>&1 &
sys=$!
if wait_log /tmp/td.log "action=detect .*sufferer=/online " 15; then
	line=$(grep -m1 "action=detect .*sufferer=/online " /tmp/td.log)
	note "SYSTEM churn: $line"
	check "SYSTEM churn beside the innocent hog: detected, no BE cgroup named (culprit=-)" \
		grep -q " culprit=- " <<<"$line"
else
	not_ok "SYSTEM churn beside the innocent hog: detected, no BE cgroup named" "$(tail -5 /tmp/td.log)"
fi
wait $sys 2>/dev/null
if grep "strategy=interference" /tmp/td.log | grep -q "/be/innocent"; then
	not_ok "SYSTEM churn: the innocent hog never named" "$(grep /be/innocent /tmp/td.log | head -3)"
else
	ok "SYSTEM churn: the innocent hog never named"
fi
kill $dpid; wait $dpid 2>/dev/null
sleep 3

# --- for real; CPU delay from taskstats over generic netlink ---
sysctl -qw kernel.task_delayacct=1
phase false
expect_eq "delay accounting on: CPU delay from taskstats" taskstats "$(ifield delay_source)"
d=$(curl -s http://127.0.0.1:9477/report | python3 -c 'import json,sys
r = json.load(sys.stdin)["interference"]
print([c["signals"].get("cpu_delay_ms_per_s", {}).get("baseline") for c in r["cgroups"] if c["cgroup"] == "/online"][0])')
check "taskstats CPU delay measured for /online (baseline $d ms/s)" python3 -c "import sys; sys.exit(0 if '$d' not in ('None', '') and float('$d') > 0 else 1)"
wait_log /tmp/td.log "action=throttle\|action=evict" 30 || true
check "the line was lowered first" grep -q "action=lower_line dry_run=false line_pct=65->50" /tmp/td.log
# in the ladder's order: the first cap after the first lowering
order=$(awk '/strategy=interference action=lower_line dry_run=false/ && !l { l = NR }
	/strategy=interference action=throttle dry_run=false cgroup=\/be\/antagonist / && !t { t = NR }
	END { print l + 0, t + 0 }' /tmp/td.log)
if [[ $order =~ ^([1-9][0-9]*)\ ([1-9][0-9]*)$ ]] && [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ]; then
	ok "then the antagonist was capped (audit lines $order)"
else
	not_ok "then the antagonist was capped, after the lowering" "audit lines (lower, cap): $order"
fi
if grep "strategy=interference" /tmp/td.log | grep -q "innocent"; then not_ok "the innocent BE cgroup is never acted on" "$(grep innocent /tmp/td.log)"; else ok "the innocent BE cgroup is never acted on"; fi
# recovery: the mean run-queue wait of /online over 10 quiet seconds, from
# the scheduler's own histograms, against the 10 s before the antagonist.
# Quiet means after the ladder's last step: a capped fork storm still runs
# (its exiting children are never throttled), so when the ladder goes on to
# evict, the 10 s start after that (measured during the cap, one CI run read
# 78.6 us against 49.7 before).
wait_log /tmp/td.log "action=evict dry_run=false cgroup=/be/antagonist" 40 || true
last=$(grep "strategy=interference action=\(throttle\|evict\) dry_run=false" /tmp/td.log | tail -n 1)
note "the ladder's last step: $last"
sleep 5
mark_c=$(wc -l </tmp/scx.log)
sleep 10
mark_d=$(wc -l </tmp/scx.log)
read -r w0 n0 < <(tests/lib/cgwait.py /tmp/scx.log "$mark_a" "$mark_b" /online)
read -r w1 n1 < <(tests/lib/cgwait.py /tmp/scx.log "$mark_c" "$mark_d" /online)
note "/online mean run-queue wait (slowest 1% left out): ${w0} us before the antagonist ($n0 waits), ${w1} us 5-15 s after the last step ($n1 waits)"
if python3 -c "import sys; sys.exit(0 if $n1 > 100 and $w1 <= 1.5 * $w0 else 1)"; then
	ok "ONLINE run-queue wait back at its baseline ($w1 <= 1.5 x $w0 us)"
else
	not_ok "ONLINE run-queue wait back at its baseline" "$w1 us vs $w0 us before"
fi
note "$(grep "strategy=interference" /tmp/td.log | cut -c1-300)"
# the cap cannot hold a fork storm (its exiting children run as SYSTEM,
# never throttled), so the ladder's last step is always the eviction
if grep -q "action=evict dry_run=false cgroup=/be/antagonist " /tmp/td.log; then
	sleep 1
	if kill -0 $ant 2>/dev/null; then not_ok "the antagonist evicted, and gone"; else ok "the antagonist evicted, and gone"; fi
else
	not_ok "the antagonist evicted, and gone" "no action=evict for /be/antagonist: $(grep 'strategy=interference action=' /tmp/td.log | tail -n 4)"
fi
st=$(build/tidemarkctl status | grep "^interference")
check "tidemarkctl status names the culprit ($st)" grep -q "last culprit /be/antagonist" <<<"$st"
if kill -0 $inn 2>/dev/null; then ok "innocent hog still runs"; else not_ok "innocent hog still runs"; fi
expect_eq "while the ladder holds: the line lowered to 50" "suppress_pct=50" "$(build/tidemarkctl show | head -1 | cut -d' ' -f1)"
kill $dpid; wait $dpid 2>/dev/null
expect_eq "daemon stopped: the configured line is back" "suppress_pct=65" "$(build/tidemarkctl show | head -1 | cut -d' ' -f1)"
check "daemon stopped: the ladder undone in the audit" grep -q "action=relax dry_run=false .*reason=daemon stopping" /tmp/td.log
kill $ant $inn $probe 2>/dev/null
wait $ant $inn $probe 2>/dev/null
kill -INT $spid
wait $spid
expect_eq "loader exits 0" 0 "$?"
tap_done
