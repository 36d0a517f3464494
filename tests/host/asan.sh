#!/usr/bin/env bash
# plan: 24
# The host unit tests and the host shell tests that run tidemark's programs
# (cli.sh, daemon.sh, endpoint.sh, nodemetric.sh), again against the ASan + UBSan builds
# in build/asan (make asan-build): no sanitizer report, no leak, no failure.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
asan=build/asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a sanitizer report anywhere in @log, a failed check, or fewer results
# than the program's plan (a unit test binary's "1..N", a script's
# "# plan:" line): one that stopped early ran less than it says
judge() { # name log rc plan
	local f p s
	# TAP result lines only (a program's own output may say "ok")
	f=$(grep -cE "^not ok [0-9]+" "$2")
	s=$(grep -cE "^ok [0-9]+ .*# SKIP" "$2")
	p=$(($(grep -cE "^ok [0-9]+" "$2") - s))
	if grep -q -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$2"; then
		not_ok "$1 under ASan+UBSan" "$(grep -m3 -E "ERROR: |runtime error:|SUMMARY" "$2")"
	elif [ "$3" -ne 0 ] || [ "$f" -ne 0 ] || [ "$s" -ne 0 ] || [ "$p" != "$4" ]; then
		# each failed check with its details (what it saw), not its name alone
		not_ok "$1 under ASan+UBSan" "exit $3, $p passed of ${4:-no} planned, $f failed, $s skipped" \
			"$(awk '/^not ok/ {n++; d = 1} /^(ok|not ok)/ && !/^not ok/ {d = 0} d && n <= 4' "$2" | head -60)"
	else
		ok "$1 under ASan+UBSan: $p checks, no report"
	fi
}

# every unit test of the tree, each built under the sanitizers from its
# source as it is now (it ran whatever build/asan held once)
for src in tests/unit/test_*.c; do
	t=$asan/tests/$(basename "$src" .c)
	if [ ! -x "$t" ] || [ "$src" -nt "$t" ]; then
		not_ok "$(basename "$t") under ASan+UBSan" "$t missing or older than $src (make asan-build)"
		continue
	fi
	"$t" >"$tmp/u.log" 2>&1
	judge "$(basename "$t")" "$tmp/u.log" $? "$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tmp/u.log" | head -n 1)"
done
for s in cli daemon endpoint nodemetric; do
	# the sanitizers' reports go to the programs' stderr, which the shell
	# tests keep in their own logs: collect them in one place as well
	ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$tmp/san-$s" TIDEMARK_BUILD=$asan \
		bash "tests/host/$s.sh" >"$tmp/s.log" 2>&1
	rc=$?
	cat "$tmp"/san-"$s".* >>"$tmp/s.log" 2>/dev/null
	judge "tests/host/$s.sh" "$tmp/s.log" $rc "$(sed -n 's/^# plan: *\([0-9]*\)$/\1/p' "tests/host/$s.sh" | head -n 1)"
done
tap_done
