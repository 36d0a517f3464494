#!/usr/bin/env bash
# make verifier: the verifier's processed-instruction count of every program
# of the scheduler, measured in the test VM, written to docs/verifier.md
# next to the counts recorded before the layout work (docs/verifier-before.txt),
# so a change shows what it costs the verifier.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
share=$(mktemp -d)
trap 'rm -rf "$share"' EXIT
tools/vm/run --cpus 2 --timeout 300 --share "$share" -- tools/verifier/guest.sh
[ -s "$share/insns.txt" ] || { echo "verifier: no counts measured" >&2; exit 1; }
# the verifier prunes what the loader's read-only topology rules out: the
# cache-domain and SMT paths are only walked on a machine that has them
mkdir -p "$share/topo"
tools/vm/run --cpus 8 --llcs 2 --threads 2 --timeout 300 --share "$share/topo" -- \
	tools/verifier/guest.sh
[ -s "$share/topo/insns.txt" ] || { echo "verifier: no counts measured with 2 L3s" >&2; exit 1; }
mkdir -p "$share/load"
tools/vm/run --cpus 4 --timeout 300 --share "$share/load" -- tools/verifier/load-guest.sh
loads=${TM_LOADS:-5}
[ "$(grep -c '^[0-9][0-9]*$' "$share/load/loads.txt" 2>/dev/null)" = "$loads" ] ||
	{ echo "verifier: not $loads load times measured" >&2; exit 1; }
cp "$share/insns.txt" docs/verifier-now.txt
cp "$share/topo/insns.txt" docs/verifier-now-2l3.txt
python3 - docs/verifier-before.txt docs/verifier-now.txt docs/verifier-now-2l3.txt \
	"$share/load/loads.txt" >docs/verifier.md <<'PY'
import statistics
import sys
def load(p):
    try:
        return dict((l.split()[0], int(l.split()[1])) for l in open(p) if l.strip())
    except FileNotFoundError:
        return {}
before, now, topo = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
loads = [int(l) for l in open(sys.argv[4]) if l.strip()]
print("# Verifier cost of the scheduler\n")
print("Processed instructions per BPF program (`bpf_prog_info.verified_insns`; names from the")
print("program's BTF), measured by `make verifier` in the test VM (Linux 6.12, 2 vCPUs, one L3")
print("domain, no SMT), and in a VM of 8 vCPUs in 2 L3 domains with 2 threads a core, where the")
print("domain and SMT paths the loader's topology rules out elsewhere are verified too.")
print("`before`: the build before the layout work (commit e2c054a), `docs/verifier-before.txt`;")
print("`now`: this tree, `docs/verifier-now.txt` and `docs/verifier-now-2l3.txt`.\n")
print("| program | before | now | change | now, 2 L3 + SMT |")
print("|---|---:|---:|---:|---:|")
tb = tn = tt = 0
for name in sorted(set(before) | set(now) | set(topo)):
    b, n, t = before.get(name), now.get(name), topo.get(name)
    tb += b or 0
    tn += n or 0
    tt += t or 0
    ch = "" if b is None or n is None else f"{n - b:+d}"
    cell = lambda v: "-" if v is None else v
    print(f"| `{name}` | {cell(b)} | {cell(n)} | {ch} | {cell(t)} |")
print(f"| all | {tb} | {tn} | {tn - tb:+d} | {tt} |")
print()
print(f"Start to `enabled` in a 4-vCPU VM (TCG), {len(loads)} loads: "
      f"{', '.join(f'{v / 1000:.2f}' for v in loads)} s "
      f"(median {statistics.median(loads) / 1000:.2f} s), from the kernel log's timestamps: a")
print("mark the starting process writes to /dev/kmsg before it runs the loader, and sched_ext's")
print("\"enabled\" line (`tools/verifier/load-guest.sh`).")
PY
echo "verifier: docs/verifier.md"
