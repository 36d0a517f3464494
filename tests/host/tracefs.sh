#!/usr/bin/env bash
# plan: 7
# tests/lib/tracefs.py's record() on a fake tracefs: the buffer is sized and
# the events armed before the delay (while the load a test measures is not
# on yet: done at its end, they stalled a TCG guest and a bursty service was
# caught catching up in the first windows), and only tracing_on is switched
# once the delay is over; afterwards everything is off again.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/events/sched/sched_switch" "$dir/cg/a"
echo 0 >"$dir/tracing_on"
echo 1408 >"$dir/buffer_size_kb"
echo "stale" >"$dir/trace"
echo 0 >"$dir/events/sched/sched_switch/enable"
echo "4242" >"$dir/cg/a/cgroup.threads"

# each sleep record()'s caller sees: the state of the fake files then
python3 - "$dir" "$(dirname "$0")/../lib" >"$dir/out" 2>"$dir/err" <<'EOF2'
import json, os, sys
d, lib = sys.argv[1], sys.argv[2]
sys.path.insert(0, lib)
import tracefs

def state():
    rd = lambda p: open(os.path.join(d, p)).read().strip()
    return {"on": rd("tracing_on"), "kb": rd("buffer_size_kb"), "trace": rd("trace"),
            "ev": rd("events/sched/sched_switch/enable")}

seen = []
real = tracefs.time.sleep
def sleep(s):
    seen.append(dict(state(), s=s))
    real(min(s, 0.01))
tracefs.time.sleep = sleep
tracefs.threads_of = lambda cg: {4242} if cg == "a" else set()
owner = tracefs.record(d, ["sched/sched_switch"], 0.05, {"a": "a"}, delay=0.5)
print(json.dumps({"seen": seen, "after": state(), "owner": owner}))
EOF2
rc=$?
check "record() runs on a fake tracefs" test $rc -eq 0
out=$(cat "$dir/out")
q() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$out" "$1"; }
check "the delay is slept first, then the measurement ($(q 'len(d["seen"])') sleeps)" \
	test "$(q 'd["seen"][0]["s"] == 0.5 and len(d["seen"]) >= 2')" = True
check "during the delay: the buffer sized ($(q 'd["seen"][0]["kb"]') kB), emptied, the event armed" \
	test "$(q 'd["seen"][0]["kb"] == "16384" and d["seen"][0]["trace"] == "" and d["seen"][0]["ev"] == "1"')" = True
check "during the delay: tracing is off, nothing recorded yet" test "$(q 'd["seen"][0]["on"]')" = 0
check "after the delay: tracing on" test "$(q 'd["seen"][1]["on"]')" = 1
check "afterwards: tracing and the event off" test "$(q 'd["after"]["on"] + d["after"]["ev"]')" = 00
check "the cgroup's threads named" test "$(q 'd["owner"].get("4242")')" = a
tap_done
