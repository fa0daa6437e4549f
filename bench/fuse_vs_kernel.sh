#!/usr/bin/env bash
# procps `sysctl` reading N single-integer entries by name over the kernel's
# own /proc/sys, against the same tool reading N single-integer entries of
# our FUSE tree (bind-mounted over /proc/sys in a private mount namespace):
# the same kind and number of entries, the same tool and calls, per entry.
#   fuse_vs_kernel.sh FIXTURE [RUNS]
# N is the number of readable single-integer kernel entries, at most 1000.
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
die() { echo "fuse-bench: $*" >&2; exit 1; }

# Prints "<entries read> <ns per run>" for `sysctl NAME...` over what
# /proc/sys is now; every run must read every name.
measure() {
	local read start end
	read=$(sysctl "$@" 2>/dev/null | wc -l)
	start=$(date +%s%N)
	for _ in $(seq "$runs"); do sysctl "$@" >/dev/null 2>&1; done
	end=$(date +%s%N)
	echo "$read $(((end - start) / runs))"
}

# The kernel's entries whose value is one integer (proc_dointvec and the
# like, as the fixture's are), in listing order.
mapfile -t k_names < <(sysctl -a 2>/dev/null | awk -F ' = ' '$2 ~ /^-?[0-9]+$/ { print $1 }' | head -n 1000)
n=${#k_names[@]}
[ "$n" -gt 0 ] || die "no single-integer entries in the kernel's /proc/sys"
read -r k_read k_ns < <(measure "${k_names[@]}")
[ "$k_read" = "$n" ] || die "kernel: read $k_read of $n entries"

mnt=$(mktemp -d)
"$fixture" "$mnt" "$n" &
pid=$!
for _ in $(seq 200); do mountpoint -q "$mnt" && break; sleep 0.05; done # hang guard
if ! mountpoint -q "$mnt"; then
	kill -TERM "$pid" 2>/dev/null
	rmdir "$mnt"
	die "the fixture did not mount $mnt"
fi
mount --bind "$mnt" /proc/sys || { kill -TERM "$pid"; die "cannot bind-mount over /proc/sys"; }
mapfile -t f_names < <(for ((i = 0; i < n; i++)); do printf 'bench.entry%05d\n' "$i"; done)
read -r f_read f_ns < <(measure "${f_names[@]}")
umount /proc/sys
kill -TERM "$pid"
wait "$pid"
rmdir "$mnt"
[ "$f_read" = "$n" ] || die "fuse: read $f_read of $n entries"

k_per=$((k_ns / n))
f_per=$((f_ns / n))
printf 'fuse-bench: sysctl NAME... over %d single-integer entries, %d runs each\n' "$n" "$runs"
printf '  %-7s %6d entries  %10d ns/run  %7d ns/entry\n' kernel "$n" "$k_ns" "$k_per" \
	fuse "$n" "$f_ns" "$f_per"
echo "summary kernel_ns_per_entry $k_per"
echo "summary fuse_ns_per_entry $f_per"
awk -v f="$f_ns" -v k="$k_ns" 'BEGIN { printf "summary fuse_vs_kernel_per_entry %.2f\n", f / k }'
