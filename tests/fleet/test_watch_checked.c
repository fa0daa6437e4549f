/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A watch message is checked whole before any of its events is handed on,
 * whether it fits in one chunk (decoded once, its events kept from the
 * check: nearly every message, one event) or not (decoded again as it is
 * handed on): a message with one event that is not etcd's, first or last,
 * changes nothing. And what is handed on is each event once, in order,
 * with the header's fields: a message of 1, 3, 128 and 129 events, good
 * and with the last one bad, and a progress message (no events).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"

#define CHUNK 128 /* etcd_stream.c's EVENTS_CHUNK */

static size_t calls, events, failures;
static long next_index;
static int64_t header_rev;
static bool created;

static void fail(const char *what, long a, long b)
{
	if (++failures <= 10)
		printf("FAIL %s (%ld, %ld)\n", what, a, b);
}

static int on_msg(void *arg, const struct etcd_watch_msg *m)
{
	(void)arg;
	if (!calls++) {
		header_rev = m->revision;
		created = m->created;
	}
	for (size_t i = 0; i < m->n_events; i++, events++) {
		const struct etcd_kv *kv = &m->events[i].kv;
		char want[32];

		snprintf(want, sizeof(want), "/p/k%ld", next_index);
		if (strcmp(kv->key, want) || atol(kv->value) != next_index ||
		    kv->mod_revision != 10 + next_index)
			fail("an event out of order or changed", next_index, (long)events);
		next_index++;
	}
	return 0;
}

/* @n events, keys "/p/k<i>", values "<i>", revision 10 + i; event @bad (if < n) not etcd's. */
static char *message(size_t n, size_t bad, bool create, size_t *len)
{
	size_t cap = 200 + n * 200, off = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	off += (size_t)snprintf(out, cap,
				"{\"result\":{\"header\":{\"revision\":\"%zu\"},%s\"events\":[",
				10 + n, create ? "\"created\":true," : "");
	for (size_t i = 0; i < n; i++) {
		char k[32], v[32], *ek, *ev;

		snprintf(k, sizeof(k), "/p/k%zu", i);
		snprintf(v, sizeof(v), "%zu", i);
		if (etcd_b64_encode(k, strlen(k), &ek) || etcd_b64_encode(v, strlen(v), &ev))
			exit(1);
		/* A type etcd never sends: the event, so the message, is not etcd's
		 * (a bad value or revision is the key's refusal, not the message's). */
		off += (size_t)snprintf(out + off, cap - off,
					"%s{%s\"kv\":{\"key\":\"%s\",\"value\":\"%s\","
					"\"mod_revision\":\"%zu\",\"version\":\"1\"}}",
					i ? "," : "", i == bad ? "\"type\":\"BOGUS\"," : "", ek, ev,
					10 + i);
		free(ek);
		free(ev);
	}
	off += (size_t)snprintf(out + off, cap - off, "]}}");
	*len = off;
	return out;
}

/* One message of @n events (event @bad not etcd's, if < @n): what must come of it. */
static void one(size_t n, size_t bad, bool create)
{
	struct etcd_conn c = { 0 };
	size_t len;
	char *text = message(n, bad, create, &len);
	int err;

	calls = events = 0;
	next_index = 0;
	header_rev = 0;
	created = false;
	if (!text) {
		fail("building a message", (long)n, 0);
		return;
	}
	err = etcd_watch_text(&c, text, len, on_msg, NULL);
	free(text);
	if (bad < n) {
		if (err != -EBADMSG)
			fail("a message with an event not etcd's: -EBADMSG", (long)n, err);
		if (calls || events)
			fail("a message with an event not etcd's handed on events (calls, events)",
			     (long)calls, (long)events);
		return;
	}
	if (err)
		fail("decoding a message of etcd's", (long)n, err);
	if (events != n || !calls || (n <= CHUNK && calls != 1))
		fail("events handed on (events, calls)", (long)events, (long)calls);
	if (header_rev != (int64_t)(10 + n) || created != create)
		fail("the header's fields with the first call", (long)header_rev, created);
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 3, CHUNK, CHUNK + 1 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		one(n, n, i % 2); /* all good */
		if (n) {
			one(n, n - 1, false); /* the last one bad */
			one(n, 0, true);      /* the first one bad */
		}
	}
	printf("watch-checked: messages of 0, 1, 3, %d and %d events, good and with a bad one; "
	       "%zu failures\n", CHUNK, CHUNK + 1, failures);
	return failures ? 1 : 0;
}
