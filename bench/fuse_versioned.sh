#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One inode per value (bench/fuse_versioned.c), measured beside our FUSE
# entry and lxcfs in one run, in a private mount namespace:
#  - the requests one `cat` of its file waits for (all but RELEASE and
#    FORGET), 200 cats, by opcode;
#  - whole values: a write is read back by the next cat, a write between two
#    reads of one open file leaves that file reading the old value whole,
#    and cat, dd bs=1 and 3-byte reads while two writers flip a 30- and a
#    20-byte value that differ in every byte; any torn value exits 1;
#  - open + fstat + read to EOF + close (rcustring-file-loop) on its file,
#    on our entry (the sysctl fixture), on lxcfs's proc/loadavg (when Debian's
#    lxcfs is installed) and on /proc/sys/kernel/pid_max, files alternating.
#   fuse_versioned.sh VERSIONED FIXTURE FILE_LOOP [COUNT [ROUNDS]]
# VERSIONED is bench/rcustring-fuse-versioned of the build.
set -u
versioned=${1:?usage: fuse_versioned.sh VERSIONED FIXTURE FILE_LOOP [COUNT [ROUNDS]]}
fixture=${2:?usage: fuse_versioned.sh VERSIONED FIXTURE FILE_LOOP [COUNT [ROUNDS]]}
file_loop=${3:?usage: fuse_versioned.sh VERSIONED FIXTURE FILE_LOOP [COUNT [ROUNDS]]}
count=${4:-4000}
rounds=${5:-5}
if [ "${INSIDE_NS:-}" != 1 ]; then
	if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! unshare -m --propagation private true 2>/dev/null; then
		echo "fuse-versioned: skipped (needs root, /dev/fuse and mount namespaces)"
		exit 0
	fi
	INSIDE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
die() { echo "fuse-versioned: $*" >&2; exit 1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(load)
work=$(mktemp -d)
mkdir "$work/v" "$work/f"
"$versioned" "$work/v" "$work/stats" "$(printf '0\n')" &
vpid=$!
"$fixture" "$work/f" 1 &
fpid=$!
lxcfs_pid=''
writers=()
cleanup() {
	[ ${#writers[@]} -gt 0 ] && kill "${writers[@]}" 2>/dev/null
	umount -l "$work/v" 2>/dev/null
	[ -n "$lxcfs_pid" ] && { umount -l "$work/lxcfs"; kill "$lxcfs_pid"; } 2>/dev/null
	kill -TERM "$fpid" "$vpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 200); do mountpoint -q "$work/v" && mountpoint -q "$work/f" && break; sleep 0.05; done # hang guard
mountpoint -q "$work/v" || die "$versioned did not mount"
mountpoint -q "$work/f" || die "$fixture did not mount"
f=$work/v/x
entry=$work/f/bench/entry00000

counts() { # opcode counts now: "requests N", then "OPCODE N" lines
	sleep 0.2
	rm -f "$work/stats"
	kill -USR1 "$vpid"
	for _ in $(seq 100); do [ -s "$work/stats" ] && break; sleep 0.02; done # hang guard
	[ -s "$work/stats" ] || die "no request counts"
	cat "$work/stats"
}
cat "$f" >/dev/null
counts >"$work/c0"
for _ in $(seq 200); do cat "$f" >/dev/null; done
counts >"$work/c1"
# Opcodes: 1 LOOKUP, 2 FORGET, 3 GETATTR, 14 OPEN, 15 READ, 18 RELEASE.
per_cat=$(awk 'BEGIN { split("1 LOOKUP 2 FORGET 3 GETATTR 14 OPEN 15 READ 18 RELEASE", t)
		for (i = 1; i < 12; i += 2) name[t[i]] = t[i + 1] }
	NR == FNR { a[$1] = $2; next }
	$1 != "requests" && $2 > a[$1] { d = ($2 - a[$1]) / 200
		printf "%s %.2f, ", ($1 in name ? name[$1] : "op" $1), d
		if ($1 != 18 && $1 != 2) w += d }
	END { printf "| %.2f\n", w }' "$work/c0" "$work/c1")
echo "  requests per cat (200 cats): ${per_cat%, |*}"

# Whole values.
failed=0
for v in short a-much-longer-value-than-before 7; do
	printf '%s' "$v" >"$f"
	got=$(cat "$f")
	[ "$got" = "$v" ] || { echo "FAIL: wrote \"$v\", the next cat read \"$got\""; failed=1; }
done
between=$(python3 - "$f" <<'PY'
import os, sys
path = sys.argv[1]
def put(v):
    fd = os.open(path, os.O_WRONLY); os.write(fd, v); os.close(fd)
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
head = os.read(fd, 5)
put(B)
first = head + rest(fd)
os.close(fd)
print(first == A)
PY
)
[ "$between" = True ] || { echo "FAIL: a write between two reads of one open file"; failed=1; }
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
	echo "  $name: $reads reads, $a A, $b B, $torn torn${example:+ (e.g. \"$example\")}"
	[ "$torn" = 0 ] && [ "$a" -gt 0 ] && [ "$b" -gt 0 ] || failed=1
}
small() {
	python3 - "$f" "$A" "$B" <<'PY'
import os, sys
path, A, B = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
fd = os.open(path, os.O_RDONLY)
v = b""
while True:
    c = os.read(fd, 3)
    if not c:
        break
    v += c
os.close(fd)
sys.stdout.write(v.decode(errors="replace"))
PY
}
tally cat 300 cat "$f"
tally "dd bs=1" 150 dd if="$f" bs=1 status=none
tally "3-byte reads" 150 small
kill "${writers[@]}" 2>/dev/null
wait "${writers[@]}" 2>/dev/null
writers=()
printf '0\n' >"$f"

# lxcfs, mounted here (this namespace is private).
loop_files=("$f" "$entry" /proc/sys/kernel/pid_max)
lxcfs_file=
if command -v lxcfs >/dev/null; then
	mkdir "$work/lxcfs"
	lxcfs -f -p "$work/lxcfs.pid" "$work/lxcfs" >"$work/lxcfs.log" 2>&1 &
	lxcfs_pid=$!
	for _ in $(seq 200); do [ -s "$work/lxcfs/proc/loadavg" ] && break; sleep 0.05; done # hang guard
	[ -s "$work/lxcfs/proc/loadavg" ] && lxcfs_file=$work/lxcfs/proc/loadavg && loop_files+=("$lxcfs_file")
fi
[ -n "$lxcfs_file" ] || echo "fuse-versioned: lxcfs not available (Debian package lxcfs): its ratios skipped"
"$file_loop" "$count" "$rounds" "${loop_files[@]}" >"$work/loop" || die "file loop failed"
echo "fuse-versioned: load average $load_start at the start, $(load) at the end"
sed 's/^/  file loop, wall ns per file by round: /' "$work/loop"
loop_ratio() { # FILE-A FILE-B: "median min max" over rounds of A / B
	awk -v a="$1" -v b="$2" -v n="$rounds" '
		$1 == a { for (i = 1; i <= n; i++) x[i] = $(i + 1) }
		$1 == b { for (i = 1; i <= n; i++) y[i] = $(i + 1) }
		END { for (i = 1; i <= n; i++) print x[i] / y[i] }' "$work/loop" | sort -g |
		awk '{ v[NR] = $1 } END { printf "%.3f (%.3f-%.3f)\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'
}
echo "summary versioned_requests_per_cat ${per_cat##*| } # LOOKUP and OPEN; the sysctl fixture's entry: see fuse_requests_per_cat"
echo "summary versioned_vs_entry_per_file $(loop_ratio "$f" "$entry") # median (min-max) of $rounds rounds"
if [ -n "$lxcfs_file" ]; then
	echo "summary versioned_vs_lxcfs_per_file $(loop_ratio "$f" "$lxcfs_file")"
	echo "summary entry_vs_lxcfs_per_file $(loop_ratio "$entry" "$lxcfs_file")"
fi
echo "summary versioned_vs_kernel_per_file $(loop_ratio "$f" /proc/sys/kernel/pid_max)"
[ "$failed" = 0 ] || die "a value was torn or a write not seen (above)"
echo "fuse-versioned: every value whole, every write seen"
