#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""List C functions longer than a limit (default 80 lines, from the line
with the name to the closing brace): a function fits on a screen
(DESIGN.md, Style). Kernel style is assumed: a function's body opens with
'{' and closes with '}' alone at column 0.

Headers count too: a static inline function in a .h file is code like any
other.

usage: test_long_functions.py [--max N] [DIR...]   (default: lib tools subsys
include, from the current directory). Exit status 1 when one is found.
"""
import os
import re
import sys

NAME = re.compile(r'([A-Za-z_]\w*)\s*\(')


def functions(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    start = None
    for i, line in enumerate(lines):
        if line == '{' and start is None:
            # The name is on the nearest line above that starts at column 0.
            j = i - 1
            while j > 0 and (not lines[j] or lines[j][0] in ' \t'):
                j -= 1
            m = NAME.search(lines[j])
            start = (j, m.group(1) if m else '?')
        elif line.startswith('}') and start is not None:
            yield start[1], start[0] + 1, i + 1
            start = None


SUFFIXES = ('.c', '.h', '.h.in')


def c_files(tops):
    """Every .c and .h file (.h.in too) below the folders @tops (default lib,
    tools, subsys, include), sorted."""
    for top in tops or ['lib', 'tools', 'subsys', 'include']:
        for root, _, files in sorted(os.walk(top)):
            for name in sorted(files):
                if name.endswith(SUFFIXES):
                    yield os.path.join(root, name)


def main(argv):
    limit = 80
    if argv[:1] == ['--max']:
        limit = int(argv[1])
        argv = argv[2:]
    found = total = 0
    for path in c_files(argv):
        for fn, first, last in functions(path):
            total += 1
            if last - first + 1 > limit:
                print(f'{path}:{first}: {fn}: {last - first + 1} lines')
                found += 1
    print(f'{total} functions read, {found} over {limit} lines')
    return 1 if found or not total else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
