/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the store's two files share (persist.c: opening, loading,
 * applying, forgetting; persist_commit.c: group commit and compaction).
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
#include "persist.h"

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
	uint64_t epoch;
	unsigned int last_batch; /* writers in the last batch */
	int64_t last_sync_ns;    /* how long its append and fdatasync took */
	struct persist_stats stats;
	struct persist_io io;
};

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
