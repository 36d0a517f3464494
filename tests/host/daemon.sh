#!/usr/bin/env bash
# plan: 22
# tidemarkd configuration checks on the host (--check: nothing runs).
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
bin=${TIDEMARK_BUILD:-build}/tidemarkd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$bin" --config dist/tidemarkd.json.sample --check 2>&1)
expect_eq "the sample configuration is valid" "dist/tidemarkd.json.sample: valid" "$out"

refused() { config_refused "$bin" "$1" "$2" "$3"; } # desc json expected-message
refused "suppress not below evict" '{"version":1,"watermarks":{"cpu":{"suppress_pct":75,"evict_pct":70}}}' \
	"watermarks.cpu.suppress_pct: 75 must be below evict_pct (70)"
refused "memory lower line not below evict" '{"version":1,"watermarks":{"memory":{"evict_lower_pct":70}}}' \
	"watermarks.memory.evict_lower_pct: 70 must be below evict_pct (70)"
refused "unknown field named" '{"version":1,"report":{"port":1}}' "report.port: unknown field"
refused "syntax error located" '{"version":1,' "line 2"
refused "wrong version" '{"version":3}' "version: must be 1"
# --check refuses what the daemon would refuse or misapply on this node
refused "a floor above the node's capacity" \
	"{\"version\":1,\"scheduler\":{\"be_floor_mcpu\":$(($(nproc) * 1000 + 1))}}" \
	"scheduler.be_floor_mcpu: $(($(nproc) * 1000 + 1)) with $(nproc) online CPUs"
refused "a BE glob over every top-level cgroup" '{"version":1,"cgroups":{"be":["/*"]}}' \
	"cgroups.be[0]: '/*' takes in /system.slice"
refused "a BE root cgroup" '{"version":1,"cgroups":{"be":[{"path":"/","priority":1}]}}' \
	"cgroups.be[0]: '/' is the root cgroup"
refused "a 600-byte object-form path" \
	"{\"version\":1,\"cgroups\":{\"be\":[{\"path\":\"/$(printf 'a%.0s' $(seq 600))\"}]}}" \
	"cgroups.be[0]: path longer than 511 bytes"
err=$("$bin" --config "$tmp/missing.json" 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "missing.json: No such file" <<<"$err"; then ok "missing file named"; else not_ok "missing file named" "exit $rc: $err"; fi
err=$("$bin" 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--config FILE is required" <<<"$err"; then ok "--config required"; else not_ok "--config required" "exit $rc: $err"; fi
refused "a NoExecute taint (it would evict running pods)" \
	'{"version":1,"kubernetes":{"taint_key":"a/b","taint_effect":"NoExecute"}}' "kubernetes.taint_effect"
# --cleanup, for tidemark's removal: the values a killed tidemarkd recorded
# (here under 0.6.0's owner name) put back, the record emptied
mkdir -p "$tmp/cg/be" "$tmp/cst"
echo 4096 >"$tmp/cg/be/memory.high"
echo '{"version":1,"saved":[{"owner":"memevict","cgroup":"/be","file":"memory.high","value":"max"}]}' \
	>"$tmp/cst/saved.json"
echo '{"version":1}' >"$tmp/c0.json"
out=$("$bin" --cleanup --config "$tmp/c0.json" --cgroup-root "$tmp/cg" --state-dir "$tmp/cst" 2>&1)
rc=$?
if [ $rc = 0 ] && [ "$(cat "$tmp/cg/be/memory.high")" = max ] && grep -q '"saved": *\[\]' "$tmp/cst/saved.json" &&
	grep -q "cleanup: memory_eviction: 1 value(s) put back" <<<"$out"; then
	ok "--cleanup: a recorded value put back, the record emptied"
else
	not_ok "--cleanup: a recorded value put back" "exit $rc: $out" "$(cat "$tmp/cg/be/memory.high" "$tmp/cst/saved.json")"
fi
check "--cleanup without an API: no taint to look for, said" grep -q "kubernetes.api is none: no taint to remove" <<<"$out"
# Under systemd (Type=notify, WatchdogSec): READY=1 once the endpoints listen,
# WATCHDOG=1 at least twice per watchdog period, RELOADING=1 then READY=1 on
# SIGHUP. systemd's socket is stood in for by tests/lib/notifysock.py; every
# strategy is off so nothing on this host is touched.
port=$(free_port)
cat >"$tmp/n.json" <<JSON
{"version":1,"memory_eviction":{"enabled":false},"cpu_eviction":{"enabled":false},
 "interference":{"enabled":false},"fallback":{"enabled":false},"report":{"listen":"127.0.0.1:$port"}}
JSON
tests/lib/notifysock.py "$tmp/notify" 4 >"$tmp/notify.log" &
sock=$!
for _ in $(seq 50); do [ -S "$tmp/notify" ] && break; sleep 0.05; done
NOTIFY_SOCKET="$tmp/notify" WATCHDOG_USEC=400000 "$bin" --config "$tmp/n.json" --cgroup-root "$tmp" --state-dir "$tmp/state" \
	2>"$tmp/d.log" &
d=$!
sleep 1.5
kill -HUP $d
sleep 1
kill -TERM $d
wait $d
rc=$?
wait $sock
expect_eq "tidemarkd under a notify socket exits 0 on SIGTERM" 0 "$rc"
first=$(head -1 "$tmp/notify.log" | cut -d' ' -f2-)
if [[ $first == READY=1* ]]; then ok "first notification is READY=1 ($first)"; else not_ok "first notification is READY=1" "$(cat "$tmp/notify.log")" "$(tail -3 "$tmp/d.log")"; fi
if curl -s "http://127.0.0.1:$port/metrics" >/dev/null 2>&1; then not_ok "endpoint gone after stop"; else ok "endpoint gone after stop"; fi
# pings: 2.5 s at one per 200 ms at most -> at least 8
pings=$(grep -c "WATCHDOG=1" "$tmp/notify.log")
if [ "$pings" -ge 8 ]; then ok "watchdog pinged every half period ($pings in 2.5 s, WATCHDOG_USEC 400000)"; else not_ok "watchdog pinged every half period" "$pings pings" "$(cat "$tmp/notify.log")"; fi
check "SIGHUP: RELOADING=1 then READY=1" grep -A3 -m1 "RELOADING=1" "$tmp/notify.log" -q
if grep -A3 "RELOADING=1" "$tmp/notify.log" | grep -q "READY=1"; then ok "ready again after the reload"; else not_ok "ready again after the reload" "$(cat "$tmp/notify.log")"; fi
check "STOPPING=1 on SIGTERM" grep -q "STOPPING=1" "$tmp/notify.log"
tap_done
