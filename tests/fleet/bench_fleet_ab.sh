#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A/B of the fleet's propagation between two builds of fleet-bench, in one
# sitting against one 3-member etcd cluster (etcd.sh): ROUNDS rounds, each
# running A and B once (in turns, the order swapped every round) with
# --propagation-only for one repetition of CHANGES changes, so that both see
# the same machine load. A loaded machine moves every figure; only the
# ratios measured side by side in one process, and A beside B, are compared.
#   bench_fleet_ab.sh A-fleet-bench B-fleet-bench [ROUNDS [CHANGES]]
# Prints each run's summary lines tagged "A"/"B", the load between rounds,
# then per build the median over the rounds of:
#   ab X fleet_vs_etcdctl_watch_p50 M (min-max)   (and _p99, fleet_applied_vs_gateway_watch_p50, ...)
set -u
a=${1:?usage: bench_fleet_ab.sh A-fleet-bench B-fleet-bench [ROUNDS [CHANGES]]}
b=${2:?usage: bench_fleet_ab.sh A-fleet-bench B-fleet-bench [ROUNDS [CHANGES]]}
rounds=${3:-6}
changes=${4:-1000}
if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
	echo "SKIP: etcd and etcdctl are not installed (Debian etcd-server, etcd-client)"
	exit 77
fi
tmp=$(mktemp -d)
cleanup() {
	stop_members # etcd.sh's
	rm -rf "$tmp"
}
trap cleanup EXIT
guard=300 # tenths of a second for etcd to answer
etcd_mode=cluster
. "$(dirname "$0")/etcd.sh"
keys="fleet_vs_etcdctl_watch_p50 fleet_vs_etcdctl_watch_p99 fleet_applied_vs_gateway_watch_p50
fleet_vs_gateway_watch_p50 gateway_vs_etcdctl_watch_p50 fleet_propagation_p50_ms
fleet_applied_p50_ms gateway_watch_p50_ms etcdctl_watch_p50_ms put_reply_p50_ms"
for ((r = 1; r <= rounds; r++)); do
	order="A B"
	[ $((r % 2)) -eq 0 ] && order="B A"
	for which in $order; do
		bin=$a
		[ "$which" = B ] && bin=$b
		"$bin" "$cluster" --changes "$changes" --reps 1 --propagation-only >"$tmp/out" ||
			{ echo "FAIL: $which ($bin) round $r"; cat "$tmp/out"; exit 1; }
		sed -n "s/^summary /$which $r /p" "$tmp/out" | tee -a "$tmp/all"
	done
	echo "load after round $r: $(cut -d' ' -f1-3 /proc/loadavg)"
done
for which in A B; do
	for k in $keys; do
		awk -v w="$which" -v k="$k" '$1 == w && $3 == k { print $4 }' "$tmp/all" | sort -g |
			awk -v w="$which" -v k="$k" '{ v[++n] = $1 }
			END { if (n) printf "ab %s %s %.3f (%.3f-%.3f), %d rounds\n", w, k,
			      n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, v[1], v[n], n }'
	done
done
