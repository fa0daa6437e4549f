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
   the list is kept true. The same holds between the files of one program
   folder under tools/ (tools/rcusysd, tools/rcusysctl): each is one
   program, or programs built from the same files.

nm runs once, over every object read, not once per object.

Usage: test_layers.py SOURCE_ROOT BUILD_ROOT. Exits 77 when nm is missing.
"""
import os
import re
import shutil
import subprocess
import sys

LAYERS = {"include": 0, "lib": 1, "subsys": 2, "tools": 3}
# Circles that exist today, by object name (Meson's: folder_file for
# lib/folder/file.c; tools/FOLDER/file for a tools file), sorted within
# each circle.
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


# nm's undefined kinds: plain, weak and weak object.
UNDEFINED = {"U", "w", "v"}


def symbols(objs):
    """Each object's defined and used external symbols, by one nm run."""
    defined = {o: set() for o in objs}
    used = {o: set() for o in objs}
    if not objs:
        return defined, used
    # -A names the object on each line, -P gives "name type value size".
    out = subprocess.run(["nm", "-A", "-P", "-g"] + objs, capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        obj, _, rest = line.partition(": ")
        fields = rest.split()
        if obj not in defined or len(fields) < 2:
            continue
        (used if fields[1] in UNDEFINED else defined)[obj].add(fields[0])
    return defined, used


def lib_objects(build):
    """lib's objects by name. One object per source file (a file built twice,
    for the shared and the static library, counts once)."""
    byname = {}
    for folder, _, files in sorted(os.walk(os.path.join(build, "lib"))):
        for f in sorted(files):
            if folder.endswith(".p") and f.endswith(".c.o"):
                byname.setdefault(f[: -len(".c.o")], os.path.join(folder, f))
    if not byname:
        raise SystemExit(f"test_layers: no library objects under {build}/lib")
    return byname


def tools_objects(build):
    """The objects of each program folder under tools/, by folder: each maps
    "tools/FOLDER/file.c" to its objects (a file built into several programs
    of the folder, with other defines, is one node using what any of them
    uses)."""
    groups = {}
    for folder, _, files in sorted(os.walk(os.path.join(build, "tools"))):
        if not folder.endswith(".p"):
            continue
        program = os.path.relpath(os.path.dirname(folder), build)
        for f in sorted(files):
            if f.endswith(".c.o"):
                groups.setdefault(program, {}).setdefault(
                    program + "/" + f[: -len(".o")], []).append(os.path.join(folder, f))
    return groups


def find_circles(group, defs, uses):
    """The circles in one group (name -> its objects), as sorted name tuples."""
    names = sorted(group)
    d = {n: set().union(*(defs[o] for o in group[n])) for n in names}
    u = {n: set().union(*(uses[o] for o in group[n])) for n in names}
    owner = {s: n for n in names for s in d[n]}
    graph = {n: {owner[s] for s in u[n] if s in owner and owner[s] != n} for n in names}
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
                found.append(tuple(sorted(comp)))

    for n in names:
        if n not in index:
            visit(n)
    return set(found)


def circles(build):
    """Every circle in lib and in each tools folder, and every object name read."""
    groups = [{n: [o] for n, o in lib_objects(build).items()}]
    groups += list(tools_objects(build).values())
    objs = sorted({o for g in groups for made in g.values() for o in made})
    defs, uses = symbols(objs)
    found, built = set(), set()
    for g in groups:
        found |= find_circles(g, defs, uses)
        built |= set(g)
    return found, built


def main():
    root, build = sys.argv[1], sys.argv[2]
    if not shutil.which("nm"):
        print("SKIP: nm (binutils) is not installed")
        return 77
    bad = check_includes(root)
    found, built = circles(build)
    for circle in sorted(found - KNOWN_CIRCLES):
        what = "tools" if circle[0].startswith("tools/") else "lib"
        bad.append(f"a circle between {what} files: " + " <-> ".join(circle))
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
