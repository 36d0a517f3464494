#!/usr/bin/env bash
# plan: 19
# make mutants' short version: the list (tests/mutants/mutants.ini) still
# applies to the tree, a stale entry is refused by name, and each mutant of
# a decision header that a unit test owns is killed by that unit test
# alone: the unit test is built against the mutated header (placed first
# on its include path; the tree is not touched) and must fail. make mutants
# runs every mutant against all of its tests, VM tests included.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(tools/mutants.py --check 2>&1)
rc=$?
n=$(sed -n 's/^mutants: \([0-9]*\) in the list, each applies once$/\1/p' <<<"$out")
if [ $rc = 0 ] && [ "${n:-0}" -ge 25 ]; then ok "the list applies to the tree: $n mutants"; else not_ok "the list applies to the tree (25 mutants or more)" "exit $rc: $out"; fi

# a stale entry (its text no longer in the file) and a missing test, named
sed -e 's/^from = return avg_mcpu < floor_mcpu;$/from = return avg_mcpu <= floor_mcpu;/' \
	-e 's#^tests = build/tests/test_vtime tests/vm/weight.sh$#tests = build/tests/test_vtime tests/vm/no-such.sh#' \
	tests/mutants/mutants.ini >"$tmp/stale.ini"
out=$(tools/mutants.py --check --list "$tmp/stale.ini" 2>&1)
rc=$?
if [ $rc = 2 ] && grep -q "\[floor-owed-always\] (line [0-9]*): its text occurs 0 times in bpf/tidemark_policy.h, not once" <<<"$out" &&
	grep -q "\[cpu-weight-ignored\] (line [0-9]*): no test tests/vm/no-such.sh" <<<"$out"; then
	ok "a stale entry and a missing test refused, each named (exit 2)"
else
	not_ok "a stale entry and a missing test refused, each named (exit 2)" "exit $rc: $out"
fi

# header mutants against their unit tests
make -s --no-print-directory all >/dev/null 2>&1 || { not_ok "the tree builds" "make all failed"; tap_done; }
while read -r id file tests; do
	case "$file" in bpf/tidemark_policy.h | userspace/policy/*.h) ;; *) continue ;; esac
	unit=""
	for t in $tests; do [[ $t == build/tests/test_* ]] && unit=${t#build/tests/}; done
	[ -n "$unit" ] || continue
	mkdir -p "$tmp/$id/inc" "$tmp/$id/out"
	if ! tools/mutants.py --apply "$id" "$tmp/$id/inc/$(basename "$file")"; then
		not_ok "$id: killed by $unit" "it does not apply"
		continue
	fi
	if ! make -s --no-print-directory UNIT_MUT_INC="-I$tmp/$id/inc" UNIT_OUT="$tmp/$id/out" \
		"$tmp/$id/out/$unit" >"$tmp/$id/build.log" 2>&1; then
		not_ok "$id: killed by $unit" "it does not build: $(tail -5 "$tmp/$id/build.log")"
		continue
	fi
	"$tmp/$id/out/$unit" >"$tmp/$id/run.log" 2>&1
	rc=$?
	failed=$(grep -cE '^not ok [0-9]+' "$tmp/$id/run.log")
	if [ $rc -ne 0 ] && [ "$failed" -gt 0 ]; then
		ok "$id: killed by $unit ($failed of its checks fail: $(grep -m1 -E '^not ok' "$tmp/$id/run.log" | cut -c1-80))"
	else
		not_ok "$id: killed by $unit" "it survived: exit $rc, no check failed"
	fi
done < <(tools/mutants.py --check | tail -n +2)
tap_done
