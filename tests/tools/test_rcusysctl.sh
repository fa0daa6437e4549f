#!/usr/bin/env bash
# rcusysctl against a tree of files (--root), and against /proc/sys next to
# the real procps sysctl. Each check prints one line; any failure exits 1.
set -u
cli=${1:?usage: test_rcusysctl.sh PATH-TO-rcusysctl}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
passed=0 failed=0

check() { # name, expected, actual
	if [ "$2" == "$3" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		printf 'FAIL %s\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"
	fi
}

mkdir -p "$root/kernel" "$root/net/ipv4/conf/eth0.200" "$root/net/ipv4/conf/lo"
printf 'core\n' > "$root/kernel/core_pattern"
printf '/sbin/modprobe\n' > "$root/kernel/modprobe"
printf '0\n' > "$root/net/ipv4/conf/eth0.200/forwarding"
printf '1\n' > "$root/net/ipv4/conf/lo/forwarding"
run() { "$cli" --root "$root" "$@" 2>&1; echo "rc=$?"; }

check "read one" "kernel.core_pattern = core
rc=0" "$(run kernel.core_pattern)"
check "slash key" "kernel.modprobe = /sbin/modprobe
rc=0" "$(run kernel/modprobe)"
check "-n values" "core
/sbin/modprobe
rc=0" "$(run -n kernel.core_pattern kernel.modprobe)"
check "-N names" "kernel.core_pattern
rc=0" "$(run -N kernel.core_pattern)"
check "-a sorted, dotted names shown with /" "kernel.core_pattern = core
kernel.modprobe = /sbin/modprobe
net.ipv4.conf.eth0/200.forwarding = 0
net.ipv4.conf.lo.forwarding = 1
rc=0" "$(run -a)"
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

conf=$root/../rcusysctl-test-$$.conf
cat > "$conf" <<'CONF'
# comment
; comment
kernel.core_pattern = core.%p
-kernel.missing = 1
net.ipv4.conf.*.forwarding = 1
not an assignment
CONF
check "-p file: comments, '-' prefix, globs, bad line" "kernel.core_pattern = core.%p
net.ipv4.conf.eth0/200.forwarding = 1
net.ipv4.conf.lo.forwarding = 1
rcusysctl: $conf(6): invalid syntax (line is not an assignment), continuing...
rc=1" "$(run -p "$conf")"
check "glob applied" "1" "$(cat "$root/net/ipv4/conf/eth0.200/forwarding")"
check "-p - reads stdin" "kernel.modprobe = /x
rc=0" "$(echo 'kernel.modprobe=/x' | run -p -)"
rm -f "$conf"

sys=$(mktemp -d)
mkdir -p "$sys/etc" "$sys/usr"
echo 'kernel.modprobe = /etc-wins' > "$sys/etc/50-a.conf"
echo 'kernel.modprobe = /usr-loses' > "$sys/usr/50-a.conf"
echo 'kernel.core_pattern = usr-only' > "$sys/usr/10-b.conf"
echo 'kernel.core_pattern = ignored' > "$sys/usr/README"
check "--system: first directory wins per basename, sorted by basename" "* Applying $sys/usr/10-b.conf ...
kernel.core_pattern = usr-only
* Applying $sys/etc/50-a.conf ...
kernel.modprobe = /etc-wins
rc=0" "$(RCUSYSCTL_SYSTEM_DIRS="$sys/etc:$sys/usr" run --system)"
rm -rf "$sys"

check "--help" "0" "$("$cli" --help >/dev/null; echo $?)"
check "bad option" "1" "$("$cli" --bogus 2>/dev/null; echo $?)"

# The same answers as procps sysctl on the kernel's own tree.
if command -v sysctl >/dev/null && [ -r /proc/sys/kernel/ostype ]; then
	check "matches procps -n" "$(sysctl -n kernel.ostype kernel.pid_max)" \
		"$("$cli" --root /proc/sys -n kernel.ostype kernel.pid_max)"
	check "matches procps" "$(sysctl kernel.ostype)" "$("$cli" --root /proc/sys kernel.ostype)"
fi

echo "rcusysctl: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
