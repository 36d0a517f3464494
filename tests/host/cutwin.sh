#!/usr/bin/env bash
# plan: 9
# tests/lib/cutwin.py: only the windows wholly inside a load's own run are
# summed, and a series that cannot be matched to it is refused by name.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cut=tests/lib/cutwin.py
# 30 windows of 100 ms from 10.0 s, window i busy i% (BE i/2%); the load
# ran 10.25-12.55 s: skipping 0.5 s keeps windows 8 to 24 (10.8-12.5 s)
python3 -c '
import json
json.dump({"window_ms": 100.0, "clock": "mono", "start_s": 10.0, "node": list(range(30)),
           "be": [i / 2 for i in range(30)]}, open("'"$dir"'/ser", "w"))
json.dump({"start_s": 10.25, "end_s": 12.55}, open("'"$dir"'/load", "w"))
json.dump({"window_ms": 100.0, "start_s": 10.0, "node": list(range(30))}, open("'"$dir"'/local", "w"))'
out=$(python3 $cut "$dir/ser" "$dir/load" --skip-s 0.5 --line 20 --min 10)
got=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["windows"], d["node"]["mean"], d["node"]["max"], d["be"]["mean"], d["over_line_2"])' "$out" 2>&1)
expect_eq "windows 8-24 kept: 17, node mean 16, max 24, BE mean 8, 2 of 17 above the line + 2" \
	"17 16.0 24.0 8.0 0.1176" "$got"
out=$(python3 $cut "$dir/ser" "$dir/load" --line 20 --min 10)
expect_eq "the default skip of 1 s: windows 13-24" 12 \
	"$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["windows"])' "$out" 2>&1)"
# --group 4 --keep: windows 8-23 in four groups (8-11, ..., 20-23; 24 a
# group short, dropped), each the mean of its four, kept for a picture
out=$(python3 $cut "$dir/ser" "$dir/load" --skip-s 0.5 --group 4 --keep --min 4)
expect_eq "--group 4: four windows of 400 ms, their means, each one's start" \
	"4 400.0 [9.5, 13.5, 17.5, 21.5] [4.75, 6.75, 8.75, 10.75] [0.0, 0.4, 0.8, 1.2]" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); s=d["series"]; print(d["windows"], s["window_ms"], s["node"], s["be"], s["t_s"])' "$out" 2>&1)"
expect_eq "--group 4: the summary over the groups (mean 15.5, max 21.5)" "15.5 21.5" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["node"]["mean"], d["node"]["max"])' "$out" 2>&1)"
# "-": no load span, every window, on any clock
out=$(python3 $cut "$dir/local" - --min 30)
expect_eq "no load (-): all 30 windows of a series on another clock" "30 14.5" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["windows"], d["node"]["mean"])' "$out" 2>&1)"
err=$(python3 $cut "$dir/ser" "$dir/load" --min 20 2>&1 >/dev/null)
check "fewer windows than asked: refused, saying how many ($err)" \
	test $? -ne 0 -a -n "$(grep '12 windows of 100 ms inside' <<<"$err")"
err=$(python3 $cut "$dir/local" "$dir/load" 2>&1 >/dev/null)
check "a series on another clock: refused, naming it" \
	test $? -ne 0 -a -n "$(grep 'not on CLOCK_MONOTONIC' <<<"$err")"
echo '{"served": 1}' >"$dir/nospan"
err=$(python3 $cut "$dir/ser" "$dir/nospan" 2>&1 >/dev/null)
check "a load without its span: refused, naming it" \
	test $? -ne 0 -a -n "$(grep 'gives no start_s and end_s' <<<"$err")"
err=$(python3 $cut "$dir/ser" "$dir/missing" 2>&1 >/dev/null)
check "a missing file: refused, naming it" test $? -ne 0 -a -n "$(grep "$dir/missing" <<<"$err")"
tap_done
