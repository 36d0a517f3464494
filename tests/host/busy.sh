#!/usr/bin/env bash
# alone: it reads the whole host's CPU time (one spinning task of two CPUs must read 50%)
# tests/lib/busy.py, the node busy meter the VM tests judge the watermark by:
# a scan of /proc that starts late (a vCPU the host stalled) must not count
# the stall into the window. Measured on one spinning task.
. "$(dirname "$0")/../lib/lib.sh"

ncpu=$(getconf _NPROCESSORS_ONLN)
want=$((100 / ncpu))
sh -c 'while :; do :; done' &
spin=$!
sleep 0.3
mapfile -t plain < <(tests/lib/busy.py --windows 2)
mapfile -t slow < <(tests/lib/busy.py --windows 2 --scan-delay 0.4)
kill $spin
wait $spin 2>/dev/null
hi=$((want + 8))
lo=$((want - 3))
for name in plain slow; do
	declare -n w=$name
	expect_eq "$name: two windows" 2 "${#w[@]}"
	for line in "${w[@]}"; do
		note "$name: $line (one spinning task of $ncpu CPUs: $want%)"
		b=$(awk '{print $2}' <<<"$line")
		# the 0.4 s late scan read against a 1 s window is 40% more
		check "$name: busy ${b:-none}% within $lo-$hi%" within "${b:-0}" "$lo" "$hi"
	done
	unset -n w
done
# --at: the window begins at the time given, not at python's start
t=$(date +%s.%N)
at=$(awk -v t="$t" 'BEGIN { printf "%.3f", t + 1 }')
line=$(tests/lib/busy.py --at "$at" --seconds 0.2)
end=$(date +%s.%N)
check "--at: measured from the time given (ended $(awk -v e="$end" -v a="$at" 'BEGIN { printf "%.2f", e - a }') s after it)" \
	awk -v e="$end" -v a="$at" 'BEGIN { exit !(e >= a + 0.2) }'
# the meter's own CPU is the last field, part of busy
read -r _ b _ _ mname m _ <<<"$line"
check "the meter's own share reported within busy ($line)" \
	test "$mname" = meter -a -n "$m" -a "${m:-1}" -le "${b:-0}"
out=$(tests/lib/busy.py --at "$t" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "is .* s in the past" <<<"$out"; then ok "--at in the past refused"; else not_ok "--at in the past refused" "$rc: $out"; fi
# --ready, then --go: the window (--delay) counts from the go file
d=$(mktemp -d)
tests/lib/busy.py --ready "$d/ready" --go "$d/go" --delay 0.3 --seconds 0.2 >"$d/out" &
bp=$!
for _ in $(seq 100); do [ -e "$d/ready" ] && break; sleep 0.05; done
check "--ready: the file appears once the meter has started" test -e "$d/ready"
sleep 0.5
check "--go: nothing measured before the go file" test ! -s "$d/out"
t=$(date +%s.%N)
: >"$d/go"
wait $bp
end=$(date +%s.%N)
check "--go: measured --delay + --seconds after it ($(awk -v e="$end" -v a="$t" 'BEGIN { printf "%.2f", e - a }') s)" \
	awk -v e="$end" -v a="$t" -v n="$(wc -l <"$d/out")" 'BEGIN { exit !(e >= a + 0.5 && n == 1) }'
out=$(tests/lib/busy.py --at "$end" --go "$d/go" 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "\-\-at and \-\-go together" <<<"$out"; then ok "--at with --go refused"; else not_ok "--at with --go refused" "$rc: $out"; fi
rm -rf "$d"
out=$(tests/lib/busy.py --cgroup nonsense 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "NAME=PATH, got 'nonsense'" <<<"$out"; then ok "bad --cgroup refused"; else not_ok "bad --cgroup refused" "$rc: $out"; fi
tap_done
