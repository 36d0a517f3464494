#!/usr/bin/env bash
# vm: --cpus 2 --timeout 200
# plan: 18
# A scheduler restart keeps the operator's runtime changes: tidemarkctl class
# and cap are recorded in /run/tidemark/runtime.json and applied again to
# the next scheduler, after its class rules. The maps a scheduler killed
# with -9 leaves pinned are refused by the tools.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
mkdir -p $cg/be $cg/x
rm -f /run/tidemark/runtime.json
scx() { build/scx_tidemark --be /be >>/tmp/scx.log 2>&1 & spid=$!; wait_state enabled 20; }
stop() { kill -INT $spid; wait $spid; }
hex8() { python3 -c 'import struct,sys; print(struct.pack(sys.argv[1], *map(int, sys.argv[2:])).hex())' "$@"; }
capof() { tests/lib/bpfmap.py lookup /sys/fs/bpf/tidemark/be_caps "$(hex8 "<Q" "$(stat -c %i "$cg$1")")" 2>/dev/null | cut -c1-16; }

scx || { not_ok "scheduler loads" "$(cat /tmp/scx.log)"; tap_done; }
ok "scheduler loads"
build/tidemarkctl class /x be >/dev/null
build/tidemarkctl cap /be 300 >/dev/null
rec=$(python3 -c 'import json; o=json.load(open("/run/tidemark/runtime.json")); print(o["classes"], o["caps"])')
expect_eq "recorded: /x be, /be capped at 300" "{'/x': 'be'} {'/be': 300}" "$rec"

note "restart"
stop
: >/tmp/scx.log
scx || { not_ok "scheduler loads again" "$(cat /tmp/scx.log)"; tap_done; }
check "the loader says it applied them" grep -q "2 runtime changes applied again" /tmp/scx.log
expect_eq "/x still be after the restart" "be (from /x)" "$(build/tidemarkctl class /x | cut -d' ' -f2-)"
expect_eq "/be still capped at 300 mCPU (operator's)" "$(hex8 "<II" 300 0)" "$(capof /be)"
in_cgroup be stress-ng --temp-path /tmp --cpu 2 --cpu-method int64 --timeout 30s >/dev/null 2>&1
h=$!
# measured as tests/vm/cap.sh measures the cap: three 2 s windows, averaged
tests/lib/busy.py --delay 1 --windows 3 --seconds 2 --cgroup be=/be >/tmp/w
while read -r l; do note "BE under its restored cap: $l"; done </tmp/w
b=$(awk '{s+=$6} END{print int(s/NR)}' /tmp/w)
if within "$b" 10 20; then ok "the cap acts after the restart: /be at $b% of 2 CPUs (300 mCPU = 15%)"; else not_ok "the cap acts after the restart" "/be at $b%"; fi
kill $h 2>/dev/null
wait $h 2>/dev/null

note "undone at runtime: undone after the next restart too"
build/tidemarkctl class /x none >/dev/null
build/tidemarkctl cap /be off >/dev/null
stop
: >/tmp/scx.log
scx || { not_ok "scheduler loads a third time" "$(cat /tmp/scx.log)"; tap_done; }
expect_eq "/x has no class of its own" "system" "$(build/tidemarkctl class /x | awk '{print $2}')"
expect_eq "/be has no cap" "" "$(capof /be)"

note "kill -9: the maps stay pinned, and the tools refuse them"
recs() { python3 -c 'import json; o=json.load(open("/run/tidemark/runtime.json")); print(o["classes"], o["caps"])'; }
before=$(recs)
kill -9 $spid
wait $spid 2>/dev/null
check "the dead scheduler's pins are still there" test -e /sys/fs/bpf/tidemark/tunables
for c in "set suppress_pct=30" "show" "class /x be" "cap /be 100"; do
	out=$(build/tidemarkctl $c 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && grep -q "the scheduler that pinned /sys/fs/bpf/tidemark is gone" <<<"$out"; then
		ok "tidemarkctl $c refused: the scheduler is gone"
	else
		not_ok "tidemarkctl $c refused: the scheduler is gone" "$rc: $out"
	fi
done
expect_eq "nothing recorded by the refused commands" "$before" "$(recs)"
: >/tmp/scx.log
scx || { not_ok "scheduler loads after a kill -9" "$(cat /tmp/scx.log)"; tap_done; }
check "a new instance's maps are taken" bash -c "build/tidemarkctl show >/dev/null"

note "a damaged record does not stop the scheduler, and says so"
stop
echo '{"version": 1, "classes": [' >/run/tidemark/runtime.json
: >/tmp/scx.log
scx || not_ok "scheduler loads with a damaged record" "$(cat /tmp/scx.log)"
check "the damage is named" grep -q "runtime changes not applied: /run/tidemark/runtime.json" /tmp/scx.log
out=$(build/tidemarkctl class /x be 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "not recorded for a restart" <<<"$out"; then ok "tidemarkctl says the change is not recorded"; else not_ok "tidemarkctl says the change is not recorded" "$rc: $out"; fi
stop
expect_eq "loader exits 0" 0 "$?"
rm -f /run/tidemark/runtime.json
tap_done
