#!/usr/bin/env bash
# make demo: rcusysd with example helpers, and a short scenario.
#   demo.sh BUILD_DIR [REQUESTS_PER_CLIENT]
set -u
build=${1:?usage: demo.sh BUILD_DIR [REQUESTS]}
requests=${2:-40}
here=$(cd "$(dirname "$0")" && pwd)
rcusysd=$build/tools/rcusysd/rcusysd
rcusysctl=$build/tools/rcusysctl/rcusysctl

# The tree is mounted with FUSE in a private mount namespace when we can.
if [ "${INSIDE_NS:-}" != 1 ] && [ "$(id -u)" = 0 ] && [ -c /dev/fuse ] &&
	unshare -m --propagation private true 2>/dev/null; then
	INSIDE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi

demo=$(mktemp -d /tmp/rcusysd-demo.XXXXXX)
run=$demo/run
mkdir -p "$demo/a" "$demo/b" "$run"
cp "$here/helpers/record-call" "$demo/a/modprobe"
cp "$here/helpers/record-call" "$demo/b/modprobe"
cp "$here/helpers/record-call" "$demo/a/core-handler"
: > "$demo/calls.log"
step() { printf '\n== %s\n' "$*"; }
cli() { if [ -d "$run/sys/kernel" ]; then "$rcusysctl" --root "$run/sys" "$@"; else "$rcusysctl" --socket "$run/control.sock" "$@"; fi; }
reads=0 writes=0

step "start rcusysd (run directory $run)"
"$rcusysd" --run-dir "$run" -t "$here/demo-tunables.conf" 2> "$demo/rcusysd.log" &
pid=$!
for _ in $(seq 100); do [ -S "$run/events.sock" ] && break; sleep 0.05; done
[ -S "$run/events.sock" ] || { cat "$demo/rcusysd.log"; echo "demo: rcusysd did not start"; exit 1; }
if [ -d "$run/sys/kernel" ]; then echo "tree mounted at $run/sys (FUSE)"; else echo "no FUSE here: using the control socket"; fi

step "the tree (rcusysctl -a)"
cli -a
reads=$((reads + $(cli -a | wc -l)))

step "module requests from 4 clients while kernel.modprobe flips between two paths"
set_modprobe() { cli -q -w "kernel.modprobe=$1" && writes=$((writes + 1)); }
set_modprobe "$demo/a/modprobe"
for c in 1 2 3 4; do
	( for i in $(seq "$requests"); do "$rcusysd" --run-dir "$run" -e "MODULE net-pf-$c-$i" >/dev/null; done ) &
done
for i in $(seq 20); do
	set_modprobe "$demo/b/modprobe"; sleep 0.02
	set_modprobe "$demo/a/modprobe"; sleep 0.02
	reads=$((reads + 1)); cli -n kernel.modprobe >/dev/null
done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null
calls=$(grep -c ' -q -- net-pf-' "$demo/calls.log")
torn=$(grep ' -q -- net-pf-' "$demo/calls.log" | grep -cvE "^($demo/a/modprobe|$demo/b/modprobe) -q -- net-pf-")
echo "module requests run: $calls (via $demo/a/modprobe: $(grep -c "^$demo/a/" "$demo/calls.log"), via $demo/b/modprobe: $(grep -c "^$demo/b/" "$demo/calls.log"))"
echo "helper calls whose path was not one whole written value: $torn"

step "a supervised program crashes; kernel.core_pattern names the record"
cli -w 'kernel.core_pattern=core.%e.%p.%s'; writes=$((writes + 1))
"$rcusysd" --run-dir "$run" -e "RUN $here/helpers/crash-me SEGV" >/dev/null
"$rcusysd" --run-dir "$run" -e "RUN /bin/true" >/dev/null # exits normally: no record
sleep 0.5
for f in "$run"/core.*; do [ -e "$f" ] && echo "$(basename "$f"): $(cat "$f")"; done
cli -w "kernel.core_pattern=|$demo/a/core-handler --core %p %s"; writes=$((writes + 1))
"$rcusysd" --run-dir "$run" -e "RUN $here/helpers/crash-me ABRT" >/dev/null
sleep 0.5
grep '/core-handler ' "$demo/calls.log" | sed 's/^/piped: /'
calls=$((calls + $(grep -c '/core-handler ' "$demo/calls.log")))

step "shut down (SIGTERM)"
kill -TERM "$pid"
wait "$pid"
rc=$?
tail -n 3 "$demo/rcusysd.log"
echo "rcusysd exit status: $rc"
rm -rf "$demo"
echo "demo: reads=$reads writes=$writes helper_calls=$calls torn=$torn"
[ "$rc" = 0 ] && [ "$torn" = 0 ]
