# shellcheck shell=bash
# Shared paths for tidemark's build scripts. Sourced, not executed.
# TIDEMARK_CACHE holds everything too big or too slow to live in the checkout:
# the extracted kernel tree and built kernels. Default outside the checkout so
# a fresh clone reuses it.
TIDEMARK_CACHE=${TIDEMARK_CACHE:-/var/cache/tidemark}
KSRC_TARBALL=${KSRC_TARBALL:-/usr/src/linux-source-6.12.tar.xz}

ksrc_version() {
	dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown
}

# Extract the kernel tree once per Debian package version; print its path.
ksrc_dir() {
	local ver dir lock
	ver=$(ksrc_version)
	dir="$TIDEMARK_CACHE/src/$ver"
	if [ ! -e "$dir/.extracted" ]; then
		if [ ! -r "$KSRC_TARBALL" ]; then
			echo "tidemark: $KSRC_TARBALL missing; run 'make deps'" >&2
			return 1
		fi
		# tools/ksrc.sh and tools/kernel.sh run at once under make -j:
		# one extracts, the other waits for it (the lock goes with the
		# caller, a $(...) subshell)
		mkdir -p "$TIDEMARK_CACHE/src"
		exec {lock}>"$TIDEMARK_CACHE/src/.lock"
		flock "$lock"
		if [ ! -e "$dir/.extracted" ]; then
			echo "tidemark: extracting $KSRC_TARBALL into $dir" >&2
			rm -rf "$dir.tmp"
			mkdir -p "$dir.tmp"
			tar -xf "$KSRC_TARBALL" -C "$dir.tmp"
			rm -rf "$dir"
			mv "$dir.tmp" "$dir"
			touch "$dir/.extracted"
		fi
		exec {lock}>&-
	fi
	echo "$dir/linux-source-6.12"
}

# kconfig_unmet CONFIG FRAGMENT...: every option the fragments ask for, set
# or unset, is so in CONFIG (after olddefconfig, which drops an option whose
# dependencies are unmet without a word). Prints each that is not, as
# "FRAGMENT asks 'LINE', config has: GOT"; returns 1 if any. A later
# fragment's word on an option is the one asked.
kconfig_unmet() {
	local config=$1 frag line opt got bad=0
	shift
	declare -A want_line=() want_frag=()
	for frag in "$@"; do
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=*) opt=${line%%=*} ;;
			"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} ;;
			*) continue ;;
			esac
			want_line[$opt]=$line want_frag[$opt]=${frag##*/}
		done <"$frag"
	done
	for opt in "${!want_line[@]}"; do
		line=${want_line[$opt]}
		# unset: "is not set", or absent where its dependencies hide it
		if { [[ $line == CONFIG_* ]] && ! grep -qxF "$line" "$config"; } ||
			{ [[ $line == "#"* ]] && grep -q "^$opt=" "$config"; }; then
			got=$(grep -E "^$opt=|^# $opt is not set" "$config" || echo "absent")
			echo "${want_frag[$opt]} asks '$line', config has: $got"
			bad=1
		fi
	done
	return $bad
}
