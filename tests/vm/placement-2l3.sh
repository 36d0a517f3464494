#!/usr/bin/env bash
# vm: --cpus 16 --llcs 2 --timeout 400
# plan: 16
# CCX placement on 16 vCPUs in two L3 domains of 8: see tests/lib/placement.sh.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"
DOMAINS="0-7/8-15"
DEMAND=5000
# shellcheck source=../lib/placement.sh
. "$(dirname "$0")/../lib/placement.sh"
tap_done
