#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Memory under a FUSE open storm (a reproducer, not part of make check: it
# takes a while on a loaded machine). One local user (uid 65534) opens an
# entry holding a 65535-byte value N times (default 15000), reading one byte
# from each, and keeps them open; the daemon's RSS is read before, while the
# files are held, and after they are closed, with VmData (memory allocated,
# touched or not: a copy bigger than its value shows there, not in RSS).
# Each open file holds a copy of the value, so both must stay within what the
# per-uid cap allows: SYSCTL_FUSE_MAX_OPEN_PER_UID (1024) copies of 64 KiB,
# 64 MiB, plus 32 MiB of slack for the daemon's own growth (RSS); VmData
# also counts what malloc rounds up and its per-thread arenas: half as much
# again, plus the same slack. A copy of twice its value's size (a buffer
# doubled past the value and kept) shows as 1024 x 128 KiB there.
#
#   tests/attack/open_storm.sh BUILD-DIR [N]
set -u
build=${1:?usage: open_storm.sh BUILD-DIR [N]}
n=${2:-15000}
rcusysd=$build/tools/rcusysd/rcusysd
helper=$build/tests/attack/attack-helper
[ "$(id -u)" = 0 ] || { echo "skip: needs root (plays uid 65534 with setpriv)"; exit 77; }
dir=$(mktemp -d)
chmod 755 "$dir"
pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	mountpoint -q "$dir/run/sys" && umount -l "$dir/run/sys"
	rm -rf "$dir"
}
trap cleanup EXIT
echo "big.val string maxlen=65536 mode=0644 default=$(head -c 65535 /dev/zero | tr '\0' 'z')" > "$dir/t.conf"
"$rcusysd" -d "$dir/run" --no-persist -t "$dir/t.conf" 2> "$dir/log" &
pid=$!
for _ in $(seq 200); do mountpoint -q "$dir/run/sys" && break; sleep 0.05; done
mountpoint -q "$dir/run/sys" || { echo "the tree did not mount:"; cat "$dir/log"; exit 1; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
data() { awk '/^VmData:/ { print $2 }' "/proc/$pid/status"; }
before=$(rss) dbefore=$(data)
mkfifo "$dir/hold"
(ulimit -n $((n + 64)) && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$helper" opens "$dir/run/sys/big/val" "$n" < "$dir/hold" > "$dir/opens.out") &
holder=$!
exec 7> "$dir/hold"
for _ in $(seq 6000); do grep -q opened "$dir/opens.out" && break; sleep 0.05; done
held=$(rss) dheld=$(data)
exec 7>&-
wait "$holder"
sleep 1
after=$(rss) dafter=$(data)
bound=$(((64 + 32) * 1024)) dbound=$(((96 + 32) * 1024))
echo "measured: $(cat "$dir/opens.out")"
echo "measured: daemon RSS $before KiB before, $held KiB with the files held, $after KiB after close" \
	"(bound while held: $before + $bound KiB)"
echo "measured: daemon VmData $dbefore KiB before, $dheld KiB with the files held, $dafter KiB after close" \
	"(bound while held: $dbefore + $dbound KiB)"
kill -TERM "$pid"
wait "$pid"
pid=
bad=0
if [ "$held" -le $((before + bound)) ]; then
	echo "held: RSS under an open storm of $n stays within the per-uid cap's bound"
else
	echo "failed: RSS grew by $((held - before)) KiB (bound $bound KiB)"
	bad=1
fi
if [ "$dheld" -le $((dbefore + dbound)) ]; then
	echo "held: memory allocated under an open storm of $n stays within the bound (copies sized to the value)"
else
	echo "failed: VmData grew by $((dheld - dbefore)) KiB (bound $dbound KiB)"
	bad=1
fi
exit $bad
