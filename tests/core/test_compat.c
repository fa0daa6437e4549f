/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the kernel-style compat names (alloc/free/access_rcu_string). */
#define _LGPL_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <urcu-bp.h>

#include "rcustring/compat.h"
#include "../failmalloc.h"

#define MAXLEN 16

static char static_default[] = "default";
static char *global = static_default;

static void test_alloc_errors(void **state)
{
	(void)state;
	assert_null(alloc_rcu_string(0));
	assert_null(alloc_rcu_string(-1));
	failmalloc_arm(1);
	assert_null(alloc_rcu_string(8));
	failmalloc_disarm();
	free_rcu_string(NULL);
}

static void test_kernel_style_writer_and_reader(void **state)
{
	char *new, *old, *copy;

	(void)state;
	copy = access_rcu_string(&global, MAXLEN);
	assert_non_null(copy);
	assert_string_equal(copy, "default");
	free(copy);

	new = alloc_rcu_string(MAXLEN);
	assert_non_null(new);
	assert_string_equal(new, "");
	strcpy(new, "replaced");
	old = global;
	rcu_assign_pointer(global, new);
	assert_ptr_equal(old, static_default); /* the caller knows: never freed */

	copy = access_rcu_string(&global, MAXLEN);
	assert_string_equal(copy, "replaced");
	free(copy);

	/* A copy is always terminated, even of a buffer with no NUL. */
	memset(new, 'z', MAXLEN);
	copy = access_rcu_string(&global, MAXLEN);
	assert_int_equal(strlen(copy), MAXLEN - 1);
	free(copy);

	old = global;
	rcu_assign_pointer(global, static_default);
	free_rcu_string(old);
	rcu_barrier();
}

static void test_access_errors(void **state)
{
	(void)state;
	assert_null(access_rcu_string(NULL, MAXLEN));
	assert_null(access_rcu_string(&global, 0));
	failmalloc_arm(1);
	assert_null(access_rcu_string(&global, MAXLEN)); /* the patch crashed here */
	failmalloc_disarm();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_errors),
		cmocka_unit_test(test_kernel_style_writer_and_reader),
		cmocka_unit_test(test_access_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
