/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decoding etcd's JSON replies, which are hostile input (DESIGN.md §7): a
 * root daemon parses them. Every field is type-checked before use, numbers
 * are range-checked, base64 is decoded with the length json-c holds (a
 * "\u0000" in a string must not cut it short), and decoded keys are bounded.
 * A field of the wrong type is an error, never a guess: json-c's accessors
 * convert any type to any other, and its array calls abort on non-arrays.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"


/* @obj's @field if @obj is an object holding it with type @type (NULL: absent or wrong). */
static int get_typed(json_object *obj, const char *field, json_type type, json_object **out)
{
	json_object *v;

	*out = NULL;
	if (!obj || !json_object_is_type(obj, json_type_object))
		return -EBADMSG;
	if (!json_object_object_get_ex(obj, field, &v) || json_object_is_type(v, json_type_null))
		return 0; /* proto3 leaves out zero values: absent is the zero value */
	if (!json_object_is_type(v, type))
		return -EBADMSG;
	*out = v;
	return 0;
}

int etcd_json_i64(json_object *obj, const char *field, int64_t *out)
{
	json_object *v;
	int64_t val;

	*out = 0;
	if (!obj || !json_object_is_type(obj, json_type_object))
		return -EBADMSG;
	if (!json_object_object_get_ex(obj, field, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		size_t len = (size_t)json_object_get_string_len(v);
		char *end;

		/* Decimal digits only: no sign, space, hex or trailing junk. */
		if (!len || len > 19 || strspn(s, "0123456789") != len)
			return -EBADMSG;
		errno = 0;
		val = strtoll(s, &end, 10);
		if (errno || end != s + len)
			return -EBADMSG;
	} else if (json_object_is_type(v, json_type_int)) {
		errno = 0;
		val = json_object_get_int64(v);
		if (errno || val < 0)
			return -EBADMSG;
	} else {
		return -EBADMSG;
	}
	/* Revisions are followed by revision + 1: INT64_MAX has no successor. */
	if (val == INT64_MAX)
		return -ERANGE;
	*out = val;
	return 0;
}

static int get_bool(json_object *obj, const char *field, bool *out)
{
	json_object *v;
	int err = get_typed(obj, field, json_type_boolean, &v);

	*out = !err && v && json_object_get_boolean(v);
	return err;
}

/* A base64 string field, decoded; absent is "" (proto3 leaves out empty bytes). */
static int get_b64(json_object *obj, const char *field, char **out, size_t *len)
{
	json_object *v;
	int err = get_typed(obj, field, json_type_string, &v);

	*out = NULL;
	*len = 0;
	if (err)
		return err;
	if (!v) {
		*out = strdup("");
		return *out ? 0 : -ENOMEM;
	}
	return etcd_b64_decode_n(json_object_get_string(v), (size_t)json_object_get_string_len(v),
				 out, len);
}

/*
 * One kv object. A key that cannot be decoded (or is too long) fails the
 * kv: it names nothing. A value or revision that cannot be decoded marks
 * the kv (kv->err), so that its key alone is refused.
 */
int etcd_parse_kv(json_object *o, struct etcd_kv *kv)
{
	int err;

	memset(kv, 0, sizeof(*kv));
	if (!o || !json_object_is_type(o, json_type_object))
		return -EBADMSG;
	err = get_b64(o, "key", &kv->key, &kv->key_len);
	if (err)
		return err == -ENOMEM ? err : -EBADMSG;
	if (!kv->key_len || kv->key_len > ETCD_KEY_DECODE_MAX) {
		free(kv->key);
		kv->key = NULL;
		return -EBADMSG;
	}
	kv->err = etcd_json_i64(o, "mod_revision", &kv->mod_revision);
	if (!kv->err && kv->mod_revision <= 0)
		kv->err = -EBADMSG; /* every stored key has one */
	if (!kv->err)
		kv->err = get_b64(o, "value", &kv->value, &kv->value_len);
	if (kv->err == -ENOMEM)
		return -ENOMEM;
	if (kv->err) {
		free(kv->value);
		kv->value = strdup(""); /* callers never see NULL */
		kv->value_len = 0;
		kv->err = -EBADMSG;
		if (!kv->value)
			return -ENOMEM;
	}
	return 0;
}

void etcd_kv_free(struct etcd_kv *kv)
{
	free(kv->key);
	free(kv->value);
}

void etcd_kvs_free(struct etcd_kv *kvs, size_t n)
{
	for (size_t i = 0; kvs && i < n; i++)
		etcd_kv_free(&kvs[i]);
	free(kvs);
}

/* The "revision" of @obj's "header" (an object; required when @need). */
static int header_revision(json_object *obj, bool need, int64_t *rev)
{
	json_object *hdr;
	int err = get_typed(obj, "header", json_type_object, &hdr);

	*rev = 0;
	if (err)
		return err;
	if (!hdr)
		return need ? -EBADMSG : 0;
	return etcd_json_i64(hdr, "revision", rev);
}

int etcd_parse_range(json_object *reply, const char *prefix, int64_t *revision,
		     struct etcd_kv **kvs, size_t *n, size_t *dropped)
{
	json_object *arr;
	struct etcd_kv *v;
	size_t count, k = 0, plen = strlen(prefix);
	int err;

	*kvs = NULL;
	*n = 0;
	*dropped = 0;
	err = header_revision(reply, true, revision);
	if (!err)
		err = get_typed(reply, "kvs", json_type_array, &arr);
	if (err)
		return err;
	count = arr ? json_object_array_length(arr) : 0;
	v = calloc(count ? count : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		err = etcd_parse_kv(json_object_array_get_idx(arr, i), &v[k]);
		if (err == -ENOMEM) {
			etcd_kvs_free(v, k);
			return err;
		}
		/* Keys outside the prefix asked for were not asked for. */
		if (err || v[k].key_len < plen || memcmp(v[k].key, prefix, plen)) {
			etcd_kv_free(&v[k]);
			(*dropped)++;
			continue;
		}
		k++;
	}
	*kvs = v;
	*n = k;
	return 0;
}

void etcd_watch_msg_free(struct etcd_watch_msg *m)
{
	for (size_t i = 0; m->events && i < m->n_events; i++)
		etcd_kv_free(&m->events[i].kv);
	free(m->events);
	memset(m, 0, sizeof(*m));
}

int etcd_parse_event(json_object *ev, struct etcd_event *out)
{
	json_object *type, *kv;
	int err = get_typed(ev, "type", json_type_string, &type);

	if (!err)
		err = get_typed(ev, "kv", json_type_object, &kv);
	if (err || !kv)
		return -EBADMSG;
	if (!type || !strcmp(json_object_get_string(type), "PUT"))
		out->type = ETCD_EVENT_PUT; /* PUT is the enum's zero: left out */
	else if (!strcmp(json_object_get_string(type), "DELETE"))
		out->type = ETCD_EVENT_DELETE;
	else
		return -EBADMSG;
	return etcd_parse_kv(kv, &out->kv);
}

int etcd_parse_watch(json_object *res, struct etcd_watch_msg *m)
{
	json_object *events, *reason;
	size_t count;
	int err;

	memset(m, 0, sizeof(*m));
	if (!res || !json_object_is_type(res, json_type_object))
		return -EBADMSG;
	err = header_revision(res, false, &m->revision);
	if (!err)
		err = etcd_json_i64(res, "compact_revision", &m->compact_revision);
	if (!err)
		err = get_bool(res, "created", &m->created);
	if (!err)
		err = get_bool(res, "canceled", &m->canceled);
	if (!err)
		err = get_typed(res, "cancel_reason", json_type_string, &reason);
	if (!err)
		err = get_typed(res, "events", json_type_array, &events);
	if (err)
		return -EBADMSG;
	if (reason)
		snprintf(m->cancel_reason, sizeof(m->cancel_reason), "%s",
			 json_object_get_string(reason));
	count = events ? json_object_array_length(events) : 0;
	if (!count)
		return 0;
	m->events = calloc(count, sizeof(*m->events));
	if (!m->events)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		err = etcd_parse_event(json_object_array_get_idx(events, i), &m->events[i]);
		m->n_events = i + 1;
		if (err) {
			etcd_watch_msg_free(m);
			return err == -ENOMEM ? err : -EBADMSG;
		}
	}
	return 0;
}

/*
 * Can @key (@len bytes) name an entry? It must lie under the prefix, hold
 * no NUL (a C string would name another entry: "a/b\0junk" is "a/b"), and
 * its path must be non-empty with no empty, "." or ".." component.
 * Return: 0, -EINVAL, or -ENAMETOOLONG.
 */
int etcd_key_check(const char *key, size_t len, const char *prefix, size_t prefix_len)
{
	const char *p, *end = key + len;

	if (len > ETCD_KEY_MAX)
		return -ENAMETOOLONG;
	if (len <= prefix_len || memcmp(key, prefix, prefix_len) || memchr(key, '\0', len))
		return -EINVAL;
	for (p = key + prefix_len; p <= end;) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t n = (size_t)((slash ? slash : end) - p);

		if (!n || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (!slash)
			break;
		p = slash + 1;
	}
	return 0;
}

/* An {"error": ...} reply: its message (the gRPC status) in @c->err. */
int etcd_reply_error(struct etcd_conn *c, json_object *reply)
{
	json_object *e, *m;
	const char *msg = "error reply";

	if (!reply || !json_object_object_get_ex(reply, "error", &e))
		return 0;
	if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, "message", &m))
		msg = json_object_get_string(m);
	else if (json_object_is_type(e, json_type_string))
		msg = json_object_get_string(e);
	etcd_set_err(c, "etcd: %s", msg); /* text from outside: cleaned there */
	return -EPROTO;
}
