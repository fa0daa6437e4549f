/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The store's commits (persist.h): group commit and compaction; the value
 * of an entry as a commit reads it, and how a refusal of it is worded.
 *
 * A writer puts its record into the open batch and waits. The first
 * writer that finds no flush running leads: it closes the batch, appends
 * it with one write and one fdatasync outside the lock, and wakes the
 * batch's writers with the result; those that came meanwhile fill the next
 * batch. With many writers the leader first waits, at most as long as the
 * last sync took, until as many writers joined as the last batch had, so
 * the batches do not split into two halves that take turns. A failed
 * append, or a batch the kept map cannot take (out of memory: all of it
 * goes in or none), is cut off again (ftruncate, fdatasync) before its
 * writers hear, so a refused record never comes back; when even that
 * fails the journal is compacted at once, or by the next leader before it
 * appends, which writes only what was acknowledged.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "persist_int.h"

/* A journal at most this much bigger than twice what is kept is left alone. */
#define COMPACT_SLACK (1u << 20)

static ssize_t real_pwrite(void *arg, int fd, const void *buf, size_t len, off_t off)
{
	(void)arg;
	return pwrite(fd, buf, len, off);
}

static int real_fsync(void *arg, int fd)
{
	(void)arg;
	return fdatasync(fd);
}

static int real_rename(void *arg, int dirfd, const char *from, const char *to)
{
	(void)arg;
	return renameat(dirfd, from, dirfd, to);
}

static int real_close(void *arg, int fd)
{
	(void)arg;
	return close(fd);
}

static int real_truncate(void *arg, int fd, off_t len)
{
	(void)arg;
	return ftruncate(fd, len);
}

static ssize_t real_read(void *arg, int fd, void *buf, size_t len)
{
	(void)arg;
	return read(fd, buf, len);
}

void persist_io_defaults(struct persist_io *io)
{
	if (!io->pwrite)
		io->pwrite = real_pwrite;
	if (!io->fsync)
		io->fsync = real_fsync;
	if (!io->rename)
		io->rename = real_rename;
	if (!io->close)
		io->close = real_close;
	if (!io->truncate)
		io->truncate = real_truncate;
	if (!io->read)
		io->read = real_read;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A short write is an error: what was written is cut off by the caller. */
static int write_at(struct persist *p, int fd, const char *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t n = p->io.pwrite(p->io.arg, fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOSPC;
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/*
 * The items of a batch (or of one commit record) on their way into
 * p->map: all of them, or none. Of the items naming one key only the last
 * counts (a DROP and a SET of it may share a batch), so everything they
 * need is allocated first and the map then changes without failing.
 */
struct staged {
	struct journal_rec rec;
	struct kept *k; /* its key in p->map once allocated (NULL: a DROP of a key not kept) */
	char *copy;     /* a SET's value, for kept_adopt() */
	size_t seq;     /* its place: of one key's items the last wins */
	bool added;     /* its key was added (empty) for it: dropped again on failure */
};

struct stage {
	struct staged *s;
	size_t n, cap;
};

static int stage_item(const struct journal_rec *r, void *arg)
{
	struct stage *st = arg;

	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 16;
		struct staged *s = realloc(st->s, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		st->s = s;
		st->cap = cap;
	}
	st->s[st->n] = (struct staged){ .rec = *r, .seq = st->n };
	st->n++;
	return 0;
}

/* A batch's record: only what persist_commit() encodes (no epoch). */
static int stage_rec(const struct journal_rec *r, void *arg)
{
	if (r->op == JOURNAL_COMMIT)
		return journal_commit_items(r, stage_item, arg);
	return r->op == JOURNAL_EPOCH ? -EINVAL : stage_item(r, arg);
}

/* Everything the items need allocated (values copied, new keys added): the map can then not fail. */
static int stage_alloc(struct persist *p, struct stage *st)
{
	for (size_t i = 0; i < st->n; i++) {
		struct staged *s = &st->s[i];
		const struct journal_rec *r = &s->rec;

		s->k = kept_find(&p->map, r->key, r->key_len);
		if (r->op != JOURNAL_SET)
			continue;
		s->copy = malloc(r->value_len ? r->value_len : 1);
		if (!s->copy)
			return -ENOMEM;
		if (r->value_len)
			memcpy(s->copy, r->value, r->value_len);
		if (!s->k) {
			if (kept_set(&p->map, r->key, r->key_len, "", 0, r->origin, r->time))
				return -ENOMEM;
			s->k = kept_find(&p->map, r->key, r->key_len);
			s->added = true;
		}
	}
	return 0;
}

/* By key (its node: nothing is dropped while staging), then in order. */
static int by_key_then_seq(const void *a, const void *b)
{
	const struct staged *x = a, *y = b;

	if (x->k != y->k)
		return (uintptr_t)x->k < (uintptr_t)y->k ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The staged items into p->map (@err: staging failed); 0 or -ENOMEM with the map as it was. */
static int take_staged(struct persist *p, struct stage *st, int err)
{
	if (!err)
		err = stage_alloc(p, st);
	if (err) {
		for (size_t i = 0; i < st->n; i++) {
			if (st->s[i].added)
				kept_drop(&p->map, st->s[i].rec.key, st->s[i].rec.key_len);
			free(st->s[i].copy);
		}
		free(st->s);
		return err;
	}
	if (st->n > 1)
		qsort(st->s, st->n, sizeof(*st->s), by_key_then_seq);
	for (size_t i = 0; i < st->n; i++) {
		struct staged *s = &st->s[i];

		if (!s->k || (i + 1 < st->n && st->s[i + 1].k == s->k))
			free(s->copy); /* nothing to drop, or a later item of its key wins */
		else if (s->rec.op == JOURNAL_DROP)
			kept_drop(&p->map, s->rec.key, s->rec.key_len);
		else
			kept_adopt(&p->map, s->k, s->copy, s->rec.value_len, s->rec.origin,
				   s->rec.time);
	}
	free(st->s);
	return 0;
}

/*
 * A commit record into p->map whole or not at all (-ENOMEM, the map as it
 * was), so a compaction never writes half of a commit.
 */
static int apply_commit(struct persist *p, const struct journal_rec *c)
{
	struct stage st = { 0 };

	return take_staged(p, &st, journal_commit_items(c, stage_item, &st));
}

/*
 * The records of a batch just appended into p->map whole or not at all:
 * its writers are told one outcome, and a refused one must not stay in
 * the map for a compaction to make durable.
 */
static int apply_batch(struct persist *p, const struct journal_buf *b)
{
	struct stage st = { 0 };
	size_t good;
	int err = journal_parse(b->data, b->len, stage_rec, &st, &good);

	if (!err && good != b->len)
		err = -EBADMSG; /* our own encoding: cannot happen */
	return take_staged(p, &st, err);
}

int persist_apply_rec(const struct journal_rec *r, void *arg)
{
	struct persist *p = arg;

	switch (r->op) {
	case JOURNAL_SET:
		return kept_set(&p->map, r->key, r->key_len, r->value, r->value_len, r->origin, r->time);
	case JOURNAL_DROP:
		kept_drop(&p->map, r->key, r->key_len);
		return 0;
	case JOURNAL_EPOCH:
		if (journal_epoch(r) > p->epoch)
			p->epoch = journal_epoch(r);
		return 0;
	case JOURNAL_COMMIT:
		return apply_commit(p, r);
	}
	return 0;
}

/* A new temporary file: a random name, O_EXCL, so nothing planted is opened. */
static int open_temp(struct persist *p, char *name, size_t size)
{
	for (int tries = 0; tries < 100; tries++) {
		unsigned int r;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return -EIO;
		snprintf(name, size, ".%s.tmp-%08x", p->name, r);
		fd = openat(p->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

static int encode_all(struct persist *p, const struct kept_map *m, struct journal_buf *b)
{
	char epoch[8];
	struct journal_rec r = { .op = JOURNAL_EPOCH, .time = time(NULL), .value = epoch,
				 .value_len = sizeof(epoch) };
	int err = journal_put_magic(b);

	journal_epoch_bytes(p->epoch, epoch);
	if (!err)
		err = journal_put(b, &r);
	for (size_t i = 0; i < m->n && !err; i++) {
		const struct kept *k = m->all[i];

		r = (struct journal_rec){ .op = JOURNAL_SET, .origin = k->origin, .time = k->time,
					  .key = k->key, .key_len = k->key_len,
					  .value = k->value, .value_len = k->len };
		err = journal_put(b, &r);
	}
	/* Never a file the next start refuses to read. */
	return !err && b->len > p->file_max ? -EFBIG : err;
}

/* The new file in place of the journal; p->fd then writes to it. */
static int install(struct persist *p, const char *tmp, off_t size)
{
	int fd, err = 0;

	if (p->io.rename(p->io.arg, p->dirfd, tmp, p->name) < 0)
		return -errno;
	/* Renamed: what we append from now on goes to the new file, which must stay. */
	if (p->io.fsync(p->io.arg, p->dirfd) < 0)
		err = -errno;
	fd = openat(p->dirfd, p->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		p->broken = true;
		return -errno;
	}
	if (p->fd >= 0)
		close(p->fd); /* everything in it is in the new file too */
	p->fd = fd;
	p->size = p->compacted = size;
	p->broken = err != 0;
	return err;
}

int persist_compact(struct persist *p, const struct kept_map *m)
{
	struct journal_buf b = { 0 };
	char tmp[NAME_MAX + 32];
	int fd, err = encode_all(p, m, &b);

	if (err) {
		journal_buf_free(&b);
		return err;
	}
	fd = open_temp(p, tmp, sizeof(tmp));
	if (fd < 0) {
		journal_buf_free(&b);
		return fd;
	}
	err = write_at(p, fd, b.data, b.len, 0);
	if (!err && p->io.fsync(p->io.arg, fd) < 0)
		err = -errno;
	if (p->io.close(p->io.arg, fd) < 0 && !err)
		err = -errno;
	if (!err)
		err = install(p, tmp, (off_t)b.len);
	if (err)
		unlinkat(p->dirfd, tmp, 0); /* gone already when the rename went through */
	if (!err)
		p->stats.compactions++;
	journal_buf_free(&b);
	return err;
}

/*
 * The journal's end back at p->size, durably, so a refused batch never
 * comes back; when even that fails, a compaction of p->map (which holds
 * only what was acknowledged) replaces the file, or the next leader
 * compacts first. Called by the leader, p->lock not held.
 */
static void cut_off(struct persist *p)
{
	int cut, again;

	if (p->io.truncate(p->io.arg, p->fd, p->size) == 0 && p->io.fsync(p->io.arg, p->fd) == 0)
		return;
	cut = -errno;
	again = persist_compact(p, &p->map);
	if (again) {
		rlog(LOG_ERR, "%s: cannot cut a refused write off the journal: %s, nor compact it: %s "
		     "(compacting again at the next write and at exit)", p->path, strerror(-cut),
		     strerror(-again));
		p->broken = true;
	}
}

/*
 * The batch's bytes at the journal's end, durable; a failure leaves the end
 * where it was. A file that would pass p->file_max is compacted first,
 * and the batch refused (-EFBIG) when it would pass it even then.
 */
static int append(struct persist *p, const struct journal_buf *b)
{
	/* Compacted already since the last append: compacting again gains nothing. */
	bool over = (size_t)p->size + b->len > p->file_max && p->size > p->compacted;
	int err = p->broken || p->fd < 0 || over ? persist_compact(p, &p->map) : 0;

	if (err)
		return err;
	if ((size_t)p->size + b->len > p->file_max)
		return -EFBIG;
	err = write_at(p, p->fd, b->data, b->len, p->size);
	if (!err && p->io.fsync(p->io.arg, p->fd) < 0)
		err = -errno;
	if (err)
		cut_off(p);
	return err;
}

/* Under p->lock, as the leader: more writers for @b, when the last batch had more. */
static void gather(struct persist *p, struct batch *b)
{
	int64_t deadline = now_ns() + (p->last_sync_ns < 2000000 ? p->last_sync_ns : 2000000);
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += deadline - now_ns();
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	while (b->nwriters < p->last_batch && now_ns() < deadline)
		if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT)
			break;
}

const double persist_latency_le[PERSIST_LATENCY_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1, INFINITY
};

/* Under p->lock: one batch's outcome and its append-and-sync time in p->stats. */
static void count_batch(struct persist *p, int err, int64_t ns)
{
	struct persist_stats *st = &p->stats;

	if (err) {
		st->failures++;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &st->last_commit);
	st->latency_sum_ns += (uint64_t)ns;
	for (int i = 0; i < PERSIST_LATENCY_BUCKETS; i++)
		if ((double)ns / 1e9 <= persist_latency_le[i])
			st->latency[i]++;
}

/* Under p->lock: flushes @b (the open batch), which then is done. */
static void lead(struct persist *p, struct batch *b)
{
	bool compact;
	int64_t t0;
	int err;

	p->flushing = true;
	if (b->nwriters > 1 || p->last_batch > 1)
		gather(p, b);
	p->open = NULL;
	pthread_mutex_unlock(&p->lock);
	t0 = now_ns();
	err = append(p, &b->buf);
	pthread_mutex_lock(&p->lock);
	p->last_sync_ns = now_ns() - t0;
	if (!err && (err = apply_batch(p, &b->buf)) != 0) {
		/* Durable, but refused (-ENOMEM): out of the file again before a writer hears it. */
		pthread_mutex_unlock(&p->lock);
		cut_off(p);
		pthread_mutex_lock(&p->lock);
	}
	count_batch(p, err, p->last_sync_ns);
	if (!err) {
		p->size += (off_t)b->buf.len;
		p->stats.syncs++, p->stats.batches++, p->stats.records += b->nvalues;
	}
	b->err = err;
	b->done = true;
	p->last_batch = b->nwriters;
	pthread_cond_broadcast(&p->cond);
	compact = !err && (size_t)p->size > 2 * (p->map.bytes + 24 * p->map.n) + COMPACT_SLACK;
	if (compact) {
		pthread_mutex_unlock(&p->lock);
		err = persist_compact(p, &p->map);
		if (err)
			rlog(LOG_WARNING, "%s: cannot compact the journal: %s (it keeps growing)", p->path,
			     strerror(-err));
		pthread_mutex_lock(&p->lock);
	}
	p->flushing = false;
	pthread_cond_broadcast(&p->cond);
}

static int count_item(const struct journal_rec *r, void *arg)
{
	(void)r;
	++*(uint64_t *)arg;
	return 0;
}

/* The values a commit record holds, for persist_stats.records. */
static uint64_t count_items(const struct journal_rec *r)
{
	uint64_t n = 0;

	journal_commit_items(r, count_item, &n);
	return n;
}

int persist_commit(struct persist *p, const struct journal_rec *r)
{
	struct batch *b;
	int err;

	if (p->unread)
		return p->unread; /* the file was not read: a compaction would drop what it keeps */
	pthread_mutex_lock(&p->lock);
	if (!p->open && !(p->open = calloc(1, sizeof(*p->open)))) {
		pthread_mutex_unlock(&p->lock);
		return -ENOMEM;
	}
	b = p->open;
	err = journal_put(&b->buf, r);
	if (err) {
		pthread_mutex_unlock(&p->lock);
		return err;
	}
	b->nwriters++;
	b->nvalues += r->op == JOURNAL_COMMIT ? count_items(r) : 1;
	if (p->flushing)
		pthread_cond_broadcast(&p->cond); /* a gathering leader counts us */
	while (!b->done) {
		if (!p->flushing && p->open == b)
			lead(p, b);
		else
			pthread_cond_wait(&p->cond, &p->lock);
	}
	err = b->err;
	if (--b->nwriters == 0) {
		journal_buf_free(&b->buf);
		free(b);
	}
	pthread_mutex_unlock(&p->lock);
	return err;
}

/* ---- a value as the store keeps it, and the words of its refusals ---- */

int persist_read_value(struct sysctl_entry *e, char **out, size_t *out_len)
{
	return sysctl_entry_read_whole(e, 0, PERSIST_VALUE_MAX, out, out_len);
}

const char *persist_errname(int err, char *buf, size_t size)
{
	const char *name = strerrorname_np(-err);

	if (name)
		return name;
	snprintf(buf, size, "E%d", -err);
	return buf;
}

void persist_explain(struct persist *p, const char *key, int err, char *buf, size_t size)
{
	struct sysctl_entry *e = sysctl_lookup(p->tree, key);
	char num[16];
	int n = snprintf(buf, size, "%s: ", persist_errname(err, num, sizeof(num)));

	if (n < 0 || (size_t)n >= size)
		return;
	if (!e || sysctl_entry_explain(e, err, buf + n, size - (size_t)n) < 0)
		snprintf(buf + n, size - (size_t)n, "%s", !e && err == -ENOENT ?
			 "no such entry (its tunable is not declared)" : strerror(-err));
	sysctl_entry_put(e);
}
