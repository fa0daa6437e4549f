#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
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
guard=200 # tenths of a second for etcd to answer
. "$(dirname "$0")/etcd.sh"
"$bench" "$url" "$@"
