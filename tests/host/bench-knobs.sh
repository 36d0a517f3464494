#!/usr/bin/env bash
# plan: 20
# The bench's BENCH_* knobs (tools/bench/knobs.sh): good values taken as
# given, defaults where unset, every bad one refused naming the knob and what
# it must be; host mode refuses one before it checks or touches anything else.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

knobs() { # env assignments...: run bench_knobs, print what it set
	env -i PATH="$PATH" "$@" bash -c '. tools/bench/knobs.sh && bench_knobs &&
		echo "settle=$SETTLE_S rate=$RATE_PER_CPU loops=$LOOPS rounds=$ROUNDS_ASKED seconds=$SECONDS_ASKED levels=$LEVELS_ASKED setups=$SETUPS_ASKED"'
}

expect_eq "unset: the defaults, nothing asked" \
	"settle=3 rate=200 loops=200 rounds= seconds= levels= setups=" "$(knobs)"
expect_eq "set: taken, a repeated level once" \
	"settle=0.5 rate=175 loops=20 rounds=2 seconds=8 levels=10 50 70  setups=split tidemark " \
	"$(knobs BENCH_SETTLE_S=0.5 BENCH_RATE_PER_CPU=175 BENCH_LOOPS=20 BENCH_ROUNDS=2 BENCH_SECONDS=8 \
		BENCH_LEVELS="10 50 10 70" BENCH_SETUPS="split tidemark")"
expect_eq "the ends of each range taken" \
	"settle=99 rate=2000 loops=99999 rounds=20 seconds=3600 levels=5 90  setups=" \
	"$(knobs BENCH_SETTLE_S=99 BENCH_RATE_PER_CPU=2000 BENCH_LOOPS=99999 BENCH_ROUNDS=20 BENCH_SECONDS=3600 \
		BENCH_LEVELS="5 90")"
expect_eq "and the lower ends" "settle=0 rate=10 loops=1 rounds=1 seconds=1 levels= setups=" \
	"$(knobs BENCH_SETTLE_S=0 BENCH_RATE_PER_CPU=10 BENCH_LOOPS=1 BENCH_ROUNDS=1 BENCH_SECONDS=1)"

# each refused, named, with exit 2
bad() { # desc pattern assignment
	expect_fail "$1" 2 "$2" knobs "$3"
}
bad "a rate past 2000" "BENCH_RATE_PER_CPU must be requests/s from 10 to 2000, not '2001'" BENCH_RATE_PER_CPU=2001
bad "a rate under 10" "BENCH_RATE_PER_CPU must be .*, not '9'" BENCH_RATE_PER_CPU=9
bad "a rate with a leading zero (octal to bash)" "BENCH_RATE_PER_CPU must be .*, not '010'" BENCH_RATE_PER_CPU=010
bad "a rate that is not a number" "BENCH_RATE_PER_CPU must be .*, not 'fast'" BENCH_RATE_PER_CPU=fast
bad "a level under 5" "BENCH_LEVELS must be ONLINE load levels from 5 to 90 (% of the CPUs), not '4'" BENCH_LEVELS="30 4"
bad "a level past 90" "BENCH_LEVELS must be .*, not '95'" BENCH_LEVELS=95
bad "a level with a sign" "BENCH_LEVELS must be .*, not '-30'" BENCH_LEVELS=-30
bad "an unknown setup, the known ones listed" \
	"BENCH_SETUPS must be setups among: eevdf-weight1 .* tidemark, not 'cfs'" BENCH_SETUPS="tidemark cfs"
bad "no rounds" "BENCH_ROUNDS must be rounds from 1 to 20, not '0'" BENCH_ROUNDS=0
bad "too many rounds" "BENCH_ROUNDS must be .*, not '21'" BENCH_ROUNDS=21
bad "seconds past an hour" "BENCH_SECONDS must be seconds per run from 1 to 3600, not '3601'" BENCH_SECONDS=3601
bad "fractional seconds" "BENCH_SECONDS must be .*, not '1.5'" BENCH_SECONDS=1.5
bad "no loops" "BENCH_LOOPS must be hackbench loops from 1 to 99999, not '0'" BENCH_LOOPS=0
bad "a settle of 100 s" "BENCH_SETTLE_S must be seconds from 0 to 99, not '100'" BENCH_SETTLE_S=100

# host mode: the knob refused first (this host has no sched_ext, and the
# refusal must not wait for that, or for anything a run would create)
expect_fail "host mode refuses a bad knob before anything else" 2 \
	"BENCH_LEVELS must be .*, not '3'" env BENCH_LEVELS=3 BENCH_OUT=/nonexistent/x tools/bench/run.sh host quick
check "nothing created then" test ! -e /nonexistent/x -a ! -e /sys/fs/cgroup/tidemark-bench
tap_done
