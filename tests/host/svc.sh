#!/usr/bin/env bash
# plan: 13
# tm-svc on the host: every arrival accounted for, the served rate, the
# client's timeout sheds what the pool cannot serve, bad input refused.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
bin=build/tm-svc

get() { # json path... -> value
	python3 -c 'import json,sys
v = json.loads(sys.argv[1])
for k in sys.argv[2:]: v = v[k]
print(v)' "$@"
}

out=$("$bin" --rate 500 --work-us 100 --workers 2 --footprint-kb 64 --seconds 1 --json)
check "JSON parses" get "$out" served
read -r off iss srv shed late rate < <(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
print(d["offered"], d["issued"], d["served"], d["shed"], d["late"], d["served_rate"])' "$out")
expect_eq "500 arrivals offered in 1 s" 500 "$off"
expect_eq "every arrival issued, served, shed or late ($iss issued, $srv served, $shed shed, $late late)" \
	"$off $iss" "$((srv + shed + late)) $((srv + late))"
check "a light load is all served ($srv of $off)" test "$srv" -ge 495
check "the served rate is served over the window ($rate/s)" \
	python3 -c "import sys; sys.exit(abs($rate - $srv) > 0.01)"
expect_eq "one request latency per served request" "$srv" "$(get "$out" request_us n)"
# the run's span on CLOCK_MONOTONIC (a meter cuts it out by them): the
# arrivals' grid, the --seconds asked, ending before the process did
now=$(python3 -c 'import time; print(time.clock_gettime(time.CLOCK_MONOTONIC))')
check "the run's span on CLOCK_MONOTONIC: 1 s of arrivals, ended before now" \
	python3 -c "import sys; s, e = $(get "$out" start_s), $(get "$out" end_s); sys.exit(not (abs(e - s - 1) < 1e-3 and 0 < e <= $now))"
# every request costs one dispatcher wakeup for its arrival or its reply at least
check "dispatcher wakeups counted ($(get "$out" dispatcher_wakeup_us n))" \
	test "$(get "$out" dispatcher_wakeup_us n)" -ge "$srv"

# one worker, 10 ms of work, 200 requests/s: twice what it can do; at most
# half is served, and nothing served is older than the 50 ms timeout
out=$("$bin" --rate 200 --work-us 10000 --workers 1 --seconds 1 --timeout-ms 50 --json)
srv=$(get "$out" served) lost=$(($(get "$out" shed) + $(get "$out" late))) max=$(get "$out" request_us max)
note "overloaded: served $srv, shed or late $lost, request max $max us"
check "overloaded: at most what one worker can do served ($srv of 200)" test "$srv" -le 105
expect_eq "overloaded: the rest shed or late" 200 "$((srv + lost))"
check "overloaded: nothing served past the timeout ($max us)" \
	python3 -c "import sys; sys.exit($max > 50000)"

err=$("$bin" --rate 200 --jitter-us 5000 2>&1 >/dev/null)
rc=$?
check "jitter of a whole period refused, naming it (exit $rc)" \
	test "$rc" = 2 -a -n "$(grep "not below the period of 5000 us" <<<"$err")"
err=$("$bin" --rate 100000 --seconds 100 2>&1 >/dev/null)
rc=$?
check "a run past the request cap refused, naming it (exit $rc)" \
	test "$rc" = 2 -a -n "$(grep "more than 4000000" <<<"$err")"
tap_done
