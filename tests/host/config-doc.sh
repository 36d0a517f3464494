#!/usr/bin/env bash
# plan: 4
# The configuration's field table is the one source: docs/config.md and
# dist/tidemarkd.json.sample are what tidemarkd prints from it
# (--config-reference, --config-sample), the sample is valid, every row is
# documented with its default, and the defaults pass their own rows.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
bin=${TIDEMARK_BUILD:-build}/tidemarkd

ref=$("$bin" --config-reference)
if diff -u docs/config.md <(printf '%s\n' "$ref") >/tmp/config-doc.$$ 2>&1; then
	ok "docs/config.md is current (tidemarkd --config-reference > docs/config.md)"
else
	not_ok "docs/config.md is current (tidemarkd --config-reference > docs/config.md)" \
		"$(head -20 /tmp/config-doc.$$)"
fi
sample=$("$bin" --config-sample)
if diff -u dist/tidemarkd.json.sample <(printf '%s\n' "$sample") >/tmp/config-doc.$$ 2>&1; then
	ok "dist/tidemarkd.json.sample is current (tidemarkd --config-sample)"
else
	not_ok "dist/tidemarkd.json.sample is current (tidemarkd --config-sample)" \
		"$(head -20 /tmp/config-doc.$$)"
fi
rm -f /tmp/config-doc.$$
# every section and field of the sample has a row in the reference, and
# the other way round: the two come from one table, and neither is empty
python3 - "$sample" docs/config.md <<'PY' >/tmp/config-keys.$$ 2>&1
import json, re, sys
sample = json.loads(sys.argv[1])
doc = open(sys.argv[2]).read()
rows = {}
sect = None
for line in doc.splitlines():
    m = re.match(r"^## `([^`]+)`", line)
    if m:
        sect = m.group(1)
        continue
    m = re.match(r"^\| `([^`]+)` \| (\w[\w ]*) \| ([^|]*) \|", line)
    if m and sect:
        rows[sect + "." + m.group(1)] = m.group(3).strip()
def walk(o, pre):
    for k, v in o.items():
        p = pre + k
        if p == "version":
            continue
        if isinstance(v, dict) and p not in rows:
            yield from walk(v, p + ".")
        else:
            yield p
keys = set(walk(sample, ""))
missing = sorted(keys - set(rows))
undocumented = sorted(k for k, d in rows.items() if not d)
sections = sorted({k.rsplit(".", 1)[0] for k in rows})
want = sorted(["watermarks.cpu", "watermarks.memory", "scheduler", "fallback", "memory_eviction",
               "cpu_eviction", "interference", "eviction", "cgroups", "report", "kubernetes"])
assert sections == want, f"sections {sections}, want {want}"
assert not missing, f"in the sample, not in the reference: {missing}"
assert not undocumented, f"rows without a default or a note: {undocumented}"
only_doc = sorted(set(rows) - keys)
print(f"{len(rows)} rows, {len(keys)} in the sample; reference only (found at run time): {only_doc}")
PY
if [ $? -eq 0 ]; then ok "reference and sample agree: $(cat /tmp/config-keys.$$)"; else not_ok "reference and sample agree" "$(cat /tmp/config-keys.$$)"; fi
rm -f /tmp/config-keys.$$
expect_eq "the sample is valid" "dist/tidemarkd.json.sample: valid" \
	"$("$bin" --config dist/tidemarkd.json.sample --check 2>&1)"
tap_done
