#!/usr/bin/env bash
# Command-line validation of scx_tidemark, on the host (nothing is loaded:
# every case here must fail before touching BPF).
. "$(dirname "$0")/../lib.sh"
bin=build/scx_tidemark

# expect_reject DESC PATTERN ARGS...: exit 2, and stderr names the problem.
expect_reject() {
	local desc=$1 pat=$2 err rc
	shift 2
	err=$("$bin" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && grep -q -- "$pat" <<<"$err"; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc (want 2), stderr: $err"
	fi
}

expect_reject "slice 0 rejected" "--slice-us 0 is out of range" --slice-us 0
expect_reject "slice too large rejected" "--slice-us 100001 is out of range" --slice-us 100001
expect_reject "slice not a number" "--slice-us needs a whole number, got '5ms'" --slice-us 5ms
expect_reject "negative slice" "needs a whole number" --slice-us -5
expect_reject "watchdog over 30 s rejected" "--timeout-ms 30001 is out of range" --timeout-ms 30001
expect_reject "stray argument rejected" "unexpected argument 'foo'" foo
expect_reject "unknown option rejected" "unrecognized option" --bogus

out=$("$bin" --help 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "slice-us US" <<<"$out" && grep -q "default 5000" <<<"$out"; then
	ok "--help documents slice_us with its default"
else
	not_ok "--help documents slice_us with its default" "exit $rc: $out"
fi
tap_done
