/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * format_corename() against the kernel's rules (fs/coredump.c): every
 * specifier of man 5 core, escaping of program-controlled values, dropped
 * unknown and trailing '%', core_uses_pid, pipe patterns split on the
 * pattern's spaces before expansion, and the limits.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "subsys.h"

static const struct core_info info = {
	.pid = 1234, .global_pid = 51234, .tid = 1240, .global_tid = 51240,
	.uid = 1000, .gid = 100, .signal = 11, .time = 1700000000, .dumpable = 2,
	.core_limit = 4096, .cpu = 3,
	.hostname = "build/host", .comm = "my/prog", .exe_path = "/usr/bin/my prog",
};

struct file_case {
	const char *pattern;
	bool uses_pid;
	const char *want;
};

static const struct file_case file_cases[] = {
	{ "core", false, "core" },
	{ "", false, "" },
	{ "", true, ".1234" },
	{ "%%", false, "%" },
	{ "a%%p", false, "a%p" },
	{ "%c", false, "4096" },
	{ "%C", false, "3" },
	{ "%d", false, "2" },
	{ "%e", false, "my!prog" },
	{ "%E", false, "!usr!bin!my prog" },
	{ "%f", false, "my prog" },
	{ "%g", false, "100" },
	{ "%h", false, "build!host" },
	{ "%i", false, "1240" },
	{ "%I", false, "51240" },
	{ "%p", false, "1234" },
	{ "%P", false, "51234" },
	{ "%s", false, "11" },
	{ "%t", false, "1700000000" },
	{ "%u", false, "1000" },
	{ "/var/crash/core.%e.%p.%s.%t", false, "/var/crash/core.my!prog.1234.11.1700000000" },
	/* unknown specifier: dropped with its '%' */
	{ "a%qb", false, "ab" },
	{ "a%Zb%", false, "ab" },
	/* trailing '%': dropped */
	{ "core%", false, "core" },
	{ "%", false, "" },
	/* core_uses_pid: ".pid" unless %p is in the pattern */
	{ "core", true, "core.1234" },
	{ "core.%p", true, "core.1234" },
	{ "core.%P", true, "core.51234.1234" },
	{ "core%", true, "core.1234" },
	/* spaces in a file pattern are just bytes */
	{ "a b %s", false, "a b 11" },
};

static void test_file_patterns(void **state)
{
	char out[CORENAME_OUT_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(file_cases) / sizeof(file_cases[0]); i++) {
		const struct file_case *c = &file_cases[i];
		int argc = -1;

		memset(out, 'x', sizeof(out));
		assert_int_equal(format_corename(out, sizeof(out), c->pattern, &info, c->uses_pid,
						 NULL, 0, &argc), 0);
		if (strcmp(out, c->want) != 0)
			fail_msg("pattern \"%s\" (uses_pid %d): got \"%s\", want \"%s\"", c->pattern,
				 c->uses_pid, out, c->want);
		assert_int_equal(argc, 0);
	}
}

/* The escapes of cn_esc_printf(): no expansion may add or climb a level. */
static void test_escapes(void **state)
{
	struct core_info ci = info;
	char out[256];

	(void)state;
	ci.comm = ".";
	assert_int_equal(format_corename(out, sizeof(out), "%e", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "!");
	ci.comm = "..";
	assert_int_equal(format_corename(out, sizeof(out), "x/%e/y", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "x/!./y");
	ci.comm = "...";
	assert_int_equal(format_corename(out, sizeof(out), "%e", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "...");
	ci.comm = "";
	assert_int_equal(format_corename(out, sizeof(out), "a/%e/b", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "a/!/b");
	ci.comm = NULL;
	ci.hostname = NULL;
	assert_int_equal(format_corename(out, sizeof(out), "%e%h", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "!!");
	ci.hostname = "../../etc";
	assert_int_equal(format_corename(out, sizeof(out), "%h", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "..!..!etc");

	/* an unknown exe path: "<comm> (path unknown)", escaped */
	ci = info;
	ci.exe_path = NULL;
	assert_int_equal(format_corename(out, sizeof(out), "%E|%f", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "my!prog (path unknown)|my!prog (path unknown)");
	ci.exe_path = "noslash";
	assert_int_equal(format_corename(out, sizeof(out), "%f", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "noslash");
	ci.exe_path = "/bin/";
	assert_int_equal(format_corename(out, sizeof(out), "%f", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "!");
	/* %c prints the limit as the kernel does: unsigned long */
	ci.core_limit = (unsigned long)-1;
	assert_int_equal(format_corename(out, sizeof(out), "%c", &ci, false, NULL, 0, NULL), 0);
	assert_int_equal(strtoul(out, NULL, 10), (unsigned long)-1);
	ci.uid = (uid_t)-1;
	assert_int_equal(format_corename(out, sizeof(out), "%u", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "4294967295");
	ci.time = -5;
	assert_int_equal(format_corename(out, sizeof(out), "%t", &ci, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "-5");
}

struct pipe_case {
	const char *pattern;
	int argc;
	const char *want[8];
};

static const struct pipe_case pipe_cases[] = {
	{ "|/bin/helper", 1, { "/bin/helper" } },
	{ "|  /bin/helper  ", 1, { "/bin/helper" } },
	{ "|/bin/helper %p %e", 3, { "/bin/helper", "1234", "my!prog" } },
	/* split before expansion: a value with spaces stays one argument */
	{ "|/bin/h %E %f", 3, { "/bin/h", "!usr!bin!my prog", "my prog" } },
	{ "|/bin/h\t%s \t %u  ", 3, { "/bin/h", "11", "1000" } },
	{ "|/bin/h a%%b %", 3, { "/bin/h", "a%b", "" } },
	{ "|/bin/h %q x", 3, { "/bin/h", "", "x" } },
	/* core_uses_pid never applies to a pipe */
	{ "|/bin/h", 1, { "/bin/h" } },
	/* an empty program swallows the following space, as in the kernel */
	{ "|%q /bin/h x", 2, { "/bin/h", "x" } },
};

static void test_pipe_patterns(void **state)
{
	char out[CORENAME_OUT_MAX];
	char *argv[CORE_PIPE_ARGV_MAX + 1];
	size_t i;
	int j;

	(void)state;
	for (i = 0; i < sizeof(pipe_cases) / sizeof(pipe_cases[0]); i++) {
		const struct pipe_case *c = &pipe_cases[i];
		int argc = -1;

		assert_int_equal(format_corename(out, sizeof(out), c->pattern, &info, true, argv,
						 CORE_PIPE_ARGV_MAX + 1, &argc), 1);
		if (argc != c->argc)
			fail_msg("pattern \"%s\": argc %d, want %d", c->pattern, argc, c->argc);
		for (j = 0; j < argc; j++)
			if (strcmp(argv[j], c->want[j]) != 0)
				fail_msg("pattern \"%s\": argv[%d] \"%s\", want \"%s\"", c->pattern, j,
					 argv[j], c->want[j]);
		assert_null(argv[argc]);
		assert_ptr_equal(argv[0], out);
	}
	/* argv is optional: the arguments are still NUL-separated in out */
	assert_int_equal(format_corename(out, sizeof(out), "|/a b", &info, false, NULL, 0, NULL), 1);
	assert_string_equal(out, "/a");
	assert_string_equal(out + 3, "b");
}

static void test_errors(void **state)
{
	char out[64], big[CORENAME_OUT_MAX], pat[CORENAME_MAX_SIZE], many[4 * CORE_PIPE_ARGV_MAX];
	struct core_info ci = info;
	char *argv[4];
	int argc = -1;
	size_t i;

	(void)state;
	assert_int_equal(format_corename(NULL, 10, "core", &info, false, NULL, 0, NULL), -EINVAL);
	assert_int_equal(format_corename(out, 0, "core", &info, false, NULL, 0, NULL), -EINVAL);
	assert_int_equal(format_corename(out, sizeof(out), NULL, &info, false, NULL, 0, NULL), -EINVAL);
	assert_int_equal(format_corename(out, sizeof(out), "core", NULL, false, NULL, 0, NULL), -EINVAL);
	assert_int_equal(format_corename(out, sizeof(out), "|x", &info, false, argv, 0, NULL), -EINVAL);
	/* a pipe with no program, or one that expands to nothing */
	assert_int_equal(format_corename(out, sizeof(out), "|", &info, false, NULL, 0, &argc), -EINVAL);
	assert_int_equal(format_corename(out, sizeof(out), "|   ", &info, false, NULL, 0, NULL), -EINVAL);
	assert_int_equal(format_corename(out, sizeof(out), "|%q", &info, false, NULL, 0, NULL), -EINVAL);
	assert_string_equal(out, "");

	/* too long: refused, never cut, and out is "" */
	assert_int_equal(format_corename(out, 5, "core", &info, false, NULL, 0, NULL), 0);
	assert_string_equal(out, "core");
	assert_int_equal(format_corename(out, 4, "core", &info, false, NULL, 0, NULL), -ENAMETOOLONG);
	assert_string_equal(out, "");
	assert_int_equal(format_corename(out, 9, "core", &info, true, NULL, 0, NULL), -ENAMETOOLONG);
	assert_int_equal(format_corename(out, 10, "core", &info, true, NULL, 0, NULL), 0);
	assert_string_equal(out, "core.1234");
	assert_int_equal(format_corename(out, 8, "%t", &info, false, NULL, 0, NULL), -ENAMETOOLONG);
	assert_int_equal(format_corename(out, 4, "|/a b", &info, false, NULL, 0, NULL), -ENAMETOOLONG);
	assert_int_equal(format_corename(out, 5, "|/a b", &info, false, NULL, 0, NULL), 1);
	/* many %E: a pattern of CORENAME_MAX_SIZE can expand past any buffer */
	for (i = 0; i + 2 < sizeof(pat); i += 2)
		memcpy(pat + i, "%E", 2);
	pat[i] = '\0';
	memset(many, 'e', sizeof(many) - 1);
	many[0] = '/';
	many[sizeof(many) - 1] = '\0';
	ci.exe_path = many; /* 63 * 255 bytes > CORENAME_OUT_MAX */
	assert_int_equal(format_corename(big, sizeof(big), pat, &ci, false, NULL, 0, NULL),
			 -ENAMETOOLONG);
	assert_string_equal(big, "");

	/* too many arguments for argv, or for the kernel's limit */
	assert_int_equal(format_corename(out, sizeof(out), "|/a b c", &info, false, argv, 4, &argc),
			 1);
	assert_int_equal(argc, 3);
	assert_int_equal(format_corename(out, sizeof(out), "|/a b c d", &info, false, argv, 4, NULL),
			 -E2BIG);
	assert_int_equal(format_corename(out, sizeof(out), "|/a b c d", &info, false, argv, 3, NULL),
			 -E2BIG);
	/* CORE_PIPE_ARGV_MAX words fit (no valid core_pattern has more) */
	strcpy(many, "|x");
	for (i = 1; i < CORE_PIPE_ARGV_MAX; i++)
		strcat(many, " x");
	assert_int_equal(format_corename(big, sizeof(big), many, &info, false, NULL, 0, &argc), 1);
	assert_int_equal(argc, CORE_PIPE_ARGV_MAX);
	strcat(many, " y");
	assert_int_equal(format_corename(big, sizeof(big), many, &info, false, NULL, 0, NULL), -E2BIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_patterns),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_pipe_patterns),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
