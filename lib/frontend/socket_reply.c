/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A control socket reply: built whole in the connection's buffer, then sent
 * in one go within a deadline (rcustring-socket(7)'s "ERR" lines included);
 * and what the verbs share before and while replying: an entry opened for
 * the peer (or the error reply), whether a watching peer is gone or stuck.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "common/deadline.h"
#include "socket_conn.h"
#include "socket_proto.h"

/*
 * Send @len bytes by @deadline. Non-blocking sends with poll() in between:
 * SO_SNDTIMEO restarts on every partial send, so a client reading a byte
 * now and then would hold the thread for ever.
 */
static int send_by(int fd, const char *buf, size_t len, int64_t deadline)
{
	size_t off = 0;

	while (off < len) {
		/* MSG_NOSIGNAL: a client gone mid-reply gives EPIPE, not SIGPIPE. */
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int left;

		if (n >= 0) {
			off += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		left = rcs_ms_left(deadline);
		if (left == 0)
			return -ETIMEDOUT;
		/* stop's shutdown() wakes this (POLLHUP, then EPIPE). */
		if (poll(&p, 1, left) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

static void out_reserve(struct conn *c, size_t more)
{
	size_t cap;
	char *p;

	if (c->out_err || c->out_len + more <= c->out_cap)
		return;
	cap = c->out_cap ? c->out_cap : 1024;
	while (cap < c->out_len + more)
		cap *= 2;
	p = realloc(c->out, cap);
	if (!p) {
		c->out_err = -ENOMEM;
		return;
	}
	c->out = p;
	c->out_cap = cap;
}

void sock_out_add(struct conn *c, const char *s, size_t len)
{
	out_reserve(c, len);
	if (c->out_err)
		return;
	memcpy(c->out + c->out_len, s, len);
	c->out_len += len;
}

void sock_out_fmt(struct conn *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		sock_out_add(c, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void sock_out_escaped(struct conn *c, const char *s, size_t len, bool spaces)
{
	size_t need = sock_escape(s, len, NULL, 0, spaces);

	out_reserve(c, need + 1);
	if (c->out_err)
		return;
	sock_escape(s, len, c->out + c->out_len, need + 1, spaces);
	c->out_len += need;
}

/* What socket_conn.h says; the reply is replaced by an error line on ENOMEM. */
int sock_out_flush(struct conn *c)
{
	int64_t deadline = rcs_now_ms() + c->server->opt.read_timeout_ms;
	int err;

	if (c->out_err) {
		/* Out of memory mid-reply: what was built may be cut; say so instead. */
		static const char msg[] = "ERR 12 ENOMEM out of memory building the reply\n";

		c->out_err = 0;
		c->out_len = 0;
		sock_out_add(c, msg, sizeof(msg) - 1);
		if (c->out_err) {
			c->out_err = 0;
			return send_by(c->fd, msg, sizeof(msg) - 1, deadline);
		}
	}
	err = send_by(c->fd, c->out, c->out_len, deadline);
	c->out_len = 0;
	return err;
}

/* "ERR <n> <NAME> <path>: <message>\n" */
void sock_reply_err(struct conn *c, int err, const char *path, size_t path_len, const char *fmt,
		    ...)
{
	char name[16], msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sock_out_fmt(c, "ERR %d %s ", -err, sock_errname(-err, name, sizeof(name)));
	if (path) {
		sock_out_escaped(c, path, path_len, true);
		sock_out_add(c, ": ", 2);
	}
	sock_out_escaped(c, msg, strlen(msg), false);
	sock_out_add(c, "\n", 1);
}

/*
 * An error from the tree for @path, with the limits where they help. The
 * limits come from sysctl_entry_explain(), which reads the registrant's
 * table while it is held registered: another client may unregister it and
 * free it meanwhile.
 */
void sock_tree_why(struct conn *c, int err, const char *path, char *why, size_t size)
{
	if (err == -EMSGSIZE || err == -EINVAL) {
		struct sysctl_entry *e = sysctl_lookup(c->server->tree, path);

		if (!e && err == -EINVAL) {
			snprintf(why, size, "malformed path");
			return;
		}
		if (!e || sysctl_entry_explain(e, err, why, size) < 0)
			snprintf(why, size, "%s", err == -EINVAL ? "invalid value" : strerror(-err));
		sysctl_entry_put(e);
		return;
	}
	snprintf(why, size, "%s", strerror(-err));
}

void sock_reply_tree_err(struct conn *c, int err, const char *path)
{
	char why[128];

	sock_tree_why(c, err, path, why, sizeof(why));
	sock_reply_err(c, err, path, strlen(path), "%s", why);
}

/* Look @path up and check @mask for the peer; on error the reply is built. */
struct sysctl_entry *sock_open_entry(struct conn *c, const char *path, int mask)
{
	struct sysctl_entry *e = sysctl_lookup(c->server->tree, path);
	int err;

	if (!e) {
		sock_reply_tree_err(c, -errno, path);
		return NULL;
	}
	err = sysctl_entry_is_dir(e) ? -EISDIR : sysctl_access(e, &c->who, mask);
	if (err) {
		sock_reply_err(c, err, path, strlen(path), "%s",
			  err == -EACCES ? "permission denied" : strerror(-err));
		sysctl_entry_put(e);
		return NULL;
	}
	return e;
}

/* Whether the peer hung up (or sent bytes, which a watch ignores). */
static bool peer_gone(struct conn *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };
	char sink[512];

	while (poll(&p, 1, 0) > 0) {
		ssize_t n;

		if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
			return true;
		n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return true;
		if (n < 0)
			break;
	}
	return false;
}

/* Whether bytes sent to the peer still wait to be read (SIOCOUTQ). */
static bool peer_has_unread(struct conn *c)
{
	int queued = 0;

	/* Where the ioctl fails we cannot tell: count the peer as reading. */
	return ioctl(c->fd, SIOCOUTQ, &queued) == 0 && queued > 0;
}

int sock_watch_idle(struct conn *c, int64_t *last_sent, const uint64_t *seen)
{
	int ret;

	if (peer_gone(c))
		return 1;
	if (rcs_now_ms() - *last_sent < c->server->opt.watch_keepalive_ms)
		return 0;
	/*
	 * Liveness: nothing was sent for a whole interval, so a byte still
	 * unread now has waited at least that long. The watcher is stuck (or
	 * passed the socket on and never reads): drop it. A busy watch needs
	 * no such check: its lines fill the socket and the send deadline
	 * drops it.
	 */
	if (peer_has_unread(c))
		return 1;
	if (seen)
		sock_out_fmt(c, "ALIVE %" PRIu64 "\n", *seen);
	else
		sock_out_add(c, "ALIVE\n", 6);
	ret = sock_out_flush(c);
	*last_sent = rcs_now_ms();
	return ret;
}
