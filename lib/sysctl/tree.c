/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sysctl tree: its lifetime and registration (one node's lifetime:
 * entry.c; lookup by path: lookup.c; reads and writes: entry_io.c;
 * walks: walk.c).
 *
 * Nodes (entries and directories) hang in sorted RCU lists; the tree also
 * indexes every node by its path and each directory its sorted children
 * (dir_index.c), so that registering, finding and listing cost O(1) or
 * O(log n) per entry however large a directory grows. Lookups run under
 * rcu_read_lock and take a reference; register/unregister are serialized
 * by the tree mutex. Handlers run outside every RCU section (they may
 * sleep) with their entry's in-flight count raised, which unregister
 * drains.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu-bp.h>
#include <urcu/rculist.h>

#include "rcustring/sysctl.h"
#include "dir_index.h"
#include "entry.h"
#include "entry_lock.h"
#include "handlers.h"
#include "tree.h"

/* ---- tree ---- */

static void log_stderr(void *arg, const char *message)
{
	(void)arg;
	fprintf(stderr, "sysctl: %s\n", message);
}

/* A condition variable on CLOCK_MONOTONIC (timed waits ignore clock steps). */
static int monotonic_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int err = pthread_condattr_init(&attr);

	if (err)
		return err;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return err;
}

struct sysctl_tree *sysctl_tree_new(void)
{
	struct sysctl_tree *tree = calloc(1, sizeof(*tree));
	int err = ENOMEM;

	if (!tree)
		goto out;
	/* Each step undoes the ones before it on failure (errno: its error). */
	err = pthread_mutex_init(&tree->lock, NULL);
	if (err)
		goto free_tree;
	err = pthread_mutex_init(&tree->notify_lock, NULL);
	if (err)
		goto free_lock;
	err = pthread_mutex_init(&tree->audit_lock, NULL);
	if (err)
		goto free_notify_lock;
	err = pthread_mutex_init(&tree->commit_lock, NULL);
	if (err)
		goto free_audit_lock;
	err = monotonic_cond_init(&tree->notify_cond);
	if (err)
		goto free_commit_lock;
	CDS_INIT_LIST_HEAD(&tree->headers);
	tree->skip_rng = 0x9e3779b97f4a7c15ULL; /* any non-zero seed */
	tree->log = log_stderr;
	tree->root = rcs_entry_alloc(tree, "", "", 0, NULL, true);
	if (!tree->root) {
		err = errno;
		goto free_cond;
	}
	err = ENOMEM;
	if (rcs_audit_init(tree))
		goto free_root;
	return tree;
free_root:
	sysctl_entry_put(tree->root);
free_cond:
	pthread_cond_destroy(&tree->notify_cond);
free_commit_lock:
	pthread_mutex_destroy(&tree->commit_lock);
free_audit_lock:
	pthread_mutex_destroy(&tree->audit_lock);
free_notify_lock:
	pthread_mutex_destroy(&tree->notify_lock);
free_lock:
	pthread_mutex_destroy(&tree->lock);
free_tree:
	free(tree);
out:
	errno = err;
	return NULL;
}

void sysctl_tree_free(struct sysctl_tree *tree)
{
	if (!tree)
		return;
	for (;;) {
		struct sysctl_table_header *h = NULL;

		pthread_mutex_lock(&tree->lock);
		if (!cds_list_empty(&tree->headers))
			h = cds_list_first_entry(&tree->headers, struct sysctl_table_header, node);
		pthread_mutex_unlock(&tree->lock);
		if (!h)
			break;
		sysctl_unregister_table(h);
	}
	sysctl_entry_put(tree->root);
	/* Run the deferred reference drops now, so every node is freed on return. */
	rcu_barrier();
	dir_index_free(tree);
	rcs_audit_fini(tree);
	pthread_cond_destroy(&tree->notify_cond);
	pthread_mutex_destroy(&tree->commit_lock);
	pthread_mutex_destroy(&tree->audit_lock);
	pthread_mutex_destroy(&tree->notify_lock);
	pthread_mutex_destroy(&tree->lock);
	free(tree->wraps);
	free(tree);
}

int sysctl_tree_set_owner(struct sysctl_tree *tree, uid_t uid, gid_t gid)
{
	if (!tree || uid == (uid_t)-1 || gid == (gid_t)-1)
		return -EINVAL;
	/* Each field atomic: a check meanwhile sees the old or the new one. */
	__atomic_store_n(&tree->owner_uid, uid, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tree->owner_gid, gid, __ATOMIC_SEQ_CST);
	return 0;
}

int sysctl_tree_set_generation_base(struct sysctl_tree *tree, uint64_t base)
{
	struct sysctl_table_header *h;

	if (!tree || base > UINT64_MAX >> 9)
		return -EINVAL; /* change numbers travel shifted by 8 (the entry's stamp) */
	pthread_mutex_lock(&tree->lock);
	tree->gen_floor += base;
	cds_list_for_each_entry(h, &tree->headers, node)
		for (uint32_t i = 0; i < h->count; i++)
			if (h->entries[i])
				__atomic_add_fetch(&h->entries[i]->changes, base, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&tree->lock);
	return 0;
}

void sysctl_tree_get_owner(const struct sysctl_tree *tree, uid_t *uid, gid_t *gid)
{
	if (uid)
		*uid = tree ? __atomic_load_n(&tree->owner_uid, __ATOMIC_SEQ_CST) : 0;
	if (gid)
		*gid = tree ? __atomic_load_n(&tree->owner_gid, __ATOMIC_SEQ_CST) : 0;
}

void sysctl_tree_set_log(struct sysctl_tree *tree, sysctl_log_fn *fn, void *arg)
{
	if (!tree)
		return;
	pthread_mutex_lock(&tree->lock);
	tree->log = fn ? fn : log_stderr;
	tree->log_arg = fn ? arg : NULL;
	pthread_mutex_unlock(&tree->lock);
}

/* One line naming the path and the reason (tree lock held). */
void rcs_sysctl_reg_error(struct sysctl_tree *tree, const char *dir, const char *name,
			  const char *fmt, ...)
{
	char msg[512], why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "register %s%s%s: %s", dir && *dir ? dir : "",
		 dir && *dir && name ? "/" : "", name ? name : (dir && *dir ? "" : "/"), why);
	tree->log(tree->log_arg, msg);
}

/* The checks of the kernel's sysctl_check_table, plus ours. Return 0 or -EINVAL. */
static int check_row(struct sysctl_tree *tree, const char *dir, const struct ctl_table *t)
{
	const char *name = t->procname;
	const struct rcs_handler_row *row;
	unsigned int flags;
	size_t elem;

	if (!name || !*name) {
		rcs_sysctl_reg_error(tree, dir, "(null)", "empty or missing procname");
		return -EINVAL;
	}
	if (strchr(name, '/') || strlen(name) > RCS_NAME_MAX_LEN || !strcmp(name, ".") ||
	    !strcmp(name, "..")) {
		rcs_sysctl_reg_error(tree, dir, name, "bad procname");
		return -EINVAL;
	}
	if (!t->proc_handler) {
		rcs_sysctl_reg_error(tree, dir, name, "no proc_handler");
		return -EINVAL;
	}
	/* sysctl_check_table: read and write bits only (S_IRUGO | S_IWUGO). */
	if (t->mode & ~(mode_t)(0666 | SYSCTL_MODE_EXEC)) {
		rcs_sysctl_reg_error(tree, dir, name, "bogus mode 0%o", (unsigned int)t->mode);
		return -EINVAL;
	}
	/* Whoever may write what root executes chooses what root runs. */
	if ((t->mode & SYSCTL_MODE_EXEC) && (t->mode & 0022)) {
		rcs_sysctl_reg_error(tree, dir, name,
			  "an entry root executes is written by root alone (mode 0%o lets group or others write)",
			  (unsigned int)(t->mode & 0666));
		return -EPERM;
	}
	row = rcs_tree_handler_row(tree, t->proc_handler);
	if (!row)
		return 0; /* the program's own handler: it checks its data itself */
	flags = row->info.flags;
	if (flags & SYSCTL_HF_STRING) {
		if (t->maxlen <= 0 || !t->data) {
			rcs_sysctl_reg_error(tree, dir, name, "string handler without data or maxlen");
			return -EINVAL;
		}
		if ((flags & SYSCTL_HF_RCU) && (size_t)t->maxlen != rcustring_maxlen(t->data)) {
			rcs_sysctl_reg_error(tree, dir, name, "maxlen %d differs from the variable's %zu",
				  t->maxlen, rcustring_maxlen(t->data));
			return -EINVAL;
		}
	}
	/* maxlen counts bits; data points to the bitmap's pointer. */
	if ((flags & SYSCTL_HF_BITMAP) && (t->maxlen <= 0 || !t->data)) {
		rcs_sysctl_reg_error(tree, dir, name, "bitmap handler without data or a bit count in maxlen");
		return -EINVAL;
	}
	elem = row->info.elem_size;
	if (elem && (!t->data || t->maxlen <= 0 || (size_t)t->maxlen % elem)) {
		rcs_sysctl_reg_error(tree, dir, name, "no data or maxlen %d not a multiple of %zu", t->maxlen,
			  elem);
		return -EINVAL;
	}
	/* These handlers take exactly one element, as the kernel's do. */
	if ((flags & SYSCTL_HF_SINGLE) && (size_t)t->maxlen != elem) {
		rcs_sysctl_reg_error(tree, dir, name, "maxlen %d: this handler takes one element of %zu bytes",
			  t->maxlen, elem);
		return -EINVAL;
	}
	/*
	 * A NULL bound leaves that side unchecked (tcp_rmem has only a
	 * minimum); with neither, the plain handler is what was meant.
	 */
	if ((flags & SYSCTL_HF_ONE_BOUND) && !t->extra1 && !t->extra2) {
		rcs_sysctl_reg_error(tree, dir, name, "minmax handler without bounds (extra1/extra2 both NULL)");
		return -EINVAL;
	}
	return 0;
}

/* The rows of a registration: an array (sysctl_register_table) or pointers (_rows). */
struct rows {
	struct ctl_table *array;
	struct ctl_table *const *ptrs;
};

static inline struct ctl_table *row_at(const struct rows *r, size_t i)
{
	return r->ptrs ? r->ptrs[i] : &r->array[i];
}

struct named_row {
	const char *name;
	size_t index;
};

static int named_row_cmp(const void *a, const void *b)
{
	const struct named_row *x = a, *y = b;
	int cmp = strcmp(x->name, y->name);

	if (cmp)
		return cmp;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The first row of @table whose name an earlier row has, or @count if
 * none: sorted by name, in O(n log n) rather than comparing every pair.
 * Return: 0 or -ENOMEM.
 */
static int first_duplicate(const struct rows *table, size_t count, size_t *out)
{
	struct named_row *rows;

	*out = count;
	if (count < 2)
		return 0;
	rows = malloc(count * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++)
		rows[i] = (struct named_row){ row_at(table, i)->procname, i };
	qsort(rows, count, sizeof(*rows), named_row_cmp);
	for (size_t i = 1; i < count; i++)
		if (!strcmp(rows[i - 1].name, rows[i].name) && rows[i].index < *out)
			*out = rows[i].index;
	free(rows);
	return 0;
}

static int check_table(struct sysctl_tree *tree, const char *dir, struct sysctl_entry *existing,
		       const struct rows *table, size_t count)
{
	size_t dup;
	int err;

	/* Names first: check_row() reads them. */
	for (size_t i = 0; i < count; i++) {
		err = check_row(tree, dir, row_at(table, i));
		if (err)
			return err;
	}
	if (first_duplicate(table, count, &dup)) {
		rcs_sysctl_reg_error(tree, dir, NULL, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		const char *name = row_at(table, i)->procname;

		if (i == dup) {
			rcs_sysctl_reg_error(tree, dir, name, "duplicate name in the table");
			return -EEXIST;
		}
		if (existing && dir_index_find(existing, name, strlen(name))) {
			rcs_sysctl_reg_error(tree, dir, name, "name already registered");
			return -EEXIST;
		}
	}
	return 0;
}

/*
 * The existing part of @comps[0..n-1] under the root (tree lock held):
 * the deepest directory found in *@dir, and the number of components it
 * covers; -EEXIST when one of them is an entry, not a directory.
 */
static int find_existing(struct sysctl_tree *tree, const char *path, const struct rcs_path_comp *comps,
			 int n, struct sysctl_entry **dir)
{
	int have;

	*dir = tree->root;
	for (have = 0; have < n; have++) {
		struct sysctl_entry *c = dir_index_find(*dir, comps[have].s, comps[have].len);

		if (!c)
			break;
		if (!c->is_dir) {
			rcs_sysctl_reg_error(tree, path, NULL, "%s is an entry, not a directory", rcs_entry_path(c));
			return -EEXIST;
		}
		*dir = c;
	}
	return have;
}

/* A new header for @count rows with one reference, or NULL. */
static struct sysctl_table_header *header_alloc(struct sysctl_tree *tree, size_t count,
						sysctl_write_hook *hook, void *hook_arg)
{
	struct sysctl_table_header *h;
	size_t size = sizeof(struct sysctl_table_header) + count * sizeof(h->entries[0]);
	struct rcs_table_hook *tail;

	h = malloc(size + (hook ? sizeof(*tail) : 0));
	if (!h)
		return NULL;
	memset(h, 0, size);
	h->tree = tree;
	h->count = (uint32_t)count;
	h->rows_left = (uint32_t)count;
	h->refs = 1;
	if (hook) {
		tail = (struct rcs_table_hook *)((char *)h + size);
		*tail = (struct rcs_table_hook){ .fn = hook, .arg = hook_arg };
		h->hook = tail;
	}
	return h;
}

/*
 * The entry of row @i of @table under @parent, in h->entries[i] (kept there
 * for the caller to drop even when a later step fails): 0 or -ENOMEM.
 */
static int row_entry_alloc(struct sysctl_tree *tree, struct sysctl_entry *parent,
			   struct sysctl_table_header *h, const struct rows *table, size_t i)
{
	struct ctl_table *row = row_at(table, i);
	/* The description is copied: the table may be freed after unregister. */
	struct sysctl_entry *e = rcs_entry_alloc(tree, rcs_entry_path(parent), row->procname,
						 strlen(row->procname), row->desc, false);

	if (!e)
		return -ENOMEM;
	h->entries[i] = e;
	e->header = h;
	h->refs++;
	e->table = row;
	e->mode = row->mode & 0666;
	e->kind = rcs_tree_handler_row(tree, row->proc_handler);
	e->maxlen = row->maxlen;
	e->locked_reads = !(rcs_kind_flags(e->kind) & SYSCTL_HF_RCU);
	e->exec = !!(row->mode & SYSCTL_MODE_EXEC);
	return 0;
}

/*
 * Link the new directories @newdirs[0..nnew-1] (each under the one before,
 * the first under @dir) and @h's entries under the last (@parent). Room in
 * each index is reserved first, so that linking cannot fail half way; the
 * children of the new directories go in first, the top one last. Return 0
 * or -ENOMEM (nothing linked).
 */
static int link_table(struct sysctl_entry *dir, struct sysctl_entry **newdirs, int nnew,
		      struct sysctl_entry *parent, struct sysctl_table_header *h)
{
	if (dir_index_reserve(rcs_entry_tree(parent), h->count + (size_t)nnew))
		return -ENOMEM;
	for (size_t i = 0; i < h->count; i++)
		dir_index_link(parent, h->entries[i]);
	for (int i = nnew - 1; i >= 0; i--)
		dir_index_link(i ? newdirs[i - 1] : dir, newdirs[i]);
	return 0;
}

static int register_table(struct sysctl_tree *tree, const char *path, const struct rows *table,
			  size_t count, sysctl_write_hook *hook, void *hook_arg,
			  struct sysctl_table_header **out)
{
	struct sysctl_entry *newdirs[RCS_MAX_DEPTH] = { 0 };
	char buf[RCS_MAX_DEPTH * (RCS_NAME_MAX_LEN + 1)];
	const char *slashed;
	struct rcs_path_comp comps[RCS_MAX_DEPTH];
	struct sysctl_table_header *h = NULL;
	struct sysctl_entry *dir, *parent;
	int n, have, nnew = 0, err;

	if (!tree || !path || !out || count > INT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < count; i++)
		if (!row_at(table, i))
			return -EINVAL;
	slashed = rcs_slash_form(path, buf, sizeof(buf));
	n = slashed ? rcs_split_path(slashed, comps, RCS_MAX_DEPTH - 1) : -EINVAL;
	pthread_mutex_lock(&tree->lock);
	if (n < 0) {
		rcs_sysctl_reg_error(tree, path, NULL, "malformed path");
		err = -EINVAL;
		goto out;
	}
	have = find_existing(tree, path, comps, n, &dir);
	err = have < 0 ? have : check_table(tree, path, have == n ? dir : NULL, table, count);
	if (err)
		goto out;

	err = -ENOMEM;
	h = header_alloc(tree, count, hook, hook_arg);
	if (!h)
		goto fail;
	/* Allocate everything first, so that linking cannot fail half way. */
	parent = dir;
	for (int i = have; i < n; i++) {
		newdirs[nnew] = rcs_entry_alloc(tree, rcs_entry_path(parent), comps[i].s, comps[i].len, NULL, true);
		if (!newdirs[nnew])
			goto fail;
		parent = newdirs[nnew++];
	}
	for (size_t i = 0; i < count; i++)
		if (row_entry_alloc(tree, parent, h, table, i))
			goto fail;
	h->dir = parent;
	if (link_table(dir, newdirs, nnew, parent, h))
		goto fail;
	rcs_entry_dir(parent)->pins++;
	cds_list_add_tail(&h->node, &tree->headers);
	*out = h;
	err = 0;
	goto out;
fail:
	rcs_sysctl_reg_error(tree, path, NULL, "out of memory");
	for (int i = 0; i < nnew; i++)
		sysctl_entry_put(newdirs[i]);
	if (h) {
		for (size_t i = 0; i < count; i++)
			if (h->entries[i])
				sysctl_entry_put(h->entries[i]);
		rcs_header_put(h);
	}
out:
	pthread_mutex_unlock(&tree->lock);
	return err;
}

int sysctl_register_table(struct sysctl_tree *tree, const char *path, struct ctl_table *table,
			  size_t count, struct sysctl_table_header **out)
{
	struct rows rows = { .array = table };

	if (!table && count)
		return -EINVAL;
	return register_table(tree, path, &rows, count, NULL, NULL, out);
}

int sysctl_register_rows(struct sysctl_tree *tree, const char *path, struct ctl_table *const rows[],
			 size_t count, struct sysctl_table_header **out)
{
	struct rows r = { .ptrs = rows };

	if (!rows && count)
		return -EINVAL;
	return register_table(tree, path, &r, count, NULL, NULL, out);
}

int sysctl_register_table_hooked(struct sysctl_tree *tree, const char *path,
				 struct ctl_table *table, size_t count, sysctl_write_hook *hook,
				 void *arg, struct sysctl_table_header **out)
{
	struct rows rows = { .array = table };

	if (!hook || (!table && count))
		return -EINVAL;
	return register_table(tree, path, &rows, count, hook, arg, out);
}

/*
 * The end of a removal of @n unlinked entries @v (NULL ones skipped), with
 * the tree lock no longer held: wait for the handler calls on each that
 * began before it was unlinked, wake waiters once (they return -ENOENT),
 * tell each one's callbacks, drop the references taken for them.
 */
static void finish_removal(struct sysctl_tree *tree, struct sysctl_entry *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			rcs_entry_drain(v[i]);
	rcs_sysctl_wake_all(tree);
	for (size_t i = 0; i < n; i++) {
		if (v[i]) {
			rcs_sysctl_removed(v[i]);
			sysctl_entry_put(v[i]);
		}
	}
}

void sysctl_unregister_table(struct sysctl_table_header *h)
{
	struct sysctl_tree *tree;
	struct sysctl_entry *dir;

	if (!h)
		return;
	tree = h->tree;
	pthread_mutex_lock(&tree->lock);
	for (size_t i = 0; i < h->count; i++) {
		if (!h->entries[i])
			continue; /* removed alone (sysctl_unregister_row) */
		sysctl_entry_get(h->entries[i]); /* for the removal callbacks below */
		rcs_entry_unlink(h->entries[i]);
	}
	/* Remove directories left empty, up to (not including) the root. */
	dir = h->dir;
	rcs_entry_dir(dir)->pins--;
	while (dir != tree->root && !rcs_entry_dir(dir)->pins &&
	       cds_list_empty(&rcs_entry_dir(dir)->children)) {
		struct sysctl_entry *up = dir->parent;

		rcs_entry_unlink(dir);
		dir = up;
	}
	cds_list_del(&h->node);
	pthread_mutex_unlock(&tree->lock);

	finish_removal(tree, h->entries, h->count);
	rcs_header_put(h);
}

int sysctl_unregister_row(struct sysctl_table_header *h, const struct ctl_table *row)
{
	struct sysctl_tree *tree;
	struct sysctl_entry *e = NULL;
	unsigned long probes = 0;
	bool last = false;
	long i;

	if (!h || !row)
		return -EINVAL;
	tree = h->tree;
	pthread_mutex_lock(&tree->lock);
	i = rcs_row_find(h, row, &probes);
	if (tree->row_probes)
		*tree->row_probes += probes;
	if (i >= 0) {
		e = h->entries[i];
		last = h->rows_left == 1;
	}
	/* The last row: the whole table goes, its directories with it. */
	if (e && !last) {
		h->entries[i] = NULL;
		h->rows_left--;
		sysctl_entry_get(e); /* for the removal callbacks */
		rcs_entry_unlink(e);
	}
	pthread_mutex_unlock(&tree->lock);
	if (!e)
		return -ENOENT;
	if (last)
		sysctl_unregister_table(h);
	else
		finish_removal(tree, &e, 1);
	return 0;
}

void rcs_sysctl_count_probes(struct sysctl_tree *tree, unsigned long *counter)
{
	pthread_mutex_lock(&tree->lock);
	tree->row_probes = counter;
	pthread_mutex_unlock(&tree->lock);
}
