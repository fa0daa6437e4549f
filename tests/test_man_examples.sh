#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The manual's programs build as a reader would copy them: each example
# block (.EX ... .EE) that starts with #include is rendered by groff as man
# shows it, cut out, and compiled and linked against the built library with
# -Wall -Wextra -Werror. Every section 3 page must carry one, so a page
# whose example is a fragment (or has none) fails here.
set -u
usage="usage: test_man_examples.sh MANDIR CC SRC-INCLUDE BUILD-INCLUDE LIBDIR [CFLAGS]"
mandir=${1:?$usage}
cc=${2:?$usage}
src_inc=${3:?$usage}
build_inc=${4:?$usage}
libdir=${5:?$usage}
read -r -a cflags <<< "${6:-}"
. "$(dirname "$0")/check.sh"
command -v groff > /dev/null || skip "groff is not installed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The page with a marker line after each .EX and before each .EE, rendered
# as plain ASCII (no bold, no hyphen glyphs), then the lines between the
# markers, their common indentation removed. One file per block: NAME.N.c
extract() {
	local page=$1 out=$2
	sed -e 's/^\.EX$/.EX\nRCS_EXAMPLE_BEGIN/' -e 's/^\.EE$/RCS_EXAMPLE_END\n.EE/' "$page" |
		LC_ALL=C groff -man -Tascii -P-cbou -rLL=200n 2> /dev/null |
		awk -v out="$out" '
			/RCS_EXAMPLE_BEGIN/ { n++; inblk = 1; delete line; k = 0; next }
			/RCS_EXAMPLE_END/ {
				inblk = 0; ind = 1000
				for (i = 1; i <= k; i++)
					if (line[i] ~ /[^ ]/) { match(line[i], /^ */); if (RLENGTH < ind) ind = RLENGTH }
				f = out "." n ".c"
				for (i = 1; i <= k; i++) print substr(line[i], ind + 1) > f
				close(f); next
			}
			inblk { line[++k] = $0 }'
}

programs=0
for page in "$mandir"/*.[1-8]; do
	name=$(basename "$page")
	extract "$page" "$tmp/$name"
	found=0
	for src in "$tmp/$name".*.c; do
		[ -e "$src" ] || continue
		grep -q '^#include' "$src" || continue
		found=$((found + 1))
		programs=$((programs + 1))
		out=$("$cc" -std=gnu11 -Wall -Wextra -Werror "${cflags[@]}" -D_GNU_SOURCE -I"$src_inc" -I"$build_inc" \
			-o "$tmp/prog" "$src" -L"$libdir" -lrcustring -pthread 2>&1)
		check "$name example $(basename "$src" | sed 's/.*\.\([0-9]*\)\.c$/\1/') builds with -Wall -Wextra -Werror" \
			"" "$out"
	done
	case $name in
	*.3) check "$name has a complete example program" "yes" \
		"$([ "$found" -gt 0 ] && echo yes || echo no)" ;;
	esac
done
check "example programs found" "yes" "$([ "$programs" -ge 6 ] && echo yes || echo "no ($programs)")"
finish man-examples
