/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test helper: appends one line describing how it was run to
 * <dir of argv[0]>/../record.log, so that two symlinks a/NAME and b/NAME to
 * it share one log: argv words, then "|", the environment, then "|", what
 * came on stdin, separated by tabs. The line is written with one write()
 * on an O_APPEND descriptor, so concurrent helpers never interleave.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static size_t put(char *line, size_t used, size_t size, const char *s)
{
	size_t n = strlen(s);

	if (used + n >= size)
		n = size - used - 1;
	memcpy(line + used, s, n);
	return used + n;
}

int main(int argc, char **argv)
{
	static char line[8192], in[4096], log[4096];
	size_t used = 0, got = 0;
	char *slash;
	ssize_t n;
	int i, fd;

	(void)argc;
	snprintf(log, sizeof(log), "%s", argv[0]);
	slash = strrchr(log, '/');
	if (!slash)
		return 2;
	*slash = '\0';
	strncat(log, "/../record.log", sizeof(log) - strlen(log) - 1);

	for (i = 0; argv[i]; i++) {
		used = put(line, used, sizeof(line), i ? "\t" : "");
		used = put(line, used, sizeof(line), argv[i]);
	}
	used = put(line, used, sizeof(line), "\t|");
	for (i = 0; environ[i]; i++) {
		used = put(line, used, sizeof(line), "\t");
		used = put(line, used, sizeof(line), environ[i]);
	}
	used = put(line, used, sizeof(line), "\t|\t");
	while (got < sizeof(in) - 1 && (n = read(0, in + got, sizeof(in) - 1 - got)) > 0)
		got += (size_t)n;
	in[got] = '\0';
	used = put(line, used, sizeof(line), in);
	used = put(line, used, sizeof(line), "\n");

	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 3;
	if (write(fd, line, used) != (ssize_t)used)
		return 4;
	close(fd);
	return 0;
}
