/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: argv_split() on arbitrary bytes (up to the first NUL)
 * against a reference word count; every word non-empty, free of separators,
 * and the words in order are exactly the input's non-space runs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/compat.h" /* the kernel names under test */
#include "rcustring/umh.h"

static int is_sep(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *str = malloc(size + 1);
	const char *p;
	char **argv;
	int argc = -1, want = 0, i;

	if (!str)
		return 0;
	memcpy(str, data, size);
	str[size] = '\0';
	for (p = str; *p; p++)
		if (!is_sep((unsigned char)*p) && (p == str || is_sep((unsigned char)p[-1])))
			want++;

	argv = argv_split(str, &argc);
	if (!argv)
		abort();
	if (argc != want || argv[argc] != NULL)
		abort();
	p = str;
	for (i = 0; i < argc; i++) {
		size_t len = strlen(argv[i]), j;

		if (len == 0)
			abort();
		for (j = 0; j < len; j++)
			if (is_sep((unsigned char)argv[i][j]))
				abort();
		/* The next word of the input is this one. */
		while (is_sep((unsigned char)*p))
			p++;
		if (strncmp(p, argv[i], len) != 0 || (p[len] && !is_sep((unsigned char)p[len])))
			abort();
		p += len;
	}
	while (is_sep((unsigned char)*p))
		p++;
	if (*p)
		abort();
	argv_free(argv);
	free(str);
	return 0;
}
