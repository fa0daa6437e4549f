#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysd without FUSE: declared tunables (good and bad files), start-up
# settings, the control socket, the events socket, clean SIGTERM.
set -u
rcusysd=${1:?usage: test_rcusysd.sh RCUSYSD RCUSYSCTL}
cli=${2:?usage: test_rcusysd.sh RCUSYSD RCUSYSCTL}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"

# Log lines start with the time in UTC; the level and the message are what is checked.
untime() { sed -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z //'; }
bad() { # name, file content, expected message[, the tree's own line]
	printf '%s\n' "$2" > "$dir/bad.conf"
	check "$1" "${4:+$4
}err rcusysd: $dir/bad.conf:$3
rc=1" "$(timeout 20 "$rcusysd" --no-fuse --no-persist -d "$dir/run" -t "$dir/bad.conf" 2>&1 | untime
	echo "rc=${PIPESTATUS[0]}")"
}
bad "default too long" 'x.y string maxlen=4 default="toolong"' '1: default="toolong": value longer than 3 bytes'
bad "string without maxlen" '# c
x.y string' "2: string needs maxlen=1..65536"
bad "unknown type" 'x.y float' "1: type \"float\" unknown (expected one of string, int, uint, u8, ulong, bool, bitmap, jiffies, userhz_jiffies, ms_jiffies, ulong_ms_jiffies)"
bad "unknown field, named" 'x.y int colour=red' "1: \"colour=red\": unknown field (expected one of maxlen=, bits=, mode=, min=, max=, default=, desc=, exec=)"
bad "half bounds" 'x.y int min=1' "1: give both min= and max="
bad "bad mode" 'x.y int mode=0999' "1: mode=0999: must be octal read/write bits, at most 0666"
bad "mode above 0666, echoed" 'x.y int mode=0777' "1: mode=0777: must be octal read/write bits, at most 0666"
bad "number out of type" 'x.y uint default=-1' '1: default="-1": invalid value'
bad "min above max" 'x.y int min=64 max=1' "1: min=64 is above max=1: no value could be written"
bad "default above max, checked by the handler" 'x.y int min=1 max=64 default=100' \
	'1: default="100": invalid value (integers 1..64)'
bad "default of a vector checked element by element" 'x.y int[2] min=0 max=9 default="1 10"' \
	'1: default="1 10": invalid value (integers 0..9)'
bad "u8 bound beyond 255" 'x.y u8 max=300' "1: max=300: out of the type's range"
bad "unterminated quote" 'x.y string maxlen=8 desc="oops' "1: unterminated quote"
bad "empty path component" 'app..x int' "1: empty path component"
bad "empty last component" 'app.x. int' "1: empty path component"
bad "vector of a single-value kind" 'x.y bool[2]' "1: bool cannot be a vector"
bad "bitmap without bits" 'x.y bitmap' "1: bitmap needs bits=1..65536"
bad "leaf that is also a directory" 'app.x int
app.x.y int' "2: app.x is a tunable (line 1) and a directory (line 2)"
bad "directory that is also a leaf" '# c
app.x.y int
app.x int' "3: app.x is a tunable (line 3) and a directory (line 2)"
bad "below a subsystem entry" 'kernel.modprobe.x int' "1: kernel.modprobe is an entry, so it cannot be a directory too"
bad "a subsystem directory" 'kernel int' "1: kernel: a directory of the tree already has this name"
bad "duplicate" 'x.y int
x.y int' "2: already declared on line 1"
# Sorted plainly, "app/x-y" falls between "app/x" and "app/x/y": the check must still see them.
bad "leaf and directory with a sibling sorting between" 'app.x int
app.x-y int
app.x.y int' "3: app.x is a tunable (line 1) and a directory (line 3)"
bad "the clash at the earliest line is the one reported" 'a.b.c int
q int
q int
a.b int' "3: already declared on line 2"
# A directory's tunables register as one table: the refusal still names the earliest line.
bad "the earliest refused default, across directories" 'b.x int min=0 max=5 default=9
a.y int min=0 max=5 default=1
a.z int min=0 max=5 default=7' '1: default="9": invalid value (integers 0..5)'
bad "the earliest refused default, in directory order too" 'a.x int min=0 max=5 default=9
b.y int min=0 max=5 default=7' '1: default="9": invalid value (integers 0..5)'
bad "a clash among good rows of one directory" 'kernel.a int
kernel.modprobe int
kernel.b int' "2: kernel.modprobe: already registered (by rcusysd or another tunables file)"
bad "clash with a subsystem, with its path" 'kernel.modprobe int' \
	"1: kernel.modprobe: already registered (by rcusysd or another tunables file)"

cat > "$dir/tunables.conf" <<'CONF'
app.greeting  string maxlen=16 default="hello world" desc="a greeting"
app.workers   int    min=1 max=64 default=4 mode=0644 desc="worker threads"
app.secret    int    mode=0600
eth0.200/forwarding int default=1
net.conf.eth0/400.mtu int default=1400
/vlan/eth0.300/mtu int default=1300
app.ports     int[3] default="80 443 8080"
app.level     u8     max=9 default=3
app.timeout   ms_jiffies default=1000
app.interval  jiffies default=5
app.cpus      bitmap bits=64 default=0-3,8
app.big       ulong  default=18446744073709551615
CONF
printf 'app.workers = 8\neth0.200/forwarding = 7\nnet/conf/eth0.400/mtu = 9000\napp.workers = 99\napp.nonexistent = 1\n' > "$dir/settings.conf"
printf '#!/bin/sh\nkill -SEGV $$\n' > "$dir/crash"
printf '#!/bin/sh\ncat > /dev/null\nexit 3\n' > "$dir/core-helper"
chmod 755 "$dir/crash" "$dir/core-helper"
"$rcusysd" --no-fuse --no-persist --log-level debug -d "$dir/run" -t "$dir/tunables.conf" \
	-c "$dir/settings.conf" 2> "$dir/log" &
pid=$!
for _ in $(seq 600); do [ -S "$dir/run/events.sock" ] && break; sleep 0.05; done
S=(--socket "$dir/run/control.sock")
check "declared string" "hello world" "$("$cli" "${S[@]}" -n app.greeting)"
# app.workers = 8, then app.workers = 99: as in systemd-sysctl, the later line replaces the earlier.
check "a later assignment replaces an earlier one; refused, the default stays" "4" \
	"$("$cli" "${S[@]}" -n app.workers)"
check "description" "app.workers = worker threads" "$("$cli" "${S[@]}" -d app.workers 2>&1)"
check "over the bound refused" "1" "$("$cli" "${S[@]}" -q -w app.workers=65 >/dev/null 2>&1; echo $?)"
check "old value kept" "4" "$("$cli" "${S[@]}" -n app.workers)"
check "too long refused" "1" "$("$cli" "${S[@]}" -q -w app.greeting=0123456789abcdefg >/dev/null 2>&1; echo $?)"
check "vector default" "80	443	8080" "$("$cli" "${S[@]}" -n app.ports)"
check "u8 default" "3" "$("$cli" "${S[@]}" -n app.level)"
check "u8 bound from max=" "1" "$("$cli" "${S[@]}" -q -w app.level=10 >/dev/null 2>&1; echo $?)"
check "ms_jiffies default" "1000" "$("$cli" "${S[@]}" -n app.timeout)"
check "jiffies default" "5" "$("$cli" "${S[@]}" -n app.interval)"
check "bitmap default" "0-3,8" "$("$cli" "${S[@]}" -n app.cpus)"
check "ulong without bounds takes its whole range" "18446744073709551615" "$("$cli" "${S[@]}" -n app.big)"
check "subsystem entries" "/sbin/modprobe" "$("$cli" "${S[@]}" -n kernel.modprobe)"
# A declared path reaches the same entry as a setting or a query of that path.
check "paths: first separator decides, as for settings" "eth0.200/forwarding = 7
net.conf.eth0/400.mtu = 9000
vlan.eth0/300.mtu = 1300" "$("$cli" "${S[@]}" -a | grep -E '^(eth0|net|vlan)')"
check "paths: '/' form reaches a dotted name" "7" "$("$cli" "${S[@]}" -n /eth0/200.forwarding)"
check "a second rcusysd says why it cannot serve" \
	"err rcusysd: cannot serve $dir/run/control.sock: another rcusysd is serving this run directory
rc=1" "$(timeout 20 "$rcusysd" --no-fuse --no-persist -d "$dir/run" 2>&1 | untime; echo "rc=${PIPESTATUS[0]}")"
long=$dir/$(printf 'x%.0s' $(seq 110))
check "an over-long socket path says the limit" \
	"err rcusysd: cannot serve $long/control.sock: File name too long (a socket path is at most 107 bytes, and the run directory's at most about 80)
rc=1" "$(timeout 20 "$rcusysd" --no-fuse --no-persist -d "$long" 2>&1 | untime; echo "rc=${PIPESTATUS[0]}")"
# control.sock fits there, the temporary name it is bound under first does not.
long=$dir/$(printf 'x%.0s' $(seq $((90 - ${#dir} - 1))))
check "a run directory too long for the temporary name says the limit" \
	"err rcusysd: cannot serve $long/control.sock: File name too long (a socket path is at most 107 bytes, and the run directory's at most about 80)
rc=1 left: none" "$(timeout 20 "$rcusysd" --no-fuse --no-persist -d "$long" 2>&1 | untime
	echo "rc=${PIPESTATUS[0]} left: $(ls -A "$long" | grep -v '^state.conf' || echo none)")"
check "event: no daemon there, said so" \
	"rcusysd: cannot connect to $dir/none/events.sock: No such file or directory (no rcusysd serves this run directory; see -d)" \
	"$("$rcusysd" -d "$dir/none" -e "MODULE x" 2>&1)"
check "event: empty hotplug runs nothing" "OK 0" "$("$rcusysd" -d "$dir/run" -e "UEVENT block add /devices/x")"
check "event: unknown, the known ones named" \
	"ERR 22 unknown event: known events are MODULE, UEVENT, POWEROFF, OCFS2_LEAVE, RUN" \
	"$("$rcusysd" -d "$dir/run" -e "NOPE")"
check "event: wrong arguments" "ERR 22 usage: MODULE NAME" "$("$rcusysd" -d "$dir/run" -e "MODULE")"
check "event: POWEROFF refused without --allow-poweroff" \
	"ERR 1 POWEROFF is refused: rcusysd was started without --allow-poweroff" \
	"$("$rcusysd" -d "$dir/run" -e "POWEROFF")"
check "failed start-up settings reported at start with the reason" \
	"err rcusysd: $dir/settings.conf:4: setting app.workers: invalid value (integers 1..64)
err rcusysd: $dir/settings.conf:5: setting app.nonexistent: no such entry" \
	"$(grep "settings.conf" "$dir/log" | untime)"
check "event: missing modprobe" "ERR 2 No such file or directory" \
	"$("$cli" "${S[@]}" -q -w kernel.modprobe=/nonexistent/modprobe; "$rcusysd" -d "$dir/run" -e "MODULE foo")"
"$cli" "${S[@]}" -q -w kernel.modprobe=/bin/true
"$rcusysd" -d "$dir/run" -e "MODULE bar" > /dev/null
"$cli" "${S[@]}" -q -w "kernel.core_pattern=|$dir/core-helper"
"$rcusysd" -d "$dir/run" -e "RUN $dir/crash" > /dev/null
for _ in $(seq 200); do grep -q "crash record" "$dir/log" && break; sleep 0.05; done
check "a core-pipe helper's exit status is reported" \
	"warning rcusysd: $dir/crash (pid N) killed by signal 11: crash record helper exited with status 3" \
	"$(grep "crash record" "$dir/log" | untime | sed 's/(pid [0-9]*)/(pid N)/')"
kill -TERM "$pid"
wait "$pid"
check "exit 0 on SIGTERM, though a start-up setting failed" "0" "$?"
check "sockets removed" "no" "$([ -e "$dir/run/control.sock" ] || [ -e "$dir/run/events.sock" ] && echo yes || echo no)"
check "failed helper call logged as a warning" \
	"warning rcusysd: helper /nonexistent/modprobe [/nonexistent/modprobe -q -- foo] -> -2" \
	"$(grep "helper /nonexistent/modprobe" "$dir/log" | untime)"
check "helper call logged at debug level" "debug rcusysd: helper /bin/true [/bin/true -q -- bar] -> 0" \
	"$(grep "helper /bin/true" "$dir/log" | untime)"
check "one line per event, each with a time and a level" "" \
	"$(grep -vE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z (err|warning|notice|info|debug) rcusysd: ' "$dir/log")"

# Under systemd (JOURNAL_STREAM set) the journal's priority prefixes replace the time.
JOURNAL_STREAM=8:1 "$rcusysd" --no-fuse --no-persist -d "$dir/run" -t "$dir/bad.conf" 2> "$dir/jlog"
check "journal priority prefix under systemd" "<3>rcusysd: $dir/bad.conf:1: kernel.modprobe: already registered (by rcusysd or another tunables file)" "$(cat "$dir/jlog")"
# Helper calls are debug lines, not shown at the default level.
"$rcusysd" --no-fuse --no-persist -d "$dir/run" 2> "$dir/log2" &
pid=$!
for _ in $(seq 600); do [ -S "$dir/run/events.sock" ] && break; sleep 0.05; done
"$cli" "${S[@]}" -q -w kernel.modprobe=/bin/true
check "helper call at the default level" "OK 0" "$("$rcusysd" -d "$dir/run" -e "MODULE foo")"
kill -TERM "$pid"
wait "$pid"
check "helper calls hidden at the default level" "" "$(grep helper "$dir/log2")"
# --owner: the named user gets the owner bits of the entries' modes.
check "--owner refuses an unknown user" "err rcusysd: --owner no-such-user-x: no such user \"no-such-user-x\"" \
	"$("$rcusysd" --owner no-such-user-x 2>&1 | untime; exit "${PIPESTATUS[0]}")"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$dir"
	as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$cli" "${S[@]}" "$@" 2>&1; }
	for owner in "" 65534:65534; do
		"$rcusysd" --no-fuse --no-persist -d "$dir/run" -t "$dir/tunables.conf" \
			${owner:+--owner "$owner"} 2> "$dir/log3" &
		pid=$!
		for _ in $(seq 600); do [ -S "$dir/run/events.sock" ] && break; sleep 0.05; done
		if [ -n "$owner" ]; then
			check "--owner: the owner writes a 0644 entry" "app.workers = 5" "$(as_nobody -w app.workers=5)"
			check "--owner: the owner reads a 0600 entry" "0" "$(as_nobody -n app.secret)"
		else
			check "without --owner: nobody may not write a 0644 entry" \
				"rcusysctl: permission denied on key 'app.workers'" "$(as_nobody -w app.workers=5)"
		fi
		check "--owner: root still writes" "app.workers = 6" "$("$cli" "${S[@]}" -w app.workers=6)"
		kill -TERM "$pid"
		wait "$pid"
	done
else
	skip_part "--owner needs root and setpriv"
fi
# A server answering on events.sock is not replaced: the start is refused
# and its file stays (a stale file nobody accepts on is replaced).
rm -rf "$dir/run2"; mkdir -m 700 "$dir/run2"
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); print("up", flush=True)
time.sleep(30)' "$dir/run2/events.sock" > "$dir/listener.out" &
listener=$!
for _ in $(seq 600); do grep -q up "$dir/listener.out" && break; sleep 0.05; done
check "a live events socket is not taken over" \
	"err rcusysd: cannot serve $dir/run2/events.sock: Address already in use (another rcusysd is serving this run directory)
rc=1" "$(timeout 20 "$rcusysd" --no-fuse --no-persist -d "$dir/run2" 2>&1 | untime | grep -v '^info'
	echo "rc=${PIPESTATUS[0]}")"
check "its file stays" "yes" "$([ -S "$dir/run2/events.sock" ] && echo yes || echo no)"
kill "$listener"; wait "$listener" 2>/dev/null
check "--version" "rcusysd $(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$(dirname "$0")/../../meson.build" | head -1)" \
	"$("$rcusysd" --version)"

finish rcusysd
