/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tree's index (dir_index.h): one RCU hash table of every node by its
 * path, for lookups, and for writers only, per directory, a skip list over
 * the sorted children list that finds a new child's place in O(log n). The
 * layout and its rules are described in tree.h, next to the fields.
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

uint32_t dir_index_path_hash(const char *path)
{
	uint32_t h = DIR_INDEX_HASH_INIT;

	for (; *path; path++)
		h = dir_index_hash_step(h, (unsigned char)*path);
	return h;
}

/*
 * A slot of the table: 0 (empty), SLOT_GONE (a node was removed: probing
 * goes on past it), or the node's address with, on 64-bit machines, the
 * top 16 bits of its finished hash in the address's unused top 16 bits,
 * so that a probe compares hashes without loading the nodes that do not
 * match (a cache miss each in a large tree). An address that uses those
 * bits gets tag 0, which every probe compares in full.
 */
#define SLOT_GONE ((uintptr_t)1) /* entries are malloc'ed: never odd */
#if UINTPTR_MAX > 0xffffffffu
#define TAG_SHIFT 48
#define slot_tag_of(f) ((uintptr_t)((f) >> 16))
#define slot_entry(v) ((struct sysctl_entry *)((v) & (((uintptr_t)1 << TAG_SHIFT) - 1)))
#define slot_tag(v) ((v) >> TAG_SHIFT)

static uintptr_t slot_make(struct sysctl_entry *e)
{
	uintptr_t a = (uintptr_t)e;

	return a >> TAG_SHIFT ? a : a | slot_tag_of(dir_index_hash_end(e->hash)) << TAG_SHIFT;
}
#else
#define slot_tag_of(f) ((uintptr_t)0)
#define slot_entry(v) ((struct sysctl_entry *)(v))
#define slot_tag(v) ((uintptr_t)0)
#define slot_make(e) ((uintptr_t)(e))
#endif

/* Names are short: a loop costs less than a call to memcmp(). */
static inline bool same_name(const struct sysctl_entry *e, const char *s, size_t len, int slash_dot)
{
	const char *n = rcs_entry_name(e);

	if (e->namelen != len)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = slash_dot && s[i] == '/' ? '.' : s[i];

		if (n[i] != c)
			return false;
	}
	return true;
}

/*
 * Call @match(@e, @arg) on each node of the probe sequence of the
 * unfinished hash @h whose hash is @h, under RCU or the tree lock; the
 * first it accepts, or NULL.
 */
static inline struct sysctl_entry *probe(struct sysctl_tree *tree, uint32_t h,
					 bool (*match)(struct sysctl_entry *, const void *),
					 const void *arg)
{
	struct sysctl_index *ht = rcu_dereference(tree->index);
	uint32_t f = dir_index_hash_end(h);
	uintptr_t tag = slot_tag_of(f), v;

	if (!ht)
		return NULL;
	/* Acquire: pairs with the release store that published the node. */
	for (size_t i = f & ht->mask; (v = __atomic_load_n(&ht->slot[i], __ATOMIC_ACQUIRE));
	     i = (i + 1) & ht->mask) {
		struct sysctl_entry *c = slot_entry(v);

		if (v == SLOT_GONE || (slot_tag(v) != tag && slot_tag(v)))
			continue;
		if (c->hash == h && match(c, arg))
			return c;
	}
	return NULL;
}

struct path_key {
	struct sysctl_tree *tree;
	const struct dir_index_comp *comps;
	int n, slash_dot;
};

/* @e is the node of the names @arg lists: its own, then its parents' up to the root. */
static bool path_match(struct sysctl_entry *e, const void *arg)
{
	const struct path_key *k = arg;

	for (int i = k->n - 1; i >= 0; i--) {
		if (!e || !same_name(e, k->comps[i].s, k->comps[i].len, k->slash_dot))
			return false;
		/* Cleared when it is unlinked, under the tree lock. */
		e = CMM_LOAD_SHARED(e->parent);
	}
	return e == k->tree->root;
}

struct sysctl_entry *dir_index_find_path(struct sysctl_tree *tree, uint32_t h,
					 const struct dir_index_comp *comps, int n, int slash_dot)
{
	struct path_key k = { tree, comps, n, slash_dot };

	return probe(tree, h, path_match, &k);
}

struct child_key {
	struct sysctl_entry *dir;
	const char *name;
	size_t len;
};

static bool child_match(struct sysctl_entry *e, const void *arg)
{
	const struct child_key *k = arg;

	return CMM_LOAD_SHARED(e->parent) == k->dir && same_name(e, k->name, k->len, 0);
}

struct sysctl_entry *dir_index_find(struct sysctl_entry *dir, const char *name, size_t len)
{
	struct child_key k = { dir, name, len };
	/* The child's dotted path: the directory's, '.', the name with its dots as '/'. */
	uint32_t h = dir->namelen ? dir_index_hash_step(dir->hash, '.') : dir->hash;

	for (size_t i = 0; i < len; i++)
		h = dir_index_hash_step(h, name[i] == '.' ? '/' : (unsigned char)name[i]);
	return probe(rcs_entry_dir(dir)->tree, h, child_match, &k);
}

/* Put @c in the first free slot of its probe sequence in @ht (tree lock held). */
static void slot_insert(struct sysctl_index *ht, struct sysctl_entry *c, size_t *gone)
{
	size_t i = dir_index_hash_end(c->hash) & ht->mask;

	while (ht->slot[i] && ht->slot[i] != SLOT_GONE)
		i = (i + 1) & ht->mask;
	if (ht->slot[i] == SLOT_GONE)
		--*gone;
	/* Release: publishes @c's fields to readers that load the slot. */
	__atomic_store_n(&ht->slot[i], slot_make(c), __ATOMIC_RELEASE);
}

/*
 * Make room in the index for @more nodes (tree lock held), so that linking
 * them cannot fail: open addressing with linear probing, at most 7/8 full
 * counting the slots of removed nodes (the tags keep a probe of a few
 * slots within one or two cache lines). A new table is built beside the
 * current one and published; readers still probing the old one are waited
 * for (a grace period) before it is freed, at the next rebuild or with the
 * tree. Return 0 or -ENOMEM.
 */
int dir_index_reserve(struct sysctl_tree *tree, size_t more)
{
	struct sysctl_index *cur = tree->index, *nh;
	size_t size = cur ? cur->mask + 1 : 0, want = tree->index_count + more, nsize = 8, gone = 0;

	if (cur && (tree->index_count + tree->index_gone + more) * 8 <= size * 7)
		return 0;
	while (nsize * 7 < want * 8)
		nsize *= 2;
	nh = malloc(sizeof(*nh) + nsize * sizeof(nh->slot[0]));
	if (!nh)
		return -ENOMEM;
	memset(nh->slot, 0, nsize * sizeof(nh->slot[0]));
	nh->mask = nsize - 1;
	if (tree->index_old) {
		/*
		 * Under the tree lock: fine, no reader takes it inside a
		 * read-side section (register's context excludes callers in one).
		 */
		synchronize_rcu();
		free(tree->index_old);
		tree->index_old = NULL;
	}
	for (size_t i = 0; cur && i <= cur->mask; i++)
		if (cur->slot[i] && cur->slot[i] != SLOT_GONE)
			slot_insert(nh, slot_entry(cur->slot[i]), &gone);
	/* Publishes the slots filled above (a release store). */
	rcu_assign_pointer(tree->index, nh);
	tree->index_old = cur;
	tree->index_gone = 0;
	return 0;
}

void dir_index_free(struct sysctl_tree *tree)
{
	free(tree->index);
	free(tree->index_old);
	tree->index = tree->index_old = NULL;
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
	struct sysctl_dir *d = rcs_entry_dir(dir);
	struct sysctl_entry *p = NULL, *c;
	struct cds_list_head *pos;

	for (int lvl = SYSCTL_SKIP_LEVELS - 1; lvl >= 0; lvl--) {
		struct sysctl_entry *next = p ? p->skip[lvl] : d->skip_head[lvl];

		while (next && strcmp(rcs_entry_name(next), name) < 0) {
			p = next;
			next = p->skip[lvl];
		}
		pred[lvl] = p;
	}
	/* Level 0, the children list itself: a few steps from p on. */
	pos = p ? &p->sibling : &d->children;
	for (c = cds_list_entry(pos->next, struct sysctl_entry, sibling); &c->sibling != &d->children;
	     c = cds_list_entry(c->sibling.next, struct sysctl_entry, sibling)) {
		if (strcmp(rcs_entry_name(c), name) >= 0)
			break;
		pos = &c->sibling;
	}
	return pos;
}

/*
 * Insert @child into @dir's sorted children and the index (tree lock held,
 * room reserved with dir_index_reserve()).
 */
void dir_index_link(struct sysctl_entry *dir, struct sysctl_entry *child)
{
	struct sysctl_entry *pred[SYSCTL_SKIP_LEVELS];
	struct cds_list_head *pos = skip_find(dir, rcs_entry_name(child), pred);
	struct sysctl_tree *tree = rcs_entry_dir(dir)->tree;

	CMM_STORE_SHARED(child->parent, dir);
	/* Publishes child's fields (rcu_assign_pointer inside). */
	cds_list_add_rcu(&child->sibling, pos);
	for (int lvl = 0; lvl < child->skip_levels; lvl++) {
		struct sysctl_entry **at = pred[lvl] ? &pred[lvl]->skip[lvl] :
						       &rcs_entry_dir(dir)->skip_head[lvl];

		child->skip[lvl] = *at;
		*at = child;
	}
	slot_insert(tree->index, child, &tree->index_gone);
	tree->index_count++;
}

/*
 * Take @e out of @dir's children and the index (tree lock held). Its slot
 * is marked removed, so that probes for the nodes after it go on; when no
 * probe can go past it (the next slot is empty), it and the removed slots
 * just before it become empty again.
 */
void dir_index_unlink(struct sysctl_entry *dir, struct sysctl_entry *e)
{
	struct sysctl_entry *pred[SYSCTL_SKIP_LEVELS];
	struct sysctl_tree *tree = rcs_entry_dir(dir)->tree;
	struct sysctl_index *ht = tree->index;
	size_t i = dir_index_hash_end(e->hash) & ht->mask;

	skip_find(dir, rcs_entry_name(e), pred);
	for (int lvl = 0; lvl < e->skip_levels; lvl++)
		*(pred[lvl] ? &pred[lvl]->skip[lvl] : &rcs_entry_dir(dir)->skip_head[lvl]) = e->skip[lvl];
	while (slot_entry(ht->slot[i]) != e)
		i = (i + 1) & ht->mask;
	if (ht->slot[(i + 1) & ht->mask]) {
		CMM_STORE_SHARED(ht->slot[i], SLOT_GONE);
		tree->index_gone++;
	} else {
		CMM_STORE_SHARED(ht->slot[i], 0);
		for (i = (i - 1) & ht->mask; ht->slot[i] == SLOT_GONE; i = (i - 1) & ht->mask) {
			CMM_STORE_SHARED(ht->slot[i], 0);
			tree->index_gone--;
		}
	}
	tree->index_count--;
	cds_list_del_rcu(&e->sibling);
}
