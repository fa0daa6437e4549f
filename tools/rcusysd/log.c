/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's log lines (log.h), and the rate limit of the lines a local
 * user can cause one per request.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/common/text_escape.h"

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

static void vrlog(int level, const char *fmt, va_list ap)
{
	/* Every byte of the message may need its 4 bytes of escape. */
	char msg[2048], line[128 + 4 * sizeof(msg)], stamp[64] = "";
	size_t n = 0;
	int len;

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
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (len < 0)
		len = 0;
	/*
	 * Messages carry text from outside (etcd keys and errors, settings
	 * lines, file names): escaped, no byte of it can end the line, forge
	 * the next one or drive the terminal or journal viewer reading it.
	 */
	n += rcs_text_escape(line + n, sizeof(line) - n - 1, msg,
			(size_t)len < sizeof(msg) ? (size_t)len : sizeof(msg) - 1);
	/* One write per line, so lines of several threads never interleave. */
	line[n++] = '\n';
	fwrite(line, 1, n, stderr);
	fflush(stderr);
}

void rlog(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrlog(level, fmt, ap);
	va_end(ap);
}

int64_t log_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void log_limit_init(struct log_limit *l)
{
	pthread_mutex_init(&l->lock, NULL);
	if (!l->interval_s)
		l->interval_s = LOG_LIMIT_INTERVAL_S;
	if (!l->burst)
		l->burst = LOG_LIMIT_BURST;
}

/* Its suppressed line, if any; the slot is free afterwards. Under l->lock. */
static void end_window(struct log_limit_slot *s)
{
	if (s->suppressed)
		rlog(s->level, "%s: %llu similar messages suppressed", s->key,
		     (unsigned long long)s->suppressed);
	memset(s, 0, sizeof(*s));
}

static void flush_locked(struct log_limit *l, int64_t now_ns, bool all)
{
	int64_t window = (int64_t)l->interval_s * 1000000000;

	for (int i = 0; i <= LOG_LIMIT_SOURCES; i++)
		if (l->slot[i].key[0] && (all || now_ns - l->slot[i].start_ns >= window))
			end_window(&l->slot[i]);
}

/* @key's slot, a free one, or the overflow; under l->lock. */
static struct log_limit_slot *find_slot(struct log_limit *l, const char *key)
{
	struct log_limit_slot *free_slot = NULL;

	for (int i = 0; i < LOG_LIMIT_SOURCES; i++) {
		if (!strncmp(l->slot[i].key, key, LOG_LIMIT_KEY - 1))
			return &l->slot[i];
		if (!free_slot && !l->slot[i].key[0])
			free_slot = &l->slot[i];
	}
	if (free_slot) {
		snprintf(free_slot->key, sizeof(free_slot->key), "%s", key);
		return free_slot;
	}
	free_slot = &l->slot[LOG_LIMIT_SOURCES];
	if (!free_slot->key[0])
		snprintf(free_slot->key, sizeof(free_slot->key),
			 "lines of further sources (%d sources busy)", LOG_LIMIT_SOURCES);
	return free_slot;
}

bool log_limit_at(struct log_limit *l, const char *key, int level, int64_t now_ns)
{
	struct log_limit_slot *s;
	bool ok;

	pthread_mutex_lock(&l->lock);
	flush_locked(l, now_ns, false);
	s = find_slot(l, key);
	if (!s->printed && !s->suppressed) {
		s->start_ns = now_ns;
		s->level = level;
	}
	ok = s->printed < l->burst;
	if (ok) {
		s->printed++;
	} else {
		s->suppressed++;
		l->suppressed++;
	}
	pthread_mutex_unlock(&l->lock);
	return ok;
}

void rlog_limited(struct log_limit *l, const char *key, int level, const char *fmt, ...)
{
	va_list ap;

	if (level > max_level || !log_limit_at(l, key, level, log_now_ns()))
		return;
	va_start(ap, fmt);
	vrlog(level, fmt, ap);
	va_end(ap);
}

void log_limit_flush(struct log_limit *l, int64_t now_ns, bool all)
{
	pthread_mutex_lock(&l->lock);
	flush_locked(l, now_ns, all);
	pthread_mutex_unlock(&l->lock);
}

uint64_t log_limit_suppressed(struct log_limit *l)
{
	uint64_t n;

	pthread_mutex_lock(&l->lock);
	n = l->suppressed;
	pthread_mutex_unlock(&l->lock);
	return n;
}
