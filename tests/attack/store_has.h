/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What rcusysd's store (tools/rcusysd/persist.h) keeps, for tests: the
 * journal at a path replayed with the daemon's own decoder, and one key's
 * value compared byte for byte.
 */
#ifndef TESTS_STORE_HAS_H
#define TESTS_STORE_HAS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "kept.h"

static int store_replay(const struct journal_rec *r, void *arg)
{
	if (r->op == JOURNAL_SET)
		return kept_set(arg, r->key, r->key_len, r->value, r->value_len, r->origin, r->time);
	if (r->op == JOURNAL_DROP)
		kept_drop(arg, r->key, r->key_len);
	return 0;
}

/*
 * Does the journal at @path keep @key with @value (as a read gives it,
 * less one trailing newline)? NULL @value: is @key kept at all?
 */
static inline int store_has(const char *path, const char *key, const char *value)
{
	struct kept_map m = { 0 };
	const struct kept *k;
	char *text = NULL;
	size_t len = 0, good;
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	if (fseek(f, 0, SEEK_END) == 0 && (len = (size_t)ftell(f)) > 0 && (text = malloc(len)) &&
	    fseek(f, 0, SEEK_SET) == 0 && fread(text, 1, len, f) == len && journal_is(text, len))
		journal_parse(text + JOURNAL_MAGIC_LEN, len - JOURNAL_MAGIC_LEN, store_replay, &m,
			      &good);
	fclose(f);
	k = kept_find(&m, key, strlen(key));
	if (k && !value)
		found = 1;
	else if (k) {
		size_t n = k->len && k->value[k->len - 1] == '\n' ? k->len - 1 : k->len;

		found = n == strlen(value) && !memcmp(k->value, value, n);
	}
	kept_free(&m);
	free(text);
	return found;
}

#endif
