/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reads and writes of one entry: permission, its in-flight count around
 * each handler call, the entry's locks, the audit record and the
 * notification of each change, and the by-path forms (sysctl_get/set).
 * Handlers run outside every RCU section (they may sleep) with their
 * entry's in-flight count raised, which unregister drains.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu-bp.h>

#include "rcustring/sysctl.h"
#include "entry_lock.h"
#include "entry.h"
#include "commit.h"
#include "handlers.h"
#include "tree.h"

/*
 * Permission as the kernel's test_perm() in fs/proc/proc_sysctl.c: root
 * uses the owner bits, members of group 0 the group bits, everyone else
 * the "other" bits; every requested bit must be set, so root cannot write
 * a 0444 entry. The tree's owner uid and gid count as root's, as a network
 * namespace's owner does for its sysctls (net_ctl_permissions()).
 */
int sysctl_access(const struct sysctl_entry *e, const struct sysctl_caller *who, int mask)
{
	unsigned int mode;
	uid_t owner_uid;
	gid_t owner_gid;

	if (!e || !who)
		return -EINVAL;
	mode = (unsigned int)e->mode;
	sysctl_tree_get_owner(rcs_entry_tree(e), &owner_uid, &owner_gid);
	/* The owner is never delegated what root executes (the kernel never delegates it). */
	if (e->exec)
		owner_uid = 0, owner_gid = 0;
	if (who->uid == 0 || who->uid == owner_uid)
		mode >>= 6;
	else if (who->gid == 0 || who->gid == owner_gid)
		mode >>= 3;
	if (((unsigned int)mask & ~mode & (R_OK | W_OK | X_OK)) == 0)
		return 0;
	return -EACCES;
}

int rcs_sysctl_call(struct sysctl_entry *e, int write, void *buf, size_t *lenp, off_t *ppos)
{
	int err = -ENOENT;

	if (!e->header)
		return -EISDIR;
	if (rcs_entry_use(e)) {
		err = e->table->proc_handler(e->table, write, buf, lenp, ppos);
		rcs_entry_unuse(e);
	}
	return err;
}

int sysctl_entry_read(struct sysctl_entry *e, char *buf, size_t *lenp, off_t *ppos)
{
	int err;

	if (!e || !lenp || !ppos || (!buf && *lenp))
		return -EINVAL;
	if (e->is_dir)
		return -EISDIR;
	if (!e->locked_reads)
		return rcs_sysctl_call(e, 0, buf, lenp, ppos);
	/* The handler copies data that a writer changes in place: not meanwhile. */
	rcs_elock_read(e);
	err = rcs_sysctl_call(e, 0, buf, lenp, ppos);
	rcs_elock_read_unlock(e);
	return err;
}

int sysctl_entry_read_whole(struct sysctl_entry *e, size_t first, size_t max, char **out,
			    size_t *out_len)
{
	if (!e || !out || !out_len)
		return -EINVAL;
	for (size_t cap = first ? first : 4096;; cap *= 2) {
		char *buf = malloc(cap), *fit;
		size_t len = cap;
		off_t pos = 0;
		int err;

		if (!buf)
			return -ENOMEM;
		err = sysctl_entry_read(e, buf, &len, &pos);
		if (!err && len < cap) {
			/* Sized to the value: a caller that keeps it keeps no more. */
			fit = realloc(buf, len ? len : 1);
			*out = fit ? fit : buf;
			*out_len = len;
			return 0;
		}
		free(buf);
		if (err)
			return err;
		if (cap >= max || cap > SIZE_MAX / 2)
			return -EFBIG;
	}
}

ssize_t sysctl_entry_explain(struct sysctl_entry *e, int err, char *buf, size_t size)
{
	char lo[24], hi[24];
	int n = -1;

	if (!e || !buf || !size || err >= 0)
		return -EINVAL;
	if (e->is_dir)
		return -EISDIR;
	if (err == -EMSGSIZE && (rcs_kind_flags(e->kind) & SYSCTL_HF_STRING))
		n = snprintf(buf, size, "value longer than %d bytes", e->maxlen - 1);
	else if (err == -EINVAL && (rcs_kind_flags(e->kind) & SYSCTL_HF_MINMAX)) {
		const struct rcs_handler_row *row = e->kind;
		/* The bounds live in the registrant's memory: read them while it stays. */
		const void *min = NULL, *max = NULL;
		bool has_lo, has_hi;

		if (!rcs_entry_use(e))
			return -ENOENT;
		min = e->table->extra1;
		max = e->table->extra2;
		if (min)
			row->bound_text(min, lo, sizeof(lo));
		if (max)
			row->bound_text(max, hi, sizeof(hi));
		rcs_entry_unuse(e);
		/* A NULL bound is unchecked, or the element type's limit (u8: 0, 255). */
		if (!min && row->default_lo)
			snprintf(lo, sizeof(lo), "%s", row->default_lo);
		if (!max && row->default_hi)
			snprintf(hi, sizeof(hi), "%s", row->default_hi);
		has_lo = min || row->default_lo;
		has_hi = max || row->default_hi;
		if (has_lo && has_hi)
			n = snprintf(buf, size, "invalid value (integers %s..%s)", lo, hi);
		else if (has_lo)
			n = snprintf(buf, size, "invalid value (integers >= %s)", lo);
		else if (has_hi)
			n = snprintf(buf, size, "invalid value (integers <= %s)", hi);
		else
			n = snprintf(buf, size, "invalid value");
	} else if (err == -EINVAL) {
		n = snprintf(buf, size, "invalid value");
	} else {
		n = snprintf(buf, size, "%s", strerror(-err));
	}
	if (n < 0)
		return -EINVAL;
	return (size_t)n < size ? n : (ssize_t)size - 1;
}

/*
 * Read @e's value through its handler for the audit record (write lock of
 * @e held). One byte more than the record holds is asked for, to know
 * whether the value was cut.
 */
void rcs_audit_entry_value(struct sysctl_entry *e, char *out)
{
	char buf[SYSCTL_AUDIT_VALUE_MAX + 1];
	size_t len = sizeof(buf);
	off_t pos = 0;

	if (rcs_sysctl_call(e, 0, buf, &len, &pos)) {
		out[0] = '\0';
		return;
	}
	rcs_audit_value_text(out, buf, len);
}

/* The largest value a commit hook's rollback saves (a bigger one cannot be written). */
#define SAVE_MAX (16u << 20)

/* Where @e's stored bytes are and how many: 0 for the text path. Row in use. */
size_t rcs_raw_layout(struct sysctl_entry *e, void **where)
{
	unsigned int flags = rcs_kind_flags(e->kind);
	const struct ctl_table *t = e->table;
	const size_t bits = 8 * sizeof(unsigned long);

	if (!e->kind || (flags & SYSCTL_HF_RCU) || !t->data || t->maxlen <= 0)
		return 0;
	if (flags & SYSCTL_HF_BITMAP) {
		*where = *(unsigned long **)t->data;
		return *where ? ((size_t)t->maxlen + bits - 1) / bits * sizeof(unsigned long) : 0;
	}
	*where = t->data;
	return (size_t)t->maxlen;
}

/* @e's value, saved (writer lock held, so no writer changes it meanwhile). */
int rcs_save_value(struct sysctl_entry *e, struct rcs_saved *sv)
{
	size_t len = 0;

	memset(sv, 0, sizeof(*sv));
	if (!rcs_entry_use(e))
		return -ENOENT;
	len = rcs_raw_layout(e, &sv->where);
	if (len && (sv->raw = malloc(len)) != NULL)
		memcpy(sv->raw, sv->where, sv->raw_len = len);
	rcs_entry_unuse(e);
	if (len)
		return sv->raw ? 0 : -ENOMEM;
	return sysctl_entry_read_whole(e, 0, SAVE_MAX, &sv->text, &sv->text_len);
}

/*
 * The commit hook refused the write: the saved value goes back. Return:
 * 0, or -ENOTRECOVERABLE when the handler refused the saved text (a
 * program's own handler): the refused value stays live.
 */
int rcs_restore_value(struct sysctl_entry *e, struct rcs_saved *sv)
{
	size_t len = sv->text_len;
	off_t pos = 0;
	int err = -ENOENT;

	if (e->locked_reads)
		rcs_elock_data(e);
	if (sv->raw && rcs_entry_use(e)) {
		memcpy(sv->where, sv->raw, sv->raw_len);
		rcs_entry_unuse(e);
		err = 0;
	} else if (!sv->raw) {
		/* Written as it reads less the newline a read adds ("\n" alone
		 * stays: a zero-byte write would change nothing). */
		if (len > 1 && sv->text[len - 1] == '\n')
			len--;
		err = rcs_sysctl_call(e, 1, sv->text, &len, &pos);
	}
	if (e->locked_reads)
		rcs_elock_data_unlock(e);
	if (err)
		rcs_sysctl_reg_error(rcs_entry_tree(e), "", rcs_entry_path(e),
				     "cannot restore the value after a refused commit: %s",
				     strerror(-err));
	return err ? -ENOTRECOVERABLE : 0;
}

/* The handler's write, then the commit hook; under the writer lock. */
static int write_locked(struct sysctl_entry *e, struct sysctl_change *ch, const char *buf,
			size_t *lenp, off_t *ppos)
{
	struct sysctl_tree *tree = rcs_entry_tree(e);
	struct rcs_saved sv = { 0 };
	int err = 0;

	if (tree->commit)
		err = rcs_save_value(e, &sv);
	if (err)
		return err;
	e->writing = ch;
	if (e->locked_reads)
		rcs_elock_data(e);
	err = rcs_sysctl_call(e, 1, (void *)buf, lenp, ppos);
	if (e->locked_reads)
		rcs_elock_data_unlock(e);
	if (!err && tree->commit) {
		err = tree->commit(e, ch, tree->commit_arg);
		if (err && rcs_restore_value(e, &sv))
			err = -ENOTRECOVERABLE;
	}
	e->writing = NULL;
	free(sv.raw);
	free(sv.text);
	return err;
}

/*
 * A write of an entry whose table has a write hook: the hook takes it, with
 * none of the entry's locks held (it may wait on the network), and the
 * entry changes later, through the owner's own write (not counted here).
 */
static int hooked_write(struct sysctl_entry *e, const struct sysctl_caller *who, const char *buf,
			size_t *lenp, off_t *ppos, const uint64_t *expected)
{
	struct sysctl_table_header *h = e->header;
	int err = -ENOENT;

	if (*ppos != 0)
		return -EINVAL; /* the whole value in one write */
	if (rcs_entry_use(e)) {
		err = h->hook->fn(h->hook->arg, e, who, buf, *lenp, expected);
		rcs_entry_unuse(e);
	}
	if (!err)
		*ppos += (off_t)*lenp;
	return err;
}

/*
 * The tree's write check, before anything runs: a refused write changes
 * nothing, not even for an instant a lock-free reader could see (a commit
 * hook's refusal comes after the handler stored the value).
 */
int rcs_check_write(struct sysctl_entry *e, const struct sysctl_change *ch)
{
	struct sysctl_tree *tree = rcs_entry_tree(e);

	return tree->check ? tree->check(e, ch, tree->check_arg) : 0;
}

/*
 * The write, and with @expected non-NULL only while the change counter is
 * *@expected: checked under the writer lock, which every write of the entry
 * takes before it bumps the counter, so no write can land between the
 * check and this one.
 */
static int entry_write(struct sysctl_entry *e, const struct sysctl_caller *who,
		       enum sysctl_origin origin, const char *buf, size_t *lenp, off_t *ppos,
		       const uint64_t *expected, bool owner)
{
	char old_value[SYSCTL_AUDIT_VALUE_MAX], new_value[SYSCTL_AUDIT_VALUE_MAX];
	struct sysctl_change ch = { .origin = origin, .who = who };
	uint64_t change = 0;
	int err;

	if (!e || !lenp || !ppos || (!buf && *lenp) || origin == SYSCTL_ORIGIN_REMOVED)
		return -EINVAL;
	if (e->is_dir)
		return -EISDIR;
	if (!sysctl_entry_live(e))
		return -ENOENT;
	err = rcs_check_write(e, &ch);
	if (err)
		return err;
	if (e->header->hook && !owner)
		return hooked_write(e, who, buf, lenp, ppos, expected);
	/* One writer at a time, so the recorded old/new pair belongs together. */
	rcs_elock_write(e);
	if (expected && __atomic_load_n(&e->changes, __ATOMIC_SEQ_CST) != *expected) {
		rcs_elock_write_unlock(e);
		return -ESTALE;
	}
	/* No other writer now: the audit's reads need not exclude anyone. */
	rcs_audit_entry_value(e, old_value);
	ch.seq = __atomic_load_n(&e->changes, __ATOMIC_SEQ_CST) + 1;
	err = write_locked(e, &ch, buf, lenp, ppos);
	if (!err) {
		change = __atomic_add_fetch(&e->changes, 1, __ATOMIC_SEQ_CST);
		rcs_sysctl_stamp(e, change, origin);
		rcs_audit_entry_value(e, new_value);
		rcs_audit_record(rcs_entry_tree(e), who, rcs_entry_path(e), old_value, new_value);
	}
	rcs_elock_write_unlock(e);
	if (!err)
		rcs_sysctl_changed(e, change);
	return err;
}

/* Count @err's write; a lock is taken already, so one atomic add costs nothing measurable. */
static int count_write(struct sysctl_entry *e, int err)
{
	struct sysctl_tree *tree;
	uint64_t *slot;

	if (!e)
		return err;
	tree = rcs_entry_tree(e);
	if (!err)
		slot = &tree->writes;
	else
		slot = &tree->refused[-err > 0 && -err < SYSCTL_WRITE_ERRNO_MAX ? -err : 0];
	__atomic_add_fetch(slot, 1, __ATOMIC_RELAXED);
	return err;
}

int sysctl_tree_get_write_stats(struct sysctl_tree *tree, struct sysctl_write_stats *st)
{
	if (!tree || !st)
		return -EINVAL;
	st->written = __atomic_load_n(&tree->writes, __ATOMIC_RELAXED);
	for (int i = 0; i < SYSCTL_WRITE_ERRNO_MAX; i++)
		st->refused[i] = __atomic_load_n(&tree->refused[i], __ATOMIC_RELAXED);
	return 0;
}

static enum sysctl_origin default_origin(const struct sysctl_caller *who)
{
	return who ? SYSCTL_ORIGIN_CLIENT : SYSCTL_ORIGIN_PROGRAM;
}

int sysctl_entry_write(struct sysctl_entry *e, const struct sysctl_caller *who, const char *buf,
		       size_t *lenp, off_t *ppos)
{
	return count_write(e, entry_write(e, who, default_origin(who), buf, lenp, ppos, NULL, false));
}

int sysctl_entry_write_from(struct sysctl_entry *e, const struct sysctl_caller *who,
			    enum sysctl_origin origin, const char *buf, size_t *lenp, off_t *ppos)
{
	return count_write(e, entry_write(e, who, origin, buf, lenp, ppos, NULL, false));
}

int sysctl_entry_write_if(struct sysctl_entry *e, const struct sysctl_caller *who,
			  const char *buf, size_t *lenp, off_t *ppos, uint64_t expected_changes)
{
	return count_write(e, entry_write(e, who, default_origin(who), buf, lenp, ppos,
					  &expected_changes, false));
}

const struct sysctl_change *sysctl_entry_writing(const struct sysctl_entry *e)
{
	return e ? e->writing : NULL;
}

int sysctl_tree_set_commit(struct sysctl_tree *tree, sysctl_commit_fn *fn, void *arg)
{
	if (!tree)
		return -EINVAL;
	tree->commit = fn;
	tree->commit_arg = arg;
	return 0;
}

int sysctl_tree_set_check(struct sysctl_tree *tree, sysctl_check_fn *fn, void *arg)
{
	if (!tree)
		return -EINVAL;
	tree->check = fn;
	tree->check_arg = arg;
	return 0;
}

ssize_t sysctl_get(struct sysctl_tree *tree, const char *path, char *buf, size_t size)
{
	struct sysctl_entry *e;
	size_t len = size;
	off_t off = 0;
	int err;

	if (!buf || !size)
		return -EINVAL;
	err = rcs_sysctl_lookup_ref(tree, path, &e);
	if (err)
		return err;
	if (e->is_dir) {
		err = -EISDIR;
		goto out;
	}
	/*
	 * One handler call at offset 0 reads the whole value at once: reads
	 * at growing offsets could stitch an old head to a new tail. A read
	 * that fills the buffer leaves no room for the NUL: too small.
	 */
	err = sysctl_entry_read(e, buf, &len, &off);
	if (!err && len >= size)
		err = -ERANGE;
	if (!err)
		buf[len] = '\0';
out:
	sysctl_entry_put(e);
	return err ? err : (ssize_t)len;
}

static int set_path(struct sysctl_tree *tree, const char *path, const char *value, size_t len,
		    const struct sysctl_caller *who, enum sysctl_origin origin, bool owner)
{
	struct sysctl_entry *e;
	off_t off = 0;
	int err;

	if (!value && len)
		return -EINVAL;
	err = rcs_sysctl_lookup_ref(tree, path, &e);
	if (err)
		return err;
	if (e->is_dir)
		err = -EISDIR;
	else if (who)
		err = sysctl_access(e, who, W_OK);
	if (!err)
		err = entry_write(e, who, origin, value, &len, &off, NULL, owner);
	count_write(e, err); /* a refused permission counts too; a missing entry does not */
	sysctl_entry_put(e);
	return err;
}

int sysctl_set(struct sysctl_tree *tree, const char *path, const char *value, size_t len,
	       const struct sysctl_caller *who)
{
	return set_path(tree, path, value, len, who, default_origin(who), false);
}

int sysctl_set_from(struct sysctl_tree *tree, const char *path, const char *value, size_t len,
		    const struct sysctl_caller *who, enum sysctl_origin origin)
{
	return set_path(tree, path, value, len, who, origin, false);
}

int sysctl_set_owner(struct sysctl_tree *tree, const char *path, const char *value, size_t len,
		     const struct sysctl_caller *who)
{
	return set_path(tree, path, value, len, who, SYSCTL_ORIGIN_MIRROR, true);
}
