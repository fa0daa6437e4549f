#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make package-check: the Debian packages in DEBDIR (librcustring0,
# librcustring-dev, rcusysd) install with dpkg into a fresh root and work
# from there. The root is the host's / under an overlay in a private mount
# namespace, with nothing of rcustring in it (/usr/local, /etc/rcusysd,
# /usr/lib/rcusysd and /var/lib/rcusysd emptied, /run and /tmp fresh): so
# dpkg resolves the packages' dependencies against what is really
# installed, and runs their maintainer scripts, with no network and no
# mirror (debootstrap would need one), and everything the install writes
# goes to a tmpfs that vanishes with the namespace. In that root:
# dpkg -i, the files where Debian and the manual say, man FUNCTION, a
# program built from the installed example with pkg-config alone (fuse3.pc
# removed: a consumer that never mounts needs no libfuse3-dev), the demo
# (examples/demo.sh) run with the installed rcusysd and rcusysctl, and
# dpkg --purge.
#   test_package.sh DEBDIR
set -u
debdir=${1:?usage: test_package.sh DEBDIR}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/check.sh"

if [ "${RCS_PKG_INSIDE:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace, an overlay and chroot)"
	for tool in unshare chroot dpkg; do
		command -v "$tool" > /dev/null || skip "$tool is not installed"
	done
	grep -qw overlay /proc/filesystems || modprobe overlay 2> /dev/null ||
		skip "no overlay file system in this kernel"
	debdir=$(cd "$debdir" && pwd) || exit 1
	RCS_PKG_INSIDE=1 exec unshare -m --propagation private "$0" "$debdir"
fi

debs=()
for pkg in librcustring0 librcustring-dev rcusysd; do
	deb=$(ls "$debdir/${pkg}"_*.deb 2> /dev/null | grep -v dbgsym | head -n 1)
	check "$pkg: a .deb was built" "yes" "$([ -n "$deb" ] && echo yes || echo no)"
	[ -n "$deb" ] && debs+=("$deb")
done
[ ${#debs[@]} = 3 ] || { finish package; exit; }

tmp=$(mktemp -d /tmp/rcustring-pkg.XXXXXX)
trap 'umount -R "$tmp" 2> /dev/null; rm -rf "$tmp"' EXIT
mount -t tmpfs -o mode=0755 tmpfs "$tmp"
mkdir "$tmp/upper" "$tmp/work" "$tmp/root"
root=$tmp/root
mount -t overlay overlay -o "lowerdir=/,upperdir=$tmp/upper,workdir=$tmp/work" "$root" ||
	skip "cannot mount an overlay of / here"
# Nothing of rcustring but what the packages bring: an install under
# /usr/local (make install's default) or a host's configuration would
# otherwise answer for them. Removing in the overlay changes only it.
rm -rf "$root/usr/local" "$root/etc/rcusysd" "$root/usr/lib/rcusysd" "$root/var/lib/rcusysd"
mkdir -p "$root/usr/local"
mount --rbind /dev "$root/dev"
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }

mkdir "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"
in_root dpkg --purge rcusysd librcustring-dev librcustring0 > /dev/null 2>&1
out=$(in_root dpkg -i $(printf '/tmp/debs/%s ' "${debs[@]##*/}") 2>&1)
rc=$?
check "dpkg -i of the three packages succeeds" "0" "$rc"
[ "$rc" = 0 ] || echo "$out"
for pkg in librcustring0 librcustring-dev rcusysd; do
	check "$pkg is installed" "install ok installed" \
		"$(in_root dpkg-query -W -f '${Status}' "$pkg" 2>&1)"
	check "$pkg carries its copyright file and NEWS (as changelog.gz)" "yes" \
		"$([ -s "$root/usr/share/doc/$pkg/copyright" ] &&
			zgrep -q 'Version 0.1.0' "$root/usr/share/doc/$pkg/changelog.gz" && echo yes || echo no)"
done
for f in /usr/sbin/rcusysd /usr/bin/rcusysctl /usr/libexec/rcustring/rcusysctl-etcd \
	/lib/systemd/system/rcusysd.service /usr/lib/x86_64-linux-gnu/librcustring.so.0 \
	/usr/include/rcustring/sysctl.h; do
	check "installed: $f" "yes" "$([ -e "$root$f" ] && echo yes || echo no)"
done
check "the /etc/rcusysd layout" "yes" \
	"$([ -d "$root/etc/rcusysd/tunables.d" ] && [ -d "$root/etc/rcusysd/sysctl.d" ] && echo yes || echo no)"
check "the unit starts the installed rcusysd" "yes" \
	"$(grep -q '^ExecStart=/usr/sbin/rcusysd ' "$root/lib/systemd/system/rcusysd.service" && echo yes || echo no)"
check "rcusysd --version" "0.1.0" "$(in_root rcusysd --version 2>&1 | grep -o '0\.1\.0' | head -n 1)"
check "man -w rcustring_set finds its link to rcustring(3)" "/usr/share/man/man3/rcustring.3.gz" \
	"$(in_root sh -c 'readlink -f "$(man -w rcustring_set)"' 2>&1)"
check "man sysctl_entry_path renders" "yes" \
	"$(in_root man sysctl_entry_path 2> /dev/null | grep -q 'sysctl_entry_path' && echo yes || echo no)"

# A consumer built from the installed example with pkg-config alone.
rm -f "$root"/usr/lib/*/pkgconfig/fuse3.pc "$root"/usr/share/pkgconfig/fuse3.pc
out=$(in_root sh -c 'cc -Wall -Wextra -Werror -o /tmp/tunable-readers \
	/usr/share/doc/rcustring/examples/tunable-readers.c $(pkg-config --cflags --libs rcustring)' 2>&1)
check "tunable-readers.c builds from the installed package (no fuse3.pc)" "" "$out"
lib=$(in_root ldd /tmp/tunable-readers 2>&1 | sed -n 's/.*librcustring.so.0 => \([^ ]*\) .*/\1/p')
check "it runs on the installed librcustring.so.0" "/usr/lib/x86_64-linux-gnu/librcustring.so.0.1.0" \
	"$([ -n "$lib" ] && in_root readlink -f "$lib")"

# The demo against the installed programs.
mkdir -p "$root/opt/rcustring-demo/tests"
cp -r "$here/../examples" "$root/opt/rcustring-demo/"
cp "$here/check.sh" "$root/opt/rcustring-demo/tests/"
in_root env DEMO_RCUSYSD=/usr/sbin/rcusysd DEMO_RCUSYSCTL=/usr/bin/rcusysctl \
	DEMO_READERS=/tmp/tunable-readers /opt/rcustring-demo/examples/demo.sh /nonexistent \
	> "$tmp/demo.log" 2>&1
rc=$?
check "the demo runs against the installed rcusysd and rcusysctl (exit status)" "0" "$rc"
check "the demo ends with demo: OK" "demo: OK" "$(tail -n 1 "$tmp/demo.log")"
[ "$rc" = 0 ] || tail -n 30 "$tmp/demo.log"
grep '^demo: reads=' "$tmp/demo.log"

out=$(in_root dpkg --purge rcusysd librcustring-dev librcustring0 2>&1)
check "dpkg --purge succeeds" "0" "$?"
check "purge leaves no rcusysd, library or /etc/rcusysd" "" \
	"$(ls -d "$root/usr/sbin/rcusysd" "$root"/usr/lib/*/librcustring.so.0 "$root/etc/rcusysd" 2> /dev/null)"
finish package
