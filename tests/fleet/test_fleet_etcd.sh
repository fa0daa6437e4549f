#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Two hosts (fleet-host) mirror one etcd prefix from a real single-node etcd
# on 127.0.0.1 (free ports, data dir under a temporary folder), read back
# through their control sockets with rcusysctl. Covers: the first read, a
# put reaching both, refused values (old value kept, status key written,
# a later valid put applies), etcd SIGKILLed during puts and restarted from
# its data dir, and a host that resumes at a compacted revision. Waits are
# bounded only as a hang guard. Skips (77) when etcd is not installed.
set -u
host_bin=${1:?usage: test_fleet_etcd.sh PATH-TO-fleet-host PATH-TO-rcusysctl PATH-TO-etcd-probe}
cli=${2:?usage: test_fleet_etcd.sh PATH-TO-fleet-host PATH-TO-rcusysctl PATH-TO-etcd-probe}
probe=${3:?usage: test_fleet_etcd.sh PATH-TO-fleet-host PATH-TO-rcusysctl PATH-TO-etcd-probe}
. "$(dirname "$0")/../check.sh"

tmp=$(mktemp -d)
etcd_pid=
declare -A host_pid
cleanup() {
	for h in "${!host_pid[@]}"; do
		kill -CONT "${host_pid[$h]}" 2>/dev/null
		kill "${host_pid[$h]}" 2>/dev/null && wait "${host_pid[$h]}" 2>/dev/null
	done
	[ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null && wait "$etcd_pid" 2>/dev/null
	if [ "$failed" -gt 0 ] || [ -n "${FLEET_TEST_LOGS:-}" ]; then
		for f in "$tmp"/*.err; do echo "--- $f"; cat "$f"; done
		echo "--- etcd.log (tail)"
		tail -20 "$tmp/etcd.log"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
prefix=/rcustring/web
guard=200 # tenths of a second: a hang guard, not a timing assertion

# A single-node etcd on free loopback ports: $url, ctl, run_etcd, $etcd_pid;
# the hosts' helpers (start_host, host_get, host_wait).
. "$(dirname "$0")/etcd.sh"

stop_host() {
	kill "${host_pid[$1]}"
	wait "${host_pid[$1]}"
	check "$1 stopped cleanly" 0 "$?"
	unset "host_pid[$1]"
}
status_value() { ctl get --print-value-only "$1"; }
wait_status_key() { until_true test -n "$(status_value "$1")"; }

# --- first read, then a put reaching both hosts ---
ctl put "$prefix/kernel/modprobe" /usr/sbin/modprobe >/dev/null
ctl put "$prefix/net/core/somaxconn" 128 >/dev/null # the tree's default: nothing to write
start_host a "$url" "$prefix/"
start_host b "$url" "$prefix/"
for h in a b; do
	host_wait $h kernel.modprobe /usr/sbin/modprobe "first read"
	host_wait $h etcd.connected 1 "connected"
done
ctl put "$prefix/kernel/core_pattern" '/var/core/%e.%p' >/dev/null
ctl put "$prefix/vm/swappiness" 10 >/dev/null
for h in a b; do
	host_wait $h kernel.core_pattern '/var/core/%e.%p' "put reaches"
	host_wait $h vm.swappiness 10 "put reaches"
done
rev=$(ctl get "$prefix/vm/swappiness" -w json | sed 's/.*"mod_revision":\([0-9]*\).*/\1/')
for h in a b; do
	host_wait $h etcd.revision "$rev" "revision shown"
done

# --- refused values: the old value stays, the status key says why ---
long=$(printf 'x%.0s' $(seq 100)) # core_pattern holds 63 bytes at most
ctl put "$prefix/kernel/core_pattern" "$long" >/dev/null
ctl put "$prefix/net/core/somaxconn" 5 >/dev/null # below its minimum, 16
ctl put "$prefix/kernel/nonexistent" 1 >/dev/null
# A string handler would keep what comes before the newline: refused whole.
ctl put "$prefix/kernel/modprobe" "$(printf '/half\napplied')" >/dev/null
for h in a b; do
	for k in kernel/core_pattern net/core/somaxconn kernel/nonexistent kernel/modprobe; do
		wait_status_key "/rcustring-status/web/$h/$k"
	done
	host_wait $h etcd.refused 4 "refusals counted"
	check "over-long refused, old value kept ($h)" '/var/core/%e.%p' "$(host_get $h kernel.core_pattern)"
	check "out of range refused, old value kept ($h)" 128 "$(host_get $h net.core.somaxconn)"
	check "status key: over-long ($h)" '"error":"EMSGSIZE"' \
		"$(ctl get --print-value-only "/rcustring-status/web/$h/kernel/core_pattern" | grep -o '"error":"[A-Z]*"')"
	check "status key: out of range ($h)" '"error":"EINVAL"' \
		"$(ctl get --print-value-only "/rcustring-status/web/$h/net/core/somaxconn" | grep -o '"error":"[A-Z]*"')"
	check "status key: no such entry ($h)" '"error":"ENOENT"' \
		"$(ctl get --print-value-only "/rcustring-status/web/$h/kernel/nonexistent" | grep -o '"error":"[A-Z]*"')"
	check "value with a newline refused whole ($h)" /usr/sbin/modprobe "$(host_get $h kernel.modprobe)"
done
ctl put "$prefix/kernel/core_pattern" 'core.%p' >/dev/null
ctl put "$prefix/net/core/somaxconn" 4096 >/dev/null
for h in a b; do
	host_wait $h kernel.core_pattern 'core.%p' "later valid put applies"
	host_wait $h net.core.somaxconn 4096 "later valid put applies"
	for _ in $(seq $guard); do
		[ -z "$(ctl get --print-value-only "/rcustring-status/web/$h/net/core/somaxconn")" ] && break
		sleep 0.1
	done
	check "status key cleared once a valid value applies ($h)" "" \
		"$(ctl get --print-value-only "/rcustring-status/web/$h/net/core/somaxconn")"
done

# --- read-only mirror: etcd owns the entries, a local write is refused ---
check "local write refused on a mirror" "rcusysctl: setting key \"vm.swappiness\": Read-only file system
rc=1" "$("$cli" --socket "$tmp/a.sock" -w vm.swappiness=99 2>&1; echo "rc=$?")"
check "local write changed nothing" 10 "$(host_get a vm.swappiness)"

# --- etcd SIGKILLed while puts are in flight, restarted from its data dir ---
# The putter stops at its first failed put: etcd is down from then on. Its
# values stay below the later puts' (33 and up) however late the kill comes,
# so that the audit check below sees etcd's order only.
( for i in $(seq 11 30); do ctl put "$prefix/vm/swappiness" "$i" >/dev/null 2>&1 || break; done ) &
putter=$!
for _ in $(seq $guard); do
	[ "$(host_get a vm.swappiness)" -ge 20 ] 2>/dev/null && break
	sleep 0.05
done
{ kill -KILL "$etcd_pid"; wait "$etcd_pid"; } 2>/dev/null
etcd_pid=
wait "$putter"
for h in a b; do
	host_wait $h etcd.connected 0 "etcd down seen"
	# Readers are served from the tree while etcd is away.
	check "read while etcd is down ($h)" "core.%p" "$(host_get $h kernel.core_pattern)"
done
run_etcd
check "etcd restarted from its data dir" 1 "$([ -n "$etcd_pid" ] && echo 1)"
ctl put "$prefix/kernel/modprobe" /sbin/modprobe.new >/dev/null
final=$(ctl get --print-value-only "$prefix/vm/swappiness")
for h in a b; do
	host_wait $h etcd.connected 1 "reconnected"
	host_wait $h kernel.modprobe /sbin/modprobe.new "put after restart"
	check "holds etcd's final value ($h)" "$final" "$(host_get $h vm.swappiness)"
	check "one reconnect at least ($h)" 1 "$([ "$(host_get $h etcd.reconnects)" -ge 1 ] && echo 1)"
done

# --- compaction while host b is stopped: it re-reads and converges ---
ra=$(host_get a etcd.reconnects)
kill -STOP "${host_pid[b]}"
{ kill -KILL "$etcd_pid"; wait "$etcd_pid"; } 2>/dev/null # b's stream ends while b cannot see it
etcd_pid=
run_etcd
# a must be back on a watch before the compaction, or it has to re-read too.
for _ in $(seq $guard); do [ "$(host_get a etcd.reconnects)" != "$ra" ] && break; sleep 0.1; done
host_wait a etcd.connected 1 "a reconnected before the compaction"
ctl put "$prefix/kernel/core_pattern" 'after.%p' >/dev/null
ctl put "$prefix/vm/swappiness" 33 >/dev/null
ctl put "$prefix/vm/swappiness" 34 >/dev/null
rev=$(ctl get "$prefix/vm/swappiness" -w json | sed 's/.*"mod_revision":\([0-9]*\).*/\1/')
ctl compact "$rev" >/dev/null
kill -CONT "${host_pid[b]}"
for h in a b; do
	host_wait $h vm.swappiness 34 "converges after compaction"
	host_wait $h kernel.core_pattern 'after.%p' "converges after compaction"
	host_wait $h etcd.revision "$rev" "revision after compaction"
done
check "b read the prefix again" 1 "$(host_get b etcd.resyncs)"
check "the re-read did not count old refusals again" 4 "$(host_get b etcd.refused)"
check "a needed no re-read" 0 "$(host_get a etcd.resyncs)"

# --- rcusysctl --etcd: fleet-wide writes and what etcd and the hosts hold ---
ecli() { "$cli" --etcd "$url" --prefix "$prefix/" "$@" 2>&1; echo "rc=$?"; }
check "rcusysctl --etcd -w puts" "vm.swappiness = 42
rc=0" "$(ecli -w vm.swappiness=42)"
for h in a b; do host_wait $h vm.swappiness 42 "rcusysctl --etcd -w reaches every host"; done
check "rcusysctl --etcd reads one" "42
rc=0" "$(ecli -n vm.swappiness)"
check "rcusysctl --etcd: a name etcd lacks" "rcusysctl: \"vm.nope\" is not in etcd under $prefix/
rc=1" "$(ecli vm.nope)"
nrev=$(ctl get "$prefix/kernel/nonexistent" -w json | sed 's/.*"mod_revision":\([0-9]*\).*/\1/')
check "rcusysctl --etcd -a: values, then the hosts' refusals" "kernel.core_pattern = after.%p
kernel.modprobe = /sbin/modprobe.new
kernel.nonexistent = 1
net.core.somaxconn = 4096
vm.swappiness = 42
status a kernel.nonexistent = {\"revision\":$nrev,\"error\":\"ENOENT\"
status b kernel.nonexistent = {\"revision\":$nrev,\"error\":\"ENOENT\"
rc=0" "$(ecli -a | sed 's/\("error":"[A-Z]*"\).*/\1/')"
check "rcusysctl --etcd --json: one array, {name, value}" '[{"name":"vm.swappiness","value":"42"}]
rc=0' "$(ecli --json vm.swappiness)"
check "rcusysctl --etcd --json -a: a host's status key says its host" '{"name":"kernel.nonexistent","value":"{\"revision\":'"$nrev"',\"error\":\"ENOENT\"' \
	"$(ecli --json -a | grep -oE '\{"name":"kernel.nonexistent","value":"\{[^}]*' | grep error | head -1 | sed 's/,\\"error\\":\\"ENOENT\\".*/,\\"error\\":\\"ENOENT\\"/')"
check "rcusysctl --etcd --json -a: hosts named" "a b" \
	"$(ecli --json -a | grep -oE '"host":"[a-z]+"' | sed 's/"host":"\(.*\)"/\1/' | sort -u | xargs)"
check "rcusysctl --etcd needs --prefix" "rc=1" "$("$cli" --etcd "$url" -a >/dev/null 2>&1; echo "rc=$?")"

# --- one transaction of several keys: one revision, one commit per host ---
mrev() { ctl get "$prefix/$1" -w json | sed 's/.*"mod_revision":\([0-9]*\).*/\1/'; }
check "rcusysctl --etcd -w of three keys" "rc=0" \
	"$(ecli -q -w kernel.core_pattern=txn.%p net.core.somaxconn=5 kernel.modprobe=/sbin/txn)"
check "the three keys are one revision in etcd" "$(mrev kernel/core_pattern) $(mrev kernel/core_pattern)" \
	"$(mrev net/core/somaxconn) $(mrev kernel/modprobe)"
# A value a host refuses is refused alone (etcd committed the revision): the
# others are applied, as one commit, and the refusal is reported as always.
for h in a b; do
	host_wait $h kernel.core_pattern 'txn.%p' "a revision's accepted values applied"
	host_wait $h kernel.modprobe /sbin/txn "a revision's accepted values applied"
	host_wait $h etcd.refused 5 "the revision's refused value counted"
	check "the refused value alone kept the old one ($h)" 4096 "$(host_get $h net.core.somaxconn)"
	wait_status_key "/rcustring-status/web/$h/net/core/somaxconn"
	check "status key of the revision's refused value ($h)" '"error":"EINVAL"' \
		"$(ctl get --print-value-only "/rcustring-status/web/$h/net/core/somaxconn" | grep -o '"error":"[A-Z]*"')"
done
# An entry of a program's own handler cannot join a commit: written alone.
check "rcusysctl --etcd -w of a program's own handler's entry and another" "rc=0" \
	"$(ecli -q -w misc.motd=hello vm.swappiness=43)"
for h in a b; do
	host_wait $h misc.motd hello "an entry no commit takes, written alone"
	host_wait $h vm.swappiness 43 "its revision's other value applied"
	check "nothing more refused ($h)" 5 "$(host_get $h etcd.refused)"
done
check "rcusysctl --etcd -w: a key outside the prefix writes nothing and is named" \
	'rcusysctl: "../x": its key is not a path under the prefix (an empty, "." or ".." component); nothing was written
rc=1' "$(ecli -q -w vm.swappiness=7 ../x=2)"
check "rcusysctl --etcd -w: more than 64 keys write nothing, the 65th named" \
	'rcusysctl: "k65": one more than a transaction may hold (64, the most a host commits as one); nothing was written
rc=1' "$(ecli -q -w $(for i in $(seq 65); do echo "k$i=$i"; done))"
check "nothing of a refused transaction reached etcd" "43 " \
	"$(ctl get --print-value-only "$prefix/vm/swappiness") $(ctl get --print-value-only "$prefix/k1")"

# --- write-through: local writes become puts, every host applies etcd's order ---
start_host c "$url" /rcustring/api/ --write-through
start_host d "$url" /rcustring/api/ --write-through
for h in c d; do host_wait $h etcd.connected 1 "write-through host connected"; done
check "write-through: a local write is accepted" "rc=0" \
	"$("$cli" --socket "$tmp/c.sock" -q -w kernel.core_pattern=wt.%p 2>&1; echo "rc=$?")"
check "write-through: etcd holds it" "wt.%p" \
	"$(ctl get --print-value-only /rcustring/api/kernel/core_pattern)"
for h in c d; do host_wait $h kernel.core_pattern "wt.%p" "write-through reaches every host"; done
check "write-through: a refused value fails locally" "rc=1" \
	"$("$cli" --socket "$tmp/d.sock" -q -w net.core.somaxconn=5 2>/dev/null; echo "rc=$?")"
check "write-through: a refused value never reaches etcd" "" \
	"$(ctl get --print-value-only /rcustring/api/net/core/somaxconn)"
# The compare a write-through put carries: a stale mod_revision loses.
rev=$(ctl get /rcustring/api/kernel/core_pattern -w json | sed 's/.*"mod_revision":\([0-9]*\).*/\1/')
check "compare on a stale mod_revision: no put" conflict \
	"$("$probe" "$url" put-if /rcustring/api/kernel/core_pattern stale.%p $((rev - 1)))"
check "compare on a missing key's revision 0: no put" conflict \
	"$("$probe" "$url" put-if /rcustring/api/kernel/core_pattern stale.%p 0)"
check "value unchanged by the lost compares" "wt.%p" \
	"$(ctl get --print-value-only /rcustring/api/kernel/core_pattern)"
check "compare on the current mod_revision: put" put \
	"$("$probe" "$url" put-if /rcustring/api/kernel/core_pattern cas.%p "$rev")"
for h in c d; do host_wait $h kernel.core_pattern "cas.%p" "compared put reaches every host"; done
check "gateway client reads the prefix" "/rcustring/api/kernel/core_pattern=cas.%p" \
	"$("$probe" "$url" range /rcustring/api/kernel/)"
# A row whose handler the library does not describe cannot be owned: a
# write-through value could not be checked on a copy of its data.
check "etcd_sync_own_table refuses a row with the program's own handler" "Invalid argument" \
	"$("$probe" "$url" own-custom 2>/dev/null)"
gen() { "$cli" --socket "$tmp/$1.sock" -n --generation "$2" 2>&1; }
# One accepted write-through is one change: the tree changes when the watch
# delivers the put, and the local write itself changes nothing.
g0=$(gen c kernel.core_pattern)
check "write-through accepted" "rc=0" \
	"$("$cli" --socket "$tmp/c.sock" -q -w kernel.core_pattern=one.%p 2>&1; echo "rc=$?")"
host_wait c kernel.core_pattern "one.%p" "write-through applied"
check "one accepted write-through is one change" "$((g0 + 1))" "$(gen c kernel.core_pattern)"
# A delete in etcd: the tree keeps the value, and the next write-through
# creates the key (its compare is on a missing key, not the deleted value).
ctl del /rcustring/api/kernel/core_pattern >/dev/null
for h in c d; do
	for _ in $(seq $guard); do grep -q 'core_pattern was deleted' "$tmp/$h.err" && break; sleep 0.1; done
done
check "a delete keeps the value" "one.%p" "$(host_get c kernel.core_pattern)"
check "write-through after a delete creates the key" "rc=0" \
	"$("$cli" --socket "$tmp/c.sock" -q -w kernel.core_pattern=reborn.%p 2>&1; echo "rc=$?")"
check "etcd holds the re-created key" "reborn.%p" \
	"$(ctl get --print-value-only /rcustring/api/kernel/core_pattern)"
for h in c d; do host_wait $h kernel.core_pattern "reborn.%p" "re-created key reaches every host"; done
# Read-modify-write: plain SET compares with what the host applied, so it
# needs the conditional write: a generation that moved is refused.
g=$(gen c vm.swappiness)
"$cli" --socket "$tmp/d.sock" -q -w vm.swappiness=77
host_wait c vm.swappiness 77 "a write through d reaches c"
check "SETIF on a generation that moved is refused" "rc=1" \
	"$("$cli" --socket "$tmp/c.sock" -q --if-generation "$g" -w vm.swappiness=78 2>/dev/null; echo "rc=$?")"
check "the refused SETIF reached nobody" 77 "$(ctl get --print-value-only /rcustring/api/vm/swappiness)"
# Two hosts increment one value 15 times each, by GET then SETIF, retrying a
# refusal: none is lost.
incr() { # HOST: one increment through HOST, retried until it lands
	local g v
	for _ in $(seq 400); do
		g=$(gen "$1" vm.swappiness)
		v=$(host_get "$1" vm.swappiness)
		"$cli" --socket "$tmp/$1.sock" -q --if-generation "$g" -w "vm.swappiness=$((v + 1))" \
			2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}
"$cli" --socket "$tmp/c.sock" -q -w vm.swappiness=0
for h in c d; do host_wait $h vm.swappiness 0 "counter at 0"; done
writers=()
for h in c d; do ( for _ in $(seq 15); do incr $h || exit 1; done ) & writers+=($!); done
rc=0
for p in "${writers[@]}"; do wait "$p" || rc=1; done
check "every SETIF increment landed" 0 "$rc"
check "no increment lost (GET + SETIF)" 30 "$(ctl get --print-value-only /rcustring/api/vm/swappiness)"
# Both hosts write at once; a write based on a value already replaced loses
# its compare (EAGAIN). Whatever wins, every host ends with etcd's value.
writers=()
for h in c d; do
	( for i in $(seq 1 15); do
		"$cli" --socket "$tmp/$h.sock" -q -w "vm.swappiness=$([ $h = c ] && echo $((i * 2)) || echo $((i * 2 + 1)))" 2>/dev/null
	done ) &
	writers+=($!)
done
wait "${writers[@]}"
final=$(ctl get --print-value-only /rcustring/api/vm/swappiness)
check "write-through: concurrent writes left a value in etcd" 1 "$([ -n "$final" ] && echo 1)"
for h in c d; do host_wait $h vm.swappiness "$final" "concurrent writes converge"; done
for h in c d; do host_wait $h etcd.refused 0 "write-through hosts refused nothing"; done
stop_host c
stop_host d

# --- the audit rings: every value applied once, in etcd's order ---
stop_host a
stop_host b
for h in a b; do
	check "no swappiness value applied twice or out of order ($h)" "" \
		"$(awk -F'\t' '$1 == "audit" && $2 ~ /swappiness/ { v = $4 + 0; if (v <= last) print "again or back: " v; last = v }' "$tmp/$h.out")"
	# The re-read applied only what differed: modprobe was written three times
	# (first read, the put after the restart, the transaction), not once more
	# by the re-read.
	check "re-read applied only differences ($h)" 3 "$(grep -c 'modprobe' "$tmp/$h.out")"
	check "first read skipped the value the tree already held ($h)" 1 "$(grep -c 'somaxconn' "$tmp/$h.out")"
	check "no value logged ($h)" "" "$(grep -e "$long" -e 'after\.%p' "$tmp/$h.err")"
done
kill "$etcd_pid"
wait "$etcd_pid"
etcd_pid=
finish fleet-etcd
