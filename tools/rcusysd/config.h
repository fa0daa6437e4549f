/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's configuration, with one precedence at start, at reload and at
 * restart (rcusysd(8), CONFIGURATION):
 *
 *   1. the tunables' defaults (tunables files, -t and tunables.d);
 *   2. the sysctl.d directories, then the -c files, merged into one set as
 *      systemd-sysctl merges them (sysctl_conf_set: /etc over /run over
 *      /usr/lib by file name, lexical order, a later assignment of a key
 *      replacing an earlier one, an explicit key beating a glob);
 *   3. runtime writes, which the state file keeps (persist.h), and values
 *      mirrored from etcd.
 *
 * At start and at reload every writable entry is brought to the value of
 * the highest layer that names it; so a reload gives what a restart would,
 * and rcusysctl --reset (which drops a runtime write) gives the files'
 * value again, or the default when no file names the entry.
 */
#ifndef RCUSYSD_CONFIG_H
#define RCUSYSD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <rcustring/sysctl.h>

#include "persist.h"

#define CONFIG_MAX_FILES 32
#define CONFIG_SYSCTL_DIRS                                                                         \
	"/etc/rcusysd/sysctl.d:/run/rcusysd/sysctl.d:/usr/local/lib/rcusysd/sysctl.d:"             \
	"/usr/lib/rcusysd/sysctl.d"
#define CONFIG_TUNABLES_DIRS                                                                       \
	"/etc/rcusysd/tunables.d:/run/rcusysd/tunables.d:/usr/local/lib/rcusysd/tunables.d:"       \
	"/usr/lib/rcusysd/tunables.d"

struct config_files {
	const char *tunables[CONFIG_MAX_FILES]; /* -t, in order */
	const char *configs[CONFIG_MAX_FILES];  /* -c, in order */
	int ntunables, nconfigs;
	const char *sysctl_dirs;   /* ':'-separated; "" for none */
	const char *tunables_dirs; /* ':'-separated; "" for none */
	bool check;                /* --check-config: a bad tunables file stops nothing */
};

struct config;
struct log_limit;

/*
 * Declares the tunables (a bad tunables file is fatal: -EINVAL, logged),
 * remembers every entry's default, and applies layer 2. A bad settings
 * line is logged and the rest applied, as systemd-sysctl does.
 */
int config_start(struct sysctl_tree *tree, const struct config_files *files, struct config **out);

/* Layer 3: the state file (may be NULL) and etcd's keys ('/' form; NULL without etcd). */
void config_set_layers(struct config *c, struct persist *state, bool (*etcd_holds)(const char *key));

/*
 * Asked during a reload: true to end it now (the process is stopping).
 * @file and @line say where a file's parse is (@line 0: just after it);
 * @file NULL between the steps and the entries. Context: the reload's
 * thread, holding no lock of the configuration (a reset may run meanwhile).
 */
typedef bool config_stop_fn(void *arg, const char *file, unsigned line);

/*
 * SIGHUP: every file read again, every entry brought to its layers' value.
 * Holds the configuration's lock only for one entry at a time and to swap
 * the new settings in, so config_reset() answers during a reload. @stop
 * (may be NULL) is asked between steps, every few hundred entries and
 * every few hundred lines of a file's parse (tunables and settings); when
 * it says true the reload ends there, logged, and -EINTR comes back (the
 * tree is left part way: for a process about to exit). Else 0. Context:
 * the thread that called config_start(), one reload at a time.
 */
int config_reload(struct config *c, config_stop_fn *stop, void *stop_arg);

/*
 * Drops the runtime write of @path (NULL: all of them) and applies the
 * files' value or the default. Returns 0 or a negative errno with @why
 * (size @size) filled. Context: any thread, during a reload too (it waits
 * for the entry the reload is at, not for the reload).
 */
int config_reset(struct config *c, const char *path, char *why, size_t size);

/*
 * config_set_log_limit - the rate limit of a reset's log lines: any writer
 * of an entry may send RESET in a loop, so a burst is logged, then counted
 * in @l's suppressed lines (@l's owner flushes them). Context: the main thread.
 */
void config_set_log_limit(struct config *c, struct log_limit *l);

/* Problems of the last start or reload (each logged). Context: the main thread. */
int config_failures(const struct config *c);

void config_free(struct config *c);

#endif
