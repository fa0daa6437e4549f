#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysctl against a tree of files (--root), against /proc/sys next to the
# real procps sysctl, and over the control socket of socket-fixture. Each
# failed check prints what differed; any failure exits 1.
set -u
cli=${1:?usage: test_rcusysctl.sh PATH-TO-rcusysctl [PATH-TO-socket-fixture]}
fixture=${2:-}
root=$(mktemp -d)
# -p's files outside the tree, in a directory of their own: run by root,
# rcusysctl refuses a file whose directory others may write (as /tmp).
confdir=$(mktemp -d)
fixture_pid=
trap '[ -n "$fixture_pid" ] && kill "$fixture_pid" 2>/dev/null; rm -rf "$root" "$confdir"' EXIT
. "$(dirname "$0")/../check.sh"

mkdir -p "$root/kernel" "$root/net/ipv4/conf/eth0.200" "$root/net/ipv4/conf/lo"
printf 'core\n' > "$root/kernel/core_pattern"
printf '/sbin/modprobe\n' > "$root/kernel/modprobe"
printf '0\n' > "$root/net/ipv4/conf/eth0.200/forwarding"
printf '1\n' > "$root/net/ipv4/conf/lo/forwarding"
mkdir -p "$root/vlan.d/eth0.300"
printf '1500\n' > "$root/vlan.d/eth0.300/mtu"
printf 'one\ntwo\n' > "$root/kernel/lines"
run() { "$cli" --root "$root" "$@" 2>&1; echo "rc=$?"; }

# Only rcusysctl-etcd (run for --etcd) loads libcurl and its ~30 libraries,
# which cost ~20 ms at every start of rcusysctl.
check "rcusysctl does not link libcurl" "" "$(readelf -d "$cli" | grep -o 'libcurl[^]]*')"

check "read one" "kernel.core_pattern = core
rc=0" "$(run kernel.core_pattern)"
check "slash key" "kernel.modprobe = /sbin/modprobe
rc=0" "$(run kernel/modprobe)"
check "-n values" "core
/sbin/modprobe
rc=0" "$(run -n kernel.core_pattern kernel.modprobe)"
check "-N names" "kernel.core_pattern
rc=0" "$(run -N kernel.core_pattern)"
check "-a sorted, dotted names shown with /, a dotted first component in slash form" "kernel.core_pattern = core
kernel.lines = one
kernel.lines = two
kernel.modprobe = /sbin/modprobe
net.ipv4.conf.eth0/200.forwarding = 0
net.ipv4.conf.lo.forwarding = 1
/vlan.d/eth0.300/mtu = 1500
rc=0" "$(run -a)"
# Every name -a prints reads back as printed.
roundtrip() {
	local k out=
	while IFS= read -r k; do
		out+="$k=$("$@" -n "$k" 2>&1 | head -1);"
	done < <("$@" -N -a)
	printf '%s' "$out"
}
check "names round-trip (--root)" "kernel.core_pattern=core;kernel.lines=one;kernel.modprobe=/sbin/modprobe;net.ipv4.conf.eth0/200.forwarding=0;net.ipv4.conf.lo.forwarding=1;/vlan.d/eth0.300/mtu=1500;" \
	"$(roundtrip "$cli" --root "$root")"
check "-b: values only, no newlines" "coreonetworc=0" "$(run -b kernel.core_pattern kernel.lines)"
check "-N -b: names" "kernel.core_pattern
rc=0" "$(run -N -b kernel.core_pattern)"
check "-b -w echoes the value alone" "|xrc=0" "$(run -b -w 'kernel.core_pattern=|x')"
check "key = value: spaces around '=' and the value trimmed" "kernel.core_pattern = a b
rc=0" "$(run -w ' kernel.core_pattern  =  a b  ')"
check "value written" "a b" "$(cat "$root/kernel/core_pattern")"
printf 'core\n' > "$root/kernel/core_pattern"
check "empty name" "rcusysctl: \"\" is an unknown key
rc=255" "$(run -e '')"
check "invalid -r pattern matches nothing" "rc=0" "$(run -r '(' -a)"
check "directory lists its entries" "net.ipv4.conf.lo.forwarding = 1
rc=0" "$(run net.ipv4.conf.lo)"
check "-r pattern" "net.ipv4.conf.eth0/200.forwarding = 0
net.ipv4.conf.lo.forwarding = 1
rc=0" "$(run -a -r 'forwarding$')"
check "unknown key" "rcusysctl: cannot stat $root/kernel/nope: No such file or directory
rc=1" "$(run kernel.nope)"
check "-e ignores unknown" "rc=0" "$(run -e kernel.nope)"

check "-w writes and echoes" "kernel.core_pattern = |/bin/crash %p
rc=0" "$(run -w 'kernel.core_pattern=|/bin/crash %p')"
check "value written" "|/bin/crash %p" "$(cat "$root/kernel/core_pattern")"
check "-q quiet write, key=value without -w" "rc=0" "$(run -q kernel.modprobe=/usr/sbin/modprobe)"
check "value written" "/usr/sbin/modprobe" "$(cat "$root/kernel/modprobe")"
check "write unknown key" "rcusysctl: cannot stat $root/kernel/nope: No such file or directory
rc=1" "$(run -w kernel.nope=1)"
check "malformed -w" "rcusysctl: \"kernel.modprobe\" must be of the form name=value
rc=1" "$(run -w kernel.modprobe)"

conf=$confdir/rcusysctl-test.conf
cat > "$conf" <<'CONF'
# comment
; comment
kernel.core_pattern = core.%p
-kernel.missing = 1
net.ipv4.conf.*.forwarding = 1
not an assignment
CONF
check "-p file: comments, '-' prefix, globs, bad line (read whole before any write)" \
	"rcusysctl: $conf:6: invalid syntax: \"not an assignment\" is not an assignment (expected key = value), continuing...
kernel.core_pattern = core.%p
net.ipv4.conf.eth0/200.forwarding = 1
net.ipv4.conf.lo.forwarding = 1
rc=1" "$(run -p "$conf")"
check "glob applied" "1" "$(cat "$root/net/ipv4/conf/eth0.200/forwarding")"
check "-p - reads stdin" "kernel.modprobe = /x
rc=0" "$(echo 'kernel.modprobe=/x' | run -p -)"
rm -f "$conf"
# Run by root, -p reads its file through rcusysd's file check (the tree of
# files too: /proc/sys is root's as much as rcusysd is); another user's -p
# is that user's own writes, and reads what that user can read.
if [ "$(id -u)" = 0 ]; then
	mkdir -m 1777 "$confdir/open"
	echo 'kernel.modprobe = /from-open-dir' > "$confdir/open/x.conf"
	check "-p as root: a file in a directory others may write is refused, nothing written" \
		"rcusysctl: $confdir/open/x.conf: refused: its directory is writable by group or others (mode 1777) (skipped)
rc=1
/x" "$(run -p "$confdir/open/x.conf"; cat "$root/kernel/modprobe")"
else
	skip_part "-p as root: the file check (not root)"
fi
# Debian's /etc/sysctl.d/99-sysctl.conf, a link to ../sysctl.conf: not
# followed (the check takes no link) and not refused either, since --root's
# --system reads /etc/sysctl.conf itself, last. A private mount namespace
# shows the kernel's directories empty (tmpfs, mode 0755) but for the link.
# (/etc/sysctl.conf and /etc/sysctl.d must exist: a bind mount covers them,
# nothing is made or changed in the host's /etc.)
if [ "$(id -u)" = 0 ] && [ -f /etc/sysctl.conf ] && [ -d /etc/sysctl.d ] &&
	unshare -m --propagation private true 2>/dev/null; then
	echo 'kernel.modprobe = /from-sysctl-conf' > "$confdir/sysctl.conf"
	check "--system --root: Debian's link to /etc/sysctl.conf skipped, the file applied last" \
		"* Skipping /etc/sysctl.d/99-sysctl.conf: a link to /etc/sysctl.conf, applied last ...
* Applying /etc/sysctl.conf ...
kernel.modprobe = /from-sysctl-conf
rc=0" "$(unshare -m --propagation private sh -c '
		for d in /etc/sysctl.d /run/sysctl.d /usr/local/lib/sysctl.d /usr/lib/sysctl.d /lib/sysctl.d; do
			[ ! -d "$d" ] || mount -t tmpfs -o mode=0755 none "$d" || exit 1; done &&
		ln -s ../sysctl.conf /etc/sysctl.d/99-sysctl.conf &&
		mount --bind "$2" /etc/sysctl.conf && "$1" --root "$3" --system 2>&1' sh "$cli" "$confdir/sysctl.conf" "$root"
		echo "rc=$?")"
else
	skip_part "--system --root and /etc/sysctl.d/99-sysctl.conf: needs root, /etc/sysctl.conf and a private mount namespace"
fi

sys=$(mktemp -d)
mkdir -p "$sys/etc" "$sys/usr"
echo 'kernel.modprobe = /etc-wins' > "$sys/etc/50-a.conf"
echo 'kernel.modprobe = /usr-loses' > "$sys/usr/50-a.conf"
echo 'kernel.core_pattern = usr-only' > "$sys/usr/10-b.conf"
echo 'kernel.core_pattern = ignored' > "$sys/usr/README"
check "--system: first directory wins per basename, sorted by basename, merged" "* Applying $sys/usr/10-b.conf ...
* Applying $sys/etc/50-a.conf ...
kernel.core_pattern = usr-only
kernel.modprobe = /etc-wins
rc=0" "$(RCUSYSCTL_SYSTEM_DIRS="$sys/etc:$sys/usr" run --system)"
# --cat-config: what --system reads, in its order, as systemd-sysctl --cat-config prints it.
mkdir -p "$sys/run"
ln -s /dev/null "$sys/etc/60-masked.conf"
echo 'kernel.modprobe = /hidden' > "$sys/usr/60-masked.conf"
printf 'kernel.lines = no newline' > "$sys/run/70-c.conf"
check "--cat-config: each file after # PATH, a masked one noted, in --system's order" "# $sys/usr/10-b.conf
kernel.core_pattern = usr-only

# $sys/etc/50-a.conf
kernel.modprobe = /etc-wins

# $sys/etc/60-masked.conf
# masked: a link to /dev/null hides the files of its name

# $sys/run/70-c.conf
kernel.lines = no newline
rc=0" "$(RCUSYSCTL_SYSTEM_DIRS="$sys/etc:$sys/run:$sys/usr" run --cat-config)"
check "--cat-config takes no names" "rcusysctl: --cat-config takes no names
Try 'rcusysctl --help' for more information.
rc=1" "$(run --cat-config kernel.modprobe)"
rm "$sys/etc/60-masked.conf" "$sys/usr/60-masked.conf" "$sys/run/70-c.conf"
# --prefix without --etcd limits what --system and -p apply, as systemd-sysctl's does.
printf 'core\n' > "$root/kernel/core_pattern"
check "--system --prefix: only keys at or below the prefix apply" "* Applying $sys/usr/10-b.conf ...
* Applying $sys/etc/50-a.conf ...
kernel.modprobe = /etc-wins
rc=0" "$(RCUSYSCTL_SYSTEM_DIRS="$sys/etc:$sys/usr" run --system --prefix kernel.modprobe)"
check "--system --prefix: the key outside it is untouched" "core" "$(cat "$root/kernel/core_pattern")"
echo 'net.ipv4.conf.*.forwarding = 7' > "$sys/etc/80-glob.conf"
echo 'net.ipv4.conf.eth0/200.forwarding = 5' > "$sys/etc/90-net.conf"
printf '0\n' > "$root/net/ipv4/conf/eth0.200/forwarding"
check "-p --prefix (/proc/sys form): a glob and explicit keys apply only below it" "0 7 core" \
	"$(run -q --prefix /proc/sys/net/ipv4/conf/lo -p "$sys/etc/80-glob.conf" "$sys/etc/90-net.conf" \
		"$sys/usr/10-b.conf" >/dev/null
	for f in net/ipv4/conf/eth0.200/forwarding net/ipv4/conf/lo/forwarding kernel/core_pattern; do
		cat "$root/$f"; echo; done | xargs)"
printf '1\n' > "$root/net/ipv4/conf/lo/forwarding"
check "--prefix alone is refused, not ignored" "rcusysctl: --prefix limits what -p and --system apply (or names the etcd prefix, with --etcd); nothing else takes it
Try 'rcusysctl --help' for more information.
rc=1" "$(run --prefix kernel kernel.modprobe)"
rm -rf "$sys"

conf=$confdir/rcusysctl-dry.conf
printf 'kernel.core_pattern = dry\nkernel.modprobe = /etc-wins\nnet.ipv4.conf.*.forwarding = 1\n' > "$conf"
check "--dry-run -p: what would change, nothing written" "kernel.core_pattern: core -> dry
net.ipv4.conf.eth0/200.forwarding: 0 -> 1
rc=0" "$(printf 'core\n' > "$root/kernel/core_pattern"; printf '0\n' > "$root/net/ipv4/conf/eth0.200/forwarding"; run --dry-run -p "$conf")"
check "--dry-run wrote nothing" "core 0" "$(cat "$root/kernel/core_pattern" "$root/net/ipv4/conf/eth0.200/forwarding" | xargs)"
rm -f "$conf"
check "--version" "rcusysctl $(sed -n "s/^  version : '\(.*\)',/\1/p" "$(dirname "$0")/../../meson.build")
rc=0" "$(run --version)"

check "--help" "0" "$("$cli" --help >/dev/null; echo $?)"
check "bad option" "1" "$("$cli" --bogus 2>/dev/null; echo $?)"

# The same answers as procps sysctl on the kernel's own tree.
if command -v sysctl >/dev/null && [ -r /proc/sys/kernel/ostype ]; then
	check "matches procps -n" "$(sysctl -n kernel.ostype kernel.pid_max)" \
		"$("$cli" --root /proc/sys -n kernel.ostype kernel.pid_max)"
	check "matches procps" "$(sysctl kernel.ostype)" "$("$cli" --root /proc/sys kernel.ostype)"
	# Output and exit status of procps 4.0.2 and ours, side by side
	# ("sysctl:" read as "rcusysctl:").
	both() {
		check "matches procps: $1" \
			"$(sysctl "${@:2}" 2>&1 | sed 's/^sysctl:/rcusysctl:/' | od -c; echo "rc=${PIPESTATUS[0]}")" \
			"$("$cli" --root /proc/sys "${@:2}" 2>&1 | od -c; echo "rc=${PIPESTATUS[0]}")"
	}
	both "-b" -b kernel.ostype kernel.pid_max
	both "-b -N" -b -N kernel.ostype
	both "empty name" ''
	both "empty name with -e" -e ''
	both "invalid -r pattern, listing" -r '(' -a
	both "invalid -r pattern, one key" -r '(' kernel.ostype
	both "unknown name with spaces" ' kernel.ostype'
	if [ -d /proc/sys/net/ipv6/neigh/lo ]; then
		both "deprecated entries left out of listings" -N -a -r 'neigh\.lo\.'
		both "--deprecated lists them" --deprecated -N -a -r 'neigh\.lo\.'
		both "a deprecated entry read by name" -N net.ipv6.neigh.lo.retrans_time
	else
		skip_part "no /proc/sys/net/ipv6/neigh/lo for the --deprecated comparison"
	fi
	# Writes only in a private UTS namespace: the host keeps its names.
	if [ "$(id -u)" = 0 ] && unshare -u true 2>/dev/null; then
		ns() {
			unshare -u sh -c "$1 -w 'kernel.hostname =  a b ' 'kernel.domainname=c	' 2>&1; echo rc=\$?;
				cat /proc/sys/kernel/hostname /proc/sys/kernel/domainname"
		}
		check "matches procps: key = value, trimmed (private UTS namespace)" "$(ns sysctl)" \
			"$(ns "$cli --root /proc/sys")"
	else
		skip_part "procps write comparison needs root and unshare -u"
	fi
else
	skip_part "no procps sysctl or /proc/sys for the side-by-side comparison"
fi

# The same options over the control socket.
if [ -n "$fixture" ]; then
	sock=$root/control.sock
	chmod 755 "$root" # the non-root check below must reach the socket
	# Short keepalives: watches below see ALIVE lines, which print nothing.
	FIXTURE_KEEPALIVE_MS=500 "$fixture" "$sock" &
	fixture_pid=$!
	# Wait until a request is answered (the socket file appears only once it
	# listens, but the fixture may not have made it yet; 30 s is a hang
	# guard on a loaded machine).
	for _ in $(seq 600); do
		"$cli" --socket "$sock" -N kernel.core_pattern >/dev/null 2>&1 && break
		sleep 0.05
	done
	srun() { "$cli" --socket "$sock" "$@" 2>&1; echo "rc=$?"; }

	check "socket: read one" "kernel.core_pattern = core
rc=0" "$(srun kernel.core_pattern)"
	check "socket: slash key, -n" "/sbin/modprobe
rc=0" "$(srun -n kernel/modprobe)"
	check "socket: RCUSYSCTL_SOCKET" "kernel.core_pattern
rc=0" "$(RCUSYSCTL_SOCKET=$sock "$cli" -N kernel.core_pattern 2>&1; echo "rc=$?")"
	if [ "$(id -u)" = 0 ]; then
		secret_line="priv.secret = 7
"
	else
		secret_line=
	fi
	check "socket: -a sorted, dots in names shown as /, unreadable skipped" "kernel.core_pattern = core
kernel.modprobe = /sbin/modprobe
net.ipv4.conf.eth0/200.forwarding = 0
net.ipv4.conf.lo.forwarding = 1
${secret_line}/vlan.d/eth0.300/mtu = 1500
rc=0" "$(srun -a)"
	check "socket: names round-trip" "kernel.core_pattern=core;kernel.modprobe=/sbin/modprobe;net.ipv4.conf.eth0/200.forwarding=0;net.ipv4.conf.lo.forwarding=1;priv.secret=7;priv.write_only=rcusysctl: permission denied on key 'priv.write_only';/vlan.d/eth0.300/mtu=1500;" \
		"$(roundtrip "$cli" --socket "$sock")"
	check "socket: -b" "core/sbin/modproberc=0" "$(srun -b kernel.core_pattern kernel.modprobe)"
	check "socket: write by the printed name" "/vlan.d/eth0.300/mtu = 9000
rc=0" "$(srun -w '/vlan.d/eth0.300/mtu = 9000')"
	check "socket: directory lists its entries" "net.ipv4.conf.lo.forwarding = 1
rc=0" "$(srun net.ipv4.conf.lo)"
	check "socket: procps form of a dotted name" "net.ipv4.conf.eth0/200.forwarding = 0
rc=0" "$(srun net.ipv4.conf.eth0/200.forwarding)"
	check "socket: -r pattern" "net.ipv4.conf.eth0/200.forwarding = 0
net.ipv4.conf.lo.forwarding = 1
rc=0" "$(srun -a -r 'forwarding$')"
	check "socket: unknown key" "rcusysctl: cannot stat kernel.nope: No such file or directory
rc=1" "$(srun kernel.nope)"
	check "socket: -e ignores unknown" "rc=0" "$(srun -e kernel.nope)"
	check "socket: -w writes and echoes" "kernel.core_pattern = |/bin/crash %p
rc=0" "$(srun -w 'kernel.core_pattern=|/bin/crash %p')"
	check "socket: value written" "|/bin/crash %p" "$(srun -n kernel.core_pattern | head -1)"
	check "socket: -q quiet write" "rc=0" "$(srun -q kernel.modprobe=/usr/sbin/modprobe)"
	check "socket: value written" "/usr/sbin/modprobe" "$(srun -n kernel.modprobe | head -1)"
	long=$(printf '%0200d' 0)
	check "socket: too long names the limit, old value kept" "rcusysctl: setting key \"kernel.core_pattern\": value longer than 127 bytes
rc=1" "$(srun -w "kernel.core_pattern=$long")"
	check "socket: old value kept" "|/bin/crash %p" "$(srun -n kernel.core_pattern | head -1)"
	check "socket: bad number" "rcusysctl: setting key \"net.ipv4.conf.lo.forwarding\": invalid value
rc=1" "$(srun -w net.ipv4.conf.lo.forwarding=abc)"
	check "socket: write unknown key" "rcusysctl: cannot stat kernel.nope: No such file or directory
rc=1" "$(srun -w kernel.nope=1)"
	check "socket: -d describes" "kernel.core_pattern = pattern for core file names
rc=0" "$(srun -d kernel.core_pattern)"
	check "socket: -d -n" "forward on lo
rc=0" "$(srun -d -n net.ipv4.conf.lo.forwarding)"
	check "socket: -d needs the socket" "rcusysctl: descriptions need the control socket (--socket); a tree of files (--root) has none
rc=1" "$(run -d kernel.core_pattern)"
	check "socket: --root and --socket" "rcusysctl: --root and --socket exclude each other
rc=1" "$(srun --root "$root" kernel.core_pattern)"
	conf=$root/socket-test.conf
	printf 'kernel.core_pattern = core.%%p\n-kernel.missing = 1\nnet.ipv4.conf.*.forwarding = 1\nbad line\n' > "$conf"
	check "socket: -p file with glob" "rcusysctl: $conf:4: invalid syntax: \"bad line\" is not an assignment (expected key = value), continuing...
kernel.core_pattern = core.%p
net.ipv4.conf.eth0/200.forwarding = 1
net.ipv4.conf.lo.forwarding = 1
rc=1" "$(srun -p "$conf")"
	check "socket: glob applied" "1" "$(srun -n net.ipv4.conf.eth0/200.forwarding | head -1)"
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		check "socket: non-root write refused" "rcusysctl: permission denied on key 'kernel.core_pattern'
rc=1" "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$cli" --socket "$sock" -w kernel.core_pattern=x 2>&1; echo "rc=$?")"
	fi

	# Compare-and-set: a write at the generation read, then one at the same
	# generation again, which another write (the first) came before.
	g=$("$cli" --socket "$sock" -n --generation kernel.modprobe)
	check "socket: --generation is a number" "number" "$([[ $g =~ ^[0-9]+$ ]] && echo number || echo "$g")"
	check "socket: --if-generation at the current generation writes" "kernel.modprobe = /cas1
rc=0" "$(srun -w kernel.modprobe=/cas1 --if-generation "$g")"
	check "socket: the generation counts the write" "kernel.modprobe = $((g + 1))
rc=0" "$(srun --generation kernel.modprobe)"
	check "socket: --if-generation refused after another write" "rcusysctl: setting key \"kernel.modprobe\": changed since generation $g (now $((g + 1))): not written
rc=1" "$(srun -w kernel.modprobe=/cas2 --if-generation "$g")"
	check "socket: refused write left the value" "/cas1" "$(srun -n kernel.modprobe | head -1)"
	check "--if-generation needs the socket" "rcusysctl: generations need the control socket (--socket); a tree of files (--root) has none
rc=1" "$(run -w kernel.modprobe=/x --if-generation 0)"
	check "--if-generation takes a number" "rcusysctl: --if-generation \"-1\": expected a generation (a count of writes, 0 or more)
Try 'rcusysctl --help' for more information.
rc=1" "$(srun -w kernel.modprobe=/x --if-generation -1)"

	# --system over the socket: rcusysd's sysctl.d directories, not the
	# kernel's (a private /run shows one file in each; rcusysd's other
	# directories are hidden, so that a host's own files stay out).
	if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
		check "socket: --system applies rcusysd's directories only" "* Applying /run/rcusysd/sysctl.d/50-demo.conf ...
kernel.core_pattern = from-rcusysd-dir
rc=0" "$(unshare -m --propagation private sh -c '
			mount -t tmpfs none /run && for d in /etc/rcusysd /usr/local/lib/rcusysd /usr/lib/rcusysd; do
				[ ! -d "$d" ] || mount -t tmpfs none "$d"; done && mkdir -p /run/rcusysd/sysctl.d /run/sysctl.d &&
			echo "kernel.core_pattern = from-rcusysd-dir" > /run/rcusysd/sysctl.d/50-demo.conf &&
			echo "kernel.core_pattern = from-kernel-dir" > /run/sysctl.d/50-demo.conf &&
			"$1" --socket "$2" --system 2>&1 | grep -e /run/ -e core_pattern -e rcusysctl:; exit $?' sh "$cli" "$sock"; echo "rc=$?")"
		check "socket: --system --dry-run" "* Applying /run/rcusysd/sysctl.d/50-demo.conf ...
kernel.core_pattern: from-rcusysd-dir -> other
rc=0" "$(unshare -m --propagation private sh -c '
			mount -t tmpfs none /run && for d in /etc/rcusysd /usr/local/lib/rcusysd /usr/lib/rcusysd; do
				[ ! -d "$d" ] || mount -t tmpfs none "$d"; done && mkdir -p /run/rcusysd/sysctl.d &&
			echo "kernel.core_pattern = other" > /run/rcusysd/sysctl.d/50-demo.conf &&
			"$1" --socket "$2" --system --dry-run 2>&1 | grep -e /run/ -e core_pattern -e rcusysctl:; exit $?' sh "$cli" "$sock"; echo "rc=$?")"
		check "socket: dry run wrote nothing" "from-rcusysd-dir" "$(srun -n kernel.core_pattern | head -1)"
		srun -q kernel.core_pattern=core >/dev/null
	else
		skip_part "--system over the socket needs root and a private mount namespace"
	fi

	# watch: started in the background; writes of kernel.modprobe until one
	# shows that the watches are in place (a hang guard of 30 s), then the
	# writes under test, then the watcher is stopped.
	watch_test() {
		local out=$root/watch.out wpid i
		"$cli" --socket "$sock" "$@" watch kernel.modprobe kernel.core_pattern /vlan.d/eth0.300/mtu > "$out" 2>&1 &
		wpid=$!
		for i in $(seq 600); do
			"$cli" --socket "$sock" -q kernel.modprobe=/sync
			[ -s "$out" ] && break
			sleep 0.05
		done
		# Room for two ALIVE lines (every 500 ms: a watcher that leaves one
		# unread for that long is dropped, so not shorter on a loaded
		# machine), which must print nothing.
		sleep 1.2
		"$cli" --socket "$sock" -q '/vlan.d/eth0.300/mtu=42' kernel.core_pattern=w1
		for i in $(seq 600); do
			grep -qE 'core_pattern|w1' "$out" && grep -qE 'mtu|42' "$out" && break
			sleep 0.05
		done
		kill "$wpid"
		wait "$wpid" 2>/dev/null
		grep -v -e sync -e modprobe "$out" | sort
	}
	check "socket: watch prints each change, ALIVE lines skipped" "/vlan.d/eth0.300/mtu = 42
kernel.core_pattern = w1" "$(watch_test)"
	check "socket: watch -n" "42
w1" "$(watch_test -n)"
	check "socket: watch -N" "/vlan.d/eth0.300/mtu
kernel.core_pattern" "$(watch_test -N)"
	if "$cli" --socket "$sock" --json -N kernel.modprobe >/dev/null 2>&1; then
		check "socket: watch --json, one object per line" '{"name":"/vlan.d/eth0.300/mtu","value":"42","changes":N,"event":E}
{"name":"kernel.core_pattern","value":"w1","changes":N,"event":E}' "$(watch_test --json | sed -E 's/"changes":[0-9]+/"changes":N/; s/"event":[0-9]+/"event":E/')"
	fi
	check "socket: watch an unknown key" "rcusysctl: watch kernel.nope: No such file or directory
rc=1" "$(srun watch kernel.nope)"
	check "socket: watch needs a key" "rcusysctl: watch: name at least one key
rc=1" "$(srun watch)"
	check "watch with --etcd: a clear error" "rcusysctl: watch follows rcusysd's control socket, not etcd: drop --etcd, or run etcdctl watch --prefix /p/
rc=1" "$(run --etcd http://127.0.0.1:9 --prefix /p/ watch kernel.modprobe)"
	check "socket: watch needs the socket" "rcusysctl: watch needs the control socket; a tree of files (--root) has none
rc=1" "$(run watch kernel.modprobe)"

	# audit: the last records, with the time and pid (which vary) masked.
	"$cli" --socket "$sock" -q 'kernel.core_pattern=a b' 'kernel.core_pattern=c'
	if [ "$(id -u)" = 0 ]; then
		check "socket: audit: seq, time, uid, pid, name: old -> new" "T uid=0 pid=P kernel.core_pattern: w1 -> a b
T uid=0 pid=P kernel.core_pattern: a b -> c
rc=0" "$(srun audit | tail -3 | sed -E 's/^[0-9]+ [0-9-]+T[0-9:.]+Z /T /; s/ pid=[0-9]+ / pid=P /')"
		if "$cli" --socket "$sock" --json -N kernel.modprobe >/dev/null 2>&1; then
			check "socket: audit --json" '{"seq":S,"time":"T","uid":0,"pid":P,"name":"kernel.core_pattern","old":"a b","new":"c"}]' \
				"$(srun --json audit | head -1 | sed -E 's/.*,(\{[^{]*\}\])$/\1/; s/"seq":[0-9]+/"seq":S/; s/"time":"[0-9-]+T[0-9:.]+Z"/"time":"T"/; s/"pid":[0-9]+/"pid":P/')"
		fi
		if command -v setpriv >/dev/null; then
			check "socket: audit is for root" "rcusysctl: audit: only root may read the audit ring
rc=1" "$(setpriv --reuid=65534 --regid=65534 --clear-groups "$cli" --socket "$sock" audit 2>&1; echo "rc=$?")"
		fi
	fi
	if "$cli" --socket "$sock" --json -N kernel.modprobe >/dev/null 2>&1; then
		check "socket: --json read" '[{"name":"kernel.core_pattern","value":"c"},{"name":"/vlan.d/eth0.300/mtu","value":"42"}]
rc=0' "$(srun --json kernel.core_pattern /vlan.d/eth0.300/mtu)"
		check "socket: --json -N listing" '[{"name":"net.ipv4.conf.eth0/200.forwarding"},{"name":"net.ipv4.conf.lo.forwarding"}]
rc=0' "$(srun --json -N net)"
		check "--json --dry-run: JSON only, {name, old, new}" '[{"name":"kernel.core_pattern","old":"core","new":"dry"}]
rc=0' "$(printf 'core\n' > "$root/kernel/core_pattern"; echo 'kernel.core_pattern = dry' | run --json --dry-run -p -)"
		check "socket: --json -d: a description, named so" '[{"name":"kernel.core_pattern","description":"pattern for core file names"}]
rc=0' "$(srun --json -d kernel.core_pattern)"
		check "socket: --json --generation: a count, named so" 'generation N' \
			"$(srun --json --generation kernel.core_pattern | sed -nE 's/^\[\{"name":"kernel.core_pattern","(generation)":[0-9]+\}\]$/\1 N/p')"
		check "--json: strings escaped by json-c" '[{"name":"kernel.lines","value":"one\ntwo"}]
rc=0' "$(run --json kernel.lines)"
	else
		check "--json without json-c says so" "rcusysctl: --json is unavailable: built without json-c
rc=1" "$(srun --json kernel.core_pattern)"
	fi

	kill "$fixture_pid"
	wait "$fixture_pid"
	check "socket: fixture stopped cleanly" "0" "$?"
	fixture_pid=
	check "socket: no server" "rcusysctl: cannot connect to $sock: No such file or directory
rc=1" "$(srun kernel.core_pattern)"
fi

finish rcusysctl
