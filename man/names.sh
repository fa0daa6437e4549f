#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The names a manual page's NAME section gives, one a line: what man-db's
# whatis knows the page by, and so the per-function link pages meson
# installs (man/meson.build) and the names tests/test_man.sh holds against
# the exported symbols. The page's own file name comes first.
# Usage: names.sh PAGE
page=${1:?usage: names.sh PAGE}
base=$(basename "$page")
echo "${base%.*}"
sed -n '/^\.SH NAME/,/^\.SH/{/^\.SH/d;p}' "$page" | tr '\n' ' ' |
	sed 's/ \\-.*//' | tr ',' '\n' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' |
	grep -E '^[A-Za-z_][A-Za-z0-9_.-]*$' | grep -vx "${base%.*}" || true
