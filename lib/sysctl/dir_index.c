/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A directory's index of its children (dir_index.h): an RCU hash table for
 * lookups by name and, for writers only, a skip list over the sorted
 * children list that finds a new child's place in O(log n). The layout and
 * its rules are described in tree.h, next to the fields.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>
#include <urcu/rculist.h>

#include "dir_index.h"
#include "tree.h"


/* FNV-1a: names are short and chosen by the program, not by an attacker. */
uint32_t dir_index_hash(const char *name, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 16777619u;
	}
	/* The bucket is taken from the low bits: mix the high ones in. */
	return h ^ (h >> 16);
}

/* The child @name of @dir, under RCU or the tree lock; NULL if none. */
struct sysctl_entry *dir_index_find(struct sysctl_entry *dir, const char *name, size_t len)
{
	struct sysctl_child_hash *ht = rcu_dereference(dir->children_hash);
	uint32_t h = dir_index_hash(name, len);
	struct sysctl_entry *c;

	if (!ht)
		return NULL;
	for (c = rcu_dereference(ht->bucket[h & ht->mask]); c;
	     c = rcu_dereference(c->hnext[ht->slot])) {
		if (c->hash == h && c->namelen == len && !memcmp(c->name, name, len))
			return c;
	}
	return NULL;
}

/*
 * Make room in @dir's hash table for @more children (tree lock held), so
 * that linking them cannot fail. The new table chains through the hnext
 * slot the current one does not use; the table before the current one used
 * that slot too, so its readers must be gone first (a grace period) before
 * the slot is rewritten. Return 0 or -ENOMEM.
 */
int dir_index_reserve(struct sysctl_entry *dir, size_t more)
{
	struct sysctl_dir *d = dir->dir;
	struct sysctl_child_hash *cur = dir->children_hash, *nh;
	size_t size = cur ? cur->mask + 1 : 0, want = d->count + more, nsize = size ? size : 8;
	struct sysctl_entry *c;

	if (want <= size) /* load factor at most 1 */
		return 0;
	while (nsize < want)
		nsize *= 2;
	nh = malloc(sizeof(*nh) + nsize * sizeof(nh->bucket[0]));
	if (!nh)
		return -ENOMEM;
	memset(nh->bucket, 0, nsize * sizeof(nh->bucket[0]));
	nh->mask = nsize - 1;
	nh->slot = cur ? !cur->slot : 0;
	if (d->old) {
		/*
		 * Under the tree lock: fine, no reader takes it inside a
		 * read-side section (register's context excludes callers in one).
		 */
		synchronize_rcu();
		free(d->old);
		d->old = NULL;
	}
	cds_list_for_each_entry(c, &dir->children, sibling) {
		struct sysctl_entry **b = &nh->bucket[c->hash & nh->mask];

		c->hnext[nh->slot] = *b;
		*b = c;
	}
	/* Publishes the chains built above (a release store). */
	rcu_assign_pointer(dir->children_hash, nh);
	d->old = cur;
	return 0;
}

/* A skip list level for a new child: level k with probability 4^-k. */
static int skip_random_levels(struct sysctl_tree *tree)
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
	struct sysctl_entry *pred[SYSCTL_SKIP_LEVELS], **b;
	struct sysctl_child_hash *ht = dir->children_hash;
	struct cds_list_head *pos = skip_find(dir, child->name, pred);

	child->parent = dir;
	/* Publishes child's fields (rcu_assign_pointer inside). */
	cds_list_add_rcu(&child->sibling, pos);
	child->skip_levels = skip_random_levels(dir->tree);
	for (int lvl = 0; lvl < child->skip_levels; lvl++) {
		struct sysctl_entry **at = pred[lvl] ? &pred[lvl]->skip[lvl] :
						       &dir->dir->skip_head[lvl];

		child->skip[lvl] = *at;
		*at = child;
	}
	b = &ht->bucket[child->hash & ht->mask];
	child->hnext[ht->slot] = *b;
	rcu_assign_pointer(*b, child);
	dir->dir->count++;
}

/*
 * Take @e out of @dir's children and index (tree lock held). Readers
 * standing on @e go on along its own hnext, left as it is.
 */
void dir_index_unlink(struct sysctl_entry *dir, struct sysctl_entry *e)
{
	struct sysctl_entry *pred[SYSCTL_SKIP_LEVELS], **pp;
	struct sysctl_child_hash *ht = dir->children_hash;

	skip_find(dir, e->name, pred);
	for (int lvl = 0; lvl < e->skip_levels; lvl++)
		*(pred[lvl] ? &pred[lvl]->skip[lvl] : &dir->dir->skip_head[lvl]) = e->skip[lvl];
	pp = &ht->bucket[e->hash & ht->mask];
	while (*pp != e)
		pp = &(*pp)->hnext[ht->slot];
	CMM_STORE_SHARED(*pp, e->hnext[ht->slot]);
	dir->dir->count--;
	cds_list_del_rcu(&e->sibling);
}
