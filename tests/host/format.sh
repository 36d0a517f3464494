#!/usr/bin/env bash
# Every C file and header is formatted as the project's .clang-format says
# (make format fixes them): one check per file, naming what differs.
. "$(dirname "$0")/../lib/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

command -v clang-format >/dev/null || { not_ok "clang-format installed" "run make deps"; tap_done; }
note "$(clang-format --version)"
files=$(make -s --no-print-directory format-files)
[ -n "$files" ] || { not_ok "files to check" "make format-files listed none"; tap_done; }
for f in $files; do
	if out=$(clang-format --dry-run --Werror "$f" 2>&1); then
		ok "$f formatted"
	else
		not_ok "$f formatted (make format)" "$(head -3 <<<"$out")"
	fi
done
tap_done
