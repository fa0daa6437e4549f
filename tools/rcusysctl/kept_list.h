/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl --kept: what rcusysd's store keeps, read from its journal.
 */
#ifndef RCUSYSCTL_KEPT_LIST_H
#define RCUSYSCTL_KEPT_LIST_H

#include <stdbool.h>

/*
 * Prints each value the store at @path keeps, sorted by name, as
 * "name = value<TAB># origin, time" (bytes below 0x20, 0x7f and '\\'
 * escaped in C style; the read's trailing newline left out); @names_only:
 * the names alone. Context: the main thread.
 * Return: the exit status (0, or 1 with a message on stderr).
 */
int kept_list(const char *path, bool names_only);

#endif
