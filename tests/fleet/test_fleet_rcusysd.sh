#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysd --etcd against a real single-node etcd on 127.0.0.1 (free ports,
# data dir under a temporary folder), read back through rcusysd's control
# socket with rcusysctl. Covers: etcd's values win over the -c files and
# the state file, a put reaching the tree, a refused value (old value kept,
# status key written, counted under rcusysd.etcd), values from etcd kept
# out of the state file while local writes stay in it, a reload (SIGHUP)
# that keeps the sync running, SIGTERM with the sync running, a restart
# while etcd is down (served from the -c and state files, etcd's values
# once it is back), SIGTERM while etcd is unreachable; then the
# example systemd drop-in (examples/systemd/rcusysd-etcd.conf.in) over the
# stock unit, checked with systemd-analyze where it is installed. Waits are
# bounded only as a hang guard. Skips (77) when etcd is not installed.
set -u
usage="usage: test_fleet_rcusysd.sh RCUSYSD RCUSYSCTL UNIT DROP-IN"
rcusysd=$(realpath "${1:?$usage}")
cli=${2:?$usage}
unit=${3:?$usage}
dropin=${4:?$usage}
. "$(dirname "$0")/../check.sh"
tmp=$(mktemp -d)
etcd_pid= pid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null && wait "$etcd_pid" 2>/dev/null
	if [ "$failed" -gt 0 ] || [ -n "${FLEET_TEST_LOGS:-}" ]; then
		echo "--- rcusysd log"; cat "$tmp/log"
		echo "--- etcd.log (tail)"; tail -20 "$tmp/etcd.log"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
prefix=/rcustring/web
guard=200 # tenths of a second: a hang guard, not a timing assertion

# A single-node etcd on free loopback ports: $url, ctl, run_etcd, $etcd_pid.
. "$(dirname "$0")/etcd.sh"

S=(--socket "$tmp/run/control.sock")
get() { "$cli" "${S[@]}" -n "$1" 2>&1; }
wait_value() { wait_output "$2" "$3 ($1)" get "$1"; }
# rcusysd names itself in status keys by --etcd-host (containers may share a host name).
status_key() { ctl get --print-value-only "/rcustring-status/web/fleet-test-host/$1"; }
state_keys() { "$cli" --kept="$tmp/state/state.conf" -N 2>/dev/null | sort | tr '\n' ' '; }
# The tree shows etcd's value before the sync's write has rewritten the
# state file (the change callback runs after the change is published).
wait_state_keys() { wait_output "$1" "$2" state_keys; }

cat > "$tmp/tunables.conf" <<'EOF'
app.workers  int     min=1 max=64 default=4
app.greeting string  maxlen=32 default=hello
app.local    int     min=0 max=100 default=0
EOF
# The -c file and the state file set what etcd sets too: etcd must win.
printf 'app.workers = 8\napp.greeting = from-conf\n' > "$tmp/settings.conf"
mkdir -p "$tmp/state"
printf 'app.workers = 9\n' > "$tmp/state/state.conf"
ctl put "$prefix/app/workers" 16 >/dev/null
# Not kernel.modprobe: entries root executes are refused to etcd without
# --etcd-allow-exec (rcusysd(8), SECURITY MODEL; attack-trust tests that).
ctl put "$prefix/kernel/core_uses_pid" 1 >/dev/null

"$rcusysd" --no-fuse -d "$tmp/run" -t "$tmp/tunables.conf" -c "$tmp/settings.conf" \
	--state "$tmp/state/state.conf" --etcd "$url" --etcd-prefix "$prefix/" \
	--etcd-host fleet-test-host 2>>"$tmp/log" &
pid=$!
until_true test -S "$tmp/run/events.sock"

# --- first read: etcd's values win over the -c file and the state file ---
wait_value rcusysd.etcd.connected 1 "connected"
wait_value app.workers 16 "etcd wins over -c and the state file"
wait_value kernel.core_uses_pid 1 "first read"
check "a -c value etcd does not set stays" from-conf "$(get app.greeting)"

# --- a put reaches the tree, and leaves the state file alone ---
# A mirrored value whose key the state file does not hold rewrites nothing
# (a rewrite renames a new file in: the inode changes).
wait_state_keys "" "state file: etcd's value took app.workers out"
inode=$(stat -c %i "$tmp/state/state.conf")
ctl put "$prefix/app/greeting" from-etcd >/dev/null
wait_value app.greeting from-etcd "put reaches rcusysd"
check "a mirrored value not in the state file does not rewrite it" "$inode" \
	"$(stat -c %i "$tmp/state/state.conf")"

# --- a refused value: the old value stays, the status key says why ---
ctl put "$prefix/app/workers" 100 >/dev/null # above its max, 64
for _ in $(seq $guard); do [ -n "$(status_key app/workers)" ] && break; sleep 0.1; done
wait_value rcusysd.etcd.refused 1 "refusal counted"
check "refused value leaves the old one" 16 "$(get app.workers)"
check "status key written" '"error":"EINVAL"' "$(status_key app/workers | grep -o '"error":"[A-Z]*"')"

# --- the state file keeps local writes, not etcd's values ---
check "local write accepted" "rc=0" "$("$cli" "${S[@]}" -q -w app.local=7 2>&1; echo "rc=$?")"
wait_state_keys "app.local " "state file: the local write, no value from etcd"
# A key written locally, then by etcd, leaves the state file: etcd holds it now.
"$cli" "${S[@]}" -q -w app.greeting=local-too
check "state file: a local write of a key etcd also sets" "app.greeting app.local " "$(state_keys)"
ctl put "$prefix/app/greeting" etcd-again >/dev/null
wait_value app.greeting etcd-again "put after a local write"
wait_state_keys "app.local " "state file: etcd's put took the key out"

# --- reload (SIGHUP) keeps the sync running, and etcd's values ---
# A value for an entry not declared yet is refused; the reload that
# declares it applies it.
ctl put "$prefix/app/later" 5 >/dev/null
wait_value rcusysd.etcd.refused 2 "a value for an undeclared entry refused"
for _ in $(seq $guard); do [ -n "$(status_key app/later)" ] && break; sleep 0.1; done
check "its status key says so" '"error":"ENOENT"' "$(status_key app/later | grep -o '"error":"[A-Z]*"')"
echo 'app.later    int     min=0 max=10 default=0' >> "$tmp/tunables.conf"
applied=$(get rcusysd.etcd.applied)
kill -HUP "$pid"
for _ in $(seq $guard); do grep -q reloaded "$tmp/log" && break; sleep 0.1; done
check "reloaded" 1 "$(grep -c 'reloaded' "$tmp/log")"
check "reload: the -c file does not overwrite etcd's value" etcd-again "$(get app.greeting)"
check "reload: nor a value etcd set before refusing the next" 16 "$(get app.workers)"
wait_value app.later 5 "the reload that declared it applied etcd's value"
for _ in $(seq $guard); do [ -z "$(status_key app/later)" ] && break; sleep 0.1; done
check "its status key cleared" "" "$(status_key app/later)"
ctl put "$prefix/app/workers" 32 >/dev/null
wait_value app.workers 32 "put after reload"
check "same sync after reload: counters kept" $((applied + 2)) "$(get rcusysd.etcd.applied)"
# One transaction of two keys written locally: one commit, and both leave
# the state file (the commit hook sees the first entry and lists the rest).
"$cli" "${S[@]}" -q -w app.greeting=local-3
"$cli" "${S[@]}" -q -w app.workers=33
check "state file: local writes of two keys etcd also sets" "app.greeting app.local app.workers " \
	"$(state_keys)"
"$cli" --etcd "$url" --prefix "$prefix/" -q -w app.greeting=txn app.workers=34
wait_value app.greeting txn "a transaction reaches rcusysd"
wait_value app.workers 34 "a transaction reaches rcusysd"
wait_state_keys "app.local " "state file: etcd's transaction took both keys out"
check "still connected after reload" 1 "$(get rcusysd.etcd.connected)"

# --- SIGTERM with the sync running: a clean exit ---
kill -TERM "$pid"
wait "$pid"
check "SIGTERM with the sync running: exit 0" 0 "$?"
pid=
check "no value from etcd logged" "" "$(grep -e from-etcd -e etcd-again "$tmp/log")"
check "state file after exit" "app.local = 7" "$("$cli" --kept="$tmp/state/state.conf" | cut -f1)"

# --- restart while etcd is down: own values first, etcd's once it is back ---
kill "$etcd_pid"
wait "$etcd_pid"
etcd_pid=
"$rcusysd" --no-fuse -d "$tmp/run" -t "$tmp/tunables.conf" -c "$tmp/settings.conf" \
	--state "$tmp/state/state.conf" --etcd "$url" --etcd-prefix "$prefix/" 2>>"$tmp/log" &
pid=$!
until_true test -S "$tmp/run/events.sock"
check "serves while etcd is down" 0 "$(get rcusysd.etcd.connected)"
check "etcd down: its last values were not persisted, the -c value holds" 8 "$(get app.workers)"
check "etcd down: the local write came back from the state file" 7 "$(get app.local)"
run_etcd
check "etcd restarted from its data dir" 1 "$([ -n "$etcd_pid" ] && echo 1)"
wait_value rcusysd.etcd.connected 1 "reconnected by itself"
wait_value app.workers 34 "etcd's value once it is back"
# SIGTERM while the sync is in its reconnect back-off.
kill "$etcd_pid"
wait "$etcd_pid"
etcd_pid=
wait_value rcusysd.etcd.connected 0 "etcd gone again"
kill -TERM "$pid"
wait "$pid"
check "SIGTERM while etcd is unreachable: exit 0" 0 "$?"
pid=

# --- usage: --etcd needs --etcd-prefix ---
check "--etcd without --etcd-prefix" 2 "$("$rcusysd" --no-fuse -d "$tmp/run" --no-persist \
	--etcd "$url" 2>/dev/null; echo "$?")"
check "--etcd with an empty prefix: start refused" 1 "$("$rcusysd" --no-fuse -d "$tmp/run" \
	--no-persist --etcd "$url" --etcd-prefix '' 2>/dev/null; echo "$?")"

# --- the drop-in: a clean unit, etcd's options on the command line ---
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$tmp/units/rcusysd.service.d"
	sed -E "s|^(Exec[A-Za-z]+=)[^ ]*/rcusysd |\1$rcusysd |" "$unit" > "$tmp/units/rcusysd.service"
	sed -E "s|^ExecStart=[^ ]*/rcusysd|ExecStart=$rcusysd|" "$dropin" \
		> "$tmp/units/rcusysd.service.d/etcd.conf"
	check "drop-in: systemd-analyze verify is clean" "" \
		"$(systemd-analyze verify --man=no "$tmp/units/rcusysd.service" 2>&1)"
	check "drop-in: the network is open to etcd" "yes" "$(systemd-analyze security --offline=yes \
		"$tmp/units/rcusysd.service" 2>/dev/null | grep -q 'PrivateNetwork=.*has access' &&
		echo yes || echo no)"
	# Its command line parses: rcusysd stops at the usage check, not later.
	cmd=$(sed -n 's/^ExecStart=\(.\+\)/\1/p' "$tmp/units/rcusysd.service.d/etcd.conf")
	check "drop-in: rcusysd accepts its options" "rc=0" \
		"$($cmd --help >/dev/null 2>&1; echo "rc=$?")"
else
	echo "SKIP: systemd-analyze is not installed: the drop-in is not verified"
fi
finish fleet-rcusysd
