#!/usr/bin/env bash
# plan: 11
# alone: it reads the whole host's CPU time (one spinning task of two CPUs must read 50%)
# tests/lib/busy.py, the node busy meter the VM tests judge the watermark by:
# a scan of /proc that starts late (a vCPU the host stalled) must not count
# the stall into the window. Measured on one spinning task.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

ncpu=$(getconf _NPROCESSORS_ONLN)
want=$((100 / ncpu))
sh -c 'while :; do :; done' &
spin=$!
sleep 0.3
# shellcheck disable=SC2034 # read below by name (declare -n)
mapfile -t plain < <(tests/lib/busy.py --windows 2)
# shellcheck disable=SC2034
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
# the meter's own CPU is the last field, part of busy
line=$(cat "$d/out")
read -r _ b _ _ mname m _ <<<"$line"
check "the meter's own share reported within busy ($line)" \
	test "$mname" = meter -a -n "$m" -a "${m:-1}" -le "${b:-0}"
rm -rf "$d"
out=$(tests/lib/busy.py --cgroup nonsense 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "NAME=PATH, got 'nonsense'" <<<"$out"; then ok "bad --cgroup refused"; else not_ok "bad --cgroup refused" "$rc: $out"; fi
tap_done
