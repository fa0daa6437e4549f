/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A directory's index of its children: lookups under RCU, ordered inserts
 * and removals under the tree lock. tree.c owns the entries; this file
 * only files and finds them.
 */
#ifndef RCUSTRING_DIR_INDEX_H
#define RCUSTRING_DIR_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct sysctl_entry;
struct sysctl_tree;

/*
 * The hash of a name, kept in the entry (sysctl_entry.hash): FNV-1a, the
 * high bits mixed into the low ones the table indexes with. Names are
 * short and chosen by the program, not by an attacker. The steps are
 * here so that a lookup hashes a component while it scans the path.
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

uint32_t dir_index_hash(const char *name, size_t len);
/* The child @name of @dir, under RCU or the tree lock; NULL if none. */
struct sysctl_entry *dir_index_find(struct sysctl_entry *dir, const char *name, size_t len);
/* The same, with @h = dir_index_hash(@name, @len) computed by the caller. */
struct sysctl_entry *dir_index_find_hashed(struct sysctl_entry *dir, const char *name,
					   size_t len, uint32_t h);
/* Skip list levels for a new entry (tree lock held): k with probability 4^-k. */
int dir_index_skip_levels(struct sysctl_tree *tree);
/* Room for @more children, so that linking them cannot fail: 0 or -ENOMEM. */
int dir_index_reserve(struct sysctl_entry *dir, size_t more);
/* Insert @child in order (tree lock held, room reserved). */
void dir_index_link(struct sysctl_entry *dir, struct sysctl_entry *child);
/* Take @child out (tree lock held); readers may still stand on it. */
void dir_index_unlink(struct sysctl_entry *dir, struct sysctl_entry *child);

#endif
