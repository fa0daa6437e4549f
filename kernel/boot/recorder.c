// SPDX-License-Identifier: GPL-2.0
/*
 * recorder: the usermode helper the boot race test installs as core_pattern
 * pipe helper, kernel.modprobe and uevent helper. It appends one fixed-size
 * record to /rec.log saying which binary the kernel executed, the argv[0]
 * the kernel passed, the last argument and $DEVPATH, then drains stdin (the
 * core dump, when it is one).
 *
 * Records are fixed-size so that racetest can count them with one stat();
 * O_APPEND makes each record's write atomic with respect to the others.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"

int main(int argc, char **argv)
{
	char line[REC_LEN + 1], exe[256], buf[4096];
	const char *devpath = getenv("DEVPATH");
	ssize_t n;
	int fd;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		n = 0;
	exe[n] = '\0';
	snprintf(line, sizeof(line), REC_FMT, exe, argc > 0 ? argv[0] : "-",
		 argc > 1 ? argv[argc - 1] : "-", devpath ? devpath : "-");
	fd = open(REC_PATH, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	if (write(fd, line, REC_LEN) != REC_LEN)
		return 1;
	close(fd);
	/* A core-dump helper reads its pipe to the end, as a real one does. */
	while ((n = read(0, buf, sizeof(buf))) > 0)
		;
	return 0;
}
