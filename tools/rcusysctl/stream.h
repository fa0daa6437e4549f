/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl's subcommands over the control socket: "watch KEY..." streams
 * changes (WATCH), "audit" prints the audit ring (AUDIT). Both print names
 * as rcusysctl prints them elsewhere.
 */
#ifndef RCUSYSCTL_STREAM_H
#define RCUSYSCTL_STREAM_H

#include <stdbool.h>
#include <stddef.h>

struct stream_opts {
	const char *socket; /* the control socket (socktree_open() done on it) */
	bool names_only, values_only, json;
};

/*
 * Watches every key of @keys (names as given on the command line) until
 * the server closes or stops a watch; one line per change. Returns the
 * exit status.
 */
int stream_watch(char **keys, int nkeys, const struct stream_opts *o);

/* Prints the audit ring, oldest first. Returns the exit status. */
int stream_audit(const struct stream_opts *o);

#endif
