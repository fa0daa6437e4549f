#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# No rcusysd the tests or the demo start reads the host's configuration.
# Run under fake-host-config.sh (a private mount namespace whose /etc, /run,
# /usr/lib, /usr/local/lib and /var/lib hold a populated rcusysd
# configuration): first a guard, an rcusysd reading the default directories
# sees the fake tunable hermetic.leak and its values (else this test could
# not fail); then an rcusysd started as the suite starts them (its
# 'hermetic' setup) sees none of it; then the demo and the tests that start
# rcusysd or apply sysctl.d directories run there and pass, their log
# showing nothing of the fake host's.
#   test_hermetic.sh BUILDDIR
set -u
build=${1:?usage: test_hermetic.sh BUILDDIR}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/check.sh"
[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace and overlays)"
if [ "${RCS_FAKE_HOST:-}" != 1 ]; then
	"$here/fake-host-config.sh" "$0" "$@"
	rc=$?
	[ $rc = 77 ] && skip "cannot build a fake host configuration here (see above)"
	exit $rc
fi
rcusysd=$build/tools/rcusysd/rcusysd
rcusysctl=$build/tools/rcusysctl/rcusysctl
tmp=$(mktemp -d /tmp/rcustring-hermetic.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# What an rcusysd started with "$@" serves of the fake host's settings.
probe() {
	local run=$tmp/run$RANDOM pid out
	mkdir -m 0700 "$run"
	"$rcusysd" --no-fuse --no-persist -d "$run" "$@" 2> "$run.log" &
	pid=$!
	for _ in $(seq 200); do [ -S "$run/control.sock" ] && break; sleep 0.05; done
	out=$("$rcusysctl" --socket "$run/control.sock" -e hermetic.leak kernel.modprobe 2>&1)
	kill "$pid"
	wait "$pid"
	echo "$out"
}
check "guard: an rcusysd reading the default directories sees the fake host" \
	"hermetic.leak = set by /etc/rcusysd/sysctl.d
kernel.modprobe = /leaked/etc/rcusysd/modprobe" \
	"$(env -u RCUSYSD_SYSCTL_DIRS -u RCUSYSD_TUNABLES_DIRS bash -c "$(declare -f probe); $(declare -p rcusysd rcusysctl tmp); probe")"
check "the suite's setup is in force here" "set, set" \
	"${RCUSYSD_SYSCTL_DIRS+set}, ${RCUSYSD_TUNABLES_DIRS+set}"
check "an rcusysd started as the suite starts it reads nothing of the host's" \
	"kernel.modprobe = /sbin/modprobe" "$(probe)"

# The demo as make demo runs it (no setup's environment).
env -u RCUSYSD_SYSCTL_DIRS -u RCUSYSD_TUNABLES_DIRS "$here/../examples/demo.sh" "$build" > "$tmp/demo.log" 2>&1
check "the demo passes on the configured host" "0" "$?"
check "the demo shows nothing of the host's" "" "$(grep -e hermetic -e leaked "$tmp/demo.log")"

# The tests that start rcusysd or read sysctl.d directories, in this
# namespace (their own log, so as not to overwrite the outer run's).
out=$(cd "$build" && meson test --no-rebuild --logbase hermetic-inner --num-processes 1 \
	rcusysd rcusysd-persist rcusysd-config rcusysd-restart rcusysd-systemd rcusysctl-cli \
	option-errors 2>&1)
rc=$?
check "the rcusysd and rcusysctl tests pass on the configured host" "0" "$rc"
[ $rc = 0 ] || { echo "$out" | grep -E '^ *[0-9]+/[0-9]+ '; grep -B2 -A10 '^FAIL' "$build/meson-logs/hermetic-inner.txt" | head -60; }
check "their output shows nothing of the host's" "" \
	"$(grep -e 'hermetic\.leak' -e '/leaked' "$build/meson-logs/hermetic-inner.txt" | head -5)"
finish hermetic
