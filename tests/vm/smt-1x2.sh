#!/usr/bin/env bash
# vm: --cpus 2 --threads 2 --timeout 400 --kprobe p:tidemark_smtshare/blocked,dequeue_task,flags=$arg3:u32
# plan: 13
# SMT expel on one core of two threads, each vCPU on a host core of its
# own: a kick reaches the sibling in about 0.1 ms, so what is left next to
# ONLINE is the policy's own. See tests/lib/smt.sh.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"
CORES=1 MAX_ON=0.05 MIN_RATIO=5 JUDGE_LEAVE=1
# shellcheck source=../lib/smt.sh
. "$(dirname "$0")/../lib/smt.sh"
tap_done
