#!/usr/bin/env bash
# plan: 8
# pool: a fixed number of runs; its only bound, 10 s an input, is far from any
# Every libFuzzer target (tests/fuzz, ASan + UBSan) replays its seeds and
# the inputs that once crashed it, then mutates them for a fixed number of
# runs from a fixed seed: no crash, leak, sanitizer report or time-out. The
# same inputs every time, so a finding here is reproducible, never luck of
# the draw; `make fuzz` explores with fresh seeds for longer.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# runs per target: about 3 s each on the reference machine (2 cores)
declare -A runs=([fuzz_cgfiles]=15000 [fuzz_config]=80000 [fuzz_cpuset]=30000
	[fuzz_http]=15000 [fuzz_kube]=600000 [fuzz_kubeconfig]=100000 [fuzz_report]=1000
	[fuzz_rules]=400000)
scale=${TIDEMARK_FUZZ_SCALE:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# every target the tree has (tests/fuzz/fuzz_*.c), built from its source
# as it is now: a target not built, or built from an older source, fails
# by name (it ran whatever build/fuzz held once)
for src in tests/fuzz/fuzz_*.c; do
	t=$(basename "$src" .c)
	bin=build/fuzz/$t
	if [ ! -x "$bin" ]; then
		not_ok "$t: built" "no $bin (make fuzz-build)"
		continue
	fi
	if [ "$src" -nt "$bin" ]; then
		not_ok "$t: built from its source" "$bin is older than $src (make fuzz-build)"
		continue
	fi
	if [ -z "${runs[$t]:-}" ]; then
		not_ok "$t: has its run count in tests/host/fuzz.sh" "add [$t]=N (about 3 s of runs)"
		continue
	fi
	mkdir -p "$tmp/$t" "$tmp/art-$t"
	seeds=$(ls tests/fuzz/corpus/$t 2>/dev/null | wc -l)
	kept=$(ls tests/fuzz/regress/$t 2>/dev/null | wc -l)
	dirs=("$tmp/$t" "tests/fuzz/corpus/$t")
	[ -d "tests/fuzz/regress/$t" ] && dirs+=("tests/fuzz/regress/$t")
	n=$((${runs[$t]} * scale))
	if "$bin" -seed=1 -runs="$n" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$tmp/art-$t/" "${dirs[@]}" >"$tmp/$t.log" 2>&1; then
		ok "$t: $seeds seeds, $kept kept crash inputs, then $(grep -o 'Done [0-9]* runs' "$tmp/$t.log" | tail -1 | cut -d' ' -f2) runs from seed 1: no finding"
	else
		# with what the target printed before it died (a deadly signal
		# carries no report of its own: an abort's reason is in these)
		not_ok "$t: finding" "$(grep -m4 -E 'ERROR|runtime error|SUMMARY|Test unit written' "$tmp/$t.log")" \
			"input (base64): $(grep -m1 '^Base64' "$tmp/$t.log")" \
			"before it: $(grep -m1 -B10 -E '^==[0-9]+== ?ERROR' "$tmp/$t.log" | grep -v -E '^(#[0-9]|INFO:|==[0-9]+== ?ERROR)')"
	fi
done
tap_done
