/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The handler kinds added after the first ones, against the kernel's rules
 * (kernel/sysctl.c of Linux 6.12, kernel/time/time.c, include/linux/jiffies.h,
 * with HZ = SYSCTL_HZ = 250 and USER_HZ = SYSCTL_USER_HZ = 100):
 * proc_dou8vec_minmax, proc_dointvec_jiffies, proc_dointvec_userhz_jiffies,
 * proc_dointvec_ms_jiffies, proc_doulongvec_ms_jiffies_minmax,
 * proc_do_large_bitmap; and the descriptor table behind
 * sysctl_handler_info(), registration and sysctl_entry_explain().
 *
 * Each row: input, *ppos before, expected return, *lenp and *ppos after,
 * and the stored value after (every row starts from the same value).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"

#define SL ((size_t)-1)

struct row {
	int line;
	const char *in;
	size_t len;
	off_t pos;
	int ret;
	size_t lenp;
	off_t ppos;
	long long want[2];
};

#define W(in, pos, ret, lenp, ppos, ...) { __LINE__, in, SL, pos, ret, lenp, ppos, { __VA_ARGS__ } }

enum etype { T_U8, T_INT, T_ULONG };

static long long get(const void *d, enum etype t, int i)
{
	if (t == T_U8)
		return ((const uint8_t *)d)[i];
	if (t == T_INT)
		return ((const int *)d)[i];
	return (long long)((const unsigned long *)d)[i];
}

static void set(void *d, enum etype t, int i, long long v)
{
	if (t == T_U8)
		((uint8_t *)d)[i] = (uint8_t)v;
	else if (t == T_INT)
		((int *)d)[i] = (int)v;
	else
		((unsigned long *)d)[i] = (unsigned long)v;
}

static void run_writes(struct ctl_table *t, enum etype ty, int n, const long long *init,
		       const struct row *rows, size_t nrows)
{
	int bad = 0;

	for (size_t r = 0; r < nrows; r++) {
		const struct row *w = &rows[r];
		size_t len = w->len == SL ? strlen(w->in) : w->len, lenp = len;
		off_t ppos = w->pos;
		char *buf = malloc(len + 1);
		int ret;

		assert_non_null(buf);
		memcpy(buf, w->in, len);
		for (int i = 0; i < n; i++)
			set(t->data, ty, i, init[i]);
		ret = t->proc_handler(t, 1, buf, &lenp, &ppos);
		if (ret != w->ret || lenp != w->lenp || ppos != w->ppos) {
			print_error("line %d: ret %d lenp %zu ppos %lld, want %d %zu %lld\n", w->line,
				    ret, lenp, (long long)ppos, w->ret, w->lenp, (long long)w->ppos);
			bad++;
		}
		for (int i = 0; i < n; i++)
			if (get(t->data, ty, i) != w->want[i]) {
				print_error("line %d: element %d is %lld, want %lld\n", w->line, i,
					    get(t->data, ty, i), w->want[i]);
				bad++;
			}
		free(buf);
	}
	assert_int_equal(bad, 0);
}

static void read_is(struct ctl_table *t, off_t pos, size_t size, int ret, const char *want,
		    off_t ppos_after)
{
	char buf[512];
	size_t lenp = size;
	off_t ppos = pos;

	memset(buf, '#', sizeof(buf));
	assert_int_equal(t->proc_handler(t, 0, buf, &lenp, &ppos), ret);
	assert_int_equal(lenp, strlen(want));
	assert_memory_equal(buf, want, lenp);
	assert_int_equal(buf[lenp], '#');
	assert_int_equal(ppos, ppos_after);
}

/* ---- proc_dou8vec_minmax ---- */

static uint8_t u8v;

static void test_u8_write(void **state)
{
	static unsigned int lo = 1, hi = 200;
	struct ctl_table t = { "u8", &u8v, 1, 0644, proc_dou8vec_minmax, &lo, &hi, NULL };
	struct ctl_table nob = { "u8", &u8v, 1, 0644, proc_dou8vec_minmax, NULL, NULL, NULL };
	const long long init[1] = { 64 };
	const struct row rows[] = {
		/* do_proc_douintvec_w: a success leaves *lenp and *ppos as they were */
		W("100", 0, 0, 3, 0, 100),
		W("100 \n", 0, 0, 5, 0, 100),
		W("0x20", 0, 0, 4, 0, 32),
		W("010", 0, 0, 3, 0, 8),
		/* bounds from *(unsigned int *)extra1 / extra2 */
		W("1", 0, 0, 1, 0, 1),
		W("200", 0, 0, 3, 0, 200),
		W("0", 0, -EINVAL, 1, 0, 64),
		W("201", 0, -EINVAL, 3, 0, 64),
		/* no sign: "if (err || neg) return -EINVAL" */
		W("-1", 0, -EINVAL, 2, 0, 64),
		W("-0", 0, -EINVAL, 2, 0, 64),
		/* proc_get_long: trailer must be space, tab or newline; 21 bytes is too long */
		W("7x", 0, -EINVAL, 2, 0, 64),
		W("000000000000000000007", 0, -EINVAL, 21, 0, 64),
		W("00000000000000000007", 0, 0, 20, 0, 7),
		/* anything after the number and its spaces is ignored (single element) */
		W("7 8", 0, 0, 3, 0, 7),
		W("", 0, 0, 0, 0, 64),
		W("  ", 0, -EINVAL, 2, 0, 64),
		/* sysctl_writes_strict: a write past 0 is ignored, *ppos advances */
		W("9", 2, 0, 1, 3, 64),
	};
	const struct row rows_nob[] = {
		/* NULL bounds: min 0, max 255U */
		W("0", 0, 0, 1, 0, 0),
		W("255", 0, 0, 3, 0, 255),
		W("256", 0, -EINVAL, 3, 0, 64),
		W("4294967296", 0, -EINVAL, 10, 0, 64),
	};

	(void)state;
	run_writes(&t, T_U8, 1, init, rows, sizeof(rows) / sizeof(rows[0]));
	run_writes(&nob, T_U8, 1, init, rows_nob, sizeof(rows_nob) / sizeof(rows_nob[0]));
}

static void test_u8_read_and_maxlen(void **state)
{
	struct ctl_table t = { "u8", &u8v, 1, 0644, proc_dou8vec_minmax, NULL, NULL, NULL };
	uint8_t two[2] = { 1, 2 };
	struct ctl_table arr = { "u8", two, 2, 0644, proc_dou8vec_minmax, NULL, NULL, NULL };
	char buf[16] = "5";
	size_t lenp = 1;
	off_t ppos = 0;

	(void)state;
	u8v = 255;
	read_is(&t, 0, 100, 0, "255\n", 4);
	read_is(&t, 0, 3, 0, "255", 3); /* no room for the newline */
	read_is(&t, 1, 100, 0, "", 1);  /* a read past 0 is end of file */
	/* "Do not support arrays yet": maxlen != sizeof(u8) is -EINVAL, read or write */
	assert_int_equal(proc_dou8vec_minmax(&arr, 1, buf, &lenp, &ppos), -EINVAL);
	lenp = sizeof(buf);
	assert_int_equal(proc_dou8vec_minmax(&arr, 0, buf, &lenp, &ppos), -EINVAL);
	assert_int_equal(two[0], 1);
}

/* ---- the int jiffies kinds ---- */

static int iv[2];

static void test_jiffies(void **state)
{
	struct ctl_table t = { "j", iv, sizeof(iv), 0644, proc_dointvec_jiffies, NULL, NULL, NULL };
	const long long init[2] = { 7, 8 };
	const struct row rows[] = {
		/* do_proc_dointvec_jiffies_conv: stored = s * HZ */
		W("30", 0, 0, 2, 2, 30 * SYSCTL_HZ, 8),
		W("1 -2", 0, 0, 4, 4, SYSCTL_HZ, -2 * SYSCTL_HZ),
		/* "if (*lvalp > INT_MAX / HZ) return 1": either sign */
		W("8589934", 0, 0, 7, 7, 8589934LL * SYSCTL_HZ, 8),
		W("8589935", 0, -EINVAL, 7, 0, 7, 8),
		W("-8589935", 0, -EINVAL, 8, 0, 7, 8),
		/*
		 * ours: a refused vector write stores nothing (the kernel keeps "1");
		 * *lenp and *ppos move as upstream's (the VFS drops them on error)
		 */
		W("1 8589935", 0, -EINVAL, 9, 9, 7, 8),
		W("0x10", 0, 0, 4, 4, 16 * SYSCTL_HZ, 8),
	};

	(void)state;
	run_writes(&t, T_INT, 2, init, rows, sizeof(rows) / sizeof(rows[0]));
	/* read: lval / HZ toward zero, the sign kept: -1 jiffy reads "-0" */
	iv[0] = 2 * SYSCTL_HZ - 1;
	iv[1] = -1;
	read_is(&t, 0, 100, 0, "1\t-0\n", 5);
}

static void test_userhz_jiffies(void **state)
{
	struct ctl_table t = { "u", iv, sizeof(int), 0644, proc_dointvec_userhz_jiffies, NULL, NULL,
			       NULL };
	const long long init[1] = { 9 };
	const struct row rows[] = {
		/* clock_t_to_jiffies, HZ % USER_HZ != 0: x * HZ / USER_HZ */
		W("100", 0, 0, 3, 3, SYSCTL_HZ),
		W("1", 0, 0, 1, 1, 2),
		/* a negative value is ~0UL as unsigned long: ~0UL jiffies, stored as -1 */
		W("-5", 0, 0, 2, 2, -1),
		/* no range check beyond LONG_MAX / HZ * USER_HZ: the int wraps */
		W("858993460", 0, 0, 9, 9, -2147483646LL),
		W("3689348814741910301", 0, -EINVAL, 19, 0, 9),
	};

	(void)state;
	run_writes(&t, T_INT, 1, init, rows, sizeof(rows) / sizeof(rows[0]));
	/* jiffies_to_clock_t: x * TICK_NSEC / (NSEC_PER_SEC / USER_HZ), TICK_NSEC = 4 ms */
	iv[0] = SYSCTL_HZ;
	read_is(&t, 0, 100, 0, "100\n", 4);
	iv[0] = 2; /* 8 ms: 0 hundredths */
	read_is(&t, 0, 100, 0, "0\n", 2);
	iv[0] = -1;
	read_is(&t, 0, 100, 0, "-0\n", 3);
}

static void test_ms_jiffies(void **state)
{
	struct ctl_table t = { "m", iv, sizeof(int), 0644, proc_dointvec_ms_jiffies, NULL, NULL,
			       NULL };
	const long long init[1] = { 9 };
	const struct row rows[] = {
		/* _msecs_to_jiffies (1000 % HZ == 0): rounded up */
		W("1", 0, 0, 1, 1, 1),
		W("1000", 0, 0, 4, 4, SYSCTL_HZ),
		W("1001", 0, 0, 4, 4, SYSCTL_HZ + 1),
		W("0", 0, 0, 1, 1, 0),
		/* msecs_to_jiffies: (int)m < 0 is "infinite", above INT_MAX: -EINVAL */
		W("-1", 0, -EINVAL, 2, 0, 9),
		W("2147483648", 0, -EINVAL, 10, 0, 9),
		W("2147483647", 0, 0, 10, 10, 536870912),
		/* the unsigned int argument cuts 2^32 + 4 to 4 */
		W("4294967300", 0, 0, 10, 10, 1),
	};

	(void)state;
	run_writes(&t, T_INT, 1, init, rows, sizeof(rows) / sizeof(rows[0]));
	/* jiffies_to_msecs: (1000 / HZ) * j as unsigned int */
	iv[0] = SYSCTL_HZ + 1;
	read_is(&t, 0, 100, 0, "1004\n", 5);
	iv[0] = -1;
	read_is(&t, 0, 100, 0, "-4\n", 3);
	iv[0] = 1 << 30; /* 4 * 2^30 wraps to 0 */
	read_is(&t, 0, 100, 0, "0\n", 2);
}

static unsigned long ulv[2];

static void test_ulong_ms_jiffies(void **state)
{
	static unsigned long lo = SYSCTL_HZ / 10; /* jiffies: 100 ms */
	struct ctl_table t = { "l", ulv, sizeof(ulv), 0644, proc_doulongvec_ms_jiffies_minmax, &lo,
			       NULL, NULL };
	struct ctl_table nob = { "l", ulv, sizeof(ulv), 0644, proc_doulongvec_ms_jiffies_minmax,
				 NULL, NULL, NULL };
	const long long init[2] = { 100, 200 };
	const struct row rows[] = {
		/* val = convmul * val / convdiv = HZ * ms / 1000, truncated */
		W("1000 2000", 0, 0, 9, 9, SYSCTL_HZ, 2 * SYSCTL_HZ),
		W("1003", 0, 0, 4, 4, SYSCTL_HZ, 200),
		/* bounds in jiffies, after the conversion: 99 ms is 24 jiffies < 25 */
		W("99", 0, -EINVAL, 2, 0, 100, 200),
		W("100", 0, 0, 3, 3, 25, 200),
		W("-100", 0, -EINVAL, 4, 0, 100, 200),
		/* ours: nothing stored when the second is refused */
		W("1000 1", 0, -EINVAL, 6, 6, 100, 200),
	};
	const struct row rows_nob[] = {
		W("3", 0, 0, 1, 1, 0, 200),
		/* HZ * val wraps in unsigned long, as upstream's */
		W("73786976294838207", 0, 0, 17, 17, 0, 200),
	};

	(void)state;
	run_writes(&t, T_ULONG, 2, init, rows, sizeof(rows) / sizeof(rows[0]));
	run_writes(&nob, T_ULONG, 2, init, rows_nob, sizeof(rows_nob) / sizeof(rows_nob[0]));
	/* read: convdiv * val / convmul = 1000 * j / HZ */
	ulv[0] = 1;
	ulv[1] = SYSCTL_HZ;
	read_is(&t, 0, 100, 0, "4\t1000\n", 7);
}

/* ---- proc_do_large_bitmap ---- */

static unsigned long bits[2];
static unsigned long *bitsp = bits;

static void bitmap_is(struct ctl_table *t, const char *want)
{
	read_is(t, 0, 500, 0, want, (off_t)strlen(want));
}

static int bwrite(struct ctl_table *t, const char *in, size_t len, off_t pos, size_t *lenp,
		  off_t *ppos)
{
	*lenp = len;
	*ppos = pos;
	return proc_do_large_bitmap(t, 1, (void *)in, lenp, ppos);
}

static void test_bitmap(void **state)
{
	struct ctl_table t = { "b", &bitsp, 100, 0644, proc_do_large_bitmap, NULL, NULL, NULL };
	static const struct {
		int line;
		const char *in;
		int ret;
		size_t lenp;
		const char *after; /* read back; every row starts from "50" */
	} rows[] = {
		/* ranges "a-b" and single bits, ',' between, '\n' allowed */
		{ __LINE__, "1-3,5", 0, 5, "1-3,5\n" },
		{ __LINE__, "1,3-4,10-10", 0, 11, "1,3-4,10\n" },
		{ __LINE__, "1\n2", 0, 3, "1-2\n" },
		{ __LINE__, "\n\n7\n", 0, 4, "7\n" },
		{ __LINE__, "0-99", 0, 4, "0-99\n" },
		{ __LINE__, "99", 0, 2, "99\n" },
		{ __LINE__, "0x10,010", 0, 8, "8,16\n" },
		/* a write at 0 replaces: "\n" clears */
		{ __LINE__, "\n", 0, 1, "\n" },
		/* val_a >= bitmap_len, neg, val_a > val_b: -EINVAL, nothing stored */
		{ __LINE__, "100", -EINVAL, 3, "50\n" },
		{ __LINE__, "1,100", -EINVAL, 5, "50\n" },
		{ __LINE__, "-1", -EINVAL, 2, "50\n" },
		{ __LINE__, "3-1", -EINVAL, 3, "50\n" },
		{ __LINE__, "1-", -EINVAL, 2, "50\n" },
		{ __LINE__, "1,,2", -EINVAL, 4, "50\n" },
		{ __LINE__, "1 2", -EINVAL, 3, "50\n" },
		{ __LINE__, "1-3-5", -EINVAL, 5, "50\n" },
		{ __LINE__, "000000000000000000001", -EINVAL, 21, "50\n" },
	};
	int bad = 0;

	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		size_t lenp;
		off_t ppos;
		int ret;
		char buf[64];

		bits[0] = 0;
		bits[1] = 0;
		bits[0] |= 1UL << 50;
		ret = bwrite(&t, rows[r].in, strlen(rows[r].in), 0, &lenp, &ppos);
		lenp = ret ? strlen(rows[r].in) : lenp;
		size_t rl = sizeof(buf);
		off_t rp = 0;

		proc_do_large_bitmap(&t, 0, buf, &rl, &rp);
		if (ret != rows[r].ret || lenp != rows[r].lenp || rl != strlen(rows[r].after) ||
		    memcmp(buf, rows[r].after, rl)) {
			print_error("line %d: ret %d lenp %zu read %.*s\n", rows[r].line, ret, lenp,
				    (int)rl, buf);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

static void test_bitmap_positions(void **state)
{
	struct ctl_table t = { "b", &bitsp, 100, 0644, proc_do_large_bitmap, NULL, NULL, NULL };
	char big[5000];
	size_t lenp, used;
	off_t ppos;

	(void)state;
	/* A write past 0 adds (bitmap_or), where the numeric handlers ignore it. */
	assert_int_equal(bwrite(&t, "1-3", 3, 0, &lenp, &ppos), 0);
	assert_int_equal(ppos, 3);
	assert_int_equal(bwrite(&t, "7,9\n", 4, 3, &lenp, &ppos), 0);
	assert_int_equal(ppos, 7);
	bitmap_is(&t, "1-3,7,9\n");
	/* Only '\n' is skipped before a number: a leading ',' is refused. */
	assert_int_equal(bwrite(&t, ",5", 2, 7, &lenp, &ppos), -EINVAL);
	/* A refused write stores nothing and leaves *lenp and *ppos. */
	assert_int_equal(bwrite(&t, "5,200", 5, 7, &lenp, &ppos), -EINVAL);
	assert_int_equal(lenp, 5);
	assert_int_equal(ppos, 7);
	bitmap_is(&t, "1-3,7,9\n");
	/* Read: position 0 only; a short buffer cuts the text. */
	read_is(&t, 0, 3, 0, "1-3", 3);
	read_is(&t, 3, 100, 0, "", 3);
	/*
	 * Over a page: only PAGE_SIZE - 1 bytes are parsed; a number cut at
	 * the end is left for the next write, so *lenp comes back smaller.
	 */
	used = 0;
	while (used + 3 < sizeof(big))
		used += (size_t)snprintf(big + used, sizeof(big) - used, "%d,", 10 + (int)(used % 80));
	assert_int_equal(bwrite(&t, big, used, 0, &lenp, &ppos), 0);
	assert_true(lenp < 4095 && lenp > 4000);
	assert_int_equal(ppos, (off_t)lenp);
	assert_int_equal(bwrite(&t, big + lenp, used - lenp, ppos, &lenp, &ppos), 0);
	assert_int_equal(ppos, (off_t)used);
	bitmap_is(&t, "10-89\n");
	/* Nothing to write: end of the call, nothing changes. */
	assert_int_equal(bwrite(&t, "", 0, 0, &lenp, &ppos), 0);
	assert_int_equal(lenp, 0);
	/* An empty bitmap reads "\n"; a NULL bitmap pointer is end of file. */
	bits[0] = bits[1] = 0;
	bitmap_is(&t, "\n");
	bitsp = NULL;
	read_is(&t, 0, 100, 0, "", 0);
	bitsp = bits;
}

/* ---- the descriptor table ---- */

static int my_handler(const struct ctl_table *t, int w, void *b, size_t *l, off_t *p)
{
	(void)t, (void)w, (void)b, (void)l, (void)p;
	return 0;
}

static void test_handler_info(void **state)
{
	const struct sysctl_handler_info *i;

	(void)state;
	i = sysctl_handler_info(proc_dou8vec_minmax);
	assert_non_null(i);
	assert_string_equal(i->name, "proc_dou8vec_minmax");
	assert_string_equal(i->type, "u8");
	assert_int_equal(i->elem_size, 1);
	assert_int_equal(i->bound_size, sizeof(unsigned int)); /* the kernel's u8 bounds */
	assert_true(i->flags & SYSCTL_HF_SINGLE);
	assert_true(i->flags & SYSCTL_HF_MINMAX);
	assert_false(i->flags & SYSCTL_HF_ONE_BOUND);
	i = sysctl_handler_info(proc_do_large_bitmap);
	assert_string_equal(i->type, "bitmap");
	assert_true(i->flags & SYSCTL_HF_BITMAP);
	i = sysctl_handler_info(proc_dointvec_ms_jiffies);
	assert_string_equal(i->unit, "ms");
	assert_int_equal(i->elem_size, sizeof(int));
	i = sysctl_handler_info(proc_dointvec_userhz_jiffies);
	assert_string_equal(i->unit, "1/100 s");
	i = sysctl_handler_info(proc_rcu_string);
	assert_true(i->flags & SYSCTL_HF_RCU);
	assert_true(i->flags & SYSCTL_HF_STRING);
	assert_true(sysctl_handler_info(proc_dointvec_minmax)->flags & SYSCTL_HF_ONE_BOUND);
	assert_null(sysctl_handler_info(my_handler));
	assert_null(sysctl_handler_info(NULL));

	/* The walk gives every kind once, each found again by its handler. */
	size_t n = 0, ms_kinds = 0;

	for (; (i = sysctl_handler_info_at(n)); n++) {
		assert_ptr_equal(sysctl_handler_info(i->handler), i);
		if (!strcmp(i->unit, "ms"))
			ms_kinds++;
	}
	assert_int_equal(n, 14);
	assert_int_equal(ms_kinds, 2); /* proc_dointvec_ms_jiffies, proc_doulongvec_ms_jiffies_minmax */
}

static void no_log(void *arg, const char *msg)
{
	(void)arg, (void)msg;
}

static int reg(struct sysctl_tree *tree, struct ctl_table *t)
{
	struct sysctl_table_header *h;
	int err = sysctl_register_table(tree, "r", t, 1, &h);

	if (!err)
		sysctl_unregister_table(h);
	return err;
}

static void test_registration_and_explain(void **state)
{
	struct sysctl_tree *tree = sysctl_tree_new();
	static unsigned int lo = 1;
	static unsigned long jlo = SYSCTL_HZ;
	uint8_t two[2];
	struct ctl_table t;
	struct sysctl_table_header *h;
	struct sysctl_entry *e;
	char msg[80];

	(void)state;
	assert_non_null(tree);
	sysctl_tree_set_log(tree, no_log, NULL);
	t = (struct ctl_table){ "x", two, 2, 0644, proc_dou8vec_minmax, NULL, NULL, NULL };
	assert_int_equal(reg(tree, &t), -EINVAL); /* one u8 only */
	t.maxlen = 1;
	assert_int_equal(reg(tree, &t), 0); /* no bounds: 0..255 */
	t = (struct ctl_table){ "x", &bitsp, 0, 0644, proc_do_large_bitmap, NULL, NULL, NULL };
	assert_int_equal(reg(tree, &t), -EINVAL); /* no bits */
	t.maxlen = 100;
	assert_int_equal(reg(tree, &t), 0);
	t.data = NULL;
	assert_int_equal(reg(tree, &t), -EINVAL);
	t = (struct ctl_table){ "x", ulv, 12, 0644, proc_doulongvec_ms_jiffies_minmax, NULL, NULL,
				NULL };
	assert_int_equal(reg(tree, &t), -EINVAL); /* not a multiple of unsigned long */
	t.maxlen = sizeof(ulv);
	assert_int_equal(reg(tree, &t), 0); /* bounds optional: no plain variant */
	t = (struct ctl_table){ "x", iv, 3, 0644, proc_dointvec_jiffies, NULL, NULL, NULL };
	assert_int_equal(reg(tree, &t), -EINVAL);

	/* explain: a NULL u8 bound is the type's limit; ms bounds shown in ms */
	t = (struct ctl_table){ "u8", &u8v, 1, 0644, proc_dou8vec_minmax, &lo, NULL, NULL };
	assert_int_equal(sysctl_register_table(tree, "r", &t, 1, &h), 0);
	e = sysctl_lookup(tree, "r.u8");
	assert_non_null(e);
	assert_true(sysctl_entry_explain(e, -EINVAL, msg, sizeof(msg)) > 0);
	assert_string_equal(msg, "invalid value (integers 1..255)");
	sysctl_entry_put(e);
	sysctl_unregister_table(h);
	t = (struct ctl_table){ "ms", ulv, sizeof(ulv), 0644, proc_doulongvec_ms_jiffies_minmax,
				&jlo, NULL, NULL };
	assert_int_equal(sysctl_register_table(tree, "r", &t, 1, &h), 0);
	e = sysctl_lookup(tree, "r.ms");
	assert_non_null(e);
	assert_true(sysctl_entry_explain(e, -EINVAL, msg, sizeof(msg)) > 0);
	assert_string_equal(msg, "invalid value (integers >= 1000)");
	sysctl_entry_put(e);
	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u8_write),
		cmocka_unit_test(test_u8_read_and_maxlen),
		cmocka_unit_test(test_jiffies),
		cmocka_unit_test(test_userhz_jiffies),
		cmocka_unit_test(test_ms_jiffies),
		cmocka_unit_test(test_ulong_ms_jiffies),
		cmocka_unit_test(test_bitmap),
		cmocka_unit_test(test_bitmap_positions),
		cmocka_unit_test(test_handler_info),
		cmocka_unit_test(test_registration_and_explain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
