#!/usr/bin/env bash
# Build the sched_ext test kernel from Debian's linux-source-6.12 plus
# kernel-config/tidemark.config and the VM-only testbed.config and vm.config, into
# a cache keyed by the source package version and the fragments' hash.
# Prints the cache directory on stdout. A cached build is reused as-is: only
# a changed source or fragment rebuilds. With --cached, only says: the
# directory and 0 when the build is there, 1 when it is not (nothing built).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=common.sh
. "$top/tools/common.sh"

frags=("$top/kernel-config/tidemark.config" "$top/kernel-config/testbed.config" "$top/kernel-config/vm.config")
# Compiler flags of the test kernel alone. -fno-var-tracking: the debug
# info is there for BTF (types), not for a debugger's variable locations;
# gcc's location tracking is about a tenth of each compile (net/ipv4/tcp.c
# 4.8 -> 3.4 s, kernel/sched/core.c 3.4 -> 3.1 s). Part of the cache key.
kcflags="-fno-var-tracking"
src=$(ksrc_dir)
key="$(ksrc_version)-$({ cat "${frags[@]}"; echo "KCFLAGS=$kcflags"; } | sha256sum | cut -c1-12)"
out="$TIDEMARK_CACHE/kernel/$key"

if [ -e "$out/.done" ]; then
	echo "$out"
	exit 0
fi
[ "${1:-}" != --cached ] || exit 1

mkdir -p "$TIDEMARK_CACHE/kernel"
exec 9>"$TIDEMARK_CACHE/kernel/.lock"
flock 9
# Another build may have finished while we waited for the lock.
if [ -e "$out/.done" ]; then
	echo "$out"
	exit 0
fi

echo "kernel: building $key into $out (about 13 min on 2 cores)" >&2
mkdir -p "$out"
log="$out/build.log"
{
	make -C "$src" O="$out" tinyconfig
	KCONFIG_CONFIG="$out/.config" "$src/scripts/kconfig/merge_config.sh" \
		-m -O "$out" "$out/.config" "${frags[@]}"
	make -C "$src" O="$out" olddefconfig
} >"$log" 2>&1 || { tail -30 "$log" >&2; echo "kernel: config failed, see $log" >&2; exit 1; }

# merge_config drops options whose dependencies are unmet without failing:
# check every requested option survived, so a bad fragment is a clear error
if ! kconfig_unmet "$out/.config" "${frags[@]}" >"$out/unmet"; then
	sed 's/^/kernel: /' "$out/unmet" >&2
	echo "kernel: fragment not satisfied; fix kernel-config/" >&2
	exit 1
fi

jobs=$(nproc)
if ! make -C "$src" O="$out" -j"$jobs" KCFLAGS="$kcflags" bzImage >>"$log" 2>&1; then
	tail -40 "$log" >&2
	echo "kernel: build failed, see $log" >&2
	exit 1
fi
grep -q 'CONFIG_SCHED_CLASS_EXT=y' "$out/.config"
touch "$out/.done"
echo "kernel: built $out/arch/x86/boot/bzImage" >&2
echo "$out"
