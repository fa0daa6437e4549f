#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Three hosts (fleet-host) mirror one prefix from a real 3-member etcd
# cluster on loopback (free ports, data under a temporary folder), each
# given all three endpoints. Covers: a frozen member (SIGSTOP) that a host
# watches: the host moves on and converges while the member stays frozen;
# a frozen cluster: connected says 0; the leader killed: every host
# converges, and the member rejoins. Waits are bounded only as a hang
# guard. Skips (77) when etcd is not installed (etcd.sh).
set -u
host_bin=${1:?usage: test_fleet_cluster.sh PATH-TO-fleet-host PATH-TO-rcusysctl}
cli=${2:?usage: test_fleet_cluster.sh PATH-TO-fleet-host PATH-TO-rcusysctl}
. "$(dirname "$0")/../check.sh"
tmp=$(mktemp -d)
declare -A host_pid
cleanup() {
	for h in "${!host_pid[@]}"; do
		kill "${host_pid[$h]}" 2>/dev/null && wait "${host_pid[$h]}" 2>/dev/null
	done
	stop_members
	if [ "$failed" -gt 0 ] || [ -n "${FLEET_TEST_LOGS:-}" ]; then
		for f in "$tmp"/*.err; do echo "--- $f"; cat "$f"; done
		for i in 1 2 3; do echo "--- m$i.log (tail)"; tail -5 "$tmp/m$i.log"; done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
prefix=/rcustring/web
guard=300 # tenths of a second: a hang guard, not a timing assertion
# Three members, $cluster; the hosts' helpers (start_host, host_get, host_wait).
etcd_mode=cluster
. "$(dirname "$0")/etcd.sh"

mctl "$cluster" put "$prefix/kernel/modprobe" /sbin/first >/dev/null
for h in a b c; do start_host $h "$cluster" "$prefix/" --idle-ms 1000; done
for h in a b c; do
	host_wait $h kernel.modprobe /sbin/first "first read from the cluster"
	host_wait $h etcd.connected 1 "connected"
done

# --- a random starting endpoint: hosts do not all watch the first member ---
# Ten hosts given the same list; all on one member by chance: 1 in 3^9.
for h in d e f g h i j; do start_host $h "$cluster" "$prefix/" --idle-ms 1000; done
for h in d e f g h i j; do host_wait $h etcd.connected 1 "connected"; done
check "the hosts start on more than one member" 1 \
	"$(for h in a b c d e f g h i j; do host_get $h etcd.endpoint; echo; done | sort -u | grep -c . | awk '{ print ($1 > 1) }')"
for h in d e f g h i j; do
	kill "${host_pid[$h]}"
	wait "${host_pid[$h]}"
	unset "host_pid[$h]"
done

# --- a frozen member: its hosts move on while it stays frozen ---
ep=$(host_get a etcd.endpoint)
m=$(member_of "$ep")
check "host a names the member it watches" 1 "$([ -n "$m" ] && echo 1)"
kill -STOP "${member_pid[$m]}"
check "a put through the other members" 0 "$(put_via "$(others_of "$m")" kernel/modprobe /sbin/frozen; echo $?)"
for h in a b c; do
	host_wait $h kernel.modprobe /sbin/frozen "converged with a member frozen"
done
check "member $m still frozen while the hosts converged" T \
	"$(ps -o stat= -p "${member_pid[$m]}" | cut -c1)"
check "host a left the frozen member" 1 "$([ "$(host_get a etcd.endpoint)" != "$ep" ] && echo 1)"
for h in a b c; do
	host_wait $h etcd.connected 1 "connected again, to a live member"
	host_wait $h etcd.lag 0 "no lag once moved"
done
kill -CONT "${member_pid[$m]}"

# --- the whole cluster frozen: the status says so ---
for i in 1 2 3; do kill -STOP "${member_pid[$i]}"; done
for h in a b c; do
	host_wait $h etcd.connected 0 "a frozen cluster is not connected"
	check "reads go on from the tree ($h)" /sbin/frozen "$(host_get $h kernel.modprobe)"
done
for i in 1 2 3; do kill -CONT "${member_pid[$i]}"; done
for h in a b c; do host_wait $h etcd.connected 1 "connected after the cluster thawed"; done

# --- the leader killed: every host converges; the member rejoins ---
find_leader
check "a leader found" 1 "$([ -n "$leader" ] && echo 1)"
kill -KILL "${member_pid[$leader]}"
wait "${member_pid[$leader]}" 2>/dev/null
check "a put after the leader died" 0 \
	"$(put_via "$(others_of "$leader")" kernel/modprobe /sbin/after-leader; echo $?)"
for h in a b c; do
	host_wait $h kernel.modprobe /sbin/after-leader "converged after the leader was killed"
done
run_member "$leader" existing
check "the killed member restarted on its ports" 0 "$(members_healthy "$leader"; echo $?)"
check "the killed member rejoined" 0 "$(put_via "${member_url[$leader]}" kernel/core_pattern rejoined; echo $?)"
for h in a b c; do host_wait $h kernel.core_pattern rejoined "put through the rejoined member"; done

# Each revision of the key applied once, in order: as many writes as the
# key has versions in etcd (a watch resumed at a revision already applied
# would write one more), and its values in etcd's order. A put committed
# twice by put_via gives a version more and is no fault of the hosts.
version=$(mctl "$cluster" get "$prefix/kernel/modprobe" -w fields | awk '$1 == "\"Version\"" { print $3 }')
for h in a b c; do
	kill "${host_pid[$h]}"
	wait "${host_pid[$h]}"
	check "$h stopped cleanly" 0 "$?"
	unset "host_pid[$h]"
	check "each revision applied once: writes = the key's versions in etcd ($h)" "$version" \
		"$(awk -F'\t' '$1 == "audit" && $2 ~ /modprobe/' "$tmp/$h.out" | wc -l)"
	check "the values applied in etcd's order ($h)" "/sbin/first /sbin/frozen /sbin/after-leader" \
		"$(awk -F'\t' '$1 == "audit" && $2 ~ /modprobe/ && $4 != last { printf "%s%s", sep, $4; sep = " "; last = $4 }' "$tmp/$h.out")"
done
finish fleet-cluster
