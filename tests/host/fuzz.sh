#!/usr/bin/env bash
# Every libFuzzer target (tests/fuzz, ASan + UBSan) replays its seeds and
# the inputs that once crashed it, then fuzzes for a few seconds: no crash,
# leak, sanitizer report or time-out. `make fuzz` runs them longer.
. "$(dirname "$0")/../lib/lib.sh"
secs=${TIDEMARK_FUZZ_SECONDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for bin in build/fuzz/fuzz_*; do
	[[ -f $bin && -x $bin && $bin != *.* ]] || continue
	t=$(basename "$bin")
	mkdir -p "$tmp/$t" "$tmp/art-$t"
	seeds=$(ls tests/fuzz/corpus/$t 2>/dev/null | wc -l)
	kept=$(ls tests/fuzz/regress/$t 2>/dev/null | wc -l)
	dirs=("$tmp/$t" "tests/fuzz/corpus/$t")
	[ -d "tests/fuzz/regress/$t" ] && dirs+=("tests/fuzz/regress/$t")
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$tmp/art-$t/" "${dirs[@]}" >"$tmp/$t.log" 2>&1; then
		ok "$t: $seeds seeds, $kept kept crash inputs, then $(grep -o 'Done [0-9]* runs' "$tmp/$t.log" | tail -1 | cut -d' ' -f2) runs in ${secs} s: no finding"
	else
		not_ok "$t: finding" "$(grep -m4 -E 'ERROR|runtime error|SUMMARY|Test unit written' "$tmp/$t.log")" \
			"input (base64): $(grep -m1 '^Base64' "$tmp/$t.log")"
	fi
done
[ "$tap_n" -gt 0 ] || not_ok "fuzz targets built" "no build/fuzz/fuzz_* (make fuzz-build)"
tap_done
