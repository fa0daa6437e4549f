/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: etcd's JSON gateway replies as a hostile gateway would send
 * them (DESIGN.md §7). The first byte picks the decoder: a /v3/kv/range
 * reply, a watch stream's "result" object, or a key for etcd_key_check();
 * 0xfe and 0xff: the decoders from the text, a range reply and a watch
 * line (etcd_stream.c and its scanner, which the daemon uses).
 * Invariants: no crash, no over-read (ASan); a decoded range holds only
 * keys under the prefix, with a value and, unless marked, a revision in
 * 1 .. INT64_MAX - 1; watch events hold a key; a key that passes the check
 * holds no NUL and no empty, "." or ".." component.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/etcd/etcd_http.h"

#define PREFIX "/p/"

static void check_kv(const struct etcd_kv *kv, bool under_prefix)
{
	if (!kv->key || !kv->value || kv->key_len == 0)
		abort();
	if (under_prefix && (kv->key_len < 3 || memcmp(kv->key, PREFIX, 3)))
		abort();
	if (!kv->err && (kv->mod_revision < 1 || kv->mod_revision == INT64_MAX))
		abort();
	if (kv->key[kv->key_len] || kv->value[kv->value_len])
		abort(); /* NUL-terminated at their lengths */
}

static void check_key(const char *key, size_t len)
{
	char *k;

	if (etcd_key_check(key, len, PREFIX, 3))
		return;
	if (len <= 3 || len > ETCD_KEY_MAX || memchr(key, '\0', len))
		abort();
	k = strndup(key, len); /* accepted: no NUL inside, so a C string of it is whole */
	if (!k)
		return;
	if (strstr(k, "//") || k[len - 1] == '/' || !strncmp(k + 3, "./", 2) ||
	    !strncmp(k + 3, "../", 3) || !strcmp(k + 3, ".") || !strcmp(k + 3, "..") ||
	    strstr(k, "/./") || strstr(k, "/../") ||
	    (len >= 2 && !strcmp(k + len - 2, "/.")) || (len >= 3 && !strcmp(k + len - 3, "/..")))
		abort();
	free(k);
}

static int text_kv(void *arg, const struct etcd_kv *kv)
{
	(void)arg;
	check_kv(kv, true);
	return 0;
}

static int text_watch(void *arg, const struct etcd_watch_msg *m)
{
	(void)arg;
	for (size_t i = 0; i < m->n_events; i++)
		check_kv(&m->events[i].kv, false);
	return 0;
}

/* The text decoders: the same invariants, each kv or event as it comes. */
static void from_text(int watch, const char *text, size_t len)
{
	struct etcd_conn c = { 0 };
	int64_t rev = 0;

	if (watch)
		etcd_watch_text(&c, text, len, text_watch, NULL);
	else if (!etcd_range_text(&c, text, len, PREFIX, &rev, text_kv, NULL) &&
		 (rev < 0 || rev == INT64_MAX))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_tokener *tok;
	json_object *obj;
	int mode;

	if (size < 1)
		return 0;
	if (data[0] >= 0xfe) {
		from_text(data[0] == 0xff, (const char *)data + 1, size - 1);
		return 0;
	}
	mode = data[0] % 3;
	if (mode == 2) {
		check_key((const char *)data + 1, size - 1);
		return 0;
	}
	tok = json_tokener_new();
	obj = tok ? json_tokener_parse_ex(tok, (const char *)data + 1, (int)(size - 1)) : NULL;
	json_tokener_free(tok);
	if (mode == 0) {
		struct etcd_kv *kvs;
		size_t n, dropped;
		int64_t rev;

		if (!etcd_parse_range(obj, PREFIX, &rev, &kvs, &n, &dropped)) {
			if (rev < 0 || rev == INT64_MAX)
				abort();
			for (size_t i = 0; i < n; i++)
				check_kv(&kvs[i], true);
			etcd_kvs_free(kvs, n);
		}
	} else {
		struct etcd_watch_msg m;

		if (!etcd_parse_watch(obj, &m)) {
			for (size_t i = 0; i < m.n_events; i++)
				check_kv(&m.events[i].kv, false);
			etcd_watch_msg_free(&m);
		}
	}
	json_object_put(obj);
	return 0;
}
