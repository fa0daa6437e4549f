/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watch of the JSON gateway: one long POST whose reply is a stream of
 * JSON objects, one per line, each decoded within a bound proportional to
 * its length (etcd_stream.c) and handed to the caller; a tick polled about
 * once a second and after each message ends it when the caller says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http_int.h"

#define LINE_MAX_BYTES (64u << 20)


struct watch_ctx {
	struct etcd_conn *c;
	struct membuf line;
	etcd_watch_fn *fn;
	void *arg;
	int (*tick)(void *arg);
	int result; /* why the stream was cut short by us */
};

/*
 * One complete line of the stream: {"result": {...}} or {"error": {...}},
 * decoded within a bound proportional to its length (etcd_stream.c).
 */
static int watch_line(struct watch_ctx *w, const char *text, size_t len)
{
	return etcd_watch_text(w->c, text, len, w->fn, w->arg);
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
		    etcd_collect(data + start, 1, i - start, &w->line) != i - start) {
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
			  etcd_collect(data + start, 1, n - start, &w->line) != n - start)) {
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
	err = etcd_add_prefix_range(create, prefix);
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
	etcd_setup(c, c->cur, h, "/v3/watch", json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN),
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
		etcd_set_err(c, "watch: %s", "etcd closed the stream");
		err = -ECONNRESET;
	} else {
		/* A cut chunked stream is how a killed or restarted etcd looks. */
		etcd_set_err(c, "watch: %s", rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR ?
					       "the stream was cut" : curl_easy_strerror(rc));
		err = etcd_curl_errno(rc);
	}
out:
	json_object_put(body);
	curl_slist_free_all(hdr);
	if (h)
		curl_easy_cleanup(h);
	free(w.line.p);
	return err;
}
