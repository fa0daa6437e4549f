/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's requests of several entries (rcustring-socket(7)):
 * MSET and MAPPLY are one sysctl_commit() of their item lines (a refusal
 * names the item and nothing is written), MGET answers from one
 * sysctl_snapshot(), and MWATCH reports each commit of the watched
 * entries as one EVENT line whose values come from one snapshot. Every
 * path is checked for the peer as GET and SET check it; the commit audits
 * the peer. The values of one reply are bounded together (MULTI_MAX).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/deadline.h"
#include "rcustring/sysctl_commit.h"
#include "rcustring/sysctl_socket.h"
#include "socket_conn.h"
#include "socket_proto.h"
#include "sysctl/watch.h"

#define WATCH_SLICE_MS 200 /* how often a watcher checks for stop and hang-up */
#define VALUE_START 4096
#define MULTI_MAX (1 << 20) /* the values of one MGET or EVENT, together */

/* ---- MSET, MAPPLY ---- */

void sock_do_mset(struct conn *c, const struct sock_request *req)
{
	struct sock_batch *b = &c->batch;

	*b = (struct sock_batch){ .verb = req->verb, .count = req->count };
}

void sock_batch_free(struct conn *c)
{
	struct sock_batch *b = &c->batch;

	for (size_t i = 0; i < b->got; i++)
		free(b->line[i]);
	memset(b, 0, sizeof(*b));
}

/* Keep item line @len bytes of @line, or note why it is refused. */
static void batch_keep(struct sock_batch *b, const char *line, size_t len)
{
	struct sock_item it;
	const char *why;
	size_t i = b->got;
	int err = sock_parse_item(line, len, &it, &why);
	char *copy = err ? NULL : malloc(it.path_len + 1 + it.value_len + 1);

	if (!err && !copy) {
		err = -ENOMEM;
		why = "out of memory";
	}
	if (err) {
		if (!b->err) {
			b->err = err;
			b->why = why;
			b->bad = i;
		}
		b->line[i] = NULL;
	} else {
		memcpy(copy, it.path, it.path_len);
		copy[it.path_len] = '\0';
		memcpy(copy + it.path_len + 1, it.value, it.value_len);
		copy[it.path_len + 1 + it.value_len] = '\0';
		b->line[i] = copy;
		b->path_len[i] = it.path_len;
		b->value_len[i] = it.value_len;
	}
	b->got++;
}

/* Whether item @i names the entry of another item: which value would win? */
static bool named_twice(struct conn *c, size_t i)
{
	struct sysctl_tree *tree = c->server->tree;
	struct sysctl_entry *e = sysctl_lookup(tree, c->batch.line[i]), *o;
	bool twice = false;

	for (size_t j = 0; e && j < c->batch.count && !twice; j++) {
		if (j == i)
			continue;
		o = sysctl_lookup(tree, c->batch.line[j]);
		twice = o == e;
		sysctl_entry_put(o);
	}
	sysctl_entry_put(e);
	return twice;
}

/* The refusal of item @i: "ERR <n> <NAME> <path>: <why> (item i of n; nothing written)". */
static void batch_refused(struct conn *c, int err, size_t i)
{
	struct sock_batch *b = &c->batch;
	const char *path = b->line[i];
	char why[160];

	if (err == -EACCES)
		snprintf(why, sizeof(why), "permission denied");
	else if (err == -EOPNOTSUPP)
		snprintf(why, sizeof(why), "cannot be part of a commit (its own handler or a "
					   "hooked table): set it alone");
	else if (err == -EINVAL && named_twice(c, i))
		snprintf(why, sizeof(why), "named twice in one commit");
	else
		sock_tree_why(c, err, path, why, sizeof(why));
	sock_reply_err(c, err, path, b->path_len[i], "%s (item %zu of %zu; nothing written)", why,
		       i + 1, b->count);
}

/* All item lines are in: one commit, for the peer (MAPPLY: sock_apply_origin()'s origin). */
static void batch_commit(struct conn *c)
{
	struct sock_batch *b = &c->batch;
	struct sysctl_commit_item items[SYSCTL_COMMIT_MAX];
	enum sysctl_origin origin;
	size_t failed = 0;
	int err;

	if (b->err) {
		sock_reply_err(c, b->err, NULL, 0, "item %zu of %zu: %s (nothing written)", b->bad + 1,
			       b->count, b->why);
		return;
	}
	for (size_t i = 0; i < b->count; i++) {
		items[i].path = b->line[i];
		items[i].value = b->line[i] + b->path_len[i] + 1;
		items[i].len = b->value_len[i];
		/* As SET: an empty value is a lone newline (a zero-byte write changes nothing). */
		if (!items[i].len) {
			items[i].value = "\n";
			items[i].len = 1;
		}
	}
	origin = b->verb == SOCK_MAPPLY ? sock_apply_origin(c) : SYSCTL_ORIGIN_CLIENT;
	err = sysctl_commit(c->server->tree, items, b->count, &c->who, origin, &failed);
	if (err)
		batch_refused(c, err, failed < b->count ? failed : 0);
	else
		sock_out_fmt(c, "OK %zu\n", b->count);
}

int sock_batch_line(struct conn *c, const char *line, size_t len)
{
	batch_keep(&c->batch, line, len);
	if (c->batch.got < c->batch.count)
		return 0;
	batch_commit(c);
	sock_batch_free(c);
	return sock_out_flush(c);
}

/* ---- MGET and the values of an EVENT ---- */

struct multi {
	size_t n;
	char *path[SYSCTL_COMMIT_MAX]; /* NUL-terminated, in @paths */
	size_t path_len[SYSCTL_COMMIT_MAX];
	struct sysctl_snapshot_item item[SYSCTL_COMMIT_MAX];
	char paths[SYSCTL_SOCKET_LINE_MAX];
};

/* The paths of an MGET or MWATCH request into @m. */
static void multi_paths(struct multi *m, const struct sock_request *req)
{
	const char *list = req->list, *p;
	size_t left = req->list_len, plen, off = 0;

	m->n = 0;
	while (m->n < SYSCTL_COMMIT_MAX && sock_next_path(&list, &left, &p, &plen)) {
		memcpy(m->paths + off, p, plen);
		m->paths[off + plen] = '\0';
		m->path[m->n] = m->paths + off;
		m->path_len[m->n++] = plen;
		off += plen + 1;
	}
}

static void multi_free_values(struct multi *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->item[i].buf);
		m->item[i].buf = NULL;
		m->item[i].size = 0;
	}
}

/*
 * One snapshot of the items @pick[0..@k) of @m (their values, the final
 * newline dropped): a value too big for its buffer grows it and the whole
 * snapshot is taken again, the buffers of one reply bounded together by
 * MULTI_MAX. Return 0, or -errno with *@failed the index in @pick.
 */
static int multi_snapshot(struct sysctl_tree *tree, struct multi *m, const size_t *pick,
			  size_t k, size_t *failed)
{
	struct sysctl_snapshot_item it[SYSCTL_COMMIT_MAX], *s;
	size_t total;
	char *grown;
	int err;

	for (;;) {
		total = 0;
		for (size_t j = 0; j < k; j++) {
			s = &m->item[pick[j]];
			if (!s->buf) {
				s->buf = malloc(VALUE_START);
				s->size = VALUE_START;
			}
			if (!s->buf) {
				*failed = j;
				return -ENOMEM;
			}
			total += s->size;
			it[j] = (struct sysctl_snapshot_item){ .path = m->path[pick[j]], .buf = s->buf,
							       .size = s->size };
		}
		err = sysctl_snapshot(tree, it, k, failed);
		if (err != -ERANGE)
			break;
		s = &m->item[pick[*failed]];
		if (total + s->size > MULTI_MAX)
			return -EFBIG;
		grown = realloc(s->buf, s->size * 2);
		if (!grown)
			return -ENOMEM;
		s->buf = grown;
		s->size *= 2;
	}
	for (size_t j = 0; j < k && !err; j++) {
		s = &m->item[pick[j]];
		s->len = it[j].len;
		if (s->len > 0 && s->buf[s->len - 1] == '\n')
			s->buf[--s->len] = '\0';
	}
	return err;
}

/* Check every path for read permission as GET does; on error the reply is built. */
static int multi_open(struct conn *c, struct multi *m, struct sysctl_entry **e)
{
	for (size_t i = 0; i < m->n; i++) {
		e[i] = sock_open_entry(c, m->path[i], R_OK);
		if (!e[i]) {
			while (i--)
				sysctl_entry_put(e[i]);
			return -EACCES;
		}
	}
	return 0;
}

static void multi_put(struct sysctl_entry **e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sysctl_entry_put(e[i]);
}

void sock_do_mget(struct conn *c, const struct sock_request *req)
{
	struct sysctl_entry *e[SYSCTL_COMMIT_MAX];
	size_t pick[SYSCTL_COMMIT_MAX], failed = 0;
	struct multi *m = calloc(1, sizeof(*m));
	int err;

	if (!m) {
		sock_reply_err(c, -ENOMEM, NULL, 0, "out of memory");
		return;
	}
	multi_paths(m, req);
	if (multi_open(c, m, e) == 0) {
		for (size_t i = 0; i < m->n; i++)
			pick[i] = i;
		err = multi_snapshot(c->server->tree, m, pick, m->n, &failed);
		multi_put(e, m->n);
		if (err == -EFBIG)
			sock_reply_err(c, err, NULL, 0, "values longer than %d bytes together", MULTI_MAX);
		else if (err)
			sock_reply_tree_err(c, err, m->path[failed]);
		for (size_t i = 0; i < m->n && !err; i++) {
			sock_count(&c->reads);
			sock_out_add(c, "VALUE ", 6);
			sock_out_escaped(c, m->path[i], m->path_len[i], true);
			sock_out_add(c, " ", 1);
			sock_out_escaped(c, m->item[i].buf, (size_t)m->item[i].len, false);
			sock_out_add(c, "\n", 1);
		}
		if (!err)
			sock_out_fmt(c, "OK %zu\n", m->n);
	}
	multi_free_values(m);
	free(m);
}

/* ---- MWATCH ---- */

struct mwatch {
	struct multi m;
	struct sysctl_entry *e[SYSCTL_COMMIT_MAX];
	uint64_t seen[SYSCTL_COMMIT_MAX], now[SYSCTL_COMMIT_MAX];
};

/*
 * "EVENT <k> <path> <changes> <value>..." for the entries whose counters
 * moved from @w->seen to @w->now (all of them when @all): one commit's
 * entries together, their values from one snapshot (as of that commit or
 * a later one). Return 0, or -errno with the reply built (end the watch).
 */
static int mwatch_event(struct conn *c, struct mwatch *w, bool all)
{
	size_t pick[SYSCTL_COMMIT_MAX] = { 0 }, k = 0, failed = 0;
	int err;

	for (size_t i = 0; i < w->m.n; i++)
		if (all || w->now[i] != w->seen[i])
			pick[k++] = i;
	if (!k)
		return 0;
	err = multi_snapshot(c->server->tree, &w->m, pick, k, &failed);
	if (err) {
		if (err == -EFBIG)
			sock_reply_err(c, err, NULL, 0, "values longer than %d bytes together", MULTI_MAX);
		else
			sock_reply_tree_err(c, err, w->m.path[pick[failed]]);
		return err;
	}
	sock_out_fmt(c, "EVENT %zu", k);
	for (size_t j = 0; j < k; j++) {
		struct sysctl_snapshot_item *s = &w->m.item[pick[j]];

		sock_out_add(c, " ", 1);
		sock_out_escaped(c, w->m.path[pick[j]], w->m.path_len[pick[j]], true);
		sock_out_fmt(c, " %" PRIu64 " ", w->now[pick[j]]);
		sock_out_escaped(c, s->buf, (size_t)s->len, true);
		w->seen[pick[j]] = w->now[pick[j]];
	}
	sock_out_add(c, "\n", 1);
	return 0;
}

/* Stream events until the peer goes, the server stops or an entry is removed. */
static void mwatch_loop(struct conn *c, struct mwatch *w)
{
	struct sysctl_socket *s = c->server;
	int64_t last_sent = rcs_now_ms();
	size_t gone = 0;
	int ret = 0;

	while (!ret && !sock_stopping(s)) {
		int r = rcs_entries_wait(w->e, w->m.n, w->seen, w->now, WATCH_SLICE_MS, &gone);

		if (r == -ENOENT) {
			sock_reply_err(c, -ENOENT, w->m.path[gone], w->m.path_len[gone], "entry removed");
			sock_out_flush(c);
			break;
		}
		if (r == 0) {
			if (mwatch_event(c, w, false)) {
				sock_out_flush(c);
				break;
			}
			ret = sock_out_flush(c);
			last_sent = rcs_now_ms();
		}
		if (!ret)
			ret = sock_watch_idle(c, &last_sent, NULL);
	}
}

int sock_do_mwatch(struct conn *c, const struct sock_request *req)
{
	struct mwatch *w = calloc(1, sizeof(*w));
	size_t gone;

	if (!w) {
		sock_reply_err(c, -ENOMEM, NULL, 0, "out of memory");
		return sock_out_flush(c);
	}
	multi_paths(&w->m, req);
	if (multi_open(c, &w->m, w->e)) {
		free(w);
		return sock_out_flush(c);
	}
	if (!sock_watch_get(c)) {
		multi_put(w->e, w->m.n);
		free(w);
		sock_reply_err(c, -EAGAIN, NULL, 0, "too many watches by uid %u", (unsigned)c->who.uid);
		return sock_out_flush(c);
	}
	/* Counters no entry has: the wait returns at once with them all, as of one commit. */
	memset(w->seen, 0xff, sizeof(w->seen));
	if (rcs_entries_wait(w->e, w->m.n, w->seen, w->now, 0, &gone) == 0) {
		sock_out_fmt(c, "OK %zu\n", w->m.n);
		if (mwatch_event(c, w, true) == 0 && sock_out_flush(c) == 0)
			mwatch_loop(c, w);
		else
			sock_out_flush(c);
	} else {
		sock_reply_err(c, -ENOENT, w->m.path[gone], w->m.path_len[gone], "entry removed");
		sock_out_flush(c);
	}
	sock_watch_put(c);
	multi_put(w->e, w->m.n);
	multi_free_values(&w->m);
	free(w);
	return 1;
}
