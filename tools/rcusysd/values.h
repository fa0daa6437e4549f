/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What rcusysd's configuration (config.c) knows of each entry, by path:
 * the value it had before any file (its default) and the value config.c
 * last left in it. Internal to rcusysd; the caller serializes every call
 * (config.c's lock).
 */
#ifndef RCUSYSD_VALUES_H
#define RCUSYSD_VALUES_H

#include <stddef.h>

/*
 * What config.c knows of each entry, by path (dotted, as
 * sysctl_entry_path()), in an open-addressing hash table, so a tree of
 * 100 000 tunables costs n lookups, not n^2 string compares (a list here
 * made rcusysd's start 27 times slower at 20 000). One record per path, one
 * allocation: the path, the default, and the value config.c last left
 * in the entry only where it is not the default (after the start it is
 * the default everywhere), with a byte of flags for a header: memory per
 * tunable counts at 100 000 of them, and a pointer and an offset took a
 * 48-byte chunk where 32 bytes now hold "app.d000.t000000" and its default.
 */
enum {
	REC_DEF = 1,         /* a default follows the path */
	REC_APPLIED = 2,     /* this module set the entry (else: never here) */
	REC_APPLIED_OWN = 4, /* what it set differs from the default: it follows */
};

struct record {
	unsigned char flags;
	char text[]; /* path '\0', [default '\0'], [applied '\0'] */
};

struct values {
	struct record **v;
	size_t n, cap; /* cap: 0 or a power of two, at most 7/8 full */
};

/* The value @path had before any file; NULL if none was captured. */
const char *values_default(const struct values *vs, const char *path);

/* What config.c last left in @path; NULL if it never set it. */
const char *values_applied(const struct values *vs, const char *path);

/* Captures @value as @path's default, unless one is, and as what it was last left at. */
void values_capture(struct values *vs, const char *path, const char *value);

/* Remembers @value as what config.c last left in @path (out of memory: forgotten). */
void values_set_applied(struct values *vs, const char *path, const char *value);

void values_free(struct values *vs);

#endif
