#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysctl --atomic over socket-fixture's control socket: -w and -p write
# their keys as one commit, a refused key is named (errno and reason) and
# nothing changes, and watch prints a commit as one event (--json: one
# "event" number for all its entries), where writes without --atomic are
# separate events. Each failed check prints what differed.
set -u
cli=${1:?usage: test_rcusysctl_atomic.sh PATH-TO-rcusysctl PATH-TO-socket-fixture}
fixture=${2:?usage: test_rcusysctl_atomic.sh PATH-TO-rcusysctl PATH-TO-socket-fixture}
dir=$(mktemp -d /tmp/rcs-atomic-XXXXXX)
fixture_pid=
trap '[ -n "$fixture_pid" ] && kill "$fixture_pid" 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"

sock=$dir/control.sock
"$fixture" "$sock" &
fixture_pid=$!
for _ in $(seq 600); do
	"$cli" --socket "$sock" -N kernel.core_pattern >/dev/null 2>&1 && break
	sleep 0.05
done
srun() { "$cli" --socket "$sock" "$@" 2>&1; echo "rc=$?"; }
pair() { "$cli" --socket "$sock" -n kernel.core_pattern net.ipv4.conf.lo.forwarding | paste -sd' '; }

check "--atomic -w: both written, echoed" "kernel.core_pattern = c1
net.ipv4.conf.lo.forwarding = 5
rc=0" "$(srun --atomic -w kernel.core_pattern=c1 net.ipv4.conf.lo.forwarding=5)"
check "read back" "c1 5" "$(pair)"
check "--atomic: a bad number refuses the commit, naming the key" "rcusysctl: --atomic: key \"net.ipv4.conf.lo.forwarding\" refused (EINVAL): invalid value (item 2 of 2; nothing written)
rcusysctl: --atomic: nothing was changed
rc=1" "$(srun --atomic -w kernel.core_pattern=c2 net.ipv4.conf.lo.forwarding=abc)"
check "nothing changed" "c1 5" "$(pair)"
long=$(printf 'x%.0s' $(seq 200))
check "--atomic: an over-long string refuses the commit" "rcusysctl: --atomic: key \"kernel.core_pattern\" refused (EMSGSIZE): value longer than 127 bytes (item 1 of 2; nothing written)
rcusysctl: --atomic: nothing was changed
rc=1" "$(srun --atomic -q -w "kernel.core_pattern=$long" net.ipv4.conf.lo.forwarding=6)"
check "nothing changed" "c1 5" "$(pair)"
check "--atomic: an unknown key sends nothing" "rcusysctl: cannot stat kernel.nope: No such file or directory
rcusysctl: --atomic: nothing was changed
rc=1" "$(srun --atomic -w kernel.core_pattern=c3 kernel.nope=1)"
check "nothing changed" "c1 5" "$(pair)"
check "without --atomic: the first key is written before the second is refused" "kernel.core_pattern = c4
rcusysctl: setting key \"net.ipv4.conf.lo.forwarding\": invalid value
rc=1" "$(srun -w kernel.core_pattern=c4 net.ipv4.conf.lo.forwarding=abc)"
check "key by key: half written" "c4 5" "$(pair)"

printf 'kernel.core_pattern = f1\nnet.ipv4.conf.lo.forwarding = 7\n' > "$dir/good.conf"
printf 'kernel.core_pattern = f2\nnet.ipv4.conf.lo.forwarding = seven\n' > "$dir/bad.conf"
check "--atomic -p: one commit of the file" "kernel.core_pattern = f1
net.ipv4.conf.lo.forwarding = 7
rc=0" "$(srun --atomic -p "$dir/good.conf")"
check "--atomic -p: a bad value changes nothing" "rcusysctl: --atomic: key \"net.ipv4.conf.lo.forwarding\" refused (EINVAL): invalid value (item 2 of 2; nothing written)
rcusysctl: --atomic: nothing was changed
rc=1" "$(srun --atomic -p "$dir/bad.conf")"
check "nothing changed" "f1 7" "$(pair)"

check "--atomic needs the socket" "rcusysctl: --atomic needs the control socket (--socket); a tree of files (--root) has no commits
rc=1" "$("$cli" --root "$dir" --atomic -w a=1 2>&1; echo "rc=$?")"
check "--atomic: names need values" "rcusysctl: --atomic: every name needs a value (name=value)
Try 'rcusysctl --help' for more information.
rc=1" "$(srun --atomic kernel.core_pattern)"
check "--atomic: not with watch" "rcusysctl: --atomic goes with -w, -p or --system only
rc=1" "$(srun --atomic watch kernel.core_pattern)"

# watch --json: a commit's entries share one event number; two writes without
# --atomic, the second after the first was printed, are two events.
out=$dir/watch.out
"$cli" --socket "$sock" --json watch kernel.core_pattern net.ipv4.conf.lo.forwarding kernel.modprobe > "$out" 2>&1 &
wpid=$!
for _ in $(seq 600); do
	"$cli" --socket "$sock" -q kernel.modprobe=/sync
	[ -s "$out" ] && break
	sleep 0.05
done
# Quick writes may show as one event (rcusysctl(8)): each write waits until
# the one before it is printed.
await_value() {
	for _ in $(seq 600); do
		grep -q "\"value\":\"$1\"" "$out" && break
		sleep 0.05
	done
}
"$cli" --socket "$sock" -q --atomic -w kernel.core_pattern=w1 net.ipv4.conf.lo.forwarding=11
await_value w1
"$cli" --socket "$sock" -q -w kernel.core_pattern=w2
await_value w2
"$cli" --socket "$sock" -q -w net.ipv4.conf.lo.forwarding=12
await_value 12
kill "$wpid"
wait "$wpid" 2>/dev/null
# Events numbered from the first printed line, so the /sync writes do not count.
events=$(grep -v modprobe "$out" | sed -E 's/"changes":[0-9]+,//' |
	awk -F'"event":' '{ split($2, e, "}"); if (!(e[1] in seen)) seen[e[1]] = ++n; sub(/,"event":[0-9]+/, ",\"event\":" seen[e[1]]); print }')
check "watch: a commit is one event, two writes two" '{"name":"kernel.core_pattern","value":"w1","event":1}
{"name":"net.ipv4.conf.lo.forwarding","value":"11","event":1}
{"name":"kernel.core_pattern","value":"w2","event":2}
{"name":"net.ipv4.conf.lo.forwarding","value":"12","event":3}' "$events"

finish "rcusysctl --atomic"
