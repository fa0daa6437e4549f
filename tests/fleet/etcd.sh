# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the fleet tests, after ../check.sh. Needs $tmp and $guard
# (tenths of a second, a hang guard, never a timing assertion). What it
# starts, by $etcd_mode:
#  - single (the default): a single-node etcd on 127.0.0.1 with free ports
#    and its data in $tmp/etcd, log in $tmp/etcd.log. Sets $url, $etcd_pid,
#    ctl and run_etcd (which restarts it on the same ports and data dir);
#  - cluster: three members (start_cluster, below);
#  - none: nothing, for a test that only wants the helpers.
# Skips (77) when etcd or etcdctl is not installed, unless $etcd_mode is
# none; exits with a FAIL line when etcd does not start. The helpers: polling
# (until_true, wait_output), fleet hosts (start_host, host_get, host_wait),
# cluster members (mctl, run_member, member_of, others_of, put_via,
# find_leader).

# until_true CMD...: run CMD until it succeeds (0), or the guard runs out (1).
until_true() {
	for _ in $(seq $guard); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# wait_output EXPECTED LABEL CMD...: run CMD until it prints EXPECTED (or the
# guard runs out), then check LABEL against what it printed last.
wait_output() {
	local want=$1 label=$2 v
	shift 2
	for _ in $(seq $guard); do
		v=$("$@")
		[ "$v" == "$want" ] && break
		sleep 0.1
	done
	check "$label" "$want" "$v"
}

# start_host NAME ENDPOINTS PREFIX [OPTION...]: fleet-host ($host_bin) NAME
# mirroring PREFIX from ENDPOINTS, serving $tmp/NAME.sock, output in
# $tmp/NAME.out and .err; its pid in host_pid[NAME] (an associative array
# the test declares). Returns once the socket is there (or the guard ran out).
start_host() {
	local name=$1 eps=$2 pfx=$3
	shift 3
	"$host_bin" --socket "$tmp/$name.sock" --etcd "$eps" --prefix "$pfx" --host "$name" "$@" \
		>"$tmp/$name.out" 2>>"$tmp/$name.err" &
	host_pid[$name]=$!
	until_true test -S "$tmp/$name.sock"
}
# host_get NAME KEY...: host NAME's values of KEY..., read with rcusysctl ($cli).
host_get() { "$cli" --socket "$tmp/$1.sock" -n "${@:2}" 2>&1; }
# host_wait NAME KEY VALUE LABEL: wait until host NAME's KEY reads VALUE, then check it.
host_wait() { wait_output "$3" "$4 ($1 $2)" host_get "$1" "$2"; }

# A port nothing listens on, below the kernel's range for outgoing
# connections: the members dial each other as they start, and a port from
# that range could be taken by one of those connections between this check
# and the bind (seen: a member died on "address already in use" and the
# health wait ran on for minutes).
free_port() {
	local p lo
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
	[ "$lo" -gt 12000 ] || lo=62000 # a range that starts this low: any port of 10000-61999
	while :; do
		p=$((10000 + RANDOM % (lo - 10000)))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

# mctl URLS ARGS: etcdctl against URLS; ctl ARGS: against the single etcd.
mctl() {
	local eps=$1
	shift
	ETCDCTL_API=3 etcdctl --endpoints "$eps" --dial-timeout=2s --command-timeout=5s "$@"
}
ctl() { mctl "$url" "$@"; }

# etcd_healthy URLS PID...: 0 once URLS answer; 1 as soon as one of the
# etcd processes PID has exited (it will never answer: waiting on would only
# run out the guard, at seconds an attempt) or when the guard runs out.
etcd_healthy() {
	local eps=$1 p
	shift
	for _ in $(seq $guard); do
		for p in "$@"; do
			kill -0 "$p" 2>/dev/null || return 1
		done
		mctl "$eps" endpoint health >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# Start (or restart, same ports and data dir) etcd; 0 once it answers.
run_etcd() {
	etcd --name fleet --data-dir "$tmp/etcd" \
		--listen-client-urls "$url" --advertise-client-urls "$url" \
		--listen-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-cluster "fleet=http://127.0.0.1:$peer_port" >>"$tmp/etcd.log" 2>&1 &
	etcd_pid=$!
	etcd_healthy "$url" "$etcd_pid" && return 0
	kill "$etcd_pid" 2>/dev/null
	wait "$etcd_pid" 2>/dev/null
	etcd_pid=
	return 1
}

# stop_members: the cluster's members thawed (a frozen one would not die) and stopped.
stop_members() {
	for i in 1 2 3; do
		[ -n "${member_pid[$i]:-}" ] || continue
		kill -CONT "${member_pid[$i]}" 2>/dev/null
		kill "${member_pid[$i]}" 2>/dev/null && wait "${member_pid[$i]}" 2>/dev/null
	done
}

if [ "${etcd_mode:-single}" != none ] &&
	{ ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; }; then
	skip "etcd and etcdctl are not installed (Debian etcd-server, etcd-client)"
fi
if [ "${etcd_mode:-single}" = single ]; then
	for _ in 1 2 3; do # another program may take a port between the check and etcd's bind
		client_port=$(free_port)
		peer_port=$(free_port)
		url=http://127.0.0.1:$client_port
		rm -rf "$tmp/etcd"
		run_etcd && break
	done
	if [ -z "$etcd_pid" ]; then
		echo "FAIL: etcd did not start"
		tail -20 "$tmp/etcd.log"
		exit 1
	fi
fi

# start_cluster: three members, m1..m3, one cluster on their own free
# loopback ports, data in $tmp/m1..3, logs in $tmp/m1..3.log. Sets
# member_url[1..3], member_pid[1..3] and $cluster (the three client URLs,
# comma-separated); run_member I restarts member I from its data dir;
# put_via URLS KEY VALUE puts $prefix/KEY;
# find_leader sets $leader (1..3, or empty after $guard tenths of a second).
# Returns 1 when the cluster does not answer within $guard tenths of a second.
declare -a member_url member_peer member_pid
run_member() { # I [new|existing]
	local i=$1 initial=""
	for j in 1 2 3; do initial+="${initial:+,}m$j=http://127.0.0.1:${member_peer[$j]}"; done
	etcd --name "m$i" --data-dir "$tmp/m$i" \
		--listen-client-urls "${member_url[$i]}" --advertise-client-urls "${member_url[$i]}" \
		--listen-peer-urls "http://127.0.0.1:${member_peer[$i]}" \
		--initial-advertise-peer-urls "http://127.0.0.1:${member_peer[$i]}" \
		--initial-cluster "$initial" --initial-cluster-state "${2:-new}" \
		--initial-cluster-token "fleet-$$" >>"$tmp/m$i.log" 2>&1 &
	member_pid[$i]=$!
}
start_cluster() {
	for _ in 1 2 3; do # a port may still be taken between the check and the bind
		for i in 1 2 3; do
			member_url[$i]=http://127.0.0.1:$(free_port)
			member_peer[$i]=$(free_port)
		done
		cluster="${member_url[1]},${member_url[2]},${member_url[3]}"
		rm -rf "$tmp/m1" "$tmp/m2" "$tmp/m3"
		for i in 1 2 3; do run_member "$i" new; done
		members_healthy 1 2 3 && return 0
		stop_members
	done
	return 1
}
# members_healthy I...: etcd_healthy for the members I.
members_healthy() {
	local i eps="" pids=()
	for i in "$@"; do
		eps+="${eps:+,}${member_url[$i]}"
		pids+=("${member_pid[$i]}")
	done
	etcd_healthy "$eps" "${pids[@]}"
}
# The member (1..3) whose client URL is $1, or nothing.
member_of() { for i in 1 2 3; do [ "${member_url[$i]}" == "$1" ] && echo "$i"; done; }
# The members other than $1, as a URL list.
others_of() {
	local out=""
	for i in 1 2 3; do [ "$i" != "$1" ] && out+="${out:+,}${member_url[$i]}"; done
	echo "$out"
}
# Put through the members in $1 until one takes it (a new leader may be on
# its way). A put that failed may still have been committed (the answer was
# lost to the leader change): look before putting again, or the value would
# get a second revision and the hosts would rightly apply it twice.
put_via() {
	for _ in $(seq 30); do
		mctl "$1" put "$prefix/$2" "$3" >/dev/null 2>&1 && return 0
		sleep 0.2
		[ "$(mctl "$1" get --print-value-only "$prefix/$2" 2>/dev/null)" == "$3" ] && return 0
	done
	return 1
}
find_leader() {
	leader=
	for _ in $(seq $guard); do
		for i in 1 2 3; do # ENDPOINT, ID, VERSION, DB SIZE, IS LEADER, ...
			[ "$(mctl "${member_url[$i]}" endpoint status 2>/dev/null | cut -d, -f5 | tr -d ' ')" = true ] &&
				leader=$i
		done
		[ -n "$leader" ] && return
		sleep 0.1
	done
}

if [ "${etcd_mode:-single}" = cluster ] && ! start_cluster; then
	echo "FAIL: the etcd cluster did not start"
	tail -n 20 "$tmp"/m*.log
	exit 1
fi
