#!/usr/bin/env bash
# plan: 11
# tm-probe on the host: JSON output, arrival jitter, bad input refused.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
bin=build/tm-probe

get() { # json path... -> value
	python3 -c 'import json,sys
v = json.loads(sys.argv[1])
for k in sys.argv[2:]: v = v[k]
print(v)' "$@"
}

out=$("$bin" --rate 1000 --work-us 50 --workers 4 --seconds 1 --json)
check "fixed grid: JSON parses" get "$out" requests
n=$(get "$out" requests)
check "fixed grid: ~1000 requests served ($n)" test "$n" -ge 990 -a "$n" -le 1001
expect_eq "fixed grid: every gap is the period" "1000.0 1000.0" "$(get "$out" gap_us min) $(get "$out" gap_us max)"

out=$("$bin" --rate 1000 --work-us 50 --workers 4 --seconds 1 --jitter-us 500 --seed 7 --json)
min=$(get "$out" gap_us min) max=$(get "$out" gap_us max)
note "jitter 500 us: gaps $min .. $max us"
check "jitter: gaps spread below the period ($min)" python3 -c "import sys; sys.exit(not (500 <= $min < 900))"
check "jitter: and above it ($max)" python3 -c "import sys; sys.exit(not (1100 < $max <= 1500))"
expect_eq "jitter: reported" 500 "$(get "$out" jitter_us)"
out2=$("$bin" --rate 1000 --work-us 50 --workers 4 --seconds 1 --jitter-us 500 --seed 7 --json)
expect_eq "jitter: the same seed gives the same arrivals" "$min $max" \
	"$(get "$out2" gap_us min) $(get "$out2" gap_us max)"

err=$("$bin" --rate 200 --jitter-us 5000 2>&1 >/dev/null)
rc=$?
expect_eq "jitter of a whole period refused (exit 2)" 2 "$rc"
check "the error names the period" grep -q "not below the period of 5000 us" <<<"$err"
err=$("$bin" --jitter-us 1ms 2>&1 >/dev/null)
expect_eq "jitter not a number refused (exit 2)" 2 "$?"
check "the error names the option" grep -q -- "--jitter-us '1ms'" <<<"$err"
tap_done
