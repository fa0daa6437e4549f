/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Terminal-safe output. Values and names come from whoever could write
 * them (a 0666 entry, a client, etcd), and rcusysctl is run by root: an
 * ESC or CR printed raw to root's terminal moves its cursor, rewrites what
 * it shows, or answers its queries. So when standard output (or standard
 * error) is a terminal, every byte printed there passes one filter: C0
 * control bytes but newline and tab, DEL, and the C1 controls (U+0080 to
 * U+009F in UTF-8, and bytes 0x80 to 0xFF that are no part of a UTF-8
 * character) are printed as \xHH. Anything else, a pipe or a file, gets
 * the bytes as they are (scripts, $(rcusysctl -n ...), files written from
 * it keep exact values, as with procps sysctl), and so does -b, which asks
 * for the raw value. rcusysctl(8), OUTPUT.
 */
#ifndef RCUSYSCTL_TTYSAFE_H
#define RCUSYSCTL_TTYSAFE_H

#include <stdbool.h>

/*
 * ttysafe_install - put the filter on stdout (unless @raw_stdout) and on
 * stderr, each only when it is a terminal.
 * Context: main thread, before anything is printed.
 * Return: 0, or a negative errno (the stream is then left as it was).
 */
int ttysafe_install(bool raw_stdout);

#endif
