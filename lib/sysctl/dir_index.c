/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A directory's index of its children (dir_index.h): an RCU hash table for
 * lookups by name and, for writers only, a skip list over the sorted
 * children list that finds a new child's place in O(log n). The layout and
 * its rules are described in tree.h, next to the fields.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>
#include <urcu/rculist.h>

#include "dir_index.h"
#include "tree.h"


uint32_t dir_index_hash(const char *name, size_t len)
{
	uint32_t h = DIR_INDEX_HASH_INIT;

	for (size_t i = 0; i < len; i++)
		h = dir_index_hash_step(h, (unsigned char)name[i]);
	return dir_index_hash_end(h);
}

/*
 * A slot of the table: 0 (empty), SLOT_GONE (a child was removed: probing
 * goes on past it), or the child's address with, on 64-bit machines, the
 * top 16 bits of its hash in the address's unused top 16 bits, so that a
 * probe compares hashes without loading the entries that do not match (a
 * cache miss each in a large directory). An address that uses those bits
 * gets tag 0, which every probe compares in full.
 */
#define SLOT_GONE ((uintptr_t)1) /* entries are malloc'ed: never odd */
#if UINTPTR_MAX > 0xffffffffu
#define TAG_SHIFT 48
#define slot_tag_of(h) ((uintptr_t)((h) >> 16))
#define slot_entry(v) ((struct sysctl_entry *)((v) & (((uintptr_t)1 << TAG_SHIFT) - 1)))
#define slot_tag(v) ((v) >> TAG_SHIFT)

static uintptr_t slot_make(struct sysctl_entry *e)
{
	uintptr_t a = (uintptr_t)e;

	return a >> TAG_SHIFT ? a : a | slot_tag_of(e->hash) << TAG_SHIFT;
}
#else
#define slot_tag_of(h) ((uintptr_t)0)
#define slot_entry(v) ((struct sysctl_entry *)(v))
#define slot_tag(v) ((uintptr_t)0)
#define slot_make(e) ((uintptr_t)(e))
#endif

/* Names are short: a loop costs less than a call to memcmp(). */
static inline bool same_name(const char *a, const char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* The child @name (hash @h) of @dir, under RCU or the tree lock; NULL if none. */
struct sysctl_entry *dir_index_find_hashed(struct sysctl_entry *dir, const char *name,
					   size_t len, uint32_t h)
{
	struct sysctl_child_hash *ht = rcu_dereference(dir->children_hash);
	uintptr_t tag = slot_tag_of(h), v;

	if (!ht)
		return NULL;
	/* Acquire: pairs with the release store that published the child. */
	for (size_t i = h & ht->mask; (v = __atomic_load_n(&ht->slot[i], __ATOMIC_ACQUIRE));
	     i = (i + 1) & ht->mask) {
		struct sysctl_entry *c = slot_entry(v);

		if (v == SLOT_GONE || (slot_tag(v) != tag && slot_tag(v)))
			continue;
		if (c->hash == h && c->namelen == len && same_name(c->name, name, len))
			return c;
	}
	return NULL;
}

struct sysctl_entry *dir_index_find(struct sysctl_entry *dir, const char *name, size_t len)
{
	return dir_index_find_hashed(dir, name, len, dir_index_hash(name, len));
}

/* Put @c in the first free slot of its probe sequence in @ht (tree lock held). */
static void slot_insert(struct sysctl_child_hash *ht, struct sysctl_entry *c, size_t *gone)
{
	size_t i = c->hash & ht->mask;

	while (ht->slot[i] && ht->slot[i] != SLOT_GONE)
		i = (i + 1) & ht->mask;
	if (ht->slot[i] == SLOT_GONE)
		--*gone;
	/* Release: publishes @c's fields to readers that load the slot. */
	__atomic_store_n(&ht->slot[i], slot_make(c), __ATOMIC_RELEASE);
}

/*
 * Make room in @dir's table for @more children (tree lock held), so that
 * linking them cannot fail: open addressing with linear probing, at most
 * 7/8 full counting the slots of removed children (the tags keep a probe
 * of a few slots within one or two cache lines). A new table is built
 * beside the current one and published; readers still probing the old one
 * are waited for (a grace period) before it is freed, at the next rebuild
 * or with the directory. Return 0 or -ENOMEM.
 */
int dir_index_reserve(struct sysctl_entry *dir, size_t more)
{
	struct sysctl_dir *d = dir->dir;
	struct sysctl_child_hash *cur = dir->children_hash, *nh;
	size_t size = cur ? cur->mask + 1 : 0, want = d->count + more, nsize = 8, gone = 0;
	struct sysctl_entry *c;

	if (cur && (d->count + d->gone + more) * 8 <= size * 7)
		return 0;
	while (nsize * 7 < want * 8)
		nsize *= 2;
	nh = malloc(sizeof(*nh) + nsize * sizeof(nh->slot[0]));
	if (!nh)
		return -ENOMEM;
	memset(nh->slot, 0, nsize * sizeof(nh->slot[0]));
	nh->mask = nsize - 1;
	if (d->old) {
		/*
		 * Under the tree lock: fine, no reader takes it inside a
		 * read-side section (register's context excludes callers in one).
		 */
		synchronize_rcu();
		free(d->old);
		d->old = NULL;
	}
	cds_list_for_each_entry(c, &dir->children, sibling)
		slot_insert(nh, c, &gone);
	/* Publishes the slots filled above (a release store). */
	rcu_assign_pointer(dir->children_hash, nh);
	d->old = cur;
	d->gone = 0;
	return 0;
}

/* Skip list levels for a new entry (tree lock held): k with probability 4^-k. */
int dir_index_skip_levels(struct sysctl_tree *tree)
{
	int levels = 0;

	/* xorshift64: no global rand() state shared with the program. */
	tree->skip_rng ^= tree->skip_rng << 13;
	tree->skip_rng ^= tree->skip_rng >> 7;
	tree->skip_rng ^= tree->skip_rng << 17;
	for (uint64_t r = tree->skip_rng; levels < SYSCTL_SKIP_LEVELS && (r & 3) == 0; r >>= 2)
		levels++;
	return levels;
}

/*
 * The skip list's last node before @name on each level L of
 * 1..SYSCTL_SKIP_LEVELS (NULL: the head), in @pred[L - 1]; returns the sorted list position
 * after which @name belongs (tree lock held).
 */
static struct cds_list_head *skip_find(struct sysctl_entry *dir, const char *name,
				       struct sysctl_entry **pred)
{
	struct sysctl_dir *d = dir->dir;
	struct sysctl_entry *p = NULL, *c;
	struct cds_list_head *pos;

	for (int lvl = SYSCTL_SKIP_LEVELS - 1; lvl >= 0; lvl--) {
		struct sysctl_entry *next = p ? p->skip[lvl] : d->skip_head[lvl];

		while (next && strcmp(next->name, name) < 0) {
			p = next;
			next = p->skip[lvl];
		}
		pred[lvl] = p;
	}
	/* Level 0, the children list itself: a few steps from p on. */
	pos = p ? &p->sibling : &dir->children;
	for (c = cds_list_entry(pos->next, struct sysctl_entry, sibling); &c->sibling != &dir->children;
	     c = cds_list_entry(c->sibling.next, struct sysctl_entry, sibling)) {
		if (strcmp(c->name, name) >= 0)
			break;
		pos = &c->sibling;
	}
	return pos;
}

/*
 * Insert @child into @dir's sorted children and its index (tree lock held,
 * room reserved with dir_index_reserve()).
 */
void dir_index_link(struct sysctl_entry *dir, struct sysctl_entry *child)
{
	struct sysctl_entry *pred[SYSCTL_SKIP_LEVELS];
	struct cds_list_head *pos = skip_find(dir, child->name, pred);

	child->parent = dir;
	/* Publishes child's fields (rcu_assign_pointer inside). */
	cds_list_add_rcu(&child->sibling, pos);
	for (int lvl = 0; lvl < child->skip_levels; lvl++) {
		struct sysctl_entry **at = pred[lvl] ? &pred[lvl]->skip[lvl] :
						       &dir->dir->skip_head[lvl];

		child->skip[lvl] = *at;
		*at = child;
	}
	slot_insert(dir->children_hash, child, &dir->dir->gone);
	dir->dir->count++;
}

/*
 * Take @e out of @dir's children and index (tree lock held). Its slot is
 * marked removed, so that probes for the children after it go on; when no
 * probe can go past it (the next slot is empty), it and the removed slots
 * just before it become empty again.
 */
void dir_index_unlink(struct sysctl_entry *dir, struct sysctl_entry *e)
{
	struct sysctl_entry *pred[SYSCTL_SKIP_LEVELS];
	struct sysctl_child_hash *ht = dir->children_hash;
	struct sysctl_dir *d = dir->dir;
	size_t i = e->hash & ht->mask;

	skip_find(dir, e->name, pred);
	for (int lvl = 0; lvl < e->skip_levels; lvl++)
		*(pred[lvl] ? &pred[lvl]->skip[lvl] : &d->skip_head[lvl]) = e->skip[lvl];
	while (slot_entry(ht->slot[i]) != e)
		i = (i + 1) & ht->mask;
	if (ht->slot[(i + 1) & ht->mask]) {
		CMM_STORE_SHARED(ht->slot[i], SLOT_GONE);
		d->gone++;
	} else {
		CMM_STORE_SHARED(ht->slot[i], 0);
		for (i = (i - 1) & ht->mask; ht->slot[i] == SLOT_GONE; i = (i - 1) & ht->mask) {
			CMM_STORE_SHARED(ht->slot[i], 0);
			d->gone--;
		}
	}
	d->count--;
	cds_list_del_rcu(&e->sibling);
}
