#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysd's store keeps values exactly and tells what it keeps: an empty
# value and blanks at either end come back byte for byte after a restart
# (the longest value of a long path: persist-faults); a settings line "key =" sets the
# empty value; rcusysctl --kept lists what is kept with its origin; a text
# state file of rcusysd 0.1 is migrated once at start, logged, the old file
# kept; a generation read before a restart never matches after it. A
# damaged record before the tail, or a flipped byte of the magic, stops the
# start, the file left; a torn tail is cut.
set -u
rcusysd=${1:?usage: test_rcusysd_store.sh RCUSYSD RCUSYSCTL}
cli=${2:?usage: test_rcusysd_store.sh RCUSYSD RCUSYSCTL}
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"

S=(--socket "$dir/run/control.sock")
state=$dir/state/state.conf
cat > "$dir/tunables.conf" <<EOT
app.modprobe string maxlen=256 default=/sbin/modprobe
app.blanks string maxlen=64 default=none
app.fromfile string maxlen=64 default=nonempty
EOT
start() {
	"$rcusysd" --no-fuse -d "$dir/run" -t "$dir/tunables.conf" --state "$state" "$@" 2>> "$dir/log" &
	pid=$!
	for _ in $(seq 200); do [ -S "$dir/run/events.sock" ] && return 0; sleep 0.05; done
	echo "rcusysd did not start:"; cat "$dir/log"; exit 1
}
stop() {
	kill -TERM "$pid"
	wait "$pid"
	pid=
	rm -f "$dir/run/control.sock" "$dir/run/events.sock"
}
get() { "$cli" "${S[@]}" -n "$1"; }
# One request on the control socket, raw (rcusysctl -w strips blanks, as
# procps does); prints the reply's first line.
sock() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
sys.stdout.write(s.makefile("rb").readline().decode().rstrip("\n"))' "$dir/run/control.sock" "$1"
}

printf 'app.fromfile =\n' > "$dir/settings.conf"
start -c "$dir/settings.conf"
check "a settings line 'key =' sets the empty value" "" "$(get app.fromfile)"
"$cli" "${S[@]}" -q -w "app.modprobe="
check "SET of blanks at either end" "OK" "$(sock "SET app.blanks   both ends  ")"
check "the blanks are live" "[OK   both ends  ]" "[$(sock "GET app.blanks")]"
stop
start -c "$dir/settings.conf"
check "an acknowledged empty value comes back empty (not the default helper)" "[]" \
	"[$(get app.modprobe)]"
check "blanks at either end come back" "[OK   both ends  ]" "[$(sock "GET app.blanks")]"
check "--kept lists the kept values with their origin" \
	"app.blanks =   both ends  	# client
app.modprobe = 	# client" "$("$cli" --kept="$state" | sed 's/, [0-9TZ:-]*$//')"
check "--kept -N lists the names" "app.blanks app.modprobe" "$("$cli" --kept="$state" -N | tr '\n' ' ' | sed 's/ $//')"

# A generation read before a restart never matches after it.
gen=$("$cli" "${S[@]}" --generation -n app.blanks)
stop
start -c "$dir/settings.conf"
after=$("$cli" "${S[@]}" --generation -n app.blanks)
check "a restart changes the generation" "yes" "$([ "$gen" != "$after" ] && echo yes || echo "no: $gen")"
"$cli" "${S[@]}" -q -w app.blanks=x1
"$cli" "${S[@]}" -q --if-generation "$gen" -w app.blanks=stale 2> /dev/null
check "SETIF with a generation from before the restart is refused" "x1" "$(get app.blanks)"
stop

# A tunable removed and declared again keeps its runtime value: the default
# its declaration applies is no runtime write and never pins itself.
printf 'app.r = 3\n' > "$dir/settings.conf"
printf 'app.r int default=1\n' >> "$dir/tunables.conf"
start -c "$dir/settings.conf"
"$cli" "${S[@]}" -q -w app.r=5
grep -v '^app.r ' "$dir/tunables.conf" > "$dir/t2" && cp "$dir/tunables.conf" "$dir/t1" && cp "$dir/t2" "$dir/tunables.conf"
reloads=$(grep -c reloaded "$dir/log")
reload() {
	kill -HUP "$pid"
	for _ in $(seq 200); do [ "$(grep -c reloaded "$dir/log")" -gt "$reloads" ] && break; sleep 0.05; done
	reloads=$(grep -c reloaded "$dir/log")
}
reload
cp "$dir/t1" "$dir/tunables.conf"
reload
check "a re-declared tunable has its runtime value back" "5" "$(get app.r)"
check "the store kept the runtime write, not the default" "app.r = 5	# client" \
	"$("$cli" --kept="$state" | grep '^app.r ' | sed 's/, [0-9TZ:-]*$//')"
stop
start -c "$dir/settings.conf"
check "and a restart too" "5" "$(get app.r)"
"$cli" "${S[@]}" --reset app.r
check "--reset: the settings file's value" "3" "$(get app.r)"
stop

# A declaration moved to an earlier-sorted tunables.d file keeps its tunable,
# its entry (the same generation) and its value.
mkdir -p "$dir/tunables.d"
printf 'app.m1 int default=1\n' > "$dir/tunables.d/10-a.conf"
printf 'app.mv int default=2\n' > "$dir/tunables.d/20-b.conf"
start --tunables-dirs "$dir/tunables.d"
"$cli" "${S[@]}" -q -w app.mv=6
gen=$("$cli" "${S[@]}" --generation -n app.mv)
printf 'app.m1 int default=1\napp.mv int default=2\n' > "$dir/tunables.d/10-a.conf"
printf '\n' > "$dir/tunables.d/20-b.conf"
reloads=$(grep -c reloaded "$dir/log")
reload
check "a declaration moved to an earlier file keeps its tunable and value" "6 $gen" \
	"$(get app.mv) $("$cli" "${S[@]}" --generation -n app.mv)"
printf 'app.m1 int default=1\n' > "$dir/tunables.d/10-a.conf"
printf 'app.mv int default=2\n' > "$dir/tunables.d/20-b.conf"
reload
check "and moved back to a later one" "6" "$(get app.mv)"
stop

# rcusysctl -p and --system apply settings, not runtime writes: nothing kept,
# and an edited sysctl.d file wins at the next reload.
mkdir -p "$dir/sysctl.d"
printf 'app.fromfile = by-system\n' > "$dir/sysctl.d/50-app.conf"
start --sysctl-dirs "$dir/sysctl.d"
RCUSYSCTL_SYSTEM_DIRS=$dir/sysctl.d "$cli" "${S[@]}" -q --system
printf 'app.r = 9\n' > "$dir/p.conf"
"$cli" "${S[@]}" -q -p "$dir/p.conf"
check "-p applied" "9" "$(get app.r)"
check "-p and --system keep nothing in the store" "" "$("$cli" --kept="$state" | grep -E '^app.(r|fromfile) ')"
printf 'app.fromfile = edited\n' > "$dir/sysctl.d/50-app.conf"
reloads=$(grep -c reloaded "$dir/log")
reload
check "the edited file wins at reload" "edited" "$(get app.fromfile)"
stop

# A text state file (rcusysd 0.1) is migrated once: applied, logged, kept beside.
rm -rf "$dir/state"
mkdir -m 755 "$dir/state"
printf 'app.blanks = migrated\n' > "$state"
chmod 600 "$state"
start
check "the text state file's value applies" "migrated" "$(get app.blanks)"
check "the migration is logged" "1" "$(grep -c 'migrated 1 values of a text state file' "$dir/log")"
check "the old file is kept" "app.blanks = migrated" "$(cat "$state".migrated-*)"
check "the store keeps the value" "app.blanks = migrated	# state file" \
	"$("$cli" --kept="$state" | sed 's/, [0-9TZ:-]*$//')"
stop
start
check "no second migration" "1" "$(grep -c 'migrated 1 values' "$dir/log")"
check "the value is still there" "migrated" "$(get app.blanks)"
stop
# A state file that cannot be read stops the start (rcusysd used to start
# empty, and its next write replaced the file with a journal of nothing); a
# torn tail is still cut. The damage: one byte of the first of two records.
rm -rf "$dir/state"
start
"$cli" "${S[@]}" -q -w app.blanks=first-value
"$cli" "${S[@]}" -q -w app.modprobe=/sbin/second
stop
cp "$state" "$dir/good.journal"
python3 -c 'import sys
p = sys.argv[1]; d = bytearray(open(p, "rb").read())
d[d.index(b"first-value")] ^= 0x20
open(p, "wb").write(d)' "$state"
cp "$state" "$dir/bad.journal"
timeout 20 "$rcusysd" --no-fuse -d "$dir/run" -t "$dir/tunables.conf" --state "$state" 2> "$dir/err"
rc=$?
check "a damaged record before the tail stops the start" "1" "$rc"
check "the message names the file, the byte and the errno" "1 1" \
	"$(grep -c "$state: the record at byte [0-9]* is damaged and is not a torn tail" "$dir/err") $(grep -c "cannot read the state file $state: Bad message (not starting" "$dir/err")"
check "the damaged file is left as it was" "same" "$(cmp -s "$state" "$dir/bad.journal" && echo same)"
# A flipped byte of the journal's magic is damage too (it used to be
# "migrated" as text: 0 values, an empty journal written over the file).
cp "$dir/good.journal" "$state"
printf 'X' | dd of="$state" bs=1 seek=0 conv=notrunc status=none
cp "$state" "$dir/bad.journal"
timeout 20 "$rcusysd" --no-fuse -d "$dir/run" -t "$dir/tunables.conf" --state "$state" 2> "$dir/err"
rc=$?
check "a flipped magic byte stops the start" "1" "$rc"
check "the log names the file, the byte and the reason" "1" \
	"$(grep -c "$state: damaged: neither a journal .* (byte [0-9]*: a NUL byte); from byte 8 on it reads as a journal of 3 records" "$dir/err")"
check "the file with the flipped byte is left as it was" "same" \
	"$(cmp -s "$state" "$dir/bad.journal" && echo same)"
check "nothing was migrated" "" "$(ls "$state".migrated-* 2>/dev/null)"
# A torn tail: the last record cut by 3 bytes (a crash during its append).
head -c -3 "$dir/good.journal" > "$state"
start
check "a torn tail is cut, the records before it kept" "first-value /sbin/modprobe" \
	"$(get app.blanks) $(get app.modprobe)"
check "the cut is logged" "1" "$(grep -c 'the last [0-9]* bytes are a record cut by a crash' "$dir/log")"
stop
finish rcusysd-store
