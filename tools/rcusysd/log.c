/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

static bool journal, check;
static unsigned problems;
static int max_level = LOG_INFO;

static const char *const names[] = { "emerg", "alert", "crit", "err", "warning", "notice", "info",
				     "debug" };

void log_init(void)
{
	const char *js = getenv("JOURNAL_STREAM");

	journal = js && *js;
}

void log_set_level(int level)
{
	max_level = level;
}

void log_set_check(void)
{
	check = true;
}

unsigned log_problems(void)
{
	return problems;
}

int log_level_from_name(const char *name)
{
	for (int i = LOG_ERR; i <= LOG_DEBUG; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

void rlog(int level, const char *fmt, ...)
{
	char line[2048], stamp[64] = "";
	size_t n = 0;
	va_list ap;

	if (level > max_level)
		return;
	if (check) {
		problems += level <= LOG_WARNING;
	} else if (journal) {
		n = (size_t)snprintf(line, sizeof(line), "<%d>rcusysd: ", level);
	} else {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		/* UTC, as the audit ring and rcusysctl audit print times: one clock everywhere. */
		gmtime_r(&ts.tv_sec, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
		n = (size_t)snprintf(line, sizeof(line), "%s.%03ldZ %s rcusysd: ", stamp,
				     ts.tv_nsec / 1000000, names[level]);
	}
	va_start(ap, fmt);
	if (n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* One write per line, so lines of several threads never interleave. */
	n = strnlen(line, sizeof(line) - 2);
	for (char *p = line; p < line + n; p++)
		if (*p == '\n')
			*p = ' ';
	line[n++] = '\n';
	fwrite(line, 1, n, stderr);
	fflush(stderr);
}
