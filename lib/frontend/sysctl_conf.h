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

struct sysctl_conf_item {
	const char *key;     /* '/'-separated, '.' literal (see sysctl_conf_normalize_key) */
	const char *value;   /* surrounding whitespace stripped; may be empty */
	bool ignore_failure; /* the key had a leading '-' */
	bool glob;           /* the key holds * ? or [ */
	unsigned line;       /* 1-based */
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

#endif
