/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Control socket server (rcustring-socket(7)): one accepting thread, one
 * thread per connection (bounded: in all, per uid, with slots kept for
 * root, by the server's own budget of threads, and against the program's
 * handle budget where it gave one: sysctl_budget.h), I/O bounded by
 * deadlines (a whole request line, a whole reply).
 * The verbs are socket_verbs.c's, the replies socket_reply.c's.
 *
 * A connection's fd is closed only when its thread is joined (by the
 * accepting thread or by stop), never by the thread itself: stop may call
 * shutdown() on any fd in the list at any time, and a closed-then-reused
 * fd number would hit somebody else's file.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/deadline.h"
#include "common/unix_listen.h"
#include "rcustring/sysctl_socket.h"
#include "socket_conn.h"
#include "socket_proto.h"

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
		/* A multi-set's item lines are one request: its deadline runs on between them. */
		bool started = c->in_len || c->batch.count;
		int wait = started ? rcs_ms_left(c->line_deadline) : o->idle_timeout_ms;
		ssize_t n;
		int r;

		if (started && wait == 0)
			return -ETIMEDOUT;
		/* stop's shutdown() wakes this (POLLIN|POLLHUP, then EOF). */
		r = poll(&p, 1, wait < 0 ? -1 : wait);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0) {
			if (started)
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

	while (!sock_stopping(s)) {
		char *nl = memchr(c->in, '\n', c->in_len);
		ssize_t n;

		if (nl) {
			size_t len = (size_t)(nl - c->in);

			if (sock_handle_line(c, c->in, len))
				break;
			sock_out_trim(c);
			memmove(c->in, nl + 1, c->in_len - len - 1);
			c->in_len -= len + 1;
			/* Bytes of the next line already in start its clock now. */
			if (!c->batch.count)
				c->line_deadline = rcs_now_ms() + s->opt.read_timeout_ms;
			continue;
		}
		if (c->in_len == sizeof(c->in)) {
			sock_reply_err(c, -E2BIG, NULL, 0, "request line longer than %d bytes",
				  SYSCTL_SOCKET_LINE_MAX - 1);
			sock_out_flush(c);
			break;
		}
		if (!c->in_len && !c->batch.count)
			c->line_deadline = 0;
		n = recv_some(c);
		if (n > 0) {
			if (!c->line_deadline)
				c->line_deadline = rcs_now_ms() + s->opt.read_timeout_ms;
			c->in_len += (size_t)n;
			continue;
		}
		if (n == -ETIMEDOUT) {
			sock_reply_err(c, -ETIMEDOUT, NULL, 0, "%s",
				  c->batch.count ? "multi-set items not all in, in time (nothing written)"
				  : c->in_len ? "request line not finished in time" : "idle too long");
			sock_out_flush(c);
		}
		break; /* EOF, error or timeout */
	}
	/* The peer sees EOF now; the fd is closed when this thread is joined. */
	shutdown(c->fd, SHUT_RDWR);
	sock_batch_free(c); /* an unfinished multi-set: nothing was written */
	sock_conn_put(s, c->who.uid);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
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
			for (int v = 0; v < SOCK_VERB_COUNT; v++)
				s->requests_done[v] += __atomic_load_n(&c->requests[v],
								       __ATOMIC_RELAXED);
			s->reads_done += __atomic_load_n(&c->reads, __ATOMIC_RELAXED);
			if (__atomic_load_n(&c->held_peak, __ATOMIC_RELAXED) > s->held_peak_done)
				s->held_peak_done = __atomic_load_n(&c->held_peak, __ATOMIC_RELAXED);
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
	err = sock_conn_get(s, cred.uid);
	if (err == -ENOMEM) {
		refuse(fd, nomem, sizeof(nomem) - 1);
		return 0;
	}
	if (err) {
		char msg[128];
		int n = err == -EMFILE ? snprintf(msg, sizeof(msg),
						  "ERR 11 EAGAIN too many clients of uid %u\n",
						  (unsigned)cred.uid)
				       : snprintf(msg, sizeof(msg), "%s", busy);

		refuse(fd, msg, (size_t)n);
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		sock_conn_put(s, cred.uid);
		refuse(fd, nomem, sizeof(nomem) - 1);
		return 0;
	}
	c->server = s;
	c->fd = fd;
	c->who = (struct sysctl_caller){ cred.uid, cred.gid, cred.pid };
	pthread_mutex_lock(&s->lock);
	if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
		pthread_mutex_unlock(&s->lock);
		sock_conn_put(s, cred.uid);
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

	while (!sock_stopping(s)) {
		/* Wake now and then to join finished connection threads. */
		int n = poll(p, 2, 500);

		reap(s, false);
		if (n > 0 && (p[0].revents & POLLIN) && !sock_stopping(s)) {
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
	s->budget = s->opt.budget;
	pthread_mutex_init(&s->lock, NULL);
	s->path = strdup(path);
	err = s->path ? 0 : -ENOMEM;
	if (!err)
		err = sock_slots_new(s);
	if (!err && pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		err = -errno;
	if (!err) {
		s->listen_fd = rcs_unix_listen(&addr, mode, 128, &s->dev, &s->ino);
		err = s->listen_fd < 0 ? s->listen_fd : 0;
	}
	if (!err) {
		err = -pthread_create(&s->acceptor, NULL, accept_main, s);
		if (err)
			rcs_unix_unlink_own(path, s->dev, s->ino);
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
	sysctl_budget_free(s->slots);
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
	if (!s)
		return;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	if (write(s->wake[1], "x", 1) < 0) {
		/* the pipe is non-blocking and only ever needs one byte */
	}
	pthread_join(s->acceptor, NULL);
	/* shutdown() wakes threads blocked in recv() or send(). */
	reap(s, true);
	rcs_unix_unlink_own(s->path, s->dev, s->ino);
	close(s->listen_fd);
	close(s->wake[0]);
	close(s->wake[1]);
	sysctl_budget_free(s->slots);
	pthread_mutex_destroy(&s->lock);
	free(s->path);
	free(s);
}
