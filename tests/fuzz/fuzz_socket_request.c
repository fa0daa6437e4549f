/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the control socket's request parser and escaping on any bytes.
 * Invariants: no crash; a parsed request points inside the line, its path
 * holds no space or control byte, a SET, APPLY or SETIF value is the rest of
 * the line; the escape of any bytes is one line and unescapes back to them;
 * reply lines classify without reading past their end.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl_socket.h"
#include "../../lib/frontend/socket_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line = (const char *)data;
	struct sock_request req;
	struct sock_reply rep;
	const char *why;
	char *esc, *back;
	size_t n;
	int ret = sock_parse_request(line, size, &req, &why);

	if (ret) {
		if (!why || (ret != -EINVAL && ret != -E2BIG))
			abort();
		if ((ret == -E2BIG) != (size + 1 > SYSCTL_SOCKET_LINE_MAX))
			abort();
	} else {
		if (req.path_len) {
			if (req.path < line || req.path + req.path_len > line + size)
				abort();
			for (size_t i = 0; i < req.path_len; i++)
				if ((unsigned char)req.path[i] <= ' ' || req.path[i] == 0x7f)
					abort();
		}
		/* The verbs that carry a value end with it: SET, APPLY, SETIF. */
		bool valued = req.verb == SOCK_SET || req.verb == SOCK_APPLY || req.verb == SOCK_SETIF;

		if (valued && (!req.value || req.value + req.value_len != line + size))
			abort();
		if (!valued && req.value)
			abort();
	}

	for (int spaces = 0; spaces < 2; spaces++) {
		n = sock_escape(line, size, NULL, 0, spaces);
		esc = malloc(n + 1);
		back = malloc(n + 1);
		if (!esc || !back)
			abort();
		if (sock_escape(line, size, esc, n + 1, spaces) != n || strlen(esc) != n ||
		    memchr(esc, '\n', n) || (spaces && memchr(esc, ' ', n)))
			abort();
		if (sock_unescape(esc, n, back) != (long)size || memcmp(back, line, size) != 0)
			abort();
		free(esc);
		free(back);
	}
	/* Unescaping arbitrary text fails cleanly or yields no more bytes than it read. */
	back = malloc(size + 1);
	if (!back)
		abort();
	if (sock_unescape(line, size, back) > (long)size)
		abort();
	free(back);
	if (sock_parse_reply(line, size, &rep) == 0 && rep.text &&
	    (rep.text < line || rep.text + rep.text_len > line + size))
		abort();
	return 0;
}
