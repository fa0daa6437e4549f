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

#endif
