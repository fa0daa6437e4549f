/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The handle budget (sysctl_budget.h): a uid's share is EMFILE, the users'
 * common share ENFILE, root keeps its reserve, a kind's own cap, units by
 * size, resizing, every unit given back, and the top uids by handles
 * (bounded, in order, a uid gone once it holds nothing). The front ends' use of it
 * (one budget shared by the FUSE mount and the sockets) is shown through
 * rcusysd by tests/attack (attack-opens, attack-dir-storm).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <rcustring/sysctl_budget.h>

static struct sysctl_budget *small(void)
{
	struct sysctl_budget_limits l = { .total = 10, .root_reserve = 4, .per_uid = 4,
					  .unit_bytes = 100 };
	struct sysctl_budget *b;

	l.kind_per_uid[SYSCTL_HANDLE_WATCH] = 1;
	assert_int_equal(sysctl_budget_new(&l, &b), 0);
	return b;
}

static unsigned units_of(struct sysctl_budget *b, uid_t uid)
{
	struct sysctl_budget_usage u;

	assert_int_equal(sysctl_budget_get_usage(b, uid, &u), 0);
	return u.units;
}

static void test_shares(void **state)
{
	struct sysctl_budget *b = small();

	(void)state;
	/* One uid: its own share, then EMFILE, whatever the kind. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(sysctl_budget_take(b, 1000, SYSCTL_HANDLE_DIR, 1), 0);
	assert_int_equal(sysctl_budget_take(b, 1000, SYSCTL_HANDLE_CONN, 1), 0);
	assert_int_equal(sysctl_budget_take(b, 1000, SYSCTL_HANDLE_FILE, 1), -EMFILE);
	/* A second uid: the users share 6, so 2 are left for it, then ENFILE. */
	assert_int_equal(sysctl_budget_take(b, 1001, SYSCTL_HANDLE_FILE, 2), 0);
	assert_int_equal(sysctl_budget_take(b, 1001, SYSCTL_HANDLE_POLL, 1), -ENFILE);
	/* Root keeps its reserve, and no more. */
	assert_int_equal(sysctl_budget_take(b, 0, SYSCTL_HANDLE_FILE, 4), 0);
	assert_int_equal(sysctl_budget_take(b, 0, SYSCTL_HANDLE_FILE, 1), -ENFILE);
	assert_int_equal(units_of(b, 0), 4);
	/* What is given back can be taken again. */
	sysctl_budget_put(b, 1000, SYSCTL_HANDLE_CONN, 1);
	assert_int_equal(units_of(b, 1000), 3);
	assert_int_equal(sysctl_budget_take(b, 1001, SYSCTL_HANDLE_POLL, 1), 0);
	sysctl_budget_free(b);
}

static void test_kind_cap_and_zero_units(void **state)
{
	struct sysctl_budget *b = small();
	struct sysctl_budget_usage u;

	(void)state;
	/* A WATCH of no units counts against its kind's cap only. */
	assert_int_equal(sysctl_budget_take(b, 1000, SYSCTL_HANDLE_WATCH, 0), 0);
	assert_int_equal(sysctl_budget_take(b, 1000, SYSCTL_HANDLE_WATCH, 0), -EMFILE);
	assert_int_equal(sysctl_budget_take(b, 0, SYSCTL_HANDLE_WATCH, 0), 0); /* root: no cap */
	assert_int_equal(sysctl_budget_get_usage(b, 1000, &u), 0);
	assert_int_equal(u.units, 0);
	assert_int_equal(u.handles[SYSCTL_HANDLE_WATCH], 1);
	sysctl_budget_put(b, 1000, SYSCTL_HANDLE_WATCH, 0);
	assert_int_equal(sysctl_budget_take(b, 1000, SYSCTL_HANDLE_WATCH, 0), 0);
	sysctl_budget_free(b);
}

static void test_units_and_resize(void **state)
{
	struct sysctl_budget *b = small();
	struct sysctl_budget_usage u;

	(void)state;
	/* The first unit_bytes come with the handle. */
	assert_int_equal(sysctl_budget_units(b, 0), 1);
	assert_int_equal(sysctl_budget_units(b, 100), 1);
	assert_int_equal(sysctl_budget_units(b, 101), 2);
	assert_int_equal(sysctl_budget_units(b, SIZE_MAX), 1u << 30);
	assert_int_equal(sysctl_budget_take(b, 1000, SYSCTL_HANDLE_DIR, 1), 0);
	/* A listing of 350 bytes: 4 units, the whole share; 5 is refused and nothing changes. */
	assert_int_equal(sysctl_budget_resize(b, 1000, 1, sysctl_budget_units(b, 350)), 0);
	assert_int_equal(sysctl_budget_resize(b, 1000, 4, 5), -EMFILE);
	assert_int_equal(units_of(b, 1000), 4);
	assert_int_equal(sysctl_budget_resize(b, 1000, 4, 1), 0);
	sysctl_budget_put(b, 1000, SYSCTL_HANDLE_DIR, 1);
	/* Everything given back: the uid is gone, the counts are 0. */
	assert_int_equal(sysctl_budget_get_usage(b, 1000, &u), 0);
	assert_int_equal(u.units + u.others + u.all, 0);
	assert_int_equal(u.handles[SYSCTL_HANDLE_DIR], 0);
	sysctl_budget_free(b);
}

static void test_defaults_and_errors(void **state)
{
	struct sysctl_budget_limits bad = { .total = 4, .root_reserve = 5 };
	struct sysctl_budget_usage u;
	struct sysctl_budget *b;

	(void)state;
	assert_int_equal(sysctl_budget_new(&bad, &b), -EINVAL);
	assert_int_equal(sysctl_budget_new(NULL, &b), 0);
	assert_int_equal(sysctl_budget_get_usage(b, 0, &u), 0);
	assert_int_equal(u.limits.total, SYSCTL_BUDGET_TOTAL);
	assert_int_equal(u.limits.root_reserve, SYSCTL_BUDGET_ROOT_RESERVE);
	assert_int_equal(u.limits.per_uid, SYSCTL_BUDGET_PER_UID);
	assert_int_equal(u.limits.unit_bytes, SYSCTL_BUDGET_UNIT_BYTES);
	assert_int_equal(sysctl_budget_take(b, 1, SYSCTL_HANDLE_KINDS, 1), -EINVAL);
	sysctl_budget_free(b);
	sysctl_budget_free(NULL);
}

/*
 * 40 uids holding 1..40 handles (uid 1000 + i holds i + 1), taken in a
 * shuffled order: the top 5 are the 5 holding most, most first, and
 * nuids counts all 40; a tie in handles goes to units, then the lower uid.
 */
static void test_top_uids(void **state)
{
	struct sysctl_budget_limits l = { .total = 4000, .per_uid = 100 };
	struct sysctl_budget_uid top[5], one;
	struct sysctl_budget *b;
	size_t nuids = 0;

	(void)state;
	assert_int_equal(sysctl_budget_new(&l, &b), 0);
	for (int i = 0; i < 40; i++) {
		int u = (i * 17) % 40; /* 17 is prime to 40: every uid once */

		for (int h = 0; h <= u; h++)
			assert_int_equal(sysctl_budget_take(b, 1000 + (uid_t)u,
							    h % 2 ? SYSCTL_HANDLE_DIR : SYSCTL_HANDLE_FILE, 1), 0);
	}
	assert_int_equal(sysctl_budget_top_uids(b, top, 5, &nuids), 5);
	assert_int_equal(nuids, 40);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(top[i].uid, 1039 - i);
		assert_int_equal(top[i].handles, 40 - i);
		assert_int_equal(top[i].units, 40 - i);
		assert_int_equal(top[i].by_kind[SYSCTL_HANDLE_FILE] + top[i].by_kind[SYSCTL_HANDLE_DIR],
				 40 - i);
	}
	/* uid 7 with 40 handles of 2 units each: ahead of uid 1039 (40 handles, 40 units). */
	for (int h = 0; h < 40; h++)
		assert_int_equal(sysctl_budget_take(b, 7, SYSCTL_HANDLE_CONN, 2), 0);
	assert_int_equal(sysctl_budget_top_uids(b, top, 2, NULL), 2);
	assert_int_equal(top[0].uid, 7);
	assert_int_equal(top[0].units, 80);
	assert_int_equal(top[0].by_kind[SYSCTL_HANDLE_CONN], 40);
	assert_int_equal(top[1].uid, 1039);
	/* Given back, uid 7 leaves the list. */
	for (int h = 0; h < 40; h++)
		sysctl_budget_put(b, 7, SYSCTL_HANDLE_CONN, 2);
	assert_int_equal(sysctl_budget_top_uids(b, &one, 1, &nuids), 1);
	assert_int_equal(one.uid, 1039);
	assert_int_equal(nuids, 40);
	assert_int_equal(sysctl_budget_top_uids(b, NULL, 0, &nuids), 0);
	assert_int_equal(sysctl_budget_top_uids(b, NULL, 1, NULL), -EINVAL);
	assert_int_equal(sysctl_budget_top_uids(NULL, top, 1, NULL), -EINVAL);
	sysctl_budget_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_kind_cap_and_zero_units),
		cmocka_unit_test(test_units_and_resize),
		cmocka_unit_test(test_defaults_and_errors),
		cmocka_unit_test(test_top_uids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
