/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tree's index of its nodes by path (lookups under RCU) and each
 * directory's ordered children (inserts and removals under the tree lock).
 * tree.c owns the entries; this file only files and finds them. The layout
 * is described in tree.h.
 */
#ifndef RCUSTRING_DIR_INDEX_H
#define RCUSTRING_DIR_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct sysctl_entry;
struct sysctl_tree;

/*
 * A node's hash is FNV-1a over its dotted path (sysctl_entry.path: '.'
 * between names, '/' for a '.' inside one), kept unfinished so that a
 * child's continues from its directory's; dir_index_hash_end() mixes the
 * high bits into the low ones the table indexes with. Paths are chosen by
 * the program, not by an attacker. The steps are here so that a lookup
 * hashes a path while it scans it.
 */
#define DIR_INDEX_HASH_INIT 2166136261u

static inline uint32_t dir_index_hash_step(uint32_t h, unsigned char c)
{
	return (h ^ c) * 16777619u;
}

static inline uint32_t dir_index_hash_end(uint32_t h)
{
	return h ^ (h >> 16);
}

/* The unfinished hash of the dotted path @path. */
uint32_t dir_index_path_hash(const char *path);

/* One component of a path being looked up, as written in it. */
struct dir_index_comp {
	const char *s;
	size_t len;
};

/*
 * The node whose dotted path hashes to @h (unfinished) and whose names,
 * root down, are @comps[0..n-1] ('/' in them read as '.' when @slash_dot),
 * under RCU; NULL if none. @n is at least 1.
 */
struct sysctl_entry *dir_index_find_path(struct sysctl_tree *tree, uint32_t h,
					 const struct dir_index_comp *comps, int n, int slash_dot);
/* The child @name of @dir, under RCU or the tree lock; NULL if none. */
struct sysctl_entry *dir_index_find(struct sysctl_entry *dir, const char *name, size_t len);
/* Skip list levels for a new entry (tree lock held): k with probability 4^-k. */
int dir_index_skip_levels(struct sysctl_tree *tree);
/* Room for @more nodes, so that linking them cannot fail (tree lock held): 0 or -ENOMEM. */
int dir_index_reserve(struct sysctl_tree *tree, size_t more);
/* Insert @child under @dir in order (tree lock held, room reserved). */
void dir_index_link(struct sysctl_entry *dir, struct sysctl_entry *child);
/* Take @child out (tree lock held); readers may still stand on it. */
void dir_index_unlink(struct sysctl_entry *dir, struct sysctl_entry *child);
/* Free the index (no reader left, every node unlinked). */
void dir_index_free(struct sysctl_tree *tree);

#endif
