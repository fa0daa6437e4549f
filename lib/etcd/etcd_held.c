/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which entries hold a value from etcd (etcd_sync_holds): a hash set of
 * their paths in the one form the tree resolves them by, so that the
 * settings layer of a reload asks once per entry in constant time (it used
 * to look up every applied key for every entry: a reload with 8 000 keys
 * took 22.7 s). Kept per entry, not per key: many keys may name one entry
 * ("a.b", "a/b", ".a.b"), and a key deleted from etcd leaves its value in
 * the tree, so the entry still holds it after the key's state is freed.
 * Grows with the entries etcd ever set, not with the keys it held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/path_form.h"
#include "etcd_sync_int.h"

size_t etcd_hash(const char *p, size_t n)
{
	size_t h = 14695981039346656037ull; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

bool etcd_path_canonical(const char *path, char *buf, size_t size)
{
	size_t len, start = 0;

	if (!memccpy(buf, path, '\0', size))
		return false;
	rcs_path_to_slash(buf);
	/* The tree skips separators at either end: "/a/b/" is "a/b". */
	len = strlen(buf);
	while (len && buf[len - 1] == '/')
		len--;
	while (start < len && buf[start] == '/')
		start++;
	memmove(buf, buf + start, len - start);
	buf[len - start] = '\0';
	return true;
}

static struct held *find(struct etcd_sync *s, const char *path, size_t hash)
{
	if (!s->n_held_buckets)
		return NULL;
	for (struct held *h = s->held[hash & (s->n_held_buckets - 1)]; h; h = h->next) {
		s->held_probes++;
		if (h->hash == hash && !strcmp(h->path, path))
			return h;
	}
	return NULL;
}

bool etcd_held_find(struct etcd_sync *s, const char *path)
{
	return find(s, path, etcd_hash(path, strlen(path))) != NULL;
}

/* Double the table; a failure leaves it as it was, only slower. */
static void grow(struct etcd_sync *s)
{
	size_t n = s->n_held_buckets ? s->n_held_buckets * 2 : 64;
	struct held **b = calloc(n, sizeof(*b));

	if (!b)
		return;
	for (size_t i = 0; i < s->n_held_buckets; i++)
		while (s->held[i]) {
			struct held *h = s->held[i];

			s->held[i] = h->next;
			h->next = b[h->hash & (n - 1)];
			b[h->hash & (n - 1)] = h;
		}
	free(s->held);
	s->held = b;
	s->n_held_buckets = n;
}

int etcd_held_add(struct etcd_sync *s, const char *path)
{
	size_t len = strlen(path), hash = etcd_hash(path, len);
	struct held *h;

	if (find(s, path, hash))
		return 0;
	if (s->n_held >= s->n_held_buckets)
		grow(s);
	if (!s->n_held_buckets || !(h = malloc(sizeof(*h) + len + 1)))
		return -ENOMEM;
	h->hash = hash;
	memcpy(h->path, path, len + 1);
	h->next = s->held[hash & (s->n_held_buckets - 1)];
	s->held[hash & (s->n_held_buckets - 1)] = h;
	s->n_held++;
	return 0;
}

void etcd_held_free(struct etcd_sync *s)
{
	for (size_t i = 0; i < s->n_held_buckets; i++)
		while (s->held[i]) {
			struct held *h = s->held[i];

			s->held[i] = h->next;
			free(h);
		}
	free(s->held);
	s->held = NULL;
	s->n_held_buckets = s->n_held = 0;
}

uint64_t etcd_sync_held_probes(struct etcd_sync *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->held_probes;
	pthread_mutex_unlock(&s->lock);
	return n;
}

bool etcd_sync_holds(struct etcd_sync *s, const char *path)
{
	char canon[ETCD_KEY_MAX + 1];
	struct sysctl_entry *e;
	bool holds;

	/* Paths, not strings: "a.b" and "a/b" name the same entry. No etcd key
	 * is longer than ETCD_KEY_MAX, so neither is a path it set. */
	if (!etcd_path_canonical(path, canon, sizeof(canon)))
		return false;
	e = sysctl_lookup(s->tree, path);
	if (!e)
		return false; /* the entry left the tree: nothing of etcd's to keep */
	sysctl_entry_put(e);
	pthread_mutex_lock(&s->lock);
	holds = etcd_held_find(s, canon);
	pthread_mutex_unlock(&s->lock);
	return holds;
}
