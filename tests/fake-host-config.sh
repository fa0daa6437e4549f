#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs COMMAND as on a host an operator has configured: in a private mount
# namespace, /etc, /run, /usr/lib, /usr/local/lib and /var/lib are overlays
# (the host's files below, changes in a temporary directory that goes with
# the namespace) holding rcusysd's directories populated with tunables and
# settings that a test would notice: a tunable "hermetic.leak" and values
# for the seed's entries (kernel.modprobe, kernel.core_pattern, ...) in every
# sysctl.d and tunables.d directory rcusysd and rcusysctl --system read by
# default, and a default state file. Nothing reaches the host.
#   fake-host-config.sh COMMAND [ARG...]    (root; exit 77 where it cannot)
set -u
[ $# -ge 1 ] || { echo "usage: fake-host-config.sh COMMAND [ARG...]" >&2; exit 2; }
if [ "${RCS_FAKE_HOST:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: fake-host-config.sh needs root"; exit 77; }
	unshare -m --propagation private true 2> /dev/null ||
		{ echo "SKIP: cannot create a mount namespace here"; exit 77; }
	RCS_FAKE_HOST=1 exec unshare -m --propagation private "$0" "$@"
fi

tmp=$(mktemp -d /tmp/rcustring-fakehost.XXXXXX)
mount -t tmpfs -o mode=0700 tmpfs "$tmp" || exit 1
n=0
for d in /etc /run /usr/lib /usr/local/lib /var/lib; do
	n=$((n + 1))
	mkdir -p "$tmp/u$n" "$tmp/w$n"
	[ -d "$d" ] || { echo "fake-host-config.sh: no $d" >&2; exit 1; }
	mount -t overlay overlay -o "lowerdir=$d,upperdir=$tmp/u$n,workdir=$tmp/w$n" "$d" || {
		echo "SKIP: cannot mount an overlay on $d"
		exit 77
	}
done
for base in /etc/rcusysd /run/rcusysd /usr/local/lib/rcusysd /usr/lib/rcusysd; do
	mkdir -p "$base/tunables.d" "$base/sysctl.d"
	cat > "$base/tunables.d/50-hermetic-leak.conf" <<-CONF
	hermetic.leak string maxlen=64 default="from $base" desc="host tunable: must not be seen"
	CONF
	cat > "$base/sysctl.d/50-hermetic-leak.conf" <<-CONF
	hermetic.leak = set by $base/sysctl.d
	kernel.modprobe = /leaked$base/modprobe
	kernel.core_pattern = leaked-core-pattern
	kernel.poweroff_cmd = /leaked/poweroff
	kernel.hotplug = /leaked/hotplug
	CONF
done
# The kernel's own sysctl.d too (rcusysctl --system with --root reads it).
mkdir -p /etc/sysctl.d
echo "kernel.modprobe = /leaked/etc-sysctl.d" > /etc/sysctl.d/99-hermetic-leak.conf
mkdir -p /var/lib/rcusysd && chmod 0700 /var/lib/rcusysd
echo "kernel.modprobe = /leaked/state" > /var/lib/rcusysd/state.conf
RCS_FAKE_HOST_DIR=$tmp "$@"
rc=$?
umount -l /etc /run /usr/lib /usr/local/lib /var/lib 2> /dev/null
umount -l "$tmp" 2> /dev/null
rmdir "$tmp" 2> /dev/null
exit $rc
