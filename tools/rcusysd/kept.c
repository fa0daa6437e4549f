/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kept values' table (kept.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kept.h"

static size_t hash(const char *key, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	while (len--)
		h = (h ^ (unsigned char)*key++) * 1099511628211ull;
	return (size_t)h;
}

static int grow(struct kept_map *m)
{
	size_t nb = m->nbuckets ? m->nbuckets * 2 : 64;
	struct kept **b = calloc(nb, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		struct kept *k = m->all[i];
		size_t h = hash(k->key, k->key_len) & (nb - 1);

		k->next = b[h];
		b[h] = k;
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = nb;
	return 0;
}

struct kept *kept_find(const struct kept_map *m, const char *key, size_t key_len)
{
	struct kept *k;

	if (!m->nbuckets)
		return NULL;
	for (k = m->buckets[hash(key, key_len) & (m->nbuckets - 1)]; k; k = k->next)
		if (k->key_len == key_len && !memcmp(k->key, key, key_len))
			return k; /* by length first: a shorter stored key is never read past its end */
	return NULL;
}

static struct kept *add(struct kept_map *m, const char *key, size_t key_len)
{
	struct kept *k;
	size_t h;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct kept **a = realloc(m->all, cap * sizeof(*a));

		if (!a)
			return NULL;
		m->all = a;
		m->cap = cap;
	}
	if (m->n >= m->nbuckets && grow(m))
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k || !(k->key = malloc(key_len + 1))) {
		free(k);
		return NULL;
	}
	memcpy(k->key, key, key_len);
	k->key[key_len] = '\0';
	k->key_len = key_len;
	h = hash(key, key_len) & (m->nbuckets - 1);
	k->next = m->buckets[h];
	m->buckets[h] = k;
	k->index = m->n;
	m->all[m->n++] = k;
	m->bytes += key_len;
	return k;
}

int kept_set(struct kept_map *m, const char *key, size_t key_len, const char *value, size_t len,
	     unsigned int origin, int64_t time)
{
	struct kept *k = kept_find(m, key, key_len);
	char *v = malloc(len ? len : 1);

	if (!v)
		return -ENOMEM;
	if (len)
		memcpy(v, value, len);
	if (!k && !(k = add(m, key, key_len))) {
		free(v);
		return -ENOMEM;
	}
	kept_adopt(m, k, v, len, origin, time);
	return 0;
}

void kept_adopt(struct kept_map *m, struct kept *k, char *value, size_t len, unsigned int origin,
		int64_t time)
{
	m->bytes += len - k->len;
	free(k->value);
	k->value = value;
	k->len = len;
	k->origin = origin;
	k->time = time;
}

void kept_drop(struct kept_map *m, const char *key, size_t key_len)
{
	struct kept *k = kept_find(m, key, key_len), **pp;

	if (!k)
		return;
	for (pp = &m->buckets[hash(key, key_len) & (m->nbuckets - 1)]; *pp != k; pp = &(*pp)->next)
		;
	*pp = k->next;
	m->all[k->index] = m->all[--m->n];
	m->all[k->index]->index = k->index;
	m->bytes -= key_len + k->len;
	free(k->key);
	free(k->value);
	free(k);
}

void kept_free(struct kept_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->all[i]->key);
		free(m->all[i]->value);
		free(m->all[i]);
	}
	free(m->all);
	free(m->buckets);
	memset(m, 0, sizeof(*m));
}
