#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make bench: start a 3-member etcd cluster on 127.0.0.1 (free ports, data in
# a temporary folder), run fleet-bench against it (propagation: 5 repetitions
# of 1 000 changes, the mirror beside etcdctl watch and a bare reader of the
# JSON gateway, all on the first member), then time rcusysd's start
# with 10 000 keys in etcd, with its state file and with --no-persist, side
# by side (STARTUP_REPS=5 interleaved starts of each, the medians printed);
# stop everything by its pid.
#   bench_fleet.sh PATH-TO-fleet-bench [fleet-bench options: --changes N --reps R ...]
# First, without etcd, the mirror at 100 000 keys (etcd-scale-bench, beside
# fleet-bench): summary etcd_reload_100k_s (target <= 2),
# etcd_rss_per_key_bytes (<= 200) and etcd_reload_linearity (<= 1.3).
# Prints, after fleet-bench's lines:
#   summary fleet_startup_10k_ms X            (state file; median of the starts)
#   summary fleet_startup_10k_nopersist_ms X  (median)
#   summary fleet_startup_10k_vs_nopersist X  (the medians' ratio; target <= 1.5)
set -u
bench=${1:?usage: bench_fleet.sh PATH-TO-fleet-bench [--changes N] [--batches B] [--reps R]}
shift
build=$(cd "$(dirname "$bench")/../.." && pwd)
rcusysd=$build/tools/rcusysd/rcusysd
cli=$build/tools/rcusysctl/rcusysctl
"$(dirname "$bench")/etcd-scale-bench" || exit 1
if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
	echo "SKIP: etcd and etcdctl are not installed (Debian etcd-server, etcd-client)"
	exit 77
fi
tmp=$(mktemp -d)
daemon=
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	stop_members # etcd.sh's
	rm -rf "$tmp"
}
trap cleanup EXIT
guard=300 # tenths of a second for etcd to answer
etcd_mode=cluster
. "$(dirname "$0")/etcd.sh"
"$bench" "$cluster" "$@" || exit 1

# --- rcusysd's start with 10 000 keys: the state file against none ---
keys=10000
prefix=/rcustring-bench/startup/
"$bench" "$cluster" --load "${prefix}bench/" "$keys" || exit 1
for ((i = 0; i < keys; i++)); do echo "bench.k$i int min=0 max=1000000 default=0"; done \
	>"$tmp/tunables.conf"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Start rcusysd with $@ and print the ms until it has applied every key.
startup() {
	local t0 applied=0
	rm -rf "$tmp/run" "$tmp/state"
	mkdir -p "$tmp/state"
	t0=$(now_ms)
	"$rcusysd" --no-fuse -d "$tmp/run" -t "$tmp/tunables.conf" --etcd "$cluster" \
		--etcd-prefix "$prefix" --etcd-host bench "$@" 2>>"$tmp/rcusysd.log" &
	daemon=$!
	for _ in $(seq 12000); do # 120 s hang guard
		applied=$("$cli" --socket "$tmp/run/control.sock" -n rcusysd.etcd.applied 2>/dev/null)
		[ "${applied:-0}" -ge "$keys" ] 2>/dev/null && break
		sleep 0.01
	done
	echo $(($(now_ms) - t0))
	kill "$daemon"
	wait "$daemon"
	daemon=
	[ "${applied:-0}" -ge "$keys" ] 2>/dev/null
}
# One start is one sample and a start is short next to the machine's noise:
# interleave the two kinds, so that a busy moment falls on both alike.
reps=${STARTUP_REPS:-5}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
with_all= without_all=
for ((r = 0; r < reps; r++)); do
	t=$(startup --state "$tmp/state/state.conf") || { echo "FAIL: startup with the state file"; exit 1; }
	with_all="$with_all $t"
	t=$(startup --no-persist) || { echo "FAIL: startup with --no-persist"; exit 1; }
	without_all="$without_all $t"
done
with=$(printf '%s\n' $with_all | median)
without=$(printf '%s\n' $without_all | median)
echo "rcusysd start with $keys keys in etcd, $reps starts each (ms):$with_all with its state file;$without_all with --no-persist"
echo "summary fleet_startup_10k_ms $with"
echo "summary fleet_startup_10k_nopersist_ms $without"
awk -v a="$with" -v b="$without" 'BEGIN { printf "summary fleet_startup_10k_vs_nopersist %.3f\n", a / b }'
