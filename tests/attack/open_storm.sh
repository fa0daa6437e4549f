#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Memory under a FUSE open storm. One local user (uid 65534) opens a name of
# the tree N times and keeps every handle open; the daemon's RSS is read
# before, while the handles are held, and after they are closed, with VmData
# (memory allocated, touched or not: a copy bigger than its value shows
# there, not in RSS).
#
#   tests/attack/open_storm.sh BUILD-DIR [N] [files|dirs] [ENTRIES]
#
# files (the default, a reproducer: N 15000): an entry holding a 65535-byte
#   value, one byte read from each open. Each open file holds a copy of the
#   value, charged by its size to the user's share of the handle budget
#   (SYSCTL_BUDGET_PER_UID, 1024 units of 16 KiB: 256 copies of 64 KiB), so
#   both must stay within 64 MiB (what 1024 copies would take, the bound
#   before copies were charged), plus 32 MiB of slack for the daemon's own
#   growth (RSS); VmData also counts what malloc rounds up and its
#   per-thread arenas: half as much again, plus the same slack.
# dirs (make check runs it, as the attack-dir-storm test): a directory of
#   ENTRIES names (2000), one batch of names read from each open, the way
#   one user took a daemon to 6.25 GB and an OOM kill (19 000 opens). The
#   storm must be refused past the user's share of the handle budget with
#   EMFILE or ENFILE, root must still list the directory while the storm
#   holds its share, the daemon must stay under 100 MB of RSS and answer on
#   its control socket, and the user opens again once it closed. It prints
#   the bytes each held directory handle costs the daemon (RSS growth over
#   the handles taken).
set -u
build=${1:?usage: open_storm.sh BUILD-DIR [N] [files|dirs] [ENTRIES]}
mode=${3:-files}
case $mode in
files) n=${2:-15000} ;;
dirs) n=${2:-19000} entries=${4:-2000} ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
rcusysd=$build/tools/rcusysd/rcusysd
cli=$build/tools/rcusysctl/rcusysctl
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
if [ "$mode" = files ]; then
	echo "big.val string maxlen=65536 mode=0644 default=$(head -c 65535 /dev/zero | tr '\0' 'z')" > "$dir/t.conf"
	target=$dir/run/sys/big/val helper_mode=opens
else
	for i in $(seq -w "$entries"); do echo "big.entry$i int default=1 mode=0644"; done > "$dir/t.conf"
	target=$dir/run/sys/big helper_mode=opendirs
fi
# In an ASan build, freed memory waits in ASan's quarantine (up to 256 MB),
# which is ASan's RSS, not the daemon's: keep it small, so the bound holds there too.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4:thread_local_quarantine_size_kb=64 \
	"$rcusysd" -d "$dir/run" --no-persist -t "$dir/t.conf" 2> "$dir/log" &
pid=$!
for _ in $(seq 400); do mountpoint -q "$dir/run/sys" && break; sleep 0.05; done
if ! mountpoint -q "$dir/run/sys"; then
	# Where FUSE cannot mount (no /dev/fuse) the daemon says so and serves the socket only.
	if grep -q 'FUSE unavailable' "$dir/log" && [ "${CI:-}" != true ]; then
		echo "skip: the tree did not mount here: $(grep FUSE "$dir/log")"
		exit 77
	fi
	echo "the tree did not mount:"; cat "$dir/log"; exit 1
fi
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
data() { awk '/^VmData:/ { print $2 }' "/proc/$pid/status"; }
# One listing first, so that what a first listing allocates once is in "before".
ls "$dir/run/sys/big" > /dev/null
before=$(rss) dbefore=$(data)
mkfifo "$dir/hold"
(ulimit -n $((n + 64)) && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$helper" "$helper_mode" "$target" "$n" < "$dir/hold" > "$dir/opens.out") &
holder=$!
exec 7> "$dir/hold"
for _ in $(seq 6000); do grep -q opened "$dir/opens.out" && break; sleep 0.05; done
held=$(rss) dheld=$(data)
out=$(cat "$dir/opens.out")
taken=$(awk '{ print $2 }' "$dir/opens.out")
echo "measured: $out"
bad=0
if [ "$mode" = dirs ]; then
	# While the storm holds its share: root lists, the socket answers.
	rootls=$(ls "$dir/run/sys/big" 2>&1 | wc -l)
	answer=$("$cli" --socket "$dir/run/control.sock" -n big.entry$(seq -w "$entries" | head -1) 2>&1)
fi
exec 7>&-
wait "$holder"
sleep 1
after=$(rss) dafter=$(data)
echo "measured: daemon RSS $before KiB before, $held KiB with the handles held, $after KiB after close"
echo "measured: daemon VmData $dbefore KiB before, $dheld KiB with the handles held, $dafter KiB after close"
if [ "$mode" = files ]; then
	bound=$(((64 + 32) * 1024)) dbound=$(((96 + 32) * 1024))
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
else
	if [ "${taken:-0}" -gt 0 ]; then
		echo "measured: $(((held - before) * 1024 / taken)) bytes of RSS per directory handle held" \
			"($taken handles of a $entries-name directory)"
	fi
	check() {
		local name=$1 why=$2
		shift 2
		if "$@"; then echo "held: $name"; else echo "failed: $name ($why)"; bad=1; fi
	}
	check "the directory storm is refused past the user's share" "$out" \
		test "${taken:-0}" -gt 0 -a "${taken:-0}" -lt "$n"
	check "the refused opens say EMFILE or ENFILE" "$out" \
		eval '[[ $out == *"Too many open files"* ]]'
	check "root still lists the directory during the storm" "ls gave $rootls lines" \
		test "$rootls" = "$entries"
	check "the daemon answers during the storm" "it said: $answer" test "$answer" = 1
	check "the daemon stays under 100 MB of RSS" "$held KiB" test "$held" -lt $((100 * 1024))
	# The closes reach the daemon as RELEASEDIRs of their own: retried until they came.
	for _ in $(seq 100); do
		again=$(setpriv --reuid=65534 --regid=65534 --clear-groups ls "$target" 2>&1 | wc -l)
		[ "$again" = "$entries" ] && break
		sleep 0.1
	done
	check "the user lists again once it closed" "ls gave $again lines" test "$again" = "$entries"
fi
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || { echo "failed: rcusysd exited with $rc"; bad=1; }
exit $bad
