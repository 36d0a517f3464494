#!/usr/bin/env bash
# plan: 41
# dist/kubernetes renders offline with kubectl's kustomize, and the rendered
# objects are what a colocation node needs: the DaemonSet (host PID, node
# critical, every taint tolerated, the two containers with the installed
# binaries, bpffs, the host's cgroup tree and the state directory shared,
# the configuration mounted where the daemon reads it), a configuration that
# tidemarkd --check accepts and that listens where the Service and the
# probe look, the ServiceMonitor selecting the Service, the PrometheusRule
# reading the job and node labels it gives, and RBAC granting the
# API calls listed in rbac.yaml and nothing else.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

command -v kubectl >/dev/null || { not_ok "kubectl is installed (tools/deps.sh)"; tap_done; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if kubectl kustomize dist/kubernetes >"$tmp/all.yaml" 2>"$tmp/err"; then
	ok "kubectl kustomize dist/kubernetes renders ($(grep -c '^kind:' "$tmp/all.yaml") objects)"
else
	not_ok "kubectl kustomize dist/kubernetes renders" "$(cat "$tmp/err")"
	tap_done
fi
python3 - "$tmp/all.yaml" "$tmp/tidemarkd.json" >"$tmp/checks" <<'PY'
import json, sys, yaml

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
by = {}
for d in docs:
    by.setdefault(d["kind"], []).append(d)
def check(name, cond, detail=""):
    print(("ok" if cond else "not_ok") + "\t" + name + ("\t" + str(detail) if not cond else ""))

ns = "tidemark-system"
check("every namespaced object in " + ns,
      all(d["metadata"].get("namespace") == ns for d in docs
          if d["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding")),
      [(d["kind"], d["metadata"].get("namespace")) for d in docs])
ds = by["DaemonSet"][0]
spec = ds["spec"]["template"]["spec"]
check("DaemonSet selector matches its pods",
      all(spec and ds["spec"]["template"]["metadata"]["labels"].get(k) == v
          for k, v in ds["spec"]["selector"]["matchLabels"].items()))
check("host PID namespace", spec.get("hostPID") is True)
check("priority class system-node-critical", spec.get("priorityClassName") == "system-node-critical")
check("every taint tolerated", {"operator": "Exists"} in spec.get("tolerations", []))
check("runs as the tidemark service account", spec.get("serviceAccountName") == "tidemark")
cs = {c["name"]: c for c in spec["containers"]}
check("two containers: scheduler and daemon", set(cs) == {"scheduler", "daemon"}, list(cs))
check("every container, the preflight's too, runs the one image",
      {c["image"] for c in spec["containers"] + spec.get("initContainers", [])} == {cs["scheduler"]["image"]})
check("the installed binaries",
      cs["scheduler"]["command"] == ["/usr/sbin/scx_tidemark"] and
      cs["daemon"]["command"] == ["/usr/sbin/tidemarkd"])
vols = {v["name"]: v for v in spec["volumes"]}
def mounts(c):
    return {m["mountPath"]: m for m in cs[c].get("volumeMounts", [])}
for c in ("scheduler", "daemon"):
    m = mounts(c)
    check(c + ": bpffs, cgroup tree and state directory from the host",
          all(p in m and "hostPath" in vols[m[p]["name"]] and
              vols[m[p]["name"]]["hostPath"]["path"] == p
              for p in ("/sys/fs/bpf", "/sys/fs/cgroup", "/run/tidemark")), sorted(m))
    check(c + ": privileged (sched_ext, bpf, cgroup writes)",
          cs[c].get("securityContext", {}).get("privileged") is True)
check("the scheduler's pins reach the host (Bidirectional)",
      mounts("scheduler")["/sys/fs/bpf"].get("mountPropagation") == "Bidirectional")
check("the daemon writes the cgroup tree, the scheduler only reads it",
      not mounts("daemon")["/sys/fs/cgroup"].get("readOnly") and
      mounts("scheduler")["/sys/fs/cgroup"].get("readOnly") is True)
args = cs["daemon"]["args"]
cfg_path = args[args.index("--config") + 1]
m = mounts("daemon")
cfg_dir = cfg_path.rsplit("/", 1)[0]
check("the daemon's --config is on the ConfigMap's mount", cfg_dir in m and
      "configMap" in vols[m[cfg_dir]["name"]], cfg_path)
cm_name = vols[m[cfg_dir]["name"]]["configMap"]["name"]
cms = [c for c in by["ConfigMap"] if c["metadata"]["name"] == cm_name]
check("the ConfigMap it names exists (" + cm_name + ")", len(cms) == 1)
data = cms[0]["data"][cfg_path.rsplit("/", 1)[1]]
open(sys.argv[2], "w").write(data)
cfg = json.loads(data)
port = int(cfg["report"]["listen"].rsplit(":", 1)[1])
addr = cfg["report"]["listen"].rsplit(":", 1)[0]
check("the daemon listens beyond the pod's loopback (" + addr + ")", addr != "127.0.0.1")
cport = {p["name"]: p["containerPort"] for p in cs["daemon"].get("ports", [])}
check("the container's metrics port is the configured one", cport.get("metrics") == port, cport)
def probe(kind):
    h = cs["daemon"].get(kind, {}).get("httpGet", {})
    return h.get("path"), h.get("port")
check("the liveness probe asks /healthz on the metrics port", probe("livenessProbe") == ("/healthz", "metrics"))
check("the readiness probe asks /readyz on the metrics port", probe("readinessProbe") == ("/readyz", "metrics"))
check("a new pod must stay ready a while before the rollout goes on (minReadySeconds)",
      ds["spec"].get("minReadySeconds", 0) >= 10, ds["spec"].get("minReadySeconds"))
ic = {c["name"]: c for c in spec.get("initContainers", [])}
pf = ic.get("preflight", {})
check("the preflight runs before both containers, its report kept in the pod status",
      pf.get("command") == ["/usr/sbin/tidemarkctl", "preflight"] and
      pf.get("terminationMessagePolicy") == "FallbackToLogsOnError", pf)
pm = {m["mountPath"]: vols[m["name"]] for m in pf.get("volumeMounts", [])}
check("the preflight sees the host's bpffs, cgroup tree and /boot",
      all(pm.get(p, {}).get("hostPath", {}).get("path") == p for p in ("/sys/fs/bpf", "/sys/fs/cgroup", "/boot")),
      sorted(pm))
check("the ConfigMap keeps its name (an edit reaches the running daemon, no rollout)",
      cm_name == "tidemarkd-config", cm_name)
env = {e["name"]: e for e in cs["daemon"].get("env", [])}
check("the daemon's NODE_NAME is the pod's node (the NodeMetric and pod list it uses)",
      env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName")
check("the daemon talks to the API in-cluster (its service account)",
      cfg.get("kubernetes", {}).get("api") == "in-cluster" and ds["spec"]["template"]["spec"].get("serviceAccountName") == "tidemark")
svc = by["Service"][0]
check("the Service selects the DaemonSet's pods",
      all(ds["spec"]["template"]["metadata"]["labels"].get(k) == v
          for k, v in svc["spec"]["selector"].items()))
check("the Service's port targets metrics",
      any(p.get("targetPort") == "metrics" and p.get("name") == "metrics" for p in svc["spec"]["ports"]))
sm = by["ServiceMonitor"][0]
check("the ServiceMonitor selects the Service",
      all(svc["metadata"]["labels"].get(k) == v for k, v in sm["spec"]["selector"]["matchLabels"].items()))
check("the ServiceMonitor scrapes /metrics at the sample period",
      sm["spec"]["endpoints"][0]["path"] == "/metrics" and
      sm["spec"]["endpoints"][0]["interval"] == "%ds" % cfg["report"].get("sample_s", 10))
pr = by.get("PrometheusRule", [{}])[0]
rules = [r for g in pr.get("spec", {}).get("groups", []) for r in g["rules"]]
check("the PrometheusRule is rendered with its alerts", len(rules) >= 7, len(rules))
import re
jobs = {j for r in rules for j in re.findall(r'\bup\{job="([^"]+)"', r["expr"])}
# the Prometheus Operator names a ServiceMonitor's job after the Service
check("the rules' up{job} is the Service the ServiceMonitor scrapes",
      jobs == {svc["metadata"]["name"]} and "jobLabel" not in sm["spec"], jobs)
check("the ServiceMonitor gives each series the node label the alerts name",
      any(r.get("targetLabel") == "node" for r in sm["spec"]["endpoints"][0].get("relabelings", [])) and
      all("$labels.node" in r["annotations"]["summary"] for r in rules))
# RBAC: exactly these (API group, resource) -> verbs
want = {
    ("", "pods"): {"get", "list", "watch"},
    ("", "pods/eviction"): {"create"},
    ("", "events"): {"create", "patch"},
    ("events.k8s.io", "events"): {"create", "patch"},
    ("", "nodes"): {"get", "patch"},
    ("slo.koordinator.sh", "nodemetrics"): {"get", "create", "update"},
    ("slo.koordinator.sh", "nodemetrics/status"): {"update", "patch"},
    ("slo.koordinator.sh", "nodeslos"): {"get", "list", "watch"},
}
got = {}
for r in by["ClusterRole"][0]["rules"]:
    for g in r["apiGroups"]:
        for res in r["resources"]:
            got.setdefault((g, res), set()).update(r["verbs"])
check("RBAC grants exactly the planned API calls", got == want,
      {k: sorted(v) for k, v in got.items() if want.get(k) != v} or sorted(set(want) - set(got)))
crb = by["ClusterRoleBinding"][0]
check("the binding gives the role to the pods' service account",
      crb["roleRef"]["name"] == by["ClusterRole"][0]["metadata"]["name"] and
      {"kind": "ServiceAccount", "name": "tidemark", "namespace": ns} in crb["subjects"])
check("the namespace admits privileged pods",
      by["Namespace"][0]["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") == "privileged")
PY
while IFS=$'\t' read -r r name detail; do
	if [ "$r" = ok ]; then ok "$name"; else not_ok "$name" "$detail"; fi
done <"$tmp/checks"
# retargeted as `kustomize edit set image tidemark=...` writes it: every
# container, the preflight's too, takes the new name and tag
mkdir -p "$tmp/overlay"
cat >"$tmp/overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$tmp/overlay" dist/kubernetes)
images:
  - name: tidemark
    newName: registry.example/ops/tidemark
    newTag: 0.6.0-1
EOF
imgs=$(kubectl kustomize "$tmp/overlay" 2>/dev/null | python3 -c '
import sys, yaml
ds = [d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]
print(" ".join(sorted({c["image"] for c in ds["containers"] + ds.get("initContainers", [])})))')
expect_eq "an overlay's images entry retargets every container" "registry.example/ops/tidemark:0.6.0-1" "$imgs"
rel=$(sed -n 's/^TM_RELEASE := //p' Makefile)
expect_eq "the image tag is the release make image tags ($rel)" "$rel" \
	"$(kubectl kustomize dist/kubernetes 2>/dev/null | sed -n 's/^ *image: tidemark:\(.*\)$/\1/p' | sort -u)"
out=$(build/tidemarkd --check --config "$tmp/tidemarkd.json" 2>&1)
check "tidemarkd --check accepts the ConfigMap's configuration ($out)" test $? -eq 0
tap_done
