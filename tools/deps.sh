#!/usr/bin/env bash
# Install the Debian packages tidemark needs to build, test and demo.
# Idempotent: only packages that are missing are installed, and apt is not
# touched at all when everything is present.
set -euo pipefail

PKGS=(
	# BPF toolchain: clang >= 16 (clang 14 truncates 64-bit enum values)
	clang-16 llvm-16
	# libFuzzer and the sanitizers' runtimes (tests/fuzz, make fuzz)
	libclang-rt-16-dev
	# kernel source: libbpf, bpftool, sched_ext headers and the test kernel
	linux-source-6.12
	# libbpf / bpftool build and link deps
	libelf-dev zlib1g-dev libzstd-dev zstd pkg-config libcap-dev
	# topology, netlink (taskstats)
	libhwloc-dev hwloc libnl-3-dev libnl-genl-3-dev
	# tidemarkd: JSON configuration, HTTP reports; promtool checks /metrics
	libjansson-dev libmicrohttpd-dev prometheus
	# the report push and tidemarkctl status: HTTP(S) through libcurl;
	# tidemarkd reads a kubeconfig with libyaml, its inline PEM data decoded
	# by OpenSSL (libssl-dev, below)
	libcurl4-openssl-dev libyaml-dev
	# sd_notify (readiness, watchdog) for the systemd units; systemd-analyze
	# verifies them in the tests
	libsystemd-dev systemd
	# make bench: plots; host mode's IPC and LLC misses (perf stat), and
	# tests/bench/host-mode.sh asks perf whether a PMU counts
	gnuplot-nox linux-perf
	# the test kernel build
	bc bison flex libssl-dev dwarves cpio xz-utils lz4 python3
	# the node kernel: Debian's own 6.12 configs (make kernel-deb merges the
	# fragment into them, tests/host/kernel-deb.sh checks it); bindeb-pkg's tools
	linux-config-6.12 rsync kmod
	# VM test bed and loads; mkdir, rmdir and sleep as bash builtins for
	# tests/vm/load.sh's cgroup churn (an exec is slow beside its stress)
	qemu-system-x86 rt-tests stress-ng bash-builtins
	# tests: tidemarkd's HTTP endpoints from the shell, sysctl and pkill
	curl procps
	# tests: the endpoint test reads listening sockets (ss); pindir.sh acts as
	# another user (setpriv)
	iproute2 util-linux
	# make format and its check in make test (Debian's clang-format 14);
	# tests/host/lint.sh lints every shell script and Python helper
	clang-format shellcheck pyflakes3
	# tests/host/kustomize.sh reads the rendered manifests
	python3-yaml
	# make deb (Debian's own tooling, lintian checks the package; the
	# manual pages from --help), make image (a Debian root by mmdebstrap,
	# the archive read back by skopeo in the tests)
	debhelper dpkg-dev lintian help2man mmdebstrap skopeo
	# tests/host/deploy.sh runs README's Koordinator block (jq)
	jq
	# tests/host/nodemetric.sh: the stand-in API server, over TLS with a
	# CA the test makes
	openssl
)

# kubectl (its kustomize renders dist/kubernetes in the tests): Debian's
# kubernetes-client only where no kubectl is installed (another kubectl,
# e.g. upstream's, conflicts with the package)
command -v kubectl >/dev/null || PKGS+=(kubernetes-client)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run 'make deps' as root to install them" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Package lists may be absent or stale on a fresh machine.
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
