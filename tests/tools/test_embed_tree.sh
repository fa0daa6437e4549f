#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/embed-tree.c does what its comment says: two tunables served on
# a control socket, read and written with rcusysctl, a bound enforced, a
# change callback run, a clean exit on SIGTERM.
set -u
example=${1:?usage: test_embed_tree.sh EMBED-TREE RCUSYSCTL}
cli=${2:?usage: test_embed_tree.sh EMBED-TREE RCUSYSCTL}
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
. "$(dirname "$0")/../check.sh"
S=(--socket "$dir/embed.sock")

"$example" "$dir/embed.sock" > "$dir/out" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$dir/embed.sock" ] && break; sleep 0.05; done
check "lists its two tunables" "app.greeting = hello
app.workers = 4" "$("$cli" "${S[@]}" -a 2>&1)"
check "writes" "app.workers = 8
app.greeting = good day" "$("$cli" "${S[@]}" -w app.workers=8 'app.greeting=good day' 2>&1)"
check "the bound holds" "rcusysctl: setting key \"app.workers\": invalid value (integers 1..64)
8" "$("$cli" "${S[@]}" -w app.workers=100 2>&1; "$cli" "${S[@]}" -n app.workers)"
check "descriptions" "app.workers = worker threads, 1 to 64" "$("$cli" "${S[@]}" -d app.workers 2>&1)"
kill -TERM "$pid"
wait "$pid"
check "exit 0 on SIGTERM" "0" "$?"
pid=
check "its output" "serving app.greeting and app.workers on $dir/embed.sock
app.greeting changed; greeting is now \"good day\"" "$(cat "$dir/out")"
finish embed-tree
