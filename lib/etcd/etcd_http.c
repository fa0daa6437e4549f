/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * etcd's v3 JSON gateway over libcurl. Requests are POSTs of a JSON body;
 * replies are JSON objects, or {"error": ...} with the gRPC status. A watch
 * is one long POST whose reply is a stream of JSON objects, one per line.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etcd_http.h"

#define REPLY_MAX (64u << 20) /* a reply larger than this is refused, not grown forever */
#define LINE_MAX_BYTES (64u << 20)

static void set_err(struct etcd_conn *c, const char *fmt, const char *detail)
{
	snprintf(c->err, sizeof(c->err), fmt, detail ? detail : "");
}

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
	if (c->unary)
		curl_easy_cleanup(c->unary);
	memset(c, 0, sizeof(*c));
}

void etcd_conn_next(struct etcd_conn *c)
{
	if (c->n_endpoints)
		c->cur = (c->cur + 1) % c->n_endpoints;
}

void etcd_conn_name(const struct etcd_conn *c, char *buf, size_t size)
{
	const char *url = c->n_endpoints ? c->endpoints[c->cur] : "";
	const char *scheme = strstr(url, "://");
	const char *host = scheme ? scheme + 3 : url;
	const char *at = strchr(host, '@');

	/* A URL may carry user:password@; messages must not. */
	if (at && (!strchr(host, '/') || at < strchr(host, '/')))
		snprintf(buf, size, "%.*s%s", (int)(host - url), url, at + 1);
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

struct membuf {
	char *p;
	size_t len, cap;
	bool too_big;
};

static size_t collect(char *data, size_t size, size_t nmemb, void *arg)
{
	struct membuf *b = arg;
	size_t n = size * nmemb;

	if (b->len + n + 1 > REPLY_MAX) {
		b->too_big = true;
		return 0;
	}
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

static void setup(struct etcd_conn *c, size_t idx, CURL *h, const char *path, const char *body,
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
}

static int curl_errno(CURLcode rc)
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

/* An {"error": ...} reply (HTTP status or not): copy its message. */
static int reply_error(struct etcd_conn *c, json_object *reply)
{
	json_object *e, *m;

	if (!reply || !json_object_object_get_ex(reply, "error", &e))
		return 0;
	if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, "message", &m))
		set_err(c, "etcd: %s", json_object_get_string(m));
	else if (json_object_is_type(e, json_type_string))
		set_err(c, "etcd: %s", json_object_get_string(e));
	else
		set_err(c, "etcd: error reply%s", NULL);
	return -EPROTO;
}

/* POST @body to @path of endpoint @idx; *@reply gets the parsed JSON object. */
static int request_at(struct etcd_conn *c, size_t idx, const char *path, json_object *body,
		      json_object **reply)
{
	struct curl_slist *hdr;
	struct membuf b = { 0 };
	char url[1024];
	long status = 0;
	CURLcode rc;
	int err = 0;

	*reply = NULL;
	if (!c->unary && !(c->unary = curl_easy_init()))
		return -ENOMEM;
	hdr = curl_slist_append(NULL, "Content-Type: application/json");
	if (!hdr)
		return -ENOMEM;
	curl_easy_reset(c->unary);
	setup(c, idx, c->unary, path, json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN),
	      hdr, url, sizeof(url));
	curl_easy_setopt(c->unary, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(c->unary, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c->unary, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(c->unary);
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK) {
		set_err(c, "%s", b.too_big ? "reply too large" : curl_easy_strerror(rc));
		err = b.too_big ? -EMSGSIZE : curl_errno(rc);
		goto out;
	}
	curl_easy_getinfo(c->unary, CURLINFO_RESPONSE_CODE, &status);
	*reply = b.p ? json_tokener_parse(b.p) : NULL;
	err = reply_error(c, *reply);
	if (!err && (status != 200 || !json_object_is_type(*reply, json_type_object))) {
		char msg[64];

		snprintf(msg, sizeof(msg), "HTTP status %ld", status);
		set_err(c, "etcd gateway: unexpected reply (%s)", msg);
		err = status != 200 ? -EPROTO : -EBADMSG;
	}
	if (err) {
		json_object_put(*reply);
		*reply = NULL;
	}
out:
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

static int add_prefix_range(json_object *obj, const char *prefix)
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

int etcd_range_prefix(struct etcd_conn *c, const char *prefix, int64_t *revision,
		      struct etcd_kv **kvs, size_t *n)
{
	json_object *body = json_object_new_object(), *reply = NULL;
	int err;

	*kvs = NULL;
	*n = 0;
	c->dropped = 0;
	if (!body)
		return -ENOMEM;
	err = add_prefix_range(body, prefix);
	if (!err && *revision)
		json_object_object_add(body, "revision", json_object_new_int64(*revision));
	if (!err)
		err = request(c, "/v3/kv/range", body, &reply);
	json_object_put(body);
	if (!err) {
		err = etcd_parse_range(reply, prefix, revision, kvs, n, &c->dropped);
		if (err)
			set_err(c, "etcd gateway: %s", "a range reply that is not etcd's");
	}
	json_object_put(reply);
	return err;
}

int etcd_max_mod_revision(struct etcd_conn *c, size_t index, const char *prefix,
			  int64_t *max_mod, int64_t *revision)
{
	json_object *body = json_object_new_object(), *reply = NULL;
	struct etcd_kv *kvs = NULL;
	size_t n = 0, dropped;
	int err;

	*max_mod = 0;
	*revision = 0;
	if (!body)
		return -ENOMEM;
	if (index >= c->n_endpoints)
		index = 0;
	/* Only the newest-modified key, without its value: one small reply. */
	err = add_prefix_range(body, prefix);
	if (!err) {
		json_object_object_add(body, "limit", json_object_new_int64(1));
		json_object_object_add(body, "sort_order", json_object_new_string("DESCEND"));
		json_object_object_add(body, "sort_target", json_object_new_string("MOD"));
		json_object_object_add(body, "keys_only", json_object_new_boolean(1));
		err = request_at(c, index, "/v3/kv/range", body, &reply);
	}
	json_object_put(body);
	if (!err)
		err = etcd_parse_range(reply, prefix, revision, &kvs, &n, &dropped);
	if (!err && n)
		*max_mod = kvs[0].mod_revision;
	if (err == -EBADMSG)
		set_err(c, "etcd gateway: %s", "a range reply that is not etcd's");
	etcd_kvs_free(kvs, n);
	json_object_put(reply);
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
		set_err(c, "etcd gateway: %s", "a reply header that is not etcd's");
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

/* ---- watch ---- */

struct watch_ctx {
	struct etcd_conn *c;
	struct membuf line;
	etcd_watch_fn *fn;
	void *arg;
	int (*tick)(void *arg);
	int result; /* why the stream was cut short by us */
};

/* One complete line of the stream: {"result": {...}} or {"error": {...}}. */
static int watch_line(struct watch_ctx *w, const char *text, size_t len)
{
	json_tokener *tok = json_tokener_new();
	json_object *msg = NULL, *res;
	struct etcd_watch_msg m;
	int ret;

	if (!tok)
		return -ENOMEM;
	msg = json_tokener_parse_ex(tok, text, (int)len);
	/* One whole object and nothing after it: json_tokener_parse() would
	 * take a prefix and drop the rest. */
	if (msg && json_tokener_get_parse_end(tok) != len) {
		json_object_put(msg);
		msg = NULL;
	}
	json_tokener_free(tok);
	if (!msg || !json_object_is_type(msg, json_type_object)) {
		json_object_put(msg);
		set_err(w->c, "watch: %s", "a message that is not JSON");
		return -EBADMSG;
	}
	ret = reply_error(w->c, msg);
	if (!ret) {
		if (!json_object_object_get_ex(msg, "result", &res)) {
			set_err(w->c, "watch: %s", "a message without a result");
			ret = -EBADMSG;
		} else if ((ret = etcd_parse_watch(res, &m)) != 0) {
			set_err(w->c, "watch: %s", ret == -ENOMEM ? "out of memory" :
						   "a message that is not etcd's");
		} else {
			ret = w->fn(w->arg, &m);
			etcd_watch_msg_free(&m);
		}
	}
	json_object_put(msg);
	return ret;
}

/* Non-zero ends the transfer; the first reason to end it is kept. */
static int tick(struct watch_ctx *w)
{
	if (w->result)
		return 1;
	if (w->tick)
		w->result = w->tick(w->arg);
	return w->result != 0;
}

static size_t watch_data(char *data, size_t size, size_t nmemb, void *arg)
{
	struct watch_ctx *w = arg;
	size_t n = size * nmemb, start = 0, i;

	for (i = 0; i < n; i++) {
		if (data[i] != '\n')
			continue;
		if (w->line.len + i - start > LINE_MAX_BYTES ||
		    collect(data + start, 1, i - start, &w->line) != i - start) {
			w->result = -EMSGSIZE;
			return 0;
		}
		start = i + 1;
		if (w->line.len) {
			int ret = watch_line(w, w->line.p, w->line.len);

			w->line.len = 0;
			if (ret) {
				w->result = ret;
				return 0; /* ends the transfer */
			}
		}
	}
	if (start < n && (w->line.len + n - start > LINE_MAX_BYTES ||
			  collect(data + start, 1, n - start, &w->line) != n - start)) {
		w->result = -EMSGSIZE;
		return 0;
	}
	return tick(w) ? 0 : n;
}

static int watch_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct watch_ctx *w = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	return tick(w);
}

static int watch_body(const char *prefix, const struct etcd_watch_opts *o, json_object **out)
{
	json_object *body = json_object_new_object(), *create = json_object_new_object();
	int err;

	*out = NULL;
	if (!body || !create) {
		json_object_put(body);
		json_object_put(create);
		return -ENOMEM;
	}
	json_object_object_add(body, "create_request", create);
	err = add_prefix_range(create, prefix);
	if (!err) {
		json_object_object_add(create, "start_revision",
				       json_object_new_int64(o->start_revision));
		if (o->progress_notify)
			json_object_object_add(create, "progress_notify",
					       json_object_new_boolean(1));
		*out = body;
	} else {
		json_object_put(body);
	}
	return err;
}

int etcd_watch(struct etcd_conn *c, const char *prefix, const struct etcd_watch_opts *o,
	       etcd_watch_fn *fn, void *arg)
{
	struct watch_ctx w = { .c = c, .fn = fn, .arg = arg, .tick = o->tick };
	struct curl_slist *hdr = NULL, *h2;
	json_object *body;
	char url[1024];
	CURLcode rc;
	CURL *h = NULL;
	int err = watch_body(prefix, o, &body);

	if (err)
		return err;
	h = curl_easy_init();
	hdr = curl_slist_append(NULL, "Content-Type: application/json");
	/* clientv3's WithRequireLeader, as the gateway passes it on: a member
	 * without a leader cancels the watch instead of going quiet. */
	h2 = hdr ? curl_slist_append(hdr, "Grpc-Metadata-hasleader: true") : NULL;
	if (!h || !h2) {
		err = -ENOMEM;
		goto out;
	}
	setup(c, c->cur, h, "/v3/watch", json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN),
	      hdr, url, sizeof(url));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, watch_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &w);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, watch_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &w);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	rc = curl_easy_perform(h);
	if (w.result) {
		err = w.result;
	} else if (rc == CURLE_OK) {
		set_err(c, "watch: %s", "etcd closed the stream");
		err = -ECONNRESET;
	} else {
		/* A cut chunked stream is how a killed or restarted etcd looks. */
		set_err(c, "watch: %s", rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR ?
					       "the stream was cut" : curl_easy_strerror(rc));
		err = curl_errno(rc);
	}
out:
	json_object_put(body);
	curl_slist_free_all(hdr);
	if (h)
		curl_easy_cleanup(h);
	free(w.line.p);
	return err;
}
