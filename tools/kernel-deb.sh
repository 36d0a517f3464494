#!/usr/bin/env bash
# make kernel-deb: a Debian kernel package for tidemark's nodes, built from
# Debian's linux-source-6.12 with Debian's own config (linux-config-6.12)
# plus kernel-config/tidemark.config, by the kernel's bindeb-pkg.
#   tools/kernel-deb.sh OUTDIR [--config-only] [--flavour NAME] [--fragment FILE]
# --config-only: the merged config and its check, no build (what make test
# runs: the build takes hours on 2 cores). --flavour: Debian's config to
# start from (amd64_none_amd64, the default, or amd64_none_cloud-amd64).
# --fragment: another fragment in place of tidemark.config (tests).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=common.sh
. "$top/tools/common.sh"

out=${1:?usage: tools/kernel-deb.sh OUTDIR [--config-only] [--flavour NAME] [--fragment FILE]}
shift
config_only=0 flavour=amd64_none_amd64 frag=$top/kernel-config/tidemark.config
while [ $# -gt 0 ]; do
	case $1 in
	--config-only) config_only=1 ;;
	--flavour) flavour=${2:?--flavour NAME}; shift ;;
	--fragment) frag=$(realpath "${2:?--fragment FILE}"); shift ;;
	*) echo "kernel-deb: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
debcfg=/usr/src/linux-config-6.12/config.$flavour.xz
[ -r "$debcfg" ] || { echo "kernel-deb: $debcfg missing: apt install linux-config-6.12 (make deps)" >&2; exit 1; }
src=$(ksrc_dir)
mkdir -p "$out"
out=$(realpath "$out")
log=$out/config.log

{
	xzcat "$debcfg" >"$out/.config"
	# Debian signs its own builds: its key files are not in the source
	# package, and a local build has no use for them
	"$src/scripts/config" --file "$out/.config" --set-str SYSTEM_TRUSTED_KEYS "" \
		--set-str SYSTEM_REVOCATION_KEYS "" --set-str MODULE_SIG_KEY "certs/signing_key.pem"
	KCONFIG_CONFIG="$out/.config" "$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag"
	make -C "$src" O="$out" olddefconfig
} >"$log" 2>&1 || { tail -30 "$log" >&2; echo "kernel-deb: config failed, see $log" >&2; exit 1; }

if ! kconfig_unmet "$out/.config" "$frag" >"$out/unmet"; then
	sed 's/^/kernel-deb: /' "$out/unmet" >&2
	echo "kernel-deb: Debian's $flavour config with ${frag##*/} lacks what the fragment asks" >&2
	exit 1
fi
# what the fragment changed in Debian's config
xzcat "$debcfg" >"$out/debian.config"
"$src/scripts/diffconfig" "$out/debian.config" "$out/.config" >"$out/changed" || true
echo "kernel-deb: Debian's $flavour config plus ${frag##*/}: every option it asks for holds;" \
	"$(grep -c . "$out/changed") changed from Debian's (see $out/changed)"
[ $config_only = 0 ] || exit 0

ver=$(ksrc_version)
echo "kernel-deb: building linux-image for $ver+tidemark1 in $out (hours on 2 cores; log $out/build.log)" >&2
start=$(date +%s)
if ! make -C "$src" O="$out" -j"$(nproc)" LOCALVERSION=-tidemark \
	KDEB_PKGVERSION="${ver}+tidemark1" KDEB_SOURCENAME=linux-tidemark bindeb-pkg >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log" >&2
	echo "kernel-deb: build failed, see $out/build.log" >&2
	exit 1
fi
echo "kernel-deb: built in $(( ($(date +%s) - start) / 60 )) min:" >&2
ls "$out"/../linux-image-*tidemark*.deb
