/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the host tells the fleet's operator: log lines (etcd_say); refusals
 * as status keys in etcd, put and deleted by a thread of their own in
 * transactions of up to REPORT_BATCH keys, so that a storm of refused keys
 * never holds up the valid ones (the sync thread only queues); and the
 * status, copied or as read-only entries of the tree. It uses no other
 * file of the module but the client (etcd_http.c): the others call it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/deadline.h"
#include "etcd_sync_int.h"

#define REPORT_BATCH 100 /* etcd's default --max-txn-ops is 128 */
#define STOP_FLUSH_MS 1000 /* see flush() */

static void say_line(struct etcd_sync *s, const char *msg)
{
	if (s->log)
		s->log(s->log_arg, msg);
	else
		fprintf(stderr, "rcustring-etcd: %s\n", msg);
}

/* The count a site dropped in a window that has ended (say_lock held). */
static size_t say_window(struct etcd_say_site *site, int64_t now)
{
	size_t dropped = site->dropped;

	if (now - site->start < SAY_WINDOW_MS)
		return 0;
	site->start = now;
	site->lines = 0;
	site->dropped = 0;
	return dropped;
}

static void say_dropped(struct etcd_sync *s, const char *fmt, size_t n)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "%zu more message(s) like \"%.60s\" in %d s not logged",
		 n, fmt, SAY_WINDOW_MS / 1000);
	say_line(s, msg);
}

/*
 * Log lines are rate-limited per call site (its format): SAY_BURST lines in
 * SAY_WINDOW_MS, then a count of the rest, so that a prefix full of refused
 * values, or a member claiming a compaction at every watch, cannot fill the
 * disk with lines (74 MB in 16 s was seen).
 */
void etcd_say(struct etcd_sync *s, const char *fmt, ...)
{
	int64_t now = rcs_now_ms();
	struct etcd_say_site *site = &s->say[0];
	size_t dropped;
	char msg[512];
	bool emit;
	va_list ap;

	pthread_mutex_lock(&s->say_lock);
	for (int i = 0; i < SAY_SITES; i++)
		if (s->say[i].fmt == fmt || !s->say[i].fmt) {
			site = &s->say[i]; /* else all sites are taken: share the first */
			break;
		}
	if (!site->fmt)
		site->fmt = fmt, site->start = now;
	dropped = say_window(site, now);
	emit = site->lines < SAY_BURST;
	if (emit)
		site->lines++;
	else
		site->dropped++;
	pthread_mutex_unlock(&s->say_lock);
	if (dropped)
		say_dropped(s, fmt, dropped);
	if (!emit)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	say_line(s, msg);
}

void etcd_say_flush(struct etcd_sync *s, bool all)
{
	int64_t now = rcs_now_ms();

	/* Called after every watch message: look at the windows once a second. */
	if (!all && now < __atomic_load_n(&s->say_next_ms, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&s->say_next_ms, now + 1000, __ATOMIC_RELAXED);
	for (int i = 0; i < SAY_SITES; i++) {
		const char *fmt;
		size_t dropped;

		pthread_mutex_lock(&s->say_lock);
		fmt = s->say[i].fmt;
		dropped = all ? say_window(&s->say[i], now + SAY_WINDOW_MS) :
				say_window(&s->say[i], now);
		pthread_mutex_unlock(&s->say_lock);
		if (dropped)
			say_dropped(s, fmt, dropped);
	}
}

/* Queue @k's status key to be written (@json) or deleted (NULL); lock held. */
static void enqueue(struct etcd_sync *s, struct key_state *k, char *json)
{
	free(k->report);
	k->report = json;
	if (!k->queued) {
		k->queued = true;
		k->qnext = NULL;
		*s->queue_tail = k;
		s->queue_tail = &k->qnext;
		s->queued++;
	}
	pthread_cond_signal(&s->report_wake);
}

void etcd_report_refusal(struct etcd_sync *s, struct key_state *k, int64_t rev, size_t len,
			 int err)
{
	const char *name = strerrorname_np(-err);
	struct timespec now;
	bool full;
	char *json;

	clock_gettime(CLOCK_REALTIME, &now);
	if (asprintf(&json, "{\"revision\":%lld,\"error\":\"%s\",\"message\":\"%s\","
			    "\"value_bytes\":%zu,\"time\":%lld}",
		     (long long)rev, name ? name : "?", strerror(-err), len,
		     (long long)now.tv_sec) < 0) {
		etcd_say(s, "cannot report the refusal of %s: out of memory", k->key);
		return;
	}
	/* A full queue takes no new report; a key queued already has its report
	 * replaced, a delete or a batch that failed is always queued again (one
	 * per key at most): the queue stays within queue_max plus the keys. */
	pthread_mutex_lock(&s->lock);
	full = !k->queued && s->queued >= s->queue_max;
	if (full)
		s->st.reports_dropped++;
	else
		enqueue(s, k, json);
	pthread_mutex_unlock(&s->lock);
	if (full) {
		free(json);
		etcd_say(s, "report queue full (%zu waiting, the most): the status key of %s "
			    "is not queued; counted (etcd.reports_dropped)", s->queue_max, k->key);
	}
}

void etcd_report_clear_locked(struct etcd_sync *s, struct key_state *k)
{
	/* A refusal being written now will be in etcd: delete it after. */
	if (k->reported || k->sending || (k->queued && k->report))
		enqueue(s, k, NULL);
}

void etcd_report_clear(struct etcd_sync *s, struct key_state *k)
{
	pthread_mutex_lock(&s->lock);
	etcd_report_clear_locked(s, k);
	pthread_mutex_unlock(&s->lock);
}

struct batch {
	struct key_state *k[REPORT_BATCH];
	char *skey[REPORT_BATCH], *json[REPORT_BATCH];
	size_t n;
};

/* Take up to REPORT_BATCH queued keys (lock held). */
static void take(struct etcd_sync *s, struct batch *b)
{
	b->n = 0;
	while (s->queue_head && b->n < REPORT_BATCH) {
		struct key_state *k = s->queue_head;

		s->queue_head = k->qnext;
		if (!s->queue_head)
			s->queue_tail = &s->queue_head;
		s->queued--;
		k->queued = false;
		if (asprintf(&b->skey[b->n], "%s%s", s->status_prefix, k->key + s->prefix_len) < 0)
			continue; /* out of memory: this report is lost, logged below */
		b->k[b->n] = k;
		k->sending = true; /* not freed while the batch is written (etcd_keys_reap) */
		b->json[b->n] = k->report;
		k->report = NULL;
		b->n++;
	}
}

/* Put one batch of queued reports (lock held, dropped across the request);
 * a batch that fails is queued again, unless a newer report of a key waits. */
static int send_batch(struct etcd_sync *s)
{
	struct batch b;
	int err;

	take(s, &b);
	pthread_mutex_unlock(&s->lock);
	err = etcd_txn_put_delete(&s->rconn, (const char *const *)b.skey,
				  (const char *const *)b.json, b.n);
	if (err) {
		etcd_say(s, "cannot write %zu status key(s) to etcd: %s", b.n, s->rconn.err);
		etcd_conn_next(&s->rconn);
	}
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < b.n; i++) {
		b.k[i]->sending = false;
		if (err && !b.k[i]->queued)
			enqueue(s, b.k[i], b.json[i]);
		else if (!err)
			b.k[i]->reported = b.json[i] != NULL;
		if (!err || b.k[i]->report != b.json[i])
			free(b.json[i]);
		free(b.skey[i]);
	}
	return err;
}

/*
 * The stop: reports queued until the sync thread ended (a refusal seen just
 * before) get STOP_FLUSH_MS to reach etcd, one try per endpoint, so that a
 * stopping host leaves its status keys true without waiting long for an
 * etcd that does not answer. Lock held. Return: the reports left unwritten.
 */
static size_t flush(struct etcd_sync *s)
{
	int64_t deadline = rcs_now_ms() + STOP_FLUSH_MS;
	size_t failures = 0;

	while (s->queue_head && rcs_ms_left(deadline) > 0 && failures < s->rconn.n_endpoints) {
		s->rconn.timeout_ms = rcs_ms_left(deadline);
		failures += send_batch(s) != 0;
	}
	return s->queued;
}

static void *report_main(void *arg)
{
	struct etcd_sync *s = arg;
	unsigned attempt = 0;
	size_t left;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		if (!s->queue_head) {
			pthread_cond_wait(&s->report_wake, &s->lock);
		} else if (send_batch(s)) {
			struct timespec until;
			long ms = (long)s->backoff_min << (attempt < 6 ? attempt++ : 6);

			if (ms > s->backoff_max)
				ms = s->backoff_max;
			until = rcs_deadline_after_ms(ms);
			/* Woken early only by the stop. */
			while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &until) == 0)
				;
		} else {
			attempt = 0;
		}
	}
	/* The sync thread may queue reports until it has ended. */
	while (!s->report_flush)
		pthread_cond_wait(&s->report_wake, &s->lock);
	left = flush(s);
	pthread_mutex_unlock(&s->lock);
	if (left) /* not under the lock: a log may be slow, status readers must not wait */
		etcd_say(s, "%zu status key(s) not written to etcd at the stop", left);
	return NULL;
}

int etcd_report_start(struct etcd_sync *s)
{
	int err = -pthread_create(&s->reporter, NULL, report_main, s);

	s->reporter_running = !err;
	return err;
}

void etcd_report_stop(struct etcd_sync *s)
{
	pthread_mutex_lock(&s->lock);
	s->report_flush = true;
	pthread_cond_broadcast(&s->report_wake);
	pthread_mutex_unlock(&s->lock);
	if (s->reporter_running)
		pthread_join(s->reporter, NULL);
	s->reporter_running = false;
}

/* ---- the status as entries ---- */

void etcd_sync_status(struct etcd_sync *s, struct etcd_sync_status *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	st->keys = s->n_keys;
	pthread_mutex_unlock(&s->lock);
}

enum status_field {
	ST_CONNECTED, ST_REVISION, ST_LAG, ST_APPLIED, ST_REFUSED, ST_RECONNECTS, ST_RESYNCS,
	ST_KEYS, ST_UNTRACKED, ST_REPORTS_DROPPED, ST_LAST_ERROR, ST_ENDPOINT, ST_COUNT
};
_Static_assert(ST_COUNT == ETCD_ST_COUNT, "ETCD_ST_COUNT counts the status entries");

static const char *const status_names[ST_COUNT] = {
	"connected", "revision", "lag", "applied", "refused", "reconnects", "resyncs", "keys",
	"untracked", "reports_dropped", "last_error", "endpoint",
};
static const char *const status_desc[ST_COUNT] = {
	"1 while the watch stream is up and its member answers",
	"etcd revision the tree holds every change up to",
	"revisions of the prefix the cluster holds beyond the applied one",
	"values from etcd written into the tree",
	"values from etcd the tree refused (see the status keys)",
	"etcd watch streams lost and started again",
	"whole-prefix reads after the watched revision was compacted",
	"keys of the prefix this host keeps state for",
	"values of keys naming no entry refused past the most such keys kept: no status key",
	"refusals whose status key was not queued: the report queue was full",
	"last error talking to etcd: escaped as the log is (\\xNN), credentials as ***",
	"the etcd member watched (user:password@ left out)",
};

static size_t status_text(struct etcd_sync *s, enum status_field f, char *text, size_t size)
{
	struct etcd_sync_status st;
	unsigned long long v;

	etcd_sync_status(s, &st);
	switch (f) {
	case ST_CONNECTED: v = (unsigned long long)st.connected; break;
	case ST_REVISION: v = (unsigned long long)st.revision; break;
	case ST_LAG:
		v = st.etcd_revision > st.revision ? (unsigned long long)(st.etcd_revision -
									   st.revision) : 0;
		break;
	case ST_APPLIED: v = st.applied; break;
	case ST_REFUSED: v = st.refused; break;
	case ST_RECONNECTS: v = st.reconnects; break;
	case ST_RESYNCS: v = st.resyncs; break;
	case ST_KEYS: v = st.keys; break;
	case ST_UNTRACKED: v = st.untracked; break;
	case ST_REPORTS_DROPPED: v = st.reports_dropped; break;
	case ST_ENDPOINT:
		return (size_t)snprintf(text, size, "%s\n", st.endpoint);
	default:
		return (size_t)snprintf(text, size, "%s\n", st.last_error);
	}
	return (size_t)snprintf(text, size, "%llu\n", v);
}

/* Read-only entries: the value is formatted at each read, from one status copy. */
static int status_handler(const struct ctl_table *t, int write, void *buffer, size_t *lenp,
			  off_t *ppos)
{
	struct etcd_sync *s = t->data;
	char text[sizeof(((struct etcd_sync_status *)0)->last_error) + 2];
	size_t len, pos;

	if (write)
		return -EPERM;
	if (!lenp || !ppos || *ppos < 0 || (!buffer && *lenp))
		return -EINVAL;
	len = status_text(s, (enum status_field)(t - s->status_table), text, sizeof(text));
	if (len >= sizeof(text))
		len = sizeof(text) - 1;
	pos = (size_t)*ppos;
	if (pos >= len) {
		*lenp = 0;
		return 0;
	}
	if (*lenp > len - pos)
		*lenp = len - pos;
	memcpy(buffer, text + pos, *lenp);
	*ppos += (off_t)*lenp;
	return 0;
}

int etcd_sync_register_status(struct etcd_sync *s, const char *dir,
			      struct sysctl_table_header **out)
{
	for (int i = 0; i < ST_COUNT; i++)
		s->status_table[i] = (struct ctl_table){
			.procname = status_names[i],
			.data = s,
			.mode = 0444,
			.proc_handler = status_handler,
			.desc = status_desc[i],
		};
	return sysctl_register_table(s->tree, dir, s->status_table, ST_COUNT, out);
}
