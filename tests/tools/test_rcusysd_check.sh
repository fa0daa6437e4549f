#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysd --check-config reads what a start reads (tunables.d, sysctl.d,
# the state file, the options) through the start's own code and serves
# nothing: a good configuration exits 0 with no run directory, no lock and
# the state file untouched; a bad one lists every problem of every file as
# FILE:LINE: message (a file the file check refuses as FILE:) and exits 1.
set -u
rcusysd=${1:?usage: test_rcusysd_check.sh RCUSYSD}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"

mkdir -p "$dir/etc" "$dir/tun" "$dir/state"
chmod 700 "$dir/state"
printf 'app.limit int min=0 max=100 default=10\napp.name string maxlen=8 default=x\napp.n int\n' \
	> "$dir/tun/app.conf"
printf 'app.limit = 20\n' > "$dir/etc/10-app.conf"
# A state file of the text format: a start would migrate it; a check must not.
printf 'app.limit = 30\n' > "$dir/state/state.conf"
chmod 600 "$dir/state/state.conf"
cp "$dir/state/state.conf" "$dir/state.orig"
run() {
	"$rcusysd" --check-config --run-dir "$dir/run" --state "$dir/state/state.conf" \
		--sysctl-dirs "$dir/etc" --tunables-dirs "$dir/tun" "$@" 2>&1
}

out=$(run); rc=$?
check "good: exit 0" "0" "$rc"
check "good: the verdict alone" "rcusysd: configuration OK (0 problem(s))" "$out"
check "good: no run directory (no socket, no mount)" "no" "$([ -e "$dir/run" ] && echo yes || echo no)"
check "good: the state file untouched, no lock or migration beside it" "state.conf same" \
	"$(ls -A "$dir/state") $(cmp -s "$dir/state/state.conf" "$dir/state.orig" && echo same)"

# Bad lines in two settings files, a bad tunables file, a refused one.
printf 'no.such.key = 1\nthis line is bad\napp.name = waytoolongvalue\n' > "$dir/etc/20-bad.conf"
printf '# comment\napp.limit = -5\n-ignored.missing = 1\nother.missing = 2\n' > "$dir/etc/30-bad.conf"
printf 'app.x intx\n' > "$dir/tun/bad.conf"
printf 'app.y int\n' > "$dir/tun/open.conf"
chmod 666 "$dir/tun/open.conf"
out=$(run); rc=$?
check "bad: exit 1" "1" "$rc"
check "bad: every problem with FILE:LINE (the file check's refusal with FILE)" \
"$dir/etc/20-bad.conf:1
$dir/etc/20-bad.conf:2
$dir/etc/20-bad.conf:3
$dir/etc/30-bad.conf:2
$dir/etc/30-bad.conf:4
$dir/tun/bad.conf:1
$dir/tun/open.conf: refused" \
	"$(sed -n -E 's/^([^: ]+:( refused|[0-9]+)).*/\1/p' <<< "$out" | LC_ALL=C sort)"
check "bad: the reasons are the start's" "yes" \
	"$(grep -q '20-bad.conf:3: setting app.name: value longer than 7 bytes' <<< "$out" &&
	   grep -q '30-bad.conf:2: setting app.limit: invalid value (integers 0..100)' <<< "$out" && echo yes)"
check "bad: the verdict counts them" "rcusysd: configuration has problems (7 problem(s))" \
	"$(tail -1 <<< "$out")"
check "bad: still nothing served or written" "no state.conf" \
	"$([ -e "$dir/run" ] && echo yes || echo no) $(ls -A "$dir/state")"
finish rcusysd-check
