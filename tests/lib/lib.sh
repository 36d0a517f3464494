# shellcheck shell=bash
# TAP helpers for tidemark's shell tests (host and VM). Sourced.
# Each check prints "ok N desc" or "not ok N desc"; tap_done exits non-zero
# when any check failed.
tap_n=0
tap_failed=0

ok() { # desc
	tap_n=$((tap_n + 1))
	echo "ok $tap_n $1"
}

# not_ok returns 1, and so do check and expect_eq on a failure: a test's
# "check ... || show why" prints its diagnosis only then (it ended with the
# detail loop's 0 once, and tests/bench/host-mode.sh's run log was never shown).
not_ok() { # desc [detail...]
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n $1"
	shift
	local d
	# every line of a detail is a comment: a "not ok" inside one (a nested
	# test's output) was counted as a failure of its own
	for d in "$@"; do printf '%s\n' "$d" | sed 's/^/#   /'; done
	return 1
}

skip() { # desc reason
	tap_n=$((tap_n + 1))
	echo "ok $tap_n $1 # SKIP $2"
}

check() { # desc cmd... : ok when cmd succeeds
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc" "command failed: $*"; fi
}

expect_eq() { # desc expected actual
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "got: $3"; fi
}

note() { echo "# $*"; }

# config_refused BIN DESC JSON EXPECTED: tidemarkd --check refuses the
# configuration JSON (exit 2) with a message holding EXPECTED.
config_refused() {
	local f err rc
	f=$(mktemp)
	printf '%s\n' "$3" >"$f"
	err=$("$1" --config "$f" --check 2>&1 >/dev/null)
	rc=$?
	rm -f "$f"
	if [ $rc -eq 2 ] && grep -qF -- "$4" <<<"$err"; then ok "$2"; else not_ok "$2" "exit $rc (want 2): $err"; fi
}

# free_port [N]: the first of N (1) consecutive TCP ports no socket uses,
# below the kernel's ephemeral range: a listener bound inside it fails
# ("Address already in use") whenever some client's connection took the
# port as its source port (nodemetric.sh did so in CI).
free_port() {
	local n=${1:-1} lo hi p i busy
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
	hi=$((lo - n))
	for _ in $(seq 50); do
		p=$((10000 + RANDOM % (hi - 10000)))
		busy=0
		for ((i = 0; i < n; i++)); do
			[ -n "$(ss -Htan "sport = :$((p + i))" 2>/dev/null)" ] && busy=1
		done
		[ $busy = 0 ] && { echo $p; return 0; }
	done
	return 1
}

# expect_fail DESC RC PATTERN CMD...: CMD exits RC and its output matches PATTERN.
expect_fail() {
	local desc=$1 want=$2 pat=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq "$want" ] && grep -q -- "$pat" <<<"$out"; then ok "$desc"; else not_ok "$desc" "exit $rc (want $want): $out"; fi
}

within_pct() { # a b pct: |a-b| <= pct% of b
	local d=$(($1 - $2))
	[ ${d#-} -le $(($2 * $3 / 100)) ]
}

# is_num V...: every V a number (an empty or missing figure is not 0)
is_num() {
	local v
	for v in "$@"; do [[ $v =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || return 1; done
}

within() { # value lo hi
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

tap_done() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
	exit $?
}
