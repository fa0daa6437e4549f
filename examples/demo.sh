#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make demo: rcusysd with example helpers, and a short scenario.
#   demo.sh BUILD_DIR [REQUESTS_PER_CLIENT]
# Each scenario checks its own effect (writes that succeeded, helper runs,
# crash records); one that did nothing prints "demo: FAIL: <scenario>: ..."
# and the demo ends with "demo: FAIL (...)" and exits 1; otherwise it ends
# with "demo: OK". Exit 77 (skip) when not root: the tunables, as in
# /proc/sys, are writable by root only, so nothing could be shown.
# DEMO_CRASH_ME=PATH runs PATH as the crashing program instead of
# helpers/crash-me, DEMO_READERS=PATH runs PATH instead of tunable-readers
# (the test suite points them at nothing: the demo must fail).
# DEMO_RCUSYSD=PATH and DEMO_RCUSYSCTL=PATH run installed programs instead
# of BUILD_DIR's (tests/test_package.sh runs the Debian packages' so).
set -u
build=${1:?usage: demo.sh BUILD_DIR [REQUESTS]}
requests=${2:-40}
here=$(cd "$(dirname "$0")" && pwd)
rcusysd=${DEMO_RCUSYSD:-$build/tools/rcusysd/rcusysd}
rcusysctl=${DEMO_RCUSYSCTL:-$build/tools/rcusysctl/rcusysctl}
crash_me=${DEMO_CRASH_ME:-$here/helpers/crash-me}
tunable_readers=${DEMO_READERS:-$build/examples/tunable-readers}
. "$here/../tests/check.sh" # skip: exit 77, or a failure under CI=true as root

[ "$(id -u)" = 0 ] || skip "demo: needs root: the tunables are writable by root only, as in /proc/sys"

# The tree is mounted with FUSE in a private mount namespace when we can.
if [ "${INSIDE_NS:-}" != 1 ] && [ -c /dev/fuse ] &&
	unshare -m --propagation private true 2>/dev/null; then
	INSIDE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi

demo=$(mktemp -d /tmp/rcusysd-demo.XXXXXX)
run=$demo/run
# kernel.modprobe flips between two helper paths that differ in length and
# in every byte but the leading '/': the second is written "////./...//" +
# its real path, with '.' where the first has '/'. A value stitched from the
# two, or mixed byte by byte, is neither, names no file, and runs nothing.
path_a=$demo/a/modprobe
path_b=/
for ((i = 1; i < ${#path_a}; i++)); do
	if [ "${path_a:i:1}" = / ]; then path_b+=.; else path_b+=/; fi
done
path_b+=${demo#/}/b/modprobe
mkdir -p "$demo/a" "$demo/b" "$run"
cp "$here/helpers/record-call" "$path_a"
cp "$here/helpers/record-call" "$path_b"
cp "$here/helpers/record-call" "$demo/a/core-handler"
: > "$demo/calls.log"
step() { printf '\n== %s\n' "$*"; }
cli() { if [ -d "$run/sys/kernel" ]; then "$rcusysctl" --root "$run/sys" "$@"; else "$rcusysctl" --socket "$run/control.sock" "$@"; fi; }
reads=0 writes=0 write_errors=0 calls=0 torn=0 failures=0
# A scenario that did not do what it shows: say which, and fail at the end.
fail() {
	printf 'demo: FAIL: %s: %s\n' "$1" "$2"
	failures=$((failures + 1))
}
# Writes PATH=VALUE; counts it as written only when the tool says so.
write() {
	if cli -q -w "$1=$2"; then writes=$((writes + 1)); else write_errors=$((write_errors + 1)); fi
}
# Waits up to 10 s (a hang guard, not a timing check) for a command to succeed.
wait_for() {
	local _
	for _ in $(seq 200); do "$@" && return 0; sleep 0.05; done
	return 1
}

step "start rcusysd (run directory $run)"
# Its own tunables and no sysctl.d or tunables.d directory: the host's
# /etc/rcusysd, if any, stays out of the demo.
"$rcusysd" --run-dir "$run" --no-persist --sysctl-dirs "" --tunables-dirs "" \
	-t "$here/demo-tunables.conf" 2> "$demo/rcusysd.log" &
pid=$!
wait_for test -S "$run/events.sock" || { cat "$demo/rcusysd.log"; echo "demo: FAIL: start: rcusysd did not start"; exit 1; }
if [ -d "$run/sys/kernel" ]; then echo "tree mounted at $run/sys (FUSE)"; else echo "no FUSE here: using the control socket"; fi

step "the tree (rcusysctl -a)"
listing=$(cli -a)
echo "$listing"
n=$(grep -c ' = ' <<< "$listing")
reads=$((reads + n))
grep -q '^kernel\.modprobe = ' <<< "$listing" && grep -q '^demo\.greeting = hello$' <<< "$listing" ||
	fail "the tree" "rcusysctl -a did not list kernel.modprobe and demo.greeting ($n entries)"

step "lock-free readers: threads read a tunable while a writer rewrites it"
scenario="lock-free readers"
# Readers never wait for the writer and never see a value that was not
# written whole; the program checks every read and counts the torn ones.
out=$("$tunable_readers" 1 2>&1)
rc=$?
echo "$out"
[ "$rc" = 0 ] || fail "$scenario" "$tunable_readers exited with status $rc"
summary=$(sed -n 's/^tunable-readers: \(reads=.*\)/\1/p' <<< "$out")
r=$(sed -n 's/.*reads=\([0-9]*\).*/\1/p' <<< "$summary")
t=$(sed -n 's/.*torn=\([0-9]*\).*/\1/p' <<< "$summary")
if [ -z "$r" ] || [ "$r" = 0 ]; then
	fail "$scenario" "no reads counted (${summary:-no summary line from $tunable_readers})"
else
	reads=$((reads + r)) torn=$((torn + ${t:-0}))
	[ "${t:-0}" = 0 ] || fail "$scenario" "$t torn reads"
fi

step "module requests from 4 clients while kernel.modprobe flips between two paths"
echo "path A: $path_a"
echo "path B: $demo/b/modprobe, written with '/' and '.' in place of A's bytes before it" \
	"(\"${path_b:0:12}...\"), so that it differs from A in length and in every byte but" \
	"the first: a value torn between the two names no file"
scenario="module requests"
before=$((writes + write_errors)) errors_before=$write_errors
write kernel.modprobe "$path_a"
for c in 1 2 3 4; do
	( ok=0
	  for i in $(seq "$requests"); do
		  "$rcusysd" --run-dir "$run" -e "MODULE net-pf-$c-$i" >/dev/null && ok=$((ok + 1))
	  done
	  echo "$ok" > "$demo/client-$c.ok" ) &
done
clients=$(jobs -p | grep -v "^$pid$")
for i in $(seq 20); do
	write kernel.modprobe "$path_b"; sleep 0.02
	write kernel.modprobe "$path_a"; sleep 0.02
	reads=$((reads + 1)); cli -n kernel.modprobe >/dev/null || fail "$scenario" "reading kernel.modprobe failed"
done
wait $clients
answered=$(cat "$demo"/client-*.ok | awk '{ s += $1 } END { print s + 0 }')
calls=$(grep -c ' -q -- net-pf-' "$demo/calls.log")
via() { awk -v p="$1" '$1 == p && $2 == "-q" { n++ } END { print n + 0 }' "$demo/calls.log"; }
via_a=$(via "$path_a") via_b=$(via "$path_b")
torn_runs=$((calls - via_a - via_b))
torn=$((torn + torn_runs))
echo "module requests answered OK: $answered of $((4 * requests)); helper runs: $calls (via A: $via_a, via B: $via_b)"
echo "helper runs whose path was not one whole written value: $torn_runs"
[ "$write_errors" = "$errors_before" ] ||
	fail "$scenario" "$((write_errors - errors_before)) of $((writes + write_errors - before)) writes of kernel.modprobe failed"
# A torn path names no file: its request fails and nothing is logged.
[ "$answered" = $((4 * requests)) ] && [ "$calls" = $((4 * requests)) ] ||
	fail "$scenario" "$((4 * requests)) requests sent, $answered answered OK, $calls helper runs logged"
[ "$torn_runs" = 0 ] || fail "$scenario" "$torn_runs helper runs used a path that was never written"

step "a supervised program crashes; kernel.core_pattern names the record"
scenario="crash records"
errors_before=$write_errors
write kernel.core_pattern 'core.%e.%p.%s'
cli kernel.core_pattern
"$rcusysd" --run-dir "$run" -e "RUN /bin/true" >/dev/null # exits normally: no record
crash_pid=$("$rcusysd" --run-dir "$run" -e "RUN $crash_me SEGV" | sed -n 's/^OK //p')
record=$run/core.$(basename "$crash_me").$crash_pid.11
if [ -z "$crash_pid" ]; then
	fail "$scenario" "rcusysd did not start $crash_me"
elif wait_for test -s "$record"; then
	echo "$(basename "$record"): $(cat "$record")"
	grep -q "^crash: pid=$crash_pid .* signal=11 " "$record" ||
		fail "$scenario" "$record does not describe a SIGSEGV of pid $crash_pid"
else
	fail "$scenario" "no record $record for $crash_me's SIGSEGV"
fi
write kernel.core_pattern "|$demo/a/core-handler --core %p %s"
cli kernel.core_pattern
crash_pid=$("$rcusysd" --run-dir "$run" -e "RUN $crash_me ABRT" | sed -n 's/^OK //p')
piped() { grep -q "^$demo/a/core-handler $crash_pid 6: crash: pid=$crash_pid " "$demo/calls.log"; }
if [ -z "$crash_pid" ]; then
	fail "$scenario" "rcusysd did not start $crash_me"
elif wait_for piped; then
	grep '/core-handler ' "$demo/calls.log" | sed 's/^/piped: /'
	calls=$((calls + 1))
else
	fail "$scenario" "the pipe helper got no record for $crash_me's SIGABRT"
fi
[ "$write_errors" = "$errors_before" ] || fail "$scenario" "a write of kernel.core_pattern failed"

step "shut down (SIGTERM)"
kill -TERM "$pid"
wait "$pid"
rc=$?
tail -n 3 "$demo/rcusysd.log"
echo "rcusysd exit status: $rc"
[ "$rc" = 0 ] || fail "shut down" "rcusysd exited with status $rc"
# Every supervised program has been waited for by now: /bin/true left none.
records=$(find "$run" -maxdepth 1 -name 'core.*' | wc -l)
[ "$records" = 1 ] || fail "crash records" "$records record files, want 1 (none for /bin/true)"
rm -rf "$demo"
echo "demo: reads=$reads writes=$writes failed_writes=$write_errors helper_calls=$calls torn=$torn"
if [ "$failures" != 0 ]; then
	echo "demo: FAIL ($failures check(s) failed, named above)"
	exit 1
fi
echo "demo: OK"
