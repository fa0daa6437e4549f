/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The 2010 kernel patch's names, and the kernel's usermode-helper names, as
 * static inline wrappers, so kernel-style code that keeps a bare `char *`
 * published with rcu_assign_pointer, or calls call_usermodehelper(), ports over.
 * New code should use struct rcustring (rcustring.h), which also serializes
 * writers, refuses over-long values and remembers its static default.
 *
 * Differences from the patch: no gfp_t argument; access_rcu_string() checks
 * its own allocation (the patch checked the wrong pointer).
 */
#ifndef RCUSTRING_COMPAT_H
#define RCUSTRING_COMPAT_H

#include "rcustring/rcustring.h"
#include "rcustring/umh.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library exports its own names (rcustring_compat_*, umh_*); the
 * 2010 names are static inline wrappers here, so they never enter the
 * symbol table of a program or of librcustring.so, where they could clash
 * with another library's call_usermodehelper or argv_split.
 */

/** rcustring_compat_alloc - alloc_rcu_string() */
RCUSTRING_API char *rcustring_compat_alloc(int size);
/** rcustring_compat_free - free_rcu_string() */
RCUSTRING_API void rcustring_compat_free(const char *str);
/** rcustring_compat_access - access_rcu_string() */
RCUSTRING_API char *rcustring_compat_access(char **str, int size);

/**
 * alloc_rcu_string - allocate a @size-byte string that free_rcu_string() can free
 * Return: an empty string of capacity @size, or NULL (size <= 0 or no memory).
 */
static inline char *alloc_rcu_string(int size)
{
	return rcustring_compat_alloc(size);
}

/**
 * free_rcu_string - free @str after a grace period
 *
 * @str must come from alloc_rcu_string(); a static default must never be
 * passed here (the caller knows which one it published). NULL is ignored.
 * Waits for a grace period when the backlog of old versions is full; inside
 * a read-side section it cannot, and queues @str beyond the bound instead
 * (counted in struct rcustring_stats' overflowed).
 */
static inline void free_rcu_string(const char *str)
{
	rcustring_compat_free(str);
}

/**
 * access_rcu_string - heap copy of the string published in *@str
 * @str: the RCU-protected variable
 * @size: the capacity the writers allocate with (not strlen)
 *
 * Return: a NUL-terminated copy to free(), or NULL (bad arguments or no
 * memory).
 */
static inline char *access_rcu_string(char **str, int size)
{
	return rcustring_compat_access(str, size);
}

/* The kernel's usermode-helper names (umh.h documents each umh_* call). */

/** call_usermodehelper - umh_call() */
static inline int call_usermodehelper(const char *path, char **argv, char **envp, int wait)
{
	return umh_call(path, argv, envp, wait);
}

/** call_usermodehelper_cleanup - umh_call_cleanup() */
static inline int call_usermodehelper_cleanup(const char *path, char **argv, char **envp, int wait,
					      void (*cleanup)(void *data), void *data)
{
	return umh_call_cleanup(path, argv, envp, wait, cleanup, data);
}

/** call_usermodehelper_stdin - umh_call_stdin() */
static inline int call_usermodehelper_stdin(const char *path, char **argv, char **envp,
					    const void *data, size_t len, int wait)
{
	return umh_call_stdin(path, argv, envp, data, len, wait);
}

/** argv_split - umh_argv_split() */
static inline char **argv_split(const char *str, int *argcp)
{
	return umh_argv_split(str, argcp);
}

/** argv_free - umh_argv_free() */
static inline void argv_free(char **argv)
{
	umh_argv_free(argv);
}

#ifdef __cplusplus
}
#endif

#endif
