/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's log: one line per event on standard error, with a level. Under
 * systemd (JOURNAL_STREAM set, so stderr goes to the journal) each line
 * starts with the journal's priority prefix ("<3>"), which the journal
 * turns into the entry's priority and strips; otherwise it starts with the
 * time in UTC ("2026-12-04T17:07:23.123Z") and the level's name, for a
 * terminal or a file.
 */
#ifndef RCUSYSD_LOG_H
#define RCUSYSD_LOG_H

#include <stdbool.h>
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

/* One line "rcusysd: MESSAGE" at @level; a trailing newline is not needed. */
void rlog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
