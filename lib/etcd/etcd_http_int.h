/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the client's requests (etcd_http.c) share with its watch
 * (etcd_watch.c): the reply buffer, the curl setup and the request body of
 * a prefix. Internal to the client.
 */
#ifndef RCUSTRING_ETCD_HTTP_INT_H
#define RCUSTRING_ETCD_HTTP_INT_H

#include <stdbool.h>

#include "etcd_http.h"

/* A reply (or a watch line) larger than this is refused, not grown forever. */
#define REPLY_MAX (64u << 20)

struct membuf {
	char *p;
	size_t len, cap;
	bool too_big;
	struct etcd_conn *c; /* its cancel hook (NULL: a watch line, which ticks) */
};

/* curl's write callback: append to the membuf @arg, up to REPLY_MAX. */
size_t etcd_collect(char *data, size_t size, size_t nmemb, void *arg);
/* The options of every request: @path of endpoint @idx, @body, TLS, timeouts. */
void etcd_setup(struct etcd_conn *c, size_t idx, CURL *h, const char *path, const char *body,
		struct curl_slist *hdr, char *url, size_t url_size);
int etcd_curl_errno(CURLcode rc);
/* "key" and "range_end" of every key under @prefix, base64-encoded, into @obj. */
int etcd_add_prefix_range(json_object *obj, const char *prefix);

#endif /* RCUSTRING_ETCD_HTTP_INT_H */
