# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the shell tests: check NAME EXPECTED ACTUAL counts a result and
# shows both sides on a mismatch; finish LABEL prints the closing line and
# returns non-zero if anything failed; skip REASON ends a test that this
# machine cannot run; skip_part REASON says that one part did not run.
passed=0 failed=0

check() {
	if [ "$2" == "$3" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		printf 'FAIL %s\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"
	fi
}

finish() {
	echo "$1: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# Exit 77 (Meson's SKIP) with the reason on a "SKIP:" line, which
# tests/summarize lists. Only for what the machine lacks (root, /dev/fuse,
# mount namespaces, a tool): under CI=true as root the machine has all of
# that, so a skip there means a broken setup and fails instead.
skip() {
	if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ]; then
		echo "FAIL: would skip ($*), but CI=true as root must run this test"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}

# Say that one part of a test did not run here, for the reason given, and
# go on with the rest: tests/summarize counts the test as skipped (not
# passed) and lists the reason; under CI=true as root it fails the test when
# the reason names what that machine has (root, FUSE, mounts, a tool).
skip_part() {
	echo "SKIP part: $*"
}

# Skip unless we are root with /dev/fuse, a private mount namespace and
# every command named.
require_root_fuse() {
	local tool
	[ "$(id -u)" = 0 ] || skip "needs root (mount namespaces and FUSE mounts)"
	[ -c /dev/fuse ] || skip "/dev/fuse is missing"
	for tool in unshare "$@"; do
		command -v "$tool" >/dev/null || skip "$tool is not installed"
	done
	unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace here"
}
