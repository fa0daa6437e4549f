/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Time helpers shared by the tests that run usermode helpers. Include
 * after <cmocka.h> and <rcustring/umh.h>.
 */
#ifndef RCUSTRING_TESTS_UMH_WAIT_H
#define RCUSTRING_TESTS_UMH_WAIT_H

#include <time.h>

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Every helper reaped: the library's count drops to 0 within 10 s. */
static inline void wait_all_reaped(void)
{
	double end = now_s() + 10;

	while (umh_running() > 0 && now_s() < end)
		sleep_ms(5);
	assert_int_equal(umh_running(), 0);
}

#endif
