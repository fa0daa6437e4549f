/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The gateway-form decoder (etcd_fast.c) side by side with json-c's
 * (etcd_json.c): wherever the fast one answers, json-c's must give the
 * same event or kv (type, key, value, revision, refusal); and the forms
 * etcd's gateway writes (a PUT, an empty value left out, a DELETE, the
 * other members) must take the fast path, or the mirror's decode is slow
 * again without a word. Input: those forms, a list of forms left to
 * json-c (escapes, numbers, null, a member twice, bad base64, revisions
 * at the edges), and 200 000 random mutations of them that the scanner
 * takes as JSON.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"
#include "etcd_scan.h"

static const char *const gateway[] = {
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"create_revision\":\"5\",\"mod_revision\":\"12\","
	"\"version\":\"3\",\"value\":\"djEyMw==\"}}",
	"{\"kv\":{\"key\":\"L3AvYg==\",\"create_revision\":\"5\",\"mod_revision\":\"13\","
	"\"version\":\"1\",\"lease\":\"7587879\"}}",
	"{\"type\":\"DELETE\",\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"14\"}}",
	"{\"type\":\"PUT\",\"kv\":{\"key\":\"L3AvAP8K\",\"mod_revision\":\"9223372036854775806\","
	"\"value\":\"AAEC/w==\"}}",
	" { \"kv\" : { \"key\" : \"L3AvYQ==\" , \"mod_revision\" : \"1\" , \"value\" : \"\" } } ",
};

static const char *const left_to_json_c[] = {
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":12,\"value\":\"djE=\"}}",
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"12\",\"value\":\"dj\\u0045=\"}}",
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"12\",\"value\":null}}",
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"key\":\"L3AvYg==\",\"mod_revision\":\"12\"}}",
	"{\"kv\":{\"key\":\"L3Av*Q==\",\"mod_revision\":\"12\"}}",
	"{\"kv\":{\"key\":\"\",\"mod_revision\":\"12\"}}",
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"0\"}}",
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"9223372036854775807\"}}",
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"99999999999999999999\"}}",
	"{\"kv\":{\"key\":\"L3AvYQ==\"}}",
	"{\"type\":\"BOGUS\",\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"12\"}}",
	"{\"type\":\"PUT\",\"type\":\"DELETE\","
	"\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"12\"}}",
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"12\"},"
	"\"prev_kv\":{\"key\":\"L3AvYQ==\"}}",
	"{\"kv\":{\"key\":\"L3AvYQ==\",\"mod_revision\":\"12\",\"version\":3}}",
	"{\"kv\":[]}",
	"{}",
};

static unsigned long fast, agreed, failures;

static void fail(const char *what, const char *text)
{
	if (++failures <= 10)
		printf("FAIL %s: %s\n", what, text);
}

static bool same_kv(const struct etcd_kv *a, const struct etcd_kv *b)
{
	return a->key_len == b->key_len && a->value_len == b->value_len &&
	       a->mod_revision == b->mod_revision && a->err == b->err &&
	       !memcmp(a->key, b->key, a->key_len + 1) &&
	       !memcmp(a->value, b->value, a->value_len + 1);
}

/* json-c's decode of @text as an event (@ev) or a kv; -EBADMSG where it takes none. */
static int slow(const char *text, size_t len, struct etcd_event *ev, struct etcd_kv *kv)
{
	json_tokener *tok = json_tokener_new_ex(JSCAN_DEPTH_MAX);
	json_object *o = tok ? json_tokener_parse_ex(tok, text, (int)len + 1) : NULL;
	int err = -EBADMSG;

	if (o && json_tokener_get_parse_end(tok) >= len)
		err = ev ? etcd_parse_event(o, ev) : etcd_parse_kv(o, kv);
	json_object_put(o);
	if (tok)
		json_tokener_free(tok);
	return err;
}

/* @text side by side, as an event and, for its "kv" member's span, as a kv. Return: fast taken. */
static bool compare(const char *text, size_t len)
{
	struct etcd_event f, s;
	struct jspan v;
	int ef, es;

	if (jscan_whole(text, len, &v, NULL))
		return false; /* not JSON: neither decoder is asked */
	ef = etcd_event_fast(v, &f);
	if (ef == 0) {
		fast++;
		es = slow(text, len, &s, NULL);
		if (es)
			fail("fast decoded an event json-c refuses", text);
		else if (s.type != f.type || !same_kv(&s.kv, &f.kv))
			fail("fast and json-c decode an event differently", text);
		else
			agreed++;
		if (!es)
			etcd_kv_free(&s.kv);
		etcd_kv_free(&f.kv);
	} else if (ef != 1) {
		fail("fast returned neither 0 nor 1", text);
	}
	/* The same text as a kv object (a range reply's element). */
	if (etcd_kv_fast(v, &f.kv) == 0) {
		fast++;
		if (slow(text, len, NULL, &s.kv) || !same_kv(&s.kv, &f.kv))
			fail("fast and json-c decode a kv differently", text);
		else
			etcd_kv_free(&s.kv);
		etcd_kv_free(&f.kv);
	}
	return ef == 0;
}

static void mutate(char *t, size_t *len, unsigned *seed)
{
	static const char set[] = "\"{}[],:\\ 0129AZaz+/=-.enultrsfu\x01\x7f\xff";
	size_t at = (size_t)rand_r(seed) % (*len + 1);
	char c = set[(size_t)rand_r(seed) % (sizeof(set) - 1)];

	switch (rand_r(seed) % 3) {
	case 0: /* replace */
		if (at < *len)
			t[at] = c;
		break;
	case 1: /* insert */
		memmove(t + at + 1, t + at, *len - at + 1);
		t[at] = c;
		(*len)++;
		break;
	default: /* delete */
		if (at < *len) {
			memmove(t + at, t + at + 1, *len - at);
			(*len)--;
		}
	}
}

int main(void)
{
	unsigned seed = 40;
	size_t n_gw = sizeof(gateway) / sizeof(gateway[0]);
	size_t n_left = sizeof(left_to_json_c) / sizeof(left_to_json_c[0]);

	for (size_t i = 0; i < n_gw; i++)
		if (!compare(gateway[i], strlen(gateway[i])))
			fail("the gateway's form did not take the fast path", gateway[i]);
	for (size_t i = 0; i < n_left; i++) {
		struct etcd_event ev;
		struct jspan v;

		if (!jscan_whole(left_to_json_c[i], strlen(left_to_json_c[i]), &v, NULL) &&
		    etcd_event_fast(v, &ev) == 0) {
			fail("a form json-c must decide took the fast path", left_to_json_c[i]);
			etcd_kv_free(&ev.kv);
		}
	}
	for (int round = 0; round < 200000; round++) {
		const char *base = round % 2 ? gateway[(size_t)round / 2 % n_gw] :
					       left_to_json_c[(size_t)round / 2 % n_left];
		char t[512];
		size_t len = strlen(base);
		int edits = 1 + rand_r(&seed) % 3;

		memcpy(t, base, len + 1);
		for (int e = 0; e < edits && len < sizeof(t) - 8; e++)
			mutate(t, &len, &seed);
		t[len] = '\0';
		compare(t, len);
	}
	printf("fast-decode: %lu fast decodes, %lu events agreed with json-c; %lu failures\n",
	       fast, agreed, failures);
	return failures ? 1 : 0;
}
