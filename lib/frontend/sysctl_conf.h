/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysctl.d file format (systemd sysctl.d(5), procps sysctl.conf(5)), shared
 * by rcusysctl -p/--system and rcusysd's start-up files. Internal to the
 * project's tools (linked from the static library).
 */
#ifndef RCUSTRING_LIB_SYSCTL_CONF_H
#define RCUSTRING_LIB_SYSCTL_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sysctl_conf_item {
	const char *key;     /* '/'-separated, '.' literal (see sysctl_conf_normalize_key) */
	const char *value;   /* surrounding whitespace stripped; may be empty */
	bool ignore_failure; /* the key had a leading '-' */
	bool glob;           /* the key holds * ? or [ */
	unsigned line;       /* 1-based */
	const char *file;    /* in a set: the file it came from; NULL from sysctl_conf_parse() */
};

/* Called per assignment; a non-zero return stops the parse and is returned. */
typedef int sysctl_conf_item_fn(const struct sysctl_conf_item *item, void *arg);
/* Called per malformed line; parsing goes on. */
typedef void sysctl_conf_error_fn(unsigned line, const char *message, void *arg);

/**
 * sysctl_conf_normalize_key - rewrite @key in place to '/' form
 *
 * systemd's rule: when the first separator is '.', dots and slashes are
 * swapped ("net.ipv4.conf.eth0/200.x" -> "net/ipv4/conf/eth0.200/x"); when
 * it is '/', the key is kept as it is.
 */
void sysctl_conf_normalize_key(char *key);

/**
 * sysctl_conf_dotted - @key ('/' form) as procps and rcusysctl print it
 *
 * "app/limit" -> "app.limit", "net/conf/eth0.200/x" -> "net.conf.eth0/200.x":
 * the first separator is a '.', so it reads back as the same key
 * (sysctl_conf_normalize_key()). When the first component holds a '.'
 * ("vlan.d/x"), the dotted form would start with a '/' separator and read
 * back as another key (procps -a prints such names and cannot read them
 * back): then the '/' form with a leading '/' ("/vlan.d/x"), which procps,
 * systemd-sysctl and rcusysctl read as written. Cut to @size (NUL
 * included). Returns @buf.
 */
const char *sysctl_conf_dotted(const char *key, char *buf, size_t size);

/**
 * sysctl_conf_parse - parse @len bytes of sysctl.d text
 *
 * Blank lines and lines whose first non-blank is '#' or ';' are comments.
 * Other lines are "key = value"; a line without '=' or with an empty key
 * goes to @on_error. Lines longer than SYSCTL_CONF_LINE_MAX are errors.
 * Return: the number of malformed lines (>= 0), a negative errno (-ENOMEM),
 * or @on_item's non-zero value.
 */
/* A key (up to 1 KiB) and the longest string value a tunable holds (64 KiB). */
#define SYSCTL_CONF_LINE_MAX (65536 + 1024)
int sysctl_conf_parse(const char *text, size_t len, sysctl_conf_item_fn *on_item,
		      sysctl_conf_error_fn *on_error, void *arg);

/*
 * A set of sysctl.d files merged as systemd-sysctl merges them: a later
 * assignment of the same key (or the same glob) replaces the earlier one,
 * and an explicit key beats every glob that matches it, wherever the glob
 * stands (procps' sysctl -p and systemd-sysctl both leave "a.b = 1" before
 * "a.* = 2" at 1). Keys are held in '/' form without a leading '/'. Keys
 * are indexed: adding a line and looking a key up cost O(1) with the
 * globs' count added to a lookup.
 */
struct sysctl_conf_set;

struct sysctl_conf_set *sysctl_conf_set_new(void);
void sysctl_conf_set_free(struct sysctl_conf_set *s);

/*
 * Parses @len bytes of @text, the contents of @file (kept for messages),
 * into @s. Malformed lines go to @on_error. Return: the number of
 * malformed lines, -ENOMEM, or -EINTR when the set's stop
 * (sysctl_conf_set_stop()) said so: @s then holds part of @file, for the
 * caller to free.
 */
int sysctl_conf_set_add(struct sysctl_conf_set *s, const char *file, const char *text, size_t len,
			sysctl_conf_error_fn *on_error, void *arg);

/* The assignments in the order a merge leaves them. */
size_t sysctl_conf_set_count(const struct sysctl_conf_set *s);
const struct sysctl_conf_item *sysctl_conf_set_item(const struct sysctl_conf_set *s, size_t i);

/*
 * The assignment that decides @key ('/' form): its explicit one, else the
 * last glob that matches it (fnmatch with FNM_PATHNAME), else NULL.
 */
const struct sysctl_conf_item *sysctl_conf_set_lookup(const struct sysctl_conf_set *s,
						       const char *key);

/*
 * For tests: from now on add the keys @s compares (adding lines and
 * looking keys up) to *@counter (NULL: stop), so a test counts operations
 * instead of timing them. Context: no other call on @s running.
 */
void sysctl_conf_set_count_probes(struct sysctl_conf_set *s, unsigned long *counter);

/*
 * Asked every SYSCTL_CONF_STOP_EVERY lines while sysctl_conf_set_add()
 * parses @file, with the line reached: true ends that parse with -EINTR.
 * So that a caller about to exit need not wait for a file of 100 000
 * lines (about 0.1 s, more on a loaded machine), and a test can pause a
 * parse part way. Context: called in the thread of sysctl_conf_set_add().
 */
#define SYSCTL_CONF_STOP_EVERY 256
typedef bool sysctl_conf_stop_fn(void *arg, const char *file, unsigned line);

/*
 * Asks @stop (NULL: nothing) with @arg during every later
 * sysctl_conf_set_add() on @s. Context: no other call on @s running.
 */
void sysctl_conf_set_stop(struct sysctl_conf_set *s, sysctl_conf_stop_fn *stop, void *arg);

/*
 * The *.conf files of @dirs (':'-separated, most important first), merged
 * by file name as systemd-sysctl merges /etc, /run and /usr/lib: the first
 * directory holding a name wins, and the result is sorted by name.
 * Missing directories are skipped. *@paths (each "DIR/NAME") is freed with
 * sysctl_conf_free_paths(). Return: the count, or -ENOMEM.
 */
ssize_t sysctl_conf_list_dirs(const char *dirs, char ***paths);
void sysctl_conf_free_paths(char **paths, size_t count);

#endif
