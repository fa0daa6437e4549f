#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysd's settings and reloads at scale (issue 40): for N int tunables
# (app.tNNNNNN, each with a default, all in one directory: one table, the
# worst case for removing them row by row) and a settings file (-c) with a
# line for each, giving each another value:
#   start      exec to the "ready" log line (every value written);
#   reload     SIGHUP with the same files to the "reloaded" line (every
#              line merged and looked up again, nothing written);
#   unregister SIGHUP after both files were emptied to the "reloaded"
#              line (every tunable removed, row by row).
# Run without FUSE and without a state file, for N = 10 000 and 100 000,
# interleaved, REPS repetitions with the order rotating, so a burst of load
# hits both sizes alike; medians with min-max are printed.
#   settings_scale.sh RCUSYSD [REPS]      (default REPS: 5)
# Summary lines: settings_100k_start_s, settings_reload_100k_s,
# unregister_all_100k_s, and scale_linearity (the worst of the three's
# 100 000 median over its 10 000 median, divided by 10).
set -u
rcusysd=${1:?usage: settings_scale.sh RCUSYSD [REPS]}
reps=${2:-5}
die() { echo "settings-scale: $*" >&2; exit 1; }
[ -x "$rcusysd" ] || die "no rcusysd at $rcusysd"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(load)

for n in 10000 100000; do
	awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "app.t%06d int default=%d\n", i, i }' \
		>"$work/t$n.conf"
	awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "app.t%06d = %d\n", i, i + 7 }' \
		>"$work/s$n.conf"
done

now() { echo "$EPOCHREALTIME"; }
# Reads the log until a line matching PATTERN; dies on an error line.
wait_for() { # PATTERN WHAT
	local line
	while IFS= read -r -t 120 line <&3; do
		case $line in *"$1"*) return 0 ;; *" err "* | *" warning "*) die "$2: $line" ;; esac
	done
	die "$2: no \"$1\" line"
}

clk=$(getconf CLK_TCK)
cpu() { awk -v c="$clk" '{ print ($14 + $15) / c }' "/proc/$pid/stat"; }

# One run: prints "<start s> <reload s> <unregister s>" (wall), then the same in CPU seconds.
run() { # N
	local n=$1 run=$work/run fifo=$work/log t0 t1 t2 t3 t4 t5 c1 c3 c5
	rm -rf "$run" "$fifo"
	mkfifo "$fifo"
	cp "$work/t$n.conf" "$work/t.live"
	cp "$work/s$n.conf" "$work/s.live"
	t0=$(now)
	"$rcusysd" --no-fuse --no-persist -d "$run" -t "$work/t.live" -c "$work/s.live" >"$fifo" 2>&1 &
	pid=$!
	exec 3<"$fifo"
	wait_for "rcusysd: ready" "start (N=$n)"
	t1=$(now)
	c1=$(cpu)
	t2=$(now)
	kill -HUP "$pid"
	wait_for "reloaded" "reload (N=$n)"
	t3=$(now)
	c3=$(cpu)
	: >"$work/t.live"
	: >"$work/s.live"
	t4=$(now)
	kill -HUP "$pid"
	wait_for "reloaded" "unregister (N=$n)"
	t5=$(now)
	c5=$(cpu)
	kill "$pid"
	cat <&3 >/dev/null
	exec 3<&-
	wait "$pid"
	pid=
	awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v e="$t4" -v f="$t5" -v x="$c1" -v y="$c3" \
		-v z="$c5" 'BEGIN { printf "%.3f %.3f %.3f %.2f %.2f %.2f\n", b - a, d - c, f - e, x, y - x, z - y }'
}

sizes=(10000 100000)
: >"$work/series"
for rep in $(seq "$reps"); do
	for k in 0 1; do
		n=${sizes[$(((k + rep) % 2))]}
		read -r s r u cs cr cu < <(run "$n")
		[ -n "$cu" ] || die "no figures for N=$n"
		echo "$n $rep $s $r $u $cs $cr $cu" >>"$work/series"
	done
done
load_end=$(load)

stat3() { # N FIELD: median min max over the repetitions
	awk -v n="$1" -v f="$2" '$1 == n { print $f }' "$work/series" | sort -g |
		awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'
}
printf 'settings-scale: %d repetitions interleaved; load average %s at the start, %s at the end\n' \
	"$reps" "$load_start" "$load_end"
printf '  %-10s %24s %24s %24s   (wall; CPU s, median)\n' "tunables" "start s (min-max)" \
	"reload s (min-max)" "unregister s (min-max)"
for n in "${sizes[@]}"; do
	read -r s sl sh < <(stat3 "$n" 3)
	read -r r rl rh < <(stat3 "$n" 4)
	read -r u ul uh < <(stat3 "$n" 5)
	printf '  %-10s %8.3f (%.3f-%.3f) %8.3f (%.3f-%.3f) %8.3f (%.3f-%.3f)   %.2f %.2f %.2f\n' "$n" \
		"$s" "$sl" "$sh" "$r" "$rl" "$rh" "$u" "$ul" "$uh" "$(stat3 "$n" 6 | cut -d' ' -f1)" \
		"$(stat3 "$n" 7 | cut -d' ' -f1)" "$(stat3 "$n" 8 | cut -d' ' -f1)"
done
lin() { # FIELD: 100 000 median / 10 000 median / 10
	awk -v a="$(stat3 100000 "$1" | cut -d' ' -f1)" -v b="$(stat3 10000 "$1" | cut -d' ' -f1)" \
		'BEGIN { printf "%.2f", (b > 0 ? a / b / 10 : 99) }'
}
ls=$(lin 3)
lr=$(lin 4)
lu=$(lin 5)
worst=$(printf '%s\n' "$ls" "$lr" "$lu" | sort -g | tail -1)
read -r s sl sh < <(stat3 100000 3)
read -r r rl rh < <(stat3 100000 4)
read -r u ul uh < <(stat3 100000 5)
cs=$(stat3 100000 6 | cut -d' ' -f1)
cr=$(stat3 100000 7 | cut -d' ' -f1)
cu=$(stat3 100000 8 | cut -d' ' -f1)
echo "summary settings_100k_start_s $s # exec to ready, 100 000 tunables and a settings line each; median of $reps, min $sl max $sh, CPU $cs s; target <= 2"
echo "summary settings_reload_100k_s $r # SIGHUP to reloaded, same files; median of $reps, min $rl max $rh, CPU $cr s; target <= 1"
echo "summary unregister_all_100k_s $u # SIGHUP to reloaded, every tunable removed; median of $reps, min $ul max $uh, CPU $cu s; target <= 1"
echo "summary scale_linearity $worst # worst of start $ls, reload $lr, unregister $lu (100 000 over 10 000, / 10); target <= 1.3"
