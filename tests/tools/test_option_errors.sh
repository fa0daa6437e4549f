#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Usage errors as procps gives them: one line naming the option and the
# value, then "Try ... --help", exit 2 (rcusysd) or 1 (rcusysctl); never
# the whole help text. procps spellings rcusysctl accepts: --load[=FILE],
# -pFILE, -o, -x, -N.
set -u
rcusysd=${1:?usage: test_option_errors.sh RCUSYSD RCUSYSCTL}
cli=${2:?usage: test_option_errors.sh RCUSYSD RCUSYSCTL}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"
d() { "$rcusysd" --no-fuse --no-persist -d "$dir/run" "$@" 2>&1; echo "rc=$?"; }
c() { "$cli" --root "$dir/tree" "$@" 2>&1; echo "rc=$?"; }
try_d="Try 'rcusysd --help' for more information."
try_c="Try 'rcusysctl --help' for more information."

check "rcusysd --log-level verbose" "rcusysd: --log-level \"verbose\": expected one of err, warning, notice, info, debug
$try_d
rc=2" "$(d --log-level verbose)"
check "rcusysd --stop-grace -1" "rcusysd: --stop-grace \"-1\": expected seconds from 0 to 3600
$try_d
rc=2" "$(d --stop-grace -1)"
check "rcusysd stray argument" "rcusysd: \"extra\": unexpected argument (rcusysd takes options only)
$try_d
rc=2" "$(d extra)"
check "rcusysd unknown option" "$rcusysd: unrecognized option '--bogus'
$try_d
rc=2" "$(d --bogus)"
check "rcusysd missing argument" "$rcusysd: option requires an argument -- 'c'
$try_d
rc=2" "$(d -c)"

mkdir -p "$dir/tree/kernel"
echo 5 > "$dir/tree/kernel/x"
printf 'kernel.x = 6\n' > "$dir/six.conf"
printf 'kernel.x = 7\n' > "$dir/seven.conf"
check "rcusysctl unknown option" "$cli: invalid option -- 'z'
$try_c
rc=1" "$(c -z kernel.x)"
check "rcusysctl no name" "rcusysctl: name an entry, or -a to list every one
$try_c
rc=1" "$(c)"
check "rcusysctl --load=FILE" "kernel.x = 6
rc=0" "$(c --load="$dir/six.conf")"
check "rcusysctl -pFILE, then FILE arguments" "kernel.x = 7
kernel.x = 6
rc=0" "$(c -p"$dir/seven.conf" "$dir/six.conf")"
check "rcusysctl --load FILE (procps: the argument is a file)" "kernel.x = 7
rc=0" "$(c --load "$dir/seven.conf")"
check "rcusysctl -o and -x are ignored, as in procps" "kernel.x = 7
rc=0" "$(c -o -x kernel.x)"
check "rcusysctl -N" "kernel.x
rc=0" "$(c -N kernel.x)"
check "rcusysctl --reset with --root" "rcusysctl: --reset needs the control socket; a tree of files (--root) keeps no runtime values apart
$try_c
rc=1" "$(c --reset kernel.x)"
finish option-errors
