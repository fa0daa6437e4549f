/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Each entry's default and last applied value for config.c (values.h), in
 * one open-addressing hash table of one-allocation records.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "values.h"

static size_t hash_path(const char *path)
{
	size_t h = 2166136261u; /* FNV-1a */

	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 16777619u;
	return h;
}

/* The slot of @path, or the empty slot where it would go (vs->cap > 0). */
static struct record **values_slot(const struct values *vs, const char *path)
{
	size_t i = hash_path(path) & (vs->cap - 1);

	while (vs->v[i] && strcmp(vs->v[i]->text, path))
		i = (i + 1) & (vs->cap - 1);
	return &vs->v[i];
}

static struct record *values_find(const struct values *vs, const char *path)
{
	return vs->cap ? *values_slot(vs, path) : NULL;
}

static const char *record_default(const struct record *r)
{
	return r->flags & REC_DEF ? r->text + strlen(r->text) + 1 : NULL;
}

/* What this module last left in the entry, as it reads back; NULL if never set here. */
static const char *record_applied(const struct record *r)
{
	const char *after = r->text + strlen(r->text) + 1;

	if (!(r->flags & REC_APPLIED))
		return NULL;
	if (!(r->flags & REC_APPLIED_OWN))
		return after; /* the default */
	return r->flags & REC_DEF ? after + strlen(after) + 1 : after;
}

/* The value @path had before any file; NULL if none was captured. */
const char *values_default(const struct values *vs, const char *path)
{
	struct record *r = values_find(vs, path);

	return r ? record_default(r) : NULL;
}

/* What this module last left in @path; NULL if it never set it. */
const char *values_applied(const struct values *vs, const char *path)
{
	struct record *r = values_find(vs, path);

	return r ? record_applied(r) : NULL;
}

static bool values_grow(struct values *vs)
{
	size_t cap = vs->cap ? vs->cap * 2 : 64;
	struct values bigger = { calloc(cap, sizeof(struct record *)), vs->n, cap };

	if (!bigger.v)
		return false;
	for (size_t i = 0; i < vs->cap; i++)
		if (vs->v[i])
			*values_slot(&bigger, vs->v[i]->text) = vs->v[i];
	free(vs->v);
	*vs = bigger;
	return true;
}

/*
 * A record for @path with default @def (NULL: none) and applied value
 * @applied (NULL: never set here), or NULL when out of memory.
 */
static struct record *record_new(const char *path, const char *def, const char *applied)
{
	size_t plen = strlen(path) + 1, dlen = def ? strlen(def) + 1 : 0;
	bool own = applied && !(def && !strcmp(def, applied));
	size_t alen = own ? strlen(applied) + 1 : 0;
	struct record *r = malloc(sizeof(*r) + plen + dlen + alen);

	if (!r)
		return NULL;
	r->flags = (def ? REC_DEF : 0) | (applied ? REC_APPLIED : 0) | (own ? REC_APPLIED_OWN : 0);
	memcpy(r->text, path, plen);
	if (def)
		memcpy(r->text + plen, def, dlen);
	if (own)
		memcpy(r->text + plen + dlen, applied, alen);
	return r;
}

/*
 * Replaces the record of @path (its slot's) with one holding @def and
 * @applied; NULL when out of memory, with the old record left as it was.
 * @def and @applied may point into the old record.
 */
static struct record *values_put(struct values *vs, const char *path, const char *def,
				 const char *applied)
{
	struct record **slot, *r;

	if ((vs->n + 1) * 8 > vs->cap * 7 && !values_grow(vs))
		return NULL;
	slot = values_slot(vs, path);
	r = record_new(path, def, applied);
	if (!r)
		return NULL;
	if (!*slot)
		vs->n++;
	free(*slot);
	*slot = r;
	return r;
}

/* Captures @value as @path's default, unless one is, and as what it was last left at. */
void values_capture(struct values *vs, const char *path, const char *value)
{
	struct record *r = values_find(vs, path);

	/* Out of memory, the default is not remembered: no file's value can fall back to it. */
	if (!r || !record_default(r))
		values_put(vs, path, value, value);
}

/* Out of memory, the value is not remembered: the entry then counts as never set here. */
void values_set_applied(struct values *vs, const char *path, const char *value)
{
	struct record *r = values_find(vs, path);
	const char *def = r ? record_default(r) : NULL;

	if (r && r->flags & REC_APPLIED && !strcmp(record_applied(r), value))
		return;
	/* Forgotten rather than left stale (its bytes, if any, stay unused). */
	if (!values_put(vs, path, def, value) && r)
		r->flags &= (unsigned char)~(REC_APPLIED | REC_APPLIED_OWN);
}

void values_free(struct values *vs)
{
	for (size_t i = 0; i < vs->cap; i++)
		free(vs->v[i]);
	free(vs->v);
}
