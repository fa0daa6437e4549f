/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One etcd revision, one commit: the values a transaction put under the
 * prefix reach the watch together (one revision, one message) and are
 * written into the tree by one sysctl_commit_owner(), so that a reader's
 * sysctl_snapshot() sees all of the revision or none of it. etcd has
 * committed the revision already; a host that refuses one of its values
 * (its handler, its permission, a missing entry) refuses that one as it
 * always did (logged, counted, reported under the status prefix) and
 * commits the rest, as every host applies what it can of etcd's values.
 * A whole-prefix read holds the values that differ from the tree until
 * its end (up to READ_HELD_MAX of them), then commits them revision by
 * revision: a key's mod_revision says which transaction wrote it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl_commit.h"
#include "etcd_sync_int.h"

/* Values of a whole-prefix read held before their commits (then committed
 * so far, and held anew): about 150 bytes each. */
#define READ_HELD_MAX 4096

/* p->err of a value that cannot be part of a commit (a program's own handler). */
#define WRITE_ALONE 2

/* Item @i leaves the commit; the others keep their order. */
static void drop(struct sysctl_commit_item *items, size_t *idx, size_t m, size_t i)
{
	memmove(items + i, items + i + 1, (m - i - 1) * sizeof(*items));
	memmove(idx + i, idx + i + 1, (m - i - 1) * sizeof(*idx));
}

/*
 * Commit the values of @p waiting for their write (err 0) as one change.
 * The commit names the value refused: it is refused alone and the rest
 * committed again, at most once per value. A refusal of the store (a full
 * disk: etcd_passing()) is every value's: all are applied again later. An
 * entry of a program's own handler cannot join a commit (its value cannot
 * be checked before it is stored): it is written alone, after the rest.
 */
static void commit_values(struct etcd_sync *s, struct etcd_pending *p, size_t n, bool resync)
{
	struct sysctl_commit_item items[SYSCTL_COMMIT_MAX];
	size_t idx[SYSCTL_COMMIT_MAX], m = 0, failed, i;
	int err;

	for (i = 0; i < n; i++) {
		if (p[i].err)
			continue;
		if (resync && etcd_tree_holds(s, p[i].path, p[i].kv->value, p[i].len)) {
			p[i].err = 1;
			continue;
		}
		items[m] = (struct sysctl_commit_item){ p[i].path, p[i].kv->value, p[i].len };
		idx[m++] = i;
	}
	while (m) {
		failed = 0;
		err = sysctl_commit_owner(s->tree, items, m, &s->caller, &failed);
		if (!err || etcd_passing(err) || err == -ENOTRECOVERABLE || failed >= m) {
			for (i = 0; i < m; i++)
				p[idx[i]].err = err;
			break;
		}
		p[idx[failed]].err = err == -EOPNOTSUPP ? WRITE_ALONE : err;
		drop(items, idx, m--, failed);
	}
	for (i = 0; i < n; i++)
		if (p[i].err == WRITE_ALONE)
			p[i].err = sysctl_set_owner(s->tree, p[i].path, p[i].kv->value, p[i].len,
						    &s->caller);
}

void etcd_apply_revision(struct etcd_sync *s, const struct etcd_kv *const *kvs, size_t n,
			 bool resync)
{
	struct etcd_pending p[SYSCTL_COMMIT_MAX];
	size_t i, w = 0;

	if (s->key_by_key || n == 1) {
		for (i = 0; i < n; i++)
			etcd_apply(s, kvs[i], resync);
		return;
	}
	for (i = 0; i < n && i < SYSCTL_COMMIT_MAX; i++)
		if (!etcd_apply_prepare(s, kvs[i], resync, &p[w]))
			w++;
	__atomic_store_n(&s->applying, kvs[0]->mod_revision, __ATOMIC_RELEASE);
	commit_values(s, p, w, resync);
	__atomic_store_n(&s->applying, 0, __ATOMIC_RELEASE);
	for (i = 0; i < w; i++)
		etcd_apply_finish(s, &p[i], resync);
}

static int by_revision(const void *a, const void *b)
{
	const struct etcd_kv *x = a, *y = b;

	if (x->mod_revision != y->mod_revision)
		return x->mod_revision < y->mod_revision ? -1 : 1;
	return strcmp(x->key, y->key); /* keys are unique: a stable order */
}

void etcd_read_drop(struct etcd_sync *s)
{
	etcd_kvs_free(s->read_kvs, s->n_read_kvs);
	s->read_kvs = NULL;
	s->n_read_kvs = 0;
}

void etcd_read_flush(struct etcd_sync *s)
{
	const struct etcd_kv *group[SYSCTL_COMMIT_MAX];
	size_t n = 0;

	if (!s->n_read_kvs)
		return; /* nothing held (read_kvs NULL: no qsort) */
	qsort(s->read_kvs, s->n_read_kvs, sizeof(*s->read_kvs), by_revision);
	for (size_t i = 0; i < s->n_read_kvs; i++) {
		const struct etcd_kv *kv = &s->read_kvs[i];

		if (n && (n == SYSCTL_COMMIT_MAX || kv->mod_revision != group[0]->mod_revision)) {
			etcd_apply_revision(s, group, n, true);
			n = 0;
		}
		group[n++] = kv;
	}
	if (n)
		etcd_apply_revision(s, group, n, true);
	etcd_read_drop(s);
}

/* A copy of @kv at the end of s->read_kvs; false when memory ran out. */
static bool hold_copy(struct etcd_sync *s, const struct etcd_kv *kv)
{
	struct etcd_kv copy = *kv;

	if (!s->read_kvs) {
		s->read_kvs = calloc(READ_HELD_MAX, sizeof(*s->read_kvs));
		if (!s->read_kvs)
			return false;
	}
	copy.key = malloc(kv->key_len + 1);
	copy.value = malloc(kv->value_len + 1);
	if (!copy.key || !copy.value) {
		etcd_kv_free(&copy);
		return false;
	}
	memcpy(copy.key, kv->key, kv->key_len + 1);
	memcpy(copy.value, kv->value, kv->value_len + 1);
	s->read_kvs[s->n_read_kvs++] = copy;
	return true;
}

void etcd_read_add(struct etcd_sync *s, const struct etcd_kv *kv)
{
	struct etcd_pending p;

	if (s->key_by_key) {
		etcd_apply(s, kv, true);
		return;
	}
	if (etcd_apply_prepare(s, kv, true, &p))
		return;
	if (!p.err && etcd_tree_holds(s, p.path, kv->value, p.len))
		p.err = 1;
	if (p.err) {
		etcd_apply_finish(s, &p, true); /* refused, or there already: nothing to commit */
		return;
	}
	if (s->n_read_kvs == READ_HELD_MAX)
		etcd_read_flush(s);
	if (!hold_copy(s, kv))
		etcd_apply(s, kv, true); /* no memory to hold it: alone, as it comes */
}
