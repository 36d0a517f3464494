#!/usr/bin/env bash
# plan: 15
# The daemons' log levels: under journald (stderr is the stream
# $JOURNAL_STREAM names) every line carries sd-daemon.h's <N> priority; into
# a file or pipe (kubectl logs) every line is logfmt, level=... msg="...",
# quotes escaped; on a terminal the message alone. Audit lines stay as they
# are, whatever --log-level drops.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
bin=${TIDEMARK_BUILD:-build}/tidemarkd
scx=${TIDEMARK_BUILD:-build}/scx_tidemark
tmp=$(mktemp -d)
d=
trap 'kill $d 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(free_port)
mkdir -p "$tmp/cg/be/batch" "$tmp/cg/online"
cat >"$tmp/d.json" <<JSON
{"version":1,"memory_eviction":{"enabled":false},"cpu_eviction":{"enabled":false},
 "interference":{"enabled":true},"fallback":{"enabled":true},
 "cgroups":{"be":["/be/*"],"online":["/online"]},
 "report":{"listen":"127.0.0.1:$port","sample_s":1}}
JSON

# run LOG [ENV...] -- [ARGS...]: tidemarkd on the stand-in tree until its
# fallback has entered (an audit line), its stderr into LOG
run() {
	local log=$1
	shift
	env "$@" "$bin" --config "$tmp/d.json" --cgroup-root "$tmp/cg" --state-dir "$tmp/state" \
		${LOGLEVEL:+--log-level $LOGLEVEL} 2>"$log" >/dev/null &
	d=$!
	for _ in $(seq 100); do grep -q "action=enter" "$log" 2>/dev/null && break; sleep 0.05; done
	kill $d
	wait $d 2>/dev/null
}

run "$tmp/logfmt"
bad=$(grep -vE '^level=(error|warning|notice|info|debug) msg="([^"\\]|\\.)*"$|^audit ts=' "$tmp/logfmt")
expect_eq "into a file: every line logfmt (or an audit line)" "" "$bad"
check "the start is a notice" grep -q '^level=notice msg="tidemarkd: running (config ' "$tmp/logfmt"
check "a missing CPI signal is a notice" grep -q '^level=notice msg="tidemarkd: interference: no CPI signal' "$tmp/logfmt"
check "audit lines as they are" grep -q '^audit ts=[0-9.]* strategy=fallback action=enter dry_run=false reason="' "$tmp/logfmt"

LOGLEVEL=warning run "$tmp/warn"
if ! grep -qE '^level=(notice|info|debug)' "$tmp/warn" && grep -q '^audit ts=.* action=enter' "$tmp/warn"; then
	ok "--log-level warning: no notice or info line, the audit line still there"
else
	not_ok "--log-level warning: no notice or info line, the audit line still there" "$(cat "$tmp/warn")"
fi
LOGLEVEL=debug run "$tmp/debug"
check "--log-level debug: the notices still there" grep -q '^level=notice msg="tidemarkd: running' "$tmp/debug"

# journald: stderr is the stream JOURNAL_STREAM names (its device:inode)
: >"$tmp/journal"
run "$tmp/journal" JOURNAL_STREAM="$(stat -c '%d:%i' "$tmp/journal")"
bad=$(grep -vE '^<[3-7]>' "$tmp/journal")
expect_eq "under journald: every line has its <N> priority" "" "$bad"
check "the start at <5> (notice), as the message alone" grep -q '^<5>tidemarkd: running (config ' "$tmp/journal"
check "the audit line at <5>, as it is" grep -q '^<5>audit ts=.* strategy=fallback action=enter' "$tmp/journal"
: >"$tmp/other"
run "$tmp/other" JOURNAL_STREAM="$(stat -c '%d:%i' "$tmp/d.json")"
check "a JOURNAL_STREAM that is not stderr (inherited by a child): logfmt" grep -q '^level=notice msg="tidemarkd: running' "$tmp/other"

# quotes and backslashes in a message are escaped
out=$("$bin" --config "$tmp/no\"such\\file.json" 2>&1)
if grep -qF 'level=error msg="tidemarkd: '"$tmp"'/no\"such\\file.json: ' <<<"$out"; then
	ok "a quote and a backslash in a message are escaped"
else
	not_ok "a quote and a backslash in a message are escaped" "$out"
fi
parsed=$(python3 - "$out" <<'PY' 2>&1
import re, sys
m = re.fullmatch(r'level=(\w+) msg="((?:[^"\\]|\\.)*)"', sys.argv[1].splitlines()[0])
print(m.group(1), re.sub(r'\\(.)', r'\1', m.group(2)).split(": ")[1])
PY
)
expect_eq "and read back as written" "error $tmp/no\"such\\file.json" "$parsed"

# a terminal: the message alone
out=$(script -qec "$scx --slice-us 0" /dev/null | head -1 | tr -d '\r')
expect_eq "on a terminal: the message alone" "scx_tidemark: --slice-us 0 is out of range 100-100000" "$out"
expect_fail "scx_tidemark --log-level refuses an unknown level" 2 "'loud': use error, warning, notice, info or debug" "$scx" --log-level loud
expect_fail "tidemarkd --log-level refuses an unknown level" 2 "'loud': use error, warning, notice, info or debug" "$bin" --log-level loud
tap_done
