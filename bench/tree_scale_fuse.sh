#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# procps `sysctl -a` over our FUSE tree with N extra single-integer entries
# in one directory (the fixture's EXTRA_ENTRIES), bind-mounted over
# /proc/sys in a private mount namespace: wall ns per entry listed, for
# each N. If the tree's cost per entry does not grow with its size, neither
# should this (FUSE's own cost per entry is the same at every N).
# Only the reader's namespace has the bind mount: a fixture that saw its own
# tree at /proc/sys would wait on itself whenever one of its threads opens a
# file there (seen: a libfuse worker thread blocked in openat() under
# /proc/sys while the main loop waited for it).
#   tree_scale_fuse.sh FIXTURE [N...]     (default N: 1000 10000 100000)
set -u
fixture=${1:?usage: tree_scale_fuse.sh FIXTURE [N...]}
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
if [ "${INSIDE_NS:-}" != 1 ]; then
	if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! unshare -m --propagation private true 2>/dev/null; then
		echo "tree-scale-fuse: skipped (needs root, /dev/fuse and mount namespaces)"
		exit 0
	fi
	INSIDE_NS=1 exec unshare -m --propagation private "$0" "$fixture" "${sizes[@]}"
fi
die() { echo "tree-scale-fuse: $*" >&2; exit 1; }

printf 'tree-scale-fuse: sysctl -a over FUSE, N entries in one directory\n'
for n in "${sizes[@]}"; do
	mnt=$(mktemp -d)
	"$fixture" "$mnt" "$n" &
	pid=$!
	# Hang guard: registering and mounting takes well under a second.
	for _ in $(seq 600); do mountpoint -q "$mnt" && break; sleep 0.05; done
	if ! mountpoint -q "$mnt"; then
		kill -TERM "$pid" 2>/dev/null
		rmdir "$mnt"
		die "the fixture did not mount $mnt"
	fi
	# Prints "<entries listed> <ns> <bench entries listed>".
	# shellcheck disable=SC2016
	read -r listed ns bench < <(unshare -m --propagation private bash -c '
		mount --bind "$1" /proc/sys || exit 1
		start=$(date +%s%N)
		listed=$(sysctl -a 2>/dev/null | wc -l)
		end=$(date +%s%N)
		echo "$listed $((end - start)) $(sysctl -a 2>/dev/null | grep -c "^bench\.entry")"' _ "$mnt")
	kill -TERM "$pid"
	wait "$pid"
	rmdir "$mnt"
	[ "${bench:-0}" = "$n" ] || die "N=$n: listed ${bench:-no} bench entries of $n"
	per=$((ns / listed))
	printf '  N=%-7d %7d entries listed  %12d ns  %7d ns/entry\n' "$n" "$listed" "$ns" "$per"
	echo "summary tree_fuse_ns_per_entry_${n} $per"
done
