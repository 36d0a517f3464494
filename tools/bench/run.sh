#!/usr/bin/env bash
# make bench: boot the bench VM (icount, so figures repeat), run every setup
# side by side (tools/bench/guest.sh), then write docs/benchmarks.md, the raw
# results (docs/bench/MODE.jsonl) and a latency plot (docs/bench/MODE-latency.png).
#
#   tools/bench/run.sh quick|full
#
# One vCPU: with -icount QEMU runs vCPUs round-robin on one host thread, so a
# remote wakeup waits for the target vCPU's turn (1-8 ms measured) and would
# swamp every scheduler's latency; see README "Why the priority test uses one
# vCPU". CCX figures come from tests/vm/placement-*.sh (16 vCPUs, no icount).
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-quick}
case $mode in quick | full) ;; *) echo "bench: mode must be quick or full, got '$mode'" >&2; exit 2 ;; esac
command -v gnuplot >/dev/null || { echo "bench: gnuplot missing; run 'make deps'" >&2; exit 1; }
share=$(mktemp -d)
trap 'rm -rf "$share"' EXIT
timeout=900
[ "$mode" = full ] && timeout=5400
start=$(date +%s)
tools/vm/run --cpus 1 --icount --mem 2048 --timeout "$timeout" --share "$share" -- tools/bench/guest.sh "$mode"
mkdir -p docs/bench
cp "$share/results.jsonl" "docs/bench/$mode.jsonl"
python3 tools/bench/report.py "$mode" "docs/bench/$mode.jsonl" "$(($(date +%s) - start))" >docs/benchmarks.md
gnuplot -e "datafile='docs/bench/$mode-latency.dat'; outfile='docs/bench/$mode-latency.png'" tools/bench/latency.gp
rm -f "docs/bench/$mode-latency.dat"
echo "bench: wrote docs/benchmarks.md, docs/bench/$mode.jsonl, docs/bench/$mode-latency.png"
