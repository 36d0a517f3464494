#!/usr/bin/env bash
# Runs libFuzzer targets: each one replays its seeds and the inputs that once
# crashed it, then fuzzes for SECONDS. New inputs go to build/fuzz/corpus,
# a crash to build/fuzz/crash-TARGET-*; copy a crash into
# tests/fuzz/regress/TARGET/ once fixed so every run replays it.
#
#   tests/fuzz/run.sh SECONDS TARGET...
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
secs=$1
shift
rc=0
for t in "$@"; do
	mkdir -p "build/fuzz/corpus/$t" "tests/fuzz/regress/$t" build/fuzz/logs
	log=build/fuzz/logs/$t.log
	if "build/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="build/fuzz/crash-$t-" "build/fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
		"tests/fuzz/regress/$t" >"$log" 2>&1; then
		echo "$t: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$log" | tail -1), corpus $(ls "build/fuzz/corpus/$t" | wc -l) inputs"
	else
		echo "$t: FAILED, see $log"
		grep -m3 -E "ERROR|runtime error|SUMMARY" "$log"
		rc=1
	fi
done
exit $rc
