#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/summarize and check.sh's skip on made-up Meson logs: a cmocka skip
# inside a passing test is a skip, exit 77 is a skip, and under CI=true as
# root a skip for lack of root/FUSE is a failure. A shell test's "SKIP part:"
# line makes its pass a skip, like a skipped cmocka case.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp/log.json" <<'PY'
import json, sys
runs = [
    {"name": "t / all-ok", "result": "OK",
     "stdout": "[ RUN      ] a\n[       OK ] a\n", "stderr": "[  PASSED  ] 1 test(s).\n"},
    {"name": "t / case-skip", "result": "OK",
     "stdout": "[ RUN      ] a\n[       OK ] a\n[ RUN      ] b\nskipped under valgrind\n"
               "[  SKIPPED ] b\n",
     "stderr": "[  PASSED  ] 1 test(s).\n[  SKIPPED ] 1 test(s), listed below:\n"
               "[  SKIPPED ] b\n\n 1 SKIPPED TEST(S)\n"},
    {"name": "t / exit-77", "result": "SKIP", "stdout": "SKIP: /dev/fuse is missing\n"},
    {"name": "t / root-case", "result": "OK",
     "stdout": "[ RUN      ] c\nskipped: not root, cannot become another user\n[  SKIPPED ] c\n"},
    {"name": "t / broken", "result": "FAIL", "stdout": "boom\n"},
    {"name": "t / shell-part", "result": "OK",
     "stdout": "SKIP part: no /proc/sys/net/ipv6/neigh/lo for the comparison\nx: 3 passed, 0 failed\n"},
    {"name": "t / shell-root-part", "result": "OK",
     "stdout": "SKIP part: --owner needs root and setpriv\nSKIP part: sed is odd\ny: 2 passed, 0 failed\n"},
]
with open(sys.argv[1], "w") as f:
    for r in runs:
        f.write(json.dumps(r) + "\n")
PY

summ() { env "$@" "$here/summarize" "$tmp/log.json" | tail -n 1; }
check "plain: cmocka and exit-77 skips are skips" "check: 1 passed, 1 failed, 5 skipped" \
	"$(summ CI=)"
"$here/summarize" "$tmp/log.json" >/dev/null
check "plain: a failure makes summarize fail" 1 $?
check "the skips are listed with their reasons" \
	"skipped: t / case-skip: b (skipped under valgrind)
skipped: t / exit-77: /dev/fuse is missing
skipped: t / root-case: c (skipped: not root, cannot become another user)
skipped: t / shell-part: part 1 (no /proc/sys/net/ipv6/neigh/lo for the comparison)
skipped: t / shell-root-part: part 1 (--owner needs root and setpriv)
skipped: t / shell-root-part: part 2 (sed is odd)" \
	"$(CI= "$here/summarize" "$tmp/log.json" | grep '^skipped:')"
if [ "$(id -u)" = 0 ]; then
	# The valgrind skip is not for lack of root/FUSE: still a skip.
	check "CI as root: root/FUSE skips fail" "check: 1 passed, 4 failed, 2 skipped" \
		"$(summ CI=true)"
	out=$(CI=true bash -c ". '$here/check.sh'; skip /dev/fuse is missing"; echo "rc=$?")
	check "CI as root: check.sh's skip fails" "FAIL: would skip (/dev/fuse is missing), but CI=true as root must run this test
rc=1" "$out"
fi
out=$(bash -c ". '$here/check.sh'; skip_part no neigh/lo; echo went on"; echo "rc=$?")
check "check.sh's skip_part says so and goes on" "SKIP part: no neigh/lo
went on
rc=0" "$out"
out=$(CI= bash -c ". '$here/check.sh'; skip /dev/fuse is missing"; echo "rc=$?")
check "check.sh's skip exits 77" "SKIP: /dev/fuse is missing
rc=77" "$out"
finish summarize
