/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Control socket server (rcustring-socket(7)): one accepting thread, one
 * thread per connection (bounded: in all, per uid, with slots kept for
 * root), I/O bounded by deadlines (a whole request line, a whole reply).
 *
 * A connection's fd is closed only when its thread is joined (by the
 * accepting thread or by stop), never by the thread itself: stop may call
 * shutdown() on any fd in the list at any time, and a closed-then-reused
 * fd number would hit somebody else's file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "common/deadline.h"
#include "common/unix_listen.h"
#include "rcustring/sysctl_socket.h"
#include "socket_proto.h"

#define WATCH_SLICE_MS 200 /* how often a watcher checks for stop and hang-up */
#define VALUE_START 4096
#define VALUE_MAX (1 << 20) /* GET replies larger than this: -EFBIG */
#define AUDIT_BATCH 32

struct conn {
	struct sysctl_socket *server;
	struct conn *next;
	pthread_t thread;
	int fd;
	int done; /* atomic: the thread has finished; set under the server's lock */
	bool watching; /* in WATCH; under the server's lock */
	struct sysctl_caller who;
	/* Input: bytes received, not yet consumed. */
	char in[SYSCTL_SOCKET_LINE_MAX];
	size_t in_len;
	int64_t line_deadline; /* ms: when the started line must be whole; 0: none started */
	/* Output: one reply is built here, then sent in one go. */
	char *out;
	size_t out_len, out_cap;
	int out_err;   /* -ENOMEM while building */
	char *val;     /* value / escape scratch */
	size_t val_cap;
};

struct sysctl_socket {
	struct sysctl_tree *tree;
	char *path;
	dev_t dev;
	ino_t ino;
	int listen_fd;
	int wake[2]; /* stop writes here to wake the accepting thread */
	int stop;    /* atomic */
	struct sysctl_socket_options opt;
	pthread_t acceptor;
	pthread_mutex_t lock; /* conns list */
	struct conn *conns;
	unsigned nconns; /* not yet finished */
};

static bool stopping(struct sysctl_socket *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

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

/* ---- output ---- */

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

static void out_add(struct conn *c, const char *s, size_t len)
{
	out_reserve(c, len);
	if (c->out_err)
		return;
	memcpy(c->out + c->out_len, s, len);
	c->out_len += len;
}

static void out_fmt(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_fmt(struct conn *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_add(c, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void out_escaped(struct conn *c, const char *s, size_t len, bool spaces)
{
	size_t need = sock_escape(s, len, NULL, 0, spaces);

	out_reserve(c, need + 1);
	if (c->out_err)
		return;
	sock_escape(s, len, c->out + c->out_len, need + 1, spaces);
	c->out_len += need;
}

/*
 * Send the reply built so far, whole within the read timeout. Return 0 or
 * -errno (the peer is gone or does not read: end the connection).
 */
static int out_flush(struct conn *c)
{
	int64_t deadline = rcs_now_ms() + c->server->opt.read_timeout_ms;
	int err;

	if (c->out_err) {
		/* Out of memory mid-reply: what was built may be cut; say so instead. */
		static const char msg[] = "ERR 12 ENOMEM out of memory building the reply\n";

		c->out_err = 0;
		c->out_len = 0;
		out_add(c, msg, sizeof(msg) - 1);
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
static void reply_err(struct conn *c, int err, const char *path, size_t path_len, const char *fmt,
		      ...) __attribute__((format(printf, 5, 6)));
static void reply_err(struct conn *c, int err, const char *path, size_t path_len, const char *fmt,
		      ...)
{
	char name[16], msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	out_fmt(c, "ERR %d %s ", -err, sock_errname(-err, name, sizeof(name)));
	if (path) {
		out_escaped(c, path, path_len, true);
		out_add(c, ": ", 2);
	}
	out_escaped(c, msg, strlen(msg), false);
	out_add(c, "\n", 1);
}

/*
 * An error from the tree for @path, with the limits where they help. The
 * limits come from sysctl_entry_explain(), which reads the registrant's
 * table while it is held registered: another client may unregister it and
 * free it meanwhile.
 */
static void reply_tree_err(struct conn *c, int err, const char *path)
{
	size_t plen = strlen(path);

	if (err == -EMSGSIZE || err == -EINVAL) {
		struct sysctl_entry *e = sysctl_lookup(c->server->tree, path);
		char why[128];

		if (!e && err == -EINVAL) {
			reply_err(c, err, path, plen, "malformed path");
			return;
		}
		if (!e || sysctl_entry_explain(e, err, why, sizeof(why)) < 0)
			snprintf(why, sizeof(why), "%s",
				 err == -EINVAL ? "invalid value" : strerror(-err));
		reply_err(c, err, path, plen, "%s", why);
		sysctl_entry_put(e);
		return;
	}
	reply_err(c, err, path, plen, "%s", strerror(-err));
}

/* ---- requests ---- */

/* Look @path up and check @mask for the peer; on error the reply is built. */
static struct sysctl_entry *open_entry(struct conn *c, const char *path, int mask)
{
	struct sysctl_entry *e = sysctl_lookup(c->server->tree, path);
	int err;

	if (!e) {
		reply_tree_err(c, -errno, path);
		return NULL;
	}
	err = sysctl_entry_is_dir(e) ? -EISDIR : sysctl_access(e, &c->who, mask);
	if (err) {
		reply_err(c, err, path, strlen(path), "%s",
			  err == -EACCES ? "permission denied" : strerror(-err));
		sysctl_entry_put(e);
		return NULL;
	}
	return e;
}

/*
 * Read the whole value of @e into c->val: one handler call from offset 0
 * into a buffer with room to spare, since a value read in pieces at
 * growing offsets could mix the value before and after a concurrent write.
 * A full buffer means "maybe more": grow it and read again from the start.
 * Return 0 with *@lenp the length (the final newline dropped), or -errno.
 */
static int read_value(struct conn *c, struct sysctl_entry *e, size_t *lenp)
{
	for (;;) {
		size_t len;
		off_t off = 0;
		int err;

		if (c->val_cap < VALUE_START) {
			char *p = realloc(c->val, VALUE_START);

			if (!p)
				return -ENOMEM;
			c->val = p;
			c->val_cap = VALUE_START;
		}
		len = c->val_cap - 1;
		err = sysctl_entry_read(e, c->val, &len, &off);
		if (err)
			return err;
		if (len < c->val_cap - 1) {
			if (len && c->val[len - 1] == '\n')
				len--;
			*lenp = len;
			return 0;
		}
		if (c->val_cap * 2 > VALUE_MAX)
			return -EFBIG;
		{
			char *p = realloc(c->val, c->val_cap * 2);

			if (!p)
				return -ENOMEM;
			c->val = p;
			c->val_cap *= 2;
		}
	}
}

static void do_get(struct conn *c, const char *path)
{
	struct sysctl_entry *e = open_entry(c, path, R_OK);
	size_t len = 0;
	int err;

	if (!e)
		return;
	err = read_value(c, e, &len);
	sysctl_entry_put(e);
	if (err) {
		reply_tree_err(c, err, path);
		return;
	}
	out_add(c, "OK ", 3);
	out_escaped(c, c->val, len, false);
	out_add(c, "\n", 1);
}

/*
 * SET, and SETIF with @expected non-NULL: the write happens only while the
 * entry's generation (its change counter) is *@expected, else ESTALE. The
 * generation is compared under the entry's writer lock
 * (sysctl_entry_write_if), so no write through the tree (any front end, or
 * the program's sysctl_entry_write / sysctl_set) lands between the check
 * and the write. A program that changes the variable itself, not through
 * the tree, takes no such lock and bumps no counter.
 */
static void do_set(struct conn *c, const char *path, const char *value, size_t len,
		   const uint64_t *expected)
{
	struct sysctl_entry *e;
	off_t off = 0;
	int err;

	/* A zero-byte write changes nothing (as in the kernel); "SET p " means "empty". */
	if (len == 0) {
		value = "\n";
		len = 1;
	}
	if (!expected) {
		err = sysctl_set(c->server->tree, path, value, len, &c->who);
	} else {
		e = sysctl_lookup(c->server->tree, path);
		if (!e)
			err = errno == EINVAL ? -EINVAL : -ENOENT; /* a malformed path, as SET says */
		else if (sysctl_entry_is_dir(e))
			err = -EISDIR;
		else
			err = sysctl_access(e, &c->who, W_OK);
		if (!err)
			err = sysctl_entry_write_if(e, &c->who, value, &len, &off, *expected);
		if (err == -ESTALE) {
			uint64_t now = sysctl_entry_changes(e);

			sysctl_entry_put(e);
			reply_err(c, -ESTALE, path, strlen(path),
				  "changed since generation %" PRIu64 " (now %" PRIu64
				  "): not written",
				  *expected, now);
			return;
		}
		if (e)
			sysctl_entry_put(e);
	}

	if (err == -EACCES)
		reply_err(c, err, path, strlen(path), "permission denied");
	else if (err)
		reply_tree_err(c, err, path);
	else
		out_add(c, "OK\n", 3);
}

/* The entry's generation: its change counter, which SETIF compares. */
static void do_generation(struct conn *c, const char *path)
{
	struct sysctl_entry *e = open_entry(c, path, R_OK);

	if (!e)
		return;
	out_fmt(c, "OK %" PRIu64 "\n", sysctl_entry_changes(e));
	sysctl_entry_put(e);
}

static void do_describe(struct conn *c, const char *path)
{
	struct sysctl_entry *e = open_entry(c, path, R_OK);
	const char *d;

	if (!e)
		return;
	d = sysctl_entry_desc(e);
	out_add(c, "OK ", 3);
	out_escaped(c, d ? d : "", d ? strlen(d) : 0, false);
	out_add(c, "\n", 1);
	sysctl_entry_put(e);
}

struct list_ctx {
	struct conn *c;
	unsigned long count;
};

/* "ENTRY <mode> <rw> <path>"; the path in procps form reads back exactly. */
static int list_one(struct sysctl_entry *e, void *arg)
{
	struct list_ctx *l = arg;
	struct conn *c = l->c;
	const char *path = sysctl_entry_path(e);

	out_fmt(c, "ENTRY %04o %c%c ", (unsigned)sysctl_entry_mode(e) & 07777,
		sysctl_access(e, &c->who, R_OK) == 0 ? 'r' : '-',
		sysctl_access(e, &c->who, W_OK) == 0 ? 'w' : '-');
	out_escaped(c, path, strlen(path), true);
	out_add(c, "\n", 1);
	l->count++;
	return 0;
}

static void do_list(struct conn *c, const char *prefix)
{
	struct list_ctx l = { c, 0 };
	int err = sysctl_walk(c->server->tree, prefix, list_one, &l);

	if (err) {
		c->out_len = 0; /* drop a partial listing */
		reply_tree_err(c, err, prefix);
	} else {
		out_fmt(c, "OK %lu\n", l.count);
	}
}

/*
 * DUMP: names and values of every entry the peer may read, in one reply
 * ("VALUE <path> <value>" each, as GET and LIST write them). The walk
 * holds references, not locks, while it runs, so the reply is sent in
 * pieces (DUMP_PIECE) as it grows: the values' text is never held whole.
 * The walk's snapshot still holds one reference per entry, and LIST
 * (do_list) builds its whole reply before sending it.
 */
#define DUMP_PIECE 65536

struct dump_ctx {
	struct conn *c;
	unsigned long count;
};

static int dump_one(struct sysctl_entry *e, void *arg)
{
	struct dump_ctx *d = arg;
	struct conn *c = d->c;
	const char *path;
	size_t len = 0;
	int err;

	/* Unreadable entries are left out, as procps' sysctl -a leaves them out. */
	if (sysctl_access(e, &c->who, R_OK) != 0)
		return 0;
	err = read_value(c, e, &len);
	/* Gone since the walk began, or refused by its handler: left out too. */
	if (err == -ENOENT || err == -EACCES || err == -EPERM)
		return 0;
	path = sysctl_entry_path(e);
	if (err) {
		char name[16];

		out_add(c, "FAILED ", 7);
		out_escaped(c, path, strlen(path), true);
		out_fmt(c, " %d %s\n", -err, sock_errname(-err, name, sizeof(name)));
	} else {
		out_add(c, "VALUE ", 6);
		out_escaped(c, path, strlen(path), true);
		out_add(c, " ", 1);
		out_escaped(c, c->val, len, false);
		out_add(c, "\n", 1);
	}
	d->count++;
	if (c->out_err)
		return c->out_err;
	return c->out_len >= DUMP_PIECE ? out_flush(c) : 0;
}

static void do_dump(struct conn *c, const char *prefix)
{
	struct dump_ctx d = { c, 0 };
	int err = sysctl_walk(c->server->tree, prefix, dump_one, &d);

	if (err) {
		/*
		 * Lines not sent yet are dropped (the last may be cut where
		 * memory ran out); the ERR line ends the reply, so a client
		 * knows that the lines before it, if any, are not all.
		 */
		c->out_len = 0;
		c->out_err = 0;
		reply_tree_err(c, err, prefix);
	} else {
		out_fmt(c, "OK %lu\n", d.count);
	}
}

static void do_audit(struct conn *c, uint64_t after)
{
	struct sysctl_audit_record *r;
	unsigned long count = 0;
	size_t n;

	if (c->who.uid != 0) {
		reply_err(c, -EACCES, NULL, 0, "audit: only root may read the audit ring");
		return;
	}
	r = malloc(AUDIT_BATCH * sizeof(*r));
	if (!r) {
		reply_err(c, -ENOMEM, NULL, 0, "out of memory");
		return;
	}
	do {
		n = sysctl_audit_read(c->server->tree, after, r, AUDIT_BATCH);
		for (size_t i = 0; i < n; i++) {
			out_fmt(c, "AUDIT %" PRIu64 " %lld.%09ld %lld %lld ", r[i].seq,
				(long long)r[i].when.tv_sec, r[i].when.tv_nsec,
				r[i].uid == (uid_t)-1 ? -1LL : (long long)r[i].uid, (long long)r[i].pid);
			out_escaped(c, r[i].path, strnlen(r[i].path, sizeof(r[i].path)), true);
			out_add(c, " ", 1);
			out_escaped(c, r[i].old_value, strnlen(r[i].old_value, sizeof(r[i].old_value)), true);
			out_add(c, " ", 1);
			out_escaped(c, r[i].new_value, strnlen(r[i].new_value, sizeof(r[i].new_value)), true);
			out_add(c, "\n", 1);
			after = r[i].seq;
			count++;
		}
	} while (n == AUDIT_BATCH);
	free(r);
	out_fmt(c, "OK %lu\n", count);
}

static void do_reset(struct conn *c, const char *path)
{
	const struct sysctl_socket_options *o = &c->server->opt;
	char why[256] = "";
	int err;

	if (!o->reset) {
		reply_err(c, -EOPNOTSUPP, NULL, 0, "reset: this server keeps no runtime values apart");
		return;
	}
	if (*path) {
		struct sysctl_entry *e = open_entry(c, path, W_OK);

		if (!e)
			return;
		sysctl_entry_put(e);
	} else if (c->who.uid != 0) {
		reply_err(c, -EACCES, NULL, 0, "reset: only root may reset every entry");
		return;
	}
	err = o->reset(o->reset_arg, *path ? path : NULL, why, sizeof(why));
	if (err)
		reply_err(c, err, *path ? path : NULL, strlen(path), "%s", *why ? why : strerror(-err));
	else
		out_add(c, "OK\n", 3);
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

/*
 * Mark @c as watching, unless its uid (not root) already has all the
 * watches it may: watches never time out as idle connections do, so they
 * are capped apart.
 */
static bool watch_slot_get(struct conn *c)
{
	struct sysctl_socket *s = c->server;
	unsigned n = 0;

	pthread_mutex_lock(&s->lock);
	if (c->who.uid != 0) {
		for (const struct conn *o = s->conns; o; o = o->next)
			n += o->watching && o->who.uid == c->who.uid &&
			     !__atomic_load_n(&o->done, __ATOMIC_ACQUIRE);
	}
	c->watching = c->who.uid == 0 || n < s->opt.max_watch_per_uid;
	pthread_mutex_unlock(&s->lock);
	return c->watching;
}

/* Return non-zero when the connection must end. */
static int do_watch(struct conn *c, const char *path)
{
	struct sysctl_socket *s = c->server;
	struct sysctl_entry *e = open_entry(c, path, R_OK);
	int64_t last_sent;
	uint64_t seen;
	int ret = 0;

	if (!e)
		return out_flush(c);
	if (!watch_slot_get(c)) {
		sysctl_entry_put(e);
		reply_err(c, -EAGAIN, path, strlen(path), "too many watches by uid %u",
			  (unsigned)c->who.uid);
		return out_flush(c);
	}
	seen = sysctl_entry_changes(e);
	out_fmt(c, "OK %" PRIu64 "\n", seen);
	ret = out_flush(c);
	last_sent = rcs_now_ms();
	while (!ret && !stopping(s)) {
		int64_t r = sysctl_entry_wait(e, seen, WATCH_SLICE_MS);

		if (r == -ENOENT) {
			reply_err(c, -ENOENT, path, strlen(path), "entry removed");
			out_flush(c);
			break;
		}
		if (r >= 0) {
			seen = (uint64_t)r;
			out_add(c, "CHANGED ", 8);
			out_escaped(c, path, strlen(path), true);
			out_fmt(c, " %" PRIu64 "\n", seen);
			ret = out_flush(c);
			last_sent = rcs_now_ms();
		}
		if (peer_gone(c))
			break;
		if (!ret && rcs_now_ms() - last_sent >= s->opt.watch_keepalive_ms) {
			/*
			 * Liveness: nothing was sent for a whole interval, so a
			 * byte still unread now has waited at least that long.
			 * The watcher is stuck (or passed the socket on and never
			 * reads): drop it. A busy watch needs no such check: its
			 * lines fill the socket and the send deadline drops it.
			 */
			if (peer_has_unread(c))
				break;
			out_fmt(c, "ALIVE %" PRIu64 "\n", seen);
			ret = out_flush(c);
			last_sent = rcs_now_ms();
		}
	}
	sysctl_entry_put(e);
	return 1;
}

/* Handle one request line; non-zero ends the connection. */
static int handle_line(struct conn *c, const char *line, size_t len)
{
	struct sock_request req;
	const char *why;
	char path[SYSCTL_SOCKET_LINE_MAX];
	int err = sock_parse_request(line, len, &req, &why);

	if (err) {
		reply_err(c, err, NULL, 0, "%s", why);
		return out_flush(c) || err == -E2BIG;
	}
	memcpy(path, req.path ? req.path : "", req.path_len);
	path[req.path_len] = '\0';
	switch (req.verb) {
	case SOCK_GET: do_get(c, path); break;
	case SOCK_SET: do_set(c, path, req.value, req.value_len, NULL); break;
	case SOCK_SETIF: do_set(c, path, req.value, req.value_len, &req.expected); break;
	case SOCK_GENERATION: do_generation(c, path); break;
	case SOCK_LIST: do_list(c, path); break;
	case SOCK_DUMP: do_dump(c, path); break;
	case SOCK_DESCRIBE: do_describe(c, path); break;
	case SOCK_AUDIT: do_audit(c, req.after_seq); break;
	case SOCK_RESET: do_reset(c, path); break;
	case SOCK_WATCH: return do_watch(c, path);
	}
	return out_flush(c);
}

/* ---- connections ---- */

/*
 * Wait for request bytes: a started line must be whole by its deadline
 * (set when its first byte is in; later bytes do not extend it, or one
 * byte now and then would hold the connection for ever); an idle
 * connection waits the idle timeout. Return the bytes received, 0 at EOF,
 * -ETIMEDOUT, or -errno.
 */
static ssize_t recv_some(struct conn *c)
{
	const struct sysctl_socket_options *o = &c->server->opt;

	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int wait = c->in_len ? rcs_ms_left(c->line_deadline) : o->idle_timeout_ms;
		ssize_t n;
		int r;

		if (c->in_len && wait == 0)
			return -ETIMEDOUT;
		/* stop's shutdown() wakes this (POLLIN|POLLHUP, then EOF). */
		r = poll(&p, 1, wait < 0 ? -1 : wait);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0) {
			if (c->in_len)
				continue; /* the deadline check above says so */
			return -ETIMEDOUT;
		}
		n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		return n < 0 ? -errno : n;
	}
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct sysctl_socket *s = c->server;

	while (!stopping(s)) {
		char *nl = memchr(c->in, '\n', c->in_len);
		ssize_t n;

		if (nl) {
			size_t len = (size_t)(nl - c->in);

			if (handle_line(c, c->in, len))
				break;
			memmove(c->in, nl + 1, c->in_len - len - 1);
			c->in_len -= len + 1;
			/* Bytes of the next line already in start its clock now. */
			c->line_deadline = rcs_now_ms() + s->opt.read_timeout_ms;
			continue;
		}
		if (c->in_len == sizeof(c->in)) {
			reply_err(c, -E2BIG, NULL, 0, "request line longer than %d bytes",
				  SYSCTL_SOCKET_LINE_MAX - 1);
			out_flush(c);
			break;
		}
		if (!c->in_len)
			c->line_deadline = 0;
		n = recv_some(c);
		if (n > 0) {
			if (!c->line_deadline)
				c->line_deadline = rcs_now_ms() + s->opt.read_timeout_ms;
			c->in_len += (size_t)n;
			continue;
		}
		if (n == -ETIMEDOUT) {
			reply_err(c, -ETIMEDOUT, NULL, 0, "%s",
				  c->in_len ? "request line not finished in time" : "idle too long");
			out_flush(c);
		}
		break; /* EOF, error or timeout */
	}
	/* The peer sees EOF now; the fd is closed when this thread is joined. */
	shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_lock(&s->lock);
	s->nconns--;
	/* Under the lock: the per-uid counts read it there. */
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void conn_free(struct conn *c)
{
	close(c->fd);
	free(c->out);
	free(c->val);
	free(c);
}

/* Join finished connections (@all: every one, after shutting them down). */
static void reap(struct sysctl_socket *s, bool all)
{
	struct conn *done = NULL, **pp;

	pthread_mutex_lock(&s->lock);
	for (pp = &s->conns; *pp;) {
		struct conn *c = *pp;

		if (all)
			shutdown(c->fd, SHUT_RDWR);
		if (all || __atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
			*pp = c->next;
			c->next = done;
			done = c;
		} else {
			pp = &c->next;
		}
	}
	pthread_mutex_unlock(&s->lock);
	while (done) {
		struct conn *c = done;

		done = c->next;
		pthread_join(c->thread, NULL);
		conn_free(c);
	}
}

static void refuse(int fd, const char *msg, size_t len)
{
	/* Best effort, never blocking: the client may not read at all. */
	if (send(fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* nothing to do: the connection is dropped either way */
	}
	close(fd);
}

/*
 * Whether @uid may have one more connection now; under s->lock. Root may
 * take every slot; other uids share all but root_reserve of them, each at
 * most max_per_uid, so no local user can shut root (or everyone) out.
 */
static int may_connect(struct sysctl_socket *s, uid_t uid)
{
	unsigned others = 0, mine = 0;

	if (s->nconns >= s->opt.max_clients)
		return -EAGAIN;
	if (uid == 0)
		return 0;
	for (const struct conn *c = s->conns; c; c = c->next) {
		if (__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
			continue;
		others += c->who.uid != 0;
		mine += c->who.uid == uid;
	}
	if (others >= s->opt.max_clients - s->opt.root_reserve)
		return -EAGAIN;
	return mine >= s->opt.max_per_uid ? -EUSERS : 0;
}

/* Return 0, or -errno when accept() itself failed. */
static int accept_one(struct sysctl_socket *s)
{
	static const char busy[] = "ERR 11 EAGAIN too many clients\n";
	static const char nomem[] = "ERR 12 ENOMEM out of memory\n";
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct conn *c;
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	int err;

	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0) {
		close(fd);
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	err = may_connect(s, cred.uid);
	pthread_mutex_unlock(&s->lock);
	if (err == -EUSERS) {
		char msg[64];
		int n = snprintf(msg, sizeof(msg), "ERR 11 EAGAIN too many clients of uid %u\n",
				 (unsigned)cred.uid);

		refuse(fd, msg, (size_t)n);
		return 0;
	}
	if (err) {
		refuse(fd, busy, sizeof(busy) - 1);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		refuse(fd, nomem, sizeof(nomem) - 1);
		return 0;
	}
	c->server = s;
	c->fd = fd;
	c->who = (struct sysctl_caller){ cred.uid, cred.gid, cred.pid };
	pthread_mutex_lock(&s->lock);
	s->nconns++;
	if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
		s->nconns--;
		pthread_mutex_unlock(&s->lock);
		free(c);
		refuse(fd, nomem, sizeof(nomem) - 1);
		return 0;
	}
	c->next = s->conns;
	s->conns = c;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void *accept_main(void *arg)
{
	struct sysctl_socket *s = arg;
	struct pollfd p[2] = { { .fd = s->listen_fd, .events = POLLIN },
			       { .fd = s->wake[0], .events = POLLIN } };

	while (!stopping(s)) {
		/* Wake now and then to join finished connection threads. */
		int n = poll(p, 2, 500);

		reap(s, false);
		if (n > 0 && (p[0].revents & POLLIN) && !stopping(s)) {
			int err = accept_one(s);

			/*
			 * Out of descriptors or memory: the pending connection
			 * stays, and poll() would report it again at once. Back
			 * off instead of spinning (a stop still wakes us).
			 */
			if (err == -EMFILE || err == -ENFILE || err == -ENOBUFS || err == -ENOMEM)
				poll(&p[1], 1, 100);
		}
	}
	return NULL;
}

/* ---- start / stop ---- */

/* The defaults of the options left 0 (sysctl_socket.h). */
static void options_defaults(struct sysctl_socket_options *o)
{
	if (o->read_timeout_ms <= 0)
		o->read_timeout_ms = 5000;
	if (o->idle_timeout_ms == 0)
		o->idle_timeout_ms = 60000;
	if (o->max_clients == 0)
		o->max_clients = 64;
	if (o->root_reserve == 0)
		o->root_reserve = o->max_clients / 4;
	if (o->root_reserve > o->max_clients)
		o->root_reserve = o->max_clients;
	if (o->max_per_uid == 0)
		o->max_per_uid = o->max_clients / 4 ? o->max_clients / 4 : 1;
	if (o->max_watch_per_uid == 0)
		o->max_watch_per_uid = o->max_per_uid / 2 ? o->max_per_uid / 2 : 1;
	if (o->watch_keepalive_ms <= 0)
		o->watch_keepalive_ms = 30000;
}

int sysctl_socket_start_opts(struct sysctl_tree *tree, const char *path, mode_t mode,
			     const struct sysctl_socket_options *opts, struct sysctl_socket **out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct sysctl_socket *s;
	int err;

	if (!tree || !path || !*path || !out)
		return -EINVAL;
	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->tree = tree;
	s->listen_fd = s->wake[0] = s->wake[1] = -1;
	s->opt = opts ? *opts : (struct sysctl_socket_options){ 0 };
	options_defaults(&s->opt);
	pthread_mutex_init(&s->lock, NULL);
	s->path = strdup(path);
	err = s->path ? 0 : -ENOMEM;
	if (!err && pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		err = -errno;
	if (!err) {
		s->listen_fd = rcs_unix_listen(&addr, mode, 128, &s->dev, &s->ino);
		err = s->listen_fd < 0 ? s->listen_fd : 0;
	}
	if (!err) {
		err = -pthread_create(&s->acceptor, NULL, accept_main, s);
		if (err)
			unlink(path);
	}
	if (!err) {
		*out = s;
		return 0;
	}
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->wake[0] >= 0) {
		close(s->wake[0]);
		close(s->wake[1]);
	}
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s);
	return err;
}

int sysctl_socket_start(struct sysctl_tree *tree, const char *path, mode_t mode,
			struct sysctl_socket **out)
{
	return sysctl_socket_start_opts(tree, path, mode, NULL, out);
}

void sysctl_socket_stop(struct sysctl_socket *s)
{
	struct stat st;

	if (!s)
		return;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	if (write(s->wake[1], "x", 1) < 0) {
		/* the pipe is non-blocking and only ever needs one byte */
	}
	pthread_join(s->acceptor, NULL);
	/* shutdown() wakes threads blocked in recv() or send(). */
	reap(s, true);
	if (lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->path);
	close(s->listen_fd);
	close(s->wake[0]);
	close(s->wake[1]);
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s);
}
