/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: proc_do_large_bitmap never crashes or reads past *lenp,
 * returns 0 or -EINVAL, stores nothing on error, never claims more bytes
 * than given, at position 0 replaces and past it only adds bits, and what
 * it stores reads back as ranges that store the same bitmap again.
 *
 * Input: byte 0 picks the bitmap size, byte 1 the position (mostly 0), the
 * rest is what is written.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl.h"

#define WORDS 4
static unsigned long bits[WORDS];
static unsigned long *bitsp = bits;
static const int sizes[] = { 1, 63, 64, 65, 100, 256 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long before[WORDS], after[WORDS];
	struct ctl_table t = { "b", &bitsp, 0, 0644, proc_do_large_bitmap, NULL, NULL, NULL };
	static char text[4096];
	size_t len, lenp;
	off_t pos, pos0;
	char *buf;
	int ret;

	if (size < 2)
		return 0;
	t.maxlen = sizes[data[0] % (sizeof(sizes) / sizeof(sizes[0]))];
	pos0 = data[1] < 224 ? 0 : data[1] - 224;
	len = size - 2;
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 2, len);

	/* Start from a few bits set, inside the size. */
	memset(bits, 0, sizeof(bits));
	bits[0] = t.maxlen > 4 ? 0x11 : 0x1;
	memcpy(before, bits, sizeof(bits));
	lenp = len;
	pos = pos0;
	ret = proc_do_large_bitmap(&t, 1, buf, &lenp, &pos);
	memcpy(after, bits, sizeof(bits));
	free(buf);

	if (ret != 0 && ret != -EINVAL)
		abort();
	if (lenp > len || pos < pos0)
		abort();
	if (ret != 0 && memcmp(before, after, sizeof(bits)))
		abort(); /* a refused write stored something */
	if (ret != 0)
		return 0;
	for (int w = 0; w < WORDS; w++) {
		if (pos0 && (after[w] & before[w]) != before[w])
			abort(); /* past position 0 bits are only added */
		for (int b = 0; b < 64; b++)
			if ((after[w] >> b & 1) && w * 64 + b >= t.maxlen)
				abort(); /* a bit beyond the size */
	}

	/* Round trip: the ranges read back store the same bitmap. */
	lenp = sizeof(text);
	pos = 0;
	if (proc_do_large_bitmap(&t, 0, text, &lenp, &pos) != 0 || !lenp || text[lenp - 1] != '\n')
		abort();
	memset(bits, 0xff, sizeof(bits));
	pos = 0;
	if (proc_do_large_bitmap(&t, 1, text, &lenp, &pos) != 0)
		abort();
	for (int w = 0; w < WORDS; w++)
		if (w * 64 < t.maxlen) {
			unsigned long mask = t.maxlen - w * 64 >= 64 ? ~0UL
							     : (1UL << (t.maxlen - w * 64)) - 1;

			if ((bits[w] & mask) != (after[w] & mask))
				abort();
		}
	return 0;
}
