/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * etcd's v3 JSON gateway over libcurl. Requests are POSTs of a JSON body;
 * replies are JSON objects, or {"error": ...} with the gRPC status. A range
 * reply, which may hold a whole prefix, is decoded one kv at a time from
 * its text (etcd_stream.c); any other reply, a few values, is counted by
 * the scanner before json-c holds it whole. The watch is in etcd_watch.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/url_userinfo.h"
#include "etcd_http_int.h"
#include "etcd_scan.h"

/* Values a reply other than a range may hold (a transaction of 128 puts: about 1 000). */
#define SMALL_REPLY_VALUES 16384

int etcd_conn_init(struct etcd_conn *c, const char *endpoints, const struct etcd_tls *tls)
{
	const char *p = endpoints;
	size_t n = 1;

	memset(c, 0, sizeof(*c));
	c->timeout_ms = 5000;
	if (!endpoints || !*endpoints)
		return -EINVAL;
	for (const char *q = endpoints; *q; q++)
		n += *q == ',';
	c->endpoints = calloc(n, sizeof(*c->endpoints));
	if (!c->endpoints)
		return -ENOMEM;
	while (*p) {
		size_t len = strcspn(p, ",");

		while (len && p[len - 1] == '/')
			len--; /* "http://h:2379/" and "http://h:2379" are one endpoint */
		if (len) {
			c->endpoints[c->n_endpoints] = strndup(p, len);
			if (!c->endpoints[c->n_endpoints])
				goto nomem;
			c->n_endpoints++;
		}
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	if (!c->n_endpoints) {
		etcd_conn_free(c);
		return -EINVAL;
	}
	{
		/* Hosts started together must not all watch the first member. */
		struct timespec ts;
		unsigned seed;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = (unsigned)getpid() ^ (unsigned)ts.tv_nsec ^ (unsigned)(uintptr_t)c;
		c->cur = (size_t)rand_r(&seed) % c->n_endpoints;
	}
	if (tls && ((tls->cacert && !(c->cacert = strdup(tls->cacert))) ||
		    (tls->cert && !(c->cert = strdup(tls->cert))) ||
		    (tls->key && !(c->key = strdup(tls->key)))))
		goto nomem;
	return 0;
nomem:
	etcd_conn_free(c);
	return -ENOMEM;
}

void etcd_conn_free(struct etcd_conn *c)
{
	for (size_t i = 0; i < c->n_endpoints; i++)
		free(c->endpoints[i]);
	free(c->endpoints);
	free(c->cacert);
	free(c->cert);
	free(c->key);
	if (c->userpwd) {
		explicit_bzero(c->userpwd, strlen(c->userpwd));
		free(c->userpwd);
	}
	if (c->unary)
		curl_easy_cleanup(c->unary);
	memset(c, 0, sizeof(*c));
}

int etcd_conn_set_userpwd(struct etcd_conn *c, const char *userpwd)
{
	char *copy = userpwd ? strdup(userpwd) : NULL;

	if (userpwd && !copy)
		return -ENOMEM;
	if (c->userpwd) {
		explicit_bzero(c->userpwd, strlen(c->userpwd));
		free(c->userpwd);
	}
	c->userpwd = copy;
	return 0;
}

void etcd_conn_next(struct etcd_conn *c)
{
	if (c->n_endpoints)
		c->cur = (c->cur + 1) % c->n_endpoints;
}

void etcd_conn_name(const struct etcd_conn *c, char *buf, size_t size)
{
	const char *url = c->n_endpoints ? c->endpoints[c->cur] : "";
	size_t host, end;

	/* A URL may carry user:password@ (common/url_userinfo.h); messages must not. */
	if (rcs_url_userinfo(url, strlen(url), &host, &end))
		snprintf(buf, size, "%.*s%s", (int)host, url, url + end + 1);
	else
		snprintf(buf, size, "%s", url);
}

int etcd_prefix_end(const char *prefix, char **out, size_t *len)
{
	size_t n = strlen(prefix);
	char *e = malloc(n + 1);

	if (!e)
		return -ENOMEM;
	memcpy(e, prefix, n + 1);
	/* The first key after every key that starts with @prefix: drop trailing
	 * 0xff bytes, then add one to the last byte. All 0xff: "\0" = no end. */
	while (n && (unsigned char)e[n - 1] == 0xff)
		n--;
	if (!n) {
		e[0] = '\0';
		*len = 1;
	} else {
		e[n - 1] = (char)((unsigned char)e[n - 1] + 1);
		*len = n;
	}
	*out = e;
	return 0;
}

/* ---- requests ---- */

size_t etcd_collect(char *data, size_t size, size_t nmemb, void *arg)
{
	struct membuf *b = arg;
	size_t n = size * nmemb;

	if (b->len + n + 1 > REPLY_MAX) {
		b->too_big = true;
		return 0;
	}
	if (b->c && b->c->cancel && b->c->cancel(b->c->cancel_arg))
		return 0;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/* A unary request's progress: a stop ends it (a reply trickling in, say). */
static int unary_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct etcd_conn *c = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	return c->cancel && c->cancel(c->cancel_arg);
}

void etcd_setup(struct etcd_conn *c, size_t idx, CURL *h, const char *path, const char *body,
		  struct curl_slist *hdr, char *url, size_t url_size)
{
	snprintf(url, url_size, "%s%s", c->endpoints[idx], path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for DNS timeouts */
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	if (c->cert)
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert);
	if (c->key)
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key);
	if (c->userpwd)
		curl_easy_setopt(h, CURLOPT_USERPWD, c->userpwd);
}

int etcd_curl_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return -ECONNREFUSED;
	default:
		return -ECONNRESET;
	}
}

/* POST @body to @path of endpoint @idx: the reply's text in @b, its HTTP status in *@status. */
static int post(struct etcd_conn *c, size_t idx, const char *path, json_object *body,
		struct membuf *b, long *status)
{
	struct curl_slist *hdr;
	char url[1024];
	CURLcode rc;

	*b = (struct membuf){ .c = c };
	*status = 0;
	if (!c->unary && !(c->unary = curl_easy_init()))
		return -ENOMEM;
	hdr = curl_slist_append(NULL, "Content-Type: application/json");
	if (!hdr)
		return -ENOMEM;
	curl_easy_reset(c->unary);
	etcd_setup(c, idx, c->unary, path, json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN),
	      hdr, url, sizeof(url));
	curl_easy_setopt(c->unary, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(c->unary, CURLOPT_WRITEFUNCTION, etcd_collect);
	curl_easy_setopt(c->unary, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c->unary, CURLOPT_XFERINFOFUNCTION, unary_progress);
	curl_easy_setopt(c->unary, CURLOPT_XFERINFODATA, c);
	curl_easy_setopt(c->unary, CURLOPT_NOPROGRESS, c->cancel ? 0L : 1L);
	rc = curl_easy_perform(c->unary);
	curl_slist_free_all(hdr);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(c->unary, CURLINFO_RESPONSE_CODE, status);
		return 0;
	}
	if (c->cancel && c->cancel(c->cancel_arg)) {
		etcd_set_err(c, "%s", "stopped");
		return -ECANCELED;
	}
	etcd_set_err(c, "%s", b->too_big ? "reply too large" : curl_easy_strerror(rc));
	return b->too_big ? -EMSGSIZE : etcd_curl_errno(rc);
}

/*
 * The reply to anything but a range (a put, a transaction, an error) is a
 * few values: json-c may hold it whole once the scanner has counted them.
 */
static int parse_reply(struct etcd_conn *c, const struct membuf *b, long status,
		       json_object **reply)
{
	struct jspan whole;
	size_t values = 0;
	int err = 0;

	*reply = NULL;
	if (b->p && !jscan_whole(b->p, b->len, &whole, &values) && values <= SMALL_REPLY_VALUES) {
		json_tokener *tok = json_tokener_new_ex(JSCAN_DEPTH_MAX);

		*reply = tok ? json_tokener_parse_ex(tok, b->p, (int)b->len + 1) : NULL;
		json_tokener_free(tok);
	}
	err = etcd_reply_error(c, *reply);
	if (!err && (status != 200 || !json_object_is_type(*reply, json_type_object))) {
		char msg[64];

		snprintf(msg, sizeof(msg), "HTTP status %ld", status);
		etcd_set_err(c, "etcd gateway: unexpected reply (%s)", msg);
		err = status != 200 ? -EPROTO : -EBADMSG;
	}
	if (err) {
		json_object_put(*reply);
		*reply = NULL;
	}
	return err;
}

/* POST @body to @path of endpoint @idx; *@reply gets the parsed JSON object. */
static int request_at(struct etcd_conn *c, size_t idx, const char *path, json_object *body,
		      json_object **reply)
{
	struct membuf b;
	long status;
	int err = post(c, idx, path, body, &b, &status);

	*reply = NULL;
	if (!err)
		err = parse_reply(c, &b, status, reply);
	free(b.p);
	return err;
}

static int request(struct etcd_conn *c, const char *path, json_object *body, json_object **reply)
{
	return request_at(c, c->cur, path, body, reply);
}

static int add_b64(json_object *obj, const char *field, const char *data, size_t len)
{
	char *enc;
	int err = etcd_b64_encode(data, len, &enc);

	if (err)
		return err;
	json_object_object_add(obj, field, json_object_new_string(enc));
	free(enc);
	return 0;
}

int etcd_add_prefix_range(json_object *obj, const char *prefix)
{
	char *end;
	size_t end_len;
	int err = add_b64(obj, "key", prefix, strlen(prefix));

	if (!err)
		err = etcd_prefix_end(prefix, &end, &end_len);
	if (!err) {
		err = add_b64(obj, "range_end", end, end_len);
		free(end);
	}
	return err;
}

/*
 * A range at endpoint @idx, its kvs handed to @fn as they are decoded: the
 * reply's text is never held as json-c objects (etcd_stream.c).
 */
static int range_at(struct etcd_conn *c, size_t idx, const char *prefix, json_object *body,
		    int64_t *revision, etcd_kv_fn *fn, void *arg)
{
	json_object *reply = NULL;
	struct membuf b;
	long status;
	int err = post(c, idx, "/v3/kv/range", body, &b, &status);

	c->dropped = 0;
	if (!err && status != 200)
		err = parse_reply(c, &b, status, &reply); /* an error: its message */
	else if (!err)
		err = etcd_range_text(c, b.p ? b.p : "", b.len, prefix, revision, fn, arg);
	json_object_put(reply);
	free(b.p);
	return err;
}

/* The body of a range over every key under @prefix (at *@revision unless 0). */
static json_object *range_body(const char *prefix, int64_t revision)
{
	json_object *body = json_object_new_object();

	if (body && etcd_add_prefix_range(body, prefix)) {
		json_object_put(body);
		return NULL;
	}
	if (body && revision)
		json_object_object_add(body, "revision", json_object_new_int64(revision));
	return body;
}

int etcd_range_each(struct etcd_conn *c, const char *prefix, int64_t *revision, etcd_kv_fn *fn,
		    void *arg)
{
	json_object *body = range_body(prefix, *revision);
	int err;

	c->dropped = 0;
	if (!body)
		return -ENOMEM;
	err = range_at(c, c->cur, prefix, body, revision, fn, arg);
	json_object_put(body);
	return err;
}

/* etcd_range_prefix()'s array, grown as the kvs come. */
struct kv_array {
	struct etcd_kv *v;
	size_t n, cap;
};

static int keep_kv(void *arg, const struct etcd_kv *kv)
{
	struct kv_array *a = arg;
	struct etcd_kv copy = *kv;

	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct etcd_kv *v = realloc(a->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	copy.key = malloc(kv->key_len + 1);
	copy.value = malloc(kv->value_len + 1);
	if (!copy.key || !copy.value) {
		etcd_kv_free(&copy);
		return -ENOMEM;
	}
	memcpy(copy.key, kv->key, kv->key_len + 1);
	memcpy(copy.value, kv->value, kv->value_len + 1);
	a->v[a->n++] = copy;
	return 0;
}

int etcd_range_prefix(struct etcd_conn *c, const char *prefix, int64_t *revision,
		      struct etcd_kv **kvs, size_t *n)
{
	struct kv_array a = { 0 };
	int err = etcd_range_each(c, prefix, revision, keep_kv, &a);

	if (err) {
		etcd_kvs_free(a.v, a.n);
		a.v = NULL;
		a.n = 0;
	}
	*kvs = a.v;
	*n = a.n;
	return err;
}

static int newest_mod(void *arg, const struct etcd_kv *kv)
{
	int64_t *max_mod = arg;

	if (!kv->err && kv->mod_revision > *max_mod)
		*max_mod = kv->mod_revision;
	return 0;
}

int etcd_max_mod_revision(struct etcd_conn *c, size_t index, const char *prefix,
			  int64_t *max_mod, int64_t *revision)
{
	json_object *body = range_body(prefix, 0);
	int err;

	*max_mod = 0;
	*revision = 0;
	if (!body)
		return -ENOMEM;
	if (index >= c->n_endpoints)
		index = 0;
	/* Only the newest-modified key, without its value: one small reply. */
	json_object_object_add(body, "limit", json_object_new_int64(1));
	json_object_object_add(body, "sort_order", json_object_new_string("DESCEND"));
	json_object_object_add(body, "sort_target", json_object_new_string("MOD"));
	json_object_object_add(body, "keys_only", json_object_new_boolean(1));
	err = range_at(c, index, prefix, body, revision, newest_mod, max_mod);
	json_object_put(body);
	return err;
}

/* The revision in @reply's header; a malformed one is -EBADMSG. */
static int header_rev(struct etcd_conn *c, json_object *reply, int64_t *revision)
{
	json_object *hdr;
	int err = -EBADMSG;

	*revision = 0;
	if (json_object_object_get_ex(reply, "header", &hdr) &&
	    json_object_is_type(hdr, json_type_object))
		err = etcd_json_i64(hdr, "revision", revision) ? -EBADMSG : 0;
	if (err)
		etcd_set_err(c, "etcd gateway: %s", "a reply header that is not etcd's");
	return err;
}

int etcd_put(struct etcd_conn *c, const char *key, const char *value, size_t len,
	     int64_t *revision)
{
	json_object *body = json_object_new_object(), *reply = NULL;
	int err;

	if (!body)
		return -ENOMEM;
	err = add_b64(body, "key", key, strlen(key));
	if (!err)
		err = add_b64(body, "value", value, len);
	if (!err)
		err = request(c, "/v3/kv/put", body, &reply);
	json_object_put(body);
	if (!err && revision)
		err = header_rev(c, reply, revision);
	json_object_put(reply);
	return err;
}

int etcd_put_if(struct etcd_conn *c, const char *key, const char *value, size_t len,
		int64_t mod_revision, int *done, int64_t *revision)
{
	json_object *body = json_object_new_object(), *cmp = json_object_new_object(),
		    *put = json_object_new_object(), *op = json_object_new_object();
	json_object *cmps = json_object_new_array(), *ops = json_object_new_array();
	json_object *reply = NULL, *ok;
	int err = -ENOMEM;

	if (!body || !cmp || !put || !op || !cmps || !ops) {
		json_object_put(body);
		json_object_put(cmp);
		json_object_put(put);
		json_object_put(op);
		json_object_put(cmps);
		json_object_put(ops);
		return -ENOMEM;
	}
	/* compare mod_revision == N; mod_revision 0 is how a missing key compares */
	json_object_object_add(cmp, "target", json_object_new_string("MOD"));
	json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
	json_object_object_add(cmp, "mod_revision", json_object_new_int64(mod_revision));
	json_object_array_add(cmps, cmp);
	json_object_object_add(op, "request_put", put);
	json_object_array_add(ops, op);
	json_object_object_add(body, "compare", cmps);
	json_object_object_add(body, "success", ops);
	err = add_b64(cmp, "key", key, strlen(key));
	if (!err)
		err = add_b64(put, "key", key, strlen(key));
	if (!err)
		err = add_b64(put, "value", value, len);
	if (!err)
		err = request(c, "/v3/kv/txn", body, &reply);
	json_object_put(body);
	if (!err) {
		/* "succeeded" is left out when false (proto3); any other type is not etcd. */
		*done = 0;
		if (json_object_object_get_ex(reply, "succeeded", &ok) &&
		    !json_object_is_type(ok, json_type_null)) {
			if (json_object_is_type(ok, json_type_boolean))
				*done = json_object_get_boolean(ok);
			else
				err = -EBADMSG;
		}
		if (!err && revision)
			err = header_rev(c, reply, revision);
	}
	json_object_put(reply);
	return err;
}

int etcd_txn_put_delete(struct etcd_conn *c, const char *const *keys, const char *const *values,
			size_t n)
{
	json_object *body = json_object_new_object(), *ops = json_object_new_array(), *reply = NULL;
	int err = body && ops ? 0 : -ENOMEM;

	if (!err)
		json_object_object_add(body, "success", ops);
	else
		json_object_put(ops);
	for (size_t i = 0; !err && i < n; i++) {
		json_object *op = json_object_new_object(), *req = json_object_new_object();

		if (!op || !req) {
			json_object_put(op);
			json_object_put(req);
			err = -ENOMEM;
			break;
		}
		json_object_object_add(op, values[i] ? "request_put" : "request_delete_range", req);
		json_object_array_add(ops, op);
		err = add_b64(req, "key", keys[i], strlen(keys[i]));
		if (!err && values[i])
			err = add_b64(req, "value", values[i], strlen(values[i]));
	}
	if (!err)
		err = request(c, "/v3/kv/txn", body, &reply);
	json_object_put(body);
	json_object_put(reply);
	return err;
}

/* A put-only transaction: etcd_txn_put_delete() with no NULL value. */
int etcd_put_many(struct etcd_conn *c, const char *const *keys, const char *const *values,
		  size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!values[i])
			return -EINVAL;
	return etcd_txn_put_delete(c, keys, values, n);
}

int etcd_delete(struct etcd_conn *c, const char *key)
{
	json_object *body = json_object_new_object(), *reply = NULL;
	int err;

	if (!body)
		return -ENOMEM;
	err = add_b64(body, "key", key, strlen(key));
	if (!err)
		err = request(c, "/v3/kv/deleterange", body, &reply);
	json_object_put(body);
	json_object_put(reply);
	return err;
}
