#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysd at scale: time from exec to its "ready" log line, its CPU time by
# then, and its resident memory then, for a file of N int tunables
# (app.dDDD.tNNNNNN, 1000 per directory, each with a default), run without
# FUSE and without a state file; and once with a state file of 10 000
# persisted values (the state file restored and watched at start).
# Sizes run interleaved, REPS repetitions, the order rotating, so a burst of
# load hits every size alike; medians with min-max are printed.
#   rcusysd_scale.sh RCUSYSD [REPS [BEFORE]]      (default REPS: 5)
# BEFORE, another build of rcusysd (an A/B), runs the 1 000 and 100 000
# cases in the same repetitions, interleaved with RCUSYSD's; its bytes per
# tunable are printed beside, not as a summary line.
# Summary lines: rcusysd_ready_100k_s (wall), rcusysd_ready_100k_cpu_s,
# rcusysd_bytes_per_tunable (RSS growth per tunable from 1 000 to 100 000),
# rcusysd_ready_10k_persisted_s.
set -u
rcusysd=${1:?usage: rcusysd_scale.sh RCUSYSD [REPS [BEFORE]]}
reps=${2:-5}
before=${3:-}
die() { echo "rcusysd-scale: $*" >&2; exit 1; }
[ -x "$rcusysd" ] || die "no rcusysd at $rcusysd"
[ -z "$before" ] || [ -x "$before" ] || die "no rcusysd at $before"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(load)

gen() { # N FILE
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "app.d%03d.t%06d int default=%d\n", i / 1000, i, i }' >"$2"
}
for n in 1000 100000 10000; do gen "$n" "$work/t$n.conf"; done
awk 'BEGIN { for (i = 0; i < 10000; i++) printf "app.d%03d.t%06d = %d\n", i / 1000, i, i + 7 }' \
	>"$work/state.conf"
clk=$(getconf CLK_TCK)

# One start: prints "<wall s> <cpu s> <rss kB>" at the "ready" line.
start() { # N [persist|before]
	local n=$1 run=$work/run fifo=$work/log line t0 t1 opts=(--no-persist) bin=$rcusysd
	rm -rf "$run" "$fifo"
	mkfifo "$fifo"
	if [ "${2:-}" = persist ]; then
		cp "$work/state.conf" "$work/state.live"
		opts=(-s "$work/state.live")
	fi
	[ "${2:-}" = before ] && bin=$before
	t0=$EPOCHREALTIME
	"$bin" --no-fuse "${opts[@]}" -d "$run" -t "$work/t$n.conf" >"$fifo" 2>&1 &
	pid=$!
	exec 3<"$fifo"
	while IFS= read -r -t 120 line <&3; do
		case $line in *"rcusysd: ready"*) break ;; *" err "*) die "rcusysd (N=$n): $line" ;; esac
	done
	t1=$EPOCHREALTIME
	case $line in *"rcusysd: ready"*) ;; *) die "rcusysd (N=$n) did not become ready" ;; esac
	local cpu rss
	cpu=$(awk -v c="$clk" '{ print ($14 + $15) / c }' "/proc/$pid/stat")
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status")
	kill "$pid"
	cat <&3 >/dev/null
	exec 3<&-
	wait "$pid"
	pid=
	awk -v a="$t0" -v b="$t1" -v c="$cpu" -v r="$rss" 'BEGIN { printf "%.3f %.2f %d\n", b - a, c, r }'
}

cases=("1000" "100000" "10000 persist")
[ -n "$before" ] && cases+=("1000 before" "100000 before")
: >"$work/series"
for rep in $(seq "$reps"); do
	for k in "${!cases[@]}"; do
		c=${cases[$(((k + rep) % ${#cases[@]}))]}
		read -r wall cpu rss < <(start $c)
		[ -n "$rss" ] || die "no figures for N=$c"
		echo "${c// /-} $rep $wall $cpu $rss" >>"$work/series"
	done
done
load_end=$(load)

stat3() { # CASE FIELD: median min max over the repetitions
	awk -v c="$1" -v f="$2" '$1 == c { print $f }' "$work/series" | sort -g |
		awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'
}
printf 'rcusysd-scale: %d repetitions interleaved; load average %s at the start, %s at the end\n' \
	"$reps" "$load_start" "$load_end"
printf '  %-22s %20s %20s %20s\n' "tunables" "ready s (min-max)" "cpu s (min-max)" "RSS kB (min-max)"
for c in 1000 100000 10000-persist; do
	read -r w wl wh < <(stat3 "$c" 3)
	read -r u ul uh < <(stat3 "$c" 4)
	read -r r rl rh < <(stat3 "$c" 5)
	printf '  %-22s %8.2f (%.2f-%.2f) %8.2f (%.2f-%.2f) %8d (%d-%d)\n' "$c" "$w" "$wl" "$wh" "$u" "$ul" \
		"$uh" "$r" "$rl" "$rh"
done
# Bytes per tunable within each repetition (1 000 and 100 000 of the same one).
bpt() { # SUFFIX: "median min max"
	awk -v s="$1" '$1 == "1000" s { a[$2] = $5 } $1 == "100000" s { b[$2] = $5 }
	     END { for (r in b) printf "%.0f\n", (b[r] - a[r]) * 1024 / 99000 }' "$work/series" | sort -n |
		awk '{ v[NR] = $1 } END { printf "%s %s %s\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'
}
read -r bm bl bh < <(bpt "")
if [ -n "$before" ]; then
	for c in 1000-before 100000-before; do
		read -r r rl rh < <(stat3 "$c" 5)
		printf '  %-22s %20s %20s %8d (%d-%d)\n' "$c" "" "" "$r" "$rl" "$rh"
	done
	read -r om ol oh < <(bpt -before)
	echo "  bytes per tunable: $bm ($bl-$bh); before ($before): $om ($ol-$oh)"
fi
read -r w wl wh < <(stat3 100000 3)
read -r u ul uh < <(stat3 100000 4)
read -r p pl ph < <(stat3 10000-persist 3)
echo "summary rcusysd_ready_100k_s $w # wall, exec to ready; median of $reps, min $wl max $wh; target <= 2"
echo "summary rcusysd_ready_100k_cpu_s $u # its CPU time by then; median of $reps, min $ul max $uh"
echo "summary rcusysd_bytes_per_tunable $bm # RSS growth per tunable, 1 000 -> 100 000; median of $reps, min $bl max $bh"
echo "summary rcusysd_ready_10k_persisted_s $p # wall, state file of 10 000 values; median of $reps, min $pl max $ph"
