/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A watch message's events reach the mirror a revision at a time: the
 * decoder hands events on in chunks (memory bounded by the message), and a
 * chunk must never end inside a revision, which the mirror commits as one.
 * A message of revisions of 100, 60, 5, 300, 1 and 5000 puts is decoded;
 * every revision but the last must come in one call, the last (more than
 * the chunk's limit) in parts of at most 4096, all in order, none lost.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"

static const size_t sizes[] = { 100, 60, 5, 300, 1, 5000 };
#define REVS (sizeof(sizes) / sizeof(sizes[0]))
#define FIRST_REV 10
#define PART_MAX 4096

static size_t seen[REVS], calls, split, failures;
static int64_t last_rev, last_index = -1;

static void fail(const char *what, long a, long b)
{
	if (++failures <= 5)
		printf("FAIL %s (%ld, %ld)\n", what, a, b);
}

static int on_msg(void *arg, const struct etcd_watch_msg *m)
{
	(void)arg;
	calls++;
	for (size_t i = 0; i < m->n_events; i++) {
		const struct etcd_kv *kv = &m->events[i].kv;
		int64_t r = kv->mod_revision - FIRST_REV;
		long idx = atol(kv->value);

		if (r < 0 || r >= (int64_t)REVS || idx != last_index + 1) {
			fail("an event out of order or of no revision", (long)r, idx);
			continue;
		}
		last_index = idx;
		/* A call that starts with a revision the previous call held: split. */
		if (i == 0 && seen[r]) {
			split++;
			if (sizes[r] <= PART_MAX)
				fail("a revision of at most 4096 events split between calls", (long)r,
				     (long)seen[r]);
		}
		seen[r]++;
		last_rev = kv->mod_revision;
	}
	if (m->n_events > PART_MAX && sizes[last_rev - FIRST_REV] > PART_MAX)
		fail("a part of a big revision past 4096 events", (long)m->n_events, 0);
	return 0;
}

/* The message as etcd's gateway writes it: keys "k<i>", values "<i>", base64. */
static char *message(size_t *len)
{
	size_t total = 0, cap, n = 0, i = 0;
	char *out, b64k[64], b64v[64];

	for (size_t r = 0; r < REVS; r++)
		total += sizes[r];
	cap = 200 + total * 200;
	out = malloc(cap);
	if (!out)
		return NULL;
	n += (size_t)snprintf(out + n, cap - n, "{\"result\":{\"header\":{\"revision\":\"%d\"},"
						"\"events\":[", FIRST_REV + (int)REVS);
	for (size_t r = 0; r < REVS; r++) {
		for (size_t j = 0; j < sizes[r]; j++, i++) {
			char k[32], v[32], *ek, *ev;

			snprintf(k, sizeof(k), "/p/k%zu", i);
			snprintf(v, sizeof(v), "%zu", i);
			if (etcd_b64_encode(k, strlen(k), &ek) || etcd_b64_encode(v, strlen(v), &ev))
				return NULL;
			snprintf(b64k, sizeof(b64k), "%s", ek);
			snprintf(b64v, sizeof(b64v), "%s", ev);
			free(ek);
			free(ev);
			n += (size_t)snprintf(out + n, cap - n,
					      "%s{\"kv\":{\"key\":\"%s\",\"value\":\"%s\","
					      "\"mod_revision\":\"%zu\",\"create_revision\":\"%zu\","
					      "\"version\":\"1\"}}",
					      i ? "," : "", b64k, b64v, FIRST_REV + r, FIRST_REV + r);
		}
	}
	n += (size_t)snprintf(out + n, cap - n, "]}}");
	*len = n;
	return out;
}

int main(void)
{
	struct etcd_conn c = { 0 };
	size_t len, total = 0;
	char *text = message(&len);
	int err;

	if (!text)
		return printf("FAIL building the message\n"), 1;
	err = etcd_watch_text(&c, text, len, on_msg, NULL);
	free(text);
	if (err)
		fail("decoding the message", err, 0);
	for (size_t r = 0; r < REVS; r++) {
		total += sizes[r];
		if (seen[r] != sizes[r])
			fail("events of a revision lost or doubled", (long)r, (long)seen[r]);
	}
	if (last_index + 1 != (int64_t)total)
		fail("events handed on", (long)(last_index + 1), (long)total);
	if (split != 1)
		fail("only the revision of 5000 events in parts (splits seen, want 1)", (long)split,
		     1);
	printf("watch-revisions: %zu events in %zu calls, %zu revision split; %zu failures\n",
	       total, calls, split, failures);
	return failures ? 1 : 0;
}
