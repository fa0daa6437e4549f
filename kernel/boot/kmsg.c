// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel messages for the KCSAN guest: a child process reads /dev/kmsg from
 * the start of the log and copies to stdout, prefixed "kcsan ", every line
 * of a KCSAN report (from "BUG: KCSAN:" to the closing "=====" line) and
 * KCSAN's own messages ("kcsan: enabled early"). boot-test places the
 * addresses the reports name with the kernel's symbol table. The console
 * itself stays quiet (init runs "dmesg -n 1"): helper failures would
 * drown the results there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "racetest.h"

static pid_t watcher = -1;

/* One /dev/kmsg record: "prio,seq,time,flags;text\n" then " KEY=value"
 * lines. Print the text if it belongs to a KCSAN report. */
static void one_record(char *rec, bool *in_report)
{
	char *text = strchr(rec, ';'), *nl;

	if (!text)
		return;
	text++;
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	if (!strncmp(text, "BUG: KCSAN:", 11))
		*in_report = true;
	if (*in_report || !strncmp(text, "kcsan: ", 7))
		printf("kcsan %s\n", text);
	if (*in_report && !strncmp(text, "=====", 5))
		*in_report = false;
}

static void watch(void)
{
	char rec[8192];
	bool in_report = false;
	int fd = open("/dev/kmsg", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		printf("note %s kmsg: cannot open /dev/kmsg: %s\n", kname, strerror(errno));
		_exit(1);
	}
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE) {
			/* Overwritten before we read it: say so, go on. */
			printf("note %s kmsg: records lost\n", kname);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		one_record(rec, &in_report);
	}
	_exit(0);
}

void kmsg_watch_start(void)
{
	fflush(stdout);
	watcher = fork();
	if (watcher < 0)
		die("fork");
	if (watcher == 0)
		watch();
}

/* Give the watcher a moment to copy the last reports, then end it. */
void kmsg_watch_stop(void)
{
	if (watcher < 0)
		return;
	sleep(2);
	kill(watcher, SIGTERM);
	waitpid(watcher, NULL, 0);
	watcher = -1;
	printf("racetest: kmsg watcher stopped\n");
}
