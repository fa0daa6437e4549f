#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The demo must fail, naming the scenario, when a scenario does nothing:
# here the crashing program is pointed at nothing.
#   test_demo_fails.sh BUILD_DIR
set -u
build=${1:?usage: test_demo_fails.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/check.sh"
[ "$(id -u)" = 0 ] || skip "the demo needs root"

out=$(DEMO_CRASH_ME=/nonexistent/crash-me "$here/../examples/demo.sh" "$build" 1 2>&1)
rc=$?
check "exit status with no crashing program" 1 "$rc"
check "the failing scenario is named" \
	"demo: FAIL: crash records: rcusysd did not start /nonexistent/crash-me
demo: FAIL: crash records: rcusysd did not start /nonexistent/crash-me
demo: FAIL: crash records: 0 record files, want 1 (none for /bin/true)
demo: FAIL (3 check(s) failed, named above)" \
	"$(grep '^demo: FAIL' <<< "$out")"
[ "$failed" = 0 ] || printf '%s\n' "--- demo output" "$out"

# Readers that read nothing: reads=N must not count what did not happen.
out=$(DEMO_READERS=/bin/true "$here/../examples/demo.sh" "$build" 1 2>&1)
rc=$?
check "exit status with readers that read nothing" 1 "$rc"
check "the failing scenario is named" \
	"demo: FAIL: lock-free readers: no reads counted (no summary line from /bin/true)
demo: FAIL (1 check(s) failed, named above)" \
	"$(grep '^demo: FAIL' <<< "$out")"
[ "$failed" = 0 ] || printf '%s\n' "--- demo output" "$out"
finish demo-fails
