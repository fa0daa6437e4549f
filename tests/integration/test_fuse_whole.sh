#!/usr/bin/env bash
# Whole values through the FUSE mount: every open file reads exactly one
# value, whatever the reader's read sizes and however writes land between
# its read() calls; names holding a '.' in their first component resolve.
# Readers are real tools (cat, dd bs=1, procps sysctl, rcusysctl --root) and
# a Python reader doing 3-byte reads; two writers flip a 30- and a 20-byte
# value that differ in every byte.
# Exit 77 (skip) only where the machine cannot; never as root under CI=true.
set -u
fixture=${1:?usage: test_fuse_whole.sh FIXTURE RCUSYSCTL}
cli=${2:?usage: test_fuse_whole.sh FIXTURE RCUSYSCTL}

if [ "${INSIDE_NS:-}" != 1 ]; then
	skip() {
		if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ]; then
			echo "FAIL: cannot run as root under CI: $*"
			exit 1
		fi
		echo "SKIP: $*"
		exit 77
	}
	[ "$(id -u)" = 0 ] || skip "needs root (mount namespaces and bind mounts)"
	[ -c /dev/fuse ] || skip "/dev/fuse is missing"
	for tool in unshare sysctl mountpoint python3 dd; do
		command -v "$tool" >/dev/null || skip "$tool is not installed"
	done
	unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace here"
	INSIDE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi

. "$(dirname "$0")/../check.sh"
contains() { # name, needle, haystack
	case "$3" in
	*"$2"*) passed=$((passed + 1)) ;;
	*) failed=$((failed + 1)); printf 'FAIL %s: no "%s" in\n%s\n' "$1" "$2" "$3" ;;
	esac
}

mnt=$(mktemp -d)
"$fixture" "$mnt" &
pid=$!
for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.05; done
if ! mountpoint -q "$mnt"; then
	echo "FAIL: fixture did not mount $mnt"
	kill "$pid" 2>/dev/null
	exit 1
fi
cleanup() {
	mountpoint -q /proc/sys && umount /proc/sys
	kill -TERM "$pid" 2>/dev/null
}
trap cleanup EXIT

# ---- names holding a '.' in the first component ----
check "readdir lists them" "app.d eth0.200" "$(ls "$mnt" | grep '\.' | tr '\n' ' ' | sed 's/ $//')"
check "cat /eth0.200/mtu" "1500" "$(cat "$mnt/eth0.200/mtu" 2>&1)"
check "cat /app.d/sub/x" "x" "$(cat "$mnt/app.d/sub/x" 2>&1)"
check "ls /app.d" "sub" "$(ls "$mnt/app.d" 2>&1)"
check "ls /app.d/sub" "x" "$(ls "$mnt/app.d/sub" 2>&1)"
check "stat /app.d" "directory" "$(stat -c %F "$mnt/app.d" 2>&1)"
echo 9000 > "$mnt/eth0.200/mtu" 2>/dev/null
check "write /eth0.200/mtu" "9000" "$(cat "$mnt/eth0.200/mtu" 2>&1)"
mount --bind "$mnt" /proc/sys
# procps takes a name whose first separator is '/' as a path as it stands.
check "procps sysctl, slash form" "9000" "$(sysctl -n /eth0.200/mtu 2>&1)"
check "procps sysctl -n, slash form" "x" "$(sysctl -n /app.d/sub/x 2>&1)"
all=$("$cli" --root "$mnt" -a 2>&1)
contains "rcusysctl -a app.d" "app/d.sub.x = x" "$all"
contains "rcusysctl -a eth0.200" "eth0/200.mtu = 9000" "$all"

# ---- clean shutdown ----
umount /proc/sys
kill -TERM "$pid"
wait "$pid"
check "exit 0 on SIGTERM" "0" "$?"
check "unmounted" "no" "$(mountpoint -q "$mnt" && echo yes || echo no)"
rmdir "$mnt"
trap - EXIT

finish fuse-whole
