#!/usr/bin/env bash
# plan: 14
# tidemarkd follows its configuration file without a restart, as a
# ConfigMap's kubelet updates it: a new timestamped directory, the "..data"
# symlink swapped over to it, the old one removed. A valid change is applied,
# an invalid one refused with the last good configuration kept, a swap to
# the same content reloads nothing; an edit in place is seen too.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
bin=${TIDEMARK_BUILD:-build}/tidemarkd
tmp=$(mktemp -d)
d=
trap 'kill $d 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
mkdir -p "$tmp/cg/be" "$tmp/cg/online" "$tmp/etc"

# conf SUPPRESS_PCT: the configuration text
conf() {
	cat <<JSON
{"version":1,"memory_eviction":{"enabled":false},"cpu_eviction":{"enabled":false},
 "interference":{"enabled":false},"fallback":{"enabled":false},
 "watermarks":{"cpu":{"forbid_pct":50,"suppress_pct":$1}},
 "cgroups":{"be":["/be"],"online":["/online"]},
 "report":{"listen":"127.0.0.1:$port","sample_s":1}}
JSON
}

# swap TEXT: what the kubelet's atomic writer does with a ConfigMap volume
n=0
swap() {
	local old
	n=$((n + 1))
	old=$(readlink "$tmp/etc/..data" 2>/dev/null)
	mkdir "$tmp/etc/..v$n"
	printf '%s\n' "$1" >"$tmp/etc/..v$n/tidemarkd.json"
	ln -s "..v$n" "$tmp/etc/..data_tmp"
	mv -T "$tmp/etc/..data_tmp" "$tmp/etc/..data"
	[ -z "$old" ] || rm -rf "${tmp:?}/etc/$old"
}
swap "$(conf 55)"
ln -s ..data/tidemarkd.json "$tmp/etc/tidemarkd.json"

suppress() { curl -s "http://127.0.0.1:$port/report" | python3 -c 'import json,sys; print(json.load(sys.stdin)["watermarks"]["cpu"]["suppress_pct"])' 2>/dev/null; }
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
# until SECONDS: suppress_pct reads WANT
wait_suppress() { for _ in $(seq $(($2 * 10))); do [ "$(suppress)" = "$1" ] && return 0; sleep 0.1; done; return 1; }
wait_log() { for _ in $(seq $(($3 * 10))); do grep -q "$2" "$1" && return 0; sleep 0.1; done; return 1; }

"$bin" --config "$tmp/etc/tidemarkd.json" --cgroup-root "$tmp/cg" --state-dir "$tmp/state" >/dev/null 2>"$tmp/d.log" &
d=$!
if wait_suppress 55 5; then ok "tidemarkd runs on the mounted configuration"; else not_ok "tidemarkd runs on the mounted configuration" "$(cat "$tmp/d.log")"; tap_done; fi

swap "$(conf 60)"
if wait_suppress 60 3; then ok "a ConfigMap swap is applied within 3 s (suppress_pct 55 -> 60)"; else not_ok "a ConfigMap swap is applied within 3 s" "suppress $(suppress)" "$(cat "$tmp/d.log")"; fi
check "the log says the file changed and was reloaded" grep -q "tidemarkd.json changed: reloading" "$tmp/d.log"
expect_eq "one reload counted" 1 "$(metric tidemark_config_reloads_total)"

swap '{"version":1,"watermarks":{"cpu":{"suppress_pct":95}}}'
wait_log "$tmp/d.log" "reload refused" 3
if grep -q "reload refused, keeping the last good configuration: .*suppress_pct: 95 must be below evict_pct" "$tmp/d.log"; then
	ok "an invalid swap is refused, the field named"
else
	not_ok "an invalid swap is refused, the field named" "$(tail -3 "$tmp/d.log")"
fi
expect_eq "the last good configuration stays (suppress_pct 60)" 60 "$(suppress)"
expect_eq "one rejection counted" 1 "$(metric tidemark_config_rejects_total)"

swap "$(conf 60)"
wait_log "$tmp/d.log" "configuration reloaded" 3
sleep 0.5
swap "$(conf 60)"
touch "$tmp/etc/..data"
sleep 1.5
expect_eq "good again (2 reloads); the same content swapped in again reloads nothing" 2 "$(metric tidemark_config_reloads_total)"

# an edit in place (the systemd unit's /etc/tidemark): written and closed
cfgfile=$tmp/plain.json
kill $d
wait $d 2>/dev/null
conf 55 >"$cfgfile"
"$bin" --config "$cfgfile" --cgroup-root "$tmp/cg" --state-dir "$tmp/state" >/dev/null 2>"$tmp/d2.log" &
d=$!
if wait_suppress 55 5; then ok "tidemarkd runs on a plain file"; else not_ok "tidemarkd runs on a plain file" "$(cat "$tmp/d2.log")"; tap_done; fi
conf 62 >"$cfgfile"
if wait_suppress 62 3; then ok "a file edited in place is applied within 3 s"; else not_ok "a file edited in place is applied" "$(tail -3 "$tmp/d2.log")"; fi
# written slowly in place, a neighbour file written meanwhile: read once
# whole, never half (reading on the neighbour's event refused half a file)
{
	conf 63 | head -c 100
	sleep 0.5
	echo x >"$tmp/neighbour"
	sleep 0.5
	conf 63 | tail -c +101
} >"$cfgfile"
if wait_suppress 63 3; then ok "a file written slowly in place is read once whole"; else not_ok "a file written slowly in place is read once whole" "$(tail -3 "$tmp/d2.log")"; fi
expect_eq "no refusal of a half-written file" 0 "$(grep -c "reload refused" "$tmp/d2.log")"
r0=$(metric tidemark_config_reloads_total)
echo other >"$tmp/neighbour"
mv "$tmp/neighbour" "$tmp/neighbour2"
ln -s neighbour2 "$tmp/..data_tmp"
sleep 1
expect_eq "another file of the directory changing reloads nothing" "$r0" "$(metric tidemark_config_reloads_total)"
check "the second daemon still runs (no restart)" kill -0 $d
tap_done
