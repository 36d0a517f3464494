#!/usr/bin/env bash
# plan: 32
# make CLUSTER=0: a node-only tidemarkd. It links neither libcurl nor libyaml
# nor libcrypto, refuses what would need the cluster wing with a message
# that says so, serves its reports from the node's own samples, and its unit
# tests pass (each built against the node-only daemon library).
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
d=
trap '[ -n "$d" ] && kill $d 2>/dev/null; rm -rf "$tmp"' EXIT

units=$(for u in tests/unit/test_*.c; do [ "$u" = tests/unit/test_kubeconfig.c ] || echo "$u"; done |
	sed 's|tests/unit/|build/node-only/tests/|; s|\.c$||')
if out=$(make -s --no-print-directory CLUSTER=0 all $units 2>&1); then
	ok "make CLUSTER=0 builds the node-only tidemarkd and its unit tests"
else
	not_ok "make CLUSTER=0 builds the node-only tidemarkd and its unit tests" "$(tail -5 <<<"$out")"
	tap_done
fi
bin=build/node-only/tidemarkd

# the judge first: the whole tidemarkd does link them
full=$(ldd build/tidemarkd 2>&1 | grep -oE "lib(curl|yaml|crypto)[^ ]*" | sort -u | tr '\n' ' ')
if [ "$(wc -w <<<"$full")" -eq 3 ]; then
	ok "the whole tidemarkd links the three ($full)"
else
	not_ok "the whole tidemarkd links libcurl, libyaml and libcrypto" "found: $full"
fi
libs=$(ldd "$bin" 2>&1)
if grep -q "libc.so" <<<"$libs" && ! grep -qE "libcurl|libyaml|libcrypto|libssl" <<<"$libs"; then
	ok "node-only tidemarkd links none of libcurl, libyaml, libcrypto ($(grep -c "=>" <<<"$libs") libraries)"
else
	not_ok "node-only tidemarkd links none of libcurl, libyaml, libcrypto" "$libs"
fi
out=$("$bin" --version 2>&1)
if [[ $out =~ ^tidemarkd\ [0-9] ]]; then ok "--version: $out"; else not_ok "--version" "$out"; fi
expect_eq "the sample configuration is valid" "dist/tidemarkd.json.sample: valid" \
	"$("$bin" --config dist/tidemarkd.json.sample --check 2>&1)"
err=$("$bin" --config dist/kubernetes/tidemarkd.json --check 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "kubernetes.api: 'in-cluster' needs the cluster wing: this tidemarkd is built node-only" <<<"$err"; then
	ok "the DaemonSet's configuration (in-cluster API) is refused, saying why"
else
	not_ok "the DaemonSet's configuration (in-cluster API) is refused, saying why" "exit $rc: $err"
fi
config_refused "$bin" "a push URL is refused, saying why" \
	'{"version":1,"report":{"push_url":"http://127.0.0.1:9/x"}}' \
	"report.push_url: a push needs the HTTP client: this tidemarkd is built node-only"
config_refused "$bin" "pods from the kubelet are refused, saying why" \
	'{"version":1,"kubernetes":{"pods":"kubelet"}}' \
	"kubernetes.pods: 'kubelet' needs the cluster wing"

# it runs: every strategy off, a stand-in cgroup root with a BE cgroup
port=$(free_port)
mkdir -p "$tmp/root/be/job" "$tmp/state"
printf 'usage_usec 1000\n' >"$tmp/root/be/job/cpu.stat"
echo 4096 >"$tmp/root/be/job/memory.current"
cat >"$tmp/n.json" <<JSON
{"version":1,"memory_eviction":{"enabled":false},"cpu_eviction":{"enabled":false},
 "interference":{"enabled":false},"fallback":{"enabled":false},"cgroups":{"be":["/be/*"]},
 "report":{"listen":"127.0.0.1:$port","sample_s":1}}
JSON
"$bin" --config "$tmp/n.json" --cgroup-root "$tmp/root" --state-dir "$tmp/state" 2>"$tmp/d.log" &
d=$!
for _ in $(seq 100); do
	curl -sf "http://127.0.0.1:$port/metrics" >/dev/null && break
	sleep 0.1
done
metrics=$(curl -sf "http://127.0.0.1:$port/metrics")
if grep -q "^tidemark_" <<<"$metrics" && ! grep -q "tidemark_kube_requests_total" <<<"$metrics"; then
	ok "/metrics answers, without the API client's counters"
else
	not_ok "/metrics answers, without the API client's counters" "$(head -3 <<<"$metrics")" "$(tail -3 "$tmp/d.log")"
fi
report=$(curl -sf "http://127.0.0.1:$port/report")
if python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert "node-only" in r["nodeslo"], r["nodeslo"]' "$report" 2>"$tmp/py.err"; then
	ok "/report is JSON and says the NodeSLO is not read (node-only build)"
else
	not_ok "/report is JSON and says the NodeSLO is not read (node-only build)" "$(cat "$tmp/py.err")"
fi
nm=$(curl -sf "http://127.0.0.1:$port/nodemetric")
if python3 -c 'import json,sys; o=json.loads(sys.argv[1]); assert o["kind"] == "NodeMetric"' "$nm" 2>"$tmp/py.err"; then
	ok "/nodemetric serves a NodeMetric from the node's own samples"
else
	not_ok "/nodemetric serves a NodeMetric from the node's own samples" "$(cat "$tmp/py.err")"
fi
if grep -q "node-only build" "$tmp/d.log"; then ok "its log says it runs node-only"; else not_ok "its log says it runs node-only" "$(cat "$tmp/d.log")"; fi
kill -TERM $d
wait $d
expect_eq "it stops cleanly on SIGTERM" 0 "$?"
d=

# its unit tests, each against the node-only daemon library
for t in $units; do
	if out=$("$t" 2>&1); then
		ok "node-only $(basename "$t"): $(grep -o 'pass:[0-9]* fail:[0-9]*' <<<"$out" | tail -1)"
	else
		not_ok "node-only $(basename "$t")" "$(grep -E '^not ok|Expected' <<<"$out" | head -5)"
	fi
done
tap_done
