#!/usr/bin/env bash
# vm: --cpus 2 --timeout 200
# plan: 29
# Who is what: kubelet's cgroup layouts (systemd and cgroupfs drivers), glob
# rules that follow cgroups created later, precedence, and bad rules.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
# kubelet, systemd driver
mkdir -p $cg/kubepods.slice/kubepods-podaaaa_1.slice/cri-containerd-c1.scope \
	$cg/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podbbbb_2.slice/cri-containerd-c2.scope \
	$cg/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podcccc_3.slice/cri-containerd-c3.scope
# kubelet, cgroupfs driver
mkdir -p $cg/kubepods/poddddd/c4 $cg/kubepods/burstable/podeeee/c5 $cg/kubepods/besteffort/podffff/c6
mkdir -p $cg/batch/job-1 $cg/batch/tools $cg/web

out=$(build/scx_tidemark --online /nonexistent 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "/sys/fs/cgroup/nonexistent: No such file" <<<"$out"; then ok "missing cgroup refused, named"; else not_ok "missing cgroup refused" "$rc: $out"; fi
expect_eq "nothing loaded after a refused rule" disabled "$(scx_state)"
out=$(build/scx_tidemark --kubelet docker 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "kubelet 'docker'" <<<"$out"; then ok "unknown --kubelet mode refused"; else not_ok "unknown --kubelet mode refused" "$rc: $out"; fi

log=/tmp/scx.log
build/scx_tidemark --be '/batch/job-*' --online /web --system /kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podcccc_3.slice/cri-containerd-c3.scope \
	--rescan-ms 200 >"$log" 2>&1 &
pid=$!
wait_state enabled 10 || { not_ok "scheduler loads" "$(cat $log)"; tap_done; }
ok "scheduler loads with kubelet auto rules and globs"

cls() { build/tidemarkctl class "$1" | awk '{print $2}'; }
expect_eq "systemd: Guaranteed pod container is online" online "$(cls /kubepods.slice/kubepods-podaaaa_1.slice/cri-containerd-c1.scope)"
expect_eq "systemd: Burstable pod container is online" online "$(cls /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podbbbb_2.slice/cri-containerd-c2.scope)"
expect_eq "systemd: BestEffort pod is be" be "$(cls /kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podcccc_3.slice)"
expect_eq "user rule beats kubelet rule (container made system)" system "$(cls /kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podcccc_3.slice/cri-containerd-c3.scope)"
expect_eq "cgroupfs: Guaranteed pod container is online" online "$(cls /kubepods/poddddd/c4)"
expect_eq "cgroupfs: Burstable pod container is online" online "$(cls /kubepods/burstable/podeeee/c5)"
expect_eq "cgroupfs: BestEffort pod container is be" be "$(cls /kubepods/besteffort/podffff/c6)"
expect_eq "glob: /batch/job-1 is be" be "$(cls /batch/job-1)"
expect_eq "glob: /batch/tools is not matched (system)" system "$(cls /batch/tools)"
expect_eq "plain rule: /web is online" online "$(cls /web)"

note "a pod and a job created after loading"
mkdir -p $cg/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podnew.slice $cg/batch/job-2
expect_eq "new BestEffort pod is be at once (inherits)" be "$(cls /kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podnew.slice)"
sleep 0.6
expect_eq "new glob match /batch/job-2 is be after a rescan" "be (from /batch/job-2)" "$(build/tidemarkctl class /batch/job-2 | cut -d' ' -f2-)"

note "behaviour: a hog in the new BestEffort pod is throttled, in a Guaranteed pod it is not"
in_cgroup kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podnew.slice \
	stress-ng --temp-path /tmp --cpu-method int64 --cpu 2 --timeout 60s >/dev/null 2>&1
h=$!
sleep 1.5
b=$(tests/lib/busy.py --seconds 2 | awk '{print $2}')
if within "$b" 55 72; then ok "BestEffort pod held at the line ($b%)"; else not_ok "BestEffort pod held at the line" "busy $b%"; fi
kill $h 2>/dev/null
wait $h
# measurer first: under a saturating ONLINE load a new process starts slowly
tests/lib/busy.py --delay 1.5 --seconds 2 >/tmp/busy.out &
m=$!
in_cgroup kubepods.slice/kubepods-podaaaa_1.slice/cri-containerd-c1.scope \
	stress-ng --temp-path /tmp --cpu-method int64 --cpu 2 --timeout 60s >/dev/null 2>&1
h=$!
wait $m
b=$(awk '{print $2}' /tmp/busy.out)
if [ "$b" -ge 90 ]; then ok "Guaranteed pod not throttled ($b%)"; else not_ok "Guaranteed pod not throttled" "busy $b%"; fi
kill $h 2>/dev/null
wait $h

note "removed cgroups leave the class map"
n0=$(build/tidemarkctl show | grep -c '^cgroup')
rmdir $cg/batch/job-2
sleep 0.6
n1=$(build/tidemarkctl show | grep -c '^cgroup')
expect_eq "class entry of a removed glob match dropped" $((n0 - 1)) "$n1"

kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"

note "the shipped unit's defaults: no class options (dist/scx_tidemark.env), under a notify socket"
opts=$(. dist/scx_tidemark.env && echo "$SCX_TIDEMARK_OPTS")
expect_eq "dist/scx_tidemark.env sets no options" "" "$opts"
tests/lib/notifysock.py /tmp/notify 20 >/tmp/notify.log &
sock=$!
for _ in $(seq 50); do [ -S /tmp/notify ] && break; sleep 0.1; done
# shellcheck disable=SC2086 # split as systemd splits $SCX_TIDEMARK_OPTS
NOTIFY_SOCKET=/tmp/notify build/scx_tidemark $opts >/tmp/scx2.log 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "READY=1" /tmp/notify.log && break; sleep 0.1; done
expect_eq "READY=1 only once the scheduler is enabled" enabled "$(grep -q READY=1 /tmp/notify.log && scx_state)"
expect_eq "defaults: Guaranteed pod online" online "$(cls /kubepods.slice/kubepods-podaaaa_1.slice/cri-containerd-c1.scope)"
expect_eq "defaults: Burstable pod online" online "$(cls /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podbbbb_2.slice/cri-containerd-c2.scope)"
expect_eq "defaults: BestEffort pod be" be "$(cls /kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podcccc_3.slice/cri-containerd-c3.scope)"
expect_eq "defaults: cgroupfs BestEffort pod be" be "$(cls /kubepods/besteffort/podffff/c6)"
expect_eq "defaults: everything else system" system "$(cls /batch/job-1)"
kill -INT $pid
wait $pid
expect_eq "loader exits 0" 0 "$?"
sleep 0.3
kill $sock 2>/dev/null
wait $sock 2>/dev/null
check "STOPPING=1 on the way out" grep -q "STOPPING=1" /tmp/notify.log
tap_done
