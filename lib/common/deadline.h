/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/common: small rules every part of the project follows the same way,
 * header-only so that the library, its static areas (lib/etcd) and the
 * tools can all use them without a link dependency.
 *
 * Deadlines on CLOCK_MONOTONIC: in milliseconds for poll() loops, and as a
 * struct timespec for pthread_cond_timedwait() (whose condition variables
 * are set up with CLOCK_MONOTONIC).
 */
#ifndef RCUSTRING_COMMON_DEADLINE_H
#define RCUSTRING_COMMON_DEADLINE_H

#include <stdint.h>
#include <time.h>

/* Now, in milliseconds of CLOCK_MONOTONIC. */
static inline int64_t rcs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until @deadline (rcs_now_ms() form), for poll(): at
 * least 0, at most INT_MAX. */
static inline int rcs_ms_left(int64_t deadline)
{
	int64_t left = deadline - rcs_now_ms();

	return left <= 0 ? 0 : left > 0x7fffffff ? 0x7fffffff : (int)left;
}

/* CLOCK_MONOTONIC now plus @ms (>= 0) milliseconds, for a timed wait. */
static inline struct timespec rcs_deadline_after_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += ms % 1000 * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

#endif
