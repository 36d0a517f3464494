#!/usr/bin/env bash
# plan: 91
# NodeMetric and the API client on the host, against the stand-in API server
# of tests/lib/kubestand.py (HTTPS with a CA made here, a bearer token): no
# kube-apiserver can run on these machines. A stand-in cgroup tree holds pods
# of every QoS class in both kubelet drivers' layouts, their CPU counters
# growing at known rates (tests/lib/fakecpu.py). Checked: /nodemetric and
# every status written are valid for Koordinator's NodeMetric CRD
# (tests/schema/nodemetric.crd.json, its revision named there) as the API
# server checks a write (tests/lib/crdcheck.py), nothing pruned but the
# pods' priority and qos, which that revision's pod items lack;
# pods are named from the API's pod list with Koordinator's QoS and priority;
# usage, the collect policy of the NodeMetric's spec (window, durations,
# memory policy) and prod reclaimable follow the counters; a missing
# NodeMetric is created; 500 and 429 are retried, 403 is not, a time-out is
# bounded; a wrong token is said in the report; without an API, the report
# says pods are unnamed.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/standin.sh
. "$(dirname "$0")/../lib/standin.sh"
bin=${TIDEMARK_BUILD:-build}/tidemarkd
tmp=$(mktemp -d)
d='' api='' fake='' hold=''
trap 'touch "$tmp/stop"; kill $d $api $fake $hold 2>/dev/null; wait 2>/dev/null; [ -n "$KEEP" ] && cp -r "$tmp" /tmp/nmkeep; rm -rf "$tmp"' EXIT
port=$(free_port 2) aport=$((port + 1))
command -v openssl >/dev/null || { not_ok "openssl is installed (tools/deps.sh)"; tap_done; }
crd=tests/schema/nodemetric.crd.json
# written for Koordinator's later PodMetricInfo; pruned by the CRD's revision
pruned_ok="status.podsMetric[].priority status.podsMetric[].qos"

# --check: the kubernetes section refused field by field
refused() { config_refused "$bin" "$1" "{\"version\":1,\"kubernetes\":$2}" "$3"; } # desc json-of-kubernetes expected-message
refused "an unknown api refused" '{"api":"magic"}' "kubernetes.api: 'magic' must be none, in-cluster or kubeconfig"
refused "a kubeconfig that does not exist named" '{"api":"kubeconfig","kubeconfig":"/nonexistent/kc"}' \
	"kubernetes.kubeconfig: /nonexistent/kc: No such file or directory"
refused "a kubeconfig with a server of its own refused" \
	'{"api":"kubeconfig","kubeconfig":"/dev/null","server":"https://10.0.0.1:6443"}' \
	"kubernetes.server: the kubeconfig gives it"
refused "a kubeconfig path without api kubeconfig refused" '{"kubeconfig":"/etc/kc"}' \
	"kubernetes.kubeconfig: given, but kubernetes.api is none"
refused "a server over http refused" '{"api":"in-cluster","server":"http://10.0.0.1:6443"}' \
	"kubernetes.server: 'http://10.0.0.1:6443' must be https"
refused "pods from the API without one refused" '{"pods":"api"}' "kubernetes.pods: 'api' needs kubernetes.api"
refused "a node name with capitals refused" '{"node_name":"Node_A"}' "kubernetes.node_name: 'Node_A' is not a node name"
refused "an unknown field named" '{"apii":"none"}' "kubernetes.apii: unknown field"
refused "an unknown eviction fallback refused" '{"eviction_fallback":"drain"}' "kubernetes.eviction_fallback: 'drain' must be kill or none"
refused "a taint key with a space refused" '{"taint_key":"tidemark.io/be forbidden"}' "kubernetes.taint_key: 'tidemark.io/be forbidden' is not a taint key"

# a CA, a server certificate for 127.0.0.1, two client certificates
standin_certs "$tmp" tidemark intruder || { not_ok "test certificates made"; tap_done; }
token=tok-$RANDOM$RANDOM
echo "$token" >"$tmp/token"

# pods: uid, cgroup (both drivers), rate mCPU, memory.current
cg=$tmp/cg
u1=0a000000-0000-4000-8000-000000000001 u2=0a000000-0000-4000-8000-000000000002
u3=0a000000-0000-4000-8000-000000000003 u4=0a000000-0000-4000-8000-000000000004
u5=0a000000-0000-4000-8000-000000000005 u6=0a000000-0000-4000-8000-000000000006
p1=kubepods.slice/kubepods-pod${u1//-/_}.slice
p2=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${u2//-/_}.slice
p3=kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${u3//-/_}.slice
p4=kubepods/burstable/pod$u4
p5=kubepods.slice/kubepods-pod${u5//-/_}.slice
p6=kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${u6//-/_}.slice
mkcg() { # rel memory.current
	mkdir -p "$cg/$1"
	echo "$2" >"$cg/$1/memory.current"
	printf 'anon 1\nfile 1048576\ninactive_file 524288\n' >"$cg/$1/memory.stat"
	echo "usage_usec 0" >"$cg/$1/cpu.stat"
}
mkcg "$p1" 268435456
mkcg "$p2" 134217728
mkcg "$p3" 67108864
mkcg "$p4" 33554432
mkcg "$p5" 16777216
mkcg "$p6" 8388608
mkcg online/web 4194304
tests/lib/fakecpu.py "$tmp/stop" "$cg/$p1=250" "$cg/$p2=400" "$cg/$p3=800" "$cg/$p4=100" \
	"$cg/$p5=50" "$cg/$p6=300" "$cg/online/web=150" &
fake=$!

pod() { # uid ns name kubeQOS labels-json priority-or-null containers-json [init-json]
	printf '{"metadata":{"uid":"%s","namespace":"%s","name":"%s","labels":%s},' "$1" "$2" "$3" "$5"
	printf '"spec":{"nodeName":"node-a","priority":%s,"containers":%s,"initContainers":%s},' "$6" "$7" "${8:-[]}"
	printf '"status":{"qosClass":"%s"}}' "$4"
}
req() { printf '[{"name":"c","resources":{"requests":{"cpu":"%s","memory":"%s"}}}]' "$1" "$2"; }
{
	printf '{"kind":"PodList","apiVersion":"v1","items":['
	pod $u1 shop web-0 Guaranteed '{}' 0 "$(req 1 512Mi)"
	printf ,
	pod $u2 shop cache-0 Burstable '{"koordinator.sh/qosClass":"LSR"}' 9100 "$(req 500m 256Mi)" "$(req 2 64Mi)"
	printf ,
	pod $u3 batch job-0 BestEffort '{"koordinator.sh/qosClass":"BE"}' 5500 '[{"name":"c"}]'
	printf ,
	pod $u4 shop api-0 Burstable '{}' 7100 "$(req 0.2 100M)"
	printf ,
	pod $u5 kube-system agent-0 Guaranteed '{"koordinator.sh/qosClass":"SYSTEM"}' null "$(req 100m 16Mi)"
	printf ,
	# listed but not started here: no cgroup, not reported
	pod 0a000000-0000-4000-8000-000000000009 shop pending-0 Burstable '{}' 0 "$(req 1 1Gi)"
	printf ']}'
} >"$tmp/pods.json"
cat >"$tmp/nm.json" <<'JSON'
{"apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeMetric","metadata":{"name":"node-a"},
 "spec":{"metricCollectPolicy":{"aggregateDurationSeconds":3,"reportIntervalSeconds":1,
   "nodeAggregatePolicy":{"durations":["2s","4s"]},"nodeMemoryCollectPolicy":"usageWithPageCache"}}}
JSON
mkdir -p "$tmp/api"
standin() { # extra args...: on $aport
	# the old output goes first: the redirection below truncates it only
	# once the child runs, so the loop could read an old "ready" line and
	# then an empty file (CI: a kubeconfig with "server: https://127.0.0.1:")
	rm -f "$tmp/api.out"
	python3 tests/lib/kubestand.py --port $aport --cert "$tmp/srv.crt" --key "$tmp/srv.key" \
		--token "$(cat "$tmp/token")" --node node-a --pods "$tmp/pods.json" \
		--schema "$crd" --dir "$tmp/api" --plan "$tmp/plan.json" \
		--nodeslo "$tmp/nodeslo.json" --watch-s 2 --require-rv0 \
		"$@" >"$tmp/api.out" 2>&1 &
	api=$!
	local p
	for _ in $(seq 100); do
		p=$(sed -n 's/^ready \([0-9][0-9]*\)$/\1/p' "$tmp/api.out" 2>/dev/null)
		[ -n "$p" ] && { aport=$p; return 0; }
		kill -0 $api 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
standin || { not_ok "the stand-in API server starts" "$(cat "$tmp/api.out")"; tap_done; }

cat >"$tmp/d.json" <<JSON
{"version":1,"memory_eviction":{"enabled":false},"cpu_eviction":{"enabled":false},
 "interference":{"enabled":false},"fallback":{"enabled":false},
 "cgroups":{"be":["/kubepods.slice/kubepods-besteffort.slice/*"],"online":["/online/*"]},
 "report":{"listen":"127.0.0.1:$port","sample_s":1},
 "kubernetes":{"api":"in-cluster","node_name":"node-a","server":"https://127.0.0.1:$aport",
  "token_file":"$tmp/token","ca_file":"$tmp/ca.crt","pods_refresh_s":1,"start_jitter_s":0,"timeout_ms":1000,
  "retries":2}}
JSON
"$bin" --config "$tmp/d.json" --cgroup-root "$cg" --state-dir "$tmp/state" >/dev/null 2>"$tmp/d.log" &
d=$!
wait_for() { # seconds cmd...: poll until cmd succeeds
	local n=$(($1 * 10))
	shift
	for _ in $(seq $n); do "$@" && return 0; sleep 0.1; done
	return 1
}
statuses() { ls "$tmp/api"/status-*.json 2>/dev/null | wc -l; }
statuses_ge() { [ "$(statuses)" -ge "$1" ]; }
if wait_for 15 grep -qs "create_nodemetric POST 201" "$tmp/api/requests.log"; then
	ok "a missing NodeMetric is created (POST 201)"
else
	not_ok "a missing NodeMetric is created" "$(cat "$tmp/api/requests.log" 2>&1)" "$(cat "$tmp/d.log")"
fi
if wait_for 10 statuses_ge 1; then ok "its status is written (merge patch, schema-valid)"; else
	not_ok "its status is written" "$(cat "$tmp/api/requests.log")" "$(cat "$tmp/api/invalid.log" 2>&1)"; fi

# the NodeMetric's spec from now on: 3 s window, 2 s and 4 s durations, page cache counted
kill $api
wait $api 2>/dev/null
standin --nodemetric "$tmp/nm.json" || { not_ok "the stand-in restarts" "$(cat "$tmp/api.out")"; tap_done; }
n0=$(statuses)
if wait_for 20 statuses_ge $((n0 + 6)); then ok "statuses keep coming at the spec's 1 s interval"; else
	not_ok "statuses keep coming at the spec's 1 s interval" "$(tail -5 "$tmp/api/requests.log")"; fi
curl -s "http://127.0.0.1:$port/nodemetric" >"$tmp/nm-now.json"
last=$(ls -t "$tmp/api"/status-*.json | head -1)
python3 - "$tmp/nm-now.json" "$last" "$crd" "$pruned_ok" <<'PY' >"$tmp/judge.txt" 2>&1
import json, sys
sys.path.insert(0, "tests/lib")
import crdcheck
doc, sent, crd = (json.load(open(p)) for p in sys.argv[1:4])
def out(ok, desc, detail=""):
    print(("ok" if ok else "not_ok") + "\t" + desc + "\t" + str(detail))
errs, pruned, _ = crdcheck.check(doc, crd)
out(not errs, "GET /nodemetric is valid for the NodeMetric CRD", errs[:1])
shapes = sorted({crdcheck.shape(p) for p in pruned})
out(shapes == sys.argv[4].split(), "nothing in it the CRD would prune but the pods' priority and qos", shapes)
errs = crdcheck.check(sent, crd)[0]
out(not errs, "the status the stand-in accepted is valid too", errs[:1])
pol = doc.get("spec", {}).get("metricCollectPolicy", {})
out(pol.get("aggregateDurationSeconds") == 3 and pol.get("nodeAggregatePolicy", {}).get("durations") == ["2s", "4s"]
    and pol.get("nodeMemoryCollectPolicy") == "usageWithPageCache", "the NodeMetric's collect policy is the one honoured", pol)
st = doc["status"]
def cpu(q):
    return float(q[:-1]) if q.endswith("m") else float(q) * 1000
def mem(q):
    m = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}
    return int(q[:-2]) * m[q[-2:]] if q[-2:] in m else int(q)
pods = {(p["namespace"], p["name"]): p for p in st.get("podsMetric", [])}
want = {("shop", "web-0"): ("LS", "koord-prod", 250, 268435456),
        ("shop", "cache-0"): ("LSR", "koord-prod", 400, 134217728),
        ("batch", "job-0"): ("BE", "koord-batch", 800, 67108864),
        ("shop", "api-0"): ("LS", "koord-mid", 100, 33554432),
        ("kube-system", "agent-0"): ("SYSTEM", "koord-prod", 50, 16777216)}
out(set(pods) == set(want), "every listed pod with a cgroup, no other (pending pod and unlisted cgroup left out)", sorted(pods))
for k, (q, pr, rate, m) in want.items():
    p = pods.get(k)
    if not p:
        continue
    r = p["podUsage"]["resources"]
    out(p["qos"] == q and p["priority"] == pr, "%s/%s: qos %s, priority %s" % (k + (q, pr)), (p["qos"], p["priority"]))
    out(abs(cpu(r["cpu"]) - rate) <= rate * 0.1 + 5, "%s/%s: CPU %s is its counter's %d mCPU (10%%)" % (k + (r["cpu"], rate)))
    out(mem(r["memory"]) == m, "%s/%s: memory %s is memory.current with the page cache policy" % (k + (r["memory"],)), m)
hosts = {h["name"]: h for h in st.get("hostApplicationMetric", [])}
h = hosts.get("/online/web")
out(h is not None and abs(cpu(h["usage"]["resources"]["cpu"]) - 150) <= 20 and h["qos"] == "LS",
    "the ONLINE host cgroup is a host application at its rate", h)
agg = st["nodeMetric"].get("aggregatedNodeUsages", [])
out([a["duration"] for a in agg] == ["2s", "4s"] and all(set(a["usage"]) == {"avg", "p50", "p90", "p95", "p99"} for a in agg),
    "aggregated node usage for each duration, avg/p50/p90/p95/p99", [a.get("duration") for a in agg])
nu, su = st["nodeMetric"]["nodeUsage"]["resources"], st["nodeMetric"]["systemUsage"]["resources"]
out(cpu(su["cpu"]) <= cpu(nu["cpu"]) and mem(su["memory"]) <= mem(nu["memory"]), "system usage is within node usage", (nu, su))
# prod pods: web-0 asks 1000 (runs 250), cache-0 2000 by its init container (400), agent-0 100 (50)
rec = cpu(st["prodReclaimableMetric"]["resource"]["resources"]["cpu"])
exp = (1000 - 250) + (2000 - 400) + (100 - 50)
out(abs(rec - exp) <= 60, "prod reclaimable CPU is prod requests less their peak (%d vs %d mCPU)" % (rec, exp))
ann = doc["metadata"].get("annotations", {}).get("tidemark.io/pod-identity", "")
out("5 pods named from the API server" in ann, "the report says where pod names come from", ann)
PY
while IFS=$'\t' read -r res desc detail; do
	if [ "$res" = ok ]; then ok "$desc"; else not_ok "$desc" "$detail"; fi
done <"$tmp/judge.txt"
if grep -q Traceback "$tmp/judge.txt"; then not_ok "the judge ran" "$(cat "$tmp/judge.txt")"; else ok "the judge ran"; fi
if [ -e "$tmp/api/invalid.log" ]; then not_ok "no status refused by the stand-in's schema check" "$(cat "$tmp/api/invalid.log")"; else ok "no status refused by the stand-in's schema check"; fi
expect_eq "the stand-in pruned only the pods' priority and qos from the statuses written" "$pruned_ok" \
	"$(sort "$tmp/api/pruned.log" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"

metric() { # name{labels} -> value
	curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'
}
metric_ge() { # name{labels} n
	[ "$(metric "$1")" -ge "$2" ] 2>/dev/null
}
# tidemark_pod_info joins per-cgroup series to pods: every pod cgroup once,
# named from the list, an unlisted one by UID only
curl -s "http://127.0.0.1:$port/metrics" | grep '^tidemark_pod_info{' | sort >"$tmp/podinfo"
want=$(for r in "$p1 shop web-0 $u1" "$p2 shop cache-0 $u2" "$p3 batch job-0 $u3" "$p4 shop api-0 $u4" \
	"$p5 kube-system agent-0 $u5" "$p6 - - $u6"; do
	set -- $r
	[ "$2" = - ] && set -- "$1" "" "" "$4"
	printf 'tidemark_pod_info{cgroup="/%s",namespace="%s",pod="%s",uid="%s"} 1\n' "$1" "$2" "$3" "$4"
done | sort)
expect_eq "tidemark_pod_info: each pod cgroup with its namespace, name and UID (an unlisted one by UID)" "$want" "$(cat "$tmp/podinfo")"

# pods come by watch: a pod added to the list (and its cgroup) is named
# within a second or two, one removed goes, with no list in between; lists
# ask the API server's cache (resourceVersion=0: the stand-in refuses others)
u7=0a000000-0000-4000-8000-000000000007
p7=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${u7//-/_}.slice
mkcg "$p7" 1048576
lists() { grep -c "^list_pods GET 200" "$tmp/api/requests.log"; }
l0=$(lists)
cp "$tmp/pods.json" "$tmp/pods.orig"
python3 - "$tmp/pods.json" "$u7" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["items"].append({"metadata": {"uid": sys.argv[2], "namespace": "shop", "name": "new-0", "labels": {}},
                   "spec": {"nodeName": "node-a", "priority": 0, "containers": [{"name": "c"}]},
                   "status": {"qosClass": "Burstable"}})
open(sys.argv[1] + ".tmp", "w").write(json.dumps(d))
PY
mv "$tmp/pods.json.tmp" "$tmp/pods.json"
has_new() { curl -s "http://127.0.0.1:$port/metrics" | grep -q "^tidemark_pod_info{cgroup=\"/$p7\",namespace=\"shop\",pod=\"new-0\""; }
if wait_for 5 has_new; then ok "a pod added is named by the watch (ADDED)"; else
	not_ok "a pod added is named by the watch" "$(curl -s "http://127.0.0.1:$port/metrics" | grep "$u7")"; fi
cp "$tmp/pods.orig" "$tmp/pods.json"
gone() { curl -s "http://127.0.0.1:$port/metrics" | grep "^tidemark_pod_info{cgroup=\"/$p7\"" | grep -q 'pod=""'; }
if wait_for 5 gone; then ok "a pod removed is unnamed by the watch (DELETED)"; else
	not_ok "a pod removed is unnamed by the watch" "$(curl -s "http://127.0.0.1:$port/metrics" | grep "$u7")"; fi
# the stand-in ends each watch after 2 s: over 6 s the pod watch is renewed
# from its last version, not listed again
w0=$(grep -c "^watch_pods GET 200" "$tmp/api/requests.log")
sleep 6
w1=$(grep -c "^watch_pods GET 200" "$tmp/api/requests.log")
if [ "$(lists)" = "$l0" ] && [ $((w1 - w0)) -ge 2 ]; then
	ok "no list of the pods meanwhile; their watch renewed $((w1 - w0)) times in 6 s from its last version"
else
	not_ok "watches renewed, not listed again" "lists $l0 -> $(lists), watches $w0 -> $w1"
fi
rm -rf "${cg:?}/$p7"
echo '{"watch_pods":["410"]}' >"$tmp/plan.json"
relisted() { [ "$(lists)" -gt "$l0" ]; }
if wait_for 8 relisted; then ok "a watch told 410 (Expired): the pods listed again"; else
	not_ok "a watch told 410: the pods listed again" "$(grep _pods "$tmp/api/requests.log" | tail -4)"; fi
expect_eq "no NodeSLO or NodeMetric read but by list and watch" "" \
	"$(grep -E '^get_(nodeslo|nodemetric)' "$tmp/api/requests.log" | head -2)"

# koordlet writes the status too (merge patches as field manager koordlet,
# every 0.5 s): tidemarkd stops writing it and says so in its log, on
# /metrics, in /report and in tidemarkctl status; two report intervals (2 s
# at the spec's 1 s) after koordlet's last write it writes again
ctl=${TIDEMARK_BUILD:-build}/tidemarkctl
mine() { grep -c "^patch_nodemetric_status PATCH 200 token tidemarkd$" "$tmp/api/requests.log"; }
python3 -c 'import json,sys; print(json.dumps({"status": json.load(open(sys.argv[1]))["status"]}))' \
	"$(ls -t "$tmp/api"/status-*.json | head -1)" >"$tmp/kstatus.json"
koordlet() {
	while [ -d "$tmp" ] && [ ! -e "$tmp/koordlet-stop" ] && [ ! -e "$tmp/stop" ]; do
		curl -s -o /dev/null --cacert "$tmp/ca.crt" -H "Authorization: Bearer $token" \
			-H "Accept: application/json" -H "Content-Type: application/merge-patch+json" \
			-X PATCH --data-binary @"$tmp/kstatus.json" \
			"https://127.0.0.1:$aport/apis/slo.koordinator.sh/v1alpha1/nodemetrics/node-a/status?fieldManager=koordlet"
		sleep 0.5
	done
}
koordlet &
kl=$!
left() { [ "$(metric tidemark_nodemetric_writing)" = 0 ] &&
	[ "$(metric 'tidemark_nodemetric_other_writer_info{manager="koordlet"}')" = 1 ]; }
if wait_for 10 left; then
	m0=$(mine)
	sleep 3.5 # three report intervals and more
	m1=$(mine)
	k=$(grep -c "^patch_nodemetric_status PATCH 200 token koordlet$" "$tmp/api/requests.log")
	if [ "$m1" = "$m0" ] && [ "$k" -ge 6 ]; then
		ok "koordlet writing the status: tidemarkd stops (no write of its own over 3.5 s, $k of koordlet's)"
	else
		not_ok "koordlet writing the status: tidemarkd stops" "tidemarkd wrote $((m1 - m0)) times; koordlet $k"
	fi
else
	not_ok "koordlet writing the status: tidemarkd stops" "$(curl -s "http://127.0.0.1:$port/metrics" | grep nodemetric_)"
fi
check "said in the log" grep -q "NodeMetric node-a status: koordlet wrote it at .*: tidemarkd stops writing it" "$tmp/d.log"
w=$(curl -s "http://127.0.0.1:$port/report" | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodeMetricStatus"]["writer"])')
expect_eq "said in /report (nodeMetricStatus.writer)" koordlet "$w"
st=$("$ctl" status --addr "127.0.0.1:$port" | grep '^nodemetric')
check "said by tidemarkctl status ($st)" grep -q "left to koordlet, which wrote it at 20" <<<"$st"
touch "$tmp/koordlet-stop"
wait $kl
m0=$(mine)
back() { [ "$(mine)" -gt "$m0" ] && [ "$(metric tidemark_nodemetric_writing)" = 1 ]; }
if wait_for 8 back; then
	ok "koordlet gone for two report intervals: tidemarkd writes again"
else
	not_ok "koordlet gone: tidemarkd writes again" "$(tail -3 "$tmp/api/requests.log")"
fi
check "that said too" grep -q "NodeMetric node-a status: koordlet has not written it for two report intervals (2 s): tidemarkd writes it again" "$tmp/d.log"
st=$("$ctl" status --addr "127.0.0.1:$port" | grep '^nodemetric')
check "tidemarkctl status: written by tidemarkd ($st)" grep -q "written by tidemarkd every 1 s" <<<"$st"

# 500 then 429: retried (0.25 s, then the 429's retryAfterSeconds), then written
r0=$(metric 'tidemark_kube_retries_total{call="patch_nodemetric_status"}')
echo '{"patch_nodemetric_status":["500","429"]}' >"$tmp/plan.json"
pseq() { grep "^patch_nodemetric_status" "$tmp/api/requests.log" | awk '{print $3}' | tr '\n' ' '; }
has_seq() { grep -q "$1" <<<"$(pseq)"; }
if wait_for 10 metric_ge 'tidemark_kube_retries_total{call="patch_nodemetric_status"}' $((r0 + 2)) &&
	wait_for 5 has_seq "500 429 200"; then
	ok "500 and 429 retried, then the status written"
else
	not_ok "500 and 429 retried, then the status written" "$(pseq)" "$(cat "$tmp/plan.json")"
fi
# 403: final, counted as failed, not retried; the next interval writes again
f0=$(metric 'tidemark_kube_requests_total{call="patch_nodemetric_status",result="failed"}')
n403=$(grep -c "^patch_nodemetric_status PATCH 403" "$tmp/api/requests.log")
echo '{"patch_nodemetric_status":["403"]}' >"$tmp/plan.json"
if wait_for 10 metric_ge 'tidemark_kube_requests_total{call="patch_nodemetric_status",result="failed"}' $((f0 + 1)) &&
	wait_for 5 has_seq "403 200"; then
	if [ "$(grep -c "^patch_nodemetric_status PATCH 403" "$tmp/api/requests.log")" = $((n403 + 1)) ]; then
		ok "403 counted as failed, not retried, the next interval writes"
	else
		not_ok "403 not retried" "$(pseq)"
	fi
else
	not_ok "403 counted as failed, then the next interval writes" "$(pseq)"
fi
# time-outs: each bounded by timeout_ms (1 s), given up after 2 retries;
# /metrics answers meanwhile. The pods are listed again when their watch
# is told 410 (its next renewal, within the stand-in's 2 s)
f0=$(metric 'tidemark_kube_requests_total{call="list_pods",result="failed"}')
echo '{"watch_pods":["410"],"list_pods":["timeout","timeout","timeout"]}' >"$tmp/plan.json"
t0=$(date +%s%N)
slow=0
while [ "$(metric 'tidemark_kube_requests_total{call="list_pods",result="failed"}')" = "$f0" ]; do
	s=$(date +%s%N)
	curl -s -m 5 -o /dev/null "http://127.0.0.1:$port/metrics"
	[ $(($(date +%s%N) - s)) -gt 500000000 ] && slow=$((slow + 1))
	[ $(($(date +%s%N) - t0)) -gt 20000000000 ] && break
	sleep 0.2
done
el=$((($(date +%s%N) - t0) / 1000000))
if [ "$(metric 'tidemark_kube_requests_total{call="list_pods",result="failed"}')" -gt "$f0" ] && [ $el -lt 10000 ]; then
	ok "a watch told 410, then a list: three time-outs of 1 s with back-off, given up ${el} ms from the plan, failure counted"
else
	not_ok "time-outs bounded" "after ${el} ms: $(tail -3 "$tmp/d.log")"
fi
expect_eq "/metrics answered within 0.5 s throughout" 0 "$slow"
grep -q "pods from the api: .*Timeout\|pods from the api: .*timed out" "$tmp/d.log" && ok "the time-out is logged" ||
	not_ok "the time-out is logged" "$(tail -3 "$tmp/d.log")"
# the NodeSLO drives the lines: over the file's values, validated with them
wm() { # the watermarks in effect and what /report says of the NodeSLO
	curl -s "http://127.0.0.1:$port/report" | python3 -c '
import json, sys
d = json.load(sys.stdin)
w = d["watermarks"]
print(w["cpu"]["suppress_pct"], w["memory"]["evict_pct"], w["memory"]["evict_lower_pct"], "|", d["nodeslo"])'
}
wm_is() { [[ "$(wm)" == $1* ]]; }
slo() { # resourceUsedThresholdWithBE as JSON
	printf '{"apiVersion":"slo.koordinator.sh/v1alpha1","kind":"NodeSLO","metadata":{"name":"node-a"},"spec":{"resourceUsedThresholdWithBE":%s}}\n' "$1" >"$tmp/nodeslo.tmp"
	mv "$tmp/nodeslo.tmp" "$tmp/nodeslo.json"
}
if wait_for 5 wm_is "65 70 68 | none for this node"; then ok "no NodeSLO (404): the file's lines"; else
	not_ok "no NodeSLO: the file's lines" "$(wm)"; fi
slo '{"enable":true,"cpuSuppressPolicy":"cpuset","cpuSuppressThresholdPercent":62,"memoryEvictThresholdPercent":80,"cpuEvictBESatisfactionLowerPercent":50,"cpuEvictBESatisfactionUpperPercent":70,"cpuEvictTimeWindowSeconds":120}'
if wait_for 8 wm_is "62 80 78 | applied: watermarks.cpu.suppress_pct=62, watermarks.memory.evict_pct=80, watermarks.memory.evict_lower_pct=78, cpu_eviction.upper_pct=70, cpu_eviction.lower_pct=50, cpu_eviction.window_s=120"; then
	ok "the NodeSLO's lines applied (memory's lower line its threshold less 2, as Koordinator's default)"
else
	not_ok "the NodeSLO's lines applied" "$(wm)" "$(grep NodeSLO "$tmp/d.log" | tail -3)"
fi
rj=$(metric tidemark_config_rejects_total)
slo '{"cpuSuppressThresholdPercent":62,"memoryEvictThresholdPercent":80,"memoryEvictLowerPercent":85}'
want="NodeSLO resourceUsedThresholdWithBE.memoryEvictLowerPercent (watermarks.memory.evict_lower_pct): 85 must be below evict_pct (80)"
if wait_for 8 grep -qF "$want" "$tmp/d.log" && wm_is "62 80 78 | refused: $want"; then
	ok "a NodeSLO the file's checks refuse: its field named, nothing applied"
else
	not_ok "a refused NodeSLO named and not applied" "$(wm)" "$(grep NodeSLO "$tmp/d.log" | tail -3)"
fi
expect_eq "the refusal counted in tidemark_config_rejects_total" $((rj + 1)) "$(metric tidemark_config_rejects_total)"
slo '{"cpuSuppressThresholdPercent":"70"}'
if wait_for 8 wm_is "62 80 78 | refused: NodeSLO resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: must be an integer"; then
	ok "a NodeSLO value of the wrong type refused, named"
else
	not_ok "a NodeSLO value of the wrong type refused" "$(wm)"
fi
slo '{"enable":false,"cpuSuppressThresholdPercent":50}'
if wait_for 8 wm_is "65 70 68 | none for this node"; then ok "enable false: the file's lines again"; else
	not_ok "enable false: the file's lines again" "$(wm)"; fi

# a wrong token: 401, said in the report; the last list still names the pods
echo wrong >"$tmp/token.new" && mv "$tmp/token.new" "$tmp/token"
wait_for 10 grep -qs "_pods GET 401" "$tmp/api/requests.log"
sleep 0.5
ann=$(curl -s "http://127.0.0.1:$port/nodemetric" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["metadata"]["annotations"]["tidemark.io/pod-identity"], len(d["status"]["podsMetric"]))')
if grep -q "last refresh failed: pods from the api: HTTP 401" <<<"$ann" && grep -q " 5$" <<<"$ann"; then
	ok "a refused token is said in the report; the last list still names 5 pods"
else
	not_ok "a refused token is said in the report" "$ann"
fi
kill $d
wait $d 2>/dev/null

# no API: served, valid, pods unnamed and said so
sed 's/"api":"in-cluster"/"api":"none"/' "$tmp/d.json" >"$tmp/d2.json"
"$bin" --config "$tmp/d2.json" --cgroup-root "$cg" --state-dir "$tmp/state" >/dev/null 2>"$tmp/d2.log" &
d=$!
wait_for 10 curl -sf -o "$tmp/nm2.json" "http://127.0.0.1:$port/nodemetric"
sleep 2.5
curl -s -o "$tmp/nm2.json" "http://127.0.0.1:$port/nodemetric"
if python3 - "$tmp/nm2.json" "$crd" <<'PY'; then ok "without an API: valid, no pod named, the report says why"; else not_ok "without an API" "$(head -c 800 "$tmp/nm2.json")" "$(cat "$tmp/d2.log")"; fi
import json, sys
sys.path.insert(0, "tests/lib")
import crdcheck
doc, crd = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
errs, pruned, _ = crdcheck.check(doc, crd)
assert not errs and not pruned, (errs, pruned)
assert doc["status"]["podsMetric"] == []
assert "kubernetes.pods is none" in doc["metadata"]["annotations"]["tidemark.io/pod-identity"]
assert "prodReclaimableMetric" not in doc["status"]
PY
grep -q "no Kubernetes API configured" "$tmp/d2.log" && ok "said once at start" || not_ok "said at start" "$(cat "$tmp/d2.log")"
kill $d
wait $d 2>/dev/null

# no API, pods from the kubelet's /pods (same token and CA)
echo "$token" >"$tmp/token"
python3 - "$tmp/d2.json" "https://127.0.0.1:$aport/pods" >"$tmp/d5.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["kubernetes"].update({"pods": "kubelet", "kubelet_url": sys.argv[2]})
print(json.dumps(c))
PY
# this daemon's requests only: the log's lines from here on (its last three
# once held an earlier daemon's status writes when this one was slow, under ASan)
seen=$(wc -l <"$tmp/api/requests.log" 2>/dev/null || echo 0)
"$bin" --config "$tmp/d5.json" --cgroup-root "$cg" --state-dir "$tmp/state5" >/dev/null 2>"$tmp/d5.log" &
d=$!
named() {
	curl -s "http://127.0.0.1:$port/nodemetric" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["status"]["podsMetric"]), d["metadata"]["annotations"]["tidemark.io/pod-identity"])' 2>/dev/null
}
named_five() { [[ "$(named)" == "5 5 pods named from the kubelet's list"* ]]; }
if wait_for 15 named_five && tail -n +$((seen + 1)) "$tmp/api/requests.log" | grep -qs "^kubelet_pods GET 200" &&
	! tail -n +$((seen + 1)) "$tmp/api/requests.log" | grep -qs "^patch_nodemetric_status"; then
	ok "without an API, the kubelet's pod list names the pods (nothing written to the API)"
else
	not_ok "the kubelet's pod list names the pods" "$(named)" "$(tail -3 "$tmp/d5.log")"
fi
kill $d
wait $d 2>/dev/null

# evictions through the API: memory eviction with lines the host is always
# above, so it evicts the biggest BE cgroup (batch/job-0, listed) through the
# Eviction API and the unlisted one by cgroup.kill
echo "$token" >"$tmp/token"
rm -f "$tmp/nodeslo.json"
# the host at rest uses 2-4% of its memory here: 6% more held meanwhile, so
# it is above 3% whatever else runs
python3 -c '
import sys, time
n = int(sys.argv[1])
b = bytearray(n)
for i in range(0, n, 4096):
    b[i] = 1
open(sys.argv[2], "w").close()
time.sleep(900)' "$(awk '/^MemTotal/{print int($2 * 1024 * 6 / 100)}' /proc/meminfo)" "$tmp/held" &
hold=$!
wait_for 30 test -e "$tmp/held" || not_ok "memory held for the eviction phase"
evcfg() { # eviction_timeout_s
	python3 - "$tmp/d.json" "$1" >"$tmp/d3.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["memory_eviction"] = {"enabled": True, "throttle_first": False, "poll_ms": 100, "cooldown_ms": 300}
c["watermarks"] = {"memory": {"forbid_pct": 1, "evict_lower_pct": 2, "evict_pct": 3}}
c["eviction"] = {"backoff_initial_s": 1, "backoff_max_s": 2}
c["kubernetes"]["eviction_timeout_s"] = int(sys.argv[2])
c["kubernetes"]["taint_key"] = "tidemark.io/be-forbidden"
c["kubernetes"]["taint_after_s"] = 1
c["kubernetes"]["untaint_after_s"] = 1
print(json.dumps(c))
PY
}
# The defaults above a forbid line (memory at 1%): forbidding is said in
# /report and no taint is put (it would keep ONLINE pods off the node too)
python3 - "$tmp/d.json" >"$tmp/d0.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["watermarks"] = {"memory": {"forbid_pct": 1, "evict_lower_pct": 2, "evict_pct": 3}}
c["kubernetes"]["taint_after_s"] = 1
print(json.dumps(c))
PY
"$bin" --config "$tmp/d0.json" --cgroup-root "$cg" --state-dir "$tmp/state0" >/dev/null 2>"$tmp/d0.log" &
d=$!
forbidding() { # false until the daemon answers
	local r
	r=$(curl -sf "http://127.0.0.1:$port/report") &&
		python3 -c 'import json,sys; sys.exit(0 if json.loads(sys.argv[1])["forbidScheduling"] else 1)' "$r"
}
if wait_for 10 forbidding; then
	sleep 2.5 # past its taint_after_s twice over
	if [ ! -e "$tmp/api/taints.log" ] && ! grep -q "action=taint" "$tmp/d0.log"; then
		ok "above a forbid line with the defaults: forbidScheduling said, no taint put"
	else
		not_ok "above a forbid line with the defaults: no taint" "$(cat "$tmp/api/taints.log" 2>&1)" "$(grep -i taint "$tmp/d0.log")"
	fi
else
	not_ok "above a forbid line with the defaults: forbidScheduling said" "$(tail -3 "$tmp/d0.log")"
fi
kill $d
wait $d 2>/dev/null
evcfg 30
echo '{"evict_pod":["429","429","429"]}' >"$tmp/plan.json" # one call: a try and its two retries
# This daemon reads the node's CPU from a /proc/stat that never moves (the
# host's, copied, bound over it in the daemon's own mount namespace): its
# taint phase judges the lines, not the host. Beside a kernel build (a
# fresh machine's make test) the host's CPUs were all busy, above the 99%
# CPU forbid line below, and the taint stayed.
head -n "$(($(nproc) + 1))" /proc/stat >"$tmp/stat.still"
unshare -m sh -c 'mount --bind "$0" /proc/stat && exec "$@"' "$tmp/stat.still" \
	"$bin" --config "$tmp/d3.json" --cgroup-root "$cg" --state-dir "$tmp/state3" >/dev/null 2>"$tmp/d3.log" &
d=$!
if wait_for 20 grep -qs "^batch/job-0$" "$tmp/api/evicted.log"; then
	ok "the BE pod evicted through the Eviction API"
else
	not_ok "the BE pod evicted through the Eviction API" "$(grep -E "audit|evict" "$tmp/d3.log" | tail -5)"
fi
a1=$(grep "strategy=memory_eviction action=kill" "$tmp/d3.log" | grep -m1 "cgroup=/$p3 ")
grep -q "via=eviction-api" <<<"$a1" && ok "its kill audited via=eviction-api" || not_ok "audited via=eviction-api" "$a1"
grep -q "action=eviction_refused .*pod=batch/job-0 .*status=429" "$tmp/d3.log" &&
	wait_for 5 grep -q "action=evicted_api .*pod=batch/job-0 .*refusals=1" "$tmp/d3.log" &&
	ok "a disruption budget's 429 asked again, then evicted" ||
	not_ok "429 asked again, then evicted" "$(grep -E "evict" "$tmp/d3.log" | tail -4)"
wait_for 5 grep -qs "^TidemarkEvicted batch/job-0 " "$tmp/api/events.log" &&
	ok "an Event on the pod says it" || not_ok "an Event on the pod" "$(cat "$tmp/api/events.log" 2>&1)"
# a kill is audited before cgroup.kill is written, and each kill after a
# back-off truncates the file again: both polled together, not read once
killed() { # log pattern cgroup
	grep -qs "$2" "$1" && [ "$(cat "$cg/$3/cgroup.kill" 2>/dev/null)" = 1 ]
}
if wait_for 10 killed "$tmp/d3.log" "strategy=memory_eviction action=kill .*cgroup=/$p6 via=cgroup.kill" "$p6"; then
	ok "a pod not in the list killed by cgroup.kill"
else
	not_ok "a pod not in the list killed by cgroup.kill" "$(grep "$u6\|${u6//-/_}" "$tmp/d3.log" | tail -3)"
fi
[ ! -e "$cg/$p3/cgroup.kill" ] && ok "the API-evicted pod's cgroup not killed" ||
	not_ok "the API-evicted pod's cgroup not killed"
# above the memory forbid line (1%): the node tainted, another's taint kept;
# below every line after a reload: untainted
if wait_for 10 grep -qsx "other.example/keep:NoExecute tidemark.io/be-forbidden:NoSchedule" "$tmp/api/taints.log" &&
	grep -q "strategy=cluster action=taint .*taint=tidemark.io/be-forbidden:NoSchedule" "$tmp/d3.log"; then
	ok "above a forbid line: NoSchedule taint added, the node's other taint kept"
else
	not_ok "above a forbid line: tainted" "$(cat "$tmp/api/taints.log" 2>&1)" "$(grep -i taint "$tmp/d3.log")"
fi
# killed while the node carries its taint: --cleanup (the 0.6.0 default
# key, which this configuration does not name) removes it, others' kept
kill -KILL $d
wait $d 2>/dev/null
out=$("$bin" --cleanup --config "$tmp/d.json" --cgroup-root "$cg" --state-dir "$tmp/state3" 2>&1)
rc=$?
if [ $rc = 0 ] && [ "$(tail -1 "$tmp/api/taints.log")" = "other.example/keep:NoExecute" ] &&
	grep -q "cleanup: node node-a: taint tidemark.io/be-forbidden removed" <<<"$out"; then
	ok "a taint a killed tidemarkd left: removed by tidemarkd --cleanup, the other kept"
else
	not_ok "a taint left: removed by --cleanup" "exit $rc: $out" "$(cat "$tmp/api/taints.log")"
fi
out=$("$bin" --cleanup --config "$tmp/d.json" --cgroup-root "$cg" --state-dir "$tmp/state3" 2>&1)
if grep -q "taint tidemark.io/be-forbidden not there" <<<"$out" && [ "$(wc -l <"$tmp/api/taints.log")" = 2 ]; then
	ok "--cleanup again: nothing there, nothing written"
else
	not_ok "--cleanup again: nothing there, nothing written" "$out" "$(cat "$tmp/api/taints.log")"
fi
# started again, still above the line (no eviction this time), the
# effect now a preference: tainted again, with that effect
python3 - "$tmp/d3.json" <<'PY' >"$tmp/d3c.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["memory_eviction"]["enabled"] = False
c["kubernetes"]["taint_effect"] = "PreferNoSchedule"
print(json.dumps(c))
PY
cp "$tmp/d3c.json" "$tmp/d3.json"
unshare -m sh -c 'mount --bind "$0" /proc/stat && exec "$@"' "$tmp/stat.still" \
	"$bin" --config "$tmp/d3.json" --cgroup-root "$cg" --state-dir "$tmp/state3" >/dev/null 2>>"$tmp/d3.log" &
d=$!
last_taints() { [ "$(tail -1 "$tmp/api/taints.log")" = "$1" ]; }
check "started again above the line: tainted again, PreferNoSchedule as configured" \
	wait_for 10 last_taints "other.example/keep:NoExecute tidemark.io/be-forbidden:PreferNoSchedule"
# stopped for good (SIGTERM: the unit, the package's removal, the
# DaemonSet's deletion) while tainted: its taint goes with it
kill -TERM $d
wait $d 2>/dev/null
if last_taints "other.example/keep:NoExecute" &&
	grep -q 'strategy=cluster action=untaint .*why="tidemarkd stopping"' "$tmp/d3.log"; then
	ok "stopped while tainted: its taint removed, the other kept"
else
	not_ok "stopped while tainted: its taint removed" "$(cat "$tmp/api/taints.log")" "$(grep -i taint "$tmp/d3.log")"
fi
unshare -m sh -c 'mount --bind "$0" /proc/stat && exec "$@"' "$tmp/stat.still" \
	"$bin" --config "$tmp/d3.json" --cgroup-root "$cg" --state-dir "$tmp/state3" >/dev/null 2>>"$tmp/d3.log" &
d=$!
check "started again: tainted again" \
	wait_for 10 last_taints "other.example/keep:NoExecute tidemark.io/be-forbidden:PreferNoSchedule"
python3 - "$tmp/d3.json" <<'PY' >"$tmp/d3b.json"
import json, sys
c = json.load(open(sys.argv[1]))
c["memory_eviction"]["enabled"] = False
# below both lines (the CPU this daemon reads is still, above)
c["watermarks"] = {"cpu": {"forbid_pct": 99, "suppress_pct": 99, "evict_pct": 100},
                   "memory": {"forbid_pct": 95, "evict_lower_pct": 96, "evict_pct": 97}}
print(json.dumps(c))
PY
cp "$tmp/d3b.json" "$tmp/d3.json"
kill -HUP $d
untainted() { [ "$(tail -1 "$tmp/api/taints.log")" = "other.example/keep:NoExecute" ]; }
if wait_for 10 untainted && wait_for 2 grep -q "strategy=cluster action=untaint" "$tmp/d3.log"; then
	ok "below every forbid line: the taint removed, the other kept"
else
	not_ok "below every forbid line: untainted" "$(cat "$tmp/api/taints.log")" "$(grep -i taint "$tmp/d3.log")"
fi
# put, removed by --cleanup, put again, removed at the stop, put again,
# removed below the lines
expect_eq "six taint writes, no more (hysteresis)" 6 "$(wc -l <"$tmp/api/taints.log")"
kill $d
wait $d 2>/dev/null
# refused past eviction_timeout_s: the fallback kills it, an Event says so
evcfg 2
python3 -c 'import json; print(json.dumps({"evict_pod": ["429"] * 50}))' >"$tmp/plan.json"
rm -f "$cg/$p3/cgroup.kill" "$cg/$p6/cgroup.kill"
"$bin" --config "$tmp/d3.json" --cgroup-root "$cg" --state-dir "$tmp/state4" >/dev/null 2>"$tmp/d4.log" &
d=$!
if wait_for 20 killed "$tmp/d4.log" "action=kill_fallback .*cgroup=/$p3 " "$p3"; then
	ok "refused for eviction_timeout_s: killed by the fallback"
else
	not_ok "refused past the time-out: the fallback kills" "$(grep -E "evict|kill" "$tmp/d4.log" | tail -5)"
fi
grep -q "action=eviction_failed .*pod=batch/job-0 .*fallback=kill" "$tmp/d4.log" &&
	ok "the failure audited with its reason" || not_ok "the failure audited" "$(grep eviction_failed "$tmp/d4.log")"
wait_for 5 grep -qs "^TidemarkKilled batch/job-0 " "$tmp/api/events.log" &&
	ok "an Event says it was killed instead" || not_ok "an Event says it was killed" "$(cat "$tmp/api/events.log")"
kill $hold 2>/dev/null
kill $d
wait $d 2>/dev/null

# a kubeconfig instead of the service account: one file, three contexts, as
# kubectl writes them (the CA inline or by a relative path; a token; a
# client certificate by relative paths; another user's certificate inline)
rm -f "$tmp/plan.json"
kill $api
wait $api 2>/dev/null
standin --client-ca "$tmp/ca.crt" --client-cn tidemark ||
	{ not_ok "the stand-in restarts with client certificates" "$(cat "$tmp/api.out")"; tap_done; }
mkdir -p "$tmp/kube/pki"
cp "$tmp/ca.crt" "$tmp/tidemark.crt" "$tmp/tidemark.key" "$tmp/kube/pki/"
cat >"$tmp/kube/config" <<YAML
apiVersion: v1
kind: Config
preferences: {}
current-context: with-token
clusters:
- name: stand-in
  cluster:
    server: https://127.0.0.1:$aport
    certificate-authority-data: $(base64 -w0 "$tmp/ca.crt")
- name: stand-in-by-file
  cluster:
    certificate-authority: pki/ca.crt
    server: "https://127.0.0.1:$aport"
contexts:
- name: with-token
  context:
    cluster: stand-in
    user: token-user
    namespace: default
- name: with-cert
  context: {cluster: stand-in-by-file, user: cert-user}
- name: intruder
  context: {cluster: stand-in, user: intruder}
users:
- name: token-user
  user:
    token: $token
- name: cert-user
  user:
    client-certificate: pki/tidemark.crt
    client-key: pki/tidemark.key
- name: intruder
  user:
    client-certificate-data: $(base64 -w0 "$tmp/intruder.crt")
    client-key-data: $(base64 -w0 "$tmp/intruder.key")
YAML
kcrun() { # context log: tidemarkd with the kubeconfig, in $d
	python3 - "$tmp/d.json" "$tmp/kube/config" "$1" >"$tmp/dk.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for k in ("server", "token_file", "ca_file"):
    del c["kubernetes"][k]
c["kubernetes"].update({"api": "kubeconfig", "kubeconfig": sys.argv[2], "context": sys.argv[3]})
print(json.dumps(c))
PY
	: >"$tmp/api/requests.log"
	"$bin" --config "$tmp/dk.json" --cgroup-root "$cg" --state-dir "$tmp/state-$1" >/dev/null 2>"$2" &
	d=$!
}
status_by() { grep -qs "^patch_nodemetric_status PATCH 200 $1 tidemarkd$" "$tmp/api/requests.log"; }
listed_by() { grep -qs "^list_pods GET 200 $1 -$" "$tmp/api/requests.log"; }
kcrun with-token "$tmp/dk1.log"
if wait_for 15 status_by token && listed_by token &&
	grep -q "API server https://127.0.0.1:$aport (kubeconfig $tmp/kube/config, context with-token, user token-user)" "$tmp/dk1.log"; then
	ok "kubeconfig, token and inline CA: pods listed and statuses written, the context said"
else
	not_ok "kubeconfig with a token" "$(tail -4 "$tmp/api/requests.log")" "$(cat "$tmp/dk1.log")"
fi
kill $d
wait $d 2>/dev/null
kcrun with-cert "$tmp/dk2.log"
if wait_for 15 status_by cert:tidemark && listed_by cert:tidemark; then
	ok "kubeconfig, client certificate and CA by paths relative to the file: accepted as user tidemark"
else
	not_ok "kubeconfig with a client certificate" "$(tail -4 "$tmp/api/requests.log")" "$(cat "$tmp/dk2.log")"
fi
kill $d
wait $d 2>/dev/null
kcrun intruder "$tmp/dk3.log"
if wait_for 15 grep -qs "^list_pods GET 401 - -$" "$tmp/api/requests.log" &&
	wait_for 5 grep -q "pods from the api: HTTP 401" "$tmp/dk3.log"; then
	ok "another user's certificate: 401, said"
else
	not_ok "another user's certificate refused" "$(tail -4 "$tmp/api/requests.log")" "$(cat "$tmp/dk3.log")"
fi
kill $d
wait $d 2>/dev/null
printf -- '- name: plugin\n  user:\n    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}\n' >>"$tmp/kube/config"
sed -i 's/^contexts:$/contexts:\n- name: plugin\n  context: {cluster: stand-in, user: plugin}/' "$tmp/kube/config"
config_refused "$bin" "a kubeconfig user with an exec plugin refused, the field named" \
	"{\"version\":1,\"kubernetes\":{\"api\":\"kubeconfig\",\"kubeconfig\":\"$tmp/kube/config\",\"context\":\"plugin\"}}" \
	"kubernetes.kubeconfig: $tmp/kube/config: users[plugin].user.exec: credential plugins are not supported"
tap_done
