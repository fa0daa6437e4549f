/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysctl_snapshot(): several entries read as of one commit. The tree's
 * commit sequence (commit.c) is odd while a sysctl_commit() stores its
 * values; a reader copies every value between two reads of it and copies
 * again when it changed, as a seqcount reader does. The entries are found
 * once, outside the loop, so a retry costs the copies alone; the reader
 * takes no lock of the tree and a writer never waits for it.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#include "rcustring/sysctl_commit.h"
#include "entry.h"
#include "tree.h"

/* A commit stores its values now: let it finish (it may wait for a grace period). */
static uint64_t seq_begin(const uint64_t *seq)
{
	uint64_t s;

	while ((s = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) & 1)
		sched_yield();
	return s;
}

/* One pass: every value copied, as sysctl_get() copies it. */
static int copy_all(struct sysctl_entry **e, struct sysctl_snapshot_item *items, size_t n,
		    size_t *failed)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = items[i].size;
		off_t off = 0;
		int err = sysctl_entry_read(e[i], items[i].buf, &len, &off);

		if (!err && len >= items[i].size)
			err = -ERANGE;
		if (err) {
			*failed = i;
			return err;
		}
		items[i].buf[len] = '\0';
		items[i].len = (ssize_t)len;
	}
	return 0;
}

static int find_all(struct sysctl_tree *tree, struct sysctl_entry **e,
		    const struct sysctl_snapshot_item *items, size_t n, size_t *found,
		    size_t *failed)
{
	int err;

	for (size_t i = 0; i < n; i++) {
		*failed = i;
		if (!items[i].buf || !items[i].size)
			return -EINVAL;
		err = rcs_sysctl_lookup_ref(tree, items[i].path, &e[i]);
		if (err)
			return err;
		*found = i + 1;
		if (e[i]->is_dir)
			return -EISDIR;
	}
	return 0;
}

int sysctl_snapshot(struct sysctl_tree *tree, struct sysctl_snapshot_item *items, size_t n,
		    size_t *failed)
{
	struct sysctl_entry *e[SYSCTL_COMMIT_MAX];
	size_t found = 0, bad = 0;
	uint64_t s;
	int err;

	if (!failed)
		failed = &bad;
	*failed = 0;
	if (!tree || !items || !n)
		return -EINVAL;
	if (n > SYSCTL_COMMIT_MAX)
		return -E2BIG;
	err = find_all(tree, e, items, n, &found, failed);
	while (!err) {
		s = seq_begin(&tree->commit_seq);
		err = copy_all(e, items, n, failed);
		/* The copies before the second read of the sequence (seqcount's smp_rmb). */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&tree->commit_seq, __ATOMIC_RELAXED) == s)
			break;
		err = 0; /* a commit landed inside: its values may be half copied */
	}
	while (found--)
		sysctl_entry_put(e[found]);
	return err;
}

int sysctl_tree_set_commit_notify(struct sysctl_tree *tree, sysctl_commit_notify_fn *fn, void *arg)
{
	if (!tree)
		return -EINVAL;
	tree->commit_notify = fn;
	tree->commit_notify_arg = arg;
	return 0;
}
