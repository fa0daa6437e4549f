/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a commit of several entries (commit.c) shares with the write of one
 * (entry_io.c): the saved value a refused commit puts back, the audit's
 * read of a value, the write check, and the change record a commit hook
 * gets for a commit. Internal to the library.
 */
#ifndef RCUSTRING_LIB_SYSCTL_COMMIT_H
#define RCUSTRING_LIB_SYSCTL_COMMIT_H

#include <stddef.h>
#include <stdint.h>

#include "rcustring/sysctl.h"

/*
 * What a refused commit puts back. For the kinds whose layout the library
 * knows (numbers, vectors, bitmaps, proc_dostring's array) the stored bytes
 * themselves: their text can be lossy (jiffies: 2 jiffies read "0" s) or
 * refused by the handler (a minmax value outside its bounds). For an RCU
 * string and a program's own handler, the value's text, written back
 * through the handler (exact for strings).
 */
struct rcs_saved {
	void *raw; /* the bytes at @where; NULL: the text path */
	void *where;
	size_t raw_len;
	char *text;
	size_t text_len;
};

/* entry_io.c, all with @e's writer lock held */
int rcs_save_value(struct sysctl_entry *e, struct rcs_saved *sv);
/* 0, or -ENOTRECOVERABLE (logged) when the saved text was refused. */
int rcs_restore_value(struct sysctl_entry *e, struct rcs_saved *sv);
/* @e's value for the audit record (SYSCTL_AUDIT_VALUE_MAX bytes at @out). */
void rcs_audit_entry_value(struct sysctl_entry *e, char *out);
/* The tree's write check of @e (0 when none). */
int rcs_check_write(struct sysctl_entry *e, const struct sysctl_change *ch);
/* Where @e's stored bytes are and how many; 0 for an RCU string or a program's handler. */
size_t rcs_raw_layout(struct sysctl_entry *e, void **where);

/*
 * The change record of a commit: the hook and the handlers get &ch, and
 * sysctl_change_entries() finds the rest from the thread's current commit
 * (a hook runs in the committing thread), so struct sysctl_change keeps
 * its size and a single write's record is what it always was.
 */
/* What sysctl_change_entries() lists: the change carries it (no thread state). */
struct sysctl_commit_record {
	struct sysctl_entry *const *entries;
	const uint64_t *seqs;
	size_t n;
};

/* A commit's change record; ch.commit points at rec. */
struct rcs_commit_change {
	struct sysctl_change ch;
	struct sysctl_commit_record rec;
};

#endif
