#!/usr/bin/env bash
# plan: 9
# The layering the code claims: each BPF part of tidemark.bpf.c uses only the
# parts before it (it declares no function it does not define), and in no
# program does a file call into a file that calls it. The judge is shown to
# catch both on purpose-made cases first, so a judge that finds nothing
# cannot pass the real tree.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

judge=tests/lib/layering.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the judge, on cases made to fail
cat >"$tmp/part.bpf.h" <<'C'
static __always_inline bool later_part(void);
static int uses_it(void)
{
	return later_part();
}
C
out=$(python3 $judge bpf "$tmp/part.bpf.h" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q "declares later_part()" <<<"$out"; then
	ok "judge: a forward declaration between parts is found"
else
	not_ok "judge: a forward declaration between parts is found" "exit $rc: $out"
fi
mkdir -p "$tmp/obj/x"
printf 'int b(int);\nint a(int n) { return n ? b(n - 1) : 0; }\n' >"$tmp/a.c"
printf 'int a(int);\nint b(int n) { return n ? a(n - 1) : 1; }\n' >"$tmp/b.c"
printf 'int a(int);\nint c(void) { return a(3); }\n' >"$tmp/c.c"
for f in a b c; do cc -c -o "$tmp/obj/x/$f.o" "$tmp/$f.c" || not_ok "cc $f.c"; done
out=$(python3 $judge objs "$tmp"/obj/x/{a,b,c}.o 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q "circle: x/a.c -> x/b.c (b); x/b.c -> x/a.c (a)" <<<"$out"; then
	ok "judge: two files calling each other are a circle, and only they"
else
	not_ok "judge: two files calling each other are a circle, and only they" "exit $rc: $out"
fi
out=$(python3 $judge objs "$tmp"/obj/x/{a,c}.o 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "2 files, 1 calls between them, 0 circles" <<<"$out"; then
	ok "judge: a call one way is no circle"
else
	not_ok "judge: a call one way is no circle" "exit $rc: $out"
fi
out=$(python3 $judge objs "$tmp/obj/x/none.o" 2>&1)
rc=$?
if [ $rc -eq 2 ]; then ok "judge: a missing object is an error, not a pass"; else not_ok "judge: a missing object is an error, not a pass" "exit $rc: $out"; fi

# the tree
parts=$(ls bpf/*.bpf.h bpf/tidemark.bpf.c)
out=$(python3 $judge bpf $parts 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
	ok "BPF parts in order: no part declares what it does not define ($(wc -w <<<"$parts") files)"
else
	not_ok "BPF parts in order: no part declares what it does not define" "$out"
fi
progs=$(make -s --no-print-directory layering-objs 2>&1)
[ "$(wc -l <<<"$progs")" -eq 4 ] || not_ok "make layering-objs lists the four programs (tidemarkd twice: whole and node-only)" "$progs"
while read -r prog objs; do
	out=$(python3 $judge objs $objs 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		ok "$prog: no file calls into a file that calls it (${out##*layering: })"
	else
		not_ok "$prog: no file calls into a file that calls it" "$out"
	fi
done <<<"$progs"
tap_done
