#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Our tree over FUSE and over the control socket against the kernel's own
# /proc/sys, per entry, with the same tools:
#  - procps `sysctl NAME...` reading N single-integer entries of the kernel,
#    and N single-integer entries of our tree (FUSE, bind-mounted over
#    /proc/sys in the readers' own mount namespace, never in the fixture's,
#    whose threads read /proc/sys themselves): same kind and number of
#    entries, same tool and calls (fuse_vs_kernel_per_entry);
#  - procps `sysctl -a` over the kernel's /proc/sys, over our FUSE tree, and
#    `rcusysctl -a` over the control socket (socket_list_vs_kernel_per_entry);
#  - the FUSE requests each entry costs, counted by the mount itself
#    (sysctl_fuse_get_stats, through the fixture's SYSCTL_FIXTURE_STATS):
#    a count, so it holds still on a busy machine where times do not;
#  - the requests one `cat` of an entry waits for (fuse_requests_per_cat:
#    every request counted but RELEASE and FORGET, which the kernel sends
#    without waiting), by opcode; and what sets that floor: the same cats
#    on the mount remounted read-only (fuse_requests_per_cat_readonly),
#    open + read + close without fstat (fuse_requests_per_open_read_close),
#    1-byte reads, and noatime as a control;
#  - open + fstat + read to EOF + close of one small file, as cat does
#    (rcustring-file-loop), on our entry, on lxcfs's proc/loadavg (lxcfs
#    mounted here in a private directory; skipped with a message when
#    Debian's lxcfs is not installed) and on the kernel's /proc/sys, the
#    files alternating round by round (fuse_vs_lxcfs_per_file,
#    fuse_vs_kernel_per_file).
#   fuse_vs_kernel.sh FIXTURE [RUNS [RCUSYSCTL]]
# N is the number of readable single-integer kernel entries, at most 1000.
# RCUSYSCTL defaults to tools/rcusysctl/rcusysctl of FIXTURE's build, and
# rcustring-cpu-run (which times a run) is taken from bench/ of that build.
# Every ratio is given twice: wall time, and CPU time (the tool's, plus our
# server's for FUSE and the socket), which leaves out waiting for a core
# and so moves less on a loaded machine.
set -u
fixture=${1:?usage: fuse_vs_kernel.sh FIXTURE [RUNS [RCUSYSCTL]]}
runs=${2:-10}
cli=${3:-$(dirname "$fixture")/../../tools/rcusysctl/rcusysctl}
cpu_run=${CPU_RUN:-$(dirname "$fixture")/../../bench/rcustring-cpu-run}
file_loop=${FILE_LOOP:-$(dirname "$fixture")/../../bench/rcustring-file-loop}
loop_count=${FILE_LOOP_COUNT:-4000}
loop_rounds=${FILE_LOOP_ROUNDS:-5}
if [ "${INSIDE_NS:-}" != 1 ]; then
	if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! unshare -m --propagation private true 2>/dev/null; then
		echo "fuse-bench: skipped (needs root, /dev/fuse and mount namespaces)"
		exit 0
	fi
	INSIDE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
die() { echo "fuse-bench: $*" >&2; exit 1; }
[ -x "$cli" ] || die "no rcusysctl at $cli"
[ -x "$cpu_run" ] || die "no rcustring-cpu-run at $cpu_run"
[ -x "$file_loop" ] || die "no rcustring-file-loop at $file_loop"
load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(load)

# Prints "<wall ns> <CPU ns>" for one run of the command: the CPU time of
# the command and, with -p PID, of the server answering it. With -n first,
# the command runs in the FUSE readers' mount namespace.
timed() {
	local wall cpu server enter=()
	if [ "$1" = -n ]; then
		enter=(nsenter -t "$holder" -m -w)
		shift
	fi
	read -r wall cpu server < <("${enter[@]}" "$cpu_run" "$@")
	[ -n "$server" ] || die "cannot time $*"
	echo "$wall $((cpu + server))"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The kernel's entries whose value is one integer (proc_dointvec and the
# like, as the fixture's are), in listing order.
mapfile -t k_names < <(sysctl -a 2>/dev/null | awk -F ' = ' '$2 ~ /^-?[0-9]+$/ { print $1 }' | head -n 1000)
n=${#k_names[@]}
[ "$n" -gt 0 ] || die "no single-integer entries in the kernel's /proc/sys"
k_read=$(sysctl "${k_names[@]}" 2>/dev/null | wc -l)
[ "$k_read" = "$n" ] || die "kernel: read $k_read of $n entries"
k_all=$(sysctl -a -N 2>/dev/null | wc -l)

work=$(mktemp -d)
mnt=$work/mnt
sock=$work/control.sock
stats=$work/stats
mkdir "$mnt"
SYSCTL_FIXTURE_STATS=$stats "$fixture" "$mnt" "$n" "$sock" &
pid=$!
holder=
lxcfs_pid=
cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null
	if [ -n "$lxcfs_pid" ]; then
		umount -l "$work/lxcfs" 2>/dev/null
		kill "$lxcfs_pid" 2>/dev/null
		wait "$lxcfs_pid" 2>/dev/null
	fi
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 200); do mountpoint -q "$mnt" && [ -S "$sock" ] && break; sleep 0.05; done # hang guard
mountpoint -q "$mnt" || die "the fixture did not mount $mnt"
[ -S "$sock" ] || die "the fixture did not listen on $sock"

# The mount's request counts now (after the kernel's background RELEASEs):
# "requests N", then one line per opcode ("lookup N", ...).
counts() {
	sleep 0.2
	rm -f "$stats"
	kill -USR1 "$pid"
	for _ in $(seq 200); do [ -e "$stats" ] && break; sleep 0.02; done # hang guard
	[ -e "$stats" ] || die "the fixture wrote no request counts"
	cat "$stats"
}
requests() { counts | awk '$1 == "requests" { print $2 }'; }

# Requests per open file: RUNS open files read by a command after a first
# one, "opcode per-file, ..." then "| all waited" (waited: all but RELEASE
# and FORGET).
per_file() { # RUNS COMMAND...
	local runs=$1
	shift
	"$@" 1 || die "cannot run $*"
	counts >"$work/c0"
	"$@" "$runs" || die "cannot run $*"
	counts >"$work/c1"
	awk -v n="$runs" 'NR == FNR { a[$1] = $2; next }
		{ d = $2 - a[$1]; if ($1 == "requests") all = d; else if (d) { printf "%s %.2f, ", $1, d / n; if ($1 != "release" && $1 != "forget") w += d } }
		END { printf "| %.2f %.2f\n", all / n, w / n }' "$work/c0" "$work/c1"
}
cats() { for _ in $(seq "$2"); do cat "$1"; done >/dev/null; } # FILE N
loops() { "$file_loop" "${@:2:$#-2}" "${@: -1}" 1 "$1" >/dev/null; } # FILE [OPTION...] N
# What a cat costs, and why (the floor with direct I/O):
#  - cat's fstat() is a GETATTR because every direct READ marks the atime
#    stale (fuse_invalidate_atime(), a no-op on a read-only superblock):
#    the same cats on the mount remounted read-only, and open + read + close
#    with no fstat, show it; noatime (a mount flag the FUSE code does not
#    look at) is the control;
#  - every read() is a READ, the one at end of file too: 1-byte reads.
cat_file=$mnt/bench/entry00000
str_file=$mnt/kernel/core_pattern
cats=200
floor() { # LABEL RUNS COMMAND...: "LABEL|opcodes|all waited" in $work/floor
	local label=$1 r
	shift
	r=$(per_file "$@") || exit 1
	echo "$label|$r" >>"$work/floor"
}
: >"$work/floor"
floor "cat" "$cats" cats "$cat_file"
floor "open+fstat+read+close (file-loop)" "$cats" loops "$cat_file"
floor "open+read+close, no fstat" "$cats" loops "$cat_file" --no-fstat
floor "1-byte reads of core_pattern, no fstat" "$cats" loops "$str_file" --no-fstat --read-size 1
mount -i -o remount,noatime "$mnt" || die "cannot remount $mnt noatime"
floor "cat, mount noatime" "$cats" cats "$cat_file"
mount -i -o remount,ro "$mnt" || die "cannot remount $mnt read-only"
floor "cat, mount read-only" "$cats" cats "$cat_file"
floor "open+read+close, no fstat, read-only" "$cats" loops "$cat_file" --no-fstat
mount -i -o remount,rw,relatime "$mnt" || die "cannot remount $mnt read-write"
floor_lines=$(cat "$work/floor")
waited_of() { awk -F'|' -v l="$1" '$1 == l { split($3, f, " "); print f[2] }' "$work/floor"; }
per_cat=$(awk -F'|' '$1 == "cat" { print $2 "|" $3 }' "$work/floor")
cat_ops=${per_cat%|*}
read -r cat_all cat_waited <<<"${per_cat#*|}"

# lxcfs, mounted here (this namespace is private) for the file loop.
lxcfs_file=
if command -v lxcfs >/dev/null; then
	mkdir "$work/lxcfs"
	lxcfs -f -p "$work/lxcfs.pid" "$work/lxcfs" >"$work/lxcfs.log" 2>&1 &
	lxcfs_pid=$!
	for _ in $(seq 200); do [ -s "$work/lxcfs/proc/loadavg" ] && break; sleep 0.05; done # hang guard
	if [ -s "$work/lxcfs/proc/loadavg" ]; then
		lxcfs_file=$work/lxcfs/proc/loadavg
	else
		echo "fuse-bench: lxcfs did not mount (log: $(tail -n 2 "$work/lxcfs.log" | tr '\n' ' ')); lxcfs lines skipped"
	fi
else
	echo "fuse-bench: lxcfs not installed (Debian package lxcfs): fuse_vs_lxcfs_per_file skipped"
fi

# The FUSE readers' mount namespace: a child of this one, held open by a
# sleeping process, with the tree bound over /proc/sys there only. The
# fixture lives in this namespace and must never find its own mount at
# /proc/sys: glibc's free() opens /proc/sys/vm/overcommit_memory holding an
# arena lock, and served by the fixture's own FUSE loop that can deadlock.
unshare -m --propagation private sh -c 'mount --bind "$0" /proc/sys && exec sleep infinity' "$mnt" &
holder=$!
fuse() { nsenter -t "$holder" -m -w "$@"; }
for _ in $(seq 200); do # hang guard
	case $(fuse stat -f -c %T /proc/sys 2>/dev/null) in fuse | fuseblk) break ;; esac
	sleep 0.05
done
case $(fuse stat -f -c %T /proc/sys 2>/dev/null) in
fuse | fuseblk) ;;
*) die "/proc/sys of the readers is not our FUSE mount" ;;
esac
[ "$(stat -f -c %T /proc/sys)" = proc ] || die "/proc/sys of the fixture is not the kernel's"
mapfile -t f_names < <(for ((i = 0; i < n; i++)); do printf 'bench.entry%05d\n' "$i"; done)
f_read=$(fuse sysctl "${f_names[@]}" 2>/dev/null | wc -l)
[ "$f_read" = "$n" ] || die "fuse: read $f_read of $n entries"
f_all=$(fuse sysctl -a -N 2>/dev/null | wc -l)
[ "$f_all" -gt "$n" ] || die "fuse: sysctl -a listed $f_all entries"
s_all=$("$cli" --socket "$sock" -a 2>/dev/null | wc -l)
# procps cannot read the fixture's two entries under a dotted top-level
# directory ("app.d", "eth0.200"), which rcusysctl reads.
[ "$s_all" -ge "$f_all" ] || die "socket: rcusysctl -a listed $s_all entries, FUSE $f_all"

# RUNS rounds, each timing every case once, kernel and ours back to back:
# on a shared machine the load moves between rounds, so each round gives
# its own ratios and the medians are printed. Request counts are summed.
: >"$work/series"
req_name=0 req_list=0
for round in $(seq "$runs"); do
	k=$(timed sysctl "${k_names[@]}")
	ka=$(timed sysctl -a)
	sa=$(timed -p "$pid" "$cli" --socket "$sock" -a)
	# Untimed: each counted run then finds what a run before it left (the
	# kernel marks attributes stale after a read, so stat() asks again).
	fuse sysctl "${f_names[@]}" >/dev/null 2>&1
	r0=$(requests)
	# The timer itself runs in the readers' namespace, so entering it is
	# not timed.
	f=$(timed -n -p "$pid" sysctl "${f_names[@]}")
	r1=$(requests)
	fa=$(timed -n -p "$pid" sysctl -a)
	r2=$(requests)
	for r in "$r0" "$r1" "$r2"; do [ -n "$r" ] || die "no request count from the fixture"; done
	req_name=$((req_name + r1 - r0))
	req_list=$((req_list + r2 - r1))
	# Columns: 2-3 kernel names (wall, CPU), 4-5 fuse names, 6-7 kernel -a,
	# 8-9 fuse -a, 10-11 socket -a.
	echo "$round $k $f $ka $fa $sa" >>"$work/series"
done
# The file loop: ours, lxcfs's (if mounted), the kernel's, alternating.
loop_files=("$cat_file" /proc/sys/kernel/pid_max)
[ -n "$lxcfs_file" ] && loop_files+=("$lxcfs_file")
"$file_loop" "$loop_count" "$loop_rounds" "${loop_files[@]}" >"$work/loop" || die "file loop failed"
# The same loop once more per FUSE file, traced by the kernel (every
# server counted alike, lxcfs included): requests and send-to-reply us by
# opcode. After the timed loop, so that tracing does not slow it.
trace_of() { # FILE NAME
	local f=$work/trace.$2
	"$(dirname "$0")/fuse_request_trace.sh" "$file_loop" "$cats" "$1" >"$f" 2>"$work/trace.err" || {
		echo "fuse-bench: request trace of $2 skipped: $(cat "$work/trace.err")"
		rm -f "$f"
	}
}
trace_of "$cat_file" ours
[ -n "$lxcfs_file" ] && trace_of "$lxcfs_file" lxcfs
load_end=$(load)

col() { awk -v c="$1" '{ print $c }' "$work/series" | median; }
ratio() { # median over rounds of (column a / na) / (column b / nb)
	awk -v a="$1" -v na="$2" -v b="$3" -v nb="$4" '{ printf "%.6f\n", ($a / na) / ($b / nb) }' \
		"$work/series" | median
}
k_ns=$(col 2) f_ns=$(col 4) ka_ns=$(col 6) fa_ns=$(col 8) sa_ns=$(col 10)
printf 'fuse-bench: %d rounds; load average %s at the start, %s at the end\n' "$runs" \
	"$load_start" "$load_end"
printf '  %-30s %7s %12s %10s %9s\n' "median of rounds (wall)" entries ns/run ns/entry req/entry
row() { printf '  %-30s %7d %12.0f %10.0f %9s\n' "$1" "$2" "$3" "$(awk -v t="$3" -v e="$2" 'BEGIN { print t / e }')" "$4"; }
per() { awk -v r="$1" -v d="$2" 'BEGIN { printf "%.2f", r / d }'; }
row "kernel sysctl NAME... (ints)" "$n" "$k_ns" -
row "fuse   sysctl NAME... (ints)" "$n" "$f_ns" "$(per "$req_name" $((runs * n)))"
row "kernel sysctl -a" "$k_all" "$ka_ns" -
row "fuse   sysctl -a" "$f_all" "$fa_ns" "$(per "$req_list" $((runs * f_all)))"
row "socket rcusysctl -a" "$s_all" "$sa_ns" -
echo "  per round, ns (wall cpu): kernel-names fuse-names kernel-a fuse-a socket-a"
sed 's/^/    /' "$work/series"
awk -v t="$k_ns" -v e="$n" 'BEGIN { printf "summary kernel_ns_per_entry %.0f\n", t / e }'
awk -v t="$f_ns" -v e="$n" 'BEGIN { printf "summary fuse_ns_per_entry %.0f\n", t / e }'
printf 'summary fuse_vs_kernel_per_entry %.2f\n' "$(ratio 4 1 2 1)"
printf 'summary fuse_vs_kernel_cpu_per_entry %.2f\n' "$(ratio 5 1 3 1)"
echo "summary fuse_requests_per_entry $(per "$req_list" $((runs * f_all)))"
echo "summary fuse_name_requests_per_entry $(per "$req_name" $((runs * n)))"
printf 'summary fuse_list_vs_kernel_per_entry %.2f\n' "$(ratio 8 "$f_all" 6 "$k_all")"
printf 'summary fuse_list_vs_kernel_cpu_per_entry %.2f\n' "$(ratio 9 "$f_all" 7 "$k_all")"
printf 'summary socket_list_vs_kernel_per_entry %.3f\n' "$(ratio 10 "$s_all" 6 "$k_all")"
printf 'summary socket_list_vs_kernel_cpu_per_entry %.3f\n' "$(ratio 11 "$s_all" 7 "$k_all")"

# Requests per cat, and the file loop's rounds: ratios taken round by round.
echo "  requests per cat of one entry ($cats cats): ${cat_ops%, }"
echo "  requests per open file, $cats files each (the floor; see above the counting):"
awk -F'|' '{ split($3, f, " "); sub(/, $/, "", $2); printf "    %-40s %s (waited %s)\n", $1, $2, f[2] }' <<<"$floor_lines"
sed 's/^/  file loop, wall ns per file by round: /' "$work/loop"
loop_ratio() { # FILE-A FILE-B: "median min max" over rounds of A / B
	awk -v a="$1" -v b="$2" -v n="$loop_rounds" '
		$1 == a { for (i = 1; i <= n; i++) x[i] = $(i + 1) }
		$1 == b { for (i = 1; i <= n; i++) y[i] = $(i + 1) }
		END { for (i = 1; i <= n; i++) print x[i] / y[i] }' "$work/loop" | sort -g |
		awk '{ v[NR] = $1 } END { printf "%.3f %.3f %.3f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'
}
echo "summary fuse_requests_per_cat $cat_waited # requests a cat waits for (all but RELEASE, FORGET); $cat_all with those; target <= 3"
echo "summary fuse_requests_per_cat_readonly $(waited_of "cat, mount read-only") # the same cats, the mount remounted read-only: no atime to invalidate, so no GETATTR"
echo "summary fuse_requests_per_open_read_close $(waited_of "open+read+close, no fstat") # open + read to EOF + close without fstat: no GETATTR asked"
read -r m lo hi < <(loop_ratio "$cat_file" /proc/sys/kernel/pid_max)
echo "summary fuse_vs_kernel_per_file $m # open+fstat+read+close, our entry / kernel /proc/sys/kernel/pid_max; median of $loop_rounds rounds, min $lo max $hi"
if [ -n "$lxcfs_file" ]; then
	read -r m lo hi < <(loop_ratio "$cat_file" "$lxcfs_file")
	echo "summary fuse_vs_lxcfs_per_file $m # open+fstat+read+close, our entry / lxcfs proc/loadavg; median of $loop_rounds rounds, min $lo max $hi; target <= 0.35"
else
	echo "summary fuse_vs_lxcfs_per_file skipped # lxcfs not available"
fi
# Where the time of a request goes (the floor of the per-file ratio).
for who in ours lxcfs; do
	[ -s "$work/trace.$who" ] || continue
	echo "  requests per file traced by the kernel, $who ($cats files; opcode per-file send-to-reply-us):" \
		"$(awk '$1 == "op" { printf "%s %s %s, ", $2, $3, $4 }' "$work/trace.$who" | sed 's/, $//')"
	read -r w wus < <(awk '$1 == "waited" { print $2, $3 }' "$work/trace.$who")
	echo "summary fuse_traced_requests_per_file_$who $w # waited for (all but RELEASE, FORGET), counted by the kernel's fuse tracepoints; send-to-reply $wus us per file"
done
if [ -s "$work/trace.ours" ] && [ -s "$work/trace.lxcfs" ]; then
	# The cheapest request kind either server answers is the round trip
	# with next to no work in it. Our file's time in the traced loop if
	# each of our waited requests took only that, all else (the reader's
	# system calls, the wake-up after each reply) as measured, over
	# lxcfs's time in its traced loop.
	awk '
		$1 == "op" && $2 != "RELEASE" && $2 != "FORGET" && (min == "" || $4 < min) { min = $4; what = FILENAME ":" $2 }
		$1 == "waited" && FILENAME ~ /ours$/ { n = $2; wus = $3 }
		$1 == "wall" { if (FILENAME ~ /ours$/) ours = $2; else lx = $2 }
		END {
			sub(/.*trace\./, "", what)
			printf "summary fuse_round_trip_floor_us %.1f # the cheapest request kind, send to reply (%s)\n", min, what
			printf "summary fuse_vs_lxcfs_floor %.3f # traced loops: our file if each of our %s waited requests took %.1f us (the rest as measured: %.0f of %.0f ns), over lxcfs %.0f ns; the traced loops as measured: %.3f\n",
				(ours - wus * 1000 + n * min * 1000) / lx, n, min, ours - wus * 1000, ours, lx, ours / lx
		}' "$work/trace.ours" "$work/trace.lxcfs"
fi
