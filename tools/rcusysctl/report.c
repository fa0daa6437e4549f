/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl --status and --metrics (report.h). Each reply line is
 * "STATUS <key> <value>" or "METRIC <line>", escaped as every reply line
 * is (rcustring-socket(7)); the lines are unescaped and printed as they
 * come, the status as "key: value" (or one JSON object, numbers as
 * numbers), the metrics unchanged, so a scraper reads them as the
 * Prometheus text format.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "report.h"
#include "socket_client.h"
#include "socket_proto.h"
#include "socktree.h"

/* "key value" into @o (a whole number as a number) or printed as "key: value". */
static void status_line(char *line, struct json_object *o)
{
	char *sp = strchr(line, ' '), *end;
	long long n;

	if (sp)
		*sp++ = '\0';
	if (!o) {
		printf("%s: %s\n", line, sp ? sp : "");
		return;
	}
	errno = 0;
	n = sp && *sp ? strtoll(sp, &end, 10) : 0;
	if (sp && *sp && !*end && !errno)
		json_obj_int(o, line, n);
	else
		json_obj_str(o, line, sp ? sp : "");
}

static int print_line(const struct sock_reply *r, bool metrics, struct json_object *o)
{
	const char *prefix = metrics ? "METRIC " : "STATUS ";
	size_t plen = strlen(prefix);
	char *line;
	long len;

	if (r->text_len < plen || memcmp(r->text, prefix, plen) != 0)
		return -EPROTO;
	line = malloc(r->text_len - plen + 1);
	if (!line)
		return -ENOMEM;
	len = sock_unescape(r->text + plen, r->text_len - plen, line);
	if (len < 0) {
		free(line);
		return (int)len;
	}
	if (metrics)
		printf("%s\n", line);
	else
		status_line(line, o);
	free(line);
	return 0;
}

int report_print(const char *verb, bool json)
{
	struct sock_client *c = socktree_client();
	bool metrics = strcmp(verb, "METRICS") == 0;
	struct json_object *o = json && !metrics ? json_obj_new() : NULL;
	int err = sock_client_send(c, verb, NULL, NULL, 0);
	const char *what = metrics ? "metrics" : "status";

	while (!err) {
		struct sock_reply r;

		err = sock_client_reply(c, &r);
		if (err || r.kind == SOCK_REPLY_OK)
			break;
		if (r.kind == SOCK_REPLY_ERR) {
			fprintf(stderr, "rcusysctl: %s: %.*s\n", what, (int)r.text_len, r.text);
			return 1;
		}
		err = print_line(&r, metrics, o);
	}
	if (err) {
		fprintf(stderr, "rcusysctl: %s: %s%s\n", what, strerror(-err),
			err == -EINVAL || err == -EPROTO ? " (does this rcusysd know the request?)" : "");
		return 1;
	}
	if (o)
		json_obj_print_line(o);
	return fflush(stdout) == 0 ? 0 : 1;
}
