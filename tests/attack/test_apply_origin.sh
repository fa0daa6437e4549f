#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A local user's APPLY and MAPPLY are that user's writes, exactly as SET
# (the 4th attack campaign's finding 10): the socket decides their origin
# once, so the write check, the store and the audit see the same one.
# Acknowledged with OK, they must be kept in rcusysd's store and come back
# after a restart, as the user's SET does; root's APPLY stays a settings
# file's value (not kept: the files win again at start). Raw protocol lines
# (rcusysctl -p sends a user's settings as SET). Each case prints
# "held: NAME" or "failed: NAME (why)"; waits are hang guards only.
set -u
usage="usage: test_apply_origin.sh RCUSYSD RCUSYSCTL"
rcusysd=${1:?$usage} cli=${2:?$usage}
nobody=65534
nheld=0 nfailed=0

if [ "$(id -u)" != 0 ]; then
	echo "skip: playing another local user (setpriv to uid $nobody) needs root"
	exit 77
fi
# The system's python3: one under root's home (pyenv) is out of the user's reach.
py=$(PATH=/usr/bin:/bin command -v python3)
if [ -z "$py" ]; then
	echo "skip: /usr/bin/python3 (the raw protocol client) is not installed"
	exit 77
fi
. "$(dirname "$0")/attack_lib.sh"
attack_workdir
run=$dir/run
said_ready() { grep -qF "rcusysd: ready: control socket $run/control.sock," "$dir/d.log" 2>/dev/null; }
ready_or_gone() { said_ready || ! alive "$pid"; }
# start: the daemon on the store $dir/state; sets $pid; 1 if it did not say ready.
start() {
	: > "$dir/d.log"
	"$rcusysd" -d "$run" --no-fuse -s "$dir/state" -t "$dir/tunables.conf" --sysctl-dirs "" \
		2> "$dir/d.log" &
	pid=$!
	pids+=("$pid")
	wait_for 20 ready_or_gone && alive "$pid" && said_ready
}
stop() { kill -TERM "$pid" && wait_for 30 eval "! kill -0 $pid 2>/dev/null"; wait "$pid" 2>/dev/null; }
# send TEXT: the request lines TEXT on one connection, the replies on stdout (hang guard 10 s).
send() {
	timeout 10 "$py" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode())
s.shutdown(socket.SHUT_WR)
while True:
    d = s.recv(65536)
    if not d:
        break
    sys.stdout.write(d.decode())
' "$run/control.sock" "$1"
}
value() { timeout 10 "$cli" --socket "$run/control.sock" -n "$1"; }

cat > "$dir/tunables.conf" <<'EOF'
pub.val  string maxlen=64 default=def mode=0666
pub.num  int default=1 mode=0666
pub.m1   string maxlen=64 default=def mode=0666
pub.m2   string maxlen=64 default=def mode=0666
pub.root string maxlen=64 default=def mode=0666
EOF
if ! start; then
	failed "start" "log: $(tail -3 "$dir/d.log")"
	echo "attack-apply-origin: $nheld held, $nfailed failed"
	exit 1
fi
out=$(as_user bash -c "$(declare -f send); run=$run py=$py; send 'APPLY pub.val user-applied
MAPPLY 2
pub.m1 m-one
pub.m2 m-two
SET pub.num 42
'")
attack "the user's APPLY, MAPPLY and SET are acknowledged" "replies: $out" \
	test "$out" = "$(printf 'OK\nOK 2\nOK')"
out=$(send "APPLY pub.root root-applied
")
attack "root's APPLY is acknowledged" "reply: $out" test "$out" = OK
out=$(send "AUDIT
")
attack "the audit names the user for the APPLY and MAPPLY" "audit: $out" \
	eval 'grep -q "^AUDIT [0-9]* [0-9.]* $nobody [0-9]* pub.val def user-applied\$" <<< "$out" &&
		grep -q "^AUDIT [0-9]* [0-9.]* $nobody [0-9]* pub.m2 def m-two\$" <<< "$out"'
kept=$(timeout 10 "$cli" --socket "$run/control.sock" --kept="$dir/state" 2>&1)
attack "the store keeps the user's APPLY as a client's write" "kept: $kept" \
	eval 'grep -q "^pub.val = user-applied[[:space:]]*# client," <<< "$kept" &&
		grep -q "^pub.m1 = m-one[[:space:]]*# client," <<< "$kept"'
stop
if ! start; then
	failed "restart" "log: $(tail -3 "$dir/d.log")"
	echo "attack-apply-origin: $nheld held, $nfailed failed"
	exit 1
fi
attack "the user's APPLY survives a restart" "pub.val is $(value pub.val)" \
	test "$(value pub.val)" = user-applied
attack "the user's MAPPLY survives a restart" "pub.m1, pub.m2 are $(value pub.m1), $(value pub.m2)" \
	test "$(value pub.m1) $(value pub.m2)" = "m-one m-two"
attack "the user's SET survives a restart" "pub.num is $(value pub.num)" test "$(value pub.num)" = 42
attack "root's APPLY is a settings file's value: not kept" "pub.root is $(value pub.root)" \
	test "$(value pub.root)" = def
stop

echo "attack-apply-origin: $nheld held, $nfailed failed"
[ "$nfailed" = 0 ]
