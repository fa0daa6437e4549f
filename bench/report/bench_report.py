#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Draw SVG plots from a saved `make bench` log (or the output of the
single bench programs): reader scaling from rcustring-bench's tables, FUSE
per file against lxcfs and the kernel from fuse_vs_kernel.sh's summary
lines, durable writes against kept values from rcusysd-durable-bench's
table. The log is what the programs print; nothing is measured here. A
plot whose lines are missing from the log is left out and said so; the
exit status is 1 when no plot at all could be drawn, or the log is bad.

usage: bench_report.py LOG OUTDIR
"""
import os
import re
import sys

SPDX = "<!-- SPDX-License-Identifier: LGPL-2.1-or-later -->\n"

# rcustring-bench: "R=2 readers, writer pause 1 ms, value 200 B (median of 5)"
CONFIG = re.compile(r"^R=(\d+) readers, writer pause (.+), value (\d+) B \(median of \d+\)$")
# its rows: the scheme's name (may hold spaces), then six columns
ROW = re.compile(r"^  (\S.*?)\s+(\d+)\s+([\d.]+)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\S+)\s*$")
SUMMARY = re.compile(r"^summary\s+(\S+)\s+(\S+)")
# rcusysd-durable-bench: "100 kept, 1 client     253 acknowledged writes/s (median of 7)"
DURABLE = re.compile(r"^(.*?)\s+(\d+) acknowledged writes/s")


def parse(lines):
    """Return (tables, summary, durable) from the log's lines.

    tables: {(pause, size): {scheme: {R: reads/s of all readers}}}
    """
    tables, summary, durable = {}, {}, []
    key = None
    for line in lines:
        line = line.rstrip("\n")
        m = CONFIG.match(line)
        if m:
            key = (m.group(2), int(m.group(3)), int(m.group(1)))
            continue
        m = ROW.match(line)
        if m and key and m.group(1) != "scheme":
            pause, size, readers = key
            per_reader = float(m.group(2))
            schemes = tables.setdefault((pause, size), {})
            schemes.setdefault(m.group(1), {})[readers] = per_reader * readers
            continue
        if not line.startswith("  "):
            key = None
        m = SUMMARY.match(line)
        if m:
            try:
                summary[m.group(1)] = float(m.group(2))
            except ValueError:
                pass  # "skipped"
            continue
        m = DURABLE.match(line)
        if m:
            durable.append((m.group(1).strip(), float(m.group(2))))
    return tables, summary, durable


def save(fig, path):
    """Write the figure as SVG with no date in it, then add the SPDX line."""
    fig.savefig(path, format="svg", metadata={"Date": None})
    with open(path) as f:
        text = f.readlines()
    text.insert(1, SPDX)
    with open(path, "w") as f:
        f.writelines(text)


def plot_scaling(plt, tables, outdir):
    """One panel per (writer pause, value size): total reads/s against R.

    One legend for all panels (a scheme keeps its colour and marker in each)
    and no minor ticks on the log axis keep the SVG small.
    """
    from matplotlib.ticker import NullLocator
    keys = sorted(tables)
    if not keys:
        return None
    names = sorted({s for t in tables.values() for s in t})
    colours = plt.get_cmap("tab20").colors
    style = {s: (colours[i % 20], "osD^v<>"[i // 10 % 7]) for i, s in enumerate(names)}
    fig, axes = plt.subplots(len(keys), 1, figsize=(9, 3.2 * len(keys) + 0.8), squeeze=False)
    for ax, key in zip(axes[:, 0], keys):
        for scheme, points in sorted(tables[key].items()):
            rs = sorted(points)
            colour, marker = style[scheme]
            ax.plot(rs, [points[r] for r in rs], marker=marker, color=colour,
                    label=scheme if ax is axes[0, 0] else None)
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_ylabel("reads/s, all readers")
        ax.set_title("writer pause %s, value %d B" % key, fontsize=10)
        ax.set_xticks(sorted({r for p in tables[key].values() for r in p}))
    axes[-1, 0].set_xlabel("reader threads (R)")
    fig.legend(fontsize=8, loc="upper center", ncol=4, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 1.6 / fig.get_figheight()))
    path = os.path.join(outdir, "reader_scaling.svg")
    save(fig, path)
    plt.close(fig)
    return path


def plot_fuse(plt, summary, outdir):
    """Wall time per file (open+fstat+read+close), our FUSE entry = 1."""
    if "fuse_vs_kernel_per_file" not in summary:
        return None
    names, values = ["rcustring FUSE"], [1.0]
    names.append("kernel /proc/sys")
    values.append(1.0 / summary["fuse_vs_kernel_per_file"])
    if summary.get("fuse_vs_lxcfs_per_file"):
        names.append("lxcfs")
        values.append(1.0 / summary["fuse_vs_lxcfs_per_file"])
    fig, ax = plt.subplots(figsize=(7, 4))
    bars = ax.bar(names, values, color=["tab:blue", "tab:green", "tab:orange"][:len(names)])
    for bar, v in zip(bars, values):
        ax.text(bar.get_x() + bar.get_width() / 2, v, "%.2f" % v, ha="center", va="bottom")
    ax.set_ylabel("wall time per file, rcustring FUSE = 1")
    ax.set_title("one file: open + fstat + read to EOF + close (lower is faster)")
    fig.tight_layout()
    path = os.path.join(outdir, "fuse_per_file.svg")
    save(fig, path)
    plt.close(fig)
    return path


def plot_durable(plt, durable, outdir):
    """Acknowledged writes/s per case of rcusysd-durable-bench."""
    if not durable:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    names = [n for n, _ in durable]
    values = [v for _, v in durable]
    bars = ax.barh(names, values, color="tab:purple")
    for bar, v in zip(bars, values):
        ax.text(v, bar.get_y() + bar.get_height() / 2, " %.0f" % v, va="center")
    ax.set_xscale("log")
    ax.set_xlabel("acknowledged writes/s (log scale)")
    ax.set_title("rcusysd durable writes against kept values and clients")
    ax.invert_yaxis()
    fig.tight_layout()
    path = os.path.join(outdir, "durable_writes.svg")
    save(fig, path)
    plt.close(fig)
    return path


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.hashsalt"] = "rcustring"
        # Text as text, not paths: a tenth of the size, and greppable.
        matplotlib.rcParams["svg.fonttype"] = "none"
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench-report: python3-matplotlib is not installed (make deps-bench)", file=sys.stderr)
        return 77
    try:
        with open(argv[1]) as f:
            tables, summary, durable = parse(f)
    except OSError as e:
        print("bench-report: %s: %s" % (argv[1], e.strerror), file=sys.stderr)
        return 1
    os.makedirs(argv[2], exist_ok=True)
    drawn = 0
    for what, path in (("reader scaling (rcustring-bench tables)", plot_scaling(plt, tables, argv[2])),
                       ("FUSE per file (summary fuse_vs_*_per_file)", plot_fuse(plt, summary, argv[2])),
                       ("durable writes (rcusysd-durable-bench)", plot_durable(plt, durable, argv[2]))):
        if path:
            print("bench-report: %s: %s" % (what, path))
            drawn += 1
        else:
            print("bench-report: %s: not in %s, left out" % (what, argv[1]))
    if not drawn:
        print("bench-report: %s: no bench output found" % argv[1], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
