#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysd under systemd's protocols: READY=1 (with STATUS=) / RELOADING=1 /
# READY=1 (with STATUS=) / STOPPING=1 on NOTIFY_SOCKET (Type=notify, SIGHUP reload, SIGTERM), and the
# generated unit file: `systemd-analyze verify` clean, its exposure score
# printed when systemd-analyze is here.
set -u
rcusysd=$(realpath "${1:?usage: test_rcusysd_systemd.sh RCUSYSD UNIT}")
unit=${2:?usage: test_rcusysd_systemd.sh RCUSYSD UNIT}
dir=$(mktemp -d)
pid= listener=
trap 'kill -KILL $pid $listener 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"
command -v python3 > /dev/null || skip "python3 is not installed (it plays systemd's notify socket)"

# Collects datagrams until STOPPING=1 (or 60 s, a hang guard), one per line.
python3 - "$dir/notify.sock" > "$dir/notes" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
print("listening", flush=True)
while True:
    try:
        msg = s.recv(4096).decode()
    except socket.timeout:
        break
    print(msg.replace("\n", " "), flush=True)
    if "STOPPING=1" in msg:
        break
PY
listener=$!
for _ in $(seq 200); do [ -S "$dir/notify.sock" ] && break; sleep 0.05; done
NOTIFY_SOCKET=$dir/notify.sock "$rcusysd" --no-fuse --no-persist -d "$dir/run" 2> "$dir/log" &
pid=$!
for _ in $(seq 200); do grep -q READY "$dir/notes" && break; sleep 0.05; done
kill -HUP "$pid"
for _ in $(seq 200); do [ "$(grep -c READY "$dir/notes")" = 2 ] && break; sleep 0.05; done
kill -TERM "$pid"
wait "$pid"
check "exit 0" "0" "$?"
wait "$listener"
listener=
# STATUS= (systemctl status) rides with READY=1: the tunables and how the
# start or the reload went (rcusysd(8), SYSTEMD).
check "READY with STATUS=, RELOADING with the monotonic time, READY with STATUS=, STOPPING" "listening
READY=1 STATUS=N tunables; last start ok
RELOADING=1 MONOTONIC_USEC=N
READY=1 STATUS=N tunables; last reload ok
STOPPING=1" "$(sed -E 's/MONOTONIC_USEC=[0-9]+/MONOTONIC_USEC=N/; s/STATUS=[0-9]+ /STATUS=N /' "$dir/notes")"

if command -v systemd-analyze > /dev/null; then
	# The unit names the installed path; check it against the built binary.
	sed -E "s|^(Exec[A-Za-z]+=)[^ ]*/rcusysd |\1$rcusysd |" "$unit" > "$dir/rcusysd.service"
	check "unit: the configuration is checked before a start and a reload" "2" \
		"$(grep -cE '^Exec(StartPre|Reload)=/[^ ]*/sbin/rcusysd --check-config ' "$unit")"
	check "unit: ExecStart at the installed path" "yes" \
		"$(grep -qE '^ExecStart=/[^ ]*/sbin/rcusysd ' "$unit" && echo yes || echo no)"
	check "unit: systemd-analyze verify is clean" "" \
		"$(systemd-analyze verify --man=no "$dir/rcusysd.service" 2>&1)"
	score=$(systemd-analyze security --offline=yes "$dir/rcusysd.service" 2>/dev/null |
		sed -n 's/.*Overall exposure level for rcusysd.service: \([0-9.]*\).*/\1/p')
	echo "unit: systemd-analyze security exposure $score"
	check "unit: exposure below 5" "yes" "$(awk -v s="$score" 'BEGIN { print (s != "" && s < 5) ? "yes" : "no" }')"
else
	skip_part "systemd-analyze is not installed: the unit file is not verified"
fi
finish rcusysd-systemd
