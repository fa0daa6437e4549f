#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysd's one precedence (rcusysd(8), CONFIGURATION): the tunables'
# defaults < the sysctl.d directories and -c files, merged as
# systemd-sysctl merges them < runtime writes (the state file), the same at
# start, at reload and at restart; rcusysctl --reset; an explicit key
# beating a glob, compared with procps sysctl -p on the same file; files
# dropped into sysctl.d and tunables.d applied at start.
set -u
rcusysd=${1:?usage: test_rcusysd_config.sh RCUSYSD RCUSYSCTL}
cli=${2:?usage: test_rcusysd_config.sh RCUSYSD RCUSYSCTL}
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"
S=(--socket "$dir/run/control.sock")

start() {
	: > "$dir/log"
	"$rcusysd" --no-fuse -d "$dir/run" --state "$dir/state.conf" --sysctl-dirs "$dir/etc:$dir/usr" \
		--tunables-dirs "$dir/tunables.d" "$@" 2>> "$dir/log" &
	pid=$!
	for _ in $(seq 200); do [ -S "$dir/run/events.sock" ] && return 0; sleep 0.05; done
	echo "rcusysd did not start:"; cat "$dir/log"; exit 1
}
stop() { kill -TERM "$pid"; wait "$pid"; pid=; }
reload() {
	local n
	n=$(grep -c "reloaded" "$dir/log")
	kill -HUP "$pid"
	for _ in $(seq 200); do [ "$(grep -c "reloaded" "$dir/log")" -gt "$n" ] && return; sleep 0.05; done
	echo "no reload seen:"; cat "$dir/log"
}
get() { "$cli" "${S[@]}" -n "$1" 2>&1; }

mkdir -p "$dir/etc" "$dir/usr" "$dir/tunables.d"
printf 'app.limit int default=10\napp.lx int\napp.other int default=5\n' > "$dir/tunables.conf"

# 3. A file dropped into a sysctl.d directory, and one into tunables.d, apply at start;
#    /etc's file of a name hides /usr's.
printf 'app.limit = 20\n' > "$dir/etc/10-app.conf"
printf 'app.limit = 99\napp.other = 6\n' > "$dir/usr/10-app.conf"
printf 'app.other = 8\n' > "$dir/usr/20-more.conf"
printf 'pkg.colour string maxlen=16 default=red\n' > "$dir/tunables.d/pkg.conf"
printf 'pkg.colour = blue\n' > "$dir/usr/30-pkg.conf"
start -t "$dir/tunables.conf"
check "a sysctl.d file is applied at start; /etc's hides /usr's of its name" "20" "$(get app.limit)"
check "the hidden file's lines do not apply, another file's do" "8" "$(get app.other)"
check "a tunables.d file declares at start, and sysctl.d sets it" "blue" "$(get pkg.colour)"

# 1. Reload and restart give the same value: the runtime write wins over the files in both.
"$cli" "${S[@]}" -q -w app.limit=77
reload
check "reload keeps a runtime write over the files" "77" "$(get app.limit)"
stop
start -t "$dir/tunables.conf"
check "restart keeps it too" "77" "$(get app.limit)"
# A file changed under a running daemon: what reload gives, restart gives.
printf 'app.lx = 4\n' > "$dir/etc/20-lx.conf"
rm "$dir/usr/20-more.conf"
reload
after_reload="$(get app.limit) $(get app.lx) $(get app.other)"
# The files' values and the defaults a reload applies are layers 1 and 2,
# not runtime writes (their writes carry SYSCTL_ORIGIN_FILE): the state
# file gains no key for them.
check "reload adds no key to the state file" "app.limit = 77" "$("$cli" --kept="$dir/state.conf" | cut -f1)"
stop
start -t "$dir/tunables.conf"
check "reload and restart agree (runtime write, new file, removed file -> default)" \
	"77 4 5" "$after_reload"
check "restart" "77 4 5" "$(get app.limit) $(get app.lx) $(get app.other)"

# --reset: the runtime write goes, the files' value comes back, and stays after a restart.
check "--reset KEY" "" "$("$cli" "${S[@]}" --reset app.limit 2>&1)"
check "the files' value is back" "20" "$(get app.limit)"
check "and the state file forgot it" "" "$("$cli" --kept="$dir/state.conf" | grep app.limit)"
"$cli" "${S[@]}" -q -w app.lx=1 app.other=2
check "--reset --all" "" "$("$cli" "${S[@]}" --reset --all 2>&1)"
check "every runtime write gone: files and defaults again" "20 4 5" \
	"$(get app.limit) $(get app.lx) $(get app.other)"
check "--reset of an unknown key names it" \
	"rcusysctl: resetting key \"app.nope\": No such file or directory" "$("$cli" "${S[@]}" --reset app.nope 2>&1)"
stop
start -t "$dir/tunables.conf"
check "after --reset, a restart gives the files' value" "20" "$(get app.limit)"

# 2. An explicit key beats a glob, wherever the glob stands: at start, at reload, with -p.
printf 'app.limit = 33\napp.l* = 7\n' > "$dir/etc/40-glob.conf"
reload
# app.lx: 20-lx.conf's explicit 4 beats 40-glob.conf's glob too, as systemd-sysctl has it.
check "reload: explicit keys beat a later glob, even an earlier file's" "33 4" \
	"$(get app.limit) $(get app.lx)"
stop
start -t "$dir/tunables.conf"
check "start: explicit keys beat a later glob, even an earlier file's" "33 4" \
	"$(get app.limit) $(get app.lx)"
"$cli" "${S[@]}" -q -w app.limit=1 app.lx=1
check "rcusysctl -p: explicit key beats the later glob" "app.limit = 33
app.lx = 7" "$("$cli" "${S[@]}" -p "$dir/etc/40-glob.conf" 2>&1)"
cli_values="$(get app.limit) $(get app.lx)"
stop

# The same file through procps sysctl -p, on rcusysd's FUSE tree bound over
# /proc/sys in a mount namespace of its own (never the machine's /proc/sys).
procps_p() {
	"$rcusysd" -d "$dir/prun" -t "$dir/tunables.conf" --no-persist --sysctl-dirs "" \
		--tunables-dirs "" 2> "$dir/plog" &
	local p=$! out
	for _ in $(seq 200); do mountpoint -q "$dir/prun/sys" && break; sleep 0.05; done
	# shellcheck disable=SC2016 # expanded by the inner shell
	out=$(unshare -m --propagation private sh -c 'mount --bind "$1/prun/sys" /proc/sys &&
		sysctl -p "$1/etc/40-glob.conf" > /dev/null && sysctl -n app.limit app.lx' sh "$dir" 2>&1)
	kill -TERM "$p"
	wait "$p"
	echo $out
}
if [ "$(id -u)" = 0 ] && [ -c /dev/fuse ] && command -v sysctl > /dev/null &&
	unshare -m --propagation private true 2> /dev/null; then
	procps=$(INSIDE=1 unshare -m --propagation private bash -c "$(declare -f procps_p)
		rcusysd='$rcusysd' dir='$dir' procps_p")
	check "procps sysctl -p leaves what rcusysctl -p leaves" "$procps" "$cli_values"
	check "procps sysctl -p: explicit key beats the glob" "33 7" "$procps"
else
	skip_part "the comparison with procps sysctl -p needs root, /dev/fuse, procps and mount namespaces"
fi

# Error messages name the file, the line and the token.
printf 'app.limit 5\n-app.nope = 1\napp.nope = 1\n' > "$dir/etc/50-bad.conf"
start -t "$dir/tunables.conf"
check "a malformed line: FILE:LINE and the token" \
	"err rcusysd: $dir/etc/50-bad.conf:1: \"app.limit 5\" is not an assignment (expected key = value)" \
	"$(grep 50-bad.conf:1 "$dir/log" | sed -E 's/^[^ ]+ //')"
check "an unknown key: FILE:LINE and the key, dotted; '-' keys quiet" \
	"err rcusysd: $dir/etc/50-bad.conf:3: setting app.nope: no such entry" \
	"$(grep 'app.nope\|app/nope' "$dir/log" | sed -E 's/^[^ ]+ //')"
stop
finish rcusysd-config
