#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysctl applies as root's settings only what rcusysd itself would apply
# (rcusysctl(8), FILES; the 4th attack campaign's finding 1): run by root,
# --system and -p read their files through the one file check rcusysd's
# own settings go through, refuse a file in a world-writable directory, a
# symbolic link and a FIFO in the same words as rcusysd's log ("PATH:
# refused: WHY (skipped)"), never block on a FIFO, and still apply the
# good files; so no user's file sets kernel.modprobe and no user's program
# runs as root. A user's -p is that user's write: refused where the user
# may not write, kept where the user may. Each case prints "held: NAME" or
# "failed: NAME (why)"; waits are hang guards, never timing assertions.
set -u
usage="usage: test_cli_trust.sh RCUSYSD RCUSYSCTL"
rcusysd=${1:?$usage} cli=${2:?$usage}
nobody=65534
nheld=0 nfailed=0

if [ "$(id -u)" != 0 ]; then
	echo "skip: rcusysctl's file check as root needs root (files owned by another user, setpriv)"
	exit 77
fi
. "$(dirname "$0")/attack_lib.sh"
attack_workdir
said_ready() { grep -qF "rcusysd: ready: control socket $2/control.sock," "$1" 2>/dev/null; }
ready_or_gone() { said_ready "$2" "$3" || ! alive "$1"; }
# start RUN LOG [rcusysd args...]: sets $pid; 1 if it did not say ready (a hang guard of 20 s).
start() {
	local run=$1 log=$2
	shift 2
	: > "$log"
	"$rcusysd" -d "$run" --no-fuse "$@" 2> "$log" &
	pid=$!
	pids+=("$pid")
	wait_for 20 ready_or_gone "$pid" "$log" "$run" && alive "$pid" && said_ready "$log" "$run"
}
stop() { kill -TERM "$1" && wait_for 30 eval "! kill -0 $1 2>/dev/null"; wait "$1" 2>/dev/null; }
# ctl ARGS...: rcusysctl as root on the daemon's socket, a hang guard of 10 s (rc 124: it hung).
ctl() { timeout 10 "$cli" --socket "$run/control.sock" "$@"; }
# has TEXT FILE: FILE holds the line TEXT (fixed string).
has() { grep -qxF -- "$1" "$2"; }

# The redteam's layout: a world-writable directory holding nobody's file
# that points kernel.modprobe at a program of its choosing; a root-owned
# directory holding a FIFO and a link to a file outside; a good directory.
printf '#!/bin/sh\nid -u > %s/pwned\n' "$dir" > "$dir/evil"
chmod 755 "$dir/evil"
mkdir -m 1777 "$dir/open"
mkdir -m 755 "$dir/root" "$dir/good" "$dir/outside" "$dir/user"
as_user sh -c "echo 'kernel.modprobe = $dir/evil' > '$dir/open/50-evil.conf'"
echo "kernel.modprobe = $dir/evil" > "$dir/outside/x.conf"
ln -s "$dir/outside/x.conf" "$dir/root/20-link.conf"
mkfifo -m 644 "$dir/root/10-fifo.conf"
printf 'good.val = 2\n' > "$dir/good/90-good.conf"
printf 'good.val int default=1\npub.val int default=1 mode=0666\n' > "$dir/tunables.conf"
dirs="$dir/open:$dir/root:$dir/good"

# rcusysd's own words for the same directories: the reference the CLI's must match.
run=$dir/ref
if start "$run" "$run.log" --no-persist -t "$dir/tunables.conf" --sysctl-dirs "$dirs"; then
	stop "$pid"
else
	failed "reference start" "log: $(tail -3 "$run.log")"
fi
# its line "... rcusysd: PATH: refused: WHY (skipped)" as rcusysctl prints it
said() { sed -n "s|^.*rcusysd: \($1: .* (skipped)\)\$|rcusysctl: \1|p" "$run.log" | head -1; }
want_open=$(said "$dir/open/50-evil.conf")
want_fifo=$(said "$dir/root/10-fifo.conf")
want_link=$(said "$dir/root/20-link.conf")
attack "rcusysd itself refuses the three files" "log: $(cat "$run.log")" \
	test -n "$want_open" -a -n "$want_fifo" -a -n "$want_link"

run=$dir/run
if ! start "$run" "$run.log" -s "$dir/state.conf" -t "$dir/tunables.conf" --sysctl-dirs ""; then
	failed "start" "log: $(tail -3 "$run.log")"
	echo "attack-cli-trust: $nheld held, $nfailed failed"
	exit 1
fi

# ---- --system as root ----
# The user's file, then the FIFO and the link apart: on today's code the
# FIFO hangs --system before it reaches the user's file.
RCUSYSCTL_SYSTEM_DIRS=$dir/open:$dir/good ctl --system > "$dir/sys.out" 2> "$dir/sys.err"
rc=$?
attack "--system: nonzero exit when a file was refused" "rc=$rc" test "$rc" = 1
attack "--system: the world-writable directory's file refused as rcusysd refuses it" \
	"stderr: $(cat "$dir/sys.err"); rcusysd: $want_open" has "$want_open" "$dir/sys.err"
attack "--system: kernel.modprobe unchanged" "it is $(ctl -n kernel.modprobe)" \
	test "$(ctl -n kernel.modprobe)" = /sbin/modprobe
attack "--system: the good file still applied" "good.val is $(ctl -n good.val); $(cat "$dir/sys.out")" \
	test "$(ctl -n good.val)" = 2
"$rcusysd" -d "$run" -e "MODULE foo" > /dev/null
attack "--system: no user's program ran as root" "it ran as uid $(cat "$dir/pwned" 2>/dev/null)" \
	test ! -e "$dir/pwned"
RCUSYSCTL_SYSTEM_DIRS=$dir/root ctl --system > "$dir/sys.out" 2> "$dir/sys.err"
rc=$?
attack "--system does not hang on a FIFO" "rc=$rc (124: killed after 10 s)" test "$rc" = 1
attack "--system: the FIFO refused as rcusysd refuses it" \
	"stderr: $(cat "$dir/sys.err"); rcusysd: $want_fifo" has "$want_fifo" "$dir/sys.err"
attack "--system: the symbolic link refused as rcusysd refuses it" \
	"stderr: $(cat "$dir/sys.err"); rcusysd: $want_link" has "$want_link" "$dir/sys.err"
attack "--system: kernel.modprobe still unchanged" "it is $(ctl -n kernel.modprobe)" \
	test "$(ctl -n kernel.modprobe)" = /sbin/modprobe
RCUSYSCTL_SYSTEM_DIRS=$dirs ctl --cat-config > "$dir/cat.out" 2> "$dir/cat.err"
rc=$?
attack "--cat-config: no hang, the same refusals, no refused text" "rc=$rc; stderr: $(cat "$dir/cat.err")" \
	eval '[ "$rc" = 1 ] && has "$want_fifo" "$dir/cat.err" && has "$want_open" "$dir/cat.err" &&
		! grep -q "^kernel.modprobe" "$dir/cat.out"'

# ---- -p FILE as root: the same check ----
ctl -p "$dir/open/50-evil.conf" > /dev/null 2> "$dir/p.err"
attack "-p as root: the world-writable directory's file refused" "stderr: $(cat "$dir/p.err")" \
	has "$want_open" "$dir/p.err"
ctl -p "$dir/root/10-fifo.conf" > /dev/null 2> "$dir/p.err"
rc=$?
attack "-p as root: a FIFO refused, no hang" "rc=$rc; stderr: $(cat "$dir/p.err")" \
	eval '[ "$rc" = 1 ] && has "$want_fifo" "$dir/p.err"'
ctl -p "$dir/root/20-link.conf" > /dev/null 2> "$dir/p.err"
attack "-p as root: a symbolic link refused" "stderr: $(cat "$dir/p.err")" has "$want_link" "$dir/p.err"
attack "-p as root: kernel.modprobe unchanged" "it is $(ctl -n kernel.modprobe)" \
	test "$(ctl -n kernel.modprobe)" = /sbin/modprobe
ctl -q -p - < "$dir/outside/x.conf" > /dev/null 2>&1
attack "-p - as root: root's own input applies" "it is $(ctl -n kernel.modprobe)" \
	test "$(ctl -n kernel.modprobe)" = "$dir/evil"
ctl -q -w kernel.modprobe=/sbin/modprobe > /dev/null

# ---- -p FILE as another user: that user's own writes ----
chown "$nobody:$nobody" "$dir/user"
as_user sh -c "printf 'kernel.modprobe = $dir/evil\n' > '$dir/user/exec.conf'; \
	printf 'pub.val = 7\n' > '$dir/user/pub.conf'; mkfifo '$dir/user/fifo.conf'"
as_user timeout 10 "$cli" --socket "$run/control.sock" -p "$dir/user/exec.conf" > /dev/null 2> "$dir/u.err"
attack "-p as a user: an entry root executes refused as that user's write" \
	"kernel.modprobe is $(ctl -n kernel.modprobe); stderr: $(cat "$dir/u.err")" \
	eval '[ "$(ctl -n kernel.modprobe)" = /sbin/modprobe ] &&
		has "rcusysctl: permission denied on key '\''kernel.modprobe'\''" "$dir/u.err"'
as_user timeout 10 "$cli" --socket "$run/control.sock" -q -p "$dir/user/pub.conf" 2> "$dir/u.err"
attack "-p as a user: an entry the user may write is written" "pub.val is $(ctl -n pub.val); $(cat "$dir/u.err")" \
	test "$(ctl -n pub.val)" = 7
# A settings file's value is not kept (APPLY); a client's write is.
attack "-p as a user: kept as a client's write (rcusysd -s)" "$(ctl --kept="$dir/state.conf" 2>&1)" \
	eval 'ctl --kept="$dir/state.conf" 2>&1 | grep -q "^pub.val = 7[[:space:]]*# client,"'
as_user timeout 10 "$cli" --socket "$run/control.sock" -p "$dir/user/fifo.conf" > /dev/null 2> "$dir/u.err"
rc=$?
attack "-p as a user: a FIFO refused, no hang" "rc=$rc; stderr: $(cat "$dir/u.err")" \
	eval '[ "$rc" = 1 ] && has "rcusysctl: $dir/user/fifo.conf: refused: not a regular file (a FIFO) (skipped)" "$dir/u.err"'
stop "$pid"

echo "attack-cli-trust: $nheld held, $nfailed failed"
[ "$nfailed" = 0 ]
