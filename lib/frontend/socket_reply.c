/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A control socket reply: built in the connection's buffer and sent in
 * pieces of at most SOCK_PIECE bytes, each within a deadline
 * (rcustring-socket(7)'s "ERR" lines included);
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

void sock_held_note(struct conn *c)
{
	size_t held = c->out_cap + c->val_cap;

	__atomic_store_n(&c->held, held, __ATOMIC_RELAXED);
	if (held > c->held_peak)
		__atomic_store_n(&c->held_peak, held, __ATOMIC_RELAXED);
}

/*
 * Send the piece built so far; a failure ends the reply (c->send_err).
 * The pieces of one reply share one read timeout of waiting for the peer
 * (the time spent building them is not the peer's): a client reading a
 * little now and then gains nothing from the reply going in pieces.
 */
static int out_send_piece(struct conn *c)
{
	int64_t t0 = rcs_now_ms();
	int err = send_by(c->fd, c->out, c->out_len,
			  t0 + c->server->opt.read_timeout_ms - c->send_waited);

	c->send_waited += rcs_now_ms() - t0;
	c->out_len = 0;
	if (err)
		c->send_err = err;
	return err;
}

/* A buffer of at least @need (at most SOCK_PIECE) bytes. */
static bool out_grow(struct conn *c, size_t need)
{
	size_t cap;
	char *p;

	if (need <= c->out_cap)
		return true;
	cap = c->out_cap ? c->out_cap : 1024;
	while (cap < need)
		cap *= 2;
	p = realloc(c->out, cap);
	if (!p) {
		c->out_err = -ENOMEM;
		return false;
	}
	c->out = p;
	c->out_cap = cap;
	sock_held_note(c);
	return true;
}

/*
 * Room for @more (at most SOCK_PIECE) bytes: the piece built so far goes
 * first when they would take it past SOCK_PIECE, so the buffer never
 * grows past one piece. The buffer is a whole piece before one is sent:
 * past that no allocation of the reply can fail and cut a line sent in part.
 */
static bool out_room(struct conn *c, size_t more)
{
	if (sock_out_failed(c))
		return false;
	if (c->out_len + more > SOCK_PIECE && c->out_len &&
	    (!out_grow(c, SOCK_PIECE) || out_send_piece(c)))
		return false;
	return out_grow(c, c->out_len + more);
}

void sock_out_add(struct conn *c, const char *s, size_t len)
{
	while (len) {
		size_t take = len < SOCK_PIECE ? len : SOCK_PIECE;

		if (!out_room(c, take))
			return;
		memcpy(c->out + c->out_len, s, take);
		c->out_len += take;
		s += take;
		len -= take;
	}
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

/*
 * Escaped text longer than a piece (a value of up to 1 MiB is up to 4 MiB
 * escaped) is escaped straight into the buffer a piece at a time.
 */
void sock_out_escaped(struct conn *c, const char *s, size_t len, bool spaces)
{
	size_t need = sock_escape(s, len, NULL, 0, spaces);

	if (c->out_len + need + 1 <= SOCK_PIECE) {
		if (!out_room(c, need + 1))
			return;
		sock_escape(s, len, c->out + c->out_len, need + 1, spaces);
		c->out_len += need;
		return;
	}
	while (len) {
		size_t used = 0;

		/* The whole piece's room (no send: it ends at SOCK_PIECE exactly). */
		if (!out_room(c, SOCK_PIECE - c->out_len))
			return;
		c->out_len += sock_escape_fit(s, len, c->out + c->out_len, SOCK_PIECE - c->out_len,
					      spaces, &used);
		s += used;
		len -= used;
		if (len && out_send_piece(c))
			return;
	}
}

/* What socket_conn.h says; the reply is replaced by an error line on ENOMEM. */
int sock_out_flush(struct conn *c)
{
	int err;

	if (c->send_err) {
		c->out_len = 0;
		return c->send_err;
	}
	if (c->out_err) {
		/* Out of memory mid-reply: what was built may be cut; say so instead. */
		static const char msg[] = "ERR 12 ENOMEM out of memory building the reply\n";

		c->out_err = 0;
		c->out_len = 0;
		sock_out_add(c, msg, sizeof(msg) - 1);
		if (c->out_err) {
			c->out_err = 0;
			c->send_waited = 0;
			return send_by(c->fd, msg, sizeof(msg) - 1,
				       rcs_now_ms() + c->server->opt.read_timeout_ms);
		}
	}
	err = c->out_len ? out_send_piece(c) : 0;
	c->send_waited = 0; /* the next reply's own timeout */
	return err;
}

void sock_out_trim(struct conn *c)
{
	if (c->out_cap > SOCK_KEEP && !c->out_len) {
		free(c->out);
		c->out = NULL;
		c->out_cap = 0;
	}
	if (c->val_cap > SOCK_KEEP) {
		free(c->val);
		c->val = NULL;
		c->val_cap = 0;
	}
	sock_held_note(c);
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
