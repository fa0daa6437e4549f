#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Attacks on a root rcusysd, one group per run:
#   access   a local user (uid 65534) against the control and events sockets,
#            10 000 refused writes counted and not logged one by one
#   fuse     the same user against the mounted tree
#   rundir   user-owned or writable run directories, symlinks at sys and at the
#            socket names (rcusysd must refuse to start)
#   sigterm  SIGTERM with idle and half-line events clients, a program and
#            helpers that ignore SIGTERM, a core-pipe helper that never exits
#   signals  SIGPIPE from a closed stderr, SIGCHLD ignored at start, what a
#            supervised program inherits
#   fds      ulimit -n exhaustion (no busy loop), the events connection cap
#   flood    many RUN events on one connection (ASan catches a use-after-free)
#   state    the state file: a user's directory, a FIFO or symlink at its name or
#            at the old temporary name, two daemons on one file, the default path
#   durable  acknowledged writes on a full disk, a 64 KiB value across a restart
#   owner    --owner against the entries root executes; exec= tunables' modes
#   opens    one user's FUSE opens against the per-uid cap and root's reserve;
#            files, directories, pollers, connections and watches share it;
#            STATUS and METRICS show who holds them (10 uids at most)
#   small    SETIF's malformed path, a poller on an entry removed at reload
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
	for m in "$dir"/*/sys "$dir"/target "$dir"/full; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
	rm -rf "$dir"
}
trap cleanup EXIT

. "$(dirname "$0")/attack_lib.sh"
dead() { ! kill -0 "$1" 2>/dev/null; }
gone() { ! alive "$1"; }

# ready PID LOG RUN_DIR: until the daemon PID says in LOG that it serves RUN_DIR
# (its "ready:" line, written once both sockets listen), and is still alive.
# A socket file an earlier daemon left in RUN_DIR, or a daemon that died, is
# not readiness. Status 1 after the hang guard or when it is gone.
said_ready() { grep -qF "rcusysd: ready: control socket $3/control.sock," "$2" 2>/dev/null; }
ready_or_gone() { said_ready "$@" || gone "$1"; }
ready() { wait_for 20 ready_or_gone "$@" && alive "$1" && said_ready "$@"; }
# start RUN_DIR [rcusysd args...]: starts a daemon; sets $pid; log in RUN_DIR.log.
start() {
	local run=$1
	shift
	# Emptied here, not by the daemon's redirection: that one runs in the
	# child, after ready() may have read an earlier daemon's "ready:" line.
	: > "$run.log"
	"$rcusysd" -d "$run" --no-persist "$@" 2> "$run.log" &
	pid=$!
	daemons+=("$pid")
	if ! ready "$pid" "$run.log" "$run"; then
		echo "rcusysd did not start (pid $pid $(alive "$pid" && echo alive || echo gone)); its log:"
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
# hold NAME HELPER-ARGS...: the user runs the attack helper, which keeps what it
# took until release NAME; its report ("opened K of N", "served K of N") is in
# $dir/NAME.out. Past 8192 descriptors the helper's own limit would answer.
hold() {
	local name=$1 fd
	shift
	rm -f "$dir/$name.in" "$dir/$name.out"
	mkfifo "$dir/$name.in"
	# Not the other holders' ends of their FIFOs: they would never see their EOF.
	(for v in ${!holdfd_@}; do eval "exec ${!v}>&-"; done
	 ulimit -n 8192 && exec setpriv --reuid="$nobody" --regid="$nobody" --clear-groups \
		"$helper" "$@" < "$dir/$name.in" > "$dir/$name.out") &
	eval "holder_$name=$!"
	exec {fd}> "$dir/$name.in"
	eval "holdfd_$name=$fd"
	wait_for 60 grep -qE '^(opened|served)' "$dir/$name.out"
}
release() {
	local fd=holdfd_$1 p=holder_$1
	eval "exec ${!fd}>&-"
	unset "holdfd_$1"
	wait "${!p}"
}
# hold_until NAME K HELPER-ARGS...: hold, again while it took fewer than K: what
# an earlier holder closed is given back when the kernel's RELEASE or the
# connection's end reaches the daemon, a moment after close(). More than K is
# left to the caller's check.
hold_until() {
	local name=$1 want=$2 tries=50
	shift 2
	while hold "$name" "$@"; [ "$(awk '{ print $2 }' "$dir/$name.out")" -lt "$want" ] &&
		[ $((tries -= 1)) -gt 0 ]; do
		release "$name"
		sleep 0.1
	done
	echo "measured: $name: $(cat "$dir/$name.out")"
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

# budget_by_uid RUN: while the user holds 1020 files and 4 connections, 15
# more uids connect once each: STATUS and METRICS show who holds the
# handles, the user first, then the uids holding one (root's own query
# among them) by uid, 10 uids at most of the 17; to one of those uids,
# its own line alone.
budget_by_uid() {
	local run=$1 u fd st top pids=()
	rm -f "$dir/many.in" "$dir"/many.*.out
	mkfifo "$dir/many.in"
	for u in $(seq 70001 70015); do
		setpriv --reuid="$u" --regid="$u" --clear-groups "$helper" hold "$run/control.sock" 1 \
			< "$dir/many.in" > "$dir/many.$u.out" &
		pids+=($!)
	done
	exec {fd}> "$dir/many.in"
	wait_for 30 eval '[ "$(ctl "$run" --status | grep "^budget.uids:")" = "budget.uids: 17" ]'
	st=$(ctl "$run" --status)
	top=$(printf '%s\n' "$st" | grep '^budget\.uid\.' | paste -sd' ')
	attack "STATUS lists the user first with its 1024 handles and units" "$top" \
		eval '[[ $top == "budget.uid.$nobody.handles: 1024 budget.uid.$nobody.units: 1024 budget.uid.0.handles: 1 "* ]]'
	attack "STATUS lists 10 uids of the 17, ties by uid" "$top" \
		eval '[ "$(printf "%s\n" "$st" | grep -c "^budget\.uid\..*\.handles:")" = 10 ] &&
			[[ $top == *"budget.uid.70008.units: 1" ]]'
	ctl "$run" --metrics > "$dir/many.metrics"
	attack "METRICS gives handles and units by uid, 10 uids" "$(grep uid= "$dir/many.metrics" | head -3)" \
		eval 'grep -qx "rcusysd_budget_uid_handles{uid=\"$nobody\"} 1024" "$dir/many.metrics" &&
			grep -qx "rcusysd_budget_uid_units{uid=\"$nobody\"} 1024" "$dir/many.metrics" &&
			grep -qx "rcusysd_budget_uids 17" "$dir/many.metrics" &&
			[ "$(grep -c "^rcusysd_budget_uid_handles{" "$dir/many.metrics")" = 10 ]'
	# A non-root asker sees its own uid's line alone, and the totals.
	st=$(setpriv --reuid=70003 --regid=70003 --clear-groups "$cli" --socket "$run/control.sock" --status)
	top=$(printf '%s\n' "$st" | grep '^budget\.uid' | paste -sd' ')
	attack "STATUS shows a non-root user its own uid alone" "$top" \
		eval '[[ $top == "budget.uids: 1"[67]" budget.uid.70003.handles: 2 budget.uid.70003.units: "[0-9]* ]] &&
			[ "$(printf "%s\n" "$st" | grep -c "^budget\.uid\.")" = 2 ] &&
			printf "%s\n" "$st" | grep -q "^budget\.units_others: "'
	setpriv --reuid=70003 --regid=70003 --clear-groups "$cli" --socket "$run/control.sock" --metrics \
		> "$dir/own.metrics"
	attack "METRICS shows a non-root user its own uid alone" "$(grep uid= "$dir/own.metrics")" \
		eval '[ "$(grep -c "^rcusysd_budget_uid_[a-z]*{" "$dir/own.metrics")" = 2 ] &&
			grep -q "^rcusysd_budget_uid_handles{uid=\"70003\"} 2$" "$dir/own.metrics" &&
			grep -q "^rcusysd_budget_uids 1[67]$" "$dir/own.metrics"'
	exec {fd}>&-
	wait "${pids[@]}"
}

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
	# A loop of refused writes: each counted, none costs the log a line each.
	eacces() { ctl "$run" --metrics | awk '$1 == "rcustring_writes_refused_total{errno=\"EACCES\"}" { print $2 }'; }
	before=$(eacces)
	out=$(as_user "$helper" flood "$run/control.sock" 10000 "SET pub.val 9")
	after=$(eacces)
	attack "10 000 refused socket writes are all counted" "$out; EACCES $before -> $after" \
		test "$((after - ${before:-0}))" = 10000
	attack "10 000 refused socket writes leave the log small" "$(grep -c pub.val "$run.log") lines" \
		test "$(grep -c pub.val "$run.log")" -le 11
	# A writer of an entry may reset it: a loop of resets answers each, and
	# the log keeps a burst of their lines and a count of the rest.
	before=$(grep -c open.val "$run.log")
	out=$(as_user "$helper" flood "$run/control.sock" 2000 "RESET open.val")
	attack "2 000 resets by a user are all answered" "$out" eval '[[ $out == "ok 2000 of 2000" ]]'
	attack "2 000 resets by a user leave the log small" "$(($(grep -c open.val "$run.log") - before)) lines" \
		test "$(($(grep -c open.val "$run.log") - before))" -le 30
	out=$(as_user "$rcusysd" -d "$run" -e "RUN /bin/true" 2>&1)
	attack "user cannot connect to the events socket" "got: $out" eval '[[ $out == *"Permission denied"* ]]'
	attack "events socket is 0600 root" "$(stat -c '%a %u' "$run/events.sock")" \
		test "$(stat -c '%a %u' "$run/events.sock")" = "600 0"
	attack "control socket is 0666 root" "$(stat -c '%a %u' "$run/control.sock")" \
		test "$(stat -c '%a %u' "$run/control.sock")" = "666 0"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	# Every reset is in the log, as its line or in a suppressed count (the
	# last count written at exit).
	resets=$(($(grep -c "reset open.val to" "$run.log") + $(awk '/reset lines: [0-9]+ similar messages suppressed/ {
		for (i = 1; i < NF; i++) if ($i == "lines:") n += $(i + 1) } END { print n + 0 }' "$run.log")))
	attack "2 000 resets are each logged or counted" "$resets" test "$resets" = 2000
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
	# Its log goes into the pipe: a fresh run directory, so a socket file there
	# is its own, and it appears only once it listens (events.sock last).
	wait_for 20 eval 'test -S "$run/events.sock" || gone "$pid"'
	alive "$pid" || { echo "rcusysd did not start"; exit 1; }
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
	: > "$run.log"
	"$helper" exec -i 17 -- "$rcusysd" -d "$run" --no-fuse --no-persist 2> "$run.log" &
	pid=$!
	daemons+=("$pid")
	ready "$pid" "$run.log" "$run" || { cat "$run.log"; exit 1; }
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
	: > "$run.log"
	"$rcusysd" -d "$run" --no-fuse --no-persist 2> "$run.log" 8< /dev/null 9> "$dir/stray" &
	pid=$!
	daemons+=("$pid")
	ready "$pid" "$run.log" "$run" || { cat "$run.log"; exit 1; }
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
	: > "$run.log"
	(ulimit -n 24 && exec "$rcusysd" -d "$run" --no-fuse --no-persist 2> "$run.log") &
	pid=$!
	daemons+=("$pid")
	ready "$pid" "$run.log" "$run" || { cat "$run.log"; exit 1; }
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
state)
	# try_start NAME [rcusysd args]: like rundir's; sets $rc ("started": then stopped).
	try_start() {
		local p
		"$rcusysd" "$@" > "$dir/try.out" 2>&1 &
		p=$!
		daemons+=("$p")
		if wait_for 20 gone "$p"; then
			wait "$p"
			rc=$?
		else
			kill -TERM "$p"
			wait_for 20 gone "$p" || kill -KILL "$p"
			wait "$p"
			rc=started
		fi
	}
	refused() {
		local name=$1 msg=$2
		shift 2
		try_start "$@"
		if [ "$rc" = 1 ] && grep -qF -- "$msg" "$dir/try.out"; then
			held "$name"
		else
			failed "$name" "rc=$rc, said: $(head -c 600 "$dir/try.out")"
		fi
	}
	printf '#!/bin/sh\nid -u > %s/pwned\n' "$dir" > "$dir/evil"
	chmod 755 "$dir/evil"
	# A state directory the user can write: a planted file must not be applied.
	mkdir -m 755 "$dir/us"
	chown "$nobody:$nobody" "$dir/us"
	as_user sh -c "echo 'kernel.modprobe = $dir/evil' > '$dir/us/state.conf'"
	"$rcusysd" -d "$dir/r0" --no-fuse -s "$dir/us/state.conf" > "$dir/try.out" 2>&1 &
	pid=$!
	daemons+=("$pid")
	wait_for 20 ready_or_gone "$pid" "$dir/try.out" "$dir/r0"
	alive "$pid" && event "$dir/r0" "MODULE foo" > /dev/null
	attack "a planted state file's helper never runs as root" "it ran as uid $(cat "$dir/pwned" 2>/dev/null)" \
		test ! -e "$dir/pwned"
	if alive "$pid"; then
		stop "$pid" 30
		failed "state directory owned by a user refused" "it started; said: $(head -c 300 "$dir/try.out")"
	else
		wait "$pid"
		rc=$?
		attack "state directory owned by a user refused" "rc=$rc, said: $(cat "$dir/try.out")" \
			eval '[ "$rc" = 1 ] && grep -qF "unsafe state directory $dir/us: it is owned by uid $nobody" "$dir/try.out"'
	fi
	mkdir -m 777 "$dir/ws"
	refused "world-writable state directory refused" "unsafe state directory $dir/ws: it is writable by group or others (mode 0777)" \
		-d "$dir/r1" --no-fuse -s "$dir/ws/state.conf"
	# A FIFO or a symlink where the state file goes.
	mkdir -m 755 "$dir/fs" "$dir/ls"
	mkfifo "$dir/fs/state.conf"
	refused "a FIFO at the state file refused (no hang)" "state file $dir/fs/state.conf: not a regular file" \
		-d "$dir/r1" --no-fuse -s "$dir/fs/state.conf"
	echo 'kernel.modprobe = /x' > "$dir/victim"
	ln -s "$dir/victim" "$dir/ls/state.conf"
	refused "a symlink at the state file refused" "state file $dir/ls/state.conf: a symbolic link" \
		-d "$dir/r1" --no-fuse -s "$dir/ls/state.conf"
	# A FIFO at the old fixed temporary name, planted while it runs.
	mkdir -m 755 "$dir/ts"
	start "$dir/r2" --no-fuse -t "$dir/tunables.conf" -s "$dir/ts/state.conf" || exit 1
	mkfifo "$dir/ts/.state.conf.tmp"
	timeout 20 "$cli" --socket "$dir/r2/control.sock" -q -w pub.val=5 > /dev/null 2>&1
	attack "a FIFO at .state.conf.tmp does not hang a write" "write rc=$? (124: hung 20 s)" \
		eval '"$cli" --kept="$dir/ts/state.conf" | cut -f1 | grep -qx "pub.val = 5"' 
	# Two daemons never share a state file.
	refused "a second daemon on the same state file refused" "state file $dir/ts/state.conf: in use by another rcusysd" \
		-d "$dir/r3" --no-fuse -s "$dir/ts/state.conf"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	# The default state file follows --run-dir; /var/lib is a private tmpfs here,
	# so an old binary that writes there writes nowhere that lasts.
	unshare -m --propagation private sh -c \
		"mount -t tmpfs rcusysd-test /var/lib && exec '$rcusysd' -d '$dir/r4' --no-fuse -t '$dir/tunables.conf'" \
		2> "$dir/r4.log" &
	pid=$!
	daemons+=("$pid")
	ready "$pid" "$dir/r4.log" "$dir/r4" || { cat "$dir/r4.log"; exit 1; }
	ctl "$dir/r4" -q -w pub.val=7
	attack "the default state file is RUN/state.conf" "RUN has: $(ls -A "$dir/r4")" \
		eval '"$cli" --kept="$dir/r4/state.conf" | cut -f1 | grep -qx "pub.val = 7"' 
	sys=$(nsenter -t "$pid" -m sh -c 'ls -A /var/lib/rcusysd 2>/dev/null')
	attack "a --run-dir instance leaves /var/lib/rcusysd alone" "it wrote: $sys" test -z "$sys"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	;;
durable)
	cat >> "$dir/tunables.conf" <<-'EOT'
	big.val string maxlen=65536 default=small
	EOT
	# A full file system under the state directory.
	mkdir -m 755 "$dir/full"
	mount -t tmpfs -o size=256k,mode=0755 rcusysd-test "$dir/full" || exit 1
	run=$dir/d
	start "$run" -t "$dir/tunables.conf" -s "$dir/full/state.conf" || exit 1
	dd if=/dev/zero of="$dir/full/fill" bs=4k 2> /dev/null
	# The journal's last block may still take a few records: write until one is refused.
	acked=none out=
	for v in $(seq 5 3000); do
		out=$(ctl "$run" -w pub.val=$v 2>&1) || break
		acked=$v
	done
	attack "SET on a full disk is refused" "it said: $out (last acknowledged $acked)" \
		eval '[[ $out == *"No space left on device"* ]]'
	attack "the refused SET leaves the value" "value is $(ctl "$run" -n pub.val), acknowledged $acked" \
		test "$(ctl "$run" -n pub.val)" = "$acked"
	if mountpoint -q "$run/sys"; then
		out=$(bash -c "echo 8 > '$run/sys/pub/val'" 2>&1)
		attack "FUSE write on a full disk is refused" "it said: '$out'" eval '[[ $out == *"No space left on device"* ]]'
		attack "the refused FUSE write leaves the value" "value is $(ctl "$run" -n pub.val)" \
			test "$(ctl "$run" -n pub.val)" = "$acked"
	else
		failed "the tree did not mount" "$(grep FUSE "$run.log")"
	fi
	rm -f "$dir/full/fill"
	# The largest value a string tunable holds survives a restart.
	big=$(head -c 49149 /dev/zero | tr '\0' 'x')abc
	printf '%s' "$big" > "$run/sys/big/val"
	stop "$pid" 30
	start "$run" -t "$dir/tunables.conf" -s "$dir/full/state.conf" || exit 1
	got=$(cat "$run/sys/big/val")
	attack "a 48 KiB value survives a restart" "got ${#got} bytes back; log: $(grep -m1 state "$run.log")" \
		test "$got" = "$big"
	big=$(head -c 65535 /dev/zero | tr '\0' 'y')
	printf '%s' "$big" > "$run/sys/big/val"
	stop "$pid" 30
	start "$run" -t "$dir/tunables.conf" -s "$dir/full/state.conf" || exit 1
	got=$(cat "$run/sys/big/val")
	attack "a 65535-byte value (maxlen 65536) survives a restart" "got ${#got} bytes back" test "$got" = "$big"
	attack "pub.val came back too: the last acknowledged value, not a refused one" \
		"got $(ctl "$run" -n pub.val), acknowledged $acked" test "$(ctl "$run" -n pub.val)" = "$acked"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	;;
owner)
	printf '#!/bin/sh\nid -u > %s/pwned\n' "$dir" > "$dir/evil"
	chmod 755 "$dir/evil"
	run=$dir/o
	start "$run" --no-fuse -t "$dir/tunables.conf" --owner "$nobody:$nobody" || exit 1
	as_user "$cli" --socket "$run/control.sock" -q -w pub.val=9 > /dev/null 2>&1
	attack "the owner writes a 0644 entry" "value is $(ctl "$run" -n pub.val)" test "$(ctl "$run" -n pub.val)" = 9
	for e in kernel.modprobe kernel.core_pattern kernel.poweroff_cmd kernel.hotplug fs.ocfs2.nm.hb_ctl_path; do
		before=$(ctl "$run" -n "$e")
		as_user "$cli" --socket "$run/control.sock" -q -w "$e=$dir/evil" > /dev/null 2>&1
		attack "the owner cannot write $e" "it is $(ctl "$run" -n "$e")" test "$(ctl "$run" -n "$e")" = "$before"
	done
	event "$run" "MODULE foo" > /dev/null
	attack "the owner's program never ran as root" "it ran as uid $(cat "$dir/pwned" 2>/dev/null)" test ! -e "$dir/pwned"
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	# A tunable root executes may not be given a wider mode.
	echo 'app.helper string maxlen=256 default=/bin/true exec=yes mode=0666' > "$dir/exec.conf"
	out=$(timeout 20 "$rcusysd" -d "$dir/o2" --no-fuse --no-persist -t "$dir/exec.conf" 2>&1)
	attack "a tunables file giving an exec entry mode 0666 is refused" "rc=$?, said: $out" \
		eval '[[ $out == *"an entry root executes is written by root alone (mode 0666"* ]]'
	echo 'app.helper string maxlen=256 default=/bin/true exec=yes' > "$dir/exec.conf"
	start "$dir/o3" --no-fuse -t "$dir/exec.conf" --owner "$nobody:$nobody" || exit 1
	as_user "$cli" --socket "$dir/o3/control.sock" -q -w "app.helper=$dir/evil" > /dev/null 2>&1
	attack "the owner cannot write an exec=yes tunable" "it is $(ctl "$dir/o3" -n app.helper)" \
		test "$(ctl "$dir/o3" -n app.helper)" = /bin/true
	ctl "$dir/o3" -q -w "app.helper=/bin/false"
	attack "root still writes it" "it is $(ctl "$dir/o3" -n app.helper)" test "$(ctl "$dir/o3" -n app.helper)" = /bin/false
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	;;
opens)
	run=$dir/fo
	start "$run" -t "$dir/tunables.conf" || exit 1
	if ! mountpoint -q "$run/sys"; then
		echo "skip: the tree did not mount here: $(grep FUSE "$run.log")"
		stop "$pid" 30
		[ "${CI:-}" = true ] && { echo "failed: FUSE must work on CI as root"; exit 1; }
		exit 77
	fi
	mkfifo "$dir/hold.in"
	(ulimit -n 8192 && exec setpriv --reuid="$nobody" --regid="$nobody" --clear-groups \
		"$helper" opens "$run/sys/pub/val" 3000 < "$dir/hold.in" > "$dir/opens.out") &
	holder=$!
	exec 7> "$dir/hold.in"
	wait_for 60 grep -q opened "$dir/opens.out"
	out=$(cat "$dir/opens.out")
	echo "measured: $out"
	n=$(awk '{ print $2 }' "$dir/opens.out")
	attack "one user's FUSE opens are capped at 1024" "$out" test "${n:-0}" = 1024
	attack "the refused opens say EMFILE" "$out" eval '[[ $out == *"first error: Too many open files" ]]'
	attack "root still opens while the user holds its share" "got '$(cat "$run/sys/pub/val" 2>&1)'" \
		test "$(cat "$run/sys/pub/val" 2>&1)" = 1
	exec 7>&-
	wait "$holder"
	wait_for 20 eval '[ "$(as_user cat "$run/sys/pub/val" 2>/dev/null)" = 1 ]'
	attack "the user opens again once it closed" "got '$(as_user cat "$run/sys/pub/val" 2>&1)'" \
		test "$(as_user cat "$run/sys/pub/val" 2>&1)" = 1
	# One budget (1024 units for the user): what it holds of one kind is
	# what it cannot hold of another. A connection costs a unit, a WATCH
	# one more, a poller one more than its file.
	hold_until files 1020 opens "$run/sys/pub/val" 1020
	hold_until conns 4 conns "$run/control.sock" 16 "GET pub.val"
	attack "1020 FUSE files leave the user 4 socket connections" "$(cat "$dir/conns.out")" \
		grep -q "^served 4 of 16; first refusal: ERR 11 EAGAIN too many clients of uid $nobody" "$dir/conns.out"
	attack "root is still served on the socket and the mount" "got '$(ctl "$run" -n pub.val 2>&1)'" \
		test "$(ctl "$run" -n pub.val 2>&1)$(cat "$run/sys/pub/val" 2>&1)" = 11
	budget_by_uid "$run"
	release files
	release conns
	hold_until watches 8 conns "$run/control.sock" 8 "WATCH pub.val"
	hold_until files 1008 opens "$run/sys/pub/val" 1024
	attack "8 watches (a connection and a watch each) leave 1008 files" "$(cat "$dir/files.out")" \
		grep -q "^opened 1008 of 1024; first error: Too many open files" "$dir/files.out"
	release files
	release watches
	hold_until polls 400 polls "$run/sys/pub/val" 400
	hold_until dirs 224 opendirs "$run/sys/pub" 1024
	attack "400 polled files (a file and a poller each) leave 224 directories" "$(cat "$dir/dirs.out")" \
		grep -q "^opened 224 of 1024; first error: Too many open files" "$dir/dirs.out"
	release dirs
	release polls
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	;;
small)
	run=$dir/sm
	cp "$dir/tunables.conf" "$dir/reload.conf"
	start "$run" -t "$dir/reload.conf" || exit 1
	out=$("$helper" flood "$run/control.sock" 1 "SET a..b 1")
	out2=$("$helper" flood "$run/control.sock" 1 "SETIF a..b 1 1")
	attack "SETIF answers a malformed path as SET does" "SET: $out; SETIF: $out2" \
		eval '[[ $out == *"ERR 22"* && $out2 == *"ERR 22"* ]]'
	if mountpoint -q "$run/sys"; then
		"$helper" pollwait "$run/sys/open/val" 20 > "$dir/poll.out" &
		poller=$!
		wait_for 20 grep -q polling "$dir/poll.out"
		grep -v '^open.val' "$dir/tunables.conf" > "$dir/reload.conf"
		kill -HUP "$pid"
		wait "$poller"
		attack "a poller on an entry removed at reload wakes" "it said: $(tail -1 "$dir/poll.out")" \
			grep -qx woke "$dir/poll.out"
	else
		failed "the tree did not mount" "$(grep FUSE "$run.log")"
	fi
	stop "$pid" 30
	attack "clean exit" "rc=$rc" test "$rc" = 0
	;;
*)
	echo "unknown group $group"
	exit 2
	;;
esac
echo "attack-$group: $nheld held, $nfailed failed"
[ "$nfailed" = 0 ]
