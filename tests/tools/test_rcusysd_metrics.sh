#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysctl --metrics scraped from a running rcusysd parses as the
# Prometheus text format with the real parser (Debian's
# python3-prometheus-client), and its counters move: a write adds to
# rcustring_writes_total and a durable commit, a refused write to
# rcustring_writes_refused_total under its errno name, a GET to the socket's
# reads; the commit histogram's count equals its +Inf bucket. rcusysctl
# --status (and --json --status) give every field rcusysd(8) lists.
set -u
rcusysd=${1:?usage: test_rcusysd_metrics.sh RCUSYSD RCUSYSCTL}
cli=${2:?usage: test_rcusysd_metrics.sh RCUSYSD RCUSYSCTL}
. "$(dirname "$0")/../check.sh"
# Debian's package installs into the system Python's path, which a python3
# earlier in PATH (a virtualenv, pyenv) may not search.
py=
for p in /usr/bin/python3 python3; do
	"$p" -c 'import prometheus_client' 2> /dev/null && { py=$p; break; }
done
[ -n "$py" ] || skip "python3-prometheus-client is not installed (make deps installs it)"
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"' EXIT

S=(--socket "$dir/run/control.sock")
printf 'app.level int min=0 max=10 default=1\napp.name string maxlen=8 default=a\n' \
	> "$dir/tunables.conf"
"$rcusysd" --no-fuse -d "$dir/run" -t "$dir/tunables.conf" --state "$dir/state.conf" \
	2>> "$dir/log" &
pid=$!
for _ in $(seq 200); do [ -S "$dir/run/events.sock" ] && break; sleep 0.05; done
[ -S "$dir/run/events.sock" ] || { echo "rcusysd did not start:"; cat "$dir/log"; exit 1; }

# Parse a scrape with prometheus_client; print "name{labels} value" for the
# samples asked for (a missing one prints "name missing").
scrape() {
	"$cli" "${S[@]}" --metrics > "$dir/scrape" || { echo "scrape failed"; return; }
	"$py" - "$dir/scrape" "$@" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
samples = {}
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        key = s.name + ("{" + ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items())) + "}"
                        if s.labels else "")
        samples[key] = s.value
for want in sys.argv[2:]:
    print(want, int(samples[want]) if want in samples else "missing")
PY
}
metric() { scrape "$1" | awk '{print $2}'; }

w0=$(metric rcustring_writes_total)
c0=$(metric rcusysd_persist_commits_total)
r0=$(metric 'rcustring_writes_refused_total{errno="EINVAL"}')
[ "$r0" = missing ] && r0=0
g0=$(metric rcustring_socket_reads_total)
h0=$(metric rcusysd_persist_commit_seconds_count)
check "the scrape parses and has the write counter" "yes" \
	"$([ "$w0" != missing ] && [ -n "$w0" ] && echo yes || echo "no ($w0)")"
"$cli" "${S[@]}" -q -w app.level=5
"$cli" "${S[@]}" -q -w app.level=50 2> /dev/null
"$cli" "${S[@]}" -q -w app.level=77 2> /dev/null
"$cli" "${S[@]}" -n app.level > /dev/null
check "a write counts once" "$((w0 + 1))" "$(metric rcustring_writes_total)"
check "each refused write counts under its errno name" "$((r0 + 2))" \
	"$(metric 'rcustring_writes_refused_total{errno="EINVAL"}')"
check "the accepted write is one durable commit" "$((c0 + 1))" \
	"$(metric rcusysd_persist_commits_total)"
check "a GET is one socket read" "$((g0 + 1))" "$(metric rcustring_socket_reads_total)"
check "the commit's latency is in the histogram" "$((h0 + 1))" \
	"$(metric rcusysd_persist_commit_seconds_count)"
check "the commit histogram's count is its +Inf bucket" \
	"$(metric 'rcusysd_persist_commit_seconds_bucket{le="+Inf"}')" \
	"$(metric rcusysd_persist_commit_seconds_count)"
check "requests are counted by verb" "yes" \
	"$([ "$(metric 'rcustring_socket_requests_total{verb="SET"}')" -ge 3 ] && echo yes || echo no)"
check "policy refusals and suppressed log lines are counters" "0 0" \
	"$(scrape 'rcusysd_policy_refused_total{origin="client"}' rcusysd_log_suppressed_total |
		awk '{print $2}' | paste -sd' ')"
check "the budget in use is a gauge" "yes" \
	"$(scrape 'rcusysd_budget_units{who="root"}' | grep -qv missing && echo yes || echo no)"

status=$("$cli" "${S[@]}" --status)
fields=$(printf '%s\n' "$status" | sed 's/:.*//' | tr '\n' ' ')
check "--status gives every field" \
	"version uptime tunables reload.count reload.last reload.result reload.failures policy.refused log.suppressed persist.store persist.kept persist.commits persist.failures persist.last_commit etcd.endpoint budget.units budget.units_root budget.units_others budget.total budget.per_uid budget.uids budget.uid.0.handles budget.uid.0.units fuse " \
	"$fields"
n=$("$cli" "${S[@]}" -a -N | wc -l)
check "--status counts the tunables (as -a lists them: ours and the subsystems')" "tunables: $n" \
	"$(printf '%s\n' "$status" | grep '^tunables:')"
check "--status names the store and what it keeps" "persist.store: $dir/state.conf|persist.kept: 1" \
	"$(printf '%s\n' "$status" | grep -E '^persist\.(store|kept):' | paste -sd'|')"
kill -HUP "$pid"
for _ in $(seq 100); do
	"$cli" "${S[@]}" --status | grep -q '^reload.count: 1' && break
	sleep 0.05
done
check "a reload is counted, with its result" "reload.count: 1|reload.result: ok" \
	"$("$cli" "${S[@]}" --status | grep -E '^reload\.(count|result):' | paste -sd'|')"
if "$cli" --json --version > /dev/null 2>&1 && "$cli" "${S[@]}" --json --status > "$dir/json" 2>&1; then
	check "--json --status: numbers are numbers, text is text" "$n ok" \
		"$(python3 -c 'import json, sys; o = json.load(open(sys.argv[1]))
print(o["tunables"] + 0, o["reload.result"])' "$dir/json")"
fi
check "--metrics takes no names" "1" "$("$cli" "${S[@]}" --metrics app.level 2> /dev/null; echo $?)"
kill -TERM "$pid"
wait "$pid"
check "rcusysd exits 0 (no sanitizer report)" "0" "$?"
pid=
finish rcusysd-metrics
