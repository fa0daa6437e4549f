/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sysctl_conf.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static char *strip(char *s)
{
	char *end;

	while (is_blank(*s))
		s++;
	end = s + strlen(s);
	while (end > s && is_blank(end[-1]))
		*--end = '\0';
	return s;
}

void sysctl_conf_normalize_key(char *key)
{
	char *first = strpbrk(key, "./");

	if (!first || *first == '/')
		return;
	for (char *p = first; *p; p++) {
		if (*p == '.')
			*p = '/';
		else if (*p == '/')
			*p = '.';
	}
}

/* Parses one NUL-terminated line (modified in place). */
static int parse_line(char *line, unsigned lineno, sysctl_conf_item_fn *on_item,
		      sysctl_conf_error_fn *on_error, void *arg, int *errors)
{
	struct sysctl_conf_item item = { .line = lineno };
	char *eq, *key;

	line = strip(line);
	if (*line == '\0' || *line == '#' || *line == ';')
		return 0;
	eq = strchr(line, '=');
	if (!eq) {
		(*errors)++;
		if (on_error)
			on_error(lineno, "line is not an assignment", arg);
		return 0;
	}
	*eq = '\0';
	key = strip(line);
	if (*key == '-') {
		item.ignore_failure = true;
		key = strip(key + 1);
	}
	if (*key == '\0') {
		(*errors)++;
		if (on_error)
			on_error(lineno, "empty key", arg);
		return 0;
	}
	sysctl_conf_normalize_key(key);
	item.key = key;
	item.value = strip(eq + 1);
	item.glob = strpbrk(key, "*?[") != NULL;
	return on_item ? on_item(&item, arg) : 0;
}

int sysctl_conf_parse(const char *text, size_t len, sysctl_conf_item_fn *on_item,
		      sysctl_conf_error_fn *on_error, void *arg)
{
	char *line = malloc(SYSCTL_CONF_LINE_MAX + 1);
	unsigned lineno = 0;
	int errors = 0, ret = 0;
	size_t pos = 0;

	if (!line)
		return -ENOMEM;
	while (pos < len && ret == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = (nl ? (size_t)(nl - text) : len) - pos;

		lineno++;
		if (n > SYSCTL_CONF_LINE_MAX || memchr(text + pos, '\0', n)) {
			errors++;
			if (on_error)
				on_error(lineno, n > SYSCTL_CONF_LINE_MAX ? "line too long" : "NUL byte in line", arg);
		} else {
			memcpy(line, text + pos, n);
			line[n] = '\0';
			ret = parse_line(line, lineno, on_item, on_error, arg, &errors);
		}
		pos += n + 1;
	}
	free(line);
	return ret ? ret : errors;
}
