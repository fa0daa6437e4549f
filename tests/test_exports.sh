#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# librcustring.so exports exactly the symbols lib/librcustring.map lists,
# each with its symbol version; the compatibility names (compat.h:
# call_usermodehelper, alloc_rcu_string, argv_split...) are not exported.
set -u
lib=${1:?usage: test_exports.sh LIBRCUSTRING.SO MAP}
map=${2:?usage: test_exports.sh LIBRCUSTRING.SO MAP INCLUDE-DIR}
inc=${3:?usage: test_exports.sh LIBRCUSTRING.SO MAP INCLUDE-DIR}
. "$(dirname "$0")/check.sh"
command -v objdump > /dev/null || skip "objdump (binutils) is not installed"

# Defined dynamic symbols, "VERSION NAME" per line (objdump -T's last two
# columns), less the version nodes themselves (*ABS*).
exported=$(objdump -T "$lib" | awk '/ DF | DO / && !/\*UND\*/ && !/\*ABS\*/ {print $(NF-1), $NF}' | sort)
listed=$(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$map" | sort)
names=$(echo "$exported" | awk '{print $2}' | sort)
check "every exported symbol is listed in the map (unlisted ones below)" "" \
	"$(comm -23 <(echo "$names") <(echo "$listed"))"
check "every listed symbol is exported" "" "$(comm -13 <(echo "$names") <(echo "$listed"))"
check "every export carries a version of the map" "" \
	"$(echo "$exported" | awk '$1 !~ /^RCUSTRING_[0-9.]+$/')"
check "the compatibility names are not exported" "" \
	"$(echo "$names" | grep -x -e call_usermodehelper -e call_usermodehelper_cleanup \
		-e call_usermodehelper_stdin -e alloc_rcu_string -e free_rcu_string \
		-e access_rcu_string -e argv_split -e argv_free)"
# Every function the public headers mark RCUSTRING_API: a new one missing
# from the map would be silently local.
declared=$(grep -hv '#define RCUSTRING_API' "$inc"/*.h | tr '\n' ' ' | grep -o 'RCUSTRING_API[^(;]*(' |
	sed -E 's/.*[ *]([A-Za-z_][A-Za-z0-9_]*)\($/\1/' | sort -u)
check "every RCUSTRING_API declaration is in the map" "" "$(comm -23 <(echo "$declared") <(echo "$listed"))"
check "some symbols were read (the check itself works)" "yes" \
	"$([ "$(echo "$names" | wc -l)" -gt 50 ] && echo yes || echo no)"
finish exports
