#!/usr/bin/env bash
# vm: --cpus 2 --mem 2048 --timeout 300
# plan: 30
# tidemarkd: memory watermark eviction (reaction, victims, ONLINE untouched),
# dry-run, SIGHUP reload (good and bad), /metrics through promtool, the JSON
# report against the load, and the scheduler outliving the daemon.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
CG_CONTROLLERS="+cpu +memory" cg_make online be/hog be/small

sched_start --online /online --be /be
spid=$sched_pid
ok "scheduler loads"

mem_pct() { awk '/^MemTotal/{t=$2} /^MemAvailable/{a=$2} END{print int((t-a)*100/t)}' /proc/meminfo; }
total_mib=$(awk '/^MemTotal/{print int($2/1024)}' /proc/meminfo)
# ONLINE memory user first: 150 MiB it keeps
in_cgroup online python3 -c 'import time; b = bytearray(150 << 20); b[::4096] = b"x" * len(b[::4096]); time.sleep(600)'
online=$!
sleep 3
base=$(mem_pct)
evict=$((base + 20))
lower=$((evict - 3))
note "memory: ${total_mib} MiB, ${base}% used before the hogs; evict at ${evict}%, down to ${lower}%"

config() { # dry_run suppress
	cat >/tmp/td.json <<EOC
{"version": 1,
 "watermarks": {"cpu": {"forbid_pct": 50, "suppress_pct": $2, "evict_pct": 90},
                "memory": {"forbid_pct": $((lower - 1)), "evict_lower_pct": $lower, "evict_pct": $evict}},
 "memory_eviction": {"dry_run": $1, "poll_ms": 100, "cooldown_ms": 1000},
 "cgroups": {"be": ["/be/*"], "online": ["/online"]},
 "report": {"listen": "127.0.0.1:9477", "sample_s": 1,
            "push_url": "http://127.0.0.1:9480/nodemetric", "push_interval_s": 1}}
EOC
}
# a receiver for the pushed reports: each POST body becomes one line
python3 -c '
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers["Content-Length"])
        body = self.rfile.read(n).decode().strip()
        with open("/tmp/pushed", "a") as f:
            f.write(self.path + " " + body + "\n")
        self.send_response(204)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", 9480), H).serve_forever()' &
recv=$!
config false 55
daemon_start
dpid=$daemon_pid
ok "daemon starts"
wait_log /tmp/td.log "action=set" 5
expect_eq "daemon set the scheduler's suppress_pct" "55" "$(build/tidemarkctl show | sed -n 's/^suppress_pct=\([0-9]*\) .*/\1/p')"

# a BE memory hog grows until it crosses the watermark; tests/lib/memwatch.py
# records the crossing time (CLOCK_REALTIME, like the audit lines)
hog_mib=$(( total_mib * (evict - base + 15) / 100 ))
tests/lib/memwatch.py --pct "$evict" --seconds 40 >/tmp/cross &
mw=$!
in_cgroup be/hog stress-ng --temp-path /tmp --vm 1 --vm-bytes ${hog_mib}M --vm-keep --vm-populate --timeout 60s
hog=$!
in_cgroup be/small python3 -c 'import time; b = bytearray(20 << 20); b[::4096] = b"x" * len(b[::4096]); time.sleep(600)'
small=$!
wait $mw
cross=$(cat /tmp/cross)
for _ in $(seq 100); do [ -z "$(cat $cg/be/hog/cgroup.procs)" ] && break; sleep 0.1; done
first=$(grep -m1 "strategy=memory_eviction action=" /tmp/td.log | sed -n 's/.*ts=\([0-9.]*\).*/\1/p')
note "$(grep "strategy=memory_eviction" /tmp/td.log | head -5)"
if [ -n "$cross" ] && [ -n "$first" ]; then
	react=$(python3 -c "print(int((float('$first') - float('$cross')) * 1000))")
	# not before the crossing either: memwatch.py samples every 10 ms
	# (-14 ms seen); acting at the lower mark would be 100s of ms early
	if [ "$react" -ge -50 ] && [ "$react" -le 500 ]; then ok "first action ${react} ms after crossing ${evict}% (bar -50 to 500 ms)"; else not_ok "first action within 500 ms of the crossing, not before" "${react} ms"; fi
else
	not_ok "watermark crossed and acted on" "crossing '$cross', first action '$first'"
fi
# the ladder's order, by the audit: the hog's first action is a throttle
# (memory.high) at the watermark, and its kill comes after it
acts=$(awk '/strategy=memory_eviction action=[a-z]+ dry_run=false cgroup=\/be\/hog / {
	a = $4; sub("action=", "", a); u = $0; if (!sub(/.*node_used_pct=/, "", u)) u = "-"; sub(/ .*/, "", u); printf "%s%s@%s", (n++ ? " " : ""), a, u }' /tmp/td.log)
if [[ ${acts%% *} =~ ^throttle@([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge "$evict" ] && [[ " $acts" == *" kill@"* ]]; then
	ok "throttled first (memory.high) at ${evict}% or more, killed after ($acts)"
else
	not_ok "throttled first (memory.high) at the watermark, killed after" "actions on /be/hog (action@node_used_pct): ${acts:-none}; evict at $evict%"
fi
# the throttle asks for what brings the node down to the lower mark: need
# (node used less evict_lower_pct) shared by size, the hog's share most of it
thr=$(grep -m1 "strategy=memory_eviction action=throttle dry_run=false cgroup=/be/hog " /tmp/td.log)
need=$(python3 - "$thr" "$lower" <<'EOP'
import re, sys
f = dict(re.findall(r"(\w+)=(\S+)", sys.argv[1]))
total = int(open("/proc/meminfo").read().split()[1]) * 1024
try:
    need, pct = int(f["need_bytes"]), int(f["node_used_pct"])
    cut = int(f["memory_current"]) - int(f["memory_high"])
except (KeyError, ValueError):
    print("unreadable"); sys.exit()
want = (pct - int(sys.argv[2])) * total / 100
ok = want - 0.015 * total <= need <= want + 0.01 * total and cut >= need / 2
print("%s: need %.1f%% of memory at %d%% used (lower %s%%), the hog's memory.high %.1f%% below its use"
      % ("ok" if ok else "wrong", need * 100 / total, pct, sys.argv[2], cut * 100 / total))
EOP
)
if [[ $need == ok:* ]]; then ok "the throttle sizes memory.high for the lower mark (${need#ok: })"; else
	not_ok "the throttle sizes memory.high for the lower mark" "$need; $thr"
fi
if grep -q "action=kill dry_run=false cgroup=/be/hog" /tmp/td.log; then ok "the big BE cgroup is killed"; else not_ok "the big BE cgroup is killed" "$(grep memory_eviction /tmp/td.log)"; fi
expect_eq "the hog's cgroup is empty" "" "$(cat $cg/be/hog/cgroup.procs)"
if kill -0 $online 2>/dev/null; then ok "ONLINE memory user untouched"; else not_ok "ONLINE memory user untouched"; fi
expect_eq "ONLINE memory.high untouched" "max" "$(cat $cg/online/memory.high)"
if ! grep -q "cgroup=/online" /tmp/td.log; then ok "no action names ONLINE"; else not_ok "no action names ONLINE" "$(grep cgroup=/online /tmp/td.log)"; fi
if kill -0 $small 2>/dev/null; then ok "the small BE cgroup was not needed as a victim"; else not_ok "small BE cgroup spared"; fi
wait $hog 2>/dev/null

# reports
sleep 2
python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9477/metrics", timeout=5).read().decode(), end="")' >/tmp/metrics.txt
if promtool check metrics </tmp/metrics.txt >/tmp/promtool.out 2>&1; then ok "/metrics passes promtool check metrics"; else not_ok "/metrics passes promtool" "$(head -5 /tmp/promtool.out)"; fi
if grep -q '^tidemark_actions_total{strategy="memory_eviction",action="kill",dry_run="false"} [1-9]' /tmp/metrics.txt; then ok "kill counted in tidemark_actions_total"; else not_ok "kill counted" "$(grep actions_total /tmp/metrics.txt)"; fi
python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9477/report", timeout=5).read().decode())' >/tmp/report.json
chk=$(python3 - /tmp/report.json <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
t = a = 0
for l in open("/proc/meminfo"):
    k, v = l.split()[:2]
    if k == "MemTotal:": t = int(v) * 1024
    if k == "MemAvailable:": a = int(v) * 1024
used = r["nodeMetric"]["memory"]["used_bytes"]
ok = abs(used - (t - a)) < 0.1 * t and r["nodeMetric"]["memory"]["total_bytes"] == t
ok = ok and r["scheduler"]["up"] and r["classUsage"]["online"]["memory_bytes"] > 140 << 20
ok = ok and r["aggregated"]["cpu_mcpu"]["300s"]["n"] >= 3 and r["nodeMetric"]["cpu"]["capacity_mcpu"] == 2000
cg = {c["cgroup"]: c for c in r["cgroups"]}
ok = ok and cg["/online"]["class"] == "online" and cg["/online"]["memory_bytes"] > 140 << 20
ok = ok and cg["/be/small"]["class"] == "be" and cg["/be/small"]["memory_bytes"] > 15 << 20
ok = ok and len(r["domains"]["list"]) >= 1 and r["domains"]["list"][0]["capacity_mcpu"] == 2000
print("match" if ok else "mismatch: used %d vs %d, online %d" % (used, t - a, r["classUsage"]["online"]["memory_bytes"]))
EOP
)
expect_eq "JSON report parses and matches the node (memory, ONLINE usage, scheduler up)" match "$chk"
if head -1 /tmp/pushed 2>/dev/null | python3 -c 'import json,sys; p, b = sys.stdin.read().split(" ", 1); assert p == "/nodemetric"; assert json.loads(b)["kind"] == "NodeMetric"'; then
	ok "the JSON report is pushed to report.push_url ($(wc -l </tmp/pushed) pushes)"
else
	not_ok "the JSON report is pushed" "$(head -c 300 /tmp/pushed 2>&1)"
fi
st=$(build/tidemarkctl status)
if grep -q "^scheduler *up, suppress line 55%" <<<"$st"; then ok "tidemarkctl status"; else not_ok "tidemarkctl status" "$st"; fi

# SIGHUP: a bad configuration is refused, the good one stays
echo '{"version":1,"watermarks":{"cpu":{"suppress_pct":95}}}' >/tmp/td.json
kill -HUP $dpid
wait_log /tmp/td.log "reload refused" 5
if grep -q "reload refused.*watermarks.cpu.suppress_pct: 95 must be below evict_pct (70)" /tmp/td.log; then ok "bad reload refused with the field named"; else not_ok "bad reload refused" "$(tail -3 /tmp/td.log)"; fi
kill -0 $dpid && ok "daemon still running after a bad reload" || not_ok "daemon still running after a bad reload"

# dry-run, via a good configuration written to the file, no signal (as
# a ConfigMap update arrives): applied live, the scheduler untouched
seq0=$(cat /sys/kernel/sched_ext/enable_seq)
config true 60
wait_log /tmp/td.log "td.json changed: reloading" 5
wait_log /tmp/td.log "configuration reloaded" 5
wait_log /tmp/td.log "suppress_pct=55->60" 5 && ok "the file's change applied live, no SIGHUP (suppress 55 -> 60)" || not_ok "the file's change applied live" "$(tail -3 /tmp/td.log)"
expect_eq "the scheduler's own line moved (tidemarkctl show)" 60 "$(build/tidemarkctl show | sed -n 's/.*suppress_pct=\([0-9]*\).*/\1/p')"
expect_eq "the scheduler untouched: same process, same sched_ext instance" "1 $seq0" \
	"$(kill -0 $spid && echo 1) $(cat /sys/kernel/sched_ext/enable_seq)"
# outlives the 20 s wait below however slow its fill (killed after the
# checks): "dry-run killed nothing" reads it alive
in_cgroup be/hog stress-ng --temp-path /tmp --vm 1 --vm-bytes ${hog_mib}M --vm-keep --vm-populate --timeout 60s
hog=$!
wait_log /tmp/td.log "action=kill dry_run=true" 20 && ok "dry-run decides a kill" || not_ok "dry-run decides a kill" "$(grep dry_run=true /tmp/td.log)"
if kill -0 $hog 2>/dev/null && [ -n "$(cat $cg/be/hog/cgroup.procs)" ]; then ok "dry-run killed nothing"; else not_ok "dry-run killed nothing"; fi
expect_eq "dry-run left memory.high alone" "max" "$(cat $cg/be/small/memory.high)"
kill $hog 2>/dev/null
wait $hog 2>/dev/null

# the daemon dies: the scheduler keeps its policy; a new daemon re-attaches
kill -9 $dpid
wait $dpid 2>/dev/null
sleep 1
expect_eq "scheduler still enabled without the daemon" enabled "$(scx_state)"
expect_eq "suppress line kept without the daemon" 60 "$(build/tidemarkctl show | sed -n 's/^suppress_pct=\([0-9]*\) .*/\1/p')"
config false 50
build/tidemarkd --config /tmp/td.json 2>/tmp/td2.log &
dpid=$!
wait_log /tmp/td2.log "suppress_pct=60->50" 10 && ok "restarted daemon re-attaches and applies its configuration" || not_ok "restarted daemon re-attaches" "$(cat /tmp/td2.log)"
kill $dpid
wait $dpid
expect_eq "daemon exits 0 on SIGTERM" 0 "$?"

kill $online $small $recv 2>/dev/null
kill -INT $spid
wait $spid
expect_eq "loader exits 0" 0 "$?"
tap_done
