#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every manual page renders with man -l, with groff's warnings on (man
# --warnings), and gives no warning and no error; each has a NAME section.
# Given the version script and the public headers, the manual is complete:
# every exported symbol is a name of exactly one page's NAME section (so
# its link page exists: man/meson.build), every public type is on a page,
# and every member of a public struct is on a page that names the struct.
set -u
usage="usage: test_man.sh MANDIR [MAP INCLUDE-DIR]"
mandir=${1:?$usage}
map=${2:-}
inc=${3:-}
here=$(dirname "$0")
. "$here/check.sh"
command -v man > /dev/null || skip "man (man-db) is not installed"
command -v groff > /dev/null || skip "groff is not installed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for page in "$mandir"/*.[1-8]; do
	n=$((n + 1))
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 > "$tmp/out")
	check "$(basename "$page"): no groff warning or error" "" "$out"
	check "$(basename "$page"): has a NAME section" "yes" \
		"$(grep -q '^NAME' "$tmp/out" && echo yes || echo no)"
	"$mandir/names.sh" "$page" | sed "s|\$| $(basename "$page")|" >> "$tmp/names"
done
check "pages found" "yes" "$([ "$n" -ge 10 ] && echo yes || echo "no ($n)")"
[ -n "$map" ] || { finish man-pages; exit; }

# Exported symbols against the NAME sections.
sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$map" | sort -u > "$tmp/symbols"
awk '{print $1}' "$tmp/names" | sort -u > "$tmp/named"
check "every exported symbol is named in a page's NAME section (missing below)" "" \
	"$(comm -23 "$tmp/symbols" "$tmp/named")"
check "no name is in two pages' NAME sections (the link would be ambiguous)" "" \
	"$(awk '{print $1}' "$tmp/names" | sort | uniq -d)"
check "symbols were read (the check itself works)" "yes" \
	"$([ "$(wc -l < "$tmp/symbols")" -gt 50 ] && echo yes || echo no)"

# Public types: every typedef, struct and enum a header defines.
types=$(cat "$inc"/*.h | sed -n -e 's/^typedef .*[ (*]\([a-z_][a-z0-9_]*\)[)]*(.*/\1/p' \
	-e 's/^typedef [^(]* \**\([a-z_][a-z0-9_]*\);$/\1/p' \
	-e 's/^\(struct\|enum\) \([a-z_][a-z0-9_]*\) {.*/\2/p' | sort -u)
missing=""
for t in $types; do
	grep -qw -- "$t" "$mandir"/*.[1-8] || missing="$missing $t"
done
check "every public type is on a page" "" "$missing"
check "types were read" "yes" "$([ "$(echo "$types" | wc -w)" -ge 15 ] && echo yes || echo no)"

# Struct members, marked up as names (\fIfield\fP, .I field, .TP items,
# a synopsis line "type field;"), on a page that names the struct. struct
# rcustring is the exception: its members are the library's (rcustring(3)).
missing=""
fields=0
while read -r st field; do
	[ "$st" = rcustring ] && continue
	fields=$((fields + 1))
	found=no
	for page in $(grep -lw -- "$st" "$mandir"/*.[1-8]); do
		if grep -Eq -- "\\\\f[IB]$field\\\\f|\\\\->$field\\b|^\\.[IB]R? (.*[ ,])?\"?$field\\b|[ *]$field(\\[[A-Z_]*\\])?;" "$page"; then
			found=yes
			break
		fi
	done
	[ $found = yes ] || missing="$missing $st.$field"
done < <(awk -f "$here/public_fields.awk" "$inc"/*.h)
check "every member of a public struct is on a page naming the struct" "" "$missing"
check "members were read" "yes" "$([ "$fields" -ge 40 ] && echo yes || echo no)"
finish man-pages
