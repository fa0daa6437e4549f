#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read the console logs of the lockcmp guests (kernel/lockcmp/run).

  summary.py ctx LOG
      The KUnit suite lockcmp (lockcmp_kunit.c): for each case (between
      "lockcmp: ctx begin VARIANT CASE" and "lockcmp: ctx end VARIANT CASE")
      the reports that might_sleep() and lockdep printed, quoted, and a
      kcheck line. The lock reader, and the RCU reader when the suite was
      booted with lockcmp_kunit.break_rcu=1, must draw them; the RCU reader
      none, and it must read the value.
  summary.py bench LOG...
      The timing guests: per vCPU count, writer or not, and kernel, the
      median over every round of reads/s, p50 and p99 latency; RCU over
      lock ratios; kcheck lockcmp-bench-torn (every round read only whole
      values, every combination measured).
"""
import re
import statistics
import sys

SLEEP_BUG = "BUG: sleeping function called from invalid context"
RCU_REPORTS = ["suspicious RCU usage",
               "context switch within RCU read-side critical section",
               "Illegal context switch in RCU read-side critical section"]
ANY_REPORT = re.compile(r"(BUG:|WARNING:|suspicious RCU usage|"
                        r"context switch within RCU|Kernel panic)")
BEGIN = re.compile(r"lockcmp: ctx begin (\w+) ([\w-]+) break=(\d)")
END = re.compile(r"lockcmp: ctx end (\w+) ([\w-]+) read '([^']*)' in (\d+) us")
KTAP = re.compile(r"^\s*(not ok|ok) \d+ (lockcmp_\w+)")


def ctx_sections(lines):
    """[(variant, case, broken, reports, end match or None)] in log order."""
    out, cur = [], None
    for line in lines:
        m = BEGIN.search(line)
        if m:
            cur = [m.group(1), m.group(2), m.group(3) == "1", [], None]
            out.append(cur)
            continue
        if cur is None or cur[4] is not None:
            continue
        m = END.search(line)
        if m and (m.group(1), m.group(2)) == (cur[0], cur[1]):
            cur[4] = m
        elif ANY_REPORT.search(line):
            cur[3].append(line.strip())
    return out


def ctx(path):
    """The context checks of one KUnit log: a kcheck line per case."""
    with open(path, errors="replace") as f:
        lines = [l.rstrip("\n") for l in f]
    fails = 0
    for variant, case, broken, reports, end in ctx_sections(lines):
        tag = ("break-" if broken else "") + variant
        if broken and variant == "lock":
            # Judged in the plain run: lockdep and WARN_ONCE report once
            # per boot, and the broken RCU cases ran first.
            continue
        name = "lockcmp-ctx-%s-%s" % (tag, case)
        for r in reports:
            print("lockcmp ctx %s %s: %s" % (tag, case, r))
        if end is None:
            print("kcheck FAIL %s (no end line: the reader never returned)" % name)
            fails += 1
            continue
        print("lockcmp ctx %s %s: read '%s' in %s us"
              % (tag, case, end.group(3), end.group(4)))
        if variant == "rcu" and not broken:
            ok = not reports and end.group(3) == "core"
            why = "%d reports, read '%s'" % (len(reports), end.group(3))
        else:
            # The lock version, or the RCU reader broken on purpose to
            # take the mutex: the debug options must report it.
            want = RCU_REPORTS if case.endswith("writer-holds-lock") else [SLEEP_BUG]
            ok = any(w in r for r in reports for w in want)
            why = "no '%s' in the log" % "' or '".join(want)
        print("kcheck %s %s%s" % ("PASS" if ok else "FAIL", name,
                                  "" if ok else " (%s)" % why))
        fails += not ok
    results = {}
    for line in lines:
        m = KTAP.search(line)
        if m:
            results[m.group(2)] = m.group(1)
            print("lockcmp ctx kunit: %s %s" % (m.group(1), m.group(2)))
    broken = any(b for _, _, b, _, _ in ctx_sections(lines))
    if broken:
        # The broken RCU reader waits for the writer: its case must fail.
        ok = results.get("lockcmp_rcu_writer_holds") == "not ok"
        name = "lockcmp-ctx-break-kunit-caught"
    else:
        ok = len(results) == 6 and set(results.values()) == {"ok"}
        name = "lockcmp-ctx-kunit"
    print("kcheck %s %s" % ("PASS" if ok else "FAIL", name))
    fails += not ok
    return fails


RESULT = re.compile(r"lockcmp: result variant=(\w+) cpus=(\d+) writer=(\d) "
                    r"reads=(\d+) ms=(\d+) ops_per_s=(\d+) p50_ns=(\d+) "
                    r"p99_ns=(\d+) torn=(\d+)")
WROTE = re.compile(r"lockcmp: writer (\w+) wrote (\d+) values")


def bench(paths):
    data, torn, writes = {}, 0, {}
    for path in paths:
        # The kernel's result line and the shell's writer line can reach
        # the console in either order: pair the n-th writer line of a
        # protocol with its n-th round under a writer.
        wrote, rounds = {}, {}
        with open(path, errors="replace") as f:
            for line in f:
                m = RESULT.search(line)
                if m:
                    v, cpus, w = m.group(1), int(m.group(2)), int(m.group(3))
                    vals = [int(m.group(i)) for i in (5, 6, 7, 8)]
                    data.setdefault((cpus, w, v), []).append(vals)
                    torn += int(m.group(9))
                    if w:
                        rounds.setdefault(v, []).append((cpus, vals[0]))
                    continue
                m = WROTE.search(line)
                if m:
                    wrote.setdefault(m.group(1), []).append(int(m.group(2)))
        for v, counts in wrote.items():
            for (cpus, ms), count in zip(rounds.get(v, []), counts):
                writes.setdefault((cpus, v), []).append(count * 1000 // max(ms, 1))
    fails = 0
    combos = sorted({(c, w) for c, w, _ in data})
    for cpus, w in combos:
        med = {}
        for v in ("lock", "rcu"):
            rows = data.get((cpus, w, v), [])
            if not rows:
                continue
            med[v] = [statistics.median(r[i] for r in rows) for i in (1, 2, 3)]
            print("lockcmp bench cpus=%d writer=%s %-4s rounds=%d reads_per_s=%d "
                  "p50_ns=%d p99_ns=%d" % (cpus, "yes" if w else "no", v, len(rows),
                                           *med[v]))
        if len(med) == 2:
            ops = med["rcu"][0] / max(med["lock"][0], 1)
            p50 = med["rcu"][1] / max(med["lock"][1], 1)
            p99 = med["rcu"][2] / max(med["lock"][2], 1)
            tag = "cpus%d_%s" % (cpus, "writer" if w else "nowriter")
            print("lockcmp bench cpus=%d writer=%s rcu/lock: reads_per_s %.2fx "
                  "p50 %.2fx p99 %.2fx" % (cpus, "yes" if w else "no", ops, p50, p99))
            print("summary rcu_vs_lock_reads_per_s_%s %.2f" % (tag, ops))
            print("summary rcu_vs_lock_p99_latency_%s %.2f" % (tag, p99))
    for (cpus, v), rates in sorted(writes.items()):
        print("lockcmp bench cpus=%d writer=yes %-4s writer_values_per_s=%d (median of %d)"
              % (cpus, v, statistics.median(rates), len(rates)))
    missing = [(c, w, v) for c, w in combos for v in ("lock", "rcu")
               if (c, w, v) not in data]
    if torn or missing or not data:
        why = "torn=%d, missing %s" % (torn, missing or "everything" if not data else missing)
        print("kcheck FAIL lockcmp-bench-torn (%s)" % why)
        fails += 1
    else:
        print("kcheck PASS lockcmp-bench-torn")
    return fails


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "ctx":
        ctx(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "bench":
        bench(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
