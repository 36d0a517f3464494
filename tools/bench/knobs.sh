# shellcheck shell=bash
# The bench's BENCH_* knobs, checked in one place: sourced by guest.sh and
# by run.sh's host mode, which refuses a bad one before anything runs (on a
# server, not hours into a full run). Sets SETTLE_S, RATE_PER_CPU,
# LEVELS_ASKED, SETUPS_ASKED, ROUNDS_ASKED, SECONDS_ASKED and LOOPS; on a
# bad value prints what is wrong and returns 2.

# every setup some mode runs (guest.sh keeps a mode's own order)
BENCH_ALL_SETUPS="eevdf-weight1 eevdf-idle eevdf-cpumax eevdf-room scx_simple scx_flatcg split-alone split tidemark"

bench_knob_bad() { # name value want
	echo "bench: $1 must be $3, not '$2'" >&2
	return 2
}

bench_knobs() {
	local l s
	SETTLE_S=${BENCH_SETTLE_S:-3}
	[[ $SETTLE_S =~ ^[0-9]{1,2}(\.[0-9]+)?$ ]] ||
		{ bench_knob_bad BENCH_SETTLE_S "$SETTLE_S" "seconds from 0 to 99"; return; }
	RATE_PER_CPU=${BENCH_RATE_PER_CPU:-200}
	[[ $RATE_PER_CPU =~ ^[1-9][0-9]{1,3}$ ]] && [ "$RATE_PER_CPU" -le 2000 ] ||
		{ bench_knob_bad BENCH_RATE_PER_CPU "$RATE_PER_CPU" "requests/s from 10 to 2000"; return; }
	LOOPS=${BENCH_LOOPS:-200}
	[[ $LOOPS =~ ^[1-9][0-9]{0,4}$ ]] ||
		{ bench_knob_bad BENCH_LOOPS "$LOOPS" "hackbench loops from 1 to 99999"; return; }
	ROUNDS_ASKED=${BENCH_ROUNDS:-}
	[ -z "$ROUNDS_ASKED" ] || [[ $ROUNDS_ASKED =~ ^([1-9]|1[0-9]|20)$ ]] ||
		{ bench_knob_bad BENCH_ROUNDS "$ROUNDS_ASKED" "rounds from 1 to 20"; return; }
	SECONDS_ASKED=${BENCH_SECONDS:-}
	[ -z "$SECONDS_ASKED" ] || { [[ $SECONDS_ASKED =~ ^[1-9][0-9]{0,3}$ ]] && [ "$SECONDS_ASKED" -le 3600 ]; } ||
		{ bench_knob_bad BENCH_SECONDS "$SECONDS_ASKED" "seconds per run from 1 to 3600"; return; }
	LEVELS_ASKED=""
	for l in ${BENCH_LEVELS:-}; do
		[[ $l =~ ^[1-9][0-9]?$ ]] && [ "$l" -ge 5 ] && [ "$l" -le 90 ] ||
			{ bench_knob_bad BENCH_LEVELS "$l" "ONLINE load levels from 5 to 90 (% of the CPUs)"; return; }
		[[ " $LEVELS_ASKED " == *" $l "* ]] || LEVELS_ASKED+="$l "
	done
	SETUPS_ASKED=""
	for s in ${BENCH_SETUPS:-}; do
		[[ " $BENCH_ALL_SETUPS " == *" $s "* ]] ||
			{ bench_knob_bad BENCH_SETUPS "$s" "setups among: $BENCH_ALL_SETUPS"; return; }
		SETUPS_ASKED+="$s "
	done
	return 0
}
