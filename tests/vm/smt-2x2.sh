#!/usr/bin/env bash
# vm: --cpus 4 --threads 2 --timeout 400
# SMT expel on two cores of two threads. Four vCPUs share the two host
# cores: a kick to a busy sibling lands when the host runs its thread, a
# few ms later (BE's leave p50 1.4-3.2 ms here, against 0.03-0.06 ms with a
# host core per vCPU in smt-1x2.sh), for any scheduler alike, which bounds
# what the expel can do in this guest (ONLINE next to BE 19-25% of its time,
# against 59-66% without). The hold (BE not started next to running
# ONLINE) is judged as in smt-1x2.sh. See tests/lib/smt.sh.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/../lib/vmlib.sh"
CORES=2 MAX_ON=0.35 MIN_RATIO=2
. "$(dirname "$0")/../lib/smt.sh"
tap_done
