/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small client of etcd's v3 JSON gateway (/v3/kv/range, /v3/kv/put,
 * /v3/kv/txn, /v3/kv/deleterange, /v3/watch) over libcurl, parsed with
 * json-c. Keys and values travel base64-encoded; revisions are decimal
 * strings. One struct etcd_conn belongs to one thread at a time.
 *
 * Errors are negative errno values: -ECONNREFUSED (no endpoint answered),
 * -ETIMEDOUT, -EPROTO (etcd or the gateway answered with an error; the
 * message is in conn->err), -EBADMSG (not the JSON we expect), -ENOMEM.
 */
#ifndef RCUSTRING_ETCD_HTTP_H
#define RCUSTRING_ETCD_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <json-c/json.h>

/* TLS material handed to libcurl as is (file names, never contents). */
struct etcd_tls {
	const char *cacert; /* CA bundle to verify the server; NULL: the system's */
	const char *cert;   /* client certificate (PEM) */
	const char *key;    /* its private key (PEM) */
};

struct etcd_conn {
	char **endpoints; /* "http(s)://host:port", no trailing '/' */
	size_t n_endpoints, cur;
	char *cacert, *cert, *key;
	CURL *unary; /* kept for connection reuse between requests */
	long timeout_ms;   /* unary requests (default 5000) */
	char err[256];     /* last error, never holding a secret */
};

/** Split @endpoints ("URL[,URL...]") and copy @tls. Return 0, -EINVAL, -ENOMEM. */
int etcd_conn_init(struct etcd_conn *c, const char *endpoints, const struct etcd_tls *tls);
void etcd_conn_free(struct etcd_conn *c);
/** Move to the next endpoint (after a failure). */
void etcd_conn_next(struct etcd_conn *c);
/** The current endpoint with any user:password@ part removed, for messages. */
void etcd_conn_name(const struct etcd_conn *c, char *buf, size_t size);

/** Base64 (standard alphabet, padded). *@out is malloc'd and NUL-terminated. */
int etcd_b64_encode(const void *data, size_t len, char **out);
int etcd_b64_decode(const char *text, char **out, size_t *len);

/** The range_end that selects every key starting with @prefix (malloc'd, length *@len). */
int etcd_prefix_end(const char *prefix, char **out, size_t *len);

struct etcd_kv {
	char *key, *value; /* decoded, NUL-terminated (values may hold NULs: see value_len) */
	size_t value_len;
	int64_t mod_revision;
};
void etcd_kvs_free(struct etcd_kv *kvs, size_t n);

/**
 * etcd_range_prefix - every key under @prefix at one revision
 * @revision: in: 0 for the newest, else that revision; out: the revision read
 */
int etcd_range_prefix(struct etcd_conn *c, const char *prefix, int64_t *revision,
		      struct etcd_kv **kvs, size_t *n);
/** etcd_put - put @key = @value; *@revision (may be NULL) gets the new revision */
int etcd_put(struct etcd_conn *c, const char *key, const char *value, size_t len,
	     int64_t *revision);
/**
 * etcd_put_if - put only if @key's mod_revision is still @mod_revision (0: the
 * key must not exist). *@done is 1 when the put happened, 0 when the compare
 * failed (someone else wrote first).
 */
int etcd_put_if(struct etcd_conn *c, const char *key, const char *value, size_t len,
		int64_t mod_revision, int *done, int64_t *revision);
/** etcd_put_many - put @n keys in one transaction (one revision; etcd allows 128 by default) */
int etcd_put_many(struct etcd_conn *c, const char *const *keys, const char *const *values,
		  size_t n);
/** etcd_delete - delete @key (absent is not an error) */
int etcd_delete(struct etcd_conn *c, const char *key);

/*
 * Called for each message of a watch stream with its "result" object.
 * Return 0 to go on, non-zero to end the watch (etcd_watch returns it).
 */
typedef int etcd_watch_fn(void *arg, json_object *result);

/**
 * etcd_watch - watch every key under @prefix from @start_revision
 * @stop: polled while the stream is idle (about once a second) and between
 *        messages; non-zero ends the watch with -ECANCELED
 *
 * Blocks for as long as the stream lasts. Return: @fn's non-zero value,
 * -ECANCELED, -ECONNRESET (the stream ended), or an error above.
 */
int etcd_watch(struct etcd_conn *c, const char *prefix, int64_t start_revision,
	       etcd_watch_fn *fn, void *arg, int (*stop)(void *arg));

/** An int64 field that the gateway prints as a string ("12") or leaves out (0). */
int64_t etcd_json_i64(json_object *obj, const char *field);

#endif /* RCUSTRING_ETCD_HTTP_H */
