#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
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

. "$(dirname "$0")/../check.sh"
fuse_test=fuse-whole
fuse_tools=(sysctl python3 dd)
. "$(dirname "$0")/fuse_mount.sh"

# The readers' namespace.
mnt=$MNT
writers=()
cleanup() {
	[ ${#writers[@]} -gt 0 ] && kill "${writers[@]}" 2>/dev/null
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
fuse_bind_proc_sys
# procps takes a name whose first separator is '/' as a path as it stands.
check "procps sysctl, slash form" "9000" "$(sysctl -n /eth0.200/mtu 2>&1)"
check "procps sysctl -n, slash form" "x" "$(sysctl -n /app.d/sub/x 2>&1)"
all=$("$cli" --root "$mnt" -a 2>&1)
# A '.' in the first component: the slash form, which reads back (as above).
contains "rcusysctl -a app.d" "/app.d/sub/x = x" "$all"
contains "rcusysctl -a eth0.200" "/eth0.200/mtu = 9000" "$all"

# ---- one open file, one value (no concurrency: a write between two reads) ----
snap=$(python3 - "$mnt/app.d/sub/x" <<'PY'
import os, sys
path = sys.argv[1]
def put(v):
    fd = os.open(path, os.O_WRONLY)
    os.write(fd, v)
    os.close(fd)
def rest(fd):
    out = b""
    while True:
        b = os.read(fd, 3)
        if not b:
            return out
        out += b
A, B = b"A" * 30, b"B" * 20
put(A)
fd = os.open(path, os.O_RDONLY)
head = os.read(fd, 5)            # offset 0: the file's value is taken here
put(B)                           # a write between two reads of one open file
first = head + rest(fd)
os.lseek(fd, 0, os.SEEK_SET)     # reading offset 0 again takes the value anew
second = rest(fd)
os.close(fd)
fd = os.open(path, os.O_RDONLY)  # a first read at an offset past 0
tail = os.pread(fd, 64, 18)
os.close(fd)
print("first=%s second=%s tail=%s" % (first == A + b"\n", second == B + b"\n", tail == b"BB\n"))
PY
)
check "write between reads of one open file" "first=True second=True tail=True" "$snap"

# ---- writers flipping two values while real readers read ----
f=$mnt/app.d/sub/x
A=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
B=BBBBBBBBBBBBBBBBBBBB
flip() {
	exec python3 -c '
import os, sys
path, value = sys.argv[1], sys.argv[2].encode()
while True:
    fd = os.open(path, os.O_WRONLY)
    os.write(fd, value)
    os.close(fd)' "$f" "$1"
}
flip "$A" & writers+=($!)
flip "$B" & writers+=($!)

# Counts whole A, whole B and anything else over READS runs of a reader.
tally() { # name reads command...
	local name=$1 reads=$2 a=0 b=0 torn=0 v example=
	shift 2
	for _ in $(seq "$reads"); do
		v=$("$@" 2>&1)
		case "$v" in
		"$A") a=$((a + 1)) ;;
		"$B") b=$((b + 1)) ;;
		*) torn=$((torn + 1)); example=$v ;;
		esac
	done
	echo "$name: $reads reads, $a A, $b B, $torn torn${example:+ (e.g. \"$example\")}"
	check "$name: no torn value" "0" "$torn"
	# Both values seen: the writers really flipped while this reader ran.
	check "$name: saw both values" "yes" "$([ "$a" -gt 0 ] && [ "$b" -gt 0 ] && echo yes || echo no)"
}
tally "cat" 300 cat "$f"
tally "dd bs=1" 150 dd if="$f" bs=1 status=none
tally "procps sysctl -n" 150 sysctl -n /app.d/sub/x
tally "rcusysctl --root" 150 "$cli" --root "$mnt" -a -n -r '^/app\.d/sub/x$'

small=$(python3 - "$f" "$A" "$B" <<'PY'
import os, sys
path, A, B = sys.argv[1], sys.argv[2].encode() + b"\n", sys.argv[3].encode() + b"\n"
a = b = torn = 0
for _ in range(1000):
    fd = os.open(path, os.O_RDONLY)
    v = b""
    while True:
        c = os.read(fd, 3)
        if not c:
            break
        v += c
    os.close(fd)
    if v == A: a += 1
    elif v == B: b += 1
    else: torn += 1
print("%d %d %d" % (a, b, torn))
PY
)
read -r a b torn <<<"$small"
echo "python 3-byte reads: 1000 reads, $a A, $b B, $torn torn"
check "python 3-byte reads: no torn value" "0" "$torn"
check "python 3-byte reads: saw both values" "yes" "$([ "$a" -gt 0 ] && [ "$b" -gt 0 ] && echo yes || echo no)"

kill "${writers[@]}" 2>/dev/null
wait "${writers[@]}" 2>/dev/null
writers=()

# ---- rcusysctl --root: a value too big for its buffer is an error, not cut ----
dir=$(mktemp -d)
head -c 65535 /dev/zero | tr '\0' a > "$dir/fits"
head -c 70000 /dev/zero | tr '\0' a > "$dir/big"
check "rcusysctl --root, largest value" "65536" "$("$cli" --root "$dir" -n fits | wc -c)"
contains "rcusysctl --root, value too big" "reading key \"big\": File too large
rc=1" "$("$cli" --root "$dir" -n big 2>&1 >/dev/null; echo "rc=$?")"
rm -r "$dir"

trap - EXIT
finish "fuse-whole (readers)"
