#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The FUSE requests one open + fstat + read to EOF + close of FILE costs,
# as the kernel sees them: its fuse_request_send / fuse_request_end
# tracepoints (Linux 6.14 and later), read through a private tracefs
# instance, so that any FUSE server is counted the same way (lxcfs has no
# counter of its own). Runs FILE_LOOP COUNT 1 FILE and prints, per opcode,
# the requests per file and the mean time from send to reply in us:
#   op LOOKUP 0.01 433.5
#   ...
#   waited 4.00 66.1      requests per file and us per file the reader
#                         waited for (all but RELEASE and FORGET)
#   wall 107127           wall ns per file of this traced loop
# Only requests of FILE's own mount are counted (the event's connection is
# the mount's device number). Exits 2, saying why, where the kernel has no
# such events or tracefs cannot be mounted.
#   fuse_request_trace.sh FILE_LOOP COUNT FILE
set -u
file_loop=${1:?usage: fuse_request_trace.sh FILE_LOOP COUNT FILE}
count=${2:?usage: fuse_request_trace.sh FILE_LOOP COUNT FILE}
file=${3:?usage: fuse_request_trace.sh FILE_LOOP COUNT FILE}
skip() { echo "fuse-request-trace: $*" >&2; exit 2; }

tracefs=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -d "$d/instances" ] && { tracefs=$d; break; }
done
if [ -z "$tracefs" ]; then
	tracefs=$(mktemp -d)
	mount -t tracefs nodev "$tracefs" 2>/dev/null || { rmdir "$tracefs"; skip "cannot mount tracefs"; }
	own_mount=$tracefs
fi
inst=$tracefs/instances/rcustring-fuse-$$
cleanup() {
	rmdir "$inst" 2>/dev/null
	if [ -n "${own_mount:-}" ]; then
		umount "$own_mount"
		rmdir "$own_mount"
	fi
}
trap cleanup EXIT
[ -d "$tracefs/events/fuse/fuse_request_send" ] ||
	skip "this kernel ($(uname -r)) has no fuse_request_send tracepoint (Linux 6.14 and later)"
mkdir "$inst" || skip "cannot make a tracefs instance"
echo 8192 >"$inst/buffer_size_kb"
conn=$(stat -c %d "$file") || exit 1
echo "connection == $conn" >"$inst/events/fuse/filter" || skip "cannot filter the fuse events"
echo 1 >"$inst/events/fuse/enable"
wall=$("$file_loop" "$count" 1 "$file" | awk '{ for (i = 2; i <= NF; i++) if ($i == "median") print $(i + 1) }')
[ -n "$wall" ] || exit 1
sleep 0.2 # the last RELEASE, sent after close() returns
echo 0 >"$inst/tracing_on"
awk -v n="$count" '
	match($0, / [0-9]+\.[0-9]+: fuse_request_/) {
		t = substr($0, RSTART + 1, RLENGTH - 16) + 0
		if (!match($0, /req [0-9]+/))
			next
		u = substr($0, RSTART + 4, RLENGTH - 4)
		if (match($0, /opcode [0-9]+ \(FUSE_[A-Z_0-9]+\)/)) {
			op = substr($0, RSTART, RLENGTH)
			sub(/.*\(FUSE_/, "", op)
			sub(/\)/, "", op)
			sent[u] = t
			kind[u] = op
			cnt[op]++
		} else if (u in sent) {
			us[kind[u]] += (t - sent[u]) * 1e6
			delete sent[u]
		}
	}
	END {
		for (op in cnt) {
			printf "op %s %.2f %.1f\n", op, cnt[op] / n, us[op] / cnt[op]
			if (op != "RELEASE" && op != "FORGET") {
				w += cnt[op]
				wus += us[op]
			}
		}
		printf "waited %.2f %.1f\n", w / n, wus / n
	}' "$inst/trace"
echo "wall $wall"
