#!/usr/bin/env bash
# plan: 5
# pool: builds and reads packages, times nothing
# pool group: packages
# README's "Run it on your nodes" blocks, run as far as this machine allows
# (no systemd as init, no cluster, no registry): the package's block in a
# fresh Debian root with apt, line by line as written; the image's with a
# local OCI layout for the registry and kubectl's kustomize for the cluster;
# Koordinator's jq lines on a slo-controller-config of Koordinator's format.
# A line that cannot run here is named in a comment, not passed over silently.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
root=$tmp/root
cleanup() {
	for m in proc sys/fs/cgroup sys; do umount "$root/$m" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# block N: the Nth ```sh block of the section, comments and continuations joined
block() {
	awk -v want="$1" '
		/^## Run it on your nodes/ { in_sec = 1; next }
		/^## / && in_sec { exit }
		in_sec && /^```sh/ { n++; on = (n == want); next }
		in_sec && /^```/ { on = 0; next }
		on { print }' README.md | sed 's/[[:space:]]#.*$//; /^#/d; /^[[:space:]]*$/d' |
		awk '{ if (sub(/\\$/, "")) { acc = acc $0; next } print acc $0; acc = "" }'
}
for i in 1 2 3; do block $i >"$tmp/b$i"; done
expect_eq "README has the three blocks (deb, image, Koordinator)" "3 3 3" \
	"$(for i in 1 2 3; do [ -s "$tmp/b$i" ] && printf 3 || printf 0; [ $i = 3 ] || printf ' '; done)"

# 1. the package and systemd
mmdebstrap --quiet --variant=apt --include=ca-certificates bookworm "$root" >"$tmp/mm.log" 2>&1 ||
	not_ok "a Debian root with apt" "$(tail -5 "$tmp/mm.log")"
mount -t proc proc "$root/proc" && mount -t sysfs sysfs "$root/sys"
# what a node has and a fresh root lacks: package lists, a resolver
cp /etc/resolv.conf "$root/etc/resolv.conf"
chroot "$root" apt-get update -qq >"$tmp/update.log" 2>&1 || not_ok "apt-get update in the root" "$(tail -5 "$tmp/update.log")"
ran=() skipped=()
while IFS= read -r line; do
	case $line in
	make\ *)
		if $line >"$tmp/make.log" 2>&1; then ran+=("$line (host)"); else not_ok "README: $line" "$(tail -10 "$tmp/make.log")"; fi ;;
	systemctl\ *) skipped+=("$line (no systemd here)") ;;
	*)
		mkdir -p "$root/work/build/deb"
		cp build/deb/*.deb "$root/work/build/deb/" 2>/dev/null
		[[ $line == "apt purge"* ]] && chroot "$root" dpkg -L tidemark >"$tmp/files" 2>/dev/null
		# apt asks before it installs or purges: its -y is the one word added
		yes=
		[[ $line == apt\ * ]] && yes=" -y"
		out=$(chroot "$root" sh -c "cd /work && DEBIAN_FRONTEND=noninteractive $line$yes" 2>&1 </dev/null)
		rc=$?
		case $line in
		tidemarkctl\ preflight*)
			# this node has no sched_ext: exit 1, and the report says so
			if [ $rc = 1 ] && grep -q "MISSING  sched_ext" <<<"$out"; then ran+=("$line (exit 1: no sched_ext here)"); else not_ok "README: $line" "exit $rc" "$out"; fi ;;
		*)
			if [ $rc = 0 ]; then ran+=("$line"); else not_ok "README: $line" "exit $rc" "$(tail -15 <<<"$out")"; fi ;;
		esac ;;
	esac
done <"$tmp/b1"
note "package block ran: ${ran[*]/%/;}"
note "package block not run here: ${skipped[*]}"
expect_eq "the package block: every line that can run here ran (make, apt install, preflight, apt purge)" 4 "${#ran[@]}"
left=$(while read -r f; do
	case $f in /. | /etc | /lib | /lib/systemd | /lib/systemd/system | /usr | /usr/sbin | /usr/share | /usr/share/doc | /usr/share/man | /usr/share/man/man8) continue ;; esac
	[ -e "$root$f" ] && echo "$f"
done <"$tmp/files"; [ -e "$root/etc/tidemark" ] && echo /etc/tidemark; [ -e "$root/run/tidemark" ] && echo /run/tidemark)
if [ -s "$tmp/files" ] && [ -z "$left" ]; then ok "after apt purge nothing of it is left ($(wc -l <"$tmp/files") paths checked)"; else not_ok "after apt purge nothing of it is left" "${left:-no file list}"; fi

# 2. the image and the DaemonSet
ran=() skipped=()
while IFS= read -r line; do
	case $line in
	make\ *) if $line >"$tmp/make.log" 2>&1; then ran+=("$line"); else not_ok "README: $line" "$(tail -10 "$tmp/make.log")"; fi ;;
	skopeo\ copy\ *)
		# the registry stood in for by a local OCI layout
		l=${line/docker:\/\/registry.example\/tidemark:/oci:$tmp/registry:tidemark:}
		if $l >"$tmp/sk.log" 2>&1 && [ -f "$tmp/registry/index.json" ]; then ran+=("$line (to a local OCI layout)"); else not_ok "README: $line" "$(cat "$tmp/sk.log")"; fi ;;
	"kubectl apply -k "* | "kubectl delete -k "*)
		if kubectl kustomize "${line##* }" >/dev/null 2>"$tmp/k.log"; then ran+=("$line (rendered: no cluster)"); else not_ok "README: $line" "$(cat "$tmp/k.log")"; fi ;;
	*) skipped+=("$line") ;;
	esac
done <"$tmp/b2"
note "image block ran: ${ran[*]/%/;}"
note "image block not run here (no kustomize binary, no cluster; tests/host/kustomize.sh retargets the image by an overlay): ${skipped[*]/%/;}"
expect_eq "the image block: make image, the copy, apply and delete ran" 4 "${#ran[@]}"

# 3. beside Koordinator: its ConfigMap of Koordinator's documented format
cat >"$tmp/threshold.json" <<'JSON'
{"clusterStrategy": {"enable": true, "cpuSuppressThresholdPercent": 65}}
JSON
(
	cd "$tmp" || exit 1
	while IFS= read -r line; do
		case $line in
		jq\ *) eval "$line" || exit 1 ;;
		"kubectl -n koordinator-system patch"*)
			p=${line#*-p \"}
			p=${p%\"}
			eval "printf '%s' \"$p\"" >patch.json || exit 1 ;;
		esac
	done <"$tmp/b3"
) || not_ok "README's Koordinator lines run" "$(ls "$tmp")"
got=$(python3 - "$tmp" <<'PY'
import json, sys, os
d = sys.argv[1]
new = json.load(open(os.path.join(d, "new.json")))
patch = json.load(open(os.path.join(d, "patch.json")))
inner = json.loads(patch["data"]["resource-threshold-config"])
ns = inner["nodeStrategies"][-1]
print(inner["clusterStrategy"]["cpuSuppressThresholdPercent"], ns["enable"],
      ns["nodeSelector"]["matchLabels"]["tidemark.io/colocation"], inner == new)
PY
)
expect_eq "the Koordinator patch keeps the cluster strategy and turns koordlet's off on tidemark's nodes" \
	"65 False true True" "$got"
tap_done
