/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Numeric sysctl handlers against the kernel's rules (kernel/sysctl.c:
 * proc_get_long, proc_skip_spaces, do_proc_dointvec, do_proc_douintvec,
 * do_proc_doulongvec_minmax, proc_dobool; sysctl_writes_strict = 1).
 *
 * Each table row: input bytes, *ppos before, expected return, *lenp and
 * *ppos after, and the stored elements after (rows start from the same
 * initial values, so "unchanged" is visible).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"

#define SL ((size_t)-1) /* length: strlen(in) */

struct row {
	int line;
	const char *in;
	size_t len;
	off_t pos;
	int ret;
	size_t lenp;
	off_t ppos;
	long long want[3];
};

#define W(in, pos, ret, lenp, ppos, ...) { __LINE__, in, SL, pos, ret, lenp, ppos, { __VA_ARGS__ } }
#define WL(in, len, pos, ret, lenp, ppos, ...) { __LINE__, in, len, pos, ret, lenp, ppos, { __VA_ARGS__ } }

enum etype { E_INT, E_UINT, E_ULONG, E_BOOL };

static long long elem(const void *data, enum etype t, int i)
{
	switch (t) {
	case E_INT:
		return ((const int *)data)[i];
	case E_UINT:
		return ((const unsigned int *)data)[i];
	case E_ULONG:
		return (long long)((const unsigned long *)data)[i];
	case E_BOOL:
		return ((const bool *)data)[i];
	}
	return 0;
}

static void set_elem(void *data, enum etype t, int i, long long v)
{
	switch (t) {
	case E_INT:
		((int *)data)[i] = (int)v;
		break;
	case E_UINT:
		((unsigned int *)data)[i] = (unsigned int)v;
		break;
	case E_ULONG:
		((unsigned long *)data)[i] = (unsigned long)v;
		break;
	case E_BOOL:
		((bool *)data)[i] = v != 0;
		break;
	}
}

/* Run write rows: each starts from @init (n elements) and checks everything. */
static void run_writes(struct ctl_table *t, enum etype ty, int n, const long long *init,
		       const struct row *rows, size_t nrows)
{
	size_t r;
	int i, bad = 0;

	for (r = 0; r < nrows; r++) {
		const struct row *w = &rows[r];
		size_t len = w->len == SL ? strlen(w->in) : w->len;
		char *buf = malloc(len + 1);
		size_t lenp = len;
		off_t ppos = w->pos;
		int ret;

		assert_non_null(buf);
		memcpy(buf, w->in, len);
		for (i = 0; i < n; i++)
			set_elem(t->data, ty, i, init[i]);
		ret = t->proc_handler(t, 1, buf, &lenp, &ppos);
		if (ret != w->ret || lenp != w->lenp || ppos != w->ppos) {
			print_error("line %d: ret %d lenp %zu ppos %lld, want %d %zu %lld\n", w->line,
				    ret, lenp, (long long)ppos, w->ret, w->lenp, (long long)w->ppos);
			bad++;
		}
		for (i = 0; i < n; i++)
			if (elem(t->data, ty, i) != w->want[i]) {
				print_error("line %d: element %d is %lld, want %lld\n", w->line, i,
					    elem(t->data, ty, i), w->want[i]);
				bad++;
			}
		free(buf);
	}
	assert_int_equal(bad, 0);
}

/* Read the table at @pos with a buffer of @size; check text and counters. */
static void read_is(struct ctl_table *t, off_t pos, size_t size, int ret, const char *want,
		    off_t ppos_after)
{
	char buf[256];
	size_t lenp = size;
	off_t ppos = pos;

	memset(buf, '#', sizeof(buf));
	assert_int_equal(t->proc_handler(t, 0, buf, &lenp, &ppos), ret);
	assert_int_equal(lenp, strlen(want));
	assert_memory_equal(buf, want, lenp);
	assert_int_equal(buf[lenp], '#'); /* nothing written past *lenp */
	assert_int_equal(ppos, ppos_after);
}

static int ivec[3];
static const long long ivec_init[3] = { 7, 8, 9 };

static void test_dointvec_write(void **state)
{
	struct ctl_table t = { .procname = "v", .data = ivec, .maxlen = sizeof(ivec),
			       .mode = 0644, .proc_handler = proc_dointvec };
	static char page[5001];
	const struct row rows[] = {
		/* do_proc_dointvec: whitespace-separated, all of *lenp consumed */
		W("1 2 3", 0, 0, 5, 5, 1, 2, 3),
		W("1 2 3\n", 0, 0, 6, 6, 1, 2, 3),
		W("  -4\t5\n6  ", 0, 0, 10, 10, -4, 5, 6),
		W("\r\v\f1", 0, 0, 4, 4, 1, 8, 9), /* leading: isspace() */
		W("1", 0, 0, 1, 1, 1, 8, 9),
		/* more values than elements: the rest is left unconsumed, no error */
		W("1 2 3 4", 0, 0, 6, 6, 1, 2, 3),
		W("1 2 3    44", 0, 0, 9, 9, 1, 2, 3),
		/* empty: *lenp == 0 is a no-op; only spaces is -EINVAL ("first") */
		W("", 0, 0, 0, 0, 7, 8, 9),
		W("\n", 0, -EINVAL, 1, 0, 7, 8, 9),
		W("   ", 0, -EINVAL, 3, 0, 7, 8, 9),
		/* proc_get_long: base 0 like kstrtoul */
		W("0x10 010 10", 0, 0, 11, 11, 16, 8, 10),
		W("0X1f", 0, 0, 4, 4, 31, 8, 9),
		W("-0x10", 0, 0, 5, 5, -16, 8, 9),
		W("08", 0, -EINVAL, 2, 0, 7, 8, 9),   /* octal stops at '8' */
		W("0x", 0, -EINVAL, 2, 0, 7, 8, 9),   /* "0x" without a hex digit: octal 0, then 'x' */
		W("0xg", 0, -EINVAL, 3, 0, 7, 8, 9),
		W("+5", 0, -EINVAL, 2, 0, 7, 8, 9),   /* only '-' is a sign */
		W("-", 0, -EINVAL, 1, 0, 7, 8, 9),
		W("--1", 0, -EINVAL, 3, 0, 7, 8, 9),
		W("-0", 0, 0, 2, 2, 0, 8, 9),
		/* do_proc_dointvec_conv: -(INT_MAX + 1) .. INT_MAX */
		W("2147483647", 0, 0, 10, 10, INT_MAX, 8, 9),
		W("2147483648", 0, -EINVAL, 10, 0, 7, 8, 9),
		W("-2147483648", 0, 0, 11, 11, INT_MIN, 8, 9),
		W("-2147483649", 0, -EINVAL, 11, 0, 7, 8, 9),
		W("0x7fffffff", 0, 0, 10, 10, INT_MAX, 8, 9),
		/* strtoul_lenient: unsigned long overflow is -EINVAL */
		W("18446744073709551615", 0, -EINVAL, 20, 0, 7, 8, 9),
		W("18446744073709551616", 0, -EINVAL, 20, 0, 7, 8, 9),
		/* TMPBUFLEN: a number filling 21 bytes is refused, 20 is fine */
		W("000000000000000000001", 0, -EINVAL, 21, 0, 7, 8, 9),
		W("00000000000000000001", 0, 0, 20, 20, 1, 8, 9),
		/* trailer after a number must be ' ', '\t' or '\n' (proc_wspace_sep) */
		W("5x", 0, -EINVAL, 2, 0, 7, 8, 9),
		W("5\r", 0, -EINVAL, 2, 0, 7, 8, 9),
		WL("1\0002", 3, 0, -EINVAL, 3, 0, 7, 8, 9),
		/*
		 * A later element fails: the kernel reports the bytes before it
		 * and keeps the earlier elements; we store nothing.
		 */
		W("1 2 x", 0, -EINVAL, 4, 4, 7, 8, 9),
		W("1 2,3", 0, -EINVAL, 2, 2, 7, 8, 9),
		/* strict writes: not at position 0 ignored, *ppos += *lenp */
		W("5", 3, 0, 1, 4, 7, 8, 9),
		W("garbage", 1, 0, 7, 8, 7, 8, 9),
		/* negative position: refused (the VFS never passes one) */
		W("5", -1, -EINVAL, 1, -1, 7, 8, 9),
	};

	(void)state;
	run_writes(&t, E_INT, 3, ivec_init, rows, sizeof(rows) / sizeof(rows[0]));

	/*
	 * PAGE_SIZE - 1 cap: only the first 4095 bytes are parsed, yet the
	 * kernel computes *lenp -= left from the uncapped *lenp, so the bytes
	 * past the cap count as consumed.
	 */
	memset(page, ' ', sizeof(page));
	page[0] = '1';
	{
		struct row big[] = {
			WL(page, 5000, 0, 0, 5000, 5000, 1, 8, 9),
		};
		run_writes(&t, E_INT, 3, ivec_init, big, 1);
	}
	memset(page, ' ', sizeof(page));
	memcpy(page + 4094, "12", 2); /* "1" at byte 4095 is cut from "12" */
	{
		struct row big[] = {
			WL(page, 4096, 0, 0, 4096, 4096, 1, 8, 9),
		};
		run_writes(&t, E_INT, 3, ivec_init, big, 1);
	}
}

static void test_dointvec_minmax_write(void **state)
{
	int lo = -5, hi = 10;
	struct ctl_table t = { .procname = "v", .data = ivec, .maxlen = sizeof(ivec),
			       .mode = 0644, .proc_handler = proc_dointvec_minmax,
			       .extra1 = &lo, .extra2 = &hi };
	const struct row rows[] = {
		/* do_proc_dointvec_minmax_conv: bounds inclusive */
		W("10 -5 0", 0, 0, 7, 7, 10, -5, 0),
		W("11", 0, -EINVAL, 2, 0, 7, 8, 9),
		W("-6", 0, -EINVAL, 2, 0, 7, 8, 9),
		/* refused element after good ones: nothing stored */
		W("1 20 3", 0, -EINVAL, 4, 4, 7, 8, 9),
		W("1 2 3 99", 0, 0, 6, 6, 1, 2, 3), /* 99 is past the vector: not checked */
	};
	const struct row max_only[] = {
		W("-2147483648", 0, 0, 11, 11, INT_MIN, 8, 9),
		W("11", 0, -EINVAL, 2, 0, 7, 8, 9),
	};

	(void)state;
	run_writes(&t, E_INT, 3, ivec_init, rows, sizeof(rows) / sizeof(rows[0]));
	t.extra1 = NULL;
	run_writes(&t, E_INT, 3, ivec_init, max_only, sizeof(max_only) / sizeof(max_only[0]));
}

/*
 * A bound that points to another live tunable may change while a write
 * runs. Whatever it sees, a write stores the whole vector and returns 0,
 * or stores nothing and fails: never part of it behind a success.
 *
 * To change the bound at an exact read, the minimum and the maximum live
 * on two pages of which only one is readable at a time: every read of the
 * other faults, and the SIGSEGV handler swaps the protections, counts the
 * reads of the maximum and drops the maximum to 0 at read number @drop_at.
 * (A minmax write reads the minimum before the maximum for each element.)
 */
static char *bound_pages;
static long page_size, max_reads, drop_at;

static void bound_fault(int sig, siginfo_t *si, void *ctx)
{
	char *addr = si->si_addr, *minpage = bound_pages, *maxpage = bound_pages + page_size;

	(void)sig;
	(void)ctx;
	if (addr >= maxpage && addr < maxpage + page_size) {
		mprotect(maxpage, (size_t)page_size, PROT_READ | PROT_WRITE);
		mprotect(minpage, (size_t)page_size, PROT_NONE);
		if (++max_reads == drop_at)
			*(int *)maxpage = 0;
	} else if (addr >= minpage && addr < minpage + page_size) {
		mprotect(minpage, (size_t)page_size, PROT_READ | PROT_WRITE);
		mprotect(maxpage, (size_t)page_size, PROT_NONE);
	} else {
		/* Not ours: fail loudly with the default action. */
		signal(SIGSEGV, SIG_DFL);
	}
}

static void test_minmax_bound_changes(void **state)
{
	int v[2];
	struct ctl_table t = { .procname = "v", .data = v, .maxlen = sizeof(v), .mode = 0644,
			       .proc_handler = proc_dointvec_minmax };
	struct sigaction sa = { 0 }, old;
	long whole = 0, refused = 0;

	(void)state;
	page_size = sysconf(_SC_PAGESIZE);
	bound_pages = mmap(NULL, 2 * (size_t)page_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(bound_pages != MAP_FAILED);
	t.extra1 = bound_pages;
	t.extra2 = bound_pages + page_size;
	sa.sa_sigaction = bound_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);

	/* Drop the maximum at each read a write could make (two per element at most). */
	for (drop_at = 1; drop_at <= 5; drop_at++) {
		size_t len = 3;
		off_t pos = 0;
		int err;

		v[0] = v[1] = 0;
		*(int *)t.extra1 = -1;
		*(int *)t.extra2 = 1;
		max_reads = 0;
		mprotect(bound_pages, 2 * (size_t)page_size, PROT_NONE);
		err = proc_dointvec_minmax(&t, 1, "1 1", &len, &pos);
		mprotect(bound_pages, 2 * (size_t)page_size, PROT_READ | PROT_WRITE);
		print_message("maximum dropped at read %ld of %ld: return %d, stored {%d, %d}\n",
			      drop_at, max_reads, err, v[0], v[1]);
		if (err == 0) {
			assert_int_equal(v[0], 1);
			assert_int_equal(v[1], 1);
			whole++;
		} else {
			assert_int_equal(err, -EINVAL);
			assert_int_equal(v[0], 0);
			assert_int_equal(v[1], 0);
			refused++;
		}
	}
	assert_int_equal(sigaction(SIGSEGV, &old, NULL), 0);
	munmap(bound_pages, 2 * (size_t)page_size);
	/* The trap worked: the first read saw the drop and was refused. */
	assert_true(refused > 0 && whole > 0);
}

static void test_dointvec_read(void **state)
{
	struct ctl_table t = { .procname = "v", .data = ivec, .maxlen = sizeof(ivec),
			       .mode = 0644, .proc_handler = proc_dointvec };

	(void)state;
	ivec[0] = 1;
	ivec[1] = -2;
	ivec[2] = INT_MIN;
	read_is(&t, 0, 100, 0, "1\t-2\t-2147483648\n", 17);
	/* short buffers: cut, no error, newline only when it fits */
	read_is(&t, 0, 16, 0, "1\t-2\t-2147483648", 16);
	read_is(&t, 0, 3, 0, "1\t-", 3);
	read_is(&t, 0, 1, 0, "1", 1);
	/* reads at a position > 0 are end of file (the kernel's rule) */
	read_is(&t, 1, 100, 0, "", 1);
	read_is(&t, 17, 100, 0, "", 17);
	read_is(&t, 0, 0, 0, "", 0);
	/* maxlen smaller than one element: nothing to show; a write is -EINVAL */
	t.maxlen = 2;
	read_is(&t, 0, 100, 0, "", 0);
	{
		size_t lenp = 1;
		off_t pos = 0;

		assert_int_equal(proc_dointvec(&t, 1, "1", &lenp, &pos), -EINVAL);
	}
	/* minmax reads show the value even when out of the bounds */
	t.maxlen = sizeof(int);
	t.proc_handler = proc_dointvec_minmax;
	{
		int hi = 0;

		t.extra2 = &hi;
		read_is(&t, 0, 100, 0, "1\n", 2);
	}
}

static void test_douintvec(void **state)
{
	unsigned int u[2];
	unsigned int lo = 1, hi = 100;
	struct ctl_table t = { .procname = "u", .data = u, .maxlen = sizeof(unsigned int),
			       .mode = 0644, .proc_handler = proc_douintvec };
	const long long init[1] = { 7 };
	const struct row rows[] = {
		/*
		 * do_proc_douintvec_w: on success *lenp is left as is (all
		 * consumed) and *ppos is not advanced; after the number and
		 * its spaces the rest is ignored.
		 */
		W("5", 0, 0, 1, 0, 5),
		W("  4294967295  \n", 0, 0, 15, 0, 4294967295LL),
		W("0x10", 0, 0, 4, 0, 16),
		W("5 6", 0, 0, 3, 0, 5),
		W("4294967296", 0, -EINVAL, 10, 0, 7),
		W("-1", 0, -EINVAL, 2, 0, 7),
		W("-0", 0, -EINVAL, 2, 0, 7), /* any '-' is refused */
		W("5x", 0, -EINVAL, 2, 0, 7),
		W("", 0, 0, 0, 0, 7),
		W("  ", 0, -EINVAL, 2, 0, 7),
		W("\n", 0, -EINVAL, 1, 0, 7),
		W("5", 2, 0, 1, 3, 7), /* strict: ignored past position 0 */
	};
	const struct row mm[] = {
		W("0", 0, -EINVAL, 1, 0, 7),
		W("1", 0, 0, 1, 0, 1),
		W("100", 0, 0, 3, 0, 100),
		W("101", 0, -EINVAL, 3, 0, 7),
	};

	(void)state;
	run_writes(&t, E_UINT, 1, init, rows, sizeof(rows) / sizeof(rows[0]));
	t.proc_handler = proc_douintvec_minmax;
	t.extra1 = &lo;
	t.extra2 = &hi;
	run_writes(&t, E_UINT, 1, init, mm, sizeof(mm) / sizeof(mm[0]));

	u[0] = 4294967295u;
	read_is(&t, 0, 100, 0, "4294967295\n", 11);
	read_is(&t, 0, 10, 0, "4294967295", 10);
	read_is(&t, 0, 4, 0, "4294", 4);
	read_is(&t, 3, 100, 0, "", 3);

	/* Arrays are refused ("Arrays are not supported"), *lenp = 0. */
	t.maxlen = sizeof(u);
	{
		char buf[16];
		size_t lenp = sizeof(buf);
		off_t pos = 0;

		assert_int_equal(proc_douintvec(&t, 0, buf, &lenp, &pos), -EINVAL);
		assert_int_equal(lenp, 0);
		lenp = 1;
		assert_int_equal(proc_douintvec(&t, 1, "1", &lenp, &pos), -EINVAL);
		assert_int_equal(lenp, 0);
		assert_int_equal(u[0], 4294967295u);
	}
}

static void test_doulongvec_minmax(void **state)
{
	unsigned long v[2];
	unsigned long lo = 10, hi = 1000;
	struct ctl_table t = { .procname = "l", .data = v, .maxlen = sizeof(v), .mode = 0644,
			       .proc_handler = proc_doulongvec_minmax };
	const long long init[2] = { 20, 30 };
	const struct row nobounds[] = {
		W("18446744073709551615 0", 0, 0, 22, 22, (long long)ULONG_MAX, 0),
		W("18446744073709551616", 0, -EINVAL, 20, 0, 20, 30),
		W("-1", 0, -EINVAL, 2, 0, 20, 30),  /* negative refused */
		W("1 -1", 0, -EINVAL, 4, 4, 20, 30), /* "-1" was consumed */
		W("0x1F 017", 0, 0, 8, 8, 31, 15),
		W("1 2 3", 0, 0, 4, 4, 1, 2),
		W(" \t\n", 0, -EINVAL, 3, 0, 20, 30),
		W("5", 1, 0, 1, 2, 20, 30),
	};
	const struct row bounded[] = {
		W("10 1000", 0, 0, 7, 7, 10, 1000),
		W("9", 0, -EINVAL, 1, 0, 20, 30),
		W("1001", 0, -EINVAL, 4, 0, 20, 30),
		W("10 9", 0, -EINVAL, 4, 4, 20, 30), /* nothing stored */
		W("11", 0, 0, 2, 2, 11, 30),
	};

	(void)state;
	run_writes(&t, E_ULONG, 2, init, nobounds, sizeof(nobounds) / sizeof(nobounds[0]));
	t.extra1 = &lo;
	t.extra2 = &hi;
	run_writes(&t, E_ULONG, 2, init, bounded, sizeof(bounded) / sizeof(bounded[0]));

	v[0] = ULONG_MAX;
	v[1] = 10;
	read_is(&t, 0, 100, 0, "18446744073709551615\t10\n", 24);
	read_is(&t, 0, 23, 0, "18446744073709551615\t10", 23);
	read_is(&t, 5, 100, 0, "", 5);
}

static void test_dobool(void **state)
{
	bool b;
	struct ctl_table t = { .procname = "b", .data = &b, .maxlen = sizeof(bool), .mode = 0644,
			       .proc_handler = proc_dobool };
	const long long off[1] = { 0 }, on[1] = { 1 };
	const struct row from_off[] = {
		/* proc_dobool: parsed as an int, stored as value != 0 */
		W("1", 0, 0, 1, 1, 1),
		W("42\n", 0, 0, 3, 3, 1),
		W("-1", 0, 0, 2, 2, 1),
		W("0x0", 0, 0, 3, 3, 0),
		W("x", 0, -EINVAL, 1, 0, 0),
		W("2147483648", 0, -EINVAL, 10, 0, 0),
		W("1 2", 0, 0, 2, 2, 1),
		W("1", 1, 0, 1, 2, 0), /* ignored past position 0 */
	};
	const struct row from_on[] = {
		W("0", 0, 0, 1, 1, 0),
		W("", 0, 0, 0, 0, 1),
		W("y", 0, -EINVAL, 1, 0, 1),
	};

	(void)state;
	run_writes(&t, E_BOOL, 1, off, from_off, sizeof(from_off) / sizeof(from_off[0]));
	run_writes(&t, E_BOOL, 1, on, from_on, sizeof(from_on) / sizeof(from_on[0]));
	b = true;
	read_is(&t, 0, 100, 0, "1\n", 2);
	b = false;
	read_is(&t, 0, 100, 0, "0\n", 2);
	read_is(&t, 0, 1, 0, "0", 1);
	read_is(&t, 2, 100, 0, "", 2);

	/* "Do not support arrays yet": maxlen must be sizeof(bool). */
	t.maxlen = sizeof(int);
	{
		size_t lenp = 1;
		off_t pos = 0;

		assert_int_equal(proc_dobool(&t, 1, "1", &lenp, &pos), -EINVAL);
		assert_false(b);
	}
}

static void test_bad_arguments(void **state)
{
	int v = 3;
	struct ctl_table t = { .procname = "v", .data = &v, .maxlen = sizeof(v), .mode = 0644,
			       .proc_handler = proc_dointvec };
	size_t lenp = 1;
	off_t pos = 0;

	(void)state;
	assert_int_equal(proc_dointvec(NULL, 1, "1", &lenp, &pos), -EINVAL);
	assert_int_equal(proc_dointvec(&t, 1, "1", NULL, &pos), -EINVAL);
	assert_int_equal(proc_dointvec(&t, 1, "1", &lenp, NULL), -EINVAL);
	assert_int_equal(proc_dointvec(&t, 1, NULL, &lenp, &pos), -EINVAL);
	assert_int_equal(proc_douintvec(NULL, 1, "1", &lenp, &pos), -EINVAL);
	assert_int_equal(proc_douintvec_minmax(NULL, 1, "1", &lenp, &pos), -EINVAL);
	assert_int_equal(proc_dointvec_minmax(NULL, 1, "1", &lenp, &pos), -EINVAL);
	assert_int_equal(proc_doulongvec_minmax(NULL, 1, "1", &lenp, &pos), -EINVAL);
	assert_int_equal(proc_dobool(NULL, 1, "1", &lenp, &pos), -EINVAL);
	/* NULL data: nothing to do, like the kernel */
	t.data = NULL;
	assert_int_equal(proc_dointvec(&t, 1, "1", &lenp, &pos), 0);
	assert_int_equal(lenp, 0);
	assert_int_equal(v, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dointvec_write),
		cmocka_unit_test(test_dointvec_minmax_write),
		cmocka_unit_test(test_minmax_bound_changes),
		cmocka_unit_test(test_dointvec_read),
		cmocka_unit_test(test_douintvec),
		cmocka_unit_test(test_doulongvec_minmax),
		cmocka_unit_test(test_dobool),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
