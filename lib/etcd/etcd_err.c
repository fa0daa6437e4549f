/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A connection's error text (etcd_http.h, etcd_set_err): where etcd's own
 * error, a gateway's reply or a watch's cancel reason comes in, and so the
 * one place it is cleaned of the connection's credentials and escaped
 * before anyone stores, logs or serves it. A file of its own so that the
 * client (etcd_http.c) and the reply decoder (etcd_json.c) both use it
 * without reaching into each other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/text_escape.h"
#include "etcd_http.h"

/* Each copy of @secret in @s replaced by "***", in place. */
static void hide(char *s, const char *secret)
{
	size_t n = strlen(secret);

	for (char *p = n ? strstr(s, secret) : NULL; p; p = strstr(p + 3, secret)) {
		memmove(p + 3, p + n, strlen(p + n) + 1);
		memcpy(p, "***", 3);
	}
}

/*
 * The one writer of @c->err, where text from outside comes in (etcd's own
 * error, a gateway's, a watch's cancel reason): a gateway that echoes the
 * request's Authorization header must not put the credentials where other
 * users read them (the log, STATUS, rcusysd.etcd.last_error), so
 * "user:password", the password and its HTTP basic (base64) form are
 * hidden, then the text is escaped (common/text_escape.h).
 */
void etcd_set_err(struct etcd_conn *c, const char *fmt, const char *detail)
{
	char raw[4096], *b64 = NULL;
	const char *pass = c->userpwd ? strchr(c->userpwd, ':') : NULL;

	snprintf(raw, sizeof(raw), fmt, detail ? detail : "");
	if (c->userpwd) {
		if (etcd_b64_encode(c->userpwd, strlen(c->userpwd), &b64))
			snprintf(raw, sizeof(raw), "%s", "(error text withheld: out of memory)");
		else
			hide(raw, b64);
		if (pass) /* the password alone first: the user may stay, for diagnosis */
			hide(raw, pass + 1);
		hide(raw, c->userpwd);
		free(b64);
	}
	rcs_text_escape(c->err, sizeof(c->err), raw, strlen(raw));
	explicit_bzero(raw, sizeof(raw));
}
