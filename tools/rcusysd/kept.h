/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The values the store keeps, in memory: a hash table by key (FNV-1a,
 * chained, grown at load 1) beside an array for walking, so finding,
 * setting and dropping one key costs the same with 100 or 100 000 kept.
 * Each value carries the origin and the time of the write that made it,
 * for rcusysctl --kept. Not locked: its owner (persist.c) locks.
 */
#ifndef RCUSYSD_KEPT_H
#define RCUSYSD_KEPT_H

#include <stddef.h>
#include <stdint.h>

struct kept {
	char *key;   /* dotted, as sysctl_entry_path(), NUL-terminated */
	size_t key_len; /* its bytes, the NUL not counted */
	char *value; /* the bytes the entry read, exactly */
	size_t len;
	unsigned int origin;
	int64_t time;
	size_t index; /* in the map's array */
	struct kept *next;
};

struct kept_map {
	struct kept **buckets;
	size_t nbuckets;
	struct kept **all;
	size_t n, cap;
	size_t bytes; /* keys and values: what a compaction writes */
};

/*
 * @key (@key_len bytes, compared by length and bytes: a NUL in it is a
 * byte like any other), or NULL. Context: its owner's lock held.
 */
struct kept *kept_find(const struct kept_map *m, const char *key, size_t key_len);

/*
 * @key holds a copy of @value from now on, with @origin and @time.
 * Return: 0 or -ENOMEM (the map as it was).
 */
int kept_set(struct kept_map *m, const char *key, size_t key_len, const char *value, size_t len,
	     unsigned int origin, int64_t time);

/*
 * @k, in @m, holds @value (@len bytes, malloc'ed: the map owns it now)
 * with @origin and @time. It cannot fail, so a change of several keys
 * allocates first and then adopts them all (persist_commit.c).
 */
void kept_adopt(struct kept_map *m, struct kept *k, char *value, size_t len, unsigned int origin,
		int64_t time);

/* @key is kept no more (nothing when it was not). */
void kept_drop(struct kept_map *m, const char *key, size_t key_len);

/* Frees everything; the map is empty and usable again. */
void kept_free(struct kept_map *m);

#endif
