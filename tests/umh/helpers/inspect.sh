#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Usage: inspect.sh OUT FD...
# Writes to OUT what the helper inherited: which of the FDs are open, where
# stdin points, the cwd, pid/pgrp/session, the SigBlk/SigIgn masks and the
# environment execve() gave it (NUL separators shown as spaces).
# Everything is computed before OUT is opened, so the shell's own
# redirections cannot show up as open fds.
out=$1
shift
open=""
for fd in "$@"; do
	if [ -e /proc/$$/fd/$fd ]; then open="$open $fd"; fi
done
stdin=$(readlink /proc/$$/fd/0)
cwd=$(readlink /proc/$$/cwd)
read -r stat < /proc/$$/stat
set -- $stat
ids="$1 $5 $6"
env=$(tr '\0' ' ' < /proc/$$/environ)
sig=$(grep -E '^Sig(Blk|Ign):' /proc/$$/status | tr '\n\t' '  ')
printf 'open:%s\nstdin: %s\ncwd: %s\nids: %s\nsig: %s\nenv: %s\n' "$open" "$stdin" "$cwd" "$ids" "$sig" "$env" \
	> "$out.tmp"
mv "$out.tmp" "$out"
