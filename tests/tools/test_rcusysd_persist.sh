#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The state file against SIGKILL: a writer stores values of different
# lengths and bytes as fast as it can while rcusysd is killed with SIGKILL
# at a random moment; the restarted daemon must hold the last acknowledged
# value, or the one in flight when the kill came, whole: never an older
# value, a mix of two, or an empty one. Then --no-persist, and a reload
# (SIGHUP) of the -c files that must not become persisted state.
set -u
rcusysd=${1:?usage: test_rcusysd_persist.sh RCUSYSD RCUSYSCTL}
cli=${2:?usage: test_rcusysd_persist.sh RCUSYSD RCUSYSCTL}
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"
rounds=${PERSIST_ROUNDS:-10}

# Value number N: one letter repeated; N and N+1 differ in length and in every byte.
val() {
	local letters=ABCDEFGHIJKLMNOPQRSTUVWXYZ
	printf "%$(($1 % 97 + 1))s" "" | tr ' ' "${letters:$(($1 % 26)):1}"
}
S=(--socket "$dir/run/control.sock")
kept() { "$cli" --kept="$dir/state/state.conf"; }
printf 'app.s string maxlen=128 default=initial\n' > "$dir/tunables.conf"
start() {
	"$rcusysd" --no-fuse -d "$dir/run" -t "$dir/tunables.conf" --state "$dir/state/state.conf" "$@" \
		2>> "$dir/log" &
	pid=$!
	for _ in $(seq 200); do [ -S "$dir/run/events.sock" ] && return 0; sleep 0.05; done
	echo "rcusysd did not start:"; cat "$dir/log"; exit 1
}
# The daemon's own start and stop leave the sockets; a killed one leaves them too.
start
check "no state file yet: the default" "initial" "$("$cli" "${S[@]}" -n app.s)"
expected_prev=initial
n=0 bad=0 empty=0 acked_total=0
for round in $(seq "$rounds"); do
	last_day=$(date -u +%Y-%m-%d)
	rm -f "$dir/acked" "$dir/attempt"
	(
		while :; do
			n=$((n + 1))
			echo "$n" > "$dir/attempt"
			"$cli" "${S[@]}" -q -w "app.s=$(val "$n")" > /dev/null 2>&1 || break
			echo "$n" > "$dir/acked"
		done
	) &
	writer=$!
	# Kill at a random moment once some writes went through (a hang guard, not a timing).
	for _ in $(seq 400); do [ -s "$dir/acked" ] && break; sleep 0.02; done
	sleep "0.$((RANDOM % 400 + 10))"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	wait "$writer"
	acked=$(cat "$dir/acked" 2>/dev/null || echo)
	attempt=$(cat "$dir/attempt")
	[ -n "$acked" ] && acked_total=$((acked_total + 1))
	[ -s "$dir/state/state.conf" ] || empty=$((empty + 1))
	rm -f "$dir/run/control.sock" "$dir/run/events.sock"
	start
	got=$("$cli" "${S[@]}" -n app.s)
	if [ -n "$acked" ] && [ "$got" = "$(val "$acked")" ]; then
		expected_prev=$got
	elif [ "$got" = "$(val "$attempt")" ]; then
		expected_prev=$got
	elif [ -z "$acked" ] && [ "$got" = "$expected_prev" ]; then
		:
	else
		bad=$((bad + 1))
		echo "round $round: restarted with '$got' (${#got} bytes); last acknowledged" \
			"'$(val "${acked:-0}")', in flight '$(val "$attempt")'"
	fi
	n=$attempt
done
echo "$n values written over $rounds kills"
check "every restart held the last acknowledged value (or the one in flight), whole" "0" "$bad"
check "the state file was never empty" "0" "$empty"
check "writes were acknowledged before each kill" "$rounds" "$acked_total"
check "rcusysctl --kept lists the kept value" "app.s = $("$cli" "${S[@]}" -n app.s)" "$(kept | cut -f1)"
# The day it was written: the last round's, or the next (a run over midnight).
stamp=$(kept | cut -f2 | cut -c1-20)
[ "$stamp" = "# client, $(date -u +%Y-%m-%d)" ] && day=$(date -u +%Y-%m-%d) || day=$last_day
check "with its origin and time" "# client, $day" "$stamp"
check "a killed daemon's temporary file is removed at start (the lock stays)" ".state.conf.lock state.conf" \
	"$(ls -A "$dir/state" | tr '\n' ' ' | sed 's/ $//')"
kill -TERM "$pid"
wait "$pid"
check "clean exit" "0" "$?"

# --no-persist: writes are not kept.
start --no-persist
"$cli" "${S[@]}" -q -w app.s=forgotten
kill -TERM "$pid"
wait "$pid"
start --no-persist
check "--no-persist keeps nothing" "initial" "$("$cli" "${S[@]}" -n app.s)"
kill -TERM "$pid"
wait "$pid"

# The state file comes after the -c files at start.
rm -rf "$dir/state"
printf 'app.s = from-config\n' > "$dir/settings.conf"
start -c "$dir/settings.conf"
check "-c applied, no state yet" "from-config" "$("$cli" "${S[@]}" -n app.s)"
"$cli" "${S[@]}" -q -w app.s=from-client
kill -TERM "$pid"
wait "$pid"
start -c "$dir/settings.conf"
check "state applied after the -c files" "from-client" "$("$cli" "${S[@]}" -n app.s)"
kill -TERM "$pid"
wait "$pid"

# A reload applies the -c files again; their values stay the files' business:
# only what clients write is persisted. A removed tunable's value stays kept
# while the daemon runs (a reload that re-declares it, or moves it to another
# file, finds it again) and is dropped at the next start, which cannot apply it.
rm -rf "$dir/state"
printf 'app.s string maxlen=128 default=initial\napp.t int\napp.u int\n' > "$dir/tunables.conf"
printf 'app.t = 3\n' > "$dir/settings.conf"
start -c "$dir/settings.conf"
"$cli" "${S[@]}" -q -w app.u=7
printf 'app.t = 4\n' > "$dir/settings.conf"
printf 'app.s string maxlen=128 default=initial\napp.t int\n' > "$dir/tunables.conf"
kill -HUP "$pid"
for _ in $(seq 200); do grep -q "reloaded" "$dir/log" && break; sleep 0.05; done
check "reload applied the -c file" "4" "$("$cli" "${S[@]}" -n app.t)"
"$cli" "${S[@]}" -q -w app.s=after-reload
check "state: client writes only" "app.s = after-reload app.u = 7" "$(kept | cut -f1 | tr '\n' ' ' | sed 's/ $//')"
kill -TERM "$pid"
wait "$pid"
check "clean exit after a reload" "0" "$?"
start -c "$dir/settings.conf"
check "the removed tunable is dropped at the next start" "app.s = after-reload" "$(kept | cut -f1)"
grep -q "app.u: .*(not restored; kept no more)" "$dir/log"
check "and the log says so" "0" "$?"
kill -TERM "$pid"
wait "$pid"
pid=
finish rcusysd-persist
