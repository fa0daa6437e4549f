#!/usr/bin/env bash
# procps `sysctl -a` over our FUSE tree (about 1000 entries, bind-mounted
# over /proc/sys in a private mount namespace) against the same tool over the
# kernel's own /proc/sys, per entry, in one run.
#   fuse_vs_kernel.sh FIXTURE [RUNS]
set -u
fixture=${1:?usage: fuse_vs_kernel.sh FIXTURE [RUNS]}
runs=${2:-10}
if [ "${INSIDE_NS:-}" != 1 ]; then
	if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! unshare -m --propagation private true 2>/dev/null; then
		echo "fuse-bench: skipped (needs root, /dev/fuse and mount namespaces)"
		exit 0
	fi
	INSIDE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi

# Prints "<entries> <ns per run>" for `sysctl -a` over what /proc/sys is now.
measure() {
	local entries start end
	entries=$(sysctl -a 2>/dev/null | wc -l)
	start=$(date +%s%N)
	for _ in $(seq "$runs"); do sysctl -a >/dev/null 2>&1; done
	end=$(date +%s%N)
	echo "$entries $(((end - start) / runs))"
}

read -r k_entries k_ns < <(measure)
mnt=$(mktemp -d)
"$fixture" "$mnt" 1000 &
pid=$!
for _ in $(seq 100); do mountpoint -q "$mnt" && break; sleep 0.05; done
mount --bind "$mnt" /proc/sys
read -r f_entries f_ns < <(measure)
umount /proc/sys
kill -TERM "$pid"
wait "$pid"
rmdir "$mnt"

k_per=$((k_ns / k_entries))
f_per=$((f_ns / f_entries))
printf 'fuse-bench: sysctl -a, %d runs each\n' "$runs"
printf '  %-10s %6d entries  %10d ns/run  %7d ns/entry\n' kernel "$k_entries" "$k_ns" "$k_per" \
	fuse "$f_entries" "$f_ns" "$f_per"
awk -v f="$f_per" -v k="$k_per" 'BEGIN { printf "summary fuse_vs_kernel_per_entry %.2f\n", f / k }'
