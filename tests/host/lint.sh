#!/usr/bin/env bash
# plan: 5
# pool: reads files, times nothing
# Every shell script and Python helper of the tree linted: shellcheck at
# warning level (.shellcheckrc: sourced files followed) and pyflakes. Each
# linter is first shown a file with a planted fault: one that no longer
# reports it would pass the tree by saying nothing.
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v shellcheck >/dev/null && command -v pyflakes3 >/dev/null ||
	{ not_ok "shellcheck and pyflakes3 installed" "run make deps"; tap_done; }
note "shellcheck $(shellcheck --version | sed -n 's/^version: //p'), pyflakes $(pyflakes3 --version | awk '{ print $1 }')"

# what git tracks: *.sh and *.py, and files whose first line names the shell or Python
mapfile -t sh < <(git ls-files -z | xargs -0 awk 'FNR == 1 { if (FILENAME ~ /\.sh$/ || /^#!.*(bash|\/sh)( |$)/) print FILENAME; nextfile }' | sort -u)
mapfile -t py < <(git ls-files -z | xargs -0 awk 'FNR == 1 { if (FILENAME ~ /\.py$/ || /^#!.*python/) print FILENAME; nextfile }' | sort -u)
if [ "${#sh[@]}" -ge 100 ] && [ "${#py[@]}" -ge 20 ]; then
	ok "the tree's scripts found (${#sh[@]} shell, ${#py[@]} Python)"
else
	not_ok "the tree's scripts found" "${#sh[@]} shell, ${#py[@]} Python (want 100 and 20 or more)"
fi

# planted: a variable never read, a cd that may fail; a name never defined
printf '#!/usr/bin/env bash\nunused=1\ncd /nowhere\n' >"$tmp/bad.sh"
printf 'import os\nprint(undefined_name)\n' >"$tmp/bad.py"
out=$(shellcheck -x -S warning -f gcc "$tmp/bad.sh" 2>&1)
if grep -q SC2034 <<<"$out" && grep -q SC2164 <<<"$out"; then
	ok "shellcheck reports a planted fault"
else
	not_ok "shellcheck reports a planted fault" "$out"
fi
out=$(pyflakes3 "$tmp/bad.py" 2>&1)
if grep -q "'os' imported but unused" <<<"$out" && grep -q "undefined name 'undefined_name'" <<<"$out"; then
	ok "pyflakes reports a planted fault"
else
	not_ok "pyflakes reports a planted fault" "$out"
fi

if out=$(shellcheck -x -S warning -f gcc "${sh[@]}" 2>&1); then
	ok "shellcheck: no warning in ${#sh[@]} scripts"
else
	not_ok "shellcheck: no warning in ${#sh[@]} scripts ($(grep -c ': \(warning\|error\):' <<<"$out") found)" "$out"
fi
if out=$(pyflakes3 "${py[@]}" 2>&1); then
	ok "pyflakes: nothing in ${#py[@]} Python files"
else
	not_ok "pyflakes: nothing in ${#py[@]} Python files" "$out"
fi
tap_done
