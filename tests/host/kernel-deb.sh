#!/usr/bin/env bash
# plan: 10
# pool: reads a kernel configuration, times nothing
# The kernel path for nodes: Debian's own 6.12 config (linux-config-6.12)
# plus kernel-config/tidemark.config, after olddefconfig, has every option
# the fragment asks for, and keeps Debian's values where the fragment says
# nothing (the test VM's fragments are not merged). The package build
# itself (make kernel-deb) takes hours on 2 cores: docs/kernel.md.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
frag=kernel-config/tidemark.config

for flavour in amd64_none_amd64 amd64_none_cloud-amd64; do
	o=$tmp/$flavour
	if out=$(tools/kernel-deb.sh "$o" --config-only --flavour $flavour 2>&1); then
		ok "Debian's $flavour config merged with the fragment: the script's check passes"
	else
		not_ok "Debian's $flavour config merged with the fragment" "$out"
		continue
	fi
	# judged here again, line by line, not by the script's own function
	miss=$(grep -E '^CONFIG_[A-Z0-9_]+=' $frag | while read -r l; do grep -qxF "$l" "$o/.config" || echo "$l"; done)
	expect_eq "$flavour: every CONFIG_ line of the fragment holds ($(grep -c '^CONFIG_' $frag) lines)" "" "$miss"
	deb=$(xzcat /usr/src/linux-config-6.12/config.$flavour.xz)
	expect_eq "$flavour: Debian's own has sched_ext off (why nodes need this)" "# CONFIG_SCHED_CLASS_EXT is not set" \
		"$(grep -x '# CONFIG_SCHED_CLASS_EXT is not set' <<<"$deb")"
	keep=$(for o2 in NR_CPUS PANIC_TIMEOUT HZ PREEMPT_VOLUNTARY IPV6; do
		a=$(grep -E "^CONFIG_$o2=|^# CONFIG_$o2 is not set" <<<"$deb")
		b=$(grep -E "^CONFIG_$o2=|^# CONFIG_$o2 is not set" "$o/.config")
		[ "$a" = "$b" ] || echo "$o2: $a -> $b"
	done)
	expect_eq "$flavour: Debian's NR_CPUS, PANIC_TIMEOUT, HZ, preemption and IPv6 kept (no test-VM fragment)" "" "$keep"
done

# the check fails, naming the option, when the fragment asks what cannot hold
printf '%s\n' "# CONFIG_SCHED_CLASS_EXT is not set" CONFIG_EXT_GROUP_SCHED=y >"$tmp/bad.config"
out=$(tools/kernel-deb.sh "$tmp/bad" --config-only --fragment "$tmp/bad.config" 2>&1)
rc=$?
if [ $rc = 1 ] && grep -q "bad.config asks 'CONFIG_EXT_GROUP_SCHED=y', config has: absent" <<<"$out"; then
	ok "an option whose dependency is unmet is named, exit 1"
else
	not_ok "an option whose dependency is unmet is named, exit 1" "exit $rc" "$out"
fi
expect_fail "an unknown argument is refused" 2 "unknown argument '--bogus'" tools/kernel-deb.sh "$tmp/x" --bogus
tap_done
