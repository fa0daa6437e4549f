#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A restart after SIGKILL with the tree mounted: the dead FUSE mount left
# behind answers ENOTCONN ("Transport endpoint is not connected"); the new
# rcusysd must detach it and mount the tree again. Runs in its own mount
# namespace. Also: SIGHUP reloads the tunables and -c files.
set -u
rcusysd=${1:?usage: test_rcusysd_restart.sh RCUSYSD RCUSYSCTL}
cli=${2:?usage: test_rcusysd_restart.sh RCUSYSD RCUSYSCTL}
. "$(dirname "$0")/../check.sh"
if [ -z "${INSIDE_NS:-}" ]; then
	require_root_fuse mountpoint
	INSIDE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; umount -l "$dir/run/sys" 2>/dev/null; rm -rf "$dir"' EXIT
untime() { sed -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z //'; }

start() {
	: > "$dir/log"
	"$rcusysd" -d "$dir/run" --no-persist "$@" 2> "$dir/log" &
	pid=$!
	for _ in $(seq 200); do [ -S "$dir/run/events.sock" ] && return 0; sleep 0.05; done
	echo "rcusysd did not start:"; cat "$dir/log"; exit 1
}
start
mountpoint -q "$dir/run/sys" || skip "the tree did not mount here: $(grep FUSE "$dir/log")"
check "mounted" "/sbin/modprobe" "$(cat "$dir/run/sys/kernel/modprobe")"
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
check "a dead mount is left behind" "Transport endpoint is not connected" \
	"$(stat "$dir/run/sys" 2>&1 | sed 's/.*: //')"
rm -f "$dir/run/control.sock" "$dir/run/events.sock"
start
check "the restart says what it did" "notice rcusysd: $dir/run/sys: detached the dead mount of an earlier rcusysd" \
	"$(grep "dead mount" "$dir/log" | untime)"
check "the restart mounts the tree again" "info rcusysd: tree mounted at $dir/run/sys" \
	"$(grep "mounted at" "$dir/log" | untime)"
check "one mount there, not one stacked on the dead one" "1" "$(grep -c " $dir/run/sys " /proc/self/mountinfo)"
timeout 20 "$rcusysd" -d "$dir/run" --no-persist 2> "$dir/second.log"
check "a second rcusysd on the same run directory stops before mounting" \
	"1 err rcusysd: cannot serve $dir/run/control.sock: another rcusysd is serving this run directory" \
	"$? $(untime < "$dir/second.log")"
check "and leaves the first one's mount alone" "1" "$(grep -c " $dir/run/sys " /proc/self/mountinfo)"
check "FUSE works after the restart" "/sbin/modprobe" "$(cat "$dir/run/sys/kernel/modprobe" 2>&1)"
kill -TERM "$pid"
wait "$pid"
check "clean exit" "0" "$?"
check "unmounted at exit" "no" "$(mountpoint -q "$dir/run/sys" && echo yes || echo no)"

# SIGHUP: new declarations appear, removed ones go, unchanged ones keep
# their value, a changed type is refused; -c files are applied again.
S=(--socket "$dir/run/control.sock")
printf 'app.kept int default=1\napp.gone int\napp.typed int\n' > "$dir/tunables.conf"
printf 'app.typed = 5\n' > "$dir/settings.conf"
start --no-fuse -t "$dir/tunables.conf" -c "$dir/settings.conf"
"$cli" "${S[@]}" -q -w app.kept=42
printf 'app.kept int default=1\napp.new string maxlen=8 default=fresh\napp.typed string maxlen=8\n' \
	> "$dir/tunables.conf"
printf 'app.typed = 6\napp.new = newer\n' > "$dir/settings.conf"
kill -HUP "$pid"
for _ in $(seq 200); do grep -q "reloaded" "$dir/log" && break; sleep 0.05; done
check "reload: still running" "yes" "$(kill -0 "$pid" 2>/dev/null && echo yes || echo no)"
check "reload: an unchanged tunable keeps its live value" "42" "$("$cli" "${S[@]}" -n app.kept)"
check "reload: a new tunable, with the -c file's value" "newer" "$("$cli" "${S[@]}" -n app.new)"
check "reload: a removed tunable is gone" "1" "$("$cli" "${S[@]}" -n app.gone >/dev/null 2>&1; echo $?)"
check "reload: a changed type is refused, the entry kept" "6" "$("$cli" "${S[@]}" -n app.typed)"
check "reload: the refusal names the line and why" \
	"err rcusysd: $dir/tunables.conf:3: app.typed: declared \"string maxlen=8 mode=0644\", live as \"int mode=0644\": a live entry keeps its declaration (restart to change it)" \
	"$(grep "live entry" "$dir/log" | untime)"
check "reload: a refused declaration is no plain \"reloaded\"" \
	"warning rcusysd: reloaded with errors: a line refused or a file skipped, each named above" \
	"$(grep "reloaded" "$dir/log" | untime)"
# New tunables of one directory: one with a refused default is left out, its neighbours stay.
printf 'app.kept int default=1\napp.new string maxlen=8 default=fresh\napp.typed string maxlen=8\nnd.a int default=3\nnd.b int min=0 max=5 default=9\nnd.c int default=4\n' \
	> "$dir/tunables.conf"
kill -HUP "$pid"
for _ in $(seq 200); do [ "$(grep -c "reloaded" "$dir/log")" = 2 ] && break; sleep 0.05; done
check "reload: new neighbours of a refused tunable are registered" "3 4" \
	"$("$cli" "${S[@]}" -n nd.a) $("$cli" "${S[@]}" -n nd.c)"
check "reload: the refused one is left out" "1" "$("$cli" "${S[@]}" -n nd.b >/dev/null 2>&1; echo $?)"
check "reload: and its line is named" \
	"err rcusysd: $dir/tunables.conf:5: default=\"9\": invalid value (integers 0..5)" \
	"$(grep 'tunables.conf:5' "$dir/log" | untime)"
printf 'app.kept int default=1\napp..bad int\n' > "$dir/tunables.conf"
kill -HUP "$pid"
for _ in $(seq 200); do [ "$(grep -c "reloaded" "$dir/log")" = 3 ] && break; sleep 0.05; done
check "reload: a bad file changes nothing" "newer" "$("$cli" "${S[@]}" -n app.new)"
check "reload: and says where" "err rcusysd: reload: $dir/tunables.conf:2: empty path component (its tunables are kept)" \
	"$(grep "reload: " "$dir/log" | untime)"
kill -TERM "$pid"
wait "$pid"
check "clean exit after reloads" "0" "$?"
pid=

# A user who may not open /dev/fuse is told so (the library says only ENODEV).
if command -v setpriv > /dev/null && command -v mknod > /dev/null; then
	chmod 755 "$dir"
	mknod "$dir/fuse" c 10 229 && chmod 600 "$dir/fuse" && mount --bind "$dir/fuse" /dev/fuse
	mkdir "$dir/urun" && chown 65534:65534 "$dir/urun"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$rcusysd" -d "$dir/urun" --no-persist \
		2> "$dir/ulog" &
	pid=$!
	for _ in $(seq 200); do [ -S "$dir/urun/events.sock" ] && break; sleep 0.05; done
	kill -TERM "$pid"
	wait "$pid"
	pid=
	umount /dev/fuse
	check "no permission for /dev/fuse is said so" \
		"warning rcusysd: FUSE unavailable (no permission to open /dev/fuse): the tree is not mounted" \
		"$(grep FUSE "$dir/ulog" | untime)"
else
	skip_part "setpriv or mknod is not installed: the /dev/fuse permission message is not checked"
fi
finish rcusysd-restart
