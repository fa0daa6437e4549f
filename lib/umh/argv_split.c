// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * argv_split: split a command line into words, the kernel's way
 * (lib/argv_split.c): runs of white space separate words, there is no quoting
 * and no escaping, leading and trailing white space is ignored.
 *
 * The vector and the strings share one allocation (pointer array first, then
 * a copy of the input with the separators replaced by NULs), so one malloc
 * can fail and argv_free() is a single free().
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/umh.h"

/*
 * The C locale's isspace(), spelled out: a command line must split the same
 * way whatever locale the program runs in, and bytes >= 0x80 are never
 * separators (the kernel treats 0xa0 as space; UTF-8 text would break).
 */
static bool umh_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static size_t count_argc(const char *str, size_t *lenp)
{
	const char *p;
	bool was_space = true;
	size_t count = 0;

	for (p = str; *p; p++) {
		if (umh_isspace((unsigned char)*p)) {
			was_space = true;
		} else if (was_space) {
			was_space = false;
			count++;
		}
	}
	*lenp = (size_t)(p - str);
	return count;
}

RCUSTRING_API char **umh_argv_split(const char *str, int *argcp)
{
	size_t argc, len, vec_size;
	bool was_space = true;
	char **argv, **out;
	char *copy;

	if (!str) {
		errno = EINVAL;
		return NULL;
	}
	argc = count_argc(str, &len);
	/* argc <= len / 2 + 1, so vec_size cannot wrap; argc must fit *argcp. */
	vec_size = (argc + 1) * sizeof(char *);
	if (argc > INT_MAX || len >= SIZE_MAX - vec_size) {
		errno = ENOMEM;
		return NULL;
	}
	argv = malloc(vec_size + len + 1);
	if (!argv) {
		errno = ENOMEM;
		return NULL;
	}
	copy = (char *)argv + vec_size;
	memcpy(copy, str, len + 1);

	out = argv;
	for (; *copy; copy++) {
		if (umh_isspace((unsigned char)*copy)) {
			was_space = true;
			*copy = '\0';
		} else if (was_space) {
			was_space = false;
			*out++ = copy;
		}
	}
	*out = NULL;

	if (argcp)
		*argcp = (int)argc;
	return argv;
}

RCUSTRING_API void umh_argv_free(char **argv)
{
	free(argv);
}
