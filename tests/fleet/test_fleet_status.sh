#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Does a host's status (etcd.connected, etcd.lag) tell the truth? One host
# (fleet-host) mirrors a prefix from a real 3-member etcd cluster on
# loopback, with a short idle deadline and a long reconnect delay, so that
# the time between noticing a frozen member and moving on can be watched.
#  - Writes outside the prefix move etcd's revision but are none of the
#    host's business: lag stays 0.
#  - The watched member frozen (SIGSTOP) while the others take a put: the
#    status is sampled until the host holds the new value. Once the idle
#    deadline, the check and a generous margin have passed, no sample may
#    say connected=1 lag=0 with the old value; some sample must say
#    connected=0 with a lag of at least 1 (the cluster moved on); after
#    moving on, connected=1 and lag=0.
#  - The watched member cut off from the two others (they are frozen, so
#    it has no leader): connected=0, then 1 and lag=0 once they are back.
# Waits are bounded only as a hang guard, save the margin above. Skips (77)
# when etcd is not installed.
set -u
host_bin=${1:?usage: test_fleet_status.sh PATH-TO-fleet-host PATH-TO-rcusysctl}
cli=${2:?usage: test_fleet_status.sh PATH-TO-fleet-host PATH-TO-rcusysctl}
. "$(dirname "$0")/../check.sh"
tmp=$(mktemp -d)
host_pid=
cleanup() {
	[ -n "$host_pid" ] && kill "$host_pid" 2>/dev/null && wait "$host_pid" 2>/dev/null
	stop_members
	if [ "$failed" -gt 0 ] || [ -n "${FLEET_TEST_LOGS:-}" ]; then
		echo "--- samples"; cat "$tmp/samples" 2>/dev/null
		echo "--- a.err"; cat "$tmp/a.err"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
prefix=/rcustring/web
guard=300 # tenths of a second: a hang guard
idle_ms=1500 # the check then waits up to idle_ms / 2 for the member
backoff_ms=6000 # reconnect after 3 to 6 s: the window the samples must catch
etcd_mode=cluster
. "$(dirname "$0")/etcd.sh"

get() { host_get a "$@"; }
wait_value() { wait_output "$2" "$3 ($1)" get "$1"; }
now_ms() { date +%s%3N; }
# One line: milliseconds, connected, lag, value (one CLI call: one moment).
sample() { echo "$(now_ms) $(get etcd.connected etcd.lag kernel.modprobe | tr '\n' ' ')"; }

# The host is given the two followers: the member it watches can be frozen
# with the cluster still taking writes at once, and the other answers the
# check (a frozen leader would first cost an election).
find_leader
check "a leader found" 1 "$([ -n "$leader" ] && echo 1)"
mctl "$cluster" put "$prefix/kernel/modprobe" /sbin/first >/dev/null
"$host_bin" --socket "$tmp/a.sock" --etcd "$(others_of "$leader")" --prefix "$prefix/" --host a \
	--idle-ms "$idle_ms" --backoff-ms "$backoff_ms" >"$tmp/a.out" 2>>"$tmp/a.err" &
host_pid=$!
wait_value kernel.modprobe /sbin/first "first read"
wait_value etcd.connected 1 "connected"
wait_value etcd.lag 0 "no lag"

# --- writes outside the prefix: no lag, over two idle deadlines ---
for v in 1 2 3; do mctl "$cluster" put /elsewhere/key "$v" >/dev/null; done
lags=
end=$(($(now_ms) + 2 * idle_ms + 500))
while [ "$(now_ms)" -lt "$end" ]; do lags+=" $(get etcd.lag)"; sleep 0.1; done
check "lag stays 0 while only keys outside the prefix change" "" "$(tr ' ' '\n' <<<"$lags" | grep -v '^0\?$' | sort -u)"

# --- the watched member frozen, the cluster moves on ---
ep=$(get etcd.endpoint)
m=$(member_of "$ep")
check "the host names the member it watches" 1 "$([ -n "$m" ] && echo 1)"
kill -STOP "${member_pid[$m]}"
check "a put through the other members" 0 "$(put_via "$(others_of "$m")" kernel/modprobe /sbin/moved; echo $?)"
put_done=$(now_ms)
: >"$tmp/samples"
for _ in $(seq $guard); do
	s=$(sample)
	echo "$s" >>"$tmp/samples"
	[ "$(cut -d' ' -f4 <<<"$s")" == /sbin/moved ] && break
	sleep 0.05
done
# The deadline, the check (idle_ms / 2), the watch's tick (about 1 s) and
# a margin for a loaded machine.
bound=$((put_done + idle_ms + idle_ms / 2 + 1000 + 5000))
check "no 'connected=1 lag=0' with the old value once the idle deadline has passed" "" \
	"$(awk -v b="$bound" '$1 > b && $2 == 1 && $3 == 0 && $4 == "/sbin/first"' "$tmp/samples")"
check "while on the frozen member after the check: connected=0 and a lag of at least 1" 1 \
	"$(awk '$2 == 0 && $3 >= 1 && $4 == "/sbin/first" { n++ } END { print (n > 0) }' "$tmp/samples")"
check "member $m still frozen while the host moved on" T "$(ps -o stat= -p "${member_pid[$m]}" | cut -c1)"
wait_value kernel.modprobe /sbin/moved "moved on to a live member"
wait_value etcd.connected 1 "connected again"
wait_value etcd.lag 0 "lag back to 0 once moved on"
kill -CONT "${member_pid[$m]}"

# --- the watched member cut off from the other two (frozen): no leader ---
ep=$(get etcd.endpoint)
m=$(member_of "$ep")
check "the host names the member it watches now" 1 "$([ -n "$m" ] && echo 1)"
for i in 1 2 3; do [ "$i" != "$m" ] && kill -STOP "${member_pid[$i]}"; done
wait_value etcd.connected 0 "a member without a leader is not connected"
check "reads go on from the tree" /sbin/moved "$(get kernel.modprobe)"
for i in 1 2 3; do [ "$i" != "$m" ] && kill -CONT "${member_pid[$i]}"; done
wait_value etcd.connected 1 "connected once the cluster is whole"
wait_value etcd.lag 0 "no lag once the cluster is whole"

kill "$host_pid"
wait "$host_pid"
check "the host stopped cleanly" 0 "$?"
host_pid=
finish fleet-status
