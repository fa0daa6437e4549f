# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash disable=SC2154 # the test sets $fixture, $fuse_test, $fuse_tools
# Sourced by the FUSE shell tests, after check.sh, with the test's own
# arguments. Needs $fixture (the program that mounts the tree), $fuse_test
# (the test's name) and $fuse_tools (the commands the test runs). The
# script runs three times, each time in a process of its own:
#  1. as started: skip unless this machine can mount (root, /dev/fuse, mount
#     namespaces, the tools), then again in a private mount namespace;
#  2. there: mount the fixture's tree on a new directory, run the readers in
#     a child namespace, stop the fixture and check that it exited 0 and
#     unmounted; this step exits, with finish's status;
#  3. the readers' namespace: this file returns to the test with $MNT (the
#     mount) and $FIXTURE_PID set; fuse_bind_proc_sys binds the tree over
#     /proc/sys there.
# The fixture must never find its own mount at /proc/sys: its worker threads
# read /proc/sys themselves (glibc's free() opens
# /proc/sys/vm/overcommit_memory while it holds an arena lock), and a request
# served by its own FUSE loop can then wait on that lock forever. Hence the
# bind mount happens only in the readers' namespace.

contains() { # name, needle, haystack
	case "$3" in
	*"$2"*) passed=$((passed + 1)) ;;
	*) failed=$((failed + 1)); printf 'FAIL %s: no "%s" in\n%s\n' "$1" "$2" "$3" ;;
	esac
}

# Binds the tree over /proc/sys in the readers' namespace; the fixture,
# through its own root, must still find the kernel's /proc/sys.
fuse_bind_proc_sys() {
	mount --bind "$MNT" /proc/sys || { echo "FAIL: cannot bind-mount over /proc/sys"; exit 1; }
	check "fixture's /proc/sys" "proc" "$(stat -f -c %T "/proc/$FIXTURE_PID/root/proc/sys" 2>&1)"
}

case "${INSIDE_NS:-}" in
"")
	require_root_fuse mountpoint "${fuse_tools[@]}"
	INSIDE_NS=1 exec unshare -m --propagation private "$0" "$@"
	;;
1)
	mnt=$(mktemp -d)
	"$fixture" "$mnt" &
	pid=$!
	for _ in $(seq 600); do mountpoint -q "$mnt" && break; sleep 0.05; done
	if ! mountpoint -q "$mnt"; then
		echo "FAIL: fixture did not mount $mnt"
		kill "$pid" 2>/dev/null
		exit 1
	fi
	trap 'kill -TERM "$pid" 2>/dev/null' EXIT
	INSIDE_NS=2 MNT=$mnt FIXTURE_PID=$pid unshare -m --propagation private "$0" "$@"
	check "readers" "0" "$?"
	kill -TERM "$pid"
	wait "$pid"
	check "exit 0 on SIGTERM" "0" "$?"
	check "unmounted" "no" "$(mountpoint -q "$mnt" && echo yes || echo no)"
	rmdir "$mnt"
	trap - EXIT
	finish "$fuse_test"
	exit
	;;
esac
