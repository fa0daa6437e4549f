#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs bench_report.py on the committed sample log (a trimmed real run) and
# checks that each of the three SVGs is written and names what it plots:
# every scheme of the reader-scaling tables, lxcfs and the kernel beside our
# FUSE entry, each durable case. Skips (77) without python3-matplotlib.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tests/check.sh"
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || skip "python3-matplotlib not installed (make deps-bench)"
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-report-test.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
log=$here/sample/sample.log
"$here/bench_report.py" "$log" "$out" > "$out/stdout" 2>&1
check "exit status" 0 "$?"
for f in reader_scaling fuse_per_file durable_writes; do
	check "$f.svg written" yes "$([ -s "$out/$f.svg" ] && echo yes || echo no)"
	check "$f.svg has an SPDX line" yes \
		"$(head -n 3 "$out/$f.svg" | grep -q SPDX-License-Identifier && echo yes || echo no)"
done
# Every scheme of the log's tables must be a label of the scaling plot
# (text stays text in the SVG: svg.fonttype none).
schemes=$(awk '/^R=[0-9]+ readers/ { t = 1; next } t && /^  scheme/ { next }
	t && /^  [^ ]/ { sub(/^  /, ""); sub(/ +[0-9]+ +[0-9.]+ .*$/, ""); print; next } { t = 0 }' "$log" | sort -u)
check "schemes in the sample" yes "$([ "$(wc -l <<<"$schemes")" -ge 10 ] && echo yes || echo no)"
missing=$(while read -r s; do grep -qF -- ">$s</text>" "$out/reader_scaling.svg" || echo "$s"; done <<<"$schemes")
check "schemes missing from reader_scaling.svg" "" "$missing"
for s in "rcustring FUSE" "kernel /proc/sys" lxcfs; do
	check "fuse_per_file.svg names $s" yes "$(grep -qF -- ">$s</text>" "$out/fuse_per_file.svg" && echo yes || echo no)"
done
cases=$(sed -n 's/^\(.*[^ ]\) \+[0-9]\+ acknowledged writes\/s.*/\1/p' "$log")
check "durable cases in the sample" yes "$([ "$(wc -l <<<"$cases")" -ge 3 ] && echo yes || echo no)"
missing=$(while read -r s; do grep -qF -- ">$s</text>" "$out/durable_writes.svg" || echo "$s"; done <<<"$cases")
check "cases missing from durable_writes.svg" "" "$missing"
# A log with none of the bench's lines draws nothing and says so.
echo "no bench here" > "$out/empty.log"
"$here/bench_report.py" "$out/empty.log" "$out/empty" > /dev/null 2>&1
check "exit status on a log with no bench output" 1 "$?"
[ "$failed" -eq 0 ] || cat "$out/stdout"
finish bench-report
