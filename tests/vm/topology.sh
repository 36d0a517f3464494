#!/usr/bin/env bash
# vm: --cpus 16 --llcs 4 --timeout 200
# plan: 12
# pool: reads the topology; nothing timed
# tidemarkctl topology on a 16-vCPU guest with four L3 domains: hwloc's map,
# the sysfs cross-check, and an offline CPU.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

out=$(build/tidemarkctl topology --json 2>/tmp/topo.err)
rc=$?
expect_eq "topology exits 0" 0 "$rc"
note "$out"
field() { python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$out" "$1"; }
expect_eq "kind is l3" l3 "$(field 'd["kind"]')"
expect_eq "four L3 domains" 4 "$(field 'len(d["domains"])')"
expect_eq "domains 0-3 4-7 8-11 12-15" "0-3 4-7 8-11 12-15" "$(field '" ".join(x["cpus"] for x in d["domains"])')"
expect_eq "symmetric" True "$(field 'd["symmetric"]')"
if [ ! -s /tmp/topo.err ]; then ok "hwloc and sysfs agree (no report)"; else not_ok "hwloc and sysfs agree" "$(cat /tmp/topo.err)"; fi

echo 0 >/sys/devices/system/cpu/cpu5/online
out=$(build/tidemarkctl topology --json 2>/tmp/topo.err)
# the kernel drops an offline CPU's cache information: hwloc cannot place it
expect_eq "offline CPU 5: reported as unplaced" "5" "$(field 'd["unplaced"]')"
expect_eq "offline CPU 5: machine still has 16 CPUs" 16 "$(field 'd["cpus"]')"
expect_eq "offline CPU 5: not in domain 1's online CPUs" "4,6-7" "$(field 'd["domains"][1]["online"]')"
expect_eq "offline CPU 5: 15 online" 15 "$(field 'd["online"]')"
if [ ! -s /tmp/topo.err ]; then ok "sysfs still agrees with a CPU offline"; else not_ok "sysfs agrees with a CPU offline" "$(cat /tmp/topo.err)"; fi
echo 1 >/sys/devices/system/cpu/cpu5/online

text=$(build/tidemarkctl topology)
if grep -q "4 L3 domains, 16 CPUs (16 online)" <<<"$text"; then ok "text form summarises the map"; else not_ok "text form" "$text"; fi
tap_done
