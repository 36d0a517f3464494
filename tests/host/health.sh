#!/usr/bin/env bash
# plan: 8
# tidemarkd's /healthz and /readyz on the host, where no scheduler can run:
# alive, and not ready unless the configuration counts the CFS fallback as
# ready (fallback.ready) and the fallback really holds BE. The VM side
# (ready once tidemark is attached, not ready when it dies) is in
# tests/vm/fallback.sh.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
bin=${TIDEMARK_BUILD:-build}/tidemarkd
tmp=$(mktemp -d)
d=
trap 'kill $d 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
mkdir -p "$tmp/cg/be/batch" "$tmp/cg/online"

# run FALLBACK_JSON: tidemarkd on a stand-in cgroup tree, its fallback
# section as given; waits for its first answer
run() {
	kill $d 2>/dev/null
	wait $d 2>/dev/null
	cat >"$tmp/d.json" <<JSON
{"version":1,"memory_eviction":{"enabled":false},"cpu_eviction":{"enabled":false},
 "interference":{"enabled":false},"fallback":$1,
 "cgroups":{"be":["/be/*"],"online":["/online"]},
 "report":{"listen":"127.0.0.1:$port","sample_s":1}}
JSON
	: >"$tmp/d.log"
	"$bin" --config "$tmp/d.json" --cgroup-root "$tmp/cg" --state-dir "$tmp/state" >/dev/null 2>"$tmp/d.log" &
	d=$!
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && return 0; sleep 0.05; done
	return 1
}

# get PATH: "CODE BODY"
get() {
	local code
	code=$(curl -s -o "$tmp/body" -w '%{http_code}' "http://127.0.0.1:$port$1")
	echo "$code $(tr '\n' ' ' <"$tmp/body")"
}

# expect_answer DESC PATH CODE PATTERN [ABSENT]: PATH answers CODE with a
# body holding PATTERN (and not ABSENT)
expect_answer() {
	local a
	a=$(get "$2")
	if [ "${a%% *}" = "$3" ] && grep -qF -- "$4" <<<"$a" && { [ -z "${5:-}" ] || ! grep -qF -- "$5" <<<"$a"; }; then
		ok "$1"
	else
		not_ok "$1" "want $3 with '$4'${5:+, without '$5'}" "got: $a"
	fi
}

run '{"enabled":false}' || not_ok "tidemarkd answers" "$(cat "$tmp/d.log")"
expect_answer "/healthz: alive" /healthz 200 "ok"
expect_answer "/readyz with no scheduler: 503, says why" /readyz 503 \
	"not ready: tidemark is not attached: /sys/fs/bpf/tidemark/abi" "fallback"
expect_answer "an unknown path: 404 naming the two" /nope 404 "/healthz or /readyz"

run '{"enabled":true}'
wait_log() { for _ in $(seq 50); do grep -q "$2" "$1" && return 0; sleep 0.1; done; return 1; }
wait_log "$tmp/d.log" "strategy=fallback action=enter" || not_ok "the fallback enters" "$(cat "$tmp/d.log")"
expect_answer "fallback active but not counted: still 503, the fallback named" /readyz 503 \
	"the CFS fallback holds BE meanwhile"

run '{"enabled":true,"ready":true}'
wait_log "$tmp/d.log" "strategy=fallback action=enter" || not_ok "the fallback enters" "$(cat "$tmp/d.log")"
expect_answer "fallback.ready and the fallback holds BE: 200" /readyz 200 \
	"ready: the CFS fallback holds BE (fallback.ready)"

run '{"enabled":true,"ready":true,"dry_run":true}'
wait_log "$tmp/d.log" "strategy=fallback action=enter dry_run=true" || not_ok "the fallback enters, dry" "$(cat "$tmp/d.log")"
expect_answer "fallback.ready with a dry-run fallback (nothing held): 503" /readyz 503 "not ready"

run '{"enabled":false,"ready":true}'
expect_answer "fallback.ready with the fallback off: 503" /readyz 503 "not ready" "holds BE"

expect_fail "fallback.ready must be a bool" 2 "fallback.ready" "$bin" --check --config <(echo '{"version":1,"fallback":{"ready":"yes"}}')
tap_done
