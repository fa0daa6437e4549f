/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One node of the tree (entry.c): allocation, references, unlinking and
 * freeing; and paths as the tree reads them (lookup.c). Internal to the
 * library.
 */
#ifndef RCUSTRING_LIB_SYSCTL_ENTRY_H
#define RCUSTRING_LIB_SYSCTL_ENTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "tree.h"

#define RCS_NAME_MAX_LEN 255 /* a component must fit a file name (FUSE) */
#define RCS_MAX_DEPTH 32

/* entry.c */
/*
 * A new node named @name (@namelen bytes) under the directory whose path
 * is @parent_path, described by @desc (copied; NULL: none), with one
 * reference and not linked; NULL with errno set. Call with the tree lock
 * held (it draws the node's skip list levels).
 */
struct sysctl_entry *rcs_entry_alloc(struct sysctl_tree *tree, const char *parent_path,
				     const char *name, size_t namelen, const char *desc, bool is_dir);
/* Unlink @e from its parent (tree lock held); readers may still hold it. */
void rcs_entry_unlink(struct sysctl_entry *e);
/* Keep @e's row (and what it points to) while in use: true if still
 * registered, and then call rcs_entry_unuse() when done. */
bool rcs_entry_use(struct sysctl_entry *e);
void rcs_entry_unuse(struct sysctl_entry *e);
/* Wait until no call on @e runs; @e is unlinked (unregister). */
void rcs_entry_drain(struct sysctl_entry *e);
/* Drop a reference on @h; the last one frees it. */
void rcs_header_put(struct sysctl_table_header *h);

/* lookup.c */
/* One component of a path: @len bytes at @s, not NUL-terminated. */
struct rcs_path_comp {
	const char *s;
	size_t len;
};

/* @path's '/' form (common/path_form.h) in @buf; NULL when @buf is too small. */
const char *rcs_slash_form(const char *path, char *buf, size_t size);
/* @path ('/' form) split into at most @max components: their number, or -EINVAL. */
int rcs_split_path(const char *path, struct rcs_path_comp *out, int max);

#endif
