/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_do_large_bitmap: a bitmap read and written as ranges ("1-3,5"),
 * following the kernel's kernel/sysctl.c of 6.12 in its text, *lenp and
 * *ppos. Where we differ on purpose: a refused write stores nothing (the
 * input is parsed into a private bitmap first), bits are loaded and stored
 * with __atomic builtins, and the argument checks of handlers.h apply.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

#include "rcustring/sysctl.h"
#include "handlers.h"
#include "number_text.h"

#define BITS_PER_ULONG (CHAR_BIT * sizeof(unsigned long))

static bool bit_test(const unsigned long *map, unsigned long bit)
{
	return (__atomic_load_n(&map[bit / BITS_PER_ULONG], __ATOMIC_RELAXED) >>
		(bit % BITS_PER_ULONG)) & 1;
}

/* find_next_bit (@set) / find_next_zero_bit (!@set) from @bit; @len if none. */
static unsigned long bit_find(const unsigned long *map, unsigned long len, unsigned long bit,
			      bool set)
{
	for (; bit < len; bit++)
		if (bit_test(map, bit) == set)
			return bit;
	return len;
}

/* bitmap_set(tmp, a, b - a + 1): @tmp is private, no atomics needed. */
static void bits_set(unsigned long *tmp, unsigned long a, unsigned long b)
{
	for (unsigned long bit = a; bit <= b; bit++)
		tmp[bit / BITS_PER_ULONG] |= 1UL << (bit % BITS_PER_ULONG);
}

/*
 * The write half of proc_do_large_bitmap into @tmp (zeroed). Returns the
 * error and, in *@left, what upstream's variable of that name holds at the
 * end: the bytes not consumed, including those past the first page.
 */
static int bitmap_parse(unsigned long *tmp, unsigned long bitmap_len, const char *buffer,
			size_t len, size_t *left_out)
{
	static const char tr_a[] = { '-', ',', '\n' }, tr_b[] = { ',', '\n', 0 };
	const char *p = buffer;
	size_t left = len, skipped = 0;
	char c = 0;
	int err = 0;

	if (left > PROC_PAGE_SIZE - 1) {
		left = PROC_PAGE_SIZE - 1;
		/* How much of the buffer this pass skips: a later write continues. */
		skipped = len - left;
	}
	rcs_proc_skip_char(&p, &left, '\n');
	while (!err && left) {
		unsigned long val_a, val_b;
		size_t saved_left = left;
		bool neg;

		err = rcs_proc_get_long_tr(&p, &left, &val_a, &neg, tr_a, sizeof(tr_a), &c);
		/*
		 * A cut input consumed whole, or one byte left (maybe a "-"):
		 * stop before this number, the caller writes the rest again.
		 */
		if (left <= 1 && skipped) {
			left = saved_left;
			break;
		}
		if (err)
			break;
		if (val_a >= bitmap_len || neg) {
			err = -EINVAL;
			break;
		}
		val_b = val_a;
		if (left) {
			p++;
			left--;
		}
		if (c == '-') {
			err = rcs_proc_get_long_tr(&p, &left, &val_b, &neg, tr_b, sizeof(tr_b), &c);
			if (!left && skipped) {
				left = saved_left;
				break;
			}
			if (err)
				break;
			if (val_b >= bitmap_len || neg || val_a > val_b) {
				err = -EINVAL;
				break;
			}
			if (left) {
				p++;
				left--;
			}
		}
		bits_set(tmp, val_a, val_b);
		rcs_proc_skip_char(&p, &left, '\n');
	}
	*left_out = left + skipped;
	return err;
}

/**
 * proc_do_large_bitmap - read or write a bitmap as ranges ("1-3,5")
 *
 * data is an unsigned long ** (a pointer to the bitmap's pointer) and
 * maxlen is the number of bits, as upstream. Read (position 0 only): the
 * set bits as comma-separated ranges and a '\n'. Write: ranges separated
 * by ',' or '\n'; at position 0 the bitmap is replaced, at a later
 * position (the rest of a long write, or a second write on the same open
 * file) the bits are added. Only the first 4095 bytes are parsed per call;
 * a number cut there is left for the next call, so *lenp may come back
 * smaller than given.
 * Return: 0, -EINVAL (bad range, bit >= maxlen, '-' sign, bad trailer),
 * -ENOMEM; nothing is stored on error.
 */
int proc_do_large_bitmap(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
			 off_t *ppos)
{
	unsigned long *bitmap, *tmp, bitmap_len;
	size_t left, words;
	int err;

	err = rcs_handler_check_args(table, buffer, lenp, ppos);
	if (err)
		return err;
	bitmap = table->data ? *(unsigned long **)table->data : NULL;
	bitmap_len = table->maxlen > 0 ? (unsigned long)table->maxlen : 0;
	left = *lenp;
	if (!bitmap || !bitmap_len || !left || (*ppos && !write)) {
		*lenp = 0;
		return 0;
	}
	words = (bitmap_len + BITS_PER_ULONG - 1) / BITS_PER_ULONG;

	if (!write) {
		unsigned long bit_a, bit_b = 0;
		char *out = buffer;
		bool first = true;

		while (left) {
			bit_a = bit_find(bitmap, bitmap_len, bit_b, true);
			if (bit_a >= bitmap_len)
				break;
			bit_b = bit_find(bitmap, bitmap_len, bit_a + 1, false) - 1;
			if (!first)
				rcs_proc_put_char(&out, &left, ',');
			rcs_proc_put_long(&out, &left, bit_a, false);
			if (bit_a != bit_b) {
				rcs_proc_put_char(&out, &left, '-');
				rcs_proc_put_long(&out, &left, bit_b, false);
			}
			first = false;
			bit_b++;
		}
		rcs_proc_put_char(&out, &left, '\n');
		*lenp -= left;
		*ppos += (off_t)*lenp;
		return 0;
	}

	tmp = calloc(words, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	err = bitmap_parse(tmp, bitmap_len, buffer, *lenp, &left);
	if (!err) {
		/* bitmap_or at a later position, bitmap_copy at 0. */
		for (size_t w = 0; w < words; w++) {
			unsigned long v = tmp[w];

			if (*ppos)
				v |= __atomic_load_n(&bitmap[w], __ATOMIC_RELAXED);
			__atomic_store_n(&bitmap[w], v, __ATOMIC_RELAXED);
		}
		*lenp -= left;
		*ppos += (off_t)*lenp;
	}
	free(tmp);
	return err;
}
