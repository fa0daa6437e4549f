#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The trust matrix of a root rcusysd (rcusysd(8), SECURITY MODEL): for each
# source (every settings directory, tunables.d, -c and -t files, the state
# file, socket and FUSE clients, the etcd mirror) and each check (owner,
# mode, symbolic link, FIFO, directory, size, a directory others may write,
# read-only entry, exec class), a case where the bad input is refused with
# its reason in the log and nothing else changes; then rcusysctl's output
# to a terminal. Each case prints "held: NAME" or "failed: NAME (why)", as
# test_attack.sh's do. Waits are hang guards, never timing assertions.
set -u
usage="usage: test_trust.sh RCUSYSD RCUSYSCTL FAKE_GATEWAY etcd|no-etcd"
rcusysd=${1:?$usage} cli=${2:?$usage} gateway=${3:?$usage} etcd=${4:?$usage}
nobody=65534
nheld=0 nfailed=0

if [ "$(id -u)" != 0 ]; then
	echo "skip: the trust matrix needs root (files owned by another user, setpriv)"
	exit 77
fi
. "$(dirname "$0")/attack_lib.sh"
attack_workdir
attack_extra_cleanup() {
	for m in "$dir"/*/sys; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
}
said_ready() { grep -qF "rcusysd: ready: control socket $2/control.sock," "$1" 2>/dev/null; }
ready_or_gone() { said_ready "$2" "$3" || ! alive "$1"; }
# start RUN LOG [rcusysd args...]: sets $pid; 1 if it did not say ready (a hang guard of 20 s).
start() {
	local run=$1 log=$2
	shift 2
	: > "$log"
	"$rcusysd" -d "$run" "$@" 2> "$log" &
	pid=$!
	pids+=("$pid")
	wait_for 20 ready_or_gone "$pid" "$log" "$run" && alive "$pid" && said_ready "$log" "$run"
}
stop() { kill -TERM "$1" && wait_for 30 eval "! kill -0 $1 2>/dev/null"; wait "$1" 2>/dev/null; }
ctl() { local run=$1; shift; "$cli" --socket "$run/control.sock" "$@"; }
# logged LOG TEXT: the log holds TEXT (fixed string).
logged() { grep -qF -- "$2" "$1"; }
# refused NAME LOG MESSAGE RUN ENTRY DEFAULT: the message is logged, the entry kept its default.
refused() {
	local name=$1 log=$2 msg=$3 run=$4 entry=$5 def=$6 got
	got=$(ctl "$run" -n "$entry" 2>&1)
	if logged "$log" "$msg" && [ "$got" = "$def" ]; then
		held "$name"
	else
		failed "$name" "$entry is '$got'; log: $(grep -F "$entry" "$log" | head -3)"
	fi
}

# ---- settings and tunables files: every directory, -c, -t ----
t=$dir/t
mkdir -m 755 "$t" "$t/etc" "$t/usr" "$t/tun" "$t/c" "$t/sticky" "$t/open" "$t/ro"
mkdir -m 777 "$t/wdir"
chmod 1777 "$t/sticky"
chmod 777 "$t/open"
mkdir -m 755 "$t/open/sub"
cat > "$t/tunables.conf" <<'EOF'
f.owner int default=1
f.mode int default=1
f.link int default=1
f.fifo int default=1
f.dir int default=1
f.big int default=1
f.wdir int default=1
f.sticky int default=1
f.ancestor int default=1
f.masked int default=1
f.c_owner int default=1
f.c_fifo int default=1
ro.val int default=1 mode=0444
good.val int default=1
good.dflt int default=1
open.val string maxlen=64 default=x mode=0666
EOF
printf 'f.owner = 9\n' > "$t/etc/10-owner.conf"
chown "$nobody" "$t/etc/10-owner.conf"
printf 'f.mode = 9\n' > "$t/etc/20-mode.conf"
chmod 666 "$t/etc/20-mode.conf"
printf 'f.link = 9\n' > "$dir/users-file"
chown "$nobody" "$dir/users-file"
ln -s "$dir/users-file" "$t/etc/30-link.conf"
mkfifo "$t/etc/40-fifo.conf"
mkdir "$t/etc/50-dir.conf"
printf 'f.big = 9\n' > "$t/etc/60-big.conf"
truncate -s 65M "$t/etc/60-big.conf"
ln -s /dev/null "$t/etc/70-masked.conf"
printf 'f.masked = 9\n' > "$t/usr/70-masked.conf"
printf 'ro.val = 9\n' > "$t/etc/80-ro.conf"
printf 'good.val = 9\n' > "$t/usr/90-good.conf"
printf 'f.wdir = 9\n' > "$t/wdir/15-wdir.conf"
printf 'f.sticky = 9\n' > "$t/sticky/16-sticky.conf"
printf 'f.ancestor = 9\n' > "$t/open/sub/17-ancestor.conf"
printf 'f.c_owner = 9\n' > "$t/c/owner.conf"
chown "$nobody" "$t/c/owner.conf"
mkfifo "$t/c/fifo.conf"
printf 'u.tunable int default=5\n' > "$t/tun/10-user.conf"
chown "$nobody" "$t/tun/10-user.conf"
mkfifo "$t/tun/20-fifo.conf"
printf 'u.c_tunable int default=5\n' > "$t/c/user-tunables.conf"
chown "$nobody" "$t/c/user-tunables.conf"
run=$t/run
log=$t/run.log
if ! start "$run" "$log" --no-fuse --no-persist -t "$t/tunables.conf" -t "$t/c/user-tunables.conf" \
	--sysctl-dirs "$t/etc:$t/wdir:$t/sticky:$t/open/sub:$t/usr" --tunables-dirs "$t/tun" \
	-c "$t/c/owner.conf" -c "$t/c/fifo.conf"; then
	failed "start with FIFOs, a directory and a 65 MiB file among the files" "log: $(tail -5 "$log")"
	echo "attack-trust: $nheld held, $nfailed failed"
	exit 1
fi
held "start with FIFOs, a directory and a 65 MiB file among the files (no hang)"
refused "sysctl.d: a user's file" "$log" "$t/etc/10-owner.conf: refused: the file is owned by uid $nobody (must be root or uid 0)" "$run" f.owner 1
refused "sysctl.d: a file others may write" "$log" "$t/etc/20-mode.conf: refused: the file is writable by group or others (mode 0666)" "$run" f.mode 1
refused "sysctl.d: a symbolic link to a user's file" "$log" "$t/etc/30-link.conf: refused: a symbolic link" "$run" f.link 1
refused "sysctl.d: a FIFO" "$log" "$t/etc/40-fifo.conf: refused: not a regular file (a FIFO)" "$run" f.fifo 1
refused "sysctl.d: a directory named .conf" "$log" "$t/etc/50-dir.conf: refused: not a regular file (a directory)" "$run" f.dir 1
refused "sysctl.d: a file over 64 MiB" "$log" "$t/etc/60-big.conf: refused: larger than 64 MiB" "$run" f.big 1
refused "sysctl.d: a directory others may write" "$log" "$t/wdir/15-wdir.conf: refused: $t/wdir is writable by group or others (mode 0777) and not sticky" "$run" f.wdir 1
refused "sysctl.d: a sticky directory others may write" "$log" "$t/sticky/16-sticky.conf: refused: its directory is writable by group or others (mode 1777)" "$run" f.sticky 1
refused "sysctl.d: a directory above others may write" "$log" "$t/open/sub/17-ancestor.conf: refused: $t/open is writable by group or others (mode 0777) and not sticky" "$run" f.ancestor 1
refused "-c: a user's file" "$log" "$t/c/owner.conf: refused: the file is owned by uid $nobody" "$run" f.c_owner 1
refused "-c: a FIFO" "$log" "$t/c/fifo.conf: refused: not a regular file (a FIFO)" "$run" f.c_fifo 1
refused "settings: a line for a read-only entry" "$log" "$t/etc/80-ro.conf:1: setting ro.val: read-only entry (mode 0444)" "$run" ro.val 1
attack "sysctl.d: a link to /dev/null masks a file of that name" "f.masked is $(ctl "$run" -n f.masked); log: $(grep masked "$log")" \
	eval '[ "$(ctl "$run" -n f.masked)" = 1 ] && ! grep -q "refused.*70-masked" "$log"'
attack "tunables.d: a user's file declares nothing" "log: $(grep 10-user "$log"); u.tunable: $(ctl "$run" -n u.tunable 2>&1)" \
	eval 'logged "$log" "$t/tun/10-user.conf: refused: the file is owned by uid $nobody" && ! ctl "$run" -n u.tunable > /dev/null 2>&1'
attack "tunables.d: a FIFO" "log: $(grep 20-fifo "$log")" logged "$log" "$t/tun/20-fifo.conf: refused: not a regular file (a FIFO)"
attack "-t: a user's file declares nothing" "log: $(grep user-tunables "$log")" \
	eval 'logged "$log" "$t/c/user-tunables.conf: refused: the file is owned by uid $nobody" && ! ctl "$run" -n u.c_tunable > /dev/null 2>&1'
attack "the good file is applied" "good.val is $(ctl "$run" -n good.val)" test "$(ctl "$run" -n good.val)" = 9
# A reload reads every file again: the same refusals, no hang on the FIFOs.
kill -HUP "$pid"
wait_for 20 eval '[ "$(grep -c "reloaded" "$log")" -ge 1 ]'
attack "reload with FIFOs among the files finishes" "log: $(tail -3 "$log")" logged "$log" "reloaded with errors"
attack "reload: the read-only line is refused again" "log: $(grep ro.val "$log")" \
	test "$(grep -c "setting ro.val: read-only entry" "$log")" = 2
attack "reload: the user's file is refused again" "f.owner is $(ctl "$run" -n f.owner)" \
	eval '[ "$(grep -c "$t/etc/10-owner.conf: refused" "$log")" = 2 ] && [ "$(ctl "$run" -n f.owner)" = 1 ]'
stop "$pid"

# ---- the state file: owner and mode (the same file check, trusted_file.c) ----
for c in owner mode; do
	mkdir -m 755 "$dir/st-$c"
	printf 'good.val = 7\n' > "$dir/st-$c/state.conf"
	[ "$c" = owner ] && chown "$nobody" "$dir/st-$c/state.conf"
	[ "$c" = mode ] && chmod 666 "$dir/st-$c/state.conf"
	: > "$dir/st-$c.log"
	timeout 20 "$rcusysd" -d "$dir/st-$c-run" --no-fuse -t "$t/tunables.conf" -s "$dir/st-$c/state.conf" 2> "$dir/st-$c.log"
	rc=$?
	msg="the file is owned by uid $nobody (must be root or uid 0)"
	[ "$c" = mode ] && msg="the file is writable by group or others (mode 0666)"
	attack "state file: $c refused at start" "rc=$rc; log: $(tail -2 "$dir/st-$c.log")" \
		eval '[ "$rc" = 1 ] && logged "$dir/st-$c.log" "state file $dir/st-$c/state.conf: $msg"'
done

# ---- socket and FUSE: entries root executes, by --owner and by others ----
printf '#!/bin/sh\nid -u > %s/pwned\n' "$dir" > "$dir/evil"
chmod 755 "$dir/evil"
echo 'app.helper string maxlen=256 default=/bin/true exec=yes' > "$dir/exec.conf"
run=$dir/o
if start "$run" "$run.log" --no-persist -t "$dir/exec.conf" -t "$t/tunables.conf" --owner "$nobody:$nobody"; then
	for e in kernel.modprobe app.helper; do
		as_user "$cli" --socket "$run/control.sock" -q -w "$e=$dir/evil" > /dev/null 2>&1
		attack "socket: --owner cannot write $e" "it is $(ctl "$run" -n "$e")" \
			eval '[ "$(ctl "$run" -n "$e")" != "$dir/evil" ]'
	done
	if mountpoint -q "$run/sys"; then
		as_user sh -c "echo '$dir/evil' > '$run/sys/kernel/modprobe'" 2> /dev/null
		attack "FUSE: --owner cannot write kernel/modprobe" "it is $(ctl "$run" -n kernel.modprobe)" \
			test "$(ctl "$run" -n kernel.modprobe)" = /sbin/modprobe
		as_user sh -c "echo '$dir/evil' > '$run/sys/app/helper'" 2> /dev/null
		attack "FUSE: --owner cannot write an exec=yes tunable" "it is $(ctl "$run" -n app.helper)" \
			test "$(ctl "$run" -n app.helper)" = /bin/true
	else
		echo "skip: FUSE cases: the tree did not mount here: $(grep FUSE "$run.log")"
		[ "${CI:-}" = true ] && failed "FUSE must work on CI as root"
	fi
	"$rcusysd" -d "$run" -e "MODULE foo" > /dev/null
	attack "no program of the owner's ran as root" "it ran as uid $(cat "$dir/pwned" 2>/dev/null)" test ! -e "$dir/pwned"
	stop "$pid"
else
	failed "start with --owner" "log: $(tail -3 "$run.log")"
fi

. "$(dirname "$0")/trust_etcd.sh"
. "$(dirname "$0")/trust_tty.sh"

echo "attack-trust: $nheld held, $nfailed failed"
[ "$nfailed" = 0 ]
