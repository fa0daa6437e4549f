#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Attacks on a root rcusysd, one group per run:
#   access   a local user (uid 65534) against the control and events sockets
#   fuse     the same user against the mounted tree
#   rundir   user-owned or writable run directories, symlinks at sys and at the
#            socket names (rcusysd must refuse to start)
#   sigterm  SIGTERM with idle and half-line events clients, a program and
#            helpers that ignore SIGTERM, a core-pipe helper that never exits
#   signals  SIGPIPE from a closed stderr, SIGCHLD ignored at start, what a
#            supervised program inherits
#   fds      ulimit -n exhaustion (no busy loop), the events connection cap
#   flood    many RUN events on one connection (ASan catches a use-after-free)
# Each attack prints "held: NAME" or "failed: NAME (why)"; any failure fails.
# Waits are hang guards (seconds), never timing assertions.
set -u
group=${1:?usage: test_attack.sh GROUP RCUSYSD RCUSYSCTL HELPER plain|asan}
rcusysd=${2:?} cli=${3:?} helper=${4:?} build=${5:?}
nobody=65534
nheld=0 nfailed=0

if [ "$(id -u)" != 0 ]; then
	echo "skip: the attack suite needs root (it plays a local user with setpriv)"
	exit 77
fi
dir=$(mktemp -d)
chmod 755 "$dir" # the local user must reach the sockets and the mount
daemons=()
cleanup() {
	for p in "${daemons[@]}" $(cat "$dir"/*.pid 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	for m in "$dir"/*/sys "$dir"/target; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
	rm -rf "$dir"
}
trap cleanup EXIT

held() { echo "held: $1"; nheld=$((nheld + 1)); }
failed() { echo "failed: $1${2:+ ($2)}"; nfailed=$((nfailed + 1)); }
# attack NAME WHY-IF-FAILED CONDITION...: runs the condition, held if it is true.
attack() {
	local name=$1 why=$2
	shift 2
	if "$@"; then held "$name"; else failed "$name" "$why"; fi
}
as_user() { setpriv --reuid="$nobody" --regid="$nobody" --clear-groups "$@"; }
# wait_for SECONDS COMMAND...: until the command succeeds (hang guard).
wait_for() {
	local n=$(($1 * 20))
	shift
	while ! "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.05
	done
}
alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }
gone() { ! alive "$1"; }

# start RUN_DIR [rcusysd args...]: starts a daemon; sets $pid; log in RUN_DIR.log.
start() {
	local run=$1
	shift
	"$rcusysd" -d "$run" --no-persist "$@" 2> "$run.log" &
	pid=$!
	daemons+=("$pid")
	if ! wait_for 20 test -S "$run/events.sock"; then
		echo "rcusysd did not start; its log:"
		cat "$run.log"
		return 1
	fi
}
# stop PID SECONDS: SIGTERM, wait up to SECONDS (hang guard), then SIGKILL.
# Sets $rc (124 when it had to be killed) and $took (seconds, for the log).
stop() {
	local t0=$SECONDS
	kill -TERM "$1"
	if wait_for "$2" gone "$1"; then
		wait "$1"
		rc=$?
	else
		kill -KILL "$1"
		wait "$1"
		rc=124
	fi
	took=$((SECONDS - t0))
}
event() { "$rcusysd" -d "$1" -e "$2"; }
ctl() { local run=$1; shift; "$cli" --socket "$run/control.sock" "$@"; }

cat > "$dir/tunables.conf" <<'EOF'
pub.val  int default=1 mode=0644
priv.val int default=2 mode=0600
open.val int default=3 mode=0666
EOF
printf '#!/bin/sh\nkill -SEGV $$\n' > "$dir/crash"
printf '#!/bin/sh\nexit 0\n' > "$dir/modprobe-ok"
chmod 755 "$dir/crash" "$dir/modprobe-ok"

case $group in
access)
	run=$dir/a
	start "$run" --no-fuse -t "$dir/tunables.conf" || exit 1
	attack "user reads a 0644 entry over the socket" "got '$(as_user "$cli" --socket "$run/control.sock" -n pub.val 2>&1)'" \
		test "$(as_user "$cli" --socket "$run/control.sock" -n pub.val 2>&1)" = 1
	as_user "$cli" --socket "$run/control.sock" -q -w pub.val=9 >/dev/null 2>&1
	attack "user cannot write a 0644 entry" "value is now $(ctl "$run" -n pub.val)" test "$(ctl "$run" -n pub.val)" = 1
	attack "user cannot read a 0600 entry" "it read it" \
		eval '! as_user "$cli" --socket "$run/control.sock" -n priv.val >/dev/null 2>&1'
	as_user "$cli" --socket "$run/control.sock" -q -w open.val=4 >/dev/null 2>&1
	attack "user may write a 0666 entry" "value is $(ctl "$run" -n open.val)" test "$(ctl "$run" -n open.val)" = 4
	as_user "$cli" --socket "$run/control.sock" -q -w kernel.modprobe=/tmp/evil >/dev/null 2>&1
	attack "user cannot point kernel.modprobe elsewhere" "it is $(ctl "$run" -n kernel.modprobe)" \
		test "$(ctl "$run" -n kernel.modprobe)" = /sbin/modprobe
	out=$(as_user "$rcusysd" -d "$run" -e "RUN /bin/true" 2>&1)
	attack "user cannot connect to the events socket" "got: $out" eval '[[ $out == *"Permission denied"* ]]'
	attack "events socket is 0600 root" "$(stat -c '%a %u' "$run/events.sock")" \
		test "$(stat -c '%a %u' "$run/events.sock")" = "600 0"
	attack "control socket is 0666 root" "$(stat -c '%a %u' "$run/control.sock")" \
		test "$(stat -c '%a %u' "$run/control.sock")" = "666 0"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	;;
fuse)
	run=$dir/f
	start "$run" -t "$dir/tunables.conf" || exit 1
	if ! mountpoint -q "$run/sys"; then
		echo "skip: the tree did not mount here: $(grep FUSE "$run.log")"
		stop "$pid" 30
		[ "${CI:-}" = true ] && { echo "failed: FUSE must work on CI as root"; exit 1; }
		exit 77
	fi
	attack "user reads a 0644 file" "got '$(as_user cat "$run/sys/pub/val" 2>&1)'" \
		test "$(as_user cat "$run/sys/pub/val" 2>&1)" = 1
	as_user sh -c "echo 9 > '$run/sys/pub/val'" 2>/dev/null
	attack "user cannot write a 0644 file" "value is now $(cat "$run/sys/pub/val")" test "$(cat "$run/sys/pub/val")" = 1
	attack "user cannot read a 0600 file" "it read it" eval '! as_user cat "$run/sys/priv/val" >/dev/null 2>&1'
	as_user sh -c "echo /tmp/evil > '$run/sys/kernel/modprobe'" 2>/dev/null
	attack "user cannot write kernel/modprobe" "it is $(cat "$run/sys/kernel/modprobe")" \
		test "$(cat "$run/sys/kernel/modprobe")" = /sbin/modprobe
	as_user sh -c "echo 4 > '$run/sys/open/val'" 2>/dev/null
	attack "user may write a 0666 file" "value is $(cat "$run/sys/open/val")" test "$(cat "$run/sys/open/val")" = 4
	attack "user cannot create files" "it did" eval '! as_user touch "$run/sys/pub/new" 2>/dev/null'
	stop "$pid" 30
	attack "clean exit, tree unmounted" "rc=$rc" eval '[ "$rc" = 0 ] && ! mountpoint -q "$run/sys"'
	;;
rundir)
	mkdir "$dir/target"
	echo secret > "$dir/victim"
	chmod 600 "$dir/victim"
	# try_start RUN [rcusysd args]: sets $rc ("started" if it did: then it is stopped).
	try_start() {
		local run=$1 p
		shift
		"$rcusysd" -d "$run" --no-persist "$@" > "$dir/refused.out" 2>&1 &
		p=$!
		if wait_for 20 gone "$p"; then
			wait "$p"
			rc=$?
		else
			kill -TERM "$p"
			wait "$p"
			rc=started
		fi
	}
	# refused NAME RUN EXPECTED-MESSAGE [rcusysd args]: it must exit 1 saying so.
	refused() {
		local name=$1 run=$2 msg=$3
		shift 3
		try_start "$run" "$@"
		if [ "$rc" = 1 ] && grep -qF -- "$msg" "$dir/refused.out"; then
			held "$name"
		else
			failed "$name" "rc=$rc, said: $(cat "$dir/refused.out")"
		fi
	}
	# A user-owned run directory, with symlinks where rcusysd makes things.
	mkdir "$dir/u"
	ln -s "$dir/target" "$dir/u/sys"
	ln -s "$dir/victim" "$dir/u/control.sock"
	chown -R "$nobody:$nobody" "$dir/u"
	refused "user-owned run dir refused" "$dir/u" "unsafe run directory $dir/u: it is owned by uid $nobody, not by us (uid 0)"
	# The race: the user swaps symlinks in while rcusysd starts, over and over.
	setpriv --reuid="$nobody" --regid="$nobody" --clear-groups sh -c "while :; do rm -f '$dir/u/control.sock' '$dir/u/events.sock';
		ln -s '$dir/victim' '$dir/u/control.sock'; ln -s '$dir/victim' '$dir/u/events.sock'; done" 2>/dev/null &
	swapper=$!
	starts=0
	for _ in $(seq 10); do
		try_start "$dir/u" --no-fuse
		[ "$rc" = 1 ] && grep -q "unsafe run directory" "$dir/refused.out" && starts=$((starts + 1))
	done
	kill "$swapper"
	wait "$swapper" 2>/dev/null
	attack "10 starts against a swapping user all refused" "$starts of 10 refused" test "$starts" = 10
	attack "the victim file keeps mode 0600" "mode $(stat -c %a "$dir/victim")" test "$(stat -c %a "$dir/victim")" = 600
	attack "nothing mounted over the symlink's target" "target is a mount point" eval '! mountpoint -q "$dir/target"'
	mkdir -m 777 "$dir/w"
	refused "world-writable run dir refused" "$dir/w" "it is writable by group or others (mode 0777)" --no-fuse
	mkdir -m 775 "$dir/g"
	refused "group-writable run dir refused" "$dir/g" "it is writable by group or others (mode 0775)" --no-fuse
	mkdir -m 777 "$dir/open"
	refused "run dir under a writable, non-sticky dir refused" "$dir/open/run" \
		"$dir/open is writable by group or others (mode 0777) and not sticky" --no-fuse
	mkdir -m 755 "$dir/real"
	ln -s "$dir/real" "$dir/link"
	refused "run dir that is a symlink refused" "$dir/link" "it is a symbolic link" --no-fuse
	# Root's own directory, but sys is not a directory of ours.
	mkdir -m 755 "$dir/s"
	ln -s "$dir/target" "$dir/s/sys"
	refused "symlink at RUN/sys refused" "$dir/s" "unsafe mount point $dir/s/sys: sys is a symbolic link"
	mkdir -m 755 "$dir/r"
	: > "$dir/r/sys"
	refused "regular file at RUN/sys refused (no mount over it)" "$dir/r" \
		"unsafe mount point $dir/r/sys: sys is not a directory"
	# The safe case still starts.
	mkdir -m 755 "$dir/ok"
	start "$dir/ok" --no-fuse || exit 1
	attack "a root-owned 0755 run dir serves" "events gave $(event "$dir/ok" "UEVENT a b c")" \
		test "$(event "$dir/ok" "UEVENT a b c")" = "OK 0"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	;;
sigterm)
	# Idle and half-line events clients alone must not hold the shutdown.
	run=$dir/i
	start "$run" --no-fuse || exit 1
	threads() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }
	base=$(threads "$pid")
	mkfifo "$dir/hold.in"
	"$helper" hold "$run/events.sock" 3 < "$dir/hold.in" > "$dir/hold.out" &
	holder=$!
	exec 7> "$dir/hold.in"
	"$helper" hold "$run/events.sock" 2 "MODULE half" < "$dir/hold.in" > "$dir/half.out" 7>&- &
	halfer=$!
	# Accepted: one thread each.
	wait_for 20 eval '[ "$(threads "$pid")" -ge $((base + 5)) ]'
	attack "5 clients connected and idle" "$(threads "$pid") threads, $base before" \
		test "$(threads "$pid")" -ge $((base + 5))
	stop "$pid" 30
	attack "SIGTERM with 5 idle/half-line events clients exits" "rc=$rc after ${took}s (hang guard 30 s)" test "$rc" = 0
	exec 7>&-
	wait "$holder" "$halfer"

	# Helpers and a supervised program that ignore SIGTERM, a core-pipe helper that never exits.
	run=$dir/h
	printf '#!/bin/sh\nexec %s stubborn %s/mod.pid\n' "$helper" "$dir" > "$dir/modprobe-stubborn"
	chmod 755 "$dir/modprobe-stubborn"
	start "$run" --no-fuse --stop-grace 1 || exit 1
	ctl "$run" -q -w "kernel.core_pattern=|$helper stubborn $dir/core.pid" "kernel.modprobe=$dir/modprobe-stubborn"
	out=$(event "$run" "RUN $helper stubborn $dir/run.pid")
	event "$run" "RUN $dir/crash" > /dev/null
	event "$run" "MODULE stuck" > /dev/null &
	client=$!
	wait_for 20 test -s "$dir/run.pid" -a -s "$dir/core.pid" -a -s "$dir/mod.pid"
	stubborn=$(cat "$dir/run.pid" "$dir/core.pid" "$dir/mod.pid" 2>/dev/null)
	attack "three stubborn children running" "RUN said $out; pids: $stubborn" test "$(echo $stubborn | wc -w)" = 3
	stop "$pid" 30
	attack "SIGTERM exits within the bound (grace 1 s: SIGTERM, SIGKILL, done)" \
		"rc=$rc after ${took}s (hang guard 30 s)" test "$rc" = 0
	echo "measured: exit ${took}s after SIGTERM with --stop-grace 1"
	left=""
	for p in $stubborn; do alive "$p" && left="$left $p"; done
	attack "no stubborn child left running" "still running:$left" test -z "$left"
	for p in $left; do kill -KILL "$p"; done
	attack "the kill is logged" "log: $(tail -3 "$run.log")" grep -q "outlived the 1 s grace period: killed" "$run.log"
	attack "sockets removed" "left: $(ls "$run")" eval '[ ! -e "$run/events.sock" ] && [ ! -e "$run/control.sock" ]'
	wait "$client" 2>/dev/null
	;;
signals)
	# SIGPIPE: stderr is a pipe whose reader went away.
	run=$dir/p
	mkfifo "$dir/err.fifo"
	head -n 1 < "$dir/err.fifo" > /dev/null &
	reader=$!
	"$rcusysd" -d "$run" --no-fuse --no-persist 2> "$dir/err.fifo" &
	pid=$!
	daemons+=("$pid")
	wait_for 20 test -S "$run/events.sock"
	ctl "$run" -q -w "kernel.modprobe=$dir/modprobe-ok"
	wait "$reader"
	for _ in 1 2 3; do event "$run" "MODULE x" > /dev/null; done # each logs a line into the dead pipe
	attack "SIGPIPE on stderr does not kill the daemon" "it died" alive "$pid"
	attack "it still serves after EPIPE" "got $(event "$run" "UEVENT a b c" 2>&1)" test "$(event "$run" "UEVENT a b c")" = "OK 0"
	stop "$pid" 30
	attack "clean exit after EPIPE" "rc=$rc" test "$rc" = 0
	attack "sockets removed" "left: $(ls "$run")" eval '[ ! -e "$run/events.sock" ]'

	# SIGCHLD ignored by whoever started us.
	run=$dir/c
	"$helper" exec -i 17 -- "$rcusysd" -d "$run" --no-fuse --no-persist 2> "$run.log" &
	pid=$!
	daemons+=("$pid")
	wait_for 20 test -S "$run/events.sock"
	ctl "$run" -q -w "kernel.modprobe=$dir/modprobe-ok" "kernel.core_pattern=crash.%p"
	out=$(event "$run" "MODULE foo")
	attack "SIGCHLD ignored at start: MODULE gets its status" "got: $out" test "$out" = "OK 0"
	out=$(event "$run" "RUN $dir/crash")
	crashed=${out#OK }
	wait_for 20 test -e "$run/crash.$crashed"
	attack "SIGCHLD ignored at start: a crash leaves a record" "RUN said $out; log: $(tail -2 "$run.log")" \
		test -e "$run/crash.$crashed"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0

	# What a supervised program inherits: started with stray descriptors open.
	run=$dir/k
	"$rcusysd" -d "$run" --no-fuse --no-persist 2> "$run.log" 8< /dev/null 9> "$dir/stray" &
	pid=$!
	daemons+=("$pid")
	wait_for 20 test -S "$run/events.sock"
	event "$run" "RUN $helper show $dir/show.out" > /dev/null
	wait_for 20 grep -q "^fds:" "$dir/show.out"
	attack "supervised program: empty signal mask" "$(grep SigBlk "$dir/show.out")" \
		grep -q "^SigBlk:[[:space:]]*0*$" "$dir/show.out"
	# glibc's posix_spawn leaves its two internal signals (32, 33) ignored in
	# every child it makes; the program's own C library takes them back.
	ign=$(awk '/^SigIgn:/ { print $2 }' "$dir/show.out")
	attack "supervised program: no ignored signals" "SigIgn: $ign" \
		test $((16#${ign:-1} & ~0x180000000)) = 0
	attack "supervised program: no descriptor beyond stderr" "$(grep fds "$dir/show.out")" \
		grep -qx "fds:" "$dir/show.out"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	;;
fds)
	# The events connection cap.
	run=$dir/n
	start "$run" --no-fuse || exit 1
	threads() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }
	base=$(threads "$pid")
	mkfifo "$dir/hold.in"
	"$helper" hold "$run/events.sock" 40 < "$dir/hold.in" > "$dir/hold.out" &
	holder=$!
	exec 7> "$dir/hold.in"
	wait_for 20 grep -q connected "$dir/hold.out"
	out=$(event "$run" "UEVENT a b c")
	attack "events connections are capped (the 41st is told EAGAIN)" "got: $out" \
		test "$out" = "ERR 11 Resource temporarily unavailable"
	attack "threads stay within the cap" "$(threads "$pid") threads, $base at start" \
		test "$(threads "$pid")" -le $((base + 32))
	exec 7>&-
	wait "$holder"
	# A line started and never finished (5 s allowed) must not hold its thread.
	wait_for 20 eval '[ "$(threads "$pid")" -le "$base" ]' # the 40 above are gone
	"$helper" hold "$run/events.sock" 1 "MODULE never-ends" < "$dir/hold.in" > "$dir/slow.out" &
	holder=$!
	exec 7> "$dir/hold.in"
	wait_for 20 eval '[ "$(threads "$pid")" -gt "$base" ]'
	wait_for 20 eval '[ "$(threads "$pid")" -le "$base" ]'
	attack "a slow client's unfinished line is dropped" "$(threads "$pid") threads, $base without clients" \
		test "$(threads "$pid")" -le "$base"
	exec 7>&-
	wait "$holder"
	wait_for 20 eval '[ "$(event "$run" "UEVENT a b c")" = "OK 0" ]'
	attack "served again once they leave" "got: $(event "$run" "UEVENT a b c")" test "$(event "$run" "UEVENT a b c")" = "OK 0"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0

	# Out of descriptors: a pending events connection must not make the acceptor spin.
	run=$dir/m
	(ulimit -n 24 && exec "$rcusysd" -d "$run" --no-fuse --no-persist 2> "$run.log") &
	pid=$!
	daemons+=("$pid")
	wait_for 20 test -S "$run/events.sock" || { cat "$run.log"; exit 1; }
	nfds() { ls "/proc/$1/fd" | wc -l; }
	"$helper" hold "$run/control.sock" 30 < "$dir/hold.in" > "$dir/ctl.out" &
	holder=$!
	exec 7> "$dir/hold.in"
	wait_for 20 grep -q connected "$dir/ctl.out"
	# Every descriptor taken before the events connections arrive.
	wait_for 20 eval '[ "$(nfds "$pid")" -ge 24 ]'
	"$helper" hold "$run/events.sock" 2 < "$dir/hold.in" > "$dir/ev.out" 7>&- &
	holder2=$!
	wait_for 20 grep -q connected "$dir/ev.out"
	fds=$(nfds "$pid")
	cpu() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
	t0=$(date +%s%N) c0=$(cpu "$pid")
	sleep 2
	t1=$(date +%s%N) c1=$(cpu "$pid")
	hz=$(getconf CLK_TCK)
	wall_ticks=$(((t1 - t0) * hz / 1000000000))
	echo "measured: $((c1 - c0)) CPU ticks in $wall_ticks ticks of wall time with $fds of 24 descriptors open"
	attack "no busy loop when descriptors run out" "$((c1 - c0)) CPU ticks in $wall_ticks (more than a quarter)" \
		test $(((c1 - c0) * 4)) -lt "$wall_ticks"
	exec 7>&-
	wait "$holder" "$holder2"
	wait_for 20 eval '[ "$(event "$run" "UEVENT a b c")" = "OK 0" ]'
	attack "served again once descriptors are free" "got: $(event "$run" "UEVENT a b c" 2>&1)" \
		test "$(event "$run" "UEVENT a b c")" = "OK 0"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	;;
flood)
	run=$dir/r
	start "$run" --no-fuse || exit 1
	out=$("$helper" flood "$run/events.sock" 300 "RUN /bin/true")
	attack "300 RUN events on one connection all answered with a pid ($build build)" "$out" \
		test "$out" = "ok 300 of 300"
	attack "the daemon survived" "it died; log: $(tail -5 "$run.log")" alive "$pid"
	stop "$pid" 60
	attack "clean exit" "rc=$rc" test "$rc" = 0
	attack "no sanitizer report" "$(grep -m3 -E 'Sanitizer|runtime error' "$run.log")" \
		eval '! grep -qE "Sanitizer|runtime error" "$run.log"'
	;;
*)
	echo "unknown group $group"
	exit 2
	;;
esac
echo "attack-$group: $nheld held, $nfailed failed"
[ "$nfailed" = 0 ]
