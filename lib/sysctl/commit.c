/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysctl_commit(): several entries set as one change. Every new value is
 * validated by its kind's handler on a scratch copy first, so a refusal
 * stores nothing; then the entries' writer locks are taken in address
 * order (no two commits deadlock), the values stored while the tree's
 * commit sequence is odd (sysctl_snapshot() readers retry across it), the
 * commit hook called once for all, and each change counted, audited and
 * told, then the commit listener once. A single write (entry_io.c) never
 * comes here and costs what it always did. sysctl_commit_owner() is the
 * same commit by the owner of hooked tables (the etcd mirror), whose
 * writes the tables' hooks would otherwise take, as sysctl_set_owner().
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rcustring/sysctl_commit.h"
#include "commit.h"
#include "entry.h"
#include "entry_lock.h"
#include "handlers.h"
#include "tree.h"

struct commit_slot {
	struct sysctl_entry *e; /* referenced */
	size_t idx;             /* in the caller's items */
};

struct commit {
	struct sysctl_tree *tree;
	const struct sysctl_commit_item *items;
	size_t n;
	bool owner; /* sysctl_commit_owner(): hooked tables' entries are stored too */
	struct commit_slot slot[SYSCTL_COMMIT_MAX]; /* by address once found */
	struct sysctl_entry *entries[SYSCTL_COMMIT_MAX]; /* in the caller's order */
	uint64_t seqs[SYSCTL_COMMIT_MAX];
	struct rcs_saved saved[SYSCTL_COMMIT_MAX];
	struct rcs_commit_change cc;
};


/*
 * Run @e's kind's handler on a scratch copy of its data: the candidate's
 * refusal (bounds, length, syntax) without storing anything. A string's
 * write at 0 replaces it whole, so a blank array of maxlen stands for an
 * RCU string. Writer lock held: the data does not change meanwhile.
 */
static int validate(struct sysctl_entry *e, const char *value, size_t len)
{
	unsigned int flags = rcs_kind_flags(e->kind);
	struct ctl_table copy;
	void *where = NULL, *scratch, *bitmap;
	size_t size;
	off_t pos = 0;
	int err;

	if (!rcs_entry_use(e))
		return -ENOENT;
	copy = *e->table;
	size = (flags & SYSCTL_HF_RCU) ? (size_t)(copy.maxlen > 0 ? copy.maxlen : 0)
				       : rcs_raw_layout(e, &where);
	if (!size) {
		rcs_entry_unuse(e);
		return 0; /* no data: the handler stores nothing either */
	}
	scratch = calloc(1, size);
	err = -ENOMEM;
	if (scratch) {
		if (where)
			memcpy(scratch, where, size);
		bitmap = scratch;
		copy.data = (flags & SYSCTL_HF_BITMAP) ? (void *)&bitmap : scratch;
		if (flags & SYSCTL_HF_RCU)
			err = proc_dostring(&copy, 1, (void *)value, &len, &pos);
		else
			err = e->kind->handler(&copy, 1, (void *)value, &len, &pos);
	}
	rcs_entry_unuse(e);
	free(scratch);
	return err;
}

/* What refuses @e in a commit before its lock is taken. */
static int admit(struct sysctl_entry *e, const struct sysctl_caller *who,
		 const struct sysctl_change *ch, bool owner)
{
	int err;

	if (e->is_dir)
		return -EISDIR;
	/* A hooked table's hook takes a write outside the locks, later: it
	 * cannot be part of a commit, but its owner's own write can. */
	if (!e->kind || (e->header->hook && !owner))
		return -EOPNOTSUPP;
	if (who) {
		err = sysctl_access(e, who, W_OK);
		if (err)
			return err;
	}
	return rcs_check_write(e, ch);
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct commit_slot *)a)->e;
	uintptr_t y = (uintptr_t)((const struct commit_slot *)b)->e;

	return x < y ? -1 : x > y;
}

/* Find, admit and order every entry; *@failed names the one refused. */
static int find_all(struct commit *c, size_t *found, size_t *failed)
{
	int err = 0;
	size_t i;

	for (i = 0; i < c->n && !err; i++) {
		const struct sysctl_commit_item *it = &c->items[i];

		*failed = i;
		if (!it->path || (!it->value && it->len))
			return -EINVAL;
		err = rcs_sysctl_lookup_ref(c->tree, it->path, &c->slot[i].e);
		if (err)
			return err;
		*found = i + 1;
		c->slot[i].idx = i;
		c->entries[i] = c->slot[i].e;
		err = admit(c->slot[i].e, c->cc.ch.who, &c->cc.ch, c->owner);
	}
	if (err)
		return err;
	qsort(c->slot, c->n, sizeof(c->slot[0]), by_address);
	for (i = 1; i < c->n; i++) {
		if (c->slot[i].e == c->slot[i - 1].e) {
			*failed = c->slot[i].idx > c->slot[i - 1].idx ? c->slot[i].idx
								      : c->slot[i - 1].idx;
			return -EINVAL; /* one path twice: which value would win? */
		}
	}
	return 0;
}

/* Store @it's value in @e through its handler (writer lock held). */
static int store(struct sysctl_entry *e, const struct sysctl_commit_item *it)
{
	size_t len = it->len;
	off_t pos = 0;
	int err;

	if (e->locked_reads)
		rcs_elock_data(e);
	err = rcs_sysctl_call(e, 1, (void *)it->value, &len, &pos);
	if (e->locked_reads)
		rcs_elock_data_unlock(e);
	return err;
}

/* Put back the saved values of entries[0..@upto) (inside an odd phase). */
static int restore_upto(struct commit *c, size_t upto)
{
	int err = 0;

	while (upto--)
		if (rcs_restore_value(c->entries[upto], &c->saved[upto]))
			err = -ENOTRECOVERABLE;
	return err;
}

/*
 * An odd phase of the commit sequence, one writer at a time: commits that
 * share no entry hold no common writer lock (taken inside those, by address).
 */
static void phase_begin(struct sysctl_tree *tree)
{
	pthread_mutex_lock(&tree->commit_lock);
	__atomic_add_fetch(&tree->commit_seq, 1, __ATOMIC_SEQ_CST);
}

static void phase_end(struct sysctl_tree *tree)
{
	__atomic_add_fetch(&tree->commit_seq, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&tree->commit_lock);
}

/* One odd phase of the commit sequence: the values stored, or all put back. */
static int publish(struct commit *c, size_t *failed)
{
	int err = 0;
	size_t i;

	phase_begin(c->tree);
	for (i = 0; i < c->n && !err; i++) {
		/* Its handler (sysctl_entry_writing()) sees its own change number. */
		c->cc.ch.seq = c->seqs[i];
		c->entries[i]->writing = &c->cc.ch;
		err = store(c->entries[i], &c->items[i]);
		c->entries[i]->writing = NULL;
		if (err) {
			*failed = i;
			if (restore_upto(c, i))
				err = -ENOTRECOVERABLE;
		}
	}
	phase_end(c->tree);
	c->cc.ch.seq = c->seqs[0];
	return err;
}

/* The commit hook, once for every entry; a refusal puts every value back. */
static int call_hook(struct commit *c, size_t *failed)
{
	struct sysctl_tree *tree = c->tree;
	int err, back;

	if (!tree->commit)
		return 0;
	err = tree->commit(c->entries[0], &c->cc.ch, tree->commit_arg);
	if (!err)
		return 0;
	*failed = 0;
	phase_begin(tree);
	back = restore_upto(c, c->n);
	phase_end(tree);
	return back ? back : err;
}

/* Validate, save and store under every writer lock; count and audit. */
static int commit_locked(struct commit *c, uint64_t *changes, size_t *failed)
{
	char old_value[SYSCTL_COMMIT_MAX][SYSCTL_AUDIT_VALUE_MAX], new_value[SYSCTL_AUDIT_VALUE_MAX];
	int err = 0;
	size_t i;

	for (i = 0; i < c->n && !err; i++) {
		struct sysctl_entry *e = c->entries[i];

		*failed = i;
		if (!sysctl_entry_live(e))
			err = -ENOENT;
		if (!err)
			err = validate(e, c->items[i].value, c->items[i].len);
		if (!err)
			err = rcs_save_value(e, &c->saved[i]);
	}
	if (err)
		return err;
	for (i = 0; i < c->n; i++) {
		rcs_audit_entry_value(c->entries[i], old_value[i]);
		c->seqs[i] = __atomic_load_n(&c->entries[i]->changes, __ATOMIC_SEQ_CST) + 1;
	}
	c->cc.ch.seq = c->seqs[0];
	err = publish(c, failed);
	if (!err)
		err = call_hook(c, failed);
	if (err)
		return err;
	/* Counted in one odd phase too: a watcher of several sees all or none (watch.c). */
	phase_begin(c->tree);
	for (i = 0; i < c->n; i++)
		changes[i] = __atomic_add_fetch(&c->entries[i]->changes, 1, __ATOMIC_SEQ_CST);
	phase_end(c->tree);
	for (i = 0; i < c->n; i++) {
		struct sysctl_entry *e = c->entries[i];

		rcs_sysctl_stamp(e, changes[i], c->cc.ch.origin);
		rcs_audit_entry_value(e, new_value);
		rcs_audit_record(c->tree, c->cc.ch.who, rcs_entry_path(e), old_value[i], new_value);
	}
	return err;
}

/* Take the writer locks by address, commit, drop them; tell everyone. */
static int commit_all(struct commit *c, size_t *failed)
{
	uint64_t changes[SYSCTL_COMMIT_MAX];
	struct sysctl_tree *tree = c->tree;
	int err;
	size_t i;

	for (i = 0; i < c->n; i++)
		rcs_elock_write(c->slot[i].e);
	err = commit_locked(c, changes, failed);
	for (i = c->n; i-- > 0;)
		rcs_elock_write_unlock(c->slot[i].e);
	if (err)
		return err;
	for (i = 0; i < c->n; i++)
		rcs_sysctl_changed(c->entries[i], changes[i]);
	if (tree->commit_notify)
		tree->commit_notify(tree, c->entries, changes, c->n, c->cc.ch.origin,
				    tree->commit_notify_arg);
	return 0;
}

/* As single writes are counted: each value stored, a refusal once by its errno. */
static void count_commit(struct sysctl_tree *tree, int err, size_t n)
{
	if (!err)
		__atomic_add_fetch(&tree->writes, n, __ATOMIC_RELAXED);
	else if (err != -ENOENT) /* a path with no entry is not counted, as for sysctl_set() */
		__atomic_add_fetch(&tree->refused[-err < SYSCTL_WRITE_ERRNO_MAX ? -err : 0], 1,
				   __ATOMIC_RELAXED);
}

static int commit_run(struct sysctl_tree *tree, const struct sysctl_commit_item *items, size_t n,
		      const struct sysctl_caller *who, enum sysctl_origin origin, bool owner,
		      size_t *failed)
{
	size_t found = 0, bad = 0, i;
	struct commit *c;
	int err;

	if (!failed)
		failed = &bad;
	*failed = 0;
	if (!tree || !items || !n || origin == SYSCTL_ORIGIN_REMOVED)
		return -EINVAL;
	if (n > SYSCTL_COMMIT_MAX)
		return -E2BIG;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct commit){ .tree = tree, .items = items, .n = n, .owner = owner };
	c->cc = (struct rcs_commit_change){
		.ch = { .origin = origin, .who = who },
		.rec = { .entries = c->entries, .seqs = c->seqs, .n = n },
	};
	c->cc.ch.commit = &c->cc.rec;
	err = find_all(c, &found, failed);
	if (!err)
		err = commit_all(c, failed);
	count_commit(tree, err, n);
	for (i = 0; i < n; i++) {
		free(c->saved[i].raw);
		free(c->saved[i].text);
	}
	for (i = 0; i < found; i++)
		sysctl_entry_put(c->entries[i]);
	free(c);
	return err;
}

int sysctl_commit(struct sysctl_tree *tree, const struct sysctl_commit_item *items, size_t n,
		  const struct sysctl_caller *who, enum sysctl_origin origin, size_t *failed)
{
	return commit_run(tree, items, n, who, origin, false, failed);
}

int sysctl_commit_owner(struct sysctl_tree *tree, const struct sysctl_commit_item *items,
			size_t n, const struct sysctl_caller *who, size_t *failed)
{
	return commit_run(tree, items, n, who, SYSCTL_ORIGIN_MIRROR, true, failed);
}

size_t sysctl_change_entries(const struct sysctl_change *change,
			     struct sysctl_entry *const **entries, const uint64_t **seqs)
{
	const struct sysctl_commit_record *rec = change ? change->commit : NULL;

	if (!rec)
		return 1;
	if (entries)
		*entries = rec->entries;
	if (seqs)
		*seqs = rec->seqs;
	return rec->n;
}
