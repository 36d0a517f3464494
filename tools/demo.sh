#!/usr/bin/env bash
# make demo: boot the test VM, load tidemark, run a short mixed load, print
# the result. Everything it needs is built by the Makefile first.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
echo "demo: booting a 2-CPU test VM (QEMU TCG) with the tidemark kernel"
exec tools/vm/run --cpus 2 --timeout 300 -- tools/demo-guest.sh
