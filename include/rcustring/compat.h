/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The 2010 kernel patch's names, as thin wrappers, so kernel-style code that
 * keeps a bare `char *` published with rcu_assign_pointer ports over.
 * New code should use struct rcustring (rcustring.h), which also serializes
 * writers, refuses over-long values and remembers its static default.
 *
 * Differences from the patch: no gfp_t argument; access_rcu_string() checks
 * its own allocation (the patch checked the wrong pointer).
 */
#ifndef RCUSTRING_COMPAT_H
#define RCUSTRING_COMPAT_H

#include "rcustring/rcustring.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * alloc_rcu_string - allocate a @size-byte string that free_rcu_string() can free
 * Return: an empty string of capacity @size, or NULL (size <= 0 or no memory).
 */
RCUSTRING_API char *alloc_rcu_string(int size);

/**
 * free_rcu_string - free @str after a grace period
 *
 * @str must come from alloc_rcu_string(); a static default must never be
 * passed here (the caller knows which one it published). NULL is ignored.
 * Waits for a grace period when the backlog of old versions is full; inside
 * a read-side section it cannot, and queues @str beyond the bound instead
 * (counted in struct rcustring_stats' overflowed).
 */
RCUSTRING_API void free_rcu_string(const char *str);

/**
 * access_rcu_string - heap copy of the string published in *@str
 * @str: the RCU-protected variable
 * @size: the capacity the writers allocate with (not strlen)
 *
 * Return: a NUL-terminated copy to free(), or NULL (bad arguments or no
 * memory).
 */
RCUSTRING_API char *access_rcu_string(char **str, int size);

#ifdef __cplusplus
}
#endif

#endif
