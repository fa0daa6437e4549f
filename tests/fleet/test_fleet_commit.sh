#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One revision, one commit, across a fleet (rcustring-etcd(7)): three hosts
# (fleet-host) mirror one prefix from a real 3-member etcd cluster on
# loopback, each with a reader thread taking sysctl_snapshot()s of
# kernel.core_pattern (a string) and net.core.somaxconn (an int), while a
# writer puts pairs (x, x) to both, one transaction each (rcusysctl --etcd
# -w, which makes one). No reader on any host may see x != y; the counts are
# printed. With --key-by-key the hosts apply each revision value by value
# (etcd_sync_opts.key_by_key): readers then see mixed pairs and the test
# fails, which shows it can (meson runs that as should_fail). Bounded by the
# number of transactions; waits are a hang guard only. Skips (77) when etcd
# is not installed (etcd.sh).
set -u
usage="usage: test_fleet_commit.sh PATH-TO-fleet-host PATH-TO-rcusysctl [--key-by-key]"
host_bin=${1:?$usage}
cli=${2:?$usage}
mode=${3:-}
. "$(dirname "$0")/../check.sh"
tmp=$(mktemp -d)
declare -A host_pid
cleanup() {
	for h in "${!host_pid[@]}"; do
		kill "${host_pid[$h]}" 2>/dev/null && wait "${host_pid[$h]}" 2>/dev/null
	done
	stop_members
	if { [ "$failed" -gt 0 ] && [ -z "$mode" ]; } || [ -n "${FLEET_TEST_LOGS:-}" ]; then
		for f in "$tmp"/*.err; do echo "--- $f"; head -20 "$f"; done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
prefix=/rcustring/pairs-$$
guard=300 # tenths of a second: a hang guard, not a timing assertion
txns=${FLEET_COMMIT_TXNS:-100}
etcd_mode=cluster
. "$(dirname "$0")/etcd.sh"

# put_pair X: both keys in one transaction.
put_pair() {
	"$cli" --etcd "$cluster" --prefix "$prefix/" -q -w kernel.core_pattern="$1" \
		net.core.somaxconn="$1"
}
check "the first pair written" 0 "$(put_pair 16 2>&1; echo $?)"
check "the pair is one revision in etcd (one ModRevision for both keys)" 1 \
	"$(mctl "$cluster" get --prefix "$prefix/" -w fields |
		awk '$1 == "\"ModRevision\"" { print $3 }' | sort -u | wc -l)"

for h in a b c; do
	start_host $h "$cluster" "$prefix/" --pair-readers 1 $mode
done
for h in a b c; do
	host_wait $h kernel.core_pattern 16 "the first pair read"
	host_wait $h net.core.somaxconn 16 "the first pair read"
done

bad=0
for x in $(seq 17 $((16 + txns))); do
	put_pair "$x" || bad=$((bad + 1))
done
check "$txns transactions written" 0 "$bad"
last=$((16 + txns))
for h in a b c; do
	host_wait $h kernel.core_pattern $last "the last pair applied"
	host_wait $h net.core.somaxconn $last "the last pair applied"
done

for h in a b c; do
	kill "${host_pid[$h]}"
	wait "${host_pid[$h]}"
	check "$h stopped cleanly" 0 "$?"
	unset "host_pid[$h]"
	counts=$(awk -F'\t' '$1 == "pairs" { print $3, $4 }' "$tmp/$h.out")
	echo "host $h: $counts ${mode:+($mode)}"
	check "host $h's reader took snapshots of applied pairs" 1 \
		"$(echo "$counts" | awk -F'[= ]' '{ print ($2 > 0) }')"
	check "host $h's reader never saw x != y" "mixed=0" "$(echo "$counts" | awk '{ print $2 }')"
	# Each revision one write per key: the audit holds one change of the
	# string per transaction, and the first read's.
	check "host $h applied each pair once" "$((txns + 1))" \
		"$(awk -F'\t' '$1 == "audit" && $2 ~ /core_pattern/' "$tmp/$h.out" | wc -l)"
done
finish "fleet-commit${mode:+ $mode}"
