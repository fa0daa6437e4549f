/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcustring read side, inline (opt-in).
 *
 * <rcustring/rcustring.h> keeps liburcu out of its callers: its read side is
 * calls into the library (a call through the PLT and a return for each read
 * lock, unlock and copy). This header compiles the same read side into the
 * caller, on liburcu-bp's own inline read lock, for the hottest readers:
 *
 *   rcustring_read_lock_inline(); p = rcustring_dereference(s); ...;
 *   rcustring_read_unlock_inline();
 *   rcustring_copy_inline(s, buf, size)      (same contract as rcustring_copy)
 *
 * The library's own functions are these same inline functions, and both
 * forms use liburcu-bp's per-thread reader state: sections nest across the
 * two forms and every rule of <rcustring/rcustring.h> holds, registration
 * included (none is needed: a thread registers on its first read lock).
 *
 * The caller links liburcu-bp (the rcustring pkg-config file requires it). A
 * caller that is itself a shared library should compile with
 * -ftls-model=initial-exec, or each read lock goes through __tls_get_addr.
 * liburcu's inline read side is LGPL code meant for inclusion (its ten-line
 * rule), like this header.
 */
#ifndef RCUSTRING_STATIC_RCUSTRING_H
#define RCUSTRING_STATIC_RCUSTRING_H

#include <errno.h>
#include <string.h>
#include <urcu/static/urcu-bp.h>

#include <rcustring/rcustring.h>

#ifdef __cplusplus
extern "C" {
#endif

/** rcustring_read_lock_inline - rcustring_read_lock(), inline */
static inline void rcustring_read_lock_inline(void)
{
	_urcu_bp_read_lock();
}

/** rcustring_read_unlock_inline - rcustring_read_unlock(), inline */
static inline void rcustring_read_unlock_inline(void)
{
	_urcu_bp_read_unlock();
}

/** rcustring_copy_inline - rcustring_copy(), inline: same returns */
static inline ssize_t rcustring_copy_inline(const struct rcustring *s, char *buf, size_t size)
{
	const char *v;
	size_t len;

	if (!s || !buf || size == 0)
		return -EINVAL;
	/*
	 * Keep @size opaque to the compiler: knowing it (sizeof buf at the
	 * call site), GCC inlines the bounded memcpy as "rep movsq", which
	 * costs 1.8x (200 B) to 4x (24 B) the same copy through glibc's
	 * memcpy on the CPU measured in BENCHMARKS.md. An empty asm costs no
	 * instruction.
	 */
	__asm__("" : "+r"(size));
	rcustring_read_lock_inline();
	v = rcustring_dereference(s);
	len = strnlen(v, size);
	if (len < size)
		memcpy(buf, v, len + 1);
	rcustring_read_unlock_inline();
	if (len >= size) {
		buf[0] = '\0';
		return -ERANGE;
	}
	return (ssize_t)len;
}

#ifdef __cplusplus
}
#endif

#endif /* RCUSTRING_STATIC_RCUSTRING_H */
