#!/usr/bin/env bash
# vm: --cpus 2 --timeout 240
# plan: 12
# Eviction without loops: a BestEffort pod killed by cgroup.kill comes back
# in place, as kubelet restarts its containers in new container cgroups of
# the same pod. The evictor knows it by its pod UID: within the back-off
# (4 s, then 8 s) it is capped, not killed, each decision audited once; the
# cap is lifted when the back-off ends.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
# shellcheck source=../lib/vmlib.sh
. "$(dirname "$0")/../lib/vmlib.sh"

cg=/sys/fs/cgroup
echo "+cpu +memory" >$cg/cgroup.subtree_control
mkdir -p $cg/online $cg/kubepods.slice
echo "+cpu +memory" >$cg/kubepods.slice/cgroup.subtree_control
mkdir -p $cg/kubepods.slice/kubepods-besteffort.slice
echo "+cpu +memory" >$cg/kubepods.slice/kubepods-besteffort.slice/cgroup.subtree_control
uid=7c9e6679-7425-40de-944b-e07fc1f90ae7
pod=kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${uid//-/_}.slice
mkdir -p $cg/$pod
echo "+cpu +memory" >$cg/$pod/cgroup.subtree_control
echo 1 >$cg/$pod/cpu.weight

# kubelet rules (auto): the pod is BE
sched_start --online /online
spid=$sched_pid
ok "scheduler loads"

# kubelet, restartPolicy Always: a container that died is started again in
# a new container cgroup of the same pod
kubelet() {
	local n=0
	while :; do
		if grep -q "populated 0" $cg/$pod/cgroup.events; then
			n=$((n + 1))
			mkdir -p $cg/$pod/cri-containerd-$n.scope
			(echo $BASHPID >$cg/$pod/cri-containerd-$n.scope/cgroup.procs && exec bash -c 'while :; do :; done') &
			echo "restart $n $(date +%s.%N)" >>/tmp/kubelet.log
		fi
		sleep 0.2
	done
}
: >/tmp/kubelet.log
kubelet &
kpid=$!

cat >/tmp/td.json <<EOC
{"version": 1,
 "watermarks": {"cpu": {"forbid_pct": 60, "suppress_pct": 65, "evict_pct": 70, "evict_window_s": 2}},
 "memory_eviction": {"enabled": false},
 "interference": {"enabled": false},
 "cpu_eviction": {"lower_pct": 1, "upper_pct": 2, "cooldown_s": 1, "max_per_round": 1},
 "eviction": {"backoff_initial_s": 4, "backoff_max_s": 8, "backoff_cap_mcpu": 30},
 "cgroups": {"be": ["/kubepods.slice/kubepods-besteffort.slice/*"], "online": ["/online"]},
 "report": {"listen": "127.0.0.1:9477"}}
EOC
daemon_start
dpid=$daemon_pid
ok "daemon starts"

note "ONLINE at ~85%: the node stays above evict_pct 70 while the pod runs"
in_cgroup online stress-ng --temp-path /tmp --cpu 2 --cpu-method int64 --cpu-load 85 --timeout 200s >/dev/null 2>&1
on=$!
wait_log /tmp/td.log "strategy=cpu_high action=backoff" 20 || { not_ok "the pod came back and was held off" "$(tail -5 /tmp/td.log)"; }
line=$(grep -m1 "action=backoff" /tmp/td.log)
note "$line"
check "backoff keyed by the pod's UID" grep -q "key=pod:$uid " <<<"$line"
check "backoff capped the pod" grep -q "capped=true" <<<"$line"
# The cap of the container cgroup the pod came back in, in the scheduler.
# Read in the second back-off (8 s): the first ends 2 s after the pod came
# back, and a lookup slowed by the emulator could then see a scope of the
# next life, which is not capped yet.
nkills() { grep -c "strategy=cpu_high action=kill dry_run=false" /tmp/td.log; }
# little-endian hex of an integer of 4 or 8 bytes, in the shell: a python
# start per value took seconds next to an 85% ONLINE load under TCG, and
# three of them once outlasted the 8 s back-off (CI)
le() { # bytes value
	local h i out=""
	h=$(printf "%0$(($1 * 2))x" "$2")
	for ((i = ${#h} - 2; i >= 0; i -= 2)); do out+=${h:i:2}; done
	echo "$out"
}
# in the second back-off; a kill during the read (the lookup outlasted it)
# means the scope read may be gone: read again in the third
for n in 2 3; do
	wait_log /tmp/td.log "strategy=cpu_high action=backoff .* kills=$n " 30 ||
		not_ok "the pod came back after kill $n and was held off" "$(grep cpu_high /tmp/td.log)"
	k0=$(nkills)
	scope=$(ls -d $cg/$pod/cri-containerd-*.scope | sort -t- -k3 -n | tail -1)
	v=$(tests/lib/bpfmap.py lookup /sys/fs/bpf/tidemark/be_caps "$(le 8 "$(stat -c %i "$scope")")" 2>&1 | cut -c1-16)
	k1=$(nkills)
	note "cap read on ${scope##*/} in back-off $n with $k0 kills before and $k1 after"
	[ "$k0" = "$k1" ] && break
done
expect_eq "scheduler cap on the new container cgroup: 30 mCPU, owner tidemarkd" "$(le 4 30)$(le 4 1)" "$v"
expect_eq "no kill while the cap was read (the scope read is the one held off)" "$k0" "$k1"

# three kills, then stop looking
for _ in $(seq 400); do
	[ "$(grep -c "strategy=cpu_high action=kill dry_run=false" /tmp/td.log)" -ge 3 ] && break
	sleep 0.1
done
sleep 1
mapfile -t k < <(grep "strategy=cpu_high action=kill dry_run=false" /tmp/td.log | sed -n 's/.*audit ts=\([0-9.]*\) .*/\1/p')
note "kills at ${k[*]}; kubelet restarts $(wc -l </tmp/kubelet.log)"
if [ ${#k[@]} -ge 3 ]; then ok "the pod was killed 3 times"; else not_ok "the pod was killed 3 times" "${#k[@]} kills" "$(grep cpu_high /tmp/td.log)"; fi
gap() { python3 -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))' "$1" "$2"; }
ge() { python3 -c 'import sys; sys.exit(not float(sys.argv[1]) >= float(sys.argv[2]))' "$1" "$2"; }
if [ ${#k[@]} -ge 3 ]; then
	g1=$(gap "${k[0]}" "${k[1]}")
	g2=$(gap "${k[1]}" "${k[2]}")
	if ge "$g1" 4; then ok "second kill after the 4 s back-off (${g1}s)"; else not_ok "second kill after the 4 s back-off" "${g1}s"; fi
	if ge "$g2" 8; then ok "third kill after the doubled 8 s back-off (${g2}s)"; else not_ok "third kill after the doubled back-off" "${g2}s"; fi
fi
# one back-off per kill whose pod came back (the last one's may not have
# yet; a read retried in the third back-off lets a fourth kill come)
nb=$(grep -c "strategy=cpu_high action=backoff" /tmp/td.log)
nk=$(nkills)
if [ "$nb" -ge $((nk - 1)) ] && [ "$nb" -le "$nk" ] && [ "$nb" -ge 2 ]; then ok "each back-off audited once ($nb for ${#k[@]} kills)"; else not_ok "each back-off audited once" "$nb backoff lines" "$(grep action=backoff /tmp/td.log)"; fi
check "the cap was lifted when a back-off ended" grep -q "strategy=evictor action=backoff_end .*key=pod:$uid .*cap=removed" /tmp/td.log

kill $kpid
wait $kpid 2>/dev/null
kill $dpid
wait $dpid
kill $on 2>/dev/null
wait $on 2>/dev/null
echo 1 >$cg/$pod/cgroup.kill
kill -INT $spid
wait $spid
expect_eq "loader exits 0" 0 "$?"
tap_done
