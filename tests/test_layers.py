#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The layering of the sources: tools -> subsys -> lib -> include.

1. Includes. A file may include a header of its own layer or of a layer
   below it, never above: a lib file that includes a tools or subsys
   header, or an include/ header that includes a lib one, fails. A header
   is looked for in the including file's folder first, then anywhere in
   the four layers (the build's include path covers them).
2. Circles. Between the library's object files (each lib .c file built),
   A uses B when A calls or reads a symbol that B defines (nm). A circle
   in that graph (A uses B, B uses A, directly or through others) fails,
   unless it is listed in KNOWN_CIRCLES below, which is a list to empty:
   a listed circle that is gone fails too (when its files were built), so
   the list is kept true.

Usage: test_layers.py SOURCE_ROOT BUILD_ROOT. Exits 77 when nm is missing.
"""
import os
import re
import shutil
import subprocess
import sys

LAYERS = {"include": 0, "lib": 1, "subsys": 2, "tools": 3}
# Circles between lib files that exist today, by object name (Meson's:
# folder_file for lib/folder/file.c), sorted within each circle.
KNOWN_CIRCLES = set()
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def layer(rel):
    return LAYERS.get(rel.split(os.sep, 1)[0])


def sources(root):
    for top in LAYERS:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith((".c", ".h", ".h.in")):
                    yield os.path.relpath(os.path.join(folder, name), root)


def check_includes(root):
    files = sorted(sources(root))
    known = set(files)
    bad = []
    for rel in files:
        text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
        for name in INCLUDE.findall(text):
            local = os.path.normpath(os.path.join(os.path.dirname(rel), name))
            if local in known:
                found = [local]
            else:
                found = [f for f in files if f.endswith(os.sep + name) or f == name]
                found += [f[:-3] for f in files if f.endswith(os.sep + name + ".in")]
            if not found:
                continue  # a system or generated header
            lowest = min(found, key=layer)
            if layer(lowest) > layer(rel):
                bad.append(f"{rel} includes {name} ({lowest}): "
                           f"{rel.split(os.sep)[0]} must not reach up to {lowest.split(os.sep)[0]}")
    return bad


def symbols(obj):
    out = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True,
                         text=True, check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    out = subprocess.run(["nm", "-u", obj], capture_output=True, text=True, check=True).stdout
    used = {line.split()[-1] for line in out.splitlines() if line.strip()}
    return defined, used


def circles(build):
    # One object per source file (a file built twice, for the shared and
    # the static library, counts once).
    byname = {}
    for folder, _, files in sorted(os.walk(os.path.join(build, "lib"))):
        for f in files:
            if folder.endswith(".p") and f.endswith(".c.o"):
                byname.setdefault(f[: -len(".c.o")], os.path.join(folder, f))
    if not byname:
        raise SystemExit(f"test_layers: no library objects under {build}/lib")
    objs = list(byname.values())
    names = {o: n for n, o in byname.items()}
    defs, uses = {}, {}
    for o in objs:
        defs[o], uses[o] = symbols(o)
    owner = {s: o for o in objs for s in defs[o]}
    graph = {o: {owner[s] for s in uses[o] if s in owner and owner[s] != o} for o in objs}
    # Tarjan's strongly connected components.
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(tuple(sorted(names[o] for o in comp)))

    for o in sorted(objs):
        if o not in index:
            visit(o)
    return set(found), set(names.values())


def main():
    root, build = sys.argv[1], sys.argv[2]
    if not shutil.which("nm"):
        print("SKIP: nm (binutils) is not installed")
        return 77
    bad = check_includes(root)
    found, built = circles(build)
    for circle in sorted(found - KNOWN_CIRCLES):
        bad.append("a circle between lib files: " + " <-> ".join(circle))
    for circle in sorted(c for c in KNOWN_CIRCLES - found if built.issuperset(c)):
        bad.append("listed circle is gone, drop it from KNOWN_CIRCLES: " + " <-> ".join(circle))
    for line in bad:
        print("FAIL " + line)
    for circle in sorted(found & KNOWN_CIRCLES):
        print("known circle (to break): " + " <-> ".join(circle))
    print(f"layers: {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
