#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every source file outside kernel/ (whose files follow the kernel's own
# rules) names its licence in an SPDX line within its first three lines.
# debian/changelog, copyright and source/format have fixed formats with no
# comments; debian/copyright states the licence of every file.
set -u
src=${1:?usage: test_spdx.sh SOURCE_ROOT}
. "$(dirname "$0")/check.sh"
cd "$src" || exit 1
command -v git > /dev/null && [ -e .git ] || skip "not a git checkout: the list of source files is git's"
missing=$(git ls-files | grep -v -e '^kernel/' -e '/corpus/' -e '\.md$' -e '^COPYING$' -e '^NEWS$' \
	-e '\.gitignore$' -e '\.supp$' -e '^debian/\(changelog\|copyright\|source/format\)$' | xargs -d '\n' awk '
	FNR == 1 { if (f != "" && !ok) print f; f = FILENAME; ok = 0 }
	FNR <= 3 && /SPDX-License-Identifier: / { ok = 1 }
	END { if (f != "" && !ok) print f }')
check "files without an SPDX line" "" "$missing"
check "files checked" "yes" "$([ "$(git ls-files | wc -l)" -gt 100 ] && echo yes || echo no)"
finish spdx
