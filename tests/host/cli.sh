#!/usr/bin/env bash
# plan: 20
# Command-line validation of scx_tidemark, on the host (nothing is loaded:
# every case here must fail before touching BPF).
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
bin=${TIDEMARK_BUILD:-build}/scx_tidemark

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
expect_reject "--home without a mode" "expected PATH=strict|soft" --home /online/a
expect_reject "--home bad mode" "mode 'loose' must be strict or soft" --home /online/a=loose
expect_reject "--home bad demand" "demand '2k' must be a whole number" --home /online/a=soft,2k
expect_reject "--home-mode bad" "--home-mode 'hard': use strict or soft" --home-mode hard
expect_reject "--placement bad" "--placement 'yes': use on or off" --placement yes
expect_reject "--be-avoid-homes bad" "--be-avoid-homes 'maybe': use on or off" --be-avoid-homes maybe
expect_reject "--home-slack-pct over 100" "--home-slack-pct 101 is out of range" --home-slack-pct 101
expect_reject "--home-wait-us over 1 s" "--home-wait-us 1000001 is out of range" --home-wait-us 1000001
expect_reject "--peak-window-s under 10" "--peak-window-s 5 is out of range" --peak-window-s 5

out=$("$bin" --help 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "slice-us US" <<<"$out" && grep -q "default 5000" <<<"$out"; then
	ok "--help documents slice_us with its default"
else
	not_ok "--help documents slice_us with its default" "exit $rc: $out"
fi
if grep -q "home-wait-us US" <<<"$out" && grep -q "default 2000" <<<"$out"; then
	ok "--help documents home_wait_us with its default"
else
	not_ok "--help documents home_wait_us with its default" "$out"
fi
# docs/scheduler.md's table of tunables is the one tidemarkctl prints from the ABI's table.
ctl=${TIDEMARK_BUILD:-build}/tidemarkctl
md=$("$ctl" tunables --markdown)
expect_eq "tidemarkctl tunables --markdown: a row per tunable and load-time setting" 16 "$(grep -c '^|' <<<"$md")"
if grep -qxF -f <(printf '%s\n' "$md") docs/scheduler.md && [ "$(grep -cxF -f <(printf '%s\n' "$md") docs/scheduler.md)" -eq 16 ]; then
	ok "docs/scheduler.md's table of tunables matches tidemarkctl tunables --markdown"
else
	not_ok "docs/scheduler.md's table of tunables matches" "$(diff <(printf '%s\n' "$md") <(grep -A15 '^| tunable | unit' docs/scheduler.md))"
fi
tap_done
