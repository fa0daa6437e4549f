/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's STATUS and METRICS (rcustring-socket(7)): the
 * server's own counts (requests by verb, values read, writes and refused
 * writes of the tree by errno), then the program's lines from its report
 * callback, each sent as one "STATUS <line>" or "METRIC <line>". Counts
 * are kept per connection and summed here, so no request takes a lock or
 * a shared cache line to be counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl_socket.h"
#include "socket_conn.h"
#include "socket_proto.h"

struct totals {
	uint64_t requests[SOCK_VERB_COUNT];
	uint64_t reads;
	unsigned conns;
	size_t held, held_peak; /* reply buffers: now (open connections), one's most */
};

static void sum_counts(struct sysctl_socket *s, struct totals *t)
{
	pthread_mutex_lock(&s->lock);
	memcpy(t->requests, s->requests_done, sizeof(t->requests));
	t->reads = s->reads_done;
	t->conns = 0;
	t->held = 0;
	t->held_peak = s->held_peak_done;
	for (struct conn *c = s->conns; c; c = c->next) {
		for (int v = 0; v < SOCK_VERB_COUNT; v++)
			t->requests[v] += __atomic_load_n(&c->requests[v], __ATOMIC_RELAXED);
		t->reads += __atomic_load_n(&c->reads, __ATOMIC_RELAXED);
		t->conns += !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
		t->held += __atomic_load_n(&c->held, __ATOMIC_RELAXED);
		if (__atomic_load_n(&c->held_peak, __ATOMIC_RELAXED) > t->held_peak)
			t->held_peak = __atomic_load_n(&c->held_peak, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&s->lock);
}

static void server_metrics(struct sysctl_socket *s, FILE *f)
{
	struct sysctl_write_stats *w = calloc(1, sizeof(*w));
	struct totals t;
	char name[16];

	sum_counts(s, &t);
	fputs("# HELP rcustring_socket_requests_total Control socket requests by verb.\n"
	      "# TYPE rcustring_socket_requests_total counter\n", f);
	for (int v = 0; v < SOCK_VERB_COUNT; v++)
		fprintf(f, "rcustring_socket_requests_total{verb=\"%s\"} %" PRIu64 "\n",
			sock_verb_name((enum sock_verb)v), t.requests[v]);
	fprintf(f, "# HELP rcustring_socket_reads_total Values read through the control socket.\n"
		"# TYPE rcustring_socket_reads_total counter\n"
		"rcustring_socket_reads_total %" PRIu64 "\n"
		"# HELP rcustring_socket_connections Control socket connections open.\n"
		"# TYPE rcustring_socket_connections gauge\n"
		"rcustring_socket_connections %u\n", t.reads, t.conns);
	fprintf(f, "# HELP rcustring_socket_reply_buffer_bytes Reply and value buffers the open "
		"connections hold.\n"
		"# TYPE rcustring_socket_reply_buffer_bytes gauge\n"
		"rcustring_socket_reply_buffer_bytes %zu\n"
		"# HELP rcustring_socket_reply_buffer_peak_bytes The most one connection's reply and "
		"value buffers held.\n"
		"# TYPE rcustring_socket_reply_buffer_peak_bytes gauge\n"
		"rcustring_socket_reply_buffer_peak_bytes %zu\n", t.held, t.held_peak);
	if (!w || sysctl_tree_get_write_stats(s->tree, w) != 0) {
		free(w);
		return;
	}
	fprintf(f, "# HELP rcustring_writes_total Writes that stored a value, by every front end.\n"
		"# TYPE rcustring_writes_total counter\n"
		"rcustring_writes_total %" PRIu64 "\n"
		"# HELP rcustring_writes_refused_total Writes refused, by errno.\n"
		"# TYPE rcustring_writes_refused_total counter\n", w->written);
	for (int e = 0; e < SYSCTL_WRITE_ERRNO_MAX; e++)
		if (w->refused[e])
			fprintf(f, "rcustring_writes_refused_total{errno=\"%s\"} %" PRIu64 "\n",
				e ? sock_errname(e, name, sizeof(name)) : "other", w->refused[e]);
	free(w);
}

/* Each line of @text (@len bytes) as "<prefix><escaped line>"; the count of lines. */
static unsigned long send_lines(struct conn *c, const char *prefix, const char *text, size_t len)
{
	unsigned long n = 0;

	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t l = nl ? (size_t)(nl - text) : len;

		sock_out_add(c, prefix, strlen(prefix));
		sock_out_escaped(c, text, l, false);
		sock_out_add(c, "\n", 1);
		n++;
		text += l + (nl != NULL);
		len -= l + (nl != NULL);
	}
	return n;
}

void sock_do_report(struct conn *c, enum sock_verb verb)
{
	struct sysctl_socket *s = c->server;
	bool metrics = verb == SOCK_METRICS;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err = 0;

	if (!f) {
		sock_reply_err(c, -ENOMEM, NULL, 0, "out of memory");
		return;
	}
	if (metrics)
		server_metrics(s, f);
	if (s->opt.report)
		err = s->opt.report(s->opt.report_arg,
				    metrics ? SYSCTL_SOCKET_METRICS : SYSCTL_SOCKET_STATUS, &c->who, f);
	if (fclose(f) != 0 && !err)
		err = -ENOMEM;
	if (err) {
		sock_reply_err(c, err, NULL, 0, "%s: %s", metrics ? "metrics" : "status",
			       strerror(-err));
	} else {
		unsigned long n = send_lines(c, metrics ? "METRIC " : "STATUS ", text, len);

		sock_out_fmt(c, "OK %lu\n", n);
	}
	free(text);
}
