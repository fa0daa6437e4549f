/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small blocking control-socket client (see socket_client.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rcustring/sysctl_commit.h"
#include "rcustring/sysctl_socket.h"
#include "socket_client.h"

struct sock_client {
	int fd;
	char *buf; /* received bytes */
	size_t len, cap;
	size_t consumed; /* bytes of buf handed out as the last line */
	char line[SYSCTL_SOCKET_LINE_MAX];
};

int sock_client_connect(const char *path, struct sock_client **out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sock_client *c;
	int err;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		err = -errno;
		free(c);
		return err;
	}
	if (connect(c->fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		err = -errno;
		close(c->fd);
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

void sock_client_close(struct sock_client *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c->buf);
	free(c);
}

int sock_client_fd(const struct sock_client *c)
{
	return c->fd;
}

/* Send @len bytes whole (MSG_NOSIGNAL: a closed server is an error, not a signal). */
static int send_all(int fd, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t k = send(fd, buf + off, len - off, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)k;
	}
	return 0;
}

int sock_client_send(struct sock_client *c, const char *verb, const char *path,
		     const char *value, size_t value_len)
{
	size_t vl = strlen(verb), pl = path ? strlen(path) : 0, n = 0;

	if ((path && (memchr(path, '\n', pl) || memchr(path, ' ', pl))) ||
	    (value && memchr(value, '\n', value_len)))
		return -EINVAL;
	if (vl + 1 + pl + 1 + value_len + 1 > sizeof(c->line))
		return -E2BIG;
	memcpy(c->line, verb, vl);
	n = vl;
	if (path) {
		c->line[n++] = ' ';
		memcpy(c->line + n, path, pl);
		n += pl;
	}
	if (value) {
		c->line[n++] = ' ';
		memcpy(c->line + n, value, value_len);
		n += value_len;
	}
	c->line[n++] = '\n';
	return send_all(c->fd, c->line, n);
}

int sock_client_reply(struct sock_client *c, struct sock_reply *r)
{
	char *nl;

	/* Drop the line handed out last time. */
	if (c->consumed) {
		memmove(c->buf, c->buf + c->consumed, c->len - c->consumed);
		c->len -= c->consumed;
		c->consumed = 0;
	}
	while (!(nl = c->len ? memchr(c->buf, '\n', c->len) : NULL)) {
		ssize_t k;

		if (c->len == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 8192;
			char *p = realloc(c->buf, cap);

			if (!p)
				return -ENOMEM;
			c->buf = p;
			c->cap = cap;
		}
		k = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (k == 0)
			return -ECONNRESET;
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c->len += (size_t)k;
	}
	c->consumed = (size_t)(nl - c->buf) + 1;
	return sock_parse_reply(c->buf, (size_t)(nl - c->buf), r) ? -EPROTO : 0;
}

/*
 * The reply to the request just sent (@sent: the send's error, returned
 * as it is): 0 for OK, the ERR's negative errno, -EPROTO for a DATA line.
 * Where @text is set it gets the reply's text unescaped (NULL: none):
 * a value, where one that does not unescape is -EPROTO and no memory
 * -ENOMEM; or, with @msg, an ERR's message only, kept as it came where it
 * does not unescape and left out where there is no memory for it (the
 * reply's errno is what counts).
 */
static int await_reply(struct sock_client *c, int sent, char **text, bool msg)
{
	struct sock_reply r;
	int err = sent ? sent : sock_client_reply(c, &r);
	char *t;

	if (text)
		*text = NULL;
	if (err)
		return err;
	if (r.kind == SOCK_REPLY_DATA)
		return -EPROTO;
	if (text && (!msg || r.kind == SOCK_REPLY_ERR)) {
		t = malloc(r.text_len + 1);
		if (!t && !msg)
			return -ENOMEM;
		if (t && sock_unescape(r.text, r.text_len, t) < 0) {
			if (!msg) {
				free(t);
				return -EPROTO;
			}
			snprintf(t, r.text_len + 1, "%.*s", (int)r.text_len, r.text);
		}
		*text = t;
	}
	return r.kind == SOCK_REPLY_OK ? 0 : r.err;
}

int sock_client_call(struct sock_client *c, const char *verb, const char *path,
		     const char *value, size_t value_len, char **value_out)
{
	return await_reply(c, sock_client_send(c, verb, path, value, value_len), value_out, false);
}

/* "<path> <value>\n" of one item at @out (room checked by the caller). */
static size_t put_item(char *out, const char *path, size_t pl, const char *value, size_t vl)
{
	memcpy(out, path, pl);
	out[pl] = ' ';
	memcpy(out + pl + 1, value, vl);
	out[pl + 1 + vl] = '\n';
	return pl + vl + 2;
}

/* The whole request, header and item lines, sent in one go. */
static int send_mset(struct sock_client *c, bool apply, const char *const *paths,
		     const char *const *values, size_t n)
{
	size_t total = 32, len;
	char *buf;
	int err;

	if (!n || n > SYSCTL_COMMIT_MAX)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		size_t pl = strlen(paths[i]), vl = strlen(values[i]);

		if (!pl || strpbrk(paths[i], " \n") || memchr(values[i], '\n', vl))
			return -EINVAL;
		if (pl + 1 + vl + 1 > SYSCTL_SOCKET_LINE_MAX)
			return -E2BIG;
		total += pl + vl + 2;
	}
	buf = malloc(total);
	if (!buf)
		return -ENOMEM;
	len = (size_t)snprintf(buf, total, "%s %zu\n", apply ? "MAPPLY" : "MSET", n);
	for (size_t i = 0; i < n; i++)
		len += put_item(buf + len, paths[i], strlen(paths[i]), values[i], strlen(values[i]));
	err = send_all(c->fd, buf, len);
	free(buf);
	return err;
}

int sock_client_mset(struct sock_client *c, bool apply, const char *const *paths,
		     const char *const *values, size_t n, char **msg_out)
{
	return await_reply(c, send_mset(c, apply, paths, values, n), msg_out, true);
}
