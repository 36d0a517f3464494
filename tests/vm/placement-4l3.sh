#!/usr/bin/env bash
# vm: --cpus 16 --llcs 4 --timeout 400
# plan: 17
# CCX placement on 16 vCPUs in four L3 domains of 4: see tests/lib/placement.sh.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"
DOMAINS="0-3/4-7/8-11/12-15"
DEMAND=3000
# shellcheck source=../lib/placement.sh
. "$(dirname "$0")/../lib/placement.sh"
tap_done
