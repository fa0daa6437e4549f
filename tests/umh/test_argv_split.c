/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of argv_split()/argv_free(): the kernel's splitting rules. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rcustring/compat.h" /* the kernel names under test */
#include "rcustring/umh.h"
#include "../failmalloc.h"

struct split_case {
	const char *in;
	const char *want[6]; /* NULL-terminated */
};

static const struct split_case cases[] = {
	{ "", { NULL } },
	{ " ", { NULL } },
	{ " \t\n\v\f\r ", { NULL } },
	{ "a", { "a", NULL } },
	{ "/sbin/modprobe -q -- foo", { "/sbin/modprobe", "-q", "--", "foo", NULL } },
	{ "  lead", { "lead", NULL } },
	{ "trail  ", { "trail", NULL } },
	{ "\ttabs\tand\t\tmore\t", { "tabs", "and", "more", NULL } },
	{ "new\nlines\r\nhere\n", { "new", "lines", "here", NULL } },
	{ "v\vf\fmix \t\n end", { "v", "f", "mix", "end", NULL } },
	/* No quoting, no escapes: the kernel's rules. */
	{ "\"a b\" 'c d' e\\ f", { "\"a", "b\"", "'c", "d'", "e\\", "f" } },
	/* Bytes >= 0x80 (UTF-8, the kernel's 0xa0) are never separators. */
	{ "caf\xc3\xa9 x\xa0y", { "caf\xc3\xa9", "x\xa0y", NULL } },
};

static void check_split(const char *in, const char *const *want)
{
	int argc = -1, n = 0, i;
	char **argv;

	while (n < 6 && want[n])
		n++;
	argv = argv_split(in, &argc);
	assert_non_null(argv);
	assert_int_equal(argc, n);
	for (i = 0; i < n; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[n]);
	argv_free(argv);
}

static void test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_split(cases[i].in, cases[i].want);
}

static void test_argcp_optional(void **state)
{
	char **argv;

	(void)state;
	argv = argv_split(" x  y ", NULL);
	assert_non_null(argv);
	assert_string_equal(argv[0], "x");
	assert_string_equal(argv[1], "y");
	assert_null(argv[2]);
	argv_free(argv);
	argv_free(NULL);
}

static void test_input_untouched(void **state)
{
	char in[] = "a b\tc";
	char **argv;

	(void)state;
	argv = argv_split(in, NULL);
	assert_non_null(argv);
	/* The words live in argv's own block, not in the caller's string. */
	assert_string_equal(in, "a b\tc");
	assert_true(argv[0] < in || argv[0] >= in + sizeof(in));
	argv_free(argv);
}

static void test_null(void **state)
{
	int argc = 42;

	(void)state;
	errno = 0;
	assert_null(argv_split(NULL, &argc));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(argc, 42);
}

static void test_long(void **state)
{
	enum { WORDS = 20000 };
	char *in = malloc(WORDS * 8 + 1), *p = in;
	char **argv;
	int argc, i;

	(void)state;
	assert_non_null(in);
	for (i = 0; i < WORDS; i++)
		p += sprintf(p, "%s%05d", i % 2 ? "\t " : " ", i);
	argv = argv_split(in, &argc);
	assert_non_null(argv);
	assert_int_equal(argc, WORDS);
	for (i = 0; i < WORDS; i += 997) {
		char want[8];

		snprintf(want, sizeof(want), "%05d", i);
		assert_string_equal(argv[i], want);
	}
	assert_string_equal(argv[WORDS - 1], "19999");
	assert_null(argv[WORDS]);
	argv_free(argv);
	free(in);
}

/* Fail each allocation in turn: NULL and ENOMEM, nothing leaked (ASan/valgrind). */
static void test_enomem(void **state)
{
	long nth, calls;
	char **argv;
	int argc;

	(void)state;
	for (nth = 1;; nth++) {
		argc = -1;
		errno = 0;
		failmalloc_arm(nth);
		argv = argv_split("  one two\tthree ", &argc);
		calls = failmalloc_disarm();
		if (argv) {
			assert_true(calls < nth);
			assert_int_equal(argc, 3);
			argv_free(argv);
			break;
		}
		assert_int_equal(errno, ENOMEM);
		assert_int_equal(argc, -1);
	}
	assert_true(nth > 1); /* at least one allocation was failed */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_argcp_optional),
		cmocka_unit_test(test_input_untouched),
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_enomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
