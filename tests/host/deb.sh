#!/usr/bin/env bash
# plan: 13
# pool: builds and reads packages, times nothing
# pool group: packages
# make deb: the package Debian's tooling builds from the tree (dpkg-
# buildpackage on a staged copy with dist/debian as debian/), clean under
# lintian, holding the programs, units, manual pages, docs and the
# configuration as conffiles, its Depends found by dpkg-shlibdeps. Installing
# and purging it in a Debian root is tests/host/image.sh's.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rel=$(sed -n 's/^TM_RELEASE := //p' Makefile)
deb=build/deb/tidemark_${rel}_amd64.deb

if make -s --no-print-directory deb >"$tmp/make.log" 2>&1 && [ -f "$deb" ]; then
	ok "make deb builds $deb ($(du -k "$deb" | cut -f1) KiB)"
else
	not_ok "make deb builds $deb" "$(tail -30 "$tmp/make.log")"
	tap_done
fi
# lintian exits 0 with warnings: the tags are counted
lintian --no-tag-display-limit "$deb" >"$tmp/lintian" 2>&1
note "lintian: $(grep -c '^[EW]: ' "$tmp/lintian") errors and warnings"
expect_eq "lintian: no error, no warning" "" "$(grep -E '^[EW]: ' "$tmp/lintian")"

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/files"
missing=""
for f in /usr/sbin/scx_tidemark /usr/sbin/tidemarkd /usr/sbin/tidemarkctl \
	/lib/systemd/system/scx_tidemark.service /lib/systemd/system/tidemarkd.service \
	/usr/share/man/man8/scx_tidemark.8.gz /usr/share/man/man8/tidemarkd.8.gz /usr/share/man/man8/tidemarkctl.8.gz \
	/usr/share/doc/tidemark/README.md /usr/share/doc/tidemark/config.md /usr/share/doc/tidemark/copyright \
	/usr/share/doc/tidemark/examples/grafana/tidemark.json /usr/share/doc/tidemark/examples/kubernetes/daemonset.yaml \
	/etc/tidemark/tidemarkd.json /etc/tidemark/scx_tidemark.env /etc/tidemark/tidemarkd.env; do
	grep -qx "$f" "$tmp/files" || missing="$missing $f"
done
expect_eq "the package holds the programs, units, manual pages, docs and examples" "" "$missing"
expect_eq "its conffiles: the three files of /etc/tidemark" \
	"/etc/tidemark/scx_tidemark.env /etc/tidemark/tidemarkd.env /etc/tidemark/tidemarkd.json" \
	"$(dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles | sort | xargs)"
depends=$(dpkg-deb -f "$deb" Depends)
if grep -q "libcurl4" <<<"$depends" && grep -q "libhwloc15" <<<"$depends" && ! grep -q "libbpf" <<<"$depends"; then
	ok "Depends from dpkg-shlibdeps: libcurl (linked, not dlopen'd), hwloc; libbpf is built in"
else
	not_ok "Depends from dpkg-shlibdeps" "$depends"
fi
dpkg-deb -x "$deb" "$tmp/root"
for b in scx_tidemark tidemarkd tidemarkctl; do
	v=$("$tmp/root/usr/sbin/$b" --version 2>&1)
	# the commit too when built from a git checkout
	if [[ $v =~ ^$b\ ${rel//./\\.}(\+git\.[0-9a-f]+(-dirty)?)?\  ]]; then ok "the packaged $b says release $rel ($v)"; else not_ok "the packaged $b says release $rel" "$v"; fi
done
check "the packaged tidemarkd accepts its own /etc/tidemark/tidemarkd.json" \
	"$tmp/root/usr/sbin/tidemarkd" --check --config "$tmp/root/etc/tidemark/tidemarkd.json"
u=$tmp/root/lib/systemd/system/scx_tidemark.service
if grep -qx "ConditionPathIsDirectory=/sys/kernel/sched_ext" "$u" && grep -q "^ExecStart=/usr/sbin/scx_tidemark " "$u" &&
	grep -q "^Documentation=file:///usr/share/doc/tidemark/README.md" "$u"; then
	ok "the packaged scheduler unit: skipped without sched_ext, the packaged paths"
else
	not_ok "the packaged scheduler unit" "$(cat "$u")"
fi
hard=$(readelf -d "$tmp/root/usr/sbin/tidemarkd" | grep -cE "BIND_NOW|FLAGS_1.*NOW")
expect_eq "built with Debian's hardening flags (tidemarkd bound now)" 1 "$([ "$hard" -ge 1 ] && echo 1 || echo 0)"
dpkg-deb --ctrl-tarfile "$deb" | tar -xf - -C "$tmp" ./prerm ./postrm
check "prerm puts back the cgroup values on removal (tidemarkd --cleanup)" grep -q "tidemarkd --cleanup" "$tmp/prerm"
check "postrm removes the records and pins on purge" grep -q "rm -rf /run/tidemark /sys/fs/bpf/tidemark" "$tmp/postrm"
tap_done
