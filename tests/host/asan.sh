#!/usr/bin/env bash
# The host unit tests and the host shell tests that run tidemark's programs
# (cli.sh, daemon.sh, endpoint.sh, nodemetric.sh), again against the ASan + UBSan builds
# in build/asan (make asan-build): no sanitizer report, no leak, no failure.
. "$(dirname "$0")/../lib/lib.sh"
asan=build/asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a sanitizer report anywhere in @log, or a failed check
judge() { # name log rc
	local f p
	f=$(grep -c "^not ok" "$2")
	p=$(grep -c "^ok" "$2")
	if grep -q -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$2"; then
		not_ok "$1 under ASan+UBSan" "$(grep -m3 -E "ERROR: |runtime error:|SUMMARY" "$2")"
	elif [ "$3" -ne 0 ] || [ "$f" -ne 0 ] || [ "$p" -eq 0 ]; then
		# each failed check with its details (what it saw), not its name alone
		not_ok "$1 under ASan+UBSan" "exit $3, $p passed, $f failed" \
			"$(awk '/^not ok/ {n++; d = 1} /^(ok|not ok)/ && !/^not ok/ {d = 0} d && n <= 4' "$2" | head -60)"
	else
		ok "$1 under ASan+UBSan: $p checks, no report"
	fi
}

for t in "$asan"/tests/test_*; do
	[ -x "$t" ] || continue
	"$t" >"$tmp/u.log" 2>&1
	judge "$(basename "$t")" "$tmp/u.log" $?
done
for s in cli daemon endpoint nodemetric; do
	# the sanitizers' reports go to the programs' stderr, which the shell
	# tests keep in their own logs: collect them in one place as well
	ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$tmp/san-$s" TIDEMARK_BUILD=$asan \
		bash "tests/host/$s.sh" >"$tmp/s.log" 2>&1
	rc=$?
	cat "$tmp"/san-"$s".* >>"$tmp/s.log" 2>/dev/null
	judge "tests/host/$s.sh" "$tmp/s.log" $rc
done
[ "$tap_n" -gt 0 ] || not_ok "sanitized builds present" "nothing in $asan (make asan-build)"
tap_done
