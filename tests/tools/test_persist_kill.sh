#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# SIGKILL during a stream of commits: a process holding rcusysd's store
# (persist-commit --writer: a string and an int, the tree's commit hook
# installed as rcusysd installs it) commits pairs (x, x) with
# sysctl_commit() and prints each acknowledged x; it is killed after a
# random number of acknowledgements (so at a random point of a later
# commit), then the store is read back as a restart reads it. Every round:
# the pair is equal, at least the last acknowledged x and at most one more
# (the commit in flight). Bounded by counts: ROUNDS rounds of at most 24
# acknowledgements each. rcusysd gets commits only from the library until
# the socket has a multi-set: the writer is a program linked with the
# library and the store's own files. rcusysctl --kept reads the commit
# records too.
set -u
bin=${1:?usage: test_persist_kill.sh PERSIST-COMMIT RCUSYSCTL}
cli=${2:?usage: test_persist_kill.sh PERSIST-COMMIT RCUSYSCTL}
rounds=${ROUNDS:-40}
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"

state=$dir/s/state.conf
acked=0 mixed=0 lost=0 inflight=0
for round in $(seq "$rounds"); do
	want=$((RANDOM % 24 + 1))
	: > "$dir/out"
	"$bin" --writer "$state" > "$dir/out" 2> "$dir/err" &
	pid=$!
	# Up to 4000 polls for WANT more lines, then the kill lands inside a later commit.
	for _ in $(seq 4000); do
		[ "$(wc -l < "$dir/out")" -ge "$want" ] && break
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.002
	done
	kill -KILL "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	pid=
	last=$(tail -n 1 "$dir/out")
	case $last in ''|*[!0-9]*) last=$acked ;; esac
	[ "$last" -gt "$acked" ] && acked=$last
	cp "$state" "$dir/killed.journal" # as the kill left it: a restart compacts it
	pair=$("$bin" --read "$state")
	s=${pair% *} n=${pair##* }
	if [ "$s" != "s-$n" ]; then
		mixed=$((mixed + 1))
		echo "round $round: a mixed pair after the kill: $pair (last acknowledged $acked)"
	elif [ "$n" -lt "$acked" ] || [ "$n" -gt $((acked + 1)) ]; then
		lost=$((lost + 1))
		echo "round $round: the pair is $n, the last acknowledged $acked"
	else
		[ "$n" -gt "$acked" ] && inflight=$((inflight + 1))
		acked=$n
	fi
done
echo "$rounds kills, $acked commits acknowledged; $inflight times the commit in flight was kept whole"
check "no round left a mixed pair" 0 "$mixed"
check "no round lost an acknowledged commit or kept one never made" 0 "$lost"
check "the writer committed" yes "$([ "$acked" -ge "$rounds" ] && echo yes || echo "no: $acked")"
check "rcusysctl --kept reads the commit records a kill left" "app.n = $n	# client
app.s = s-$n	# client" "$("$cli" --kept="$dir/killed.journal" | sed 's/, [0-9TZ:-]*$//')"
finish persist-kill
