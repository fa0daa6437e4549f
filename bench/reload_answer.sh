#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# How fast rcusysd answers a RESET and takes a SIGTERM during a reload of
# 100 000 tunables (issue 40): N int tunables in one tunables file (-t) and
# a settings line for each in one settings file (-c), so that a reload
# parses two 100 000-line files and then writes every value (the settings
# change at each reload).
#   RESET    a reload runs alone (timed: the SIGTERM delays are shares of
#            it), then another; meanwhile `rcusysctl --reset` of one entry is
#            issued again and again, each timed from exec to exit, until
#            "reloaded"; beside it the same RESET with no reload (idle), so
#            the client's own start is seen.
#   SIGTERM  a reload runs; after a delay (a share of that run's reload
#            time, rotating: 2, 6, 10, 14, 18, 40 and 75 %, so that the
#            tunables parse, the settings parse and the writes are each hit)
#            SIGTERM is sent, timed to the "shutting down" line (the reload
#            stopped and the signal taken; the log's millisecond clock); the
#            exit, which frees 100 000 tunables, is printed beside it. A run
#            whose reload ended before the signal (quicker than the timed
#            one) is not counted.
#   stop gap the longest stretch of a reload of N between two of its stop
#            points, in the reload thread's CPU time (tests/tools/config-stop
#            --gaps, in process): what a SIGTERM waits for at most on an idle
#            machine; on a loaded one the wall times above add the queueing.
#            Beside it, in the same process, resets one after another during
#            that reload: the longest, without a client's start or a socket.
# REPS repetitions interleave a RESET run and a SIGTERM run per delay, each
# in a fresh daemon; medians with min-max are printed.
#   reload_answer.sh RCUSYSD RCUSYSCTL [REPS] [N]   (defaults 3, 100000)
# Summary lines: reload_100k_reset_ms (median of every RESET during the
# reloads; its maximum beside it; target: max <= 100) and
# reload_100k_sigterm_ms (median; max beside; target: max <= 100), and
# reload_100k_stop_gap_cpu_ms (median of REPS; target <= 100).
set -u
rcusysd=${1:?usage: reload_answer.sh RCUSYSD RCUSYSCTL [REPS] [N]}
cli=${2:?usage: reload_answer.sh RCUSYSD RCUSYSCTL [REPS] [N]}
reps=${3:-3}
n=${4:-100000}
die() { echo "reload-answer: $*" >&2; exit 1; }
gaps=$(cd "$(dirname "$rcusysd")/../../tests/tools" 2>/dev/null && pwd)/config-stop
[ -x "$rcusysd" ] && [ -x "$cli" ] && [ -x "$gaps" ] ||
	die "no rcusysd, rcusysctl or config-stop at $rcusysd, $cli, $gaps"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start=$(load)
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "app.t%06d int default=%d\n", i, i }' \
	>"$work/t.conf"
settings() { # OFFSET: every tunable set to its number + OFFSET
	awk -v n="$n" -v o="$1" 'BEGIN { for (i = 0; i < n; i++) printf "app.t%06d = %d\n", i, i + o }' \
		>"$work/s.conf"
}
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'; }
logged() { tail -n 4 "$work/log" | grep -q -- "$1"; } # the log's last lines have PATTERN
wait_logged() {
	for _ in $(seq 6000); do # 120 s hang guard
		logged "$1" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.02
	done
	die "no \"$1\" line: $(tail -n 2 "$work/log")"
}
start() {
	settings 7
	: >"$work/log"
	"$rcusysd" --no-fuse --no-persist -d "$work/run" -t "$work/t.conf" -c "$work/s.conf" \
		2>>"$work/log" &
	pid=$!
	wait_logged "rcusysd: ready"
}
stop() { kill "$pid" 2>/dev/null; wait "$pid"; pid=; }
reset_once() { # prints the ms of one RESET
	local t0=$EPOCHREALTIME
	"$cli" --socket "$work/run/control.sock" --reset app.t000001 >/dev/null 2>&1 || die "RESET failed"
	ms_since "$t0"
}

# One RESET run: a reload alone (its ms printed, for the SIGTERM delays), idle RESETs into
# idle, then RESETs during a second reload into busy.
reset_run() {
	local t0
	start
	settings 9
	t0=$EPOCHREALTIME
	kill -HUP "$pid"
	wait_logged "reloaded"
	ms_since "$t0"
	for _ in 1 2 3 4 5; do reset_once >>"$work/idle"; done
	settings 11
	kill -HUP "$pid"
	until logged "reloaded"; do reset_once >>"$work/busy"; done
	stop
}

# One SIGTERM run after DELAY s: "<ms to shutting down> <ms to exit>".
term_run() {
	local t0 t1 at
	start
	settings 9
	kill -HUP "$pid"
	sleep "$1"
	t0=$EPOCHREALTIME
	kill -TERM "$pid"
	wait "$pid"
	t1=$EPOCHREALTIME
	pid=
	at=$(grep -m1 "shutting down" "$work/log" | cut -d' ' -f1)
	[ -n "$at" ] || die "no \"shutting down\" line after SIGTERM"
	if grep -q "reloaded" "$work/log"; then # this reload was quicker than the timed one
		echo "reload-answer: the reload ended before SIGTERM (delay $1 s): not counted" >&2
		return
	fi
	awk -v t0="$t0" -v t1="$t1" -v at="$(date -d "$at" +%s.%N)" \
		'BEGIN { d = (at - t0) * 1000; printf "%.1f %.1f\n", d < 0 ? 0 : d, (t1 - t0) * 1000 }'
}

: >"$work/idle"
: >"$work/busy"
: >"$work/term"
: >"$work/gap"
: >"$work/inproc"
reload_ms=
for rep in $(seq "$reps"); do
	reload_ms=$(reset_run)
	echo "reload-answer: repetition $rep: a reload of $n took $reload_ms ms" >&2
	for share in 2 6 10 14 18 40 75; do
		delay=$(awk -v r="$reload_ms" -v s="$share" 'BEGIN { printf "%.3f", r * s / 100000 }')
		r=$(term_run "$delay")
		[ -n "$r" ] && echo "$share $r" >>"$work/term"
	done
	(cd "$work" && "$gaps" --gaps "$n") >"$work/gaps.out" || die "config-stop --gaps failed"
	awk '/^summary reload_100k_stop_gap_cpu_ms/ { print $3 }' "$work/gaps.out" >>"$work/gap"
	awk '/^summary reload_100k_reset_inproc_max_ms/ { print $3 }' "$work/gaps.out" >>"$work/inproc"
done
load_end=$(load)

stat() { # FILE FIELD: median min max
	awk -v f="$2" '{ print $f }' "$1" | sort -g |
		awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f %.1f %.1f %d\n", m, v[1], v[NR], NR }'
}
read -r im il ih ic < <(stat "$work/idle" 1)
read -r bm bl bh bc < <(stat "$work/busy" 1)
read -r tm tl th tc < <(stat "$work/term" 2)
read -r em el eh _ < <(stat "$work/term" 3)
read -r gm gl gh _ < <(stat "$work/gap" 1)
read -r pm pl ph _ < <(stat "$work/inproc" 1)
printf 'reload-answer: %d repetitions, %d tunables; load average %s at the start, %s at the end\n' \
	"$reps" "$n" "$load_start" "$load_end"
printf '  RESET idle:             median %6.1f ms (%.1f-%.1f), %d resets\n' "$im" "$il" "$ih" "$ic"
printf '  RESET during a reload:  median %6.1f ms (%.1f-%.1f), %d resets\n' "$bm" "$bl" "$bh" "$bc"
printf '  SIGTERM to "shutting down" by delay (share of the reload): median (min-max) ms\n'
for share in 2 6 10 14 18 40 75; do
	awk -v s="$share" '$1 == s' "$work/term" >"$work/one"
	[ -s "$work/one" ] || { printf '    %3d %%  none (each reload ended before)\n' "$share"; continue; }
	read -r sm sl sh sc < <(stat "$work/one" 2)
	printf '    %3d %%  %6.1f (%.1f-%.1f), %d runs\n' "$share" "$sm" "$sl" "$sh" "$sc"
done
printf '  SIGTERM to exit (100 000 tunables freed): median %.1f ms (%.1f-%.1f)\n' "$em" "$el" "$eh"
printf '  the longest CPU stretch between stop points: median %.1f ms (%.1f-%.1f)\n' "$gm" "$gl" "$gh"
printf '  the longest config_reset() in process during a reload: median %.1f ms (%.1f-%.1f)\n' \
	"$pm" "$pl" "$ph"
echo "summary reload_100k_reset_ms $bm # rcusysctl --reset during a reload of $n, exec to exit; median of $bc, max $bh; idle median $im; target: max <= 100"
echo "summary reload_100k_sigterm_ms $tm # SIGTERM during a reload of $n to the \"shutting down\" line; median of $tc at 7 points of the reload, max $th; exit $em; target: max <= 100"
echo "summary reload_100k_stop_gap_cpu_ms $gm # the longest CPU stretch between two stop points of a reload of $n (config-stop --gaps); median of $reps, max $gh; target <= 100"
echo "summary reload_100k_reset_inproc_max_ms $pm # the longest config_reset() during a reload of $n, in process (config-stop --gaps; no client start); median of $reps, max $ph; target <= 100"
