#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A big reload does not hold rcusysd up (issue 40): with N tunables
# (default 100 000) and a settings line for each, a reload that changes
# every value lasts long enough to be caught under way, and
#   - a RESET issued once "reloading" is logged gets its answer before the
#     reload logs "reloaded" (the reload holds the configuration's lock for
#     one entry at a time, not all along);
#   - a SIGTERM sent once "reloading" is logged stops the reload part way:
#     "reload stopped" and "shutting down" are logged, no "reloaded".
# Nothing is timed: the order of the log lines says it. (Before, the reset
# waited for the whole reload and the SIGTERM for its end.)
#   test_rcusysd_reload_lock.sh RCUSYSD RCUSYSCTL [N]
set -u
rcusysd=${1:?usage: test_rcusysd_reload_lock.sh RCUSYSD RCUSYSCTL [N]}
cli=${2:?usage: test_rcusysd_reload_lock.sh RCUSYSD RCUSYSCTL [N]}
n=${3:-100000}
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"
S=(--socket "$dir/run/control.sock")

# settings OFFSET: every tunable set to its number + OFFSET.
settings() {
	awk -v n="$n" -v o="$1" 'BEGIN { for (i = 0; i < n; i++) printf "app.d%03d.t%06d = %d\n", i / 1000, i, i + o }' \
		>"$dir/settings.conf"
}
# wait_line PATTERN [COUNT]: until the log has COUNT (default 1) lines with PATTERN.
wait_line() {
	for _ in $(seq 1200); do
		[ "$(grep -c -- "$1" "$dir/log")" -ge "${2:-1}" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "no \"$1\" line:"; tail -5 "$dir/log"; exit 1
}
# line_of PATTERN: the number of the first log line with PATTERN after line $2 (0: none).
line_of() {
	awk -v p="$1" -v after="${2:-0}" 'NR > after && index($0, p) { print NR; found = 1; exit }
		END { if (!found) print 0 }' "$dir/log"
}

awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "app.d%03d.t%06d int default=%d\n", i / 1000, i, i }' \
	>"$dir/tunables.conf"
settings 7
: >"$dir/log"
"$rcusysd" --no-fuse --no-persist -d "$dir/run" -t "$dir/tunables.conf" -c "$dir/settings.conf" \
	2>>"$dir/log" &
pid=$!
wait_line "rcusysd: ready"
check "the settings applied at start" "8" "$("$cli" "${S[@]}" -n app.d000.t000001)"

# A RESET during the reload.
settings 9
kill -HUP "$pid"
wait_line "reloading"
check "--reset during a reload succeeds" "" "$("$cli" "${S[@]}" --reset app.d000.t000000 2>&1)"
wait_line "reloaded"
reset_at=$(line_of "reset app.d000.t000000")
reloaded_at=$(line_of "reloaded")
check "the reset is answered before the reload ends (log lines $reset_at < $reloaded_at)" yes \
	"$([ "$reset_at" -gt 0 ] && [ "$reset_at" -lt "$reloaded_at" ] && echo yes || echo no)"
check "the reload applied the new settings" "10 $((n + 8))" \
	"$("$cli" "${S[@]}" -n app.d000.t000001) $("$cli" "${S[@]}" -n "app.d$(printf %03d $(((n - 1) / 1000))).t$(printf %06d $((n - 1)))")"

# A SIGTERM during the reload.
settings 11
mark=$(wc -l <"$dir/log")
kill -HUP "$pid"
wait_line "reloading" 2
kill -TERM "$pid"
wait "$pid"
status=$?
pid=
check "rcusysd exits cleanly" 0 "$status"
check "the reload stops part way" yes \
	"$([ "$(line_of "reload stopped" "$mark")" -gt 0 ] && echo yes || echo no)"
check "SIGTERM is taken before the reload ends: no second \"reloaded\"" 0 "$(line_of "reloaded" "$mark")"
check "and it shuts down" yes "$([ "$(line_of "shutting down" "$mark")" -gt 0 ] && echo yes || echo no)"
finish rcusysd-reload-lock
