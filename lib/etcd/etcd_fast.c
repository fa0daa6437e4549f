/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The form etcd's JSON gateway writes a kv or a watch event in, decoded
 * straight from the scanner's spans (etcd_scan.c) with no json-c object
 * built: the mirror's apply waits for this decode on every change, and
 * json-c's objects, hash tables and per-parse locale cost about as much as
 * the rest of the decode. Only that form is taken here: member names and
 * strings of printable ASCII with no escape, keys and values in base64's
 * alphabet, mod_revision a string of digits, "type" PUT or DELETE, each
 * member once, no null, and a kv that decodes whole (a key of 1 byte to
 * ETCD_KEY_DECODE_MAX, a revision of 1 to INT64_MAX - 1). Anything else,
 * even a refusal, is left to json-c's path (etcd_json.c), which decides as
 * it always did; so this path only answers where both agree, which
 * test_fast_decode.c checks side by side on mutated input.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"
#include "etcd_scan.h"

/* jscan_* callbacks return it to stop: "not the gateway's form" (positive, never an errno). */
#define NOT_FAST 1

static bool is_b64(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '/' || c == '=';
}

static bool is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* Bytes @s[0..@n) all plain (or all base64, or all digits: @kind 'b', 'd'). */
static bool all_of(const char *s, size_t n, char kind)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (kind == 'b' ? !is_b64(c) : kind == 'd' ? c < '0' || c > '9' : !is_plain(c))
			return false;
	}
	return true;
}

/* A string span of @kind bytes only; its contents in *@s, *@n. */
static bool plain_string(struct jspan v, char kind, const char **s, size_t *n)
{
	if (v.len < 2 || v.p[0] != '"' || v.p[v.len - 1] != '"')
		return false;
	*s = v.p + 1;
	*n = v.len - 2;
	return all_of(*s, *n, kind);
}

struct kv_spans {
	struct jspan key, value, mod;
};

/* Take @v for the member @slot, if it is the first and of @kind. */
static int take(struct jspan *slot, struct jspan v, char kind)
{
	const char *s;
	size_t n;

	if (slot->p || !plain_string(v, kind, &s, &n))
		return NOT_FAST;
	*slot = v;
	return 0;
}

static bool named(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && !memcmp(name, want, len);
}

static int kv_member(void *arg, const char *name, size_t len, struct jspan v)
{
	struct kv_spans *f = arg;
	const char *s;
	size_t n;

	if (!all_of(name, len, 'p'))
		return NOT_FAST;
	if (named(name, len, "key"))
		return take(&f->key, v, 'b');
	if (named(name, len, "value"))
		return take(&f->value, v, 'b');
	if (named(name, len, "mod_revision"))
		return take(&f->mod, v, 'd');
	return plain_string(v, 'p', &s, &n) ? 0 : NOT_FAST; /* create_revision, version, lease */
}

/* A mod_revision json-c's path takes: 1 .. INT64_MAX - 1 (0: not). */
static int64_t revision(struct jspan v)
{
	int64_t r = 0;

	if (v.len < 3 || v.len - 2 > 19)
		return 0;
	for (size_t i = 1; i + 1 < v.len; i++) {
		int d = v.p[i] - '0';

		if (r > (INT64_MAX - d) / 10)
			return 0;
		r = r * 10 + d;
	}
	return r == INT64_MAX ? 0 : r;
}

/* Base64 between the quotes of @v (decoded whole, or not the fast path's). */
static int b64(struct jspan v, char **out, size_t *len)
{
	int err = etcd_b64_decode_n(v.p + 1, v.len - 2, out, len);

	return err == -ENOMEM ? err : err ? NOT_FAST : 0;
}

int etcd_kv_fast(struct jspan v, struct etcd_kv *kv)
{
	struct kv_spans f;
	int err;

	memset(&f, 0, sizeof(f));
	memset(kv, 0, sizeof(*kv));
	if (jscan_object(v, kv_member, &f) || !f.key.p || !f.mod.p)
		return NOT_FAST;
	kv->mod_revision = revision(f.mod);
	if (!kv->mod_revision)
		return NOT_FAST;
	err = b64(f.key, &kv->key, &kv->key_len);
	if (!err && (!kv->key_len || kv->key_len > ETCD_KEY_DECODE_MAX))
		err = NOT_FAST;
	if (!err && f.value.p) {
		err = b64(f.value, &kv->value, &kv->value_len);
	} else if (!err) {
		kv->value = strdup(""); /* proto3 leaves out empty bytes */
		err = kv->value ? 0 : -ENOMEM;
	}
	if (err) {
		etcd_kv_free(kv);
		memset(kv, 0, sizeof(*kv));
	}
	return err;
}

struct event_spans {
	struct jspan type, kv;
};

static int event_member(void *arg, const char *name, size_t len, struct jspan v)
{
	struct event_spans *f = arg;
	const char *s;
	size_t n;

	if (!all_of(name, len, 'p'))
		return NOT_FAST;
	if (named(name, len, "type"))
		return take(&f->type, v, 'p');
	if (named(name, len, "kv")) {
		if (f->kv.p || v.p[0] != '{')
			return NOT_FAST;
		f->kv = v;
		return 0;
	}
	return plain_string(v, 'p', &s, &n) ? 0 : NOT_FAST;
}

int etcd_event_fast(struct jspan v, struct etcd_event *ev)
{
	struct event_spans f;

	memset(&f, 0, sizeof(f));
	memset(ev, 0, sizeof(*ev));
	if (jscan_object(v, event_member, &f) || !f.kv.p)
		return NOT_FAST;
	if (!f.type.p || (f.type.len == 5 && !memcmp(f.type.p, "\"PUT\"", 5)))
		ev->type = ETCD_EVENT_PUT;
	else if (f.type.len == 8 && !memcmp(f.type.p, "\"DELETE\"", 8))
		ev->type = ETCD_EVENT_DELETE;
	else
		return NOT_FAST;
	return etcd_kv_fast(f.kv, &ev->kv);
}
