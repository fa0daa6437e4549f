/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the audit ring: record contents (seq, time, who, path, old
 * and new value), refused writes not recorded, wraparound, long values cut
 * with "...", reads after a seq and with a small max.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define LONG_MAXLEN 600

static struct rcustring var, longvar;
static int ival;
static struct ctl_table tbl[] = {
	{ "s", &var, 32, 0644, proc_rcu_string },
	{ "i", &ival, sizeof(int), 0644, proc_dointvec },
	{ "long", &longvar, LONG_MAXLEN, 0644, proc_rcu_string },
};

struct fixture {
	struct sysctl_tree *t;
	struct sysctl_table_header *h;
};

static int setup(void **state)
{
	static struct fixture f;

	ival = 0;
	if (rcustring_init(&var, 32, "before") || rcustring_init(&longvar, LONG_MAXLEN, ""))
		return -1;
	f.t = sysctl_tree_new();
	if (!f.t || sysctl_register_table(f.t, "a.b", tbl, 3, &f.h))
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sysctl_unregister_table(f->h);
	sysctl_tree_free(f->t);
	rcustring_destroy(&var);
	rcustring_destroy(&longvar);
	rcustring_barrier();
	return 0;
}

static void test_record(void **state)
{
	struct fixture *f = *state;
	struct sysctl_caller who = { 1234, 99, 4321 };
	struct sysctl_audit_record r[4];
	struct timespec t0, t1;

	assert_int_equal(sysctl_audit_read(f->t, 0, r, 4), 0);
	clock_gettime(CLOCK_REALTIME, &t0);
	assert_int_equal(sysctl_set(f->t, "a.b.s", "after\n", 6, NULL), 0);
	/* who is checked by sysctl_set too: 0644 refuses uid 1234, nothing recorded. */
	assert_int_equal(sysctl_set(f->t, "a/b/i", "5", 1, &who), -EACCES);
	assert_int_equal(sysctl_set(f->t, "a.b.i", "x", 1, NULL), -EINVAL);
	who.uid = 0;
	assert_int_equal(sysctl_set(f->t, "a/b/i", "5", 1, &who), 0);
	clock_gettime(CLOCK_REALTIME, &t1);

	assert_int_equal(sysctl_audit_read(f->t, 0, r, 4), 2);
	assert_int_equal(r[0].seq, 1);
	assert_int_equal(r[0].uid, (uid_t)-1);
	assert_int_equal(r[0].pid, 0);
	assert_string_equal(r[0].path, "a.b.s");
	assert_string_equal(r[0].old_value, "before");
	assert_string_equal(r[0].new_value, "after");
	assert_true(r[0].when.tv_sec >= t0.tv_sec && r[0].when.tv_sec <= t1.tv_sec);

	assert_int_equal(r[1].seq, 2);
	assert_int_equal(r[1].uid, 0);
	assert_int_equal(r[1].pid, 4321);
	assert_string_equal(r[1].path, "a.b.i");
	assert_string_equal(r[1].old_value, "0");
	assert_string_equal(r[1].new_value, "5");

	/* After a seq, and bounded by max. */
	assert_int_equal(sysctl_audit_read(f->t, 1, r, 4), 1);
	assert_int_equal(r[0].seq, 2);
	assert_int_equal(sysctl_audit_read(f->t, 0, r, 1), 1);
	assert_int_equal(r[0].seq, 1);
	assert_int_equal(sysctl_audit_read(f->t, 2, r, 4), 0);
	assert_int_equal(sysctl_audit_read(NULL, 0, r, 4), 0);
}

static void test_wraparound(void **state)
{
	struct fixture *f = *state;
	const size_t extra = 7, total = SYSCTL_AUDIT_RING + extra;
	struct sysctl_audit_record *r = calloc(SYSCTL_AUDIT_RING + 1, sizeof(*r));
	char v[16];
	size_t n;

	assert_non_null(r);
	for (size_t k = 1; k <= total; k++) {
		snprintf(v, sizeof(v), "%zu", k);
		assert_int_equal(sysctl_set(f->t, "a.b.i", v, strlen(v), NULL), 0);
	}
	/* The oldest records are gone; the first seq returned shows the gap. */
	n = sysctl_audit_read(f->t, 0, r, SYSCTL_AUDIT_RING + 1);
	assert_int_equal(n, SYSCTL_AUDIT_RING);
	assert_int_equal(r[0].seq, extra + 1);
	for (size_t k = 0; k < n; k++) {
		assert_int_equal(r[k].seq, extra + 1 + k);
		snprintf(v, sizeof(v), "%zu", (size_t)r[k].seq);
		assert_string_equal(r[k].new_value, v);
		snprintf(v, sizeof(v), "%zu", (size_t)r[k].seq - 1);
		assert_string_equal(r[k].old_value, v);
	}
	n = sysctl_audit_read(f->t, total - 1, r, SYSCTL_AUDIT_RING);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].seq, total);
	free(r);
}

static void test_long_values(void **state)
{
	struct fixture *f = *state;
	struct sysctl_audit_record r[3];
	char v[LONG_MAXLEN];
	const size_t fit = SYSCTL_AUDIT_VALUE_MAX - 1;

	/* Exactly as long as a record holds: kept whole. */
	memset(v, 'a', fit);
	v[fit] = '\0';
	assert_int_equal(sysctl_set(f->t, "a.b.long", v, fit, NULL), 0);
	/* One more: cut to fit - 3 bytes plus "...". */
	memset(v, 'b', fit + 1);
	v[fit + 1] = '\0';
	assert_int_equal(sysctl_set(f->t, "a.b.long", v, fit + 1, NULL), 0);
	/* Much longer. */
	memset(v, 'c', 500);
	v[500] = '\0';
	assert_int_equal(sysctl_set(f->t, "a.b.long", v, 500, NULL), 0);

	assert_int_equal(sysctl_audit_read(f->t, 0, r, 3), 3);
	assert_string_equal(r[0].old_value, "");
	assert_int_equal(strlen(r[0].new_value), fit);
	assert_int_equal(strspn(r[0].new_value, "a"), fit);

	assert_int_equal(strlen(r[1].old_value), fit);
	assert_int_equal(strlen(r[1].new_value), fit);
	assert_int_equal(strspn(r[1].new_value, "b"), fit - 3);
	assert_string_equal(r[1].new_value + fit - 3, "...");

	assert_int_equal(strspn(r[2].old_value, "b"), fit - 3);
	assert_string_equal(r[2].old_value + fit - 3, "...");
	assert_int_equal(strspn(r[2].new_value, "c"), fit - 3);
	assert_string_equal(r[2].new_value + fit - 3, "...");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wraparound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_values, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
