/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Generations never repeat for a path: an entry unregistered and
 * registered again starts above every count the path reached (a SETIF
 * with a generation read before the re-declaration is refused), and
 * sysctl_tree_set_generation_base() raises every counter, as rcusysd does
 * with its store's epoch at each start.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"

static char value[16] = "x";
static struct ctl_table row[] = {
	{ .procname = "v", .data = value, .maxlen = sizeof(value), .mode = 0644,
	  .proc_handler = proc_dostring },
};

static uint64_t gen(struct sysctl_tree *t)
{
	struct sysctl_entry *e = sysctl_lookup(t, "app.v");
	uint64_t g;

	assert_non_null(e);
	g = sysctl_entry_changes(e);
	sysctl_entry_put(e);
	return g;
}

static int set_if(struct sysctl_tree *t, uint64_t expected)
{
	struct sysctl_entry *e = sysctl_lookup(t, "app.v");
	size_t len = 1;
	off_t pos = 0;
	int err;

	assert_non_null(e);
	err = sysctl_entry_write_if(e, NULL, "y", &len, &pos, expected);
	sysctl_entry_put(e);
	return err;
}

static void test_redeclared(void **state)
{
	struct sysctl_tree *t = sysctl_tree_new();
	struct sysctl_table_header *h;
	uint64_t before;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "app", row, 1, &h), 0);
	assert_int_equal(sysctl_set(t, "app.v", "a", 1, NULL), 0);
	assert_int_equal(sysctl_set(t, "app.v", "b", 1, NULL), 0);
	before = gen(t);
	sysctl_unregister_table(h);
	assert_int_equal(sysctl_register_table(t, "app", row, 1, &h), 0);
	assert_true(gen(t) > before);
	/* As many writes as before: still no match with the old generation. */
	assert_int_equal(sysctl_set(t, "app.v", "a", 1, NULL), 0);
	assert_int_equal(sysctl_set(t, "app.v", "b", 1, NULL), 0);
	assert_int_equal(set_if(t, before), -ESTALE);
	assert_int_equal(set_if(t, gen(t)), 0);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
}

static void test_base(void **state)
{
	struct sysctl_tree *t = sysctl_tree_new();
	struct sysctl_table_header *h;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "app", row, 1, &h), 0);
	assert_int_equal(sysctl_set(t, "app.v", "a", 1, NULL), 0);
	assert_int_equal(sysctl_tree_set_generation_base(t, 7ull << SYSCTL_GENERATION_EPOCH_SHIFT), 0);
	assert_int_equal(gen(t), (7ull << SYSCTL_GENERATION_EPOCH_SHIFT) + 1);
	assert_int_equal(set_if(t, 1), -ESTALE); /* the count from before the base */
	assert_int_equal(sysctl_tree_set_generation_base(t, 1ull << 60), -EINVAL);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redeclared),
		cmocka_unit_test(test_base),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
