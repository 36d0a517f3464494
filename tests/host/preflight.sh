#!/usr/bin/env bash
# plan: 26
# tidemarkctl preflight: what a node lacks for tidemark, named with its fix.
# Each case is a fake node root (--root) built complete, then with one piece
# taken away; the real host (no sched_ext here) is checked last.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
ctl=${TIDEMARK_BUILD:-build}/tidemarkctl
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# mkroot DIR: a node with everything tidemark needs (Linux 6.12, BTF with
# sched_ext_ops' cgroup callbacks, sched_ext idle, cgroup2 with cpu and
# memory, bpffs, PSI, delay accounting, a kernel config in /boot)
mkroot() {
	local r=$1
	mkdir -p "$r"/proc/sys/kernel "$r"/proc/self "$r"/proc/pressure "$r"/sys/kernel/btf \
		"$r"/sys/kernel/sched_ext "$r"/sys/fs/cgroup "$r"/boot
	echo 6.12.118-tidemark >"$r"/proc/sys/kernel/osrelease
	python3 "$top"/tests/lib/btfgen.py "$r"/sys/kernel/btf/vmlinux sched_ext_ops dispatch cgroup_init
	echo disabled >"$r"/sys/kernel/sched_ext/state
	printf '%s\n' "sysfs /sys sysfs rw 0 0" "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0" \
		"bpf /sys/fs/bpf bpf rw 0 0" >"$r"/proc/self/mounts
	echo "cpuset cpu io memory hugetlb pids rdma misc" >"$r"/sys/fs/cgroup/cgroup.controllers
	echo "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" >"$r"/proc/pressure/cpu
	echo 1 >"$r"/proc/sys/kernel/task_delayacct
	printf '%s\n' CONFIG_SCHED_CLASS_EXT=y CONFIG_EXT_GROUP_SCHED=y CONFIG_TASKSTATS=y \
		CONFIG_PSI=y >"$r"/boot/config-6.12.118-tidemark
}

# state ROOT NAME: the state preflight --json gives check NAME
state() {
	"$ctl" preflight --json --root "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(next((c["state"] for c in d["checks"] if c["name"] == sys.argv[1]), "absent"))' "$2"
}

# case_missing DESC NAME RC PATTERN SETUP...: a complete root changed by
# SETUP (run with the root as $r) makes check NAME missing, preflight exit
# RC, and its text report hold PATTERN (the detail or the fix)
case_missing() {
	local desc=$1 name=$2 rc=$3 pat=$4 out got st
	shift 4
	r=$work/$name.$RANDOM
	mkroot "$r"
	eval "$*"
	out=$("$ctl" preflight --root "$r" 2>&1)
	got=$?
	st=$(state "$r" "$name")
	if [ "$got" = "$rc" ] && [ "$st" = missing ] && grep -qF -- "$pat" <<<"$out"; then
		ok "$desc"
	else
		not_ok "$desc" "exit $got (want $rc), $name is $st (want missing)" "$out"
	fi
}

r=$work/full
mkroot "$r"
out=$("$ctl" preflight --root "$r")
rc=$?
if [ $rc = 0 ] && ! grep -qE "MISSING|UNKNOWN" <<<"$out" &&
	grep -q "everything the scheduler needs is present$" <<<"$out"; then
	ok "a complete node: every check ok, exit 0"
else
	not_ok "a complete node: every check ok, exit 0" "exit $rc" "$out"
fi
json=$("$ctl" preflight --json --root "$r")
expect_eq "--json: ready, nothing missing, 11 checks, the config named" "True 0 0 11 /boot/config-6.12.118-tidemark" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["ready"], d["missing"], d["optional_missing"], len(d["checks"]), d["config"])' "$json")"

case_missing "an older kernel is named" kernel 1 "Linux 6.1 is older than 6.12" \
	'echo 6.1.0-28-amd64 >$r/proc/sys/kernel/osrelease; mv $r/boot/config-6.12.118-tidemark $r/boot/config-6.1.0-28-amd64'
case_missing "no sched_ext: named with its config line and the kernel path" sched_ext 1 \
	"CONFIG_SCHED_CLASS_EXT is not set" \
	'rm -r $r/sys/kernel/sched_ext; sed -i "s/^CONFIG_SCHED_CLASS_EXT=y/# CONFIG_SCHED_CLASS_EXT is not set/" $r/boot/config-*'
case_missing "no sched_ext: the fix names make kernel-deb" sched_ext 1 "make kernel-deb" \
	'rm -r $r/sys/kernel/sched_ext'
case_missing "sched_ext_ops without cgroup callbacks: EXT_GROUP_SCHED named" ext_group_sched 1 \
	"sched_ext_ops has no cgroup callbacks" \
	'python3 $top/tests/lib/btfgen.py $r/sys/kernel/btf/vmlinux sched_ext_ops dispatch'
case_missing "no BTF: named; EXT_GROUP_SCHED then judged by the config" btf 1 \
	"CONFIG_DEBUG_INFO_BTF=y" 'rm $r/sys/kernel/btf/vmlinux'
r=$work/nobtf
mkroot "$r"
rm "$r"/sys/kernel/btf/vmlinux
expect_eq "no BTF, config says EXT_GROUP_SCHED=y: that check is ok" ok "$(state "$r" ext_group_sched)"
sed -i /EXT_GROUP_SCHED/d "$r"/boot/config-*
expect_eq "no BTF, config without EXT_GROUP_SCHED: missing" missing "$(state "$r" ext_group_sched)"
rm "$r"/boot/config-*
expect_eq "no BTF and no config: unknown, not ok" unknown "$(state "$r" ext_group_sched)"
"$ctl" preflight --root "$r" >/dev/null
expect_eq "an unknown required piece fails the preflight" 1 $?

case_missing "another scheduler loaded: named" sched_ext_free 1 "another sched_ext scheduler, simple, is enabled" \
	'echo enabled >$r/sys/kernel/sched_ext/state; mkdir $r/sys/kernel/sched_ext/root; echo simple >$r/sys/kernel/sched_ext/root/ops'
r=$work/ours
mkroot "$r"
echo enabled >"$r"/sys/kernel/sched_ext/state
mkdir "$r"/sys/kernel/sched_ext/root
echo tidemark >"$r"/sys/kernel/sched_ext/root/ops
expect_eq "tidemark itself loaded: not a conflict" ok "$(state "$r" sched_ext_free)"

case_missing "cgroup v1 at /sys/fs/cgroup: named" cgroup2 1 "/sys/fs/cgroup is tmpfs, not cgroup2" \
	'sed -i "s|^cgroup2 .*|tmpfs /sys/fs/cgroup tmpfs ro 0 0|" $r/proc/self/mounts'
case_missing "hybrid hierarchy: named as such" cgroup2 1 "hybrid hierarchy" \
	'sed -i "s|^cgroup2 .*|tmpfs /sys/fs/cgroup tmpfs ro 0 0|" $r/proc/self/mounts; echo "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0" >>$r/proc/self/mounts'
case_missing "no cgroup mount at all: named" cgroup2 1 "not mounted at all" \
	'sed -i "/cgroup2/d" $r/proc/self/mounts'
case_missing "memory controller absent: named" cgroup_controllers 1 "lacks memory (has: cpuset cpu io" \
	'echo "cpuset cpu io pids" >$r/sys/fs/cgroup/cgroup.controllers'
case_missing "cpu controller absent: named (cpuset does not count)" cgroup_controllers 1 "lacks cpu (has:" \
	'echo "cpuset io memory pids" >$r/sys/fs/cgroup/cgroup.controllers'
case_missing "no bpffs: named with the mount to make" bpffs 1 "mount -t bpf bpf /sys/fs/bpf" \
	'sed -i "/^bpf /d" $r/proc/self/mounts'
case_missing "bpffs mounted over by another fs: named" bpffs 1 "/sys/fs/bpf is tmpfs" \
	'echo "tmpfs /sys/fs/bpf tmpfs rw 0 0" >>$r/proc/self/mounts'
case_missing "no PSI: optional, exit stays 0" psi 0 "optional, for: tidemarkd's interference signals" \
	'rm $r/proc/pressure/cpu'
case_missing "delay accounting off: the sysctl named, exit stays 0" delayacct 0 \
	"sysctl -w kernel.task_delayacct=1" 'echo 0 >$r/proc/sys/kernel/task_delayacct'
case_missing "taskstats not built: optional, from the config" taskstats 0 "CONFIG_TASKSTATS is not set" \
	'sed -i /TASKSTATS/d $r/boot/config-*'

r=$work/gz
mkroot "$r"
sed 's/CONFIG_TASKSTATS=y/# CONFIG_TASKSTATS is not set/' "$r"/boot/config-* | gzip >"$r"/proc/config.gz
out=$("$ctl" preflight --root "$r")
if grep -q "kernel config /proc/config.gz" <<<"$out" && [ "$(state "$r" taskstats)" = missing ]; then
	ok "/proc/config.gz is read first, and gunzipped"
else
	not_ok "/proc/config.gz is read first, and gunzipped" "$out"
fi

expect_fail "an unknown argument is refused" 2 "preflight: unknown argument '--bogus'" "$ctl" preflight --bogus

# the host itself: this machine's kernel has no sched_ext
if [ -d /sys/kernel/sched_ext ]; then
	not_ok "this host lacks sched_ext (the test's premise)" "/sys/kernel/sched_ext exists here"
else
	expect_fail "this host: sched_ext named missing, exit 1" 1 "MISSING  sched_ext" "$ctl" preflight
fi
tap_done
