#!/usr/bin/env bash
# plan: 18
# The VM tests' meters refuse missing input instead of reading it as 0:
# tests/lib/bpfmap.py tells "absent" (exit 1 for lookup, 0 for absent) from
# any error (exit 2: no such pin, bad key), on a real map pinned in a bpffs
# of its own; tests/lib/cgsample.py ends with exit 2, naming the cgroup,
# when one is missing or goes away mid-run; tests/lib/crdcheck.py refuses
# what the API server would (each error by path) and lists what it would
# prune, against the NodeMetric CRD.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

tmp=$(mktemp -d)
cgdir=""
trap 'umount "$tmp/bpf" 2>/dev/null; [ -n "$cgdir" ] && rmdir "$cgdir" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/bpf"
if ! mount -t bpf bpf "$tmp/bpf"; then
	not_ok "a bpffs of the test's own" "mount -t bpf failed (root needed)"
	tap_done
fi
# a hash map, 4-byte keys, 8-byte values, pinned as $tmp/bpf/m
python3 - "$tmp/bpf/m" <<'PY' || { not_ok "a map created and pinned" "python above"; tap_done; }
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
class Create(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint32), ("key", ctypes.c_uint32), ("value", ctypes.c_uint32),
                ("max", ctypes.c_uint32), ("flags", ctypes.c_uint32)]
class Pin(ctypes.Structure):
    _fields_ = [("path", ctypes.c_uint64), ("fd", ctypes.c_uint32), ("flags", ctypes.c_uint32)]
a = Create(1, 4, 8, 4, 0)
fd = libc.syscall(321, 0, ctypes.byref(a), ctypes.sizeof(a))
if fd < 0:
    sys.exit("BPF_MAP_CREATE: errno %d" % ctypes.get_errno())
p = ctypes.create_string_buffer(sys.argv[1].encode())
pin = Pin(ctypes.cast(p, ctypes.c_void_p).value, fd, 0)
if libc.syscall(321, 6, ctypes.byref(pin), ctypes.sizeof(pin)) < 0:
    sys.exit("BPF_OBJ_PIN: errno %d" % ctypes.get_errno())
PY
m=$tmp/bpf/m
rc() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }
expect_eq "bpfmap: a key not there: lookup exit 1, absent exit 0" "1 0" \
	"$(rc tests/lib/bpfmap.py lookup "$m" 07000000) $(rc tests/lib/bpfmap.py absent "$m" 07000000)"
expect_eq "bpfmap: update, then lookup reads the value back" "0 0 2a00000000000000" \
	"$(rc tests/lib/bpfmap.py update "$m" 07000000 2a00000000000000) $(rc tests/lib/bpfmap.py lookup "$m" 07000000) $(cut -c1-16 "$tmp/out")"
expect_eq "bpfmap: a key there: absent exit 1" 1 "$(rc tests/lib/bpfmap.py absent "$m" 07000000)"
r=$(rc tests/lib/bpfmap.py absent "$tmp/bpf/nope" 07000000)
if [ "$r" = 2 ] && grep -q "$tmp/bpf/nope: No such file" "$tmp/err"; then
	ok "bpfmap: no such pin is an error (exit 2, named), not \"absent\""
else
	not_ok "bpfmap: no such pin is an error (exit 2, named), not \"absent\"" "exit $r: $(cat "$tmp/err")"
fi
r=$(rc tests/lib/bpfmap.py lookup "$m" 0700)
if [ "$r" = 2 ] && grep -q "has 4-byte keys and 8-byte values, given 2" "$tmp/err"; then
	ok "bpfmap: a key of the wrong size is an error (exit 2: $(cat "$tmp/err"))"
else
	not_ok "bpfmap: a key of the wrong size is an error (exit 2)" "exit $r: $(cat "$tmp/err")"
fi
expect_eq "bpfmap: bad hex refused (exit 2)" 2 "$(rc tests/lib/bpfmap.py lookup "$m" zz)"

# cgsample.py reads /sys/fs/cgroup/PATH/cpu.stat: the cgroup2 hierarchy,
# wherever it is mounted below /sys/fs/cgroup on this host
mnt=$(awk '$3 == "cgroup2" && $2 ~ "^/sys/fs/cgroup" { print $2; exit }' /proc/mounts)
rel=${mnt#/sys/fs/cgroup}
rel=${rel#/}
rel=${rel:-.}
[ -n "$mnt" ] || { not_ok "a cgroup2 hierarchy under /sys/fs/cgroup" "$(grep cgroup /proc/mounts)"; tap_done; }
timeout 10 tests/lib/cgsample.py --interval 0.1 --stop "$tmp/stop1" root="$rel" >"$tmp/s1" 2>&1 &
sleep 1
touch "$tmp/stop1"
wait $!
r=$?
if [ "$r" = 0 ] && awk 'NF != 3 { bad = 1 } END { exit bad || NR < 3 }' "$tmp/s1"; then
	ok "cgsample: the root cgroup sampled ($(wc -l <"$tmp/s1") lines of time, interval, share)"
else
	not_ok "cgsample: the root cgroup sampled" "exit $r: $(head -5 "$tmp/s1")"
fi
r=$(rc timeout 10 tests/lib/cgsample.py --interval 0.1 --stop "$tmp/stop2" x="$rel/tm-no-such-cgroup")
if [ "$r" = 2 ] && grep -q "cannot read .*tm-no-such-cgroup/cpu.stat" "$tmp/err" && ! [ -s "$tmp/out" ]; then
	ok "cgsample: a missing cgroup is an error (exit 2, named), no sample printed"
else
	not_ok "cgsample: a missing cgroup is an error (exit 2, named)" "exit $r: $(cat "$tmp/err" "$tmp/out")"
fi
# gone mid-run: the lines so far, then exit 2
cgdir=$mnt/tm-meters-$$
mkdir "$cgdir"
timeout 10 tests/lib/cgsample.py --interval 0.1 --stop "$tmp/stop3" x="$rel/tm-meters-$$" >"$tmp/s3" 2>"$tmp/e3" &
pid=$!
# removed once it has sampled, not after a fixed time: beside a kernel
# build its python took longer than 0.6 s to start, and no sample was due
for _ in $(seq 200); do [ -s "$tmp/s3" ] && break; sleep 0.05; done
rmdir "$cgdir" && cgdir=""
wait $pid
r=$?
if [ "$r" = 2 ] && [ -s "$tmp/s3" ] && grep -q "cannot read .*tm-meters-$$/cpu.stat" "$tmp/e3"; then
	ok "cgsample: a cgroup removed mid-run ends it (exit 2) after $(wc -l <"$tmp/s3") samples"
else
	not_ok "cgsample: a cgroup removed mid-run ends it (exit 2)" "exit $r: $(cat "$tmp/e3")"
fi

# crdcheck.py: a NodeMetric as tidemarkd writes one, then broken one way each
crd=tests/schema/nodemetric.crd.json
cat >"$tmp/nm.json" <<'J'
{"apiVersion": "slo.koordinator.sh/v1alpha1", "kind": "NodeMetric", "metadata": {"name": "node-a"},
 "spec": {"metricCollectPolicy": {"aggregateDurationSeconds": 60, "reportIntervalSeconds": 60,
          "nodeMemoryCollectPolicy": "usageWithoutPageCache", "nodeAggregatePolicy": {"durations": ["5m"]}}},
 "status": {"updateTime": "2026-12-03T10:00:00Z",
            "nodeMetric": {"nodeUsage": {"resources": {"cpu": "1200m", "memory": 1073741824}},
                           "aggregatedNodeUsages": [{"duration": "5m", "usage": {"p95": {"resources": {"cpu": "2"}}}}]},
            "podsMetric": [{"namespace": "shop", "name": "web-0", "podUsage": {"resources": {"cpu": "250m"}},
                            "extensions": {"anything": {"kept": true}}}]}}
J
crdrun() { # name python-edit: crdcheck.py on the document edited so; its output and exit
	python3 - "$tmp/nm.json" "$tmp/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
	tests/lib/crdcheck.py "$crd" "$tmp/$1.json" 2>&1
	echo "exit $?"
}
expect_eq "crdcheck: a valid NodeMetric passes, nothing pruned" "exit 0" "$(crdrun good "")"
expect_eq "crdcheck: a quantity that is not one, named by path" \
	"error: status.nodeMetric.nodeUsage.resources.cpu: '1.2 cores' does not match ^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$|exit 1" \
	"$(crdrun q 'd["status"]["nodeMetric"]["nodeUsage"]["resources"]["cpu"] = "1.2 cores"' | tr '\n' '|' | sed 's/|$//')"
expect_eq "crdcheck: a quantity that is neither an integer nor a string" \
	"error: status.podsMetric[0].podUsage.resources.cpu: must be an integer or a string, not 0.25|exit 1" \
	"$(crdrun f 'd["status"]["podsMetric"][0]["podUsage"]["resources"]["cpu"] = 0.25' | tr '\n' '|' | sed 's/|$//')"
expect_eq "crdcheck: a wrong type, an int64 as a string" \
	"error: spec.metricCollectPolicy.reportIntervalSeconds: must be an integer, not \"60\"|exit 1" \
	"$(crdrun t 'd["spec"]["metricCollectPolicy"]["reportIntervalSeconds"] = "60"' | tr '\n' '|' | sed 's/|$//')"
expect_eq "crdcheck: an enum missed and a time that is not RFC 3339" \
	"error: spec.metricCollectPolicy.nodeMemoryCollectPolicy: 'usage' is not one of usageWithHotPageCache, usageWithoutPageCache, usageWithPageCache|error: status.updateTime: '2026-12-03 10:00' is not an RFC 3339 date-time|exit 1" \
	"$(crdrun e 'd["spec"]["metricCollectPolicy"]["nodeMemoryCollectPolicy"] = "usage"; d["status"]["updateTime"] = "2026-12-03 10:00"' | tr '\n' '|' | sed 's/|$//')"
expect_eq "crdcheck: a device without its required health, an int32 out of range" \
	"error: status.podsMetric[0].podUsage.devices[0].minor: 4294967296 is out of the int32 range|error: status.podsMetric[0].podUsage.devices[0].health: required|exit 1" \
	"$(crdrun r 'd["status"]["podsMetric"][0]["podUsage"]["devices"] = [{"minor": 1 << 32}]' | tr '\n' '|' | sed 's/|$//')"
expect_eq "crdcheck: unknown fields and a null pruned, by path (extensions keep theirs)" \
	"pruned: status.nodeMetric.nodeUsage.cpu|pruned: status.podsMetric[].qos|pruned: status.updateTime|exit 1" \
	"$(crdrun p 'd["status"]["podsMetric"][0]["qos"] = "LS"; d["status"]["nodeMetric"]["nodeUsage"]["cpu"] = 1; d["status"]["updateTime"] = None' | tr '\n' '|' | sed 's/|$//')"
expect_eq "crdcheck: the wrong kind and a name that is not a DNS subdomain" \
	"error: kind: must be NodeMetric, not \"NodeSLO\"|error: metadata.name: \"Node_A\" is not a DNS subdomain|exit 1" \
	"$(crdrun k 'd["kind"] = "NodeSLO"; d["metadata"]["name"] = "Node_A"' | tr '\n' '|' | sed 's/|$//')"
expect_eq "crdcheck: an unreadable document: exit 2, named" "exit 2" \
	"$(tests/lib/crdcheck.py "$crd" "$tmp/none.json" 2>/dev/null; echo "exit $?")"
tap_done
