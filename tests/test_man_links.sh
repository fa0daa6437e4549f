#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `man FUNCTION` works once installed: the manual (meson's "man" install
# tag) is installed into a temporary DESTDIR, and for every exported
# symbol, man -w finds a page there and man renders it with the symbol in
# its NAME section (a link page's .so must lead to its page).
set -u
build=${1:?usage: test_man_links.sh BUILDDIR MAP}
map=${2:?usage: test_man_links.sh BUILDDIR MAP}
. "$(dirname "$0")/check.sh"
command -v man > /dev/null || skip "man (man-db) is not installed"
command -v meson > /dev/null || skip "meson is not installed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(meson install -C "$build" --destdir "$tmp" --tags man --no-rebuild --quiet 2>&1)
check "meson install --tags man succeeds" "" "$out"
mandir=$(find "$tmp" -type d -path '*/share/man' | head -n 1)
check "a man directory was installed" "yes" "$([ -n "$mandir" ] && echo yes || echo no)"
[ -n "$mandir" ] || { finish man-links; exit; }

symbols=$(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$map" | sort -u)
nowhere="" unnamed="" n=0
declare -A name_of # the NAME section (up to the next heading) of each page man -w gave
for sym in $symbols; do
	n=$((n + 1))
	if ! page=$(MANPATH=$mandir man -w "$sym" 2> /dev/null); then
		nowhere="$nowhere $sym"
		continue
	fi
	# man -w follows a link page's .so: symbols of one page render alike,
	# so each page is rendered once (a render costs about 0.2 s).
	[ -n "${name_of[$page]+set}" ] || name_of[$page]=$(MANPATH=$mandir MANWIDTH=200 LC_ALL=C.UTF-8 \
		man --nh --nj "$sym" 2> /dev/null | sed -n '/^NAME/,/^[A-Z]/p')
	grep -qw -- "$sym" <<<"${name_of[$page]}" || unnamed="$unnamed $sym"
done
check "man -w finds every exported symbol in the installed tree" "" "$nowhere"
check "each renders a page whose NAME names it" "" "$unnamed"
check "symbols were read" "yes" "$([ "$n" -gt 50 ] && echo yes || echo no)"
# Link pages are .so lines, not copies.
link=$(find "$mandir" -name 'rcustring_set.3*' | head -n 1)
check "rcustring_set.3 is a .so link to rcustring(3)" ".so man3/rcustring.3" \
	"$( (zcat -f "$link" 2> /dev/null) | head -n 1)"
finish man-links
