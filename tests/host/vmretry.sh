#!/usr/bin/env bash
# plan: 10
# tools/vm/run boots once more when QEMU dies of a signal before the guest
# began the command (QEMU 7.2's multi-threaded TCG crashes now and then while
# a 16-vCPU guest boots), never after it began, never more than once; and
# tests/run's summary names each repeated boot. A stand-in QEMU plays the
# guest: it finds the share in its arguments and writes what init would.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
cat >"$dir/bin/qemu-system-x86_64" <<'X'
#!/bin/bash
# modes: crash-first (SIGSEGV on the first boot), crash-always, crash-after
# (SIGSEGV once the command began)
for a in "$@"; do
	case $a in local,id=share,path=*) s=${a#local,id=share,path=}; s=${s%%,*} ;; esac
done
n=$(cat "$FAKE_STATE" 2>/dev/null || echo 0)
echo $((n + 1)) >"$FAKE_STATE"
case $FAKE_MODE in
crash-first) [ "$n" = 0 ] && kill -SEGV $$ ;;
crash-always) kill -SEGV $$ ;;
crash-after) : >"$s/started"; echo "half" >"$s/out"; kill -SEGV $$ ;;
esac
: >"$s/started"
echo "the command ran" >"$s/out"
echo 0 >"$s/status"
X
chmod +x "$dir/bin/qemu-system-x86_64"
: >"$dir/bzImage"

vm() { # mode
	rm -f "$dir/state"
	FAKE_MODE=$1 FAKE_STATE=$dir/state TIDEMARK_KERNEL=$dir/bzImage PATH="$dir/bin:$PATH" \
		"$top/tools/vm/run" --timeout 30 -- true 2>&1
}

out=$(vm crash-first)
rc=$?
expect_eq "a crash before the command: booted again, the command's status" 0 "$rc"
expect_eq "two boots" 2 "$(cat "$dir/state")"
check "it says so" grep -q "^vm/run: QEMU died of signal 11 before the command started; booting again" <<<"$out"
check "the command's output once" test "$(grep -c "the command ran" <<<"$out")" = 1

out=$(vm crash-always)
rc=$?
expect_eq "crashing again: not a third boot" 2 "$(cat "$dir/state")"
if [ $rc = 125 ] && grep -q "VM ended without the command's status (boot failure or QEMU error, QEMU exit 139)" <<<"$out"; then
	ok "crashing again: exit 125 and the diagnosis"
else
	not_ok "crashing again: exit 125 and the diagnosis" "exit $rc: $out"
fi

out=$(vm crash-after)
rc=$?
expect_eq "a crash after the command began: no second boot" 1 "$(cat "$dir/state")"
if [ $rc = 125 ] && ! grep -q "booting again" <<<"$out"; then
	ok "a crash after the command began: exit 125, not repeated"
else
	not_ok "a crash after the command began: exit 125, not repeated" "exit $rc: $out"
fi

# tests/run names the repeated boot in its summary
cat >"$dir/t.sh" <<'X'
#!/bin/sh
# plan: 1
echo "vm/run: QEMU died of signal 11 before the command started; booting again" >&2
echo "ok 1 fine"
X
chmod +x "$dir/t.sh"
out=$("$top/tests/run" "$dir/t.sh" 2>&1)
check "tests/run: the summary names the repeated boot" \
	grep -qxF "NOTE: VM booted again after QEMU crashed before the test began: $dir/t.sh: 1" <<<"$out"
check "tests/run: still a pass" grep -qx "1 passed, 0 failed, 0 skipped" <<<"$out"
tap_done
