#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysd killed (SIGKILL) while clients commit pairs (x, x) to a string
# and an int with rcusysctl --atomic -w (one MSET, one sysctl_commit, one
# record in the state file): after each restart the pair is equal, at
# least the last acknowledged x and at most one more. Bounded by counts:
# ROUNDS rounds, each killed after 1 to 12 acknowledgements. Needs the
# control socket's multi-set (rcusysctl --atomic); without it the test is
# skipped and persist-kill covers the store with a writer linked with it.
set -u
rcusysd=${1:?usage: test_rcusysd_commit_kill.sh RCUSYSD RCUSYSCTL}
cli=${2:?usage: test_rcusysd_commit_kill.sh RCUSYSD RCUSYSCTL}
rounds=${ROUNDS:-20}
dir=$(mktemp -d)
pid= wpid=
trap '[ -n "$wpid" ] && kill "$wpid" 2>/dev/null; [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"

if ! "$cli" --help 2>&1 | grep -q -- --atomic; then
	echo "SKIP: rcusysctl has no --atomic here (the socket's multi-set is not built)"
	exit 77
fi
S=(--socket "$dir/run/control.sock")
printf 'app.s string maxlen=64 default=s-0\napp.n int default=0\n' > "$dir/tunables.conf"
start() {
	rm -f "$dir/run/control.sock" "$dir/run/events.sock"
	"$rcusysd" --no-fuse -d "$dir/run" -t "$dir/tunables.conf" --state "$dir/state/state.conf" \
		2>> "$dir/log" &
	pid=$!
	for _ in $(seq 400); do [ -S "$dir/run/events.sock" ] && return 0; sleep 0.025; done
	echo "rcusysd did not start:"; cat "$dir/log"; exit 1
}
get() { "$cli" "${S[@]}" -n "$1"; }

acked=0 mixed=0 lost=0
for round in $(seq "$rounds"); do
	start
	want=$((RANDOM % 12 + 1))
	( x=$((acked + 1))
	  while "$cli" "${S[@]}" -q --atomic -w "app.s=s-$x" "app.n=$x" 2> /dev/null; do
		echo "$x"; x=$((x + 1))
	  done ) > "$dir/out" &
	wpid=$!
	for _ in $(seq 2000); do
		[ "$(wc -l < "$dir/out")" -ge "$want" ] && break
		kill -0 "$wpid" 2> /dev/null || break
		sleep 0.005
	done
	kill -KILL "$pid"
	wait "$pid" 2> /dev/null
	wait "$wpid" 2> /dev/null
	pid= wpid=
	last=$(tail -n 1 "$dir/out")
	[ -n "$last" ] && acked=$last
	start
	s=$(get app.s) n=$(get app.n)
	kill -TERM "$pid"; wait "$pid"; pid=
	if [ "$s" != "s-$n" ]; then
		mixed=$((mixed + 1))
		echo "round $round: a mixed pair after the kill: $s $n (last acknowledged $acked)"
	elif [ "$n" -lt "$acked" ] || [ "$n" -gt $((acked + 1)) ]; then
		lost=$((lost + 1))
		echo "round $round: the pair is $n, the last acknowledged $acked"
	else
		acked=$n
	fi
done
echo "$rounds kills of rcusysd, the last pair $acked"
check "no restart gave a mixed pair" 0 "$mixed"
check "no restart lost an acknowledged commit or kept one never made" 0 "$lost"
check "the clients committed" yes "$([ "$acked" -ge "$rounds" ] && echo yes || echo "no: $acked")"
finish rcusysd-commit-kill
