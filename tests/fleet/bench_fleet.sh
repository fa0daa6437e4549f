#!/usr/bin/env bash
# make bench: start a single-node etcd on 127.0.0.1 (free ports, data dir in
# a temporary folder), run fleet-bench against it, stop etcd by its pid.
#   bench_fleet.sh PATH-TO-fleet-bench [fleet-bench options]
set -u
bench=${1:?usage: bench_fleet.sh PATH-TO-fleet-bench [--changes N] [--batches B]}
shift
if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
	echo "SKIP: etcd and etcdctl are not installed (Debian etcd-server, etcd-client)"
	exit 77
fi
tmp=$(mktemp -d)
etcd_pid=
trap '[ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null && wait "$etcd_pid"; rm -rf "$tmp"' EXIT
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}
for _ in 1 2 3; do
	cport=$(free_port)
	pport=$(free_port)
	url=http://127.0.0.1:$cport
	rm -rf "$tmp/etcd"
	etcd --name bench --data-dir "$tmp/etcd" --listen-client-urls "$url" \
		--advertise-client-urls "$url" --listen-peer-urls "http://127.0.0.1:$pport" \
		--initial-advertise-peer-urls "http://127.0.0.1:$pport" \
		--initial-cluster "bench=http://127.0.0.1:$pport" >"$tmp/etcd.log" 2>&1 &
	etcd_pid=$!
	for _ in $(seq 200); do # hang guard
		ETCDCTL_API=3 etcdctl --endpoints "$url" endpoint health >/dev/null 2>&1 && break
		kill -0 "$etcd_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$etcd_pid" 2>/dev/null && break
	wait "$etcd_pid"
	etcd_pid=
done
[ -n "$etcd_pid" ] || { echo "etcd did not start"; tail "$tmp/etcd.log"; exit 1; }
"$bench" "$url" "$@"
