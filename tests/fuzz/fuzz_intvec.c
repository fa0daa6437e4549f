/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: numeric handler writes never crash, return 0 or -EINVAL,
 * store nothing on error, never claim more bytes than given, and what a
 * successful write stored reads back as text that writes the same values.
 *
 * Input: byte 0 picks the handler, byte 1 the position (mostly 0), the
 * rest is what is written.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl.h"

static int ivec[3];
static unsigned long lvec[3];
static unsigned int uval;
static bool bval;
static int imin = -1000, imax = 1000000;
static unsigned long lmin = 5, lmax = ULONG_MAX - 5;

static struct ctl_table tables[] = {
	{ "i", ivec, sizeof(ivec), 0644, proc_dointvec, NULL, NULL, NULL },
	{ "im", ivec, sizeof(ivec), 0644, proc_dointvec_minmax, &imin, &imax, NULL },
	{ "lm", lvec, sizeof(lvec), 0644, proc_doulongvec_minmax, &lmin, &lmax, NULL },
	{ "u", &uval, sizeof(uval), 0644, proc_douintvec, NULL, NULL, NULL },
	{ "b", &bval, sizeof(bval), 0644, proc_dobool, NULL, NULL, NULL },
};
#define NTABLES (sizeof(tables) / sizeof(tables[0]))

static size_t data_size(const struct ctl_table *t)
{
	return (size_t)t->maxlen;
}

static void reset(void)
{
	ivec[0] = 7, ivec[1] = -8, ivec[2] = 9;
	lvec[0] = 70, lvec[1] = 80, lvec[2] = 90;
	uval = 12345;
	bval = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char before[sizeof(lvec)], after[sizeof(lvec)];
	const struct ctl_table *t;
	char *buf, text[256];
	size_t len, lenp;
	off_t pos, pos0;
	int ret;

	if (size < 2)
		return 0;
	t = &tables[data[0] % NTABLES];
	pos0 = data[1] < 224 ? 0 : data[1] - 224;
	len = size - 2;
	/* An exact-size copy, so reading past *lenp is caught by ASan. */
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 2, len);

	reset();
	memcpy(before, t->data, data_size(t));
	lenp = len;
	pos = pos0;
	ret = t->proc_handler(t, 1, buf, &lenp, &pos);
	memcpy(after, t->data, data_size(t));
	free(buf);

	if (ret != 0 && ret != -EINVAL)
		abort();
	if (lenp > len || pos < pos0)
		abort();
	if (ret != 0 && memcmp(before, after, data_size(t)))
		abort(); /* a refused write stored something */
	if (pos0 != 0 && memcmp(before, after, data_size(t)))
		abort(); /* strict mode: writes past position 0 are ignored */
	if (ret != 0)
		return 0;

	/* Round trip: read the stored values, write that text, same values. */
	lenp = sizeof(text);
	pos = 0;
	if (t->proc_handler(t, 0, text, &lenp, &pos) != 0 || lenp == 0 || text[lenp - 1] != '\n')
		abort();
	reset();
	pos = 0;
	if (t->proc_handler(t, 1, text, &lenp, &pos) != 0)
		abort();
	if (memcmp(after, t->data, data_size(t)))
		abort();
	return 0;
}
