# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by test_trust.sh: what a user's value does to root's terminal.
# rcusysctl escapes control bytes to a terminal (a pty, through script(1)),
# keeps them raw to a pipe, and -b keeps them raw everywhere.
if ! command -v script > /dev/null; then
	echo "skip: tty cases: script (bsdutils) is not installed"
	[ "${CI:-}" = true ] && failed "script must be there on CI"
	return 0
fi
run=$dir/tty
if start "$run" "$run.log" --no-fuse --no-persist -t "$t/tunables.conf"; then
	esc=$(printf 'a\033[2Jb\rc\302\233d\342\202\254')
	as_user "$cli" --socket "$run/control.sock" -q -w "open.val=$esc"
	script -qc "$cli --socket '$run/control.sock' open.val" /dev/null > "$dir/tty.out" < /dev/null
	attack "tty: ESC, CR and C1 escaped, UTF-8 kept" "got: $(od -c "$dir/tty.out" | head -3)" \
		grep -qF 'open.val = a\x1b[2Jb\x0dc\xc2\x9bd€' "$dir/tty.out"
	attack "tty: no raw ESC or CR reaches it" "got: $(od -c "$dir/tty.out" | head -3)" \
		eval '! tr -d "\r\n" < "$dir/tty.out" | grep -q "$(printf "[\033\r]")"'
	attack "pipe: the value as it is" "got: $(ctl "$run" -n open.val | od -c | head -2)" \
		test "$(ctl "$run" -n open.val)" = "$esc"
	script -qc "$cli --socket '$run/control.sock' -b open.val" /dev/null > "$dir/tty-b.out" < /dev/null
	attack "tty with -b: raw" "got: $(od -c "$dir/tty-b.out" | head -2)" grep -qF "$esc" "$dir/tty-b.out"
	stop "$pid"
else
	failed "tty: the daemon starts" "log: $(tail -3 "$run.log")"
fi
