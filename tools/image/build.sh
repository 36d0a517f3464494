#!/usr/bin/env bash
# make image: an OCI image archive of the Debian package on a minimal Debian
# bookworm root, offline from the machine's Debian archive (mmdebstrap; the
# package installed by apt), runtime libraries only.
#   tools/image/build.sh DEB OUT_TAR NAME TAG
set -euo pipefail
deb=$(realpath "$1")
out=$2
name=$3
tag=$4
[ "$(id -u)" = 0 ] || { echo "image: mmdebstrap builds the root as root" >&2; exit 1; }
[ -f "$deb" ] || { echo "image: no package at $1 (make deb)" >&2; exit 1; }
dir=$(dirname "$out")
mkdir -p "$dir"
root=$dir/root.tar
trap 'rm -f "$root"' EXIT
# the essential set (a shell and coreutils, for kubectl exec) with merged
# /usr, the package and what it depends on, nothing recommended; no docs but
# copyrights, no manuals, locales or info pages
mmdebstrap --quiet --variant=essential --aptopt='APT::Install-Recommends "false"' \
	--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
	--include="$deb" \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/var/log/*' \
	bookworm "$root"
"$(dirname "$0")/oci.py" "$root" "$out" "$name" "$tag" \
	--cmd=/usr/sbin/tidemarkctl --cmd=--help \
	--label "org.opencontainers.image.title=tidemark" \
	--label "org.opencontainers.image.version=$tag" \
	--label "org.opencontainers.image.description=tidemark colocation node runtime: scx_tidemark, tidemarkd, tidemarkctl"
