/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Link-time fault injection: tests linked with -Wl,--wrap=malloc fail the
 * Nth malloc after failmalloc_arm(N) (1 = the next one). While armed it also
 * sums the bytes requested, so failmalloc_arm(LONG_MAX) measures what a call
 * allocates without failing it. Include once per test program.
 */
#ifndef RCUSTRING_TESTS_FAILMALLOC_H
#define RCUSTRING_TESTS_FAILMALLOC_H

#include <stddef.h>

void *__real_malloc(size_t size);

static __thread long failmalloc_countdown; /* 0: disarmed */
static __thread long failmalloc_calls;     /* mallocs seen while armed */
static __thread size_t failmalloc_requested; /* bytes they asked for */

void *__wrap_malloc(size_t size);
void *__wrap_malloc(size_t size)
{
	if (failmalloc_countdown > 0) {
		failmalloc_calls++;
		failmalloc_requested += size;
		if (--failmalloc_countdown == 0)
			return NULL;
	}
	return __real_malloc(size);
}

static inline void failmalloc_arm(long nth)
{
	failmalloc_calls = 0;
	failmalloc_requested = 0;
	failmalloc_countdown = nth;
}

/* Disarm; returns how many mallocs ran while armed. */
static inline long failmalloc_disarm(void)
{
	long calls = failmalloc_calls;

	failmalloc_countdown = 0;
	return calls;
}

#endif
