/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the u8 and time-converting handlers (proc_dou8vec_minmax,
 * proc_dointvec_jiffies, proc_dointvec_userhz_jiffies,
 * proc_dointvec_ms_jiffies, proc_doulongvec_ms_jiffies_minmax) never
 * crash, return 0 or -EINVAL, store nothing on error or past position 0,
 * never claim more bytes than given, and what they store reads back as
 * text that stores the same value again (userhz: after two more rounds,
 * since 1/100 s and 1/250 s do not map one to one, as in the kernel).
 *
 * Input: byte 0 picks the handler, byte 1 the position (mostly 0), the
 * rest is what is written.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl.h"

static uint8_t u8v;
static int ivec[3];
static unsigned long lvec[2];
static unsigned int u8min = 3, u8max = 200;
static unsigned long lmin = 2;

static struct ctl_table tables[] = {
	{ "u8", &u8v, 1, 0644, proc_dou8vec_minmax, &u8min, &u8max, NULL },
	{ "u8n", &u8v, 1, 0644, proc_dou8vec_minmax, NULL, NULL, NULL },
	{ "j", ivec, sizeof(ivec), 0644, proc_dointvec_jiffies, NULL, NULL, NULL },
	{ "ms", ivec, sizeof(ivec), 0644, proc_dointvec_ms_jiffies, NULL, NULL, NULL },
	{ "lms", lvec, sizeof(lvec), 0644, proc_doulongvec_ms_jiffies_minmax, &lmin, NULL, NULL },
	{ "uhz", ivec, sizeof(ivec), 0644, proc_dointvec_userhz_jiffies, NULL, NULL, NULL },
};
#define NTABLES (sizeof(tables) / sizeof(tables[0]))

static void reset(void)
{
	u8v = 64;
	/* whole seconds, positive: every kind writes them back (ms refuses negatives) */
	ivec[0] = 250, ivec[1] = 500, ivec[2] = 1250;
	lvec[0] = 70, lvec[1] = 80;
}

/* Read the value and write that text back at 0; abort if either fails. */
static void round_trip(const struct ctl_table *t)
{
	char text[256];
	size_t lenp = sizeof(text);
	off_t pos = 0;

	if (t->proc_handler(t, 0, text, &lenp, &pos) != 0 || lenp == 0 || text[lenp - 1] != '\n')
		abort();
	pos = 0;
	if (t->proc_handler(t, 1, text, &lenp, &pos) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char before[sizeof(lvec)], after[sizeof(lvec)], again[sizeof(lvec)];
	const struct ctl_table *t;
	size_t len, lenp, n;
	off_t pos, pos0;
	char *buf;
	int ret;

	if (size < 2)
		return 0;
	t = &tables[data[0] % NTABLES];
	n = (size_t)t->maxlen;
	pos0 = data[1] < 224 ? 0 : data[1] - 224;
	len = size - 2;
	/* An exact-size copy, so reading past *lenp is caught by ASan. */
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 2, len);

	reset();
	memcpy(before, t->data, n);
	lenp = len;
	pos = pos0;
	ret = t->proc_handler(t, 1, buf, &lenp, &pos);
	memcpy(after, t->data, n);
	free(buf);

	if (ret != 0 && ret != -EINVAL)
		abort();
	if (lenp > len || pos < pos0)
		abort();
	if ((ret != 0 || pos0 != 0) && memcmp(before, after, n))
		abort(); /* refused, or past position 0: nothing stored */
	if (ret != 0)
		return 0;

	/*
	 * userhz: a negative value reads back as "-N", which stores -1
	 * (clock_t_to_jiffies of a huge unsigned long), which reads "-0" and
	 * stores 0; positive values settle after one round. So two rounds.
	 */
	if (t->proc_handler == proc_dointvec_userhz_jiffies) {
		round_trip(t);
		round_trip(t);
		memcpy(after, t->data, n);
	}
	/* ms: jiffies_to_msecs is 32-bit; values this far out do not come from text. */
	if (t->proc_handler == proc_dointvec_ms_jiffies)
		for (size_t i = 0; i < 3; i++)
			if (ivec[i] >= 1 << 29 || ivec[i] <= -(1 << 29))
				return 0;
	round_trip(t);
	memcpy(again, t->data, n);
	if (memcmp(after, again, n))
		abort();
	return 0;
}
