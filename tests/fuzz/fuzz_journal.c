/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the state journal's decoder (tools/rcusysd/journal.h) on
 * bytes a damaged disk could hold. The input is read twice: raw, as a
 * journal (almost every record fails its checksum: journal_tail() must
 * still answer, and journal_parse() must stop inside the input), and as
 * the value of a commit record with a checksum that holds, so the item
 * walk of JOURNAL_COMMIT sees every shape. Every key and value handed out
 * lies inside the input, and a commit that parses lists what
 * journal_commit_payload() encodes back byte for byte. Both readings are
 * then loaded as rcusysd loads a state file: each record that checks goes
 * through persist_apply_rec() into the kept map (commits staged whole),
 * under ASan, and every key the map then holds is found again by its own
 * bytes and holds no NUL (a NUL key once read past a shorter stored key).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/rcusysd/journal.h"
#include "../../tools/rcusysd/log.h"
#include "../../tools/rcusysd/persist_int.h"

struct span {
	const char *lo, *hi;
	struct journal_rec items[64];
	size_t n;
};

static int inside(const struct journal_rec *r, void *arg)
{
	struct span *s = arg;

	if (r->key < s->lo || r->key + r->key_len > s->hi || r->value < s->lo ||
	    r->value + r->value_len > s->hi)
		abort();
	if (r->op == JOURNAL_COMMIT)
		return journal_commit_items(r, inside, s) ? (abort(), 1) : 0;
	if (s->n < 64)
		s->items[s->n++] = *r;
	return 0;
}

/* @data's records into a kept map, as persist.c's load() does; the map checked, freed. */
static void load(const char *data, size_t len)
{
	static bool quiet;
	struct persist p = { 0 };
	size_t good;

	if (!quiet)
		log_set_level(LOG_EMERG), quiet = true;
	journal_parse(data, len, persist_apply_rec, &p, &good);
	for (size_t i = 0; i < p.map.n; i++) {
		const struct kept *k = p.map.all[i];

		if (!k->key_len || memchr(k->key, '\0', k->key_len) || k->key[k->key_len] ||
		    kept_find(&p.map, k->key, k->key_len) != k || k->index != i)
			abort();
	}
	kept_free(&p.map);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct span s = { (const char *)data, (const char *)data + size, { { 0 } }, 0 };
	struct journal_rec c = { .op = JOURNAL_COMMIT, .value = (const char *)data, .value_len = size };
	struct journal_buf b = { 0 }, again = { 0 };
	size_t good;

	if (journal_parse((const char *)data, size, inside, &s, &good) || good > size)
		abort();
	journal_tail((const char *)data, size, good, 8);
	load((const char *)data, size);
	/* The input as a commit's items, under a checksum that holds. */
	if (journal_put(&b, &c))
		return 0;
	s = (struct span){ b.data, b.data + b.len, { { 0 } }, 0 };
	if (journal_parse(b.data, b.len, inside, &s, &good))
		abort();
	load(b.data, b.len);
	if (good == b.len) {
		/* It parsed: encoding its items again gives the same bytes. */
		if (s.n < 64 && (journal_commit_payload(&again, s.items, s.n) || again.len != size ||
				 memcmp(again.data, data, size)))
			abort();
	} else if (journal_tail(b.data, b.len, good, 8) != -EBADMSG) {
		abort(); /* a record whose checksum holds and does not parse is damage, never a tail */
	}
	journal_buf_free(&b);
	journal_buf_free(&again);
	return 0;
}
