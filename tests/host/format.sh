#!/usr/bin/env bash
# plan: 1
# Every C file and header is formatted as the project's .clang-format says
# (make format fixes them): one check, naming each file that differs and how.
# shellcheck source=../lib/lib.sh
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

command -v clang-format >/dev/null || { not_ok "clang-format installed" "run make deps"; tap_done; }
note "$(clang-format --version)"
files=$(make -s --no-print-directory format-files)
[ -n "$files" ] || { not_ok "files to check" "make format-files listed none"; tap_done; }
n=0 bad=()
for f in $files; do
	n=$((n + 1))
	out=$(clang-format --dry-run --Werror "$f" 2>&1) || bad+=("$f: $(head -3 <<<"$out")")
done
if [ "${#bad[@]}" -eq 0 ]; then
	ok "all $n C files formatted"
else
	not_ok "all $n C files formatted (make format): ${#bad[@]} differ" "${bad[@]}"
fi
tap_done
