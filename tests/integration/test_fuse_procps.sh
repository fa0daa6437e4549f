#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The FUSE tree used by tools nobody here wrote: procps sysctl (with the tree
# bind-mounted over /proc/sys in the readers' own mount namespace, never in
# the fixture's), cat, echo, touch, poll(), and a non-root user. Exit 77
# (skip) only where the machine cannot; never as root under CI=true.
set -u
fixture=${1:?usage: test_fuse_procps.sh FIXTURE RCUSYSCTL}
cli=${2:?usage: test_fuse_procps.sh FIXTURE RCUSYSCTL}

. "$(dirname "$0")/../check.sh"
fuse_test=fuse-procps
fuse_tools=(sysctl setpriv python3)
# The tree's owner: a service user, neither root nor nobody.
export SYSCTL_FIXTURE_OWNER=4242:4243
. "$(dirname "$0")/fuse_mount.sh"

# The readers' namespace. The kernel's /proc/sys stays reachable at $K, for
# users the fixture's root (/proc/PID/root) does not let in too.
K=$(mktemp -d)
trap 'umount "$K" 2>/dev/null; rmdir "$K"' EXIT
chmod 755 "$K"
mount --bind /proc/sys "$K" || { echo "FAIL: cannot bind the kernel's /proc/sys to $K"; exit 1; }
fuse_bind_proc_sys
S=/proc/sys
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# procps sysctl reads
check "sysctl -n" "core" "$(sysctl -n kernel.core_pattern)"
all=$(timeout 20 sysctl -a 2>&1; echo "rc=$?")
contains "sysctl -a string" "kernel.core_pattern = core" "$all"
contains "sysctl -a vector" "vm.ratios = 1	2	3" "$all"
contains "sysctl -a dotted name" "net.ipv4.conf.eth0/200.forwarding = 0" "$all"
contains "sysctl -a finishes" "rc=0" "$all"
check "sysctl -N" "kernel.modprobe" "$(sysctl -N kernel.modprobe)"

# procps sysctl writes
check "sysctl -w" "kernel.core_pattern = |/usr/lib/crash %p %s" \
	"$(sysctl -w 'kernel.core_pattern=|/usr/lib/crash %p %s' 2>&1)"
check "cat after sysctl -w" "|/usr/lib/crash %p %s" "$(cat $S/kernel/core_pattern)"
check "sysctl -w bad int" "sysctl: setting key \"vm.swappiness\": Invalid argument" \
	"$(sysctl -w vm.swappiness=abc 2>&1)"
conf=$(mktemp)
printf '# test\nvm.swappiness = 10\n; c\nkernel.modprobe = /opt/modprobe\n' > "$conf"
check "sysctl -p" "vm.swappiness = 10
kernel.modprobe = /opt/modprobe" "$(sysctl -p "$conf" 2>&1)"
check "after -p" "10" "$(cat $S/vm/swappiness)"
rm -f "$conf"

# the shell
echo 100 > $S/vm/swappiness
check "echo > int" "100" "$(cat $S/vm/swappiness)"
check "out of range refused" "1" "$( (echo 300 > $S/vm/swappiness) 2>/dev/null; echo $?)"
check "old int kept" "100" "$(cat $S/vm/swappiness)"
echo "4 5 6" > $S/vm/ratios
check "vector write" "4	5	6" "$(cat $S/vm/ratios)"
long=$(printf '%0200d' 0)
contains "over-long string refused" "Message too long" "$( (echo "$long" > $S/kernel/core_pattern) 2>&1)"
check "old string kept" "|/usr/lib/crash %p %s" "$(cat $S/kernel/core_pattern)"
check "read-only entry, even for root" "1" "$( (echo x > $S/kernel/ostype) 2>/dev/null; echo $?)"
check "read-only value" "rcustring" "$(cat $S/kernel/ostype)"
check "mode bits shown" "-rw-r--r-- -r--r--r-- -rw-------" \
	"$(stat -c %A $S/kernel/modprobe $S/kernel/ostype $S/kernel/secret | tr '\n' ' ' | sed 's/ $//')"

# Names come from tables only: what changes names fails as on the kernel's
# /proc/sys (its answers, as root, are read through the fixture's root).
names_errors() { # DIR (holding an entry "ostype"), printed errno names
	python3 - "$1" <<'PY'
import errno, os, sys
d = sys.argv[1]
def t(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
print(" ".join([
    t(lambda: os.open(d + "/nonexistent", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)),
    t(lambda: os.open(d + "/../app/nonexistent", os.O_WRONLY | os.O_CREAT, 0o644)),
    t(lambda: os.mkdir(d + "/newdir")),
    t(lambda: os.mkfifo(d + "/fifo")),
    t(lambda: os.symlink("x", d + "/symlink")),
    t(lambda: os.link(d + "/ostype", d + "/hardlink")),
    t(lambda: os.unlink(d + "/ostype")),
    t(lambda: os.rename(d + "/ostype", d + "/renamed")),
    t(lambda: os.chmod(d + "/ostype", 0o666)),
    t(lambda: os.chown(d + "/ostype", 1, 1)),
]))
PY
}
check "echo > a new name" "No such file or directory" \
	"$( (echo 1 > $S/app/nonexistent) 2>&1 | sed 's/.*: //')"
check "echo > a new name in a directory" "No such file or directory" \
	"$( (echo 1 > $S/kernel/nonexistent) 2>&1 | sed 's/.*: //')"
check "no name made" "no" "$([ -e $S/kernel/nonexistent ] && echo yes || echo no)"
expected="ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT EACCES ENOENT EPERM EPERM"
check "creating, removing, renaming names" "$expected" "$(names_errors $S/kernel)"
check "the same on the kernel's /proc/sys" "$expected" \
	"$(names_errors "/proc/$FIXTURE_PID/root/proc/sys/kernel")"

# a non-root user: reads allowed, writes to 0644 denied, 0600 unreadable
check "nobody reads" "/opt/modprobe" "$(nobody cat $S/kernel/modprobe)"
contains "nobody cannot write" "Permission denied" "$(nobody sh -c "echo /x > $S/kernel/modprobe" 2>&1)"
contains "nobody cannot read 0600" "Permission denied" "$(nobody cat $S/kernel/secret 2>&1)"
contains "nobody sysctl -w" "ermission denied" "$(nobody sysctl -w kernel.modprobe=/x 2>&1)"
check "value unchanged" "/opt/modprobe" "$(cat $S/kernel/modprobe)"

# the tree's owner (uid 4242, gid 4243): the owner bits, as root has them
owner() { setpriv --reuid=4242 --regid=4242 --clear-groups "$@"; }
check "files and directories show the owner" "4242:4243 4242:4243" \
	"$(stat -c %u:%g $S/kernel/modprobe $S/kernel | tr '\n' ' ' | sed 's/ $//')"
check "owner writes 0644" "0" "$(owner sh -c "echo /owner > $S/kernel/modprobe" 2>&1; echo $?)"
check "owner's write landed" "/owner" "$(cat $S/kernel/modprobe)"
check "owner reads 0600" "7" "$(owner cat $S/kernel/secret 2>&1)"
contains "owner cannot write 0444" "Permission denied" "$(owner sh -c "echo x > $S/kernel/ostype" 2>&1)"
contains "owner's group has no owner bits" "Permission denied" \
	"$(setpriv --reuid=65534 --regid=4243 --clear-groups cat $S/kernel/secret 2>&1)"
contains "nobody still cannot write" "Permission denied" "$(nobody sh -c "echo /x > $S/kernel/modprobe" 2>&1)"
check "value kept" "/owner" "$(cat $S/kernel/modprobe)"

# touch: as on the kernel's /proc/sys, it succeeds for the owner (root, or
# the tree's) and changes no value; anyone else may touch with the time
# "now" only what they may write (else EACCES) and set no other time (EPERM).
touch_errors() { # DIR, its entries of mode 0644, 0444 and 0600: what touch says
	local d=$1 f opt r out=
	for f in "$d/$2" "$d/$3" "$d/$4" "$d"; do
		# now; mtime only (atime left alone: not "now" for the kernel); a time given
		for opt in "" -m "-d @$(($(date +%s) - 60))"; do
			# -c: no open(O_CREAT) first, whose error touch would report instead
			# shellcheck disable=SC2086 # $opt is zero to two words
			r=$(touch -c $opt "$f" 2>&1) && r=ok
			out+="${r##*: },"
		done
		out="${out%,} "
	done
	r=$(touch "$d/nonexistent" 2>&1) && r=ok
	echo "$out${r##*: }"
}
as() { # UID, then a command line that may call touch_errors
	setpriv --reuid="$1" --regid="$1" --clear-groups bash -c "$(declare -f touch_errors); $2"
}
all_ok="ok,ok,ok ok,ok,ok ok,ok,ok ok,ok,ok No such file or directory"
check "root touches" "$all_ok" "$(touch_errors $S/kernel modprobe ostype secret)"
check "root touches the kernel's" "$all_ok" "$(touch_errors "$K/kernel" hostname ostype cad_pid)"
check "the tree's owner touches" "$all_ok" "$(as 4242 "touch_errors $S/kernel modprobe ostype secret")"
no="Permission denied,Operation not permitted,Operation not permitted"
check "nobody touches" "$no $no $no $no No such file or directory" \
	"$(as 65534 "touch_errors $S/kernel modprobe ostype secret")"
check "nobody touches the kernel's" "$no $no $no $no No such file or directory" \
	"$(as 65534 "touch_errors $K/kernel hostname ostype cad_pid")"
check "touch without -c, as root" "rc=0
rc=0" \
	"$(touch $S/kernel/modprobe 2>&1; echo "rc=$?"; touch $S/kernel/ostype 2>&1; echo "rc=$?")"
check "touched values unchanged" "/owner rcustring 7" \
	"$(cat $S/kernel/modprobe $S/kernel/ostype $S/kernel/secret | tr '\n' ' ' | sed 's/ $//')"
check "no name made by touch" "no" "$([ -e $S/kernel/nonexistent ] && echo yes || echo no)"

# poll(): POLLERR|POLLPRI once the entry changes
poll_out=$(python3 - "$S/vm/swappiness" <<'PY'
import os, select, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.read(fd, 64)
p = select.poll()
p.register(fd, select.POLLPRI | select.POLLERR)
before = [ev for _, ev in p.poll(0)]
w = subprocess.Popen(["sh", "-c", "echo 42 > " + sys.argv[1]])
after = p.poll(20000)  # a hang guard only: the write wakes it
ok = after and after[0][1] & (select.POLLPRI | select.POLLERR)
w.wait()
print("before=%s woke=%s" % (before == [], bool(ok)))
PY
)
check "poll wakes on change" "before=True woke=True" "$poll_out"

# our own CLI over the same mount
check "rcusysctl --root" "42" "$("$cli" --root $S -n vm.swappiness)"

finish "fuse-procps (readers)"
