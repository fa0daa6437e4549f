/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's log: one line per event on standard error, with a level. Under
 * systemd (JOURNAL_STREAM set, so stderr goes to the journal) each line
 * starts with the journal's priority prefix ("<3>"), which the journal
 * turns into the entry's priority and strips; otherwise it starts with the
 * time in UTC ("2026-12-04T17:07:23.123Z") and the level's name, for a
 * terminal or a file. The message is escaped (rcs_text_escape,
 * lib/common/text_escape.h) so that text from outside, an etcd key or
 * error, a settings line, a file name, can neither end its line and forge
 * the next, drive a terminal nor reorder what a viewer displays.
 */
#ifndef RCUSYSD_LOG_H
#define RCUSYSD_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

/* Decides the format (journal or timestamps) from the environment. */
void log_init(void);

/* Lines above @level (LOG_ERR .. LOG_DEBUG) are dropped; the default is LOG_INFO. */
void log_set_level(int level);

/*
 * --check-config: each line is the message alone ("FILE:LINE: message"),
 * and lines at LOG_WARNING or above are counted as problems.
 */
void log_set_check(void);

/* Problems logged since log_set_check(). Context: the main thread, after the check. */
unsigned log_problems(void);

/* "err", "warning", "notice", "info", "debug" -> LOG_*, or -1. */
int log_level_from_name(const char *name);

/*
 * One line "rcusysd: MESSAGE" at @level; a trailing newline is not needed
 * (one in the message is escaped, as every control byte is: rcs_text_escape).
 * Context: any thread.
 */
void rlog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A rate limit for lines a local user can cause, one per request (a
 * refused write): like the kernel's printk_ratelimit(), each source (a uid,
 * an origin) and kind gets LOG_LIMIT_BURST lines per LOG_LIMIT_INTERVAL_S,
 * then its lines are only counted, and one line "N similar messages
 * suppressed" says how many when its window ends: at its next line, at any
 * limited line after the window, at log_limit_flush(). A loop of refused
 * requests then costs the journal a few lines per window, not one per
 * request; the exact numbers are in the counters (STATUS, METRICS).
 * Sources are LOG_LIMIT_SOURCES slots: when every one is in its window, a
 * new source shares one overflow slot, so memory stays bounded whatever
 * the number of uids.
 */
#define LOG_LIMIT_INTERVAL_S 5
#define LOG_LIMIT_BURST 10
#define LOG_LIMIT_SOURCES 32
#define LOG_LIMIT_KEY 96

struct log_limit_slot {
	char key[LOG_LIMIT_KEY]; /* "" when free */
	int64_t start_ns;        /* CLOCK_MONOTONIC start of its window */
	int level;               /* of its lines, for the suppressed line */
	unsigned printed;        /* lines this window */
	uint64_t suppressed;     /* lines left out this window */
};

struct log_limit {
	pthread_mutex_t lock;
	unsigned interval_s, burst; /* 0: the defaults above */
	uint64_t suppressed;        /* in all, since the start */
	struct log_limit_slot slot[LOG_LIMIT_SOURCES + 1]; /* the last: the overflow */
};

/* Ready @l (zeroed, or set interval_s and burst first). Context: before it is shared. */
void log_limit_init(struct log_limit *l);

/*
 * rlog_limited - rlog() @fmt at @level unless @key's window has had its
 * burst. @key names the source and kind ("refused write by uid 1000"); it
 * is the start of the suppressed line, so it says what was left out.
 * Context: any thread.
 */
void rlog_limited(struct log_limit *l, const char *key, int level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * log_limit_at - the decision alone, at @now_ns (CLOCK_MONOTONIC): true if
 * a line of @key may be written. Suppressed lines of windows that ended are
 * logged first. Context: any thread; for tests, which choose the clock.
 */
bool log_limit_at(struct log_limit *l, const char *key, int level, int64_t now_ns);

/*
 * log_limit_flush - write the suppressed line of every window that ended by
 * @now_ns (every window when @all), and free those slots.
 * Context: any thread; rcusysd calls it on its periodic wake-up and at exit.
 */
void log_limit_flush(struct log_limit *l, int64_t now_ns, bool all);

/* Lines left out since the start. Context: any thread. */
uint64_t log_limit_suppressed(struct log_limit *l);

/* CLOCK_MONOTONIC in nanoseconds, the clock log_limit_at() takes. */
int64_t log_now_ns(void);

#endif
