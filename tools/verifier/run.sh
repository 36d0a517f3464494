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
cp "$share/insns.txt" docs/verifier-now.txt
python3 - docs/verifier-before.txt docs/verifier-now.txt >docs/verifier.md <<'PY'
import sys
def load(p):
    try:
        return dict((l.split()[0], int(l.split()[1])) for l in open(p) if l.strip())
    except FileNotFoundError:
        return {}
before, now = load(sys.argv[1]), load(sys.argv[2])
print("# Verifier cost of the scheduler\n")
print("Processed instructions per BPF program (`bpf_prog_info.verified_insns`; names from the")
print("program's BTF), measured by `make verifier` in the test VM (Linux 6.12, 2 vCPUs).")
print("`before`: the build before the layout work (commit e2c054a), `docs/verifier-before.txt`;")
print("`now`: this tree, `docs/verifier-now.txt`.\n")
print("| program | before | now | change |")
print("|---|---:|---:|---:|")
tb = tn = 0
for name in sorted(set(before) | set(now)):
    b, n = before.get(name), now.get(name)
    tb += b or 0
    tn += n or 0
    ch = "" if b is None or n is None else f"{n - b:+d}"
    print(f"| `{name}` | {'-' if b is None else b} | {'-' if n is None else n} | {ch} |")
print(f"| all | {tb} | {tn} | {tn - tb:+d} |")
PY
echo "verifier: docs/verifier.md"
