#!/usr/bin/env bash
# tidemarkd configuration checks on the host (--check: nothing runs).
. "$(dirname "$0")/../lib/lib.sh"
bin=build/tidemarkd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$bin" --config dist/tidemarkd.json.sample --check 2>&1)
expect_eq "the sample configuration is valid" "dist/tidemarkd.json.sample: valid" "$out"

refused() { # desc json expected-message
	local err rc
	printf '%s\n' "$2" >"$tmp/c.json"
	err=$("$bin" --config "$tmp/c.json" --check 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$3" <<<"$err"; then ok "$1"; else not_ok "$1" "exit $rc (want 2): $err"; fi
}
refused "suppress not below evict" '{"version":1,"watermarks":{"cpu":{"suppress_pct":75,"evict_pct":70}}}' \
	"watermarks.cpu.suppress_pct: 75 must be below evict_pct (70)"
refused "memory lower line not below evict" '{"version":1,"watermarks":{"memory":{"evict_lower_pct":70}}}' \
	"watermarks.memory.evict_lower_pct: 70 must be below evict_pct (70)"
refused "unknown field named" '{"version":1,"report":{"port":1}}' "report.port: unknown field"
refused "syntax error located" '{"version":1,' "line 2"
refused "wrong version" '{"version":3}' "version: must be 1"
err=$("$bin" --config "$tmp/missing.json" 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "missing.json: No such file" <<<"$err"; then ok "missing file named"; else not_ok "missing file named" "exit $rc: $err"; fi
err=$("$bin" 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--config FILE is required" <<<"$err"; then ok "--config required"; else not_ok "--config required" "exit $rc: $err"; fi
tap_done
