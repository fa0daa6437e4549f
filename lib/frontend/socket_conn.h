/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket server's connections, shared by its files:
 * socket_server.c accepts and runs connections (start and stop);
 * socket_slots.c counts them and their watches;
 * socket_verbs.c answers one request line; socket_multi.c the requests of
 * several entries (MSET, MAPPLY, MGET, MWATCH); socket_reply.c builds a
 * reply and sends it within its deadline. Internal to the library.
 */
#ifndef RCUSTRING_LIB_FRONTEND_SOCKET_CONN_H
#define RCUSTRING_LIB_FRONTEND_SOCKET_CONN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rcustring/sysctl_commit.h"
#include "rcustring/sysctl_socket.h"
#include "socket_proto.h"

/*
 * An MSET or MAPPLY whose item lines are still coming: each line copied
 * (at most SYSCTL_SOCKET_LINE_MAX bytes, SYSCTL_COMMIT_MAX of them: 256 KiB
 * per connection at most), committed once the last is in. Kept in the
 * connection, so that a failed allocation still lets the lines be read
 * (and the request refused) rather than taken for requests.
 */
struct sock_batch {
	enum sock_verb verb;
	size_t count, got;
	char *line[SYSCTL_COMMIT_MAX]; /* "<path>\0<value>" */
	size_t path_len[SYSCTL_COMMIT_MAX], value_len[SYSCTL_COMMIT_MAX];
	int err;         /* the first bad item line's, answered when all are in */
	const char *why; /* its static message */
	size_t bad;      /* its index */
};

/*
 * A reply goes out in pieces of at most SOCK_PIECE bytes as it is built
 * (a LIST of 100 000 entries, a DUMP, an escaped 1 MiB value): a
 * connection's reply buffer never grows past one piece, whatever the
 * tree or the values, and after each request a buffer past SOCK_KEEP
 * bytes (the reply's, the value scratch's) is given back.
 */
#define SOCK_PIECE 65536
#define SOCK_KEEP 4096

struct conn {
	struct sysctl_socket *server;
	struct conn *next;
	pthread_t thread;
	int fd;
	int done; /* atomic: the thread has finished; set under the server's lock */
	bool watching; /* in WATCH, counted as one (sock_watch_get()) */
	struct sock_batch batch; /* batch.count: an MSET's item lines are coming */
	struct sysctl_caller who;
	/* Input: bytes received, not yet consumed. */
	char in[SYSCTL_SOCKET_LINE_MAX];
	size_t in_len;
	int64_t line_deadline; /* ms: when the started line must be whole; 0: none started */
	/* Output: the reply being built, sent in pieces (SOCK_PIECE). */
	char *out;
	size_t out_len, out_cap;
	int out_err;   /* -ENOMEM while building */
	int send_err;  /* a piece could not be sent: the connection ends */
	/* ms this reply's pieces waited for the peer: read_timeout_ms in all. */
	int64_t send_waited;
	char *val;     /* value / escape scratch */
	size_t val_cap;
	/*
	 * out_cap + val_cap now, and the most they were, for METRICS
	 * (stored relaxed by this connection's thread, read by a scrape).
	 */
	size_t held, held_peak;
	/*
	 * Counts for METRICS, written only by this connection's thread (a
	 * relaxed store, no locked add: its own cache line, not a shared
	 * one), read by a scrape, folded into the server's when reaped.
	 */
	uint64_t requests[SOCK_VERB_COUNT];
	uint64_t reads; /* values read (GET, each DUMP line) */
};

/* One more of *@counter, which only the calling thread writes. */
static inline void sock_count(uint64_t *counter)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

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
	/* What reaped connections counted (under lock). */
	uint64_t requests_done[SOCK_VERB_COUNT];
	uint64_t reads_done;
	size_t held_peak_done; /* the most one reaped connection's buffers held */
	/*
	 * Two budgets of one kind (sysctl_budget.h): @slots, the server's
	 * own, bounds its threads (max_clients, root_reserve, max_per_uid,
	 * max_watch_per_uid); @budget, the program's (opt.budget, may be
	 * NULL), what a uid holds on every front end. A connection takes one
	 * unit of each, a WATCH one more of @budget and one of @slots'
	 * watches (no unit: it is a connection already).
	 */
	struct sysctl_budget *slots;
	struct sysctl_budget *budget;
};

/*
 * socket_slots.c: the server's own budget of threads, from its options;
 * count a connection of @uid (0, -EMFILE: the uid's share is taken, -ENFILE:
 * every slot or the users' common share, -ENOMEM) and give it back; count
 * @c as a WATCH (false: its uid has all it may) and give it back.
 */
int sock_slots_new(struct sysctl_socket *s);
int sock_conn_get(struct sysctl_socket *s, uid_t uid);
void sock_conn_put(struct sysctl_socket *s, uid_t uid);
bool sock_watch_get(struct conn *c);
void sock_watch_put(struct conn *c);

/*
 * The origin of settings the peer sends as a file's (APPLY, MAPPLY),
 * decided here once: root's are root's settings (SYSCTL_ORIGIN_FILE), which
 * a settings file on disk could say again; anyone else's are that user's
 * own writes (SYSCTL_ORIGIN_CLIENT), exactly as SET: the write check, the
 * commit hooks (rcusysd keeps a client's write in its store) and the audit
 * all see this one origin, never one re-decided from the uid.
 */
static inline enum sysctl_origin sock_apply_origin(const struct conn *c)
{
	return c->who.uid == 0 ? SYSCTL_ORIGIN_FILE : SYSCTL_ORIGIN_CLIENT;
}

/* Whether sysctl_socket_stop() has begun: every loop of a connection ends. */
static inline bool sock_stopping(struct sysctl_socket *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

/* socket_reply.c: the reply being built in @c (on out of memory, c->out_err). */
void sock_out_add(struct conn *c, const char *s, size_t len);
void sock_out_fmt(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* @s escaped (sock_escape; @spaces: spaces too, as in a path). */
void sock_out_escaped(struct conn *c, const char *s, size_t len, bool spaces);
/*
 * Send the reply built so far (the rest of it, when pieces went before),
 * each piece within the read timeout. Return 0 or -errno (the peer is gone
 * or does not read: end the connection).
 */
int sock_out_flush(struct conn *c);
/* What stops a reply being built: c->out_err (-ENOMEM) or a piece's send error; or 0. */
static inline int sock_out_failed(const struct conn *c)
{
	return c->out_err ? c->out_err : c->send_err;
}
/* After a request: give back the buffers that grew past SOCK_KEEP. */
void sock_out_trim(struct conn *c);
/* c->out_cap or c->val_cap changed: c->held and c->held_peak follow. */
void sock_held_note(struct conn *c);
/* "ERR <n> <NAME> <path>: <message>\n" (@path NULL: no path). */
void sock_reply_err(struct conn *c, int err, const char *path, size_t path_len, const char *fmt,
		    ...) __attribute__((format(printf, 5, 6)));
/* An error from the tree for @path, with the entry's limits where they help. */
void sock_reply_tree_err(struct conn *c, int err, const char *path);
/* The message sock_reply_tree_err() gives for @err on @path, into @why. */
void sock_tree_why(struct conn *c, int err, const char *path, char *why, size_t size);

/* socket_report.c: STATUS and METRICS. */
void sock_do_report(struct conn *c, enum sock_verb verb);

/* socket_verbs.c: answer one request line (@len bytes, no newline); non-zero ends the connection. */
int sock_handle_line(struct conn *c, const char *line, size_t len);
/* Look @path up and check @mask (R_OK, W_OK) for the peer; on error the reply is built. */
struct sysctl_entry *sock_open_entry(struct conn *c, const char *path, int mask);
/*
 * socket_reply.c: the keepalive and liveness checks of WATCH and MWATCH
 * (rcustring-socket(7)), after each wait. Return 1
 * when the watch must end (the peer hung up, or a keepalive is due while a
 * line sent before is still unread: a stuck watcher); else the keepalive
 * when one is due ("ALIVE <*@seen>", or "ALIVE" with @seen NULL) with
 * *@last_sent moved on: 0, or the send's -errno.
 * Context: the watch's connection thread.
 */
int sock_watch_idle(struct conn *c, int64_t *last_sent, const uint64_t *seen);

/*
 * socket_multi.c: MSET and MAPPLY begin a batch (sock_batch_line() takes
 * its item lines, then commits), MGET answers from one snapshot, MWATCH
 * streams commits as one event each (non-zero: the connection ends).
 * sock_batch_free() drops a batch left unfinished.
 */
void sock_do_mset(struct conn *c, const struct sock_request *req);
int sock_batch_line(struct conn *c, const char *line, size_t len);
void sock_batch_free(struct conn *c);
void sock_do_mget(struct conn *c, const struct sock_request *req);
int sock_do_mwatch(struct conn *c, const struct sock_request *req);

#endif
