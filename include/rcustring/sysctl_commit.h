/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Commits and snapshots of a sysctl tree (sysctl_commit(3)): several
 * tunables set as one change, validated first and published together, and
 * several read as of one commit. Kept apart from sysctl.h, which a program
 * that writes one tunable at a time needs alone.
 */
#ifndef RCUSTRING_SYSCTL_COMMIT_H
#define RCUSTRING_SYSCTL_COMMIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rcustring/sysctl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most entries one commit or one snapshot names. */
#define SYSCTL_COMMIT_MAX 64

/* One set of a commit: the whole value, as sysctl_set() takes it. */
struct sysctl_commit_item {
	const char *path;
	const char *value;
	size_t len;
};

/**
 * sysctl_commit - set several entries as one change
 * @tree: the tree
 * @items: the sets, @n of them (1..SYSCTL_COMMIT_MAX, no path twice)
 * @who: the caller checked for write permission and audited (NULL: the program)
 * @origin: what callbacks are told (SYSCTL_ORIGIN_REMOVED is refused)
 * @failed: where the index of the refused item goes (may be NULL)
 *
 * Every entry is found, checked (permission, the tree's write check) and
 * its new value validated against a scratch copy before anything is
 * stored: a refusal changes nothing and names the item. Then the entries'
 * writer locks are taken in address order, the values stored inside one
 * odd phase of the tree's commit sequence (one commit's at a time, even
 * commits of disjoint entries; snapshot readers retry across it), the tree's commit hook called once for all of them
 * (sysctl_change_entries()), each change counted, audited and told to its
 * callbacks, and the commit listener called once. Entries of a program's
 * own handler (no scratch validation is possible) and of hooked tables
 * (whose hook takes a write: see sysctl_commit_owner()) are refused with
 * -EOPNOTSUPP.
 * Context: any thread outside a read-side section; may sleep.
 * Return: 0, or a negative errno with *@failed set: -ENOENT, -EISDIR,
 * -EACCES, -EINVAL (bad argument or a path twice), -E2BIG (@n too big),
 * -EOPNOTSUPP, the handler's or the write check's errno, the commit
 * hook's (*@failed = 0; every value back), -ENOTRECOVERABLE.
 */
RCUSTRING_API int sysctl_commit(struct sysctl_tree *tree, const struct sysctl_commit_item *items,
				size_t n, const struct sysctl_caller *who,
				enum sysctl_origin origin, size_t *failed);

/**
 * sysctl_commit_owner - sysctl_commit() by the owner of hooked tables
 * @tree: the tree
 * @items: the sets, @n of them, as sysctl_commit() takes them
 * @who: as sysctl_commit()'s
 * @failed: as sysctl_commit()'s
 *
 * What sysctl_set_owner() is to sysctl_set(): a table's write hook
 * (sysctl_register_table_hooked()) takes local writes and hands them to
 * the values' owner, which applies them later with its own write; this is
 * that write for several entries at once (the etcd mirror applies one etcd
 * revision so), hooked tables' entries and others alike. The origin is
 * SYSCTL_ORIGIN_MIRROR; all else is sysctl_commit()'s, entries of a
 * program's own handler still refused with -EOPNOTSUPP.
 * Context: any thread outside a read-side section; may sleep.
 * Return: as sysctl_commit().
 */
RCUSTRING_API int sysctl_commit_owner(struct sysctl_tree *tree,
				      const struct sysctl_commit_item *items, size_t n,
				      const struct sysctl_caller *who, size_t *failed);

/**
 * sysctl_change_entries - the entries of the commit a commit hook is called for
 * @change: the change the hook was given
 * @entries: where the entries go (they stay valid during the hook)
 * @seqs: where their change numbers go (may be NULL)
 *
 * A hook called for a single write sees one entry, its own; for a
 * sysctl_commit() the hook is called once, with the first entry, and this
 * lists all of them, so that a durable store keeps the commit as one record.
 * The change carries its commit (@change->commit), so any code handed it
 * may ask, whatever thread runs it.
 * Context: while @change is valid: the commit hook, a handler of the commit.
 * Return: the number of entries; 1 for a single write, *@entries and
 * *@seqs then untouched (the entry is the hook's own, @change->seq its number).
 */
RCUSTRING_API size_t sysctl_change_entries(const struct sysctl_change *change,
					   struct sysctl_entry *const **entries,
					   const uint64_t **seqs);

/* The commit listener: one call per sysctl_commit() that stored its values. */
typedef void sysctl_commit_notify_fn(struct sysctl_tree *tree, struct sysctl_entry *const *entries,
				     const uint64_t *seqs, size_t n, enum sysctl_origin origin,
				     void *arg);

/**
 * sysctl_tree_set_commit_notify - install the tree's commit listener (NULL: none)
 * Called after each commit's values are counted and told to the entries'
 * callbacks, with no lock of the tree held.
 * Context: before the tree is shared. Return: 0, or -EINVAL for a NULL tree.
 */
RCUSTRING_API int sysctl_tree_set_commit_notify(struct sysctl_tree *tree,
						sysctl_commit_notify_fn *fn, void *arg);

/* One read of a snapshot: @len gets the value's length (as sysctl_get()). */
struct sysctl_snapshot_item {
	const char *path;
	char *buf;
	size_t size;
	ssize_t len;
};

/**
 * sysctl_snapshot - read several entries as of one commit
 * @tree: the tree
 * @items: the reads, @n of them (1..SYSCTL_COMMIT_MAX)
 * @failed: where the index of the failed item goes (may be NULL)
 *
 * Reads every value as sysctl_get() does, between two reads of the tree's
 * commit sequence, and again when a sysctl_commit() published inside
 * them: no reader sees part of a commit. It takes no tree lock and never
 * delays a writer; entries whose handler changes its data in place are
 * read under their reader lock, as sysctl_get() reads them. Single
 * sysctl_set() writes are not commits: a snapshot sees each one whole.
 * Context: any thread outside a read-side section, not from a handler (a
 * commit runs its handlers while the sequence is odd: it would wait forever).
 * Return: 0, or a negative errno with *@failed set (sysctl_get()'s).
 */
RCUSTRING_API int sysctl_snapshot(struct sysctl_tree *tree, struct sysctl_snapshot_item *items,
				  size_t n, size_t *failed);

#ifdef __cplusplus
}
#endif

#endif
