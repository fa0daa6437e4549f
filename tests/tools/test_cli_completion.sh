#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# rcusysctl's bash completion: names come from the tree it would talk to
# (the socket's LIST, or the files under --root), options from the list.
# rcusysd's completes every option of its --help.
#   test_cli_completion.sh COMPLETION-FILE RCUSYSCTL SOCKET-FIXTURE RCUSYSD-COMPLETION RCUSYSD
set -u
export LC_ALL=C
completion=${1:?usage: test_cli_completion.sh COMPLETION-FILE RCUSYSCTL SOCKET-FIXTURE}
cli=${2:?} fixture=${3:?}
rcusysd_completion=${4:?} rcusysd=${5:?}
root=$(mktemp -d)
fixture_pid=
trap '[ -n "$fixture_pid" ] && kill "$fixture_pid" 2>/dev/null; rm -rf "$root"' EXIT
. "$(dirname "$0")/../check.sh"

# The completion runs "rcusysctl" from PATH.
mkdir "$root/bin"
ln -s "$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli")" "$root/bin/rcusysctl"
PATH=$root/bin:$PATH
. "$completion"

# complete WORD... : the candidates for the last word, sorted, one a line.
complete_words() {
	COMP_WORDS=(rcusysctl "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_rcusysctl
	printf '%s\n' "${COMPREPLY[@]}" | sort
}

sock=$root/control.sock
"$fixture" "$sock" &
fixture_pid=$!
for _ in $(seq 600); do # a hang guard of 30 s
	"$cli" --socket "$sock" -N kernel.modprobe >/dev/null 2>&1 && break
	sleep 0.05
done

check "names from the socket named by --socket" "kernel.core_pattern
kernel.modprobe" "$(complete_words --socket "$sock" kern)"
check "names from \$RCUSYSCTL_SOCKET" "net.ipv4.conf.eth0/200.forwarding
net.ipv4.conf.lo.forwarding" "$(RCUSYSCTL_SOCKET=$sock complete_words -n net.)"
check "a dotted first component, as rcusysctl prints it" "/vlan.d/eth0.300/mtu" \
	"$(RCUSYSCTL_SOCKET=$sock complete_words /vl)"
check "subcommands first" "watch" "$(RCUSYSCTL_SOCKET=$sock complete_words wat)"
check "subcommands after options" "watch" "$(RCUSYSCTL_SOCKET=$sock complete_words -n wat)"
check "no subcommand after a name" "" "$(RCUSYSCTL_SOCKET=$sock complete_words kernel.modprobe wat)"
check "names after watch" "kernel.core_pattern
kernel.modprobe" "$(RCUSYSCTL_SOCKET=$sock complete_words watch kernel.)"
check "options" "--deprecated
--describe
--dry-run" "$(complete_words --d)"
check "options by prefix" "--json" "$(complete_words --js)"
check "generation options" "--generation
--if-generation" "$(complete_words --gen; complete_words --if)"
# Every option --help names is completed (a new option without a completion fails here).
help_options() {
	"$1" --help | sed -nE 's/^ {2,6}(-.*)/\1/p' | sed -E 's/  .*//' |
		grep -oE -- '(^|[ ,])--?[a-zA-Z][-a-zA-Z]*' | sed 's/^[ ,]//' | sort -u
}
check "rcusysctl: every option of --help completes" "" \
	"$(comm -23 <(help_options "$cli") <(complete_words -))"
check "rcusysctl: the options the issue found missing" "--cacert --cat-config --cert --etcd --kept --key --prefix --reset -X -f -o -x" \
	"$(for o in --reset --etcd --prefix --cacert --cert --key -f -X -o -x --kept --cat-config; do
		complete_words "$o" | grep -qxe "$o" && echo "$o"; done | sort | xargs)"
check "rcusysctl: --cacert takes a file" "$root/bin" "$(cd / && complete_words --cacert "$root/bi")"
. "$rcusysd_completion"
rcusysd_words() {
	COMP_WORDS=(rcusysd "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_rcusysd
	printf '%s\n' "${COMPREPLY[@]}" | sort
}
check "rcusysd: every option of --help completes" "" "$(comm -23 <(help_options "$rcusysd") <(rcusysd_words -))"
check "rcusysd: --log-level's levels" "debug" "$(rcusysd_words --log-level de)"
check "rcusysd: --check-config" "--check-config" "$(rcusysd_words --che)"
mkdir -p "$root/tree/fs/file"
echo 1 > "$root/tree/fs/file/max"
check "names from --root" "fs.file.max" "$(complete_words --root "$root/tree" f)"
check "no server: no names, no error" "" "$(RCUSYSCTL_SOCKET=$root/none complete_words kern 2>&1)"
finish cli-completion
