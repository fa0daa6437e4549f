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

#include <stdbool.h>
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
	char *userpwd; /* "user:password" for HTTP basic auth (NULL: none); never in a message */
	CURL *unary; /* kept for connection reuse between requests */
	long timeout_ms;   /* unary requests (default 5000) */
	char err[256];     /* last error, never holding a secret */
	size_t dropped;    /* kvs the last range reply held that named no usable key */
	/* Asked while a reply arrives and between the elements of its decoding:
	 * non-zero ends the request with -ECANCELED (a stop). NULL: never. */
	int (*cancel)(void *arg);
	void *cancel_arg;
};

/**
 * Split @endpoints ("URL[,URL...]") and copy @tls. The first endpoint used is
 * picked at random, so that a fleet does not pile onto the first one.
 * Return 0, -EINVAL, -ENOMEM.
 */
int etcd_conn_init(struct etcd_conn *c, const char *endpoints, const struct etcd_tls *tls);
void etcd_conn_free(struct etcd_conn *c);
/** Move to the next endpoint (after a failure). */
void etcd_conn_next(struct etcd_conn *c);
/**
 * Authenticate every request with @userpwd ("user:password", HTTP basic;
 * NULL: none), given apart from the URL so that it never shows in a
 * process's command line. Copied; wiped when @c is freed. Return 0, -ENOMEM.
 */
int etcd_conn_set_userpwd(struct etcd_conn *c, const char *userpwd);
/**
 * etcd_set_err - @fmt (one "%s", for @detail) into @c->err, with the
 * credentials (user:password, the password, their base64) hidden and the
 * text escaped (common/text_escape.h): every text from outside (etcd's
 * error, a gateway's, a cancel reason) reaches @c->err through here, so
 * that none reaches a log, STATUS or rcusysd.etcd.last_error raw.
 * Context: the thread that owns @c.
 */
void etcd_set_err(struct etcd_conn *c, const char *fmt, const char *detail);
/** The current endpoint with any user:password@ part removed, for messages. */
void etcd_conn_name(const struct etcd_conn *c, char *buf, size_t size);

/** Base64 (etcd_b64.c; standard alphabet, padded). *@out is malloc'd and NUL-terminated. */
int etcd_b64_encode(const void *data, size_t len, char **out);
int etcd_b64_decode(const char *text, char **out, size_t *len);
/** The same over @n bytes of @text (which may hold a NUL: that is an error). */
int etcd_b64_decode_n(const char *text, size_t n, char **out, size_t *len);

/** The range_end that selects every key starting with @prefix (malloc'd, length *@len). */
int etcd_prefix_end(const char *prefix, char **out, size_t *len);

/* Keys longer than this name no entry and are refused (a tree path is far shorter). */
#define ETCD_KEY_MAX 1024

struct etcd_kv {
	char *key, *value; /* decoded, NUL-terminated (either may hold NULs: see the lengths) */
	size_t key_len, value_len;
	int64_t mod_revision; /* 1 .. INT64_MAX - 1 when err is 0 */
	int err; /* -EBADMSG: the value or revision could not be decoded (value is "") */
};
/* Longer keys are not etcd's (its default request limit is 1.5 MiB): a memory
 * bound only; etcd_key_check() refuses keys over ETCD_KEY_MAX, and says so. */
#define ETCD_KEY_DECODE_MAX (64u << 10)
void etcd_kvs_free(struct etcd_kv *kvs, size_t n);
void etcd_kv_free(struct etcd_kv *kv);

/* Called for each kv of a range reply, in order; non-zero ends the read
 * and is returned. @kv and its strings are freed when it returns. */
typedef int etcd_kv_fn(void *arg, const struct etcd_kv *kv);

/**
 * etcd_range_prefix - every key under @prefix at one revision
 * @revision: in: 0 for the newest, else that revision; out: the revision read
 *
 * Every kv returned starts with @prefix. A kv whose key cannot be decoded,
 * or lies outside @prefix, is left out and counted in @c->dropped; one
 * whose value cannot be decoded is returned with err set.
 */
int etcd_range_prefix(struct etcd_conn *c, const char *prefix, int64_t *revision,
		      struct etcd_kv **kvs, size_t *n);
/**
 * etcd_range_each - etcd_range_prefix() handing each kv to @fn as it is
 * decoded, none kept: memory stays within the reply's size plus one kv
 * (etcd_stream.c). *@revision is set before the first call. A reply that
 * is not etcd's calls @fn for none.
 */
int etcd_range_each(struct etcd_conn *c, const char *prefix, int64_t *revision, etcd_kv_fn *fn,
		    void *arg);
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
/** etcd_txn_put_delete - in one transaction, put keys[i] = values[i], or delete it where
 *  values[i] is NULL (keys distinct; at most 128) */
int etcd_txn_put_delete(struct etcd_conn *c, const char *const *keys, const char *const *values,
			size_t n);
/** etcd_delete - delete @key (absent is not an error) */
int etcd_delete(struct etcd_conn *c, const char *key);

enum etcd_event_type { ETCD_EVENT_PUT, ETCD_EVENT_DELETE };

struct etcd_event {
	enum etcd_event_type type;
	struct etcd_kv kv; /* a DELETE's value is "" */
};

/* One message of a watch stream, decoded and checked (etcd_parse_watch). */
struct etcd_watch_msg {
	int64_t revision;         /* the header's (0 if none) */
	int64_t compact_revision; /* non-zero: the start revision was compacted */
	bool created, canceled;
	char cancel_reason[128];
	struct etcd_event *events;
	size_t n_events;
};

/*
 * Called for each message of a watch stream, checked and decoded.
 * Return 0 to go on, non-zero to end the watch (etcd_watch returns it).
 */
typedef int etcd_watch_fn(void *arg, const struct etcd_watch_msg *msg);

struct etcd_watch_opts {
	int64_t start_revision;
	bool progress_notify; /* ask etcd for progress messages while the prefix is quiet */
	/* Polled about once a second while the stream is idle and after each
	 * message: non-zero ends the watch with that value (-ECANCELED to stop). */
	int (*tick)(void *arg);
};

/**
 * etcd_watch - watch every key under @prefix
 *
 * The watch requires a leader (a member cut off from its cluster cancels
 * it rather than serve a stale stream). Blocks for as long as the stream
 * lasts. Return: @fn's or @o->tick's non-zero value, -ECONNRESET (the
 * stream ended or was canceled), -EBADMSG (a message that is not what etcd
 * sends), or an error above.
 */
int etcd_watch(struct etcd_conn *c, const char *prefix, const struct etcd_watch_opts *o,
	       etcd_watch_fn *fn, void *arg);

/**
 * etcd_max_mod_revision - the newest mod_revision under @prefix (0: no key),
 * read from endpoint @index (not the current one); *@revision gets the
 * reply's header revision.
 */
int etcd_max_mod_revision(struct etcd_conn *c, size_t index, const char *prefix,
			  int64_t *max_mod, int64_t *revision);

/*
 * Decoding (etcd_json.c), for the client and the fuzz target. Every field
 * is type-checked; anything else is -EBADMSG (or -ERANGE for a revision of
 * INT64_MAX, which has no successor).
 */
/** An int64 field printed as a decimal string ("12") or a number, >= 0; absent: 0. */
int etcd_json_i64(json_object *obj, const char *field, int64_t *out);
/** A /v3/kv/range reply: kvs under @prefix, *@dropped counting the others. */
int etcd_parse_range(json_object *reply, const char *prefix, int64_t *revision,
		     struct etcd_kv **kvs, size_t *n, size_t *dropped);
/** A watch stream's "result" object; free with etcd_watch_msg_free() after success. */
int etcd_parse_watch(json_object *result, struct etcd_watch_msg *m);
void etcd_watch_msg_free(struct etcd_watch_msg *m);
/** One kv or event object of a reply (the client's decoding, one element at a time). */
int etcd_parse_kv(json_object *o, struct etcd_kv *kv);
int etcd_parse_event(json_object *ev, struct etcd_event *out);
/** An {"error": ...} reply: its message in @c->err, -EPROTO; 0 otherwise. */
int etcd_reply_error(struct etcd_conn *c, json_object *reply);

/*
 * Decoding from the text (etcd_stream.c), memory bounded by the text plus
 * one element: a range reply, its kvs handed to @fn one at a time (kvs
 * outside @prefix or not decodable counted in @c->dropped); one line of a
 * watch stream, its events handed to @fn in chunks after all were checked
 * (the header's fields come with the first chunk only). Errors as above,
 * with the reason in @c->err, or @fn's non-zero value, or -ECANCELED from
 * @c->cancel.
 */
int etcd_range_text(struct etcd_conn *c, const char *text, size_t len, const char *prefix,
		    int64_t *revision, etcd_kv_fn *fn, void *arg);
int etcd_watch_text(struct etcd_conn *c, const char *text, size_t len, etcd_watch_fn *fn,
		    void *arg);

/**
 * etcd_key_check - can @key (@len bytes) name an entry under @prefix? No NUL
 * (a C string would name another entry), at most ETCD_KEY_MAX bytes, a
 * non-empty path with no empty, "." or ".." component.
 * Return: 0, -EINVAL, or -ENAMETOOLONG.
 */
int etcd_key_check(const char *key, size_t len, const char *prefix, size_t prefix_len);

#endif /* RCUSTRING_ETCD_HTTP_H */
