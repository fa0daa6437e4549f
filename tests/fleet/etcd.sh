# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the fleet tests: start a single-node etcd on 127.0.0.1 with
# free ports and its data in $tmp/etcd, log in $tmp/etcd.log. Needs $tmp and
# $guard (tenths of a second, a hang guard). Sets $url, $etcd_pid, ctl and
# run_etcd (which restarts it on the same ports and data dir); exits with a
# FAIL line when etcd does not start.

free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

ctl() { ETCDCTL_API=3 etcdctl --endpoints "$url" --dial-timeout=2s --command-timeout=5s "$@"; }

# Start (or restart, same ports and data dir) etcd; 0 once it answers.
run_etcd() {
	etcd --name fleet --data-dir "$tmp/etcd" \
		--listen-client-urls "$url" --advertise-client-urls "$url" \
		--listen-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-cluster "fleet=http://127.0.0.1:$peer_port" >>"$tmp/etcd.log" 2>&1 &
	etcd_pid=$!
	for _ in $(seq $guard); do
		ctl endpoint health >/dev/null 2>&1 && return 0
		kill -0 "$etcd_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$etcd_pid" 2>/dev/null
	wait "$etcd_pid" 2>/dev/null
	etcd_pid=
	return 1
}

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
