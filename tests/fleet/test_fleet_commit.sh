#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One revision, one commit, across a fleet (rcustring-etcd(7)): three hosts
# (fleet-host) mirror one prefix from a real 3-member etcd cluster on
# loopback, each with a reader thread taking sysctl_snapshot()s of
# kernel.core_pattern (a string) and net.core.somaxconn (an int), while a
# writer puts pairs (x, x) to both, one transaction each (rcusysctl --etcd
# -w, which makes one). No reader on any host may see x != y; the counts are
# printed. Host c then misses transactions (stopped, its member killed,
# the revisions compacted) and reads the prefix again: the read commits the
# newest pair as one too, while its reader runs. Each host counts its
# commits of several entries: one per pair. With --key-by-key the hosts apply each revision value by value
# (etcd_sync_opts.key_by_key): readers then see mixed pairs and the test
# fails, which shows it can (meson runs that as should_fail); any other
# failure then (etcd not starting, a host lost) exits 99, which meson
# reports as an error even for such a test. Bounded by the
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
reached_end=0 guard_failed=0
cleanup() {
	local rc=$?
	for h in "${!host_pid[@]}"; do
		kill "${host_pid[$h]}" 2>/dev/null && wait "${host_pid[$h]}" 2>/dev/null
	done
	stop_members
	if { [ "$failed" -gt 0 ] && [ -z "$mode" ]; } || [ -n "${FLEET_TEST_LOGS:-}" ]; then
		for f in "$tmp"/*.err; do echo "--- $f"; head -20 "$f"; done
	fi
	rm -rf "$tmp"
	# --key-by-key must fail by the guards' checks alone, nothing else.
	if [ -n "$mode" ] && [ "$rc" != 77 ] &&
		{ [ "$reached_end" = 0 ] || [ "$failed" -gt "$guard_failed" ]; }; then
		echo "ERROR: --key-by-key failed for another reason than a mixed pair or a commit"
		exit 99
	fi
}
trap cleanup EXIT
# guard_check: check for what --key-by-key must break (mixed pairs, commits).
guard_check() {
	local before=$failed
	check "$@"
	[ "$failed" -gt "$before" ] && guard_failed=$((guard_failed + 1))
	return 0
}
prefix=/rcustring/pairs-$$
guard=300 # tenths of a second: a hang guard, not a timing assertion
txns=${FLEET_COMMIT_TXNS:-100}
etcd_mode=cluster
. "$(dirname "$0")/etcd.sh"

# put_pair X [URLS]: both keys in one transaction (through URLS, default
# every member). After a member was killed a put may fail while a leader is
# elected, or fail once committed (the answer lost): look before putting
# again, as put_via does, or the pair would get a second revision.
put_pair() {
	for _ in $(seq 30); do
		"$cli" --etcd "${2:-$cluster}" --prefix "$prefix/" -q -w kernel.core_pattern="$1" \
			net.core.somaxconn="$1" 2>/dev/null && return 0
		sleep 0.2
		[ "$(mctl "${2:-$cluster}" get --print-value-only "$prefix/kernel/core_pattern" \
			2>/dev/null)" == "$1" ] && return 0
	done
	return 1
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

# --- host c misses pairs and reads the prefix again: one commit still ---
m=$(member_of "$(host_get c etcd.endpoint)")
check "host c names the member it watches" 1 "$([ -n "$m" ] && echo 1)"
kill -STOP "${host_pid[c]}"
kill -KILL "${member_pid[$m]}"
wait "${member_pid[$m]}" 2>/dev/null
missed=5
for x in $(seq $((last + 1)) $((last + missed))); do
	put_pair "$x" "$(others_of "$m")" || bad=$((bad + 1))
done
check "$missed transactions written while host c was stopped" 0 "$bad"
rev=$(mctl "$(others_of "$m")" get "$prefix/kernel/core_pattern" -w fields |
	awk '$1 == "\"ModRevision\"" { print $3 }')
mctl "$(others_of "$m")" compact "$rev" >/dev/null
kill -CONT "${host_pid[c]}"
last=$((last + missed))
for h in a b c; do
	host_wait $h kernel.core_pattern $last "the pairs after the compaction applied"
	host_wait $h net.core.somaxconn $last "the pairs after the compaction applied"
done
check "host c read the prefix again" 1 "$(host_get c etcd.resyncs)"

for h in a b c; do
	kill "${host_pid[$h]}"
	wait "${host_pid[$h]}"
	check "$h stopped cleanly" 0 "$?"
	unset "host_pid[$h]"
	counts=$(awk -F'\t' '$1 == "pairs" { print $3, $4, $5 }' "$tmp/$h.out")
	echo "host $h: $counts ${mode:+($mode)}"
	check "host $h's reader took snapshots of applied pairs" 1 \
		"$(echo "$counts" | awk -F'[= ]' '{ print ($2 > 0) }')"
	guard_check "host $h's reader never saw x != y" "mixed=0" "$(echo "$counts" | awk '{ print $2 }')"
done
# Counted, not seen: every pair was one commit of both entries, the first
# read's and the re-read's included (c: the first pair, $txns, the re-read).
guard_check "host c committed each pair as one" "commits=$((txns + 2))" \
	"$(awk -F'\t' '$1 == "pairs" { print $5 }' "$tmp/c.out")"
for h in a b; do # they may have read the prefix again too, after the compaction
	guard_check "host $h committed each pair as one" 1 \
		"$(awk -F'\t' '$1 == "pairs" { split($5, c, "="); print (c[2] >= '$((txns + 2))') }' "$tmp/$h.out")"
done
reached_end=1
finish "fleet-commit${mode:+ $mode}"
