/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Time in the int vector handlers: the kernel's conversions between the
 * text's seconds, 1/USER_HZ seconds or milliseconds and the jiffies
 * stored (kernel/sysctl.c do_proc_dointvec_*jiffies_conv, kernel/time/time.c,
 * include/linux/jiffies.h), with HZ = SYSCTL_HZ and USER_HZ = SYSCTL_USER_HZ,
 * edges included. handlers_int.c runs them through its one vector framing.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "rcustring/sysctl.h"
#include "jiffies.h"
#include "number_text.h"

/*
 * do_proc_dointvec_jiffies_conv: seconds in the text, jiffies stored. The
 * magnitude is checked against INT_MAX / HZ for both signs; a read
 * truncates toward zero (-1 jiffy reads "-0", as upstream prints it).
 */
int rcs_jiffies_iconv_w(bool neg, unsigned long lval, int *v)
{
	if (lval > INT_MAX / SYSCTL_HZ)
		return 1;
	*v = neg ? (int)-(long)(lval * SYSCTL_HZ) : (int)(lval * SYSCTL_HZ);
	return 0;
}

void rcs_jiffies_iconv_r(int v, bool *neg, unsigned long *lval)
{
	rcs_split_int(v, neg, lval);
	*lval /= SYSCTL_HZ;
}

/* The kernel's TICK_NSEC (include/vdso/jiffies.h). */
#define TICK_NSEC ((1000000000UL + SYSCTL_HZ / 2) / SYSCTL_HZ)

/* kernel/time/time.c clock_t_to_jiffies(), on 64-bit unsigned long. */
static unsigned long clock_t_to_jiffies(unsigned long x)
{
	if (SYSCTL_HZ % SYSCTL_USER_HZ == 0) {
		if (x >= ~0UL / (SYSCTL_HZ / SYSCTL_USER_HZ))
			return ~0UL;
		return x * (SYSCTL_HZ / SYSCTL_USER_HZ);
	}
	if (x >= ~0UL / SYSCTL_HZ * SYSCTL_USER_HZ)
		return ~0UL;
	return (unsigned long)((uint64_t)x * SYSCTL_HZ / SYSCTL_USER_HZ);
}

/* kernel/time/time.c jiffies_to_clock_t(). */
static unsigned long jiffies_to_clock_t(unsigned long x)
{
	if (TICK_NSEC % (1000000000UL / SYSCTL_USER_HZ) == 0) {
		if (SYSCTL_HZ < SYSCTL_USER_HZ)
			return x * (SYSCTL_USER_HZ / SYSCTL_HZ);
		return x / (SYSCTL_HZ / SYSCTL_USER_HZ);
	}
	return (unsigned long)((uint64_t)x * TICK_NSEC / (1000000000UL / SYSCTL_USER_HZ));
}

/*
 * do_proc_dointvec_userhz_jiffies_conv: 1/USER_HZ seconds in the text.
 * Upstream converts the signed value as an unsigned long and stores the
 * result cut to int without a further check: "-5" becomes ~0UL jiffies,
 * stored as -1, and a large value wraps. We keep that, bit for bit.
 */
int rcs_userhz_iconv_w(bool neg, unsigned long lval, int *v)
{
	if (SYSCTL_USER_HZ < SYSCTL_HZ && lval > (LONG_MAX / SYSCTL_HZ) * SYSCTL_USER_HZ)
		return 1;
	*v = (int)clock_t_to_jiffies(neg ? -lval : lval);
	return 0;
}

void rcs_userhz_iconv_r(int v, bool *neg, unsigned long *lval)
{
	rcs_split_int(v, neg, lval);
	*lval = jiffies_to_clock_t(*lval);
}

/* include/linux/jiffies.h: MAX_JIFFY_OFFSET, what msecs_to_jiffies gives for "infinite". */
#define MAX_JIFFY_OFFSET ((LONG_MAX >> 1) - 1)
_Static_assert(SYSCTL_HZ <= 1000 && 1000 % SYSCTL_HZ == 0,
	       "msecs conversions below are the kernel's HZ <= 1000, 1000 % HZ == 0 case");

/* msecs_to_jiffies(): note the unsigned int argument, which cuts the value. */
static unsigned long msecs_to_jiffies(unsigned int m)
{
	if ((int)m < 0)
		return MAX_JIFFY_OFFSET;
	return (m + (1000 / SYSCTL_HZ) - 1) / (1000 / SYSCTL_HZ);
}

/* jiffies_to_msecs() returns an unsigned int. */
static unsigned int jiffies_to_msecs(unsigned long j)
{
	return (unsigned int)((1000 / SYSCTL_HZ) * j);
}

/* do_proc_dointvec_ms_jiffies_conv: milliseconds in the text, rounded up to jiffies. */
int rcs_ms_iconv_w(bool neg, unsigned long lval, int *v)
{
	unsigned long jif = msecs_to_jiffies((unsigned int)(neg ? -lval : lval));

	if (jif > INT_MAX)
		return 1;
	*v = (int)jif;
	return 0;
}

void rcs_ms_iconv_r(int v, bool *neg, unsigned long *lval)
{
	rcs_split_int(v, neg, lval);
	*lval = jiffies_to_msecs(*lval);
}
