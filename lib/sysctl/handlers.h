/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the sysctl handler files share. Internal to the library.
 */
#ifndef RCUSTRING_LIB_SYSCTL_HANDLERS_H
#define RCUSTRING_LIB_SYSCTL_HANDLERS_H

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>

#include "rcustring/sysctl.h"

/*
 * Argument checks shared by every handler: what the kernel's VFS
 * guarantees, which our callers (the tree, programs calling a handler
 * directly) might not.
 */
static inline int rcs_handler_check_args(const struct ctl_table *t, const void *buffer,
					 const size_t *lenp, const off_t *ppos)
{
	if (!t || !lenp || !ppos || *ppos < 0 || (!buffer && *lenp))
		return -EINVAL;
	return 0;
}

/* One handler kind (handler_info.c). */
struct rcs_handler_row {
	proc_handler *handler;
	struct sysctl_handler_info info;
	/* minmax kinds: the bound at @p as the entry's file would show it. */
	void (*bound_text)(const void *p, char *buf, size_t size);
	/* What a NULL extra1 / extra2 means: this limit, or (NULL) unchecked. */
	const char *default_lo, *default_hi;
};

/* The row of @handler, or NULL for a handler the library does not know. */
const struct rcs_handler_row *rcs_handler_row(proc_handler *handler);

/* A program handler declared to wrap a library one (sysctl_tree_wrap_handler()). */
struct rcs_handler_wrap {
	proc_handler *wrapper;
	const struct rcs_handler_row *base;
};

/*
 * The row of @handler in @tree: the library's row, or the declared base's
 * for a wrapper; NULL for a program's own handler. Call with tree->lock held.
 */
const struct rcs_handler_row *rcs_tree_handler_row(const struct sysctl_tree *tree,
						   proc_handler *handler);

/* The SYSCTL_HF_* flags of @row; 0 for a program's own handler (NULL). */
static inline unsigned int rcs_kind_flags(const struct rcs_handler_row *row)
{
	return row ? row->info.flags : 0;
}

#endif
