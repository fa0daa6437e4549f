/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _LGPL_SOURCE
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>

#include "rcustring/compat.h"
#include "buf.h"

char *rcustring_compat_alloc(int size)
{
	if (size <= 0)
		return NULL;
	return rcs_buf_alloc((size_t)size);
}

void rcustring_compat_free(const char *str)
{
	rcs_buf_free_deferred((char *)str);
}

char *rcustring_compat_access(char **str, int size)
{
	char *copy;

	if (!str || size <= 0)
		return NULL;
	copy = malloc((size_t)size);
	if (!copy)
		return NULL;
	rcu_read_lock();
	/* Bounded copy: the writer's buffer may hold no NUL within size. */
	strncpy(copy, rcu_dereference(*str), (size_t)size - 1);
	rcu_read_unlock();
	copy[size - 1] = '\0';
	return copy;
}
