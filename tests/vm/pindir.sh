#!/usr/bin/env bash
# vm: --cpus 2 --timeout 300
# plan: 15
# pool: refusals and file modes; nothing timed
# The pin directory cannot be hijacked: one made first by another user (or
# group/world-writable, or a link) is refused by scx_tidemark, which leaves
# it untouched and pins nothing, and by tidemarkctl and tidemarkd, which
# never open pins there; the loader creates its own 0700, root's.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

pins=/sys/fs/bpf/tidemark
log=/tmp/scx.log
mkdir -p /sys/fs/cgroup/be
note "bpffs: $(stat -c '%a %U' /sys/fs/bpf)"
rm -rf $pins

# another user makes it first (as they can where bpffs is world-writable)
if [ "$(stat -c '%a' /sys/fs/bpf | cut -c2-)" = 77 ] || [ "$(stat -c '%a' /sys/fs/bpf)" = 1777 ]; then
	setpriv --reuid 65534 --regid 65534 --clear-groups mkdir $pins
else
	mkdir $pins && chown 65534:65534 $pins
fi
setpriv --reuid 65534 --regid 65534 --clear-groups mkdir $pins/mine
build/scx_tidemark --be /be >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then kill -INT $pid; fi
wait $pid
rc=$?
check "scx_tidemark refuses a pin directory of uid 65534 (exit $rc)" test $rc -ne 0
check "its message names the owner" grep -q "$pins is owned by uid 65534 with mode 0755.*refused" "$log"
expect_eq "the directory is left as it was (owner, content)" "65534 mine" "$(stat -c %u $pins) $(ls $pins | tr '\n' ' ' | sed 's/ $//')"
expect_eq "no scheduler stays attached" disabled "$(scx_state)"

# tidemarkctl and tidemarkd do not open pins under it
out=$(build/tidemarkctl show 2>&1)
rc=$?
check "tidemarkctl refuses it (exit $rc)" test $rc -ne 0
check "and says why ($out)" grep -q "owned by uid 65534" <<<"$out"

# root's but group-writable: refused as well
rm -rf $pins && mkdir $pins && chmod 0770 $pins
build/scx_tidemark --be /be >"$log" 2>&1
rc=$?
check "a group-writable pin directory refused (exit $rc)" test $rc -ne 0
check "with its mode named" grep -q "mode 0770" "$log"

# a link to a directory elsewhere
rm -rf $pins && mkdir -p /tmp/elsewhere && ln -s /tmp/elsewhere $pins
build/scx_tidemark --be /be >"$log" 2>&1
rc=$?
check "a link in its place refused (exit $rc)" grep -q "is not a directory" "$log"
rm -f $pins

# none there: the loader makes its own
sched_start --be /be
pid=$sched_pid
wait_log "$log" "loaded" 30
expect_eq "the loader's pin directory: root's, 0700" "0 700" "$(stat -c '%u %a' $pins)"
check "tidemarkctl reads it" build/tidemarkctl show

# made writable while running: readers stop trusting it
chmod 0777 $pins
out=$(build/tidemarkctl set suppress_pct=50 2>&1)
rc=$?
check "tidemarkctl set refused once the directory is world-writable (exit $rc)" test $rc -ne 0
check "and says why ($out)" grep -q "mode 0777" <<<"$out"
cat >/tmp/td.json <<EOC
{"version": 1, "memory_eviction": {"enabled": false}, "cpu_eviction": {"enabled": false},
 "interference": {"enabled": false}, "fallback": {"enabled": false}, "cgroups": {"be": ["/be"]},
 "watermarks": {"cpu": {"forbid_pct": 30, "suppress_pct": 40}}, "report": {"listen": "127.0.0.1:9477"}}
EOC
build/tidemarkd --config /tmp/td.json >/tmp/td.log 2>&1 &
td=$!
wait_log /tmp/td.log "mode 0777" 10
check "tidemarkd refuses it, says so" grep -q "mode 0777.*scheduler maps left alone" /tmp/td.log
sleep 2 # two of its rounds
kill $td
wait $td
chmod 0700 $pins
check "and changes no tunable (suppress_pct stays 65, not its 40)" grep -q "suppress_pct=65 " <<<"$(build/tidemarkctl show | head -n 1)"
kill -INT $pid
wait $pid
tap_done
