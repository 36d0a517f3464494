#!/usr/bin/env bash
# tests/run itself: it counts TAP lines, fails a program that exits non-zero
# without a "not ok", and names in its summary why a VM ended without the
# test's status (what tools/vm/run printed: its diagnosis, the first oops line
# and the RIP), since CI keeps only the tail of the output.
. "$(dirname "$0")/../lib/lib.sh"

top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat >"$dir/panic.sh" <<'X'
#!/bin/sh
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
echo "ok 1 first"
echo "ok 2 second # SKIP not here"
exit 3
X
cat >"$dir/good.sh" <<'X'
#!/bin/sh
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
tap_done
