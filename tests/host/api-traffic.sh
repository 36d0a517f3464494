#!/usr/bin/env bash
# plan: 3
# beside: counts requests, times nothing (the daemon's own timers pace them), 1.5 s of CPU in its 98
# The requests one tidemarkd makes to the API server in steady state, with
# the cluster defaults (pods, NodeSLO and NodeMetric by watch, the status
# every reportIntervalSeconds, 60 by default, a jittered start), counted by
# the stand-in API server (tests/lib/kubestand.py) over TM_API_SOAK_S
# seconds (90 here; `make soak-api` runs 330, more than five minutes) after
# the first status write. Goal: at most 2 requests a minute on average,
# watches renewed included. The note gives the per-call counts and what
# 1,000 such nodes ask of the API server.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/standin.sh
. "$(dirname "$0")/../lib/standin.sh"
bin=${TIDEMARK_BUILD:-build}/tidemarkd
soak=${TM_API_SOAK_S:-90}
tmp=$(mktemp -d)
d='' api=''
trap 'kill $d $api 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
command -v openssl >/dev/null || { not_ok "openssl is installed (tools/deps.sh)"; tap_done; }
standin_certs "$tmp" || { not_ok "test certificates made"; tap_done; }
echo "tok-$RANDOM$RANDOM" >"$tmp/token"
port=$(free_port 1)
mkdir -p "$tmp/api" "$tmp/cg/kubepods.slice"
echo '{"kind":"PodList","apiVersion":"v1","items":[]}' >"$tmp/pods.json"
python3 tests/lib/kubestand.py --cert "$tmp/srv.crt" --key "$tmp/srv.key" --token "$(cat "$tmp/token")" \
	--node node-a --pods "$tmp/pods.json" --schema tests/schema/nodemetric.crd.json \
	--dir "$tmp/api" --require-rv0 >"$tmp/api.out" 2>&1 &
api=$!
for _ in $(seq 100); do
	aport=$(sed -n 's/^ready \([0-9][0-9]*\)$/\1/p' "$tmp/api.out" 2>/dev/null)
	[ -n "$aport" ] && break
	sleep 0.05
done
[ -n "$aport" ] || { not_ok "the stand-in API server starts" "$(cat "$tmp/api.out")"; tap_done; }
# the cluster section as an operator leaves it: only where the API is
cat >"$tmp/d.json" <<JSON
{"version":1,"memory_eviction":{"enabled":false},"cpu_eviction":{"enabled":false},
 "interference":{"enabled":false},"fallback":{"enabled":false},
 "report":{"listen":"127.0.0.1:$port"},
 "kubernetes":{"api":"in-cluster","node_name":"node-a","server":"https://127.0.0.1:$aport",
  "token_file":"$tmp/token","ca_file":"$tmp/ca.crt"}}
JSON
t0=$(date +%s)
"$bin" --config "$tmp/d.json" --cgroup-root "$tmp/cg" --state-dir "$tmp/state" >/dev/null 2>"$tmp/d.log" &
d=$!
first() { grep -q "^patch_nodemetric_status PATCH 200" "$tmp/api/requests.log" 2>/dev/null; }
for _ in $(seq 300); do first && break; sleep 0.1; done
if ! first; then
	not_ok "the first status is written within 30 s" "$(cat "$tmp/api/requests.log" 2>&1)" "$(tail -5 "$tmp/d.log")"
	tap_done
fi
t1=$(date +%s)
starts=$(grep -c . "$tmp/api/requests.log")
note "start: $starts requests in $((t1 - t0)) s (jittered up to 10 s): $(awk '{print $1}' "$tmp/api/requests.log" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}')"
sleep "$soak"
kill -0 $d 2>/dev/null || { not_ok "tidemarkd ran throughout" "$(tail -5 "$tmp/d.log")"; tap_done; }
tail -n +"$((starts + 1))" "$tmp/api/requests.log" >"$tmp/steady.log"
n=$(grep -c . "$tmp/steady.log")
per_call=$(awk '{print $1}' "$tmp/steady.log" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}')
rate=$(awk -v n="$n" -v s="$soak" 'BEGIN { printf "%.2f", n * 60 / s }')
note "steady state over $soak s: $n requests ($per_call), $rate a minute; 1,000 nodes: $(awk -v r="$rate" 'BEGIN { printf "%.1f", r * 1000 / 60 }') requests/s at the API server"
if awk -v r="$rate" 'BEGIN { exit !(r <= 2) }'; then
	ok "at most 2 requests a minute in steady state ($rate over $soak s)"
else
	not_ok "at most 2 requests a minute in steady state" "$rate: $per_call"
fi
# the status still written at its interval: steady is not silent
w=$(grep -c "^patch_nodemetric_status PATCH 200" "$tmp/steady.log")
if [ "$w" -ge $((soak / 60)) ] && [ "$w" -le $((soak / 60 + 1)) ]; then
	ok "the status written once a minute ($w in $soak s)"
else
	not_ok "the status written once a minute" "$w in $soak s"
fi
lists=$(grep -c "^list_" "$tmp/steady.log")
expect_eq "no list in steady state (the watches stay open)" 0 "$lists"
tap_done
