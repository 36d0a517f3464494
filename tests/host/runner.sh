#!/usr/bin/env bash
# plan: 41
# tests/run itself: it counts TAP lines, fails a program that exits non-zero
# without a "not ok", and names in its summary why a VM ended without the
# test's status (what tools/vm/run printed: its diagnosis, the first oops line
# and the RIP), since CI keeps only the tail of the output.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# the fake suites below run their VM tests: a quick host-only run of the
# real suite (TIDEMARK_SKIP_VM=1) must not reach them
unset TIDEMARK_SKIP_VM

top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat >"$dir/panic.sh" <<'X'
#!/bin/sh
# plan: 1
echo "ok 1 scheduler loads"
echo "vm/run: guest kernel panicked; the first report:" >&2
echo "  console| [  812.553201] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI" >&2
echo "  console| [  812.553890] CPU: 5 UID: 0 PID: 1234 Comm: kworker/5:1" >&2
echo "  console| [  812.554001] RIP: 0010:__schedule+0x44a/0x1060" >&2
echo "  console| [  812.560000] Kernel panic - not syncing: Fatal exception in interrupt" >&2
echo "vm/run: last console lines:" >&2
exit 125
X
cat >"$dir/quiet.sh" <<'X'
#!/bin/sh
# plan: 2
echo "ok 1 first"
echo "ok 2 second # SKIP not here"
exit 3
X
cat >"$dir/good.sh" <<'X'
#!/bin/sh
# plan: 2
echo "ok 1 first"
echo "not ok 2 second"
exit 1
X
chmod +x "$dir"/*.sh

out=$("$top/tests/run" "$dir/panic.sh" "$dir/quiet.sh" "$dir/good.sh" 2>&1)
rc=$?
expect_eq "exits non-zero when a check failed" 1 "$rc"
sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' <<<"$out")
expect_eq "one summary line with the counts" "3 passed, 3 failed, 1 skipped" "$sum"
want="FAILED $dir/panic.sh: exited 125 without reporting which check failed (vm/run: guest kernel panicked; Oops: int3: 0000 [#1] PREEMPT SMP NOPTI; RIP: 0010:__schedule+0x44a/0x1060)"
if grep -qxF -- "$want" <<<"$out"; then
	ok "a VM that panicked: the summary names the oops and where"
else
	not_ok "a VM that panicked: the summary names the oops and where" "$(grep FAILED <<<"$out")"
fi
if grep -qxF -- "FAILED $dir/quiet.sh: exited 3 without reporting which check failed" <<<"$out"; then
	ok "a program that exits non-zero without vm/run's words: no reason made up"
else
	not_ok "a program that exits non-zero without vm/run's words: no reason made up" "$(grep FAILED <<<"$out")"
fi
if grep -qxF -- "FAILED $dir/good.sh: 2 second" <<<"$out"; then
	ok "a failed check is named as reported"
else
	not_ok "a failed check is named as reported" "$(grep FAILED <<<"$out")"
fi
# Plans: a script's "# plan: N" (or "N or more") line, a binary's first
# "1..N". Results that do not match fail once more, by name; a plan met
# adds nothing.
plan() { # file plan-line body
	printf '#!/bin/sh\n%s\n%b' "$2" "$3" >"$dir/$1"
	chmod +x "$dir/$1"
}
plan p-short.sh "# plan: 3" 'echo "ok 1 a"\necho "ok 2 b"\n'
plan p-long.sh "# plan: 1" 'echo "ok 1 a"\necho "ok 2 b"\n'
plan p-none.sh "" 'echo "ok 1 a"\n'
plan p-bad.sh "# plan: three" 'echo "ok 1 a"\n'
plan p-min.sh "# plan: 2 or more" 'echo "ok 1 a"\necho "ok 2 b"\necho "ok 3 c # SKIP no"\n'
plan p-minshort.sh "# plan: 2 or more" 'echo "ok 1 a"\n'
plan p-exact.sh "# plan: 2" 'echo "ok 1 a"\necho "not ok 2 b"\nexit 1\n'
for n in 1 2 3; do plan p-ok$n.sh "# plan: 1" 'echo "ok 1 a"\n'; done
printf '#!/bin/sh\necho 1..3\necho "ok 1 a"\necho "ok 2 b"\n' >"$dir/p-bin"
printf '#!/bin/sh\necho "ok 1 a"\n' >"$dir/p-binnone"
chmod +x "$dir/p-bin" "$dir/p-binnone"
out=$("$top/tests/run" "$dir"/p-*.sh "$dir/p-bin" "$dir/p-binnone" 2>&1)
rc=$?
expect_eq "plans: what is counted (each mismatch one failure more)" "1|16 passed, 8 failed, 1 skipped" \
	"$rc|$(tail -n 1 <<<"$out")"
for want in "p-short.sh: planned 3 results, reported 2" "p-long.sh: planned 1 results, reported 2" \
	"p-none.sh: declares no plan (a \"# plan: N\" or \"# plan: N or more\" line)" \
	"p-bad.sh: its plan line '# plan: three' is neither 'N' nor 'N or more'" \
	"p-minshort.sh: planned 2 or more results, reported 1" "p-exact.sh: 2 b" \
	"p-bin: planned 3 results, reported 2" "p-binnone: printed no plan (1..N)"; do
	check "plans: named: $want" grep -qxF "FAILED $dir/$want" <<<"$out"
done
if ! grep -qE "FAILED $dir/p-(min|exact)\.sh: (planned|declares)" <<<"$out"; then
	ok "plans: a plan met (N, or N or more) adds no failure"
else
	not_ok "plans: a plan met (N, or N or more) adds no failure" "$(grep FAILED <<<"$out")"
fi
if awk '/^== the slowest:$/ { s = 1; next } s && /^ +[0-9]+ s  / { n++ } END { exit !(n == 10) }' <<<"$out"; then
	ok "the summary lists the ten slowest programs (of 12)"
else
	not_ok "the summary lists the ten slowest programs (of 12)" "$out"
fi

# The pool: the host programs and the "# pool:" VM tests two at a time,
# before the other VM tests, which run alone. A tree of its own, with a
# tools/vm/run that runs the command as it is.
tree=$dir/tree
mkdir -p "$tree/tests/vm" "$tree/tests/host" "$tree/tools/vm"
cp "$top/tests/run" "$tree/tests/run"
printf '#!/bin/sh\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n' >"$tree/tools/vm/run"
# the test kernel: there (FAKE_KERNEL unset), built, or failing
cat >"$tree/tools/kernel.sh" <<X
#!/bin/sh
case "\${FAKE_KERNEL:-}" in
"") echo /k; exit 0 ;;
build) [ "\$1" = --cached ] && exit 1
	# done once r.sh has run (or after 20 s): the host programs ran while it was built
	for _ in \$(seq 200); do grep -q "^end tests/host/r.sh" $dir/events && break; sleep 0.1; done
	echo "end kernel \$(date +%s.%N)" >>$dir/events; echo /k/new ;;
fail) [ "\$1" = --cached ] && exit 1; echo "kernel: fragment not satisfied; fix kernel-config/" >&2; exit 1 ;;
esac
X
fake() { # path vm-line verdict [plan]
	cat >"$tree/$1" <<X
#!/bin/sh
# vm: $2
# plan: ${4:-1}
echo "start \$0 \$(date +%s.%N)" >>$dir/events
sleep 1
echo "end \$0 \$(date +%s.%N)" >>$dir/events
echo "ok 1 ran"
$3
X
}
fake tests/host/h.sh host "true"
fake tests/host/g.sh host "true"
fake tests/host/p.sh host "true"
sed -i '2a # pool: times nothing' "$tree/tests/host/p.sh"
for q in q r; do
	fake tests/host/$q.sh host "true"
	sed -i '2a # pool: builds what the other reads\n# pool group: pair' "$tree/tests/host/$q.sh"
done
sed -i '2a # alone: measures the whole host' "$tree/tests/host/g.sh"
# beside the pool: 3 s, still running when the first pooled items start and end
fake tests/host/s.sh host "true"
sed -i -e '2a # beside: waits on timers' -e 's/^sleep 1$/sleep 3/' "$tree/tests/host/s.sh"
fake tests/vm/a.sh "--cpus 2 --icount" "true"
fake tests/vm/b.sh "--cpus 4 --icount --timeout 60" 'echo "not ok 2 b broke"' 2
fake tests/vm/c.sh "--cpus 2" "true"
fake tests/vm/d.sh "host" "true"
sed -i '2a # pool: times nothing' "$tree/tests/vm/a.sh" "$tree/tests/vm/b.sh"
sed -i '2a # pool: runs nothing it times' "$tree/tests/vm/d.sh"
chmod +x "$tree"/tests/*/*.sh "$tree/tools/vm/run" "$tree/tools/kernel.sh"
runtree() { (cd "$tree" && env "$@" tests/run tests/host/h.sh tests/host/g.sh tests/host/s.sh tests/host/p.sh tests/host/q.sh tests/host/r.sh tests/vm/a.sh tests/vm/b.sh tests/vm/c.sh tests/vm/d.sh 2>&1); }
at() { # start|end test
	awk -v k="$1" -v n="tests/vm/$2.sh" '$1 == k && $2 == n { print $3 }' "$dir/events"
}
hat() { awk -v k="$1" -v n="tests/host/$2.sh" '$1 == k && $2 == n { print $3 }' "$dir/events"; }
before() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a <= b) }'; }
ordered() { # desc t1 t2 [t3 t4 ...]: ok when each pair is in order
	local desc=$1
	shift
	while [ $# -ge 2 ]; do
		before "$1" "$2" || { not_ok "$desc" "$(cat "$dir/events")"; return; }
		shift 2
	done
	ok "$desc"
}

: >"$dir/events"
out=$(runtree env TIDEMARK_TEST_JOBS=2)
rc=$?
expect_eq "pool: the counts of tests run side by side" "10 passed, 1 failed, 0 skipped" "$(tail -n 1 <<<"$out")"
expect_eq "pool: a failure in the pool fails the run" 1 "$rc"
check "pool: the failure is named" grep -qxF "FAILED tests/vm/b.sh: 2 b broke" <<<"$out"
# the host programs first, beside the first pooled host program
ordered "pool: the host programs ran beside a host program with a \"# pool:\" line" \
	"$(hat start h)" "$(hat end p)" "$(hat start p)" "$(hat end h)"
ordered "pool: the \"# pool:\" host programs before the \"# pool:\" VM tests" \
	"$(hat start p)" "$(at start a)" "$(hat start p)" "$(at start b)"
ordered "pool: the host programs of one \"# pool group:\" one after another" \
	"$(hat end q)" "$(hat start r)"
ordered "pool: a host program with an \"# alone:\" line runs before the pool" \
	"$(hat end g)" "$(hat start h)" "$(hat end g)" "$(at start d)"
ordered "pool: a VM test without a \"# pool:\" line after the pool, alone" \
	"$(at end a)" "$(at start c)" "$(at end b)" "$(at start c)" "$(hat end h)" "$(at start c)"
ordered "pool: a test with a \"# pool:\" line runs in the pool" \
	"$(at start d)" "$(at start c)" "$(at end d)" "$(at start c)"
# with two slots, h's item and p start at once while s runs: s took none
ordered "pool: a \"# beside:\" host program beside the pool, in no slot" \
	"$(hat end g)" "$(hat start s)" "$(hat start s)" "$(hat end h)" "$(hat start h)" "$(hat end s)" \
	"$(hat start p)" "$(hat end h)" \
	"$(hat end s)" "$(at start c)"
# each pooled test's output in one piece: its header, its line, its tally
if awk '/^== tests\/vm\/[ab].sh$/ { h = $2; n = 0; next } h { n++; if (n == 1 && $0 != "ok 1 ran") bad = 1
	if (n == 1) next; if (index($0, "== " h ": ") != 1 && !(h == "tests/vm/b.sh" && $0 == "not ok 2 b broke")) bad = 1
	if (index($0, "== " h ": ") == 1) h = "" } END { exit bad }' <<<"$out"; then
	ok "pool: each test's output printed whole"
else
	not_ok "pool: each test's output printed whole" "$out"
fi
# no test kernel yet: built while the host programs run one after another
# (not beside a VM test), the "# alone:" one and every VM test after it
: >"$dir/events"
out=$(runtree env TIDEMARK_TEST_JOBS=2 FAKE_KERNEL=build)
kat() { awk -v k="$1" '$1 == k && $2 == "kernel" { print $3 }' "$dir/events"; }
expect_eq "kernel built: the same counts" "10 passed, 1 failed, 0 skipped" "$(tail -n 1 <<<"$out")"
ordered "kernel built: the host programs ran while it was built, one after another" \
	"$(hat end h)" "$(kat end)" "$(hat end h)" "$(hat start p)" "$(hat end p)" "$(hat start q)" \
	"$(hat end r)" "$(kat end)"
ordered "kernel built: a \"# beside:\" host program beside the build, done before the \"# alone:\" one" \
	"$(hat start s)" "$(hat end h)" "$(hat end s)" "$(hat start g)"
ordered "kernel built: the \"# alone:\" host program and the VM tests after it" \
	"$(kat end)" "$(hat start g)" "$(kat end)" "$(at start a)" "$(kat end)" "$(at start d)"
check "kernel built: said, with its time" grep -qE "^== the test kernel: /k/new \([0-9]+ s\)$" <<<"$out"
: >"$dir/events"
out=$(runtree env TIDEMARK_TEST_JOBS=2 FAKE_KERNEL=fail)
rc=$?
expect_eq "kernel build failed: the host programs counted, each VM test failed once" \
	"1|6 passed, 4 failed, 0 skipped" "$rc|$(tail -n 1 <<<"$out")"
check "kernel build failed: no VM test ran" bash -c "! grep -q 'tests/vm/' '$dir/events'"
check "kernel build failed: each VM test named, and why" \
	grep -qxF "FAILED tests/vm/c.sh: not run, the test kernel did not build (tools/kernel.sh, above)" <<<"$out"
check "kernel build failed: its words shown" grep -q "fragment not satisfied" <<<"$out"
# tools/kernel.sh --cached, which tests/run asks first: with no build in
# the cache, exit 1 at once and nothing built (it once built the kernel)
ksrc=$("$top/tools/ksrc.sh")
mkdir -p "$dir/kc"
ln -s "${ksrc%/*/*}" "$dir/kc/src"
TIDEMARK_CACHE=$dir/kc timeout 30 "$top/tools/kernel.sh" --cached >"$dir/kc.out" 2>&1
expect_eq "kernel.sh --cached, nothing cached: exit 1, no output, nothing built" "1||" \
	"$?|$(cat "$dir/kc.out")|$(ls "$dir/kc/kernel" 2>/dev/null)"
for bad in 0 two -1 100; do
	: >"$dir/events"
	out=$(runtree env TIDEMARK_TEST_JOBS=$bad)
	rc=$?
	if [ "$rc" = 2 ] && grep -q "TIDEMARK_TEST_JOBS must be a whole number from 1 to 99, not '$bad'" <<<"$out" &&
		! [ -s "$dir/events" ]; then
		ok "TIDEMARK_TEST_JOBS=$bad refused, named, nothing run"
	else
		not_ok "TIDEMARK_TEST_JOBS=$bad refused, named, nothing run" "exit $rc: $out"
	fi
done
tap_done
