/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: format_corename() on an arbitrary pattern, comm,
 * hostname and exe path, into a buffer of arbitrary size (allocated to the
 * byte, so ASan sees any overrun). Invariants: the output is NUL-terminated
 * within size; an error leaves ""; a pipe's argv points at consecutive
 * NUL-separated words in the buffer, the program first and non-empty; and
 * the result in a small buffer is the result in a big one when it fits,
 * -ENAMETOOLONG when it does not (refused, never cut).
 *
 * Input: size (2 bytes), flags (1), argv_max (1), then pattern, comm,
 * hostname and exe path separated by NUL bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "subsys.h"

#define BIG (1 << 16)

static const char *field(const char **p, const char *end)
{
	const char *s = *p;
	const char *nul = memchr(s, '\0', (size_t)(end - s));

	*p = nul ? nul + 1 : end;
	return s;
}

/* Bytes the result occupies, its last NUL excluded. */
static size_t used(const char *out, int ret, char **argv, int argc)
{
	if (ret == 1 && argc > 0)
		return (size_t)(argv[argc - 1] - out) + strlen(argv[argc - 1]);
	return strlen(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char big[BIG];
	static char *bargv[CORE_PIPE_ARGV_MAX + 2], *argv[CORE_PIPE_ARGV_MAX + 2];
	struct core_info ci = {
		.pid = 1234, .global_pid = 99, .tid = 1235, .global_tid = 100, .uid = 1000,
		.gid = 1000, .signal = 11, .time = 1700000000, .dumpable = 1,
		.core_limit = (unsigned long)-1, .cpu = 7,
	};
	const char *p, *end, *pattern;
	char *text, *out;
	size_t outsize, argv_max, n;
	int flags, bret, ret, bargc = -1, argc = -1, i;
	bool uses_pid, want_argv;

	if (size < 4)
		return 0;
	outsize = 1 + (size_t)((data[0] | data[1] << 8) % 1024);
	flags = data[2];
	argv_max = 1 + (size_t)(data[3] % (CORE_PIPE_ARGV_MAX + 2));
	uses_pid = flags & 1;
	want_argv = flags & 16;

	/* a NUL-terminated copy of the rest, so every field ends */
	text = malloc(size - 4 + 1);
	if (!text)
		return 0;
	memcpy(text, data + 4, size - 4);
	text[size - 4] = '\0';
	p = text;
	end = text + size - 4 + 1;
	pattern = field(&p, end);
	ci.comm = p < end ? field(&p, end) : "";
	ci.hostname = p < end ? field(&p, end) : "";
	ci.exe_path = p < end ? field(&p, end) : "/usr/bin/x";
	if (flags & 2)
		ci.exe_path = NULL;
	if (flags & 4)
		ci.comm = NULL;
	if (flags & 8)
		ci.hostname = NULL;

	bret = format_corename(big, sizeof(big), pattern, &ci, uses_pid, bargv,
			       want_argv ? argv_max : CORE_PIPE_ARGV_MAX + 1, &bargc);
	out = malloc(outsize);
	if (!out)
		goto done;
	ret = format_corename(out, outsize, pattern, &ci, uses_pid, want_argv ? argv : NULL,
			      argv_max, &argc);

	if (!memchr(out, '\0', outsize))
		abort();
	if (ret < 0 && out[0] != '\0')
		abort();
	if (ret != 0 && ret != 1 && ret != -EINVAL && ret != -ENAMETOOLONG && ret != -E2BIG)
		abort();
	if (bret == 1) {
		if (bargc < 1 || bargv[bargc] != NULL || bargv[0] != big || !bargv[0][0])
			abort();
		for (i = 0; i + 1 < bargc; i++)
			if (bargv[i + 1] != bargv[i] + strlen(bargv[i]) + 1)
				abort();
	}
	if (bret >= 0) {
		n = used(big, bret, bargv, bargc);
		if (n + 1 <= outsize) {
			if (ret != bret || memcmp(out, big, n + 1) != 0)
				abort();
			if (ret == 1 && (argc != bargc || (want_argv && argv[argc] != NULL)))
				abort();
		} else if (ret != -ENAMETOOLONG) {
			abort();
		}
	} else if (bret == -ENAMETOOLONG && ret != -ENAMETOOLONG) {
		abort();
	} else if (bret == -E2BIG && ret != -E2BIG && ret != -ENAMETOOLONG) {
		abort();
	} else if (bret == -EINVAL && ret != -EINVAL && ret != -ENAMETOOLONG) {
		abort();
	}
	free(out);
done:
	free(text);
	return 0;
}
