#!/usr/bin/env bash
# Print the path of the extracted linux-source-6.12 tree (extracting it once).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=common.sh
. "$top/tools/common.sh"
ksrc_dir
