#!/usr/bin/env bash
# plan: 15
# pool: builds and reads packages, times nothing
# pool group: packages
# make image: the OCI archive the DaemonSet pulls (loaded by podman, docker
# or ctr), built offline from the Debian archive. Read back by skopeo (the
# image library podman uses) in both its OCI and its Docker form, tagged as
# kubectl kustomize dist/kubernetes names it, runtime libraries only; its
# programs run inside its root. In that root the package is then purged
# (nothing of it left) and installed again on this node without sched_ext.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
root=$tmp/root
cleanup() {
	for m in proc sys/fs/bpf sys/fs/cgroup sys; do umount "$root/$m" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
img=build/image/tidemark.tar

if make -s --no-print-directory image >"$tmp/make.log" 2>&1 && [ -f "$img" ]; then
	ok "make image builds $img ($(du -m "$img" | cut -f1) MiB)"
else
	not_ok "make image builds $img" "$(tail -30 "$tmp/make.log")"
	tap_done
fi
ref=$(kubectl kustomize dist/kubernetes | python3 -c '
import sys, yaml
ds = [d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] == "DaemonSet"][0]
print(" ".join(sorted({c["image"] for c in ds["spec"]["template"]["spec"]["containers"]})))')
# the archive, both ways a runtime reads it; skopeo checks every digest
if skopeo copy -q "oci-archive:$img" "dir:$tmp/oci" 2>"$tmp/err" &&
	skopeo copy -q "docker-archive:$img" "dir:$tmp/docker" 2>>"$tmp/err"; then
	ok "skopeo reads it as an OCI archive and as a Docker archive, digests checked"
else
	not_ok "skopeo reads it as an OCI archive and as a Docker archive" "$(cat "$tmp/err")"
fi
names=$(tar -xOf "$img" index.json manifest.json | python3 -c '
import json, sys
dec = json.JSONDecoder()
s = sys.stdin.read()
idx, end = dec.raw_decode(s)
dock = json.loads(s[end:])
a = idx["manifests"][0]["annotations"]
print(a["io.containerd.image.name"], dock[0]["RepoTags"][0])')
expect_eq "tagged as the DaemonSet names it ($ref)" "docker.io/library/$ref $ref" "$names"
arch=$(skopeo inspect --config "oci-archive:$img" | python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["architecture"], c["os"], len(c["rootfs"]["diff_ids"]))')
expect_eq "its config: amd64 linux, one layer" "amd64 linux 1" "$arch"

mkdir -p "$root"
layer=$(ls -S "$tmp/oci" | head -1)
tar -xzf "$tmp/oci/$layer" -C "$root"
bad=$(cd "$root" && { ls usr/bin/gcc* usr/bin/cc usr/bin/clang* usr/bin/ld usr/lib/gcc 2>/dev/null; find usr/include -type f 2>/dev/null | head -3; find . -name '*.h' -o -name '*.a' | head -3; })
expect_eq "runtime libraries only: no compiler, linker, headers or static libraries" "" "$bad"
for b in scx_tidemark tidemarkd tidemarkctl; do
	v=$(chroot "$root" /usr/sbin/$b --version 2>&1)
	if [[ $v == "$b "* ]]; then ok "$b runs inside the image's root ($v)"; else not_ok "$b runs inside the image's root" "$v"; fi
done
cp dist/kubernetes/tidemarkd.json "$root/tmp/k8s.json"
out=$(chroot "$root" /usr/sbin/tidemarkd --check --config /tmp/k8s.json 2>&1)
check "tidemarkd --check accepts the shipped Kubernetes configuration inside the root ($out)" test $? -eq 0
# what the DaemonSet's init container does, here on a node without sched_ext
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /sys/fs/cgroup "$root/sys/fs/cgroup" 2>/dev/null
out=$(chroot "$root" /usr/sbin/tidemarkctl preflight 2>&1)
rc=$?
if [ $rc = 1 ] && grep -q "MISSING  sched_ext" <<<"$out"; then
	ok "the preflight inside the root names sched_ext missing here, exit 1"
else
	not_ok "the preflight inside the root names sched_ext missing here" "exit $rc" "$out"
fi

# removed without a trace: purge in the root, every packaged path gone
chroot "$root" dpkg -L tidemark | grep -v '^/\.$' >"$tmp/files"
mkdir -p "$root/run/tidemark"
echo '{"saved": []}' >"$root/run/tidemark/saved.json"
if chroot "$root" dpkg --purge tidemark >"$tmp/purge" 2>&1; then ok "dpkg --purge tidemark"; else not_ok "dpkg --purge tidemark" "$(cat "$tmp/purge")"; fi
left=$(while read -r f; do
	case $f in /etc | /lib | /lib/systemd | /lib/systemd/system | /usr | /usr/sbin | /usr/share | /usr/share/doc | /usr/share/man | /usr/share/man/man8) continue ;; esac
	[ -e "$root$f" ] && echo "$f"
done <"$tmp/files"; [ -e "$root/run/tidemark" ] && echo /run/tidemark; [ -e "$root/etc/tidemark" ] && echo /etc/tidemark)
expect_eq "nothing of the package left after the purge (files, conffiles, /run/tidemark)" "" "$left"
check "dpkg forgot it" test -z "$(chroot "$root" dpkg-query -W -f '${Status}' tidemark 2>/dev/null | grep -v not-installed)"
# and installed again, on a node where the scheduler cannot run
cp "build/deb/tidemark_$(sed -n 's/^TM_RELEASE := //p' Makefile)_amd64.deb" "$root/tmp/tm.deb"
if chroot "$root" dpkg -i /tmp/tm.deb >"$tmp/install" 2>&1; then
	ok "installing the package on a node without sched_ext succeeds"
else
	not_ok "installing the package on a node without sched_ext succeeds" "$(cat "$tmp/install")"
fi
cond=$(grep '^Condition' "$root/lib/systemd/system/scx_tidemark.service")
out=$(systemd-analyze condition "$cond" 2>&1)
if grep -q "$cond.*failed\|Conditions failed" <<<"$out"; then
	ok "and its scheduler unit's condition says why it would not start here"
else
	not_ok "its scheduler unit's condition says why it would not start here" "$out"
fi
note "$(grep "$cond" <<<"$out" | head -1)"
tap_done
