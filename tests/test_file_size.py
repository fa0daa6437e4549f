#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""List C files (.c and .h) longer than a limit (default 700 lines) that
do not say why: small files, one concept each (DESIGN.md, Style). A file
may keep its size when its opening comment (the first /* ... */ block
after the SPDX line) has a line "Size: <reason>", e.g. "Size: one state
machine; splitting it would expose its internals".

usage: test_file_size.py [--max N] [DIR...]   (default: lib tools subsys
include, from the current directory). Exit status 1 when one is found.
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_long_functions import c_files  # noqa: E402  (the same files, the same order)

SIZE = re.compile(r'^\s*\*?\s*Size:\s*\S')


def opening_comment(lines):
    """The lines of the first block comment that is not the SPDX line."""
    inside, block = False, []
    for line in lines:
        stripped = line.strip()
        if not inside:
            if not stripped or 'SPDX-License-Identifier' in stripped:
                continue
            if not stripped.startswith('/*'):
                return []
            inside = True
        block.append(line)
        if '*/' in stripped:
            return block
    return block


def main(argv):
    limit = 700
    if argv[:1] == ['--max']:
        limit = int(argv[1])
        argv = argv[2:]
    found = total = 0
    for path in c_files(argv):
        with open(path, encoding='utf-8', errors='replace') as f:
            lines = f.read().split('\n')
        if lines and lines[-1] == '':
            lines.pop()
        total += 1
        if len(lines) <= limit:
            continue
        if any(SIZE.match(line) for line in opening_comment(lines)):
            print(f'{path}: {len(lines)} lines, kept: its opening comment says why')
            continue
        print(f'{path}: {len(lines)} lines, over {limit} with no "Size: <reason>" '
              f'line in its opening comment: split it along its seams, or say why not')
        found += 1
    print(f'{total} files read, {found} over {limit} lines without a reason')
    return 1 if found or not total else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
