/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's verbs (rcustring-socket(7)): GET, SET, SETIF,
 * GENERATION, LIST, DUMP, DESCRIBE, AUDIT, RESET and WATCH (those of
 * several entries are socket_multi.c's), each answering
 * one parsed request line for the peer whose credentials the connection
 * holds. The accepting, capping and deadlines are socket_server.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/deadline.h"
#include "rcustring/sysctl_socket.h"
#include "socket_conn.h"
#include "socket_proto.h"

#define WATCH_SLICE_MS 200 /* how often a watcher checks for stop and hang-up */
#define VALUE_START 4096
#define VALUE_MAX (1 << 20) /* GET replies larger than this: -EFBIG */
#define AUDIT_BATCH 32

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
			sock_held_note(c);
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
			sock_held_note(c);
		}
	}
}

static void do_get(struct conn *c, const char *path)
{
	struct sysctl_entry *e = sock_open_entry(c, path, R_OK);
	size_t len = 0;
	int err;

	if (!e)
		return;
	err = read_value(c, e, &len);
	sysctl_entry_put(e);
	if (err) {
		sock_reply_tree_err(c, err, path);
		return;
	}
	sock_count(&c->reads);
	sock_out_add(c, "OK ", 3);
	sock_out_escaped(c, c->val, len, false);
	sock_out_add(c, "\n", 1);
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
		   const uint64_t *expected, enum sysctl_origin origin)
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
		/* SET, or APPLY with sock_apply_origin()'s origin. */
		err = sysctl_set_from(c->server->tree, path, value, len, &c->who, origin);
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
			sock_reply_err(c, -ESTALE, path, strlen(path),
				  "changed since generation %" PRIu64 " (now %" PRIu64
				  "): not written",
				  *expected, now);
			return;
		}
		if (e)
			sysctl_entry_put(e);
	}

	if (err == -EACCES)
		sock_reply_err(c, err, path, strlen(path), "permission denied");
	else if (err)
		sock_reply_tree_err(c, err, path);
	else
		sock_out_add(c, "OK\n", 3);
}

/* The entry's generation: its change counter, which SETIF compares. */
static void do_generation(struct conn *c, const char *path)
{
	struct sysctl_entry *e = sock_open_entry(c, path, R_OK);

	if (!e)
		return;
	sock_out_fmt(c, "OK %" PRIu64 "\n", sysctl_entry_changes(e));
	sysctl_entry_put(e);
}

static void do_describe(struct conn *c, const char *path)
{
	struct sysctl_entry *e = sock_open_entry(c, path, R_OK);
	const char *d;

	if (!e)
		return;
	d = sysctl_entry_desc(e);
	sock_out_add(c, "OK ", 3);
	sock_out_escaped(c, d ? d : "", d ? strlen(d) : 0, false);
	sock_out_add(c, "\n", 1);
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

	sock_out_fmt(c, "ENTRY %04o %c%c ", (unsigned)sysctl_entry_mode(e) & 07777,
		sysctl_access(e, &c->who, R_OK) == 0 ? 'r' : '-',
		sysctl_access(e, &c->who, W_OK) == 0 ? 'w' : '-');
	sock_out_escaped(c, path, strlen(path), true);
	sock_out_add(c, "\n", 1);
	l->count++;
	return sock_out_failed(c);
}

/*
 * LIST: sent in pieces as it is built (SOCK_PIECE), as DUMP's lines, so a
 * tree of 100 000 entries costs one piece per connection, not the text of
 * the whole listing. An error ends the reply with its ERR line: before the
 * first entry (no such prefix, no memory for the walk) it is the whole
 * reply; later (no memory for the reply, the peer gone) the lines before
 * it are not all.
 */
static void do_list(struct conn *c, const char *prefix)
{
	struct list_ctx l = { c, 0 };
	int err = sysctl_walk(c->server->tree, prefix, list_one, &l);

	if (err) {
		c->out_len = 0; /* drop the lines not sent yet */
		c->out_err = 0;
		sock_reply_tree_err(c, err, prefix);
	} else {
		sock_out_fmt(c, "OK %lu\n", l.count);
	}
}

/*
 * DUMP: names and values of every entry the peer may read, in one reply
 * ("VALUE <path> <value>" each, as GET and LIST write them). The walk
 * holds references, not locks, while it runs, and the reply is sent in
 * pieces (SOCK_PIECE) as it grows: the values' text is never held whole.
 * The walk's snapshot still holds one reference (a pointer) per entry.
 */

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

		sock_out_add(c, "FAILED ", 7);
		sock_out_escaped(c, path, strlen(path), true);
		sock_out_fmt(c, " %d %s\n", -err, sock_errname(-err, name, sizeof(name)));
	} else {
		sock_count(&c->reads);
		sock_out_add(c, "VALUE ", 6);
		sock_out_escaped(c, path, strlen(path), true);
		sock_out_add(c, " ", 1);
		sock_out_escaped(c, c->val, len, false);
		sock_out_add(c, "\n", 1);
	}
	d->count++;
	return sock_out_failed(c);
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
		sock_reply_tree_err(c, err, prefix);
	} else {
		sock_out_fmt(c, "OK %lu\n", d.count);
	}
}

static void do_audit(struct conn *c, uint64_t after)
{
	struct sysctl_audit_record *r;
	unsigned long count = 0;
	size_t n;

	if (c->who.uid != 0) {
		sock_reply_err(c, -EACCES, NULL, 0, "audit: only root may read the audit ring");
		return;
	}
	r = malloc(AUDIT_BATCH * sizeof(*r));
	if (!r) {
		sock_reply_err(c, -ENOMEM, NULL, 0, "out of memory");
		return;
	}
	do {
		n = sysctl_audit_read(c->server->tree, after, r, AUDIT_BATCH);
		for (size_t i = 0; i < n; i++) {
			sock_out_fmt(c, "AUDIT %" PRIu64 " %lld.%09ld %lld %lld ", r[i].seq,
				(long long)r[i].when.tv_sec, r[i].when.tv_nsec,
				r[i].uid == (uid_t)-1 ? -1LL : (long long)r[i].uid, (long long)r[i].pid);
			sock_out_escaped(c, r[i].path, strnlen(r[i].path, sizeof(r[i].path)), true);
			sock_out_add(c, " ", 1);
			sock_out_escaped(c, r[i].old_value, strnlen(r[i].old_value, sizeof(r[i].old_value)), true);
			sock_out_add(c, " ", 1);
			sock_out_escaped(c, r[i].new_value, strnlen(r[i].new_value, sizeof(r[i].new_value)), true);
			sock_out_add(c, "\n", 1);
			after = r[i].seq;
			count++;
		}
	} while (n == AUDIT_BATCH);
	free(r);
	sock_out_fmt(c, "OK %lu\n", count);
}

static void do_reset(struct conn *c, const char *path)
{
	const struct sysctl_socket_options *o = &c->server->opt;
	char why[256] = "";
	int err;

	if (!o->reset) {
		sock_reply_err(c, -EOPNOTSUPP, NULL, 0, "reset: this server keeps no runtime values apart");
		return;
	}
	if (*path) {
		struct sysctl_entry *e = sock_open_entry(c, path, W_OK);

		if (!e)
			return;
		sysctl_entry_put(e);
	} else if (c->who.uid != 0) {
		sock_reply_err(c, -EACCES, NULL, 0, "reset: only root may reset every entry");
		return;
	}
	err = o->reset(o->reset_arg, *path ? path : NULL, why, sizeof(why));
	if (err)
		sock_reply_err(c, err, *path ? path : NULL, strlen(path), "%s", *why ? why : strerror(-err));
	else
		sock_out_add(c, "OK\n", 3);
}

/* Return non-zero when the connection must end. */
static int do_watch(struct conn *c, const char *path)
{
	struct sysctl_socket *s = c->server;
	struct sysctl_entry *e = sock_open_entry(c, path, R_OK);
	int64_t last_sent;
	uint64_t seen;
	int ret = 0;

	if (!e)
		return sock_out_flush(c);
	/* Watches never time out as idle connections do: they are capped apart. */
	if (!sock_watch_get(c)) {
		sysctl_entry_put(e);
		sock_reply_err(c, -EAGAIN, path, strlen(path), "too many watches by uid %u",
			  (unsigned)c->who.uid);
		return sock_out_flush(c);
	}
	seen = sysctl_entry_changes(e);
	sock_out_fmt(c, "OK %" PRIu64 "\n", seen);
	ret = sock_out_flush(c);
	last_sent = rcs_now_ms();
	while (!ret && !sock_stopping(s)) {
		int64_t r = sysctl_entry_wait(e, seen, WATCH_SLICE_MS);

		if (r == -ENOENT) {
			sock_reply_err(c, -ENOENT, path, strlen(path), "entry removed");
			sock_out_flush(c);
			break;
		}
		if (r >= 0) {
			seen = (uint64_t)r;
			sock_out_add(c, "CHANGED ", 8);
			sock_out_escaped(c, path, strlen(path), true);
			sock_out_fmt(c, " %" PRIu64 "\n", seen);
			ret = sock_out_flush(c);
			last_sent = rcs_now_ms();
		}
		if (!ret)
			ret = sock_watch_idle(c, &last_sent, &seen);
	}
	sock_watch_put(c);
	sysctl_entry_put(e);
	return 1;
}

/* Handle one request line; non-zero ends the connection. */
int sock_handle_line(struct conn *c, const char *line, size_t len)
{
	struct sock_request req;
	const char *why;
	char path[SYSCTL_SOCKET_LINE_MAX];
	int err;

	if (c->batch.count)
		return sock_batch_line(c, line, len);
	err = sock_parse_request(line, len, &req, &why);
	if (err) {
		sock_reply_err(c, err, NULL, 0, "%s", why);
		return sock_out_flush(c) || err == -E2BIG;
	}
	sock_count(&c->requests[req.verb]);
	memcpy(path, req.path ? req.path : "", req.path_len);
	path[req.path_len] = '\0';
	switch (req.verb) {
	case SOCK_GET: do_get(c, path); break;
	case SOCK_SET: do_set(c, path, req.value, req.value_len, NULL, SYSCTL_ORIGIN_CLIENT); break;
	case SOCK_APPLY: do_set(c, path, req.value, req.value_len, NULL, sock_apply_origin(c)); break;
	case SOCK_SETIF:
		do_set(c, path, req.value, req.value_len, &req.expected, SYSCTL_ORIGIN_CLIENT);
		break;
	case SOCK_GENERATION: do_generation(c, path); break;
	case SOCK_LIST: do_list(c, path); break;
	case SOCK_DUMP: do_dump(c, path); break;
	case SOCK_DESCRIBE: do_describe(c, path); break;
	case SOCK_AUDIT: do_audit(c, req.after_seq); break;
	case SOCK_RESET: do_reset(c, path); break;
	case SOCK_STATUS:
	case SOCK_METRICS: sock_do_report(c, req.verb); break;
	case SOCK_WATCH: return do_watch(c, path);
	case SOCK_MSET:
	case SOCK_MAPPLY: sock_do_mset(c, &req); return 0; /* answered after its items */
	case SOCK_MGET: sock_do_mget(c, &req); break;
	case SOCK_MWATCH: return sock_do_mwatch(c, &req);
	}
	return sock_out_flush(c);
}
