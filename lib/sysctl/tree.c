/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sysctl tree: registration, lookup, lifetime and walks (reads and
 * writes: entry_io.c).
 *
 * Nodes (entries and directories) hang in sorted RCU lists; the tree also
 * indexes every node by its path and each directory its sorted children
 * (dir_index.c), so that registering, finding and listing cost O(1) or
 * O(log n) per entry however large a directory grows. Lookups run under
 * rcu_read_lock and take a reference;
 * register/unregister are serialized by the tree mutex. A node unlinked
 * from the tree keeps its "linked" reference until a grace period has
 * passed (call_rcu), so a reader that found it can still take a reference;
 * it is freed when the last reference goes. Handlers run outside every RCU
 * section (they may sleep) with their table's in-flight count raised, which
 * unregister drains.
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
#include "handlers.h"
#include "tree.h"

#define NAME_MAX_LEN 255 /* a component must fit a file name (FUSE) */
#define MAX_DEPTH 32

/* ---- references and freeing ---- */

static void header_put(struct sysctl_table_header *h)
{
	if (__atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL))
		return;
	pthread_mutex_destroy(&h->drain_lock);
	pthread_cond_destroy(&h->drain_cond);
	free(h);
}

static void entry_free(struct sysctl_entry *e)
{
	struct sysctl_table_header *h = e->header;

	rcs_sysctl_entry_fini_notify(e);
	free(e->dir);
	pthread_rwlock_destroy(&e->data_lock);
	pthread_mutex_destroy(&e->write_lock);
	if (e->name != e->iname)
		free(e->name);
	free(e->path);
	free(e->desc);
	free(e);
	if (h)
		header_put(h);
}

void sysctl_entry_get(struct sysctl_entry *e)
{
	if (e)
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
}

void sysctl_entry_put(struct sysctl_entry *e)
{
	/*
	 * The last reference can only go after the linked reference, which
	 * is dropped a grace period after the unlink: no reader can find the
	 * node any more, so it is freed at once.
	 */
	if (e && __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0)
		entry_free(e);
}

static void linked_ref_drop_rcu(struct rcu_head *head)
{
	sysctl_entry_put(caa_container_of(head, struct sysctl_entry, rcu));
}

/* Unlink @e from its parent (tree lock held); readers may still hold it. */
static void entry_unlink(struct sysctl_entry *e)
{
	__atomic_store_n(&e->live, 0, __ATOMIC_SEQ_CST);
	dir_index_unlink(e->parent, e);
	CMM_STORE_SHARED(e->parent, NULL); /* lookups read it under RCU */
	call_rcu(&e->rcu, linked_ref_drop_rcu);
}

/* Our own copies through malloc, so that fault injection reaches them. */
static char *dup_n(const char *s, size_t len)
{
	char *p = malloc(len + 1);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

static char *join_path(const char *parent_path, const char *name)
{
	size_t plen = parent_path ? strlen(parent_path) : 0, nlen = strlen(name), at = plen;
	char *p = malloc(plen + 1 + nlen + 1);

	if (!p)
		return NULL;
	memcpy(p, parent_path, plen);
	if (plen)
		p[at++] = '.';
	/* A '.' inside a name shows as '/', as procps prints it. */
	for (size_t i = 0; i <= nlen; i++)
		p[at + i] = name[i] == '.' ? '/' : name[i];
	return p;
}

/* A writer-preferring rwlock: a stream of readers must not starve writes. */
static int data_lock_init(pthread_rwlock_t *lock)
{
	pthread_rwlockattr_t attr;
	int err = pthread_rwlockattr_init(&attr);

	if (err)
		return -err;
	err = pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	if (!err)
		err = pthread_rwlock_init(lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	return -err;
}

/* A new node with one reference, or NULL with errno set. */
static struct sysctl_entry *entry_alloc(struct sysctl_tree *tree, const char *parent_path,
					const char *name, size_t namelen, bool is_dir)
{
	int levels = dir_index_skip_levels(tree), err;
	/* malloc, not calloc: tests fail it on purpose through --wrap=malloc. */
	struct sysctl_entry *e = malloc(sizeof(*e) + (size_t)levels * sizeof(e->skip[0]));

	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	memset(e, 0, sizeof(*e));
	e->skip_levels = levels;
	e->tree = tree;
	e->is_dir = is_dir;
	e->mode = 0555;
	e->live = 1;
	e->refs = 1;
	CDS_INIT_LIST_HEAD(&e->children);
	CDS_INIT_LIST_HEAD(&e->sibling);
	e->namelen = (uint16_t)namelen; /* at most NAME_MAX_LEN */
	if (namelen < sizeof(e->iname)) {
		memcpy(e->iname, name, namelen);
		e->iname[namelen] = '\0';
		e->name = e->iname;
	} else {
		e->name = dup_n(name, namelen);
	}
	e->path = e->name ? join_path(parent_path, e->name) : NULL;
	if (e->path)
		e->hash = dir_index_path_hash(e->path);
	if (e->path && is_dir) {
		e->dir = malloc(sizeof(*e->dir));
		if (e->dir)
			memset(e->dir, 0, sizeof(*e->dir));
	}
	err = e->path && (!is_dir || e->dir) ? pthread_mutex_init(&e->write_lock, NULL) : ENOMEM;
	if (err)
		goto free_names;
	err = -data_lock_init(&e->data_lock);
	if (err)
		goto free_write_lock;
	err = -rcs_sysctl_entry_init_notify(e);
	if (err)
		goto free_data_lock;
	return e;
free_data_lock:
	pthread_rwlock_destroy(&e->data_lock);
free_write_lock:
	pthread_mutex_destroy(&e->write_lock);
free_names:
	free(e->dir);
	if (e->name != e->iname)
		free(e->name);
	free(e->path);
	free(e);
	errno = err;
	return NULL;
}

/* ---- paths ---- */

struct comp {
	const char *s;
	size_t len;
};

/*
 * systemd's sysctl.d rule: when the first separator of @path is '.', dots
 * separate and a '/' stands for a '.' inside a name
 * ("net.ipv4.conf.eth0/200.forwarding"); when it is '/', slashes separate
 * and dots are part of names. Returns @path itself or its '/' form in @buf.
 */
static const char *slash_form(const char *path, char *buf, size_t size)
{
	const char *first = strpbrk(path, "./");
	size_t i;

	if (!first || *first == '/')
		return path;
	for (i = 0; path[i] && i + 1 < size; i++)
		buf[i] = path[i] == '.' ? '/' : path[i] == '/' ? '.' : path[i];
	if (path[i])
		return NULL;
	buf[i] = '\0';
	return buf;
}

/*
 * Split @path (in '/' form, see slash_form) into components at '/'.
 * Leading and trailing separators are ignored ("/kernel/", FUSE style);
 * empty, "." or ".." components in between are malformed.
 * Return: the number of components, or -EINVAL.
 */
static int split_path(const char *path, struct comp *out, int max)
{
	const char sep = '/';
	const char *p = path, *end = path + strlen(path);
	int n = 0;

	while (p < end && *p == sep)
		p++;
	while (end > p && end[-1] == sep)
		end--;
	while (p < end) {
		const char *q = memchr(p, sep, (size_t)(end - p));
		size_t len = q ? (size_t)(q - p) : (size_t)(end - p);

		if (len == 0 || len > NAME_MAX_LEN || n == max)
			return -EINVAL;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		out[n].s = p;
		out[n].len = len;
		n++;
		p += len + (q ? 1 : 0);
	}
	return n;
}

/*
 * Scan @path (slash_form's rule: the first separator decides) into its
 * components and the hash of its dotted form, in one pass and with no
 * copy, and look it up in the index under RCU (the caller holds the read
 * lock): the node in *@out, NULL if none; -EINVAL if @path is malformed,
 * as split_path() would find it (empty, "." or ".." components between
 * separators, too long, too deep).
 */
static int lookup_walk(struct sysctl_tree *tree, const char *path, struct sysctl_entry **out)
{
	struct dir_index_comp comps[MAX_DEPTH];
	uint32_t h = DIR_INDEX_HASH_INIT;
	const char *p = path;
	int n = 0;
	char sep;

	while (*p && *p != '.' && *p != '/')
		p++;
	sep = *p == '.' ? '.' : '/';
	p = path;
	while (*p == sep)
		p++;
	while (*p) {
		const char *s = p;
		size_t len;

		if (n == MAX_DEPTH)
			return -EINVAL;
		if (n)
			h = dir_index_hash_step(h, '.');
		for (; *p && *p != sep; p++) /* dotted: a '.' inside a name is '/' */
			h = dir_index_hash_step(h, *p == '.' ? '/' : (unsigned char)*p);
		len = (size_t)(p - s);
		/* Neither form leaves both '.' and '/' inside a component. */
		if (len > NAME_MAX_LEN || (len == 1 && (s[0] == '.' || s[0] == '/')) ||
		    (len == 2 && (s[0] == '.' || s[0] == '/') && (s[1] == '.' || s[1] == '/')))
			return -EINVAL;
		comps[n++] = (struct dir_index_comp){ s, len };
		if (*p == sep && *++p == sep) { /* empty components: only at the end */
			while (*p == sep)
				p++;
			if (*p)
				return -EINVAL;
		}
	}
	*out = n ? dir_index_find_path(tree, h, comps, n, sep == '.') : tree->root;
	return 0;
}

int rcs_sysctl_lookup_ref(struct sysctl_tree *tree, const char *path, struct sysctl_entry **out)
{
	struct sysctl_entry *e = NULL;
	int err;

	if (!tree || !path)
		return -EINVAL;
	rcu_read_lock();
	err = lookup_walk(tree, path, &e);
	/* Found while it was being unlinked: it is gone already. */
	if (e && !__atomic_load_n(&e->live, __ATOMIC_ACQUIRE))
		e = NULL;
	if (e)
		sysctl_entry_get(e);
	rcu_read_unlock();
	if (err)
		return err;
	if (!e)
		return -ENOENT;
	*out = e;
	return 0;
}

struct sysctl_entry *sysctl_lookup(struct sysctl_tree *tree, const char *path)
{
	struct sysctl_entry *e = NULL;
	int err = rcs_sysctl_lookup_ref(tree, path, &e);

	if (err) {
		errno = -err;
		return NULL;
	}
	return e;
}

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
	err = monotonic_cond_init(&tree->notify_cond);
	if (err)
		goto free_audit_lock;
	CDS_INIT_LIST_HEAD(&tree->headers);
	tree->skip_rng = 0x9e3779b97f4a7c15ULL; /* any non-zero seed */
	tree->log = log_stderr;
	tree->root = entry_alloc(tree, "", "", 0, true);
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
	if (strchr(name, '/') || strlen(name) > NAME_MAX_LEN || !strcmp(name, ".") ||
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
static int first_duplicate(const struct ctl_table *table, size_t count, size_t *out)
{
	struct named_row *rows;

	*out = count;
	if (count < 2)
		return 0;
	rows = malloc(count * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++)
		rows[i] = (struct named_row){ table[i].procname, i };
	qsort(rows, count, sizeof(*rows), named_row_cmp);
	for (size_t i = 1; i < count; i++)
		if (!strcmp(rows[i - 1].name, rows[i].name) && rows[i].index < *out)
			*out = rows[i].index;
	free(rows);
	return 0;
}

static int check_table(struct sysctl_tree *tree, const char *dir, struct sysctl_entry *existing,
		       const struct ctl_table *table, size_t count)
{
	size_t dup;
	int err;

	/* Names first: check_row() reads them. */
	for (size_t i = 0; i < count; i++) {
		err = check_row(tree, dir, &table[i]);
		if (err)
			return err;
	}
	if (first_duplicate(table, count, &dup)) {
		rcs_sysctl_reg_error(tree, dir, NULL, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		if (i == dup) {
			rcs_sysctl_reg_error(tree, dir, table[i].procname, "duplicate name in the table");
			return -EEXIST;
		}
		if (existing &&
		    dir_index_find(existing, table[i].procname, strlen(table[i].procname))) {
			rcs_sysctl_reg_error(tree, dir, table[i].procname, "name already registered");
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
static int find_existing(struct sysctl_tree *tree, const char *path, const struct comp *comps,
			 int n, struct sysctl_entry **dir)
{
	int have;

	*dir = tree->root;
	for (have = 0; have < n; have++) {
		struct sysctl_entry *c = dir_index_find(*dir, comps[have].s, comps[have].len);

		if (!c)
			break;
		if (!c->is_dir) {
			rcs_sysctl_reg_error(tree, path, NULL, "%s is an entry, not a directory", c->path);
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
	struct sysctl_table_header *h = malloc(sizeof(*h) + count * sizeof(h->entries[0]));

	if (!h)
		return NULL;
	memset(h, 0, sizeof(*h) + count * sizeof(h->entries[0]));
	h->tree = tree;
	h->count = count;
	h->refs = 1;
	h->write_hook = hook;
	h->hook_arg = hook_arg;
	if (pthread_mutex_init(&h->drain_lock, NULL)) {
		free(h);
		return NULL;
	}
	if (pthread_cond_init(&h->drain_cond, NULL)) {
		pthread_mutex_destroy(&h->drain_lock);
		free(h);
		return NULL;
	}
	return h;
}

/*
 * The entry of row @i of @table under @parent, in h->entries[i] (kept there
 * for the caller to drop even when a later step fails): 0 or -ENOMEM.
 */
static int row_entry_alloc(struct sysctl_tree *tree, struct sysctl_entry *parent,
			   struct sysctl_table_header *h, const struct ctl_table *table, size_t i)
{
	struct sysctl_entry *e =
		entry_alloc(tree, parent->path, table[i].procname, strlen(table[i].procname), false);

	if (!e)
		return -ENOMEM;
	h->entries[i] = e;
	e->header = h;
	h->refs++;
	e->table = &table[i];
	e->mode = table[i].mode & 0666;
	e->kind = rcs_tree_handler_row(tree, table[i].proc_handler);
	e->maxlen = table[i].maxlen;
	e->locked_reads = !(rcs_kind_flags(e->kind) & SYSCTL_HF_RCU);
	e->exec = !!(table[i].mode & SYSCTL_MODE_EXEC);
	if (table[i].desc && !(e->desc = dup_n(table[i].desc, strlen(table[i].desc))))
		return -ENOMEM;
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
	if (dir_index_reserve(parent->tree, h->count + (size_t)nnew))
		return -ENOMEM;
	for (size_t i = 0; i < h->count; i++)
		dir_index_link(parent, h->entries[i]);
	for (int i = nnew - 1; i >= 0; i--)
		dir_index_link(i ? newdirs[i - 1] : dir, newdirs[i]);
	return 0;
}

static int register_table(struct sysctl_tree *tree, const char *path, struct ctl_table *table,
			  size_t count, sysctl_write_hook *hook, void *hook_arg,
			  struct sysctl_table_header **out)
{
	struct sysctl_entry *newdirs[MAX_DEPTH] = { 0 };
	char buf[MAX_DEPTH * (NAME_MAX_LEN + 1)];
	const char *slashed;
	struct comp comps[MAX_DEPTH];
	struct sysctl_table_header *h = NULL;
	struct sysctl_entry *dir, *parent;
	int n, have, nnew = 0, err;

	if (!tree || !path || (!table && count) || !out)
		return -EINVAL;
	slashed = slash_form(path, buf, sizeof(buf));
	n = slashed ? split_path(slashed, comps, MAX_DEPTH - 1) : -EINVAL;
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
		newdirs[nnew] = entry_alloc(tree, parent->path, comps[i].s, comps[i].len, true);
		if (!newdirs[nnew])
			goto fail;
		parent = newdirs[nnew++];
	}
	for (size_t i = 0; i < count; i++)
		if (row_entry_alloc(tree, parent, h, table, i))
			goto fail;
	if (link_table(dir, newdirs, nnew, parent, h))
		goto fail;
	h->dir = parent;
	parent->pins++;
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
		header_put(h);
	}
out:
	pthread_mutex_unlock(&tree->lock);
	return err;
}

int sysctl_register_table(struct sysctl_tree *tree, const char *path, struct ctl_table *table,
			  size_t count, struct sysctl_table_header **out)
{
	return register_table(tree, path, table, count, NULL, NULL, out);
}

int sysctl_register_table_hooked(struct sysctl_tree *tree, const char *path,
				 struct ctl_table *table, size_t count, sysctl_write_hook *hook,
				 void *arg, struct sysctl_table_header **out)
{
	if (!hook)
		return -EINVAL;
	return register_table(tree, path, table, count, hook, arg, out);
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
		sysctl_entry_get(h->entries[i]); /* for the removal callbacks below */
		entry_unlink(h->entries[i]);
	}
	/* Remove directories left empty, up to (not including) the root. */
	dir = h->dir;
	dir->pins--;
	while (dir != tree->root && !dir->pins && cds_list_empty(&dir->children)) {
		struct sysctl_entry *up = dir->parent;

		entry_unlink(dir);
		dir = up;
	}
	cds_list_del(&h->node);
	pthread_mutex_unlock(&tree->lock);

	/* No new handler call can start; wait for those running. */
	__atomic_store_n(&h->dead, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&h->drain_lock);
	while (__atomic_load_n(&h->inflight, __ATOMIC_SEQ_CST))
		pthread_cond_wait(&h->drain_cond, &h->drain_lock);
	pthread_mutex_unlock(&h->drain_lock);
	/* Waiters on the dead entries return -ENOENT; callbacks hear of it. */
	rcs_sysctl_wake_all(tree);
	for (size_t i = 0; i < h->count; i++) {
		rcs_sysctl_removed(h->entries[i]);
		sysctl_entry_put(h->entries[i]);
	}
	header_put(h);
}

/* ---- entries ---- */

int sysctl_entry_is_dir(const struct sysctl_entry *e)
{
	return e ? e->is_dir : 0;
}

const char *sysctl_entry_name(const struct sysctl_entry *e)
{
	return e ? e->name : NULL;
}

const char *sysctl_entry_path(const struct sysctl_entry *e)
{
	return e ? e->path : NULL;
}

mode_t sysctl_entry_mode(const struct sysctl_entry *e)
{
	return e ? e->mode : 0;
}

const char *sysctl_entry_desc(const struct sysctl_entry *e)
{
	return e ? e->desc : NULL;
}

/*
 * The row is the registrant's memory, which may be freed as soon as
 * sysctl_unregister_table() returns: the result is only safe to use by a
 * caller that knows the table stays registered (see sysctl.h).
 */
const struct ctl_table *sysctl_entry_table(const struct sysctl_entry *e)
{
	if (!e || e->is_dir || !sysctl_entry_live(e))
		return NULL;
	return e->table;
}

int sysctl_entry_live(const struct sysctl_entry *e)
{
	return e ? __atomic_load_n(&e->live, __ATOMIC_ACQUIRE) : 0;
}

/* ---- walks ---- */

struct snapshot {
	struct sysctl_entry **v;
	size_t n, cap;
	int err;
};

/* Reference @e into @s (inside an RCU section: no sleeping, just malloc). */
static void snap_add(struct snapshot *s, struct sysctl_entry *e)
{
	if (s->err)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct sysctl_entry **v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			s->err = -ENOMEM;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	sysctl_entry_get(e);
	s->v[s->n++] = e;
}

static void snap_files(struct snapshot *s, struct sysctl_entry *e, int depth)
{
	struct sysctl_entry *c;

	if (!e->is_dir) {
		snap_add(s, e);
		return;
	}
	if (depth > MAX_DEPTH)
		return;
	cds_list_for_each_entry_rcu(c, &e->children, sibling)
		snap_files(s, c, depth + 1);
}

/*
 * Callbacks run on a snapshot of referenced entries taken under RCU, not
 * inside the read-side section: they may sleep, write, or even unregister.
 */
static int snap_run(struct snapshot *s, int (*fn)(struct sysctl_entry *e, void *arg), void *arg)
{
	int ret = s->err;

	for (size_t i = 0; i < s->n; i++) {
		if (!ret && sysctl_entry_live(s->v[i]))
			ret = fn(s->v[i], arg);
		sysctl_entry_put(s->v[i]);
	}
	free(s->v);
	return ret;
}

int sysctl_walk(struct sysctl_tree *tree, const char *prefix,
		int (*fn)(struct sysctl_entry *e, void *arg), void *arg)
{
	struct snapshot s = { 0 };
	struct sysctl_entry *e;
	int err;

	if (!fn)
		return -EINVAL;
	err = rcs_sysctl_lookup_ref(tree, prefix, &e);
	if (err)
		return err;
	rcu_read_lock();
	snap_files(&s, e, 0);
	rcu_read_unlock();
	sysctl_entry_put(e);
	return snap_run(&s, fn, arg);
}

int sysctl_list_dir(struct sysctl_tree *tree, const char *path,
		    int (*fn)(struct sysctl_entry *child, void *arg), void *arg)
{
	struct snapshot s = { 0 };
	struct sysctl_entry *e, *c;
	int err;

	if (!fn)
		return -EINVAL;
	err = rcs_sysctl_lookup_ref(tree, path, &e);
	if (err)
		return err;
	if (!e->is_dir) {
		sysctl_entry_put(e);
		return -ENOTDIR;
	}
	rcu_read_lock();
	cds_list_for_each_entry_rcu(c, &e->children, sibling)
		snap_add(&s, c);
	rcu_read_unlock();
	sysctl_entry_put(e);
	return snap_run(&s, fn, arg);
}
