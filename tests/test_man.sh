#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every manual page renders with man -l, with groff's warnings on (man
# --warnings), and gives no warning and no error; each has a NAME section.
set -u
mandir=${1:?usage: test_man.sh MANDIR}
. "$(dirname "$0")/check.sh"
command -v man > /dev/null || skip "man (man-db) is not installed"
command -v groff > /dev/null || skip "groff is not installed"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
n=0
for page in "$mandir"/*.[1-8]; do
	n=$((n + 1))
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 > "$tmp")
	check "$(basename "$page"): no groff warning or error" "" "$out"
	check "$(basename "$page"): has a NAME section" "yes" \
		"$(grep -q '^NAME' "$tmp" && echo yes || echo no)"
done
check "pages found" "yes" "$([ "$n" -ge 10 ] && echo yes || echo "no ($n)")"
finish man-pages
