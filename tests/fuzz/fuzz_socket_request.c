/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the control socket's request parser and escaping on any bytes.
 * Invariants: no crash; a parsed request points inside the line, its path
 * holds no space or control byte, a SET, APPLY or SETIF value is the rest of
 * the line; the escape of any bytes is one line and unescapes back to them;
 * reply lines classify without reading past their end. Input with line
 * feeds is also read as a multi-line request: an MSET or MAPPLY header and
 * its item lines (each a path and a value ending the line), or an MGET or
 * MWATCH whose paths, walked, are as many as counted and lie in the line.
 * Escaping in pieces (sock_escape_fit(), as long replies are sent) joins
 * into the escape of the whole.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl_commit.h"
#include "rcustring/sysctl_socket.h"
#include "../../lib/frontend/socket_proto.h"

/* A path token: inside [@lo, @hi), no space or control byte. */
static void check_path(const char *p, size_t len, const char *lo, const char *hi)
{
	if (!len || p < lo || p + len > hi)
		abort();
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] <= ' ' || p[i] == 0x7f)
			abort();
}

/* The lines of @data as one request: a header, then its item lines. */
static void multi_line(const char *data, size_t size)
{
	const char *end = data + size, *nl = memchr(data, '\n', size), *line, *p;
	struct sock_request req;
	const char *why;
	size_t left, plen, n = 0;

	if (!nl || sock_parse_request(data, (size_t)(nl - data), &req, &why))
		return;
	if (req.verb == SOCK_MGET || req.verb == SOCK_MWATCH) {
		if (req.count < 1 || req.count > SYSCTL_COMMIT_MAX)
			abort();
		for (p = req.list, left = req.list_len; sock_next_path(&p, &left, &line, &plen); n++)
			check_path(line, plen, data, nl);
		if (n != req.count)
			abort();
		return;
	}
	if (req.verb != SOCK_MSET && req.verb != SOCK_MAPPLY)
		return;
	if (req.count < 1 || req.count > SYSCTL_COMMIT_MAX)
		abort();
	for (line = nl + 1; n < req.count && line < end; n++) {
		const char *stop = memchr(line, '\n', (size_t)(end - line));
		size_t len = stop ? (size_t)(stop - line) : (size_t)(end - line);
		struct sock_item it;
		int ret = sock_parse_item(line, len, &it, &why);

		if (ret && (!why || (ret != -EINVAL && ret != -E2BIG)))
			abort();
		if (!ret) {
			check_path(it.path, it.path_len, line, line + len);
			if (!it.value || it.value + it.value_len != line + len)
				abort();
		}
		line += len + 1;
	}
}

/*
 * The escape of @in written in pieces of rooms 1, 2, ... 7 bytes, as a
 * reply sent in pieces writes a long value: the pieces join into @esc (@n
 * bytes, sock_escape()'s text), no piece past its room, and a piece takes
 * no input only when the next byte's escape does not fit.
 */
static void escape_in_pieces(const char *in, size_t len, const char *esc, size_t n, bool spaces)
{
	char piece[8];
	size_t at = 0, done = 0, room = 1;

	while (done < len) {
		size_t used = 0, w = sock_escape_fit(in + done, len - done, piece, room, spaces, &used);

		if (w > room || at + w > n || memcmp(esc + at, piece, w) != 0 || (!used && room >= 4))
			abort();
		at += w;
		done += used;
		room = room % 7 + 1;
	}
	if (at != n)
		abort();
}

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
		escape_in_pieces(line, size, esc, n, spaces);
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
	multi_line(line, size);
	return 0;
}
