/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the store's files share (persist.c: opening, loading, applying,
 * forgetting; persist_migrate.c: a text state file of rcusysd 0.1;
 * persist_commit.c: group commit and compaction, and the values commits
 * read). Each uses only those after it, so the three are no circle.
 * Internal to rcusysd.
 */
#ifndef RCUSYSD_PERSIST_INT_H
#define RCUSYSD_PERSIST_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "journal.h"
#include "kept.h"
#include "log.h"
#include "persist.h"

/* The longest value the store keeps: what the tree saves for a rollback too. */
#define PERSIST_VALUE_MAX (16u << 20)

/* Records that go to disk together; each writer in it waits for @done. */
struct batch {
	struct journal_buf buf;
	unsigned int nwriters;
	uint64_t nvalues; /* the values its records hold: each item of a commit counts */
	bool done;
	int err;
};

struct persist {
	struct sysctl_tree *tree;
	char *path, *name;
	int dirfd, lockfd, fd; /* fd: the journal, -1 until loaded */
	bool hooked;
	bool check; /* persist_open_check(): read and apply, write nothing, take no lock */
	int unread; /* persist_apply() could not read the file: never write it */
	pthread_mutex_t lock; /* everything below */
	pthread_cond_t cond;  /* a batch done, a flush over, a writer joined */
	struct kept_map map;  /* what the journal holds, durably */
	struct batch *open;   /* collecting writers; NULL: none yet */
	bool flushing;        /* a leader owns the file (append, compaction) */
	bool broken;          /* the file may hold a refused batch: compact first */
	off_t size;           /* bytes of the journal that hold acknowledged records */
	off_t compacted;      /* its size when last compacted */
	size_t file_max;      /* PERSIST_FILE_MAX, less in tests */
	uint64_t epoch;
	unsigned int last_batch; /* writers in the last batch */
	int64_t last_sync_ns;    /* how long its append and fdatasync took */
	struct persist_stats stats;
	struct persist_io io;
	struct log_limit *log;     /* refused writes' lines: the daemon's, or own_log */
	struct log_limit own_log;
};

/* persist_commit.c: a value as the store keeps it, and the words of its refusals */
/*
 * @e's value as the store keeps it: the bytes a read gives, exactly (a
 * write of them stores the same value: "cat f > f"). -EFBIG for a value
 * longer than PERSIST_VALUE_MAX, so the write that made it is refused,
 * not lost.
 */
int persist_read_value(struct sysctl_entry *e, char **out, size_t *out_len);
/*
 * "ENAME: reason" for @err from a write of @key into @buf, as the control
 * socket words it: the errno's name, then the limit where one applies
 * (sysctl_entry_explain(): "value longer than 127 bytes", "invalid value
 * (integers 0..200)"), else strerror().
 */
void persist_explain(struct persist *p, const char *key, int err, char *buf, size_t size);
/* The name of @err (negative): "ENOSPC", or "E%d" in @buf for one glibc does not name. */
const char *persist_errname(int err, char *buf, size_t size);

/* persist_migrate.c */
/*
 * A file that does not start with the journal's magic: migrated when it
 * is wholly a text state file (no NUL byte, every line "key = value", a
 * comment or blank), else damage (-EBADMSG, logged with the byte and the
 * reason; nothing applied, the file left as it is). Return: 0 or a
 * negative errno. Context: persist_apply(), one thread.
 */
int persist_migrate(struct persist *p, const char *text, size_t len);

/* persist_commit.c */
/*
 * @r appended to the open batch, made durable with it (leading the flush
 * when no one does), applied to p->map. Call without p->lock.
 * Return: 0 or the batch's negative errno (nothing of it kept).
 */
int persist_commit(struct persist *p, const struct journal_rec *r);
/*
 * Writes @m, with the epoch, as the whole journal (temporary file,
 * fsync, close, rename, directory fsync) and reopens it. Call with
 * p->flushing set by the caller and p->lock not held. Return: 0 or a
 * negative errno (the old journal stays; p->broken when it may not).
 */
int persist_compact(struct persist *p, const struct kept_map *m);
/* Applies a journal record to p->map (journal_rec_fn; p->lock held or at start). */
int persist_apply_rec(const struct journal_rec *r, void *arg);
/* The real system calls where @io leaves NULLs. */
void persist_io_defaults(struct persist_io *io);

#endif
