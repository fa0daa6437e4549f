/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sync thread: read the prefix, watch it, write each value through the
 * tree, reconnect with backoff, and keep the watch honest. A member that
 * is frozen, partitioned or silently stalled sends nothing, which looks
 * like a quiet prefix; so the watch asks for progress messages and has an
 * idle deadline. When it passes, the watched member is asked for the
 * newest revision under the prefix (it must answer, with a leader); if it
 * cannot, or is behind, another member is asked, and the watch moves. All
 * network work runs here or on the report thread; other threads read the
 * status under a mutex never held across network I/O.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/copy_cut.h"
#include "../common/deadline.h"
#include "../common/text_escape.h"
#include "../core/buf.h"
#include "rcustring/sysctl_commit.h"
#include "etcd_sync_int.h"

/* Why a watch ended, besides errors (negative): positive, so that no errno
 * (a check that found the stream behind says -ESTALE) is taken for one. */
#define IDLE_EXPIRED 1 /* tick: no message within the idle deadline */
#define RESCAN_ASKED 2 /* tick: etcd_sync_rescan() */
#define COMPACTED 3    /* the watch's revision was compacted: read the prefix again */

static int etcd_stopping(void *arg)
{
	struct etcd_sync *s = arg;

	return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

/*
 * Escaped once more where it is stored (idempotent on @c->err's text, which
 * etcd_set_err() cleaned): a cut of that text may end inside a character,
 * and the entry rcusysd.etcd.last_error serves this to every user as is.
 */
static void set_error(struct etcd_sync *s, const char *msg)
{
	char big[4 * sizeof(s->st.last_error)], clean[sizeof(s->st.last_error)];
	size_t n = rcs_text_escape(big, sizeof(big), msg, strlen(msg));

	if (n < sizeof(clean))
		memcpy(clean, big, n + 1);
	else /* cut at a whole escape or character, and the reader sees it went on */
		memcpy(clean + rcs_text_escape(clean, sizeof(clean) - 3, big, n), "...", 4);
	pthread_mutex_lock(&s->lock);
	memcpy(s->st.last_error, clean, sizeof(clean));
	pthread_mutex_unlock(&s->lock);
}

static void set_connected(struct etcd_sync *s, int up)
{
	pthread_mutex_lock(&s->lock);
	s->st.connected = up;
	if (up)
		s->st.last_error[0] = '\0';
	pthread_mutex_unlock(&s->lock);
}

static void set_endpoint(struct etcd_sync *s)
{
	char where[sizeof(s->st.endpoint)];

	etcd_conn_name(&s->conn, where, sizeof(where));
	pthread_mutex_lock(&s->lock);
	memcpy(s->st.endpoint, where, sizeof(where));
	pthread_mutex_unlock(&s->lock);
}

static void set_revision(struct etcd_sync *s, int64_t rev, int64_t etcd_rev)
{
	pthread_mutex_lock(&s->lock);
	if (rev > s->st.revision)
		s->st.revision = rev;
	if (etcd_rev > s->st.etcd_revision)
		s->st.etcd_revision = etcd_rev;
	pthread_mutex_unlock(&s->lock);
}

static int64_t applied_revision(struct etcd_sync *s)
{
	int64_t rev;

	pthread_mutex_lock(&s->lock);
	rev = s->st.revision;
	pthread_mutex_unlock(&s->lock);
	return rev;
}

static int apply_read(void *arg, const struct etcd_kv *kv)
{
	struct etcd_sync *s = arg;

	if (etcd_stopping(s))
		return -ECANCELED;
	etcd_read_add(s, kv);
	return 0;
}

/*
 * Read the whole prefix at one revision and apply what differs: each kv is
 * checked as it is decoded (the reply is never held decoded: etcd_stream.c),
 * and those that differ from the tree are committed by revision at the end
 * (etcd_revision.c). Keys the read did not hold left the prefix. A read cut
 * short applies nothing of what it held: the next one reads it again.
 */
static int full_read(struct etcd_sync *s)
{
	int64_t rev = 0;
	size_t gone;
	int err;

	pthread_mutex_lock(&s->lock);
	s->read++;
	pthread_mutex_unlock(&s->lock);
	s->read_refusals = 0;
	err = etcd_range_each(&s->conn, s->prefix, &rev, apply_read, s);
	if (err) {
		etcd_read_drop(s);
		return err;
	}
	etcd_read_flush(s);
	etcd_refuse_undecodable(s, s->conn.dropped);
	if (s->read_refusals > READ_REFUSALS_LOGGED)
		etcd_say(s, "%zu more values of the prefix refused (the status keys say why)",
			 s->read_refusals - READ_REFUSALS_LOGGED);
	gone = etcd_keys_absent(s);
	if (gone)
		etcd_say(s, "%zu key(s) left the prefix while the watch was down; the tree keeps "
			    "their values", gone);
	etcd_keys_reap(s);
	if (!s->retry_at_ms)
		s->retry_delay_ms = 0; /* no passing refusal left: the next starts the backoff anew */
	/* After a compaction the revision may move back below what we applied
	 * only if etcd lost data; keep the newest. */
	set_revision(s, rev, rev);
	return 0;
}

static void touch(struct etcd_sync *s)
{
	s->last_msg_ms = rcs_now_ms();
}

/*
 * A message's events, in revision order: the puts of one revision (at most
 * SYSCTL_COMMIT_MAX at a time) are applied as one commit; a delete changes
 * no value. etcd_stream.c hands a revision on whole.
 */
static void apply_events(struct etcd_sync *s, const struct etcd_watch_msg *m, int64_t *top)
{
	const struct etcd_kv *group[SYSCTL_COMMIT_MAX];
	size_t n = 0;

	for (size_t i = 0; i < m->n_events; i++) {
		const struct etcd_event *ev = &m->events[i];

		if (n && (n == SYSCTL_COMMIT_MAX || ev->kv.mod_revision != group[0]->mod_revision)) {
			etcd_apply_revision(s, group, n, false);
			n = 0;
		}
		if (ev->type == ETCD_EVENT_DELETE) {
			if (!etcd_key_check(ev->kv.key, ev->kv.key_len, s->prefix, s->prefix_len))
				etcd_key_deleted(s, ev->kv.key, ev->kv.mod_revision);
		} else {
			group[n++] = &ev->kv;
		}
		if (ev->kv.mod_revision > *top)
			*top = ev->kv.mod_revision;
	}
	if (n)
		etcd_apply_revision(s, group, n, false);
}

static int on_watch(void *arg, const struct etcd_watch_msg *m)
{
	struct etcd_sync *s = arg;
	int64_t top = 0;

	touch(s);
	if (m->created) {
		s->created = true;
		set_connected(s, 1);
	}
	if (m->compact_revision) {
		etcd_say(s, "revision %lld was compacted (oldest kept %lld): reading the prefix again",
			 (long long)(applied_revision(s) + 1), (long long)m->compact_revision);
		s->need_range = true;
		return COMPACTED;
	}
	if (m->canceled) {
		etcd_set_err(&s->conn, "watch canceled: %s", /* from outside: cleaned there */
			     m->cancel_reason[0] ? m->cancel_reason : "no reason given");
		return -ECONNRESET;
	}
	/* The old values' frees go to call_rcu after the readers were woken. */
	rcs_buf_hold_frees();
	apply_events(s, m, &top);
	rcs_buf_release_frees();
	/* A quiet prefix's progress message: everything up to its header is here. */
	if (!m->n_events && !m->created && s->created)
		top = m->revision;
	/* Not the header's revision otherwise: writes outside the prefix move
	 * it, and the lag would count changes this host has no reason to apply. */
	set_revision(s, top, top);
	return etcd_stopping(s) ? -ECANCELED : 0;
}

/* Polled by the watch about once a second and after each message. */
static int watch_tick(void *arg)
{
	struct etcd_sync *s = arg;

	if (etcd_stopping(s))
		return -ECANCELED;
	etcd_keys_reap(s); /* keys deleted: freed once their status keys are */
	etcd_say_flush(s, false);
	if (__atomic_exchange_n(&s->rescan, false, __ATOMIC_ACQ_REL) || etcd_retry_due(s))
		return RESCAN_ASKED;
	if (rcs_now_ms() - s->last_msg_ms >= s->idle_ms)
		return IDLE_EXPIRED;
	return 0;
}

/*
 * The watch was quiet for the idle deadline. Ask its member for the newest
 * mod_revision under the prefix, within the probe time and with a leader
 * (a linearizable read): if it answers and holds nothing newer than what
 * was applied, the prefix is just quiet. Otherwise ask another member, so
 * that the lag shows what the cluster holds, and move.
 * Return: 0 (watch the same member again) or the reason to move.
 */
static int check_idle(struct etcd_sync *s)
{
	int64_t max_mod = 0, rev, have = applied_revision(s);
	long saved = s->conn.timeout_ms;
	size_t other = (s->conn.cur + 1) % s->conn.n_endpoints;
	int err;

	s->conn.timeout_ms = s->probe_ms;
	err = etcd_max_mod_revision(&s->conn, s->conn.cur, s->prefix, &max_mod, &rev);
	if (!err && max_mod <= have) {
		s->conn.timeout_ms = saved;
		return 0;
	}
	if (!err) {
		snprintf(s->conn.err, sizeof(s->conn.err),
			 "the watch is behind its member (revision %lld under the prefix, %lld "
			 "applied)", (long long)max_mod, (long long)have);
		err = -ESTALE;
	} else {
		char msg[sizeof(s->conn.err)];

		snprintf(msg, sizeof(msg), "no message within %d ms and no answer to a check: %.180s",
			 s->idle_ms, s->conn.err);
		memcpy(s->conn.err, msg, sizeof(msg));
	}
	set_connected(s, 0);
	set_revision(s, 0, max_mod);
	/* The lag as the rest of the cluster sees it. */
	if (other != s->conn.cur && !etcd_max_mod_revision(&s->conn, other, s->prefix, &max_mod,
							  &rev))
		set_revision(s, 0, max_mod);
	s->conn.timeout_ms = saved;
	return err;
}

static void wait_ms(struct etcd_sync *s, int ms)
{
	struct timespec until = rcs_deadline_after_ms(ms);

	pthread_mutex_lock(&s->lock);
	while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&s->lock);
}

/* Capped exponential backoff with jitter: a fleet does not reconnect in step. */
static int backoff(struct etcd_sync *s, unsigned attempt)
{
	long base = s->backoff_min;

	while (attempt-- && base < s->backoff_max)
		base *= 2;
	if (base > s->backoff_max)
		base = s->backoff_max;
	return (int)(base / 2 + rand_r(&s->seed) % (base / 2 + 1));
}

/* One read-and-watch; returns why it ended. */
static int sync_once(struct etcd_sync *s)
{
	struct etcd_watch_opts wo = { .progress_notify = true, .tick = watch_tick };
	int err = 0;

	s->created = false;
	set_endpoint(s);
	if (__atomic_exchange_n(&s->rescan, false, __ATOMIC_ACQ_REL))
		s->need_range = true;
	if (s->need_range) {
		err = full_read(s);
		if (!err)
			s->need_range = false;
	}
	if (err)
		return err;
	wo.start_revision = applied_revision(s) + 1; /* < INT64_MAX: etcd_json_i64 */
	touch(s);
	err = etcd_watch(&s->conn, s->prefix, &wo, on_watch, s);
	if (err == IDLE_EXPIRED)
		err = check_idle(s);
	if (err == RESCAN_ASKED)
		s->need_range = true; /* the tick took the request */
	return err;
}

/* One line per new trouble, not per retry. */
static void report_trouble(struct etcd_sync *s, int err, char *last, size_t size)
{
	char where[200], msg[512];

	etcd_conn_name(&s->conn, where, sizeof(where));
	snprintf(msg, sizeof(msg), "%.200s: %.250s", where,
		 s->conn.err[0] ? s->conn.err : strerror(-err));
	set_error(s, msg);
	if (strcmp(msg, last))
		etcd_say(s, "%s; reconnecting", msg);
	rcs_copy_cut(last, size, msg, strlen(msg));
	s->conn.err[0] = '\0';
}

static void *run(void *arg)
{
	struct etcd_sync *s = arg;
	unsigned attempt = 0;
	char last[512] = "";

	while (!etcd_stopping(s)) {
		int64_t started = rcs_now_ms();
		int err = sync_once(s);

		if (err == -ECANCELED || etcd_stopping(s))
			break;
		if (err == 0 || err == RESCAN_ASKED)
			continue; /* a quiet prefix, or a re-read asked for: not an outage */
		pthread_mutex_lock(&s->lock);
		if (s->st.connected || s->created)
			s->st.reconnects++; /* a stream was up (the idle check may have said 0) */
		if (err == COMPACTED)
			s->st.resyncs++;
		s->st.connected = 0;
		pthread_mutex_unlock(&s->lock);
		/* A stream that lasted the longest backoff worked: start over. One
		 * that fails right after "created" (a broken gateway) backs off. */
		if (s->created && rcs_now_ms() - started >= s->backoff_max)
			attempt = 0;
		/* A compaction was logged by on_watch and needs no other member,
		 * but backs off like any failure: a member (or a gateway) that
		 * claims one at every watch would have us read the prefix in a
		 * loop. The first read again waits at most backoff_min. */
		if (err != COMPACTED) {
			report_trouble(s, err, last, sizeof(last));
			etcd_conn_next(&s->conn); /* fail over: the next member */
		}
		wait_ms(s, backoff(s, attempt < 30 ? attempt++ : attempt));
	}
	return NULL;
}

void etcd_sync_rescan(struct etcd_sync *s)
{
	__atomic_store_n(&s->rescan, true, __ATOMIC_RELEASE);
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void sync_free(struct etcd_sync *s)
{
	etcd_owned_free(s);
	etcd_read_drop(s);
	etcd_conn_free(&s->wconn);
	etcd_conn_free(&s->rconn);
	pthread_mutex_destroy(&s->wlock);
	pthread_mutex_destroy(&s->say_lock);
	etcd_keys_free(s);
	etcd_held_free(s);
	pthread_cond_destroy(&s->report_wake);
	free(s->prefix);
	free(s->status_prefix);
	etcd_conn_free(&s->conn);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	free(s);
}

/* "/rcustring/web/" -> "web": the service's name in status keys. */
static int default_status_prefix(struct etcd_sync *s, const char *host)
{
	char name[256];
	const char *end = s->prefix + s->prefix_len - 1, *start = end;
	int n;

	while (start > s->prefix && start[-1] != '/')
		start--;
	if (!host) {
		if (gethostname(name, sizeof(name) - 1))
			snprintf(name, sizeof(name), "localhost");
		name[sizeof(name) - 1] = '\0';
		host = name;
	}
	n = asprintf(&s->status_prefix, "/rcustring-status/%.*s/%s/", (int)(end - start), start,
		     host);
	return n < 0 ? -ENOMEM : 0;
}

int etcd_sync_new(struct sysctl_tree *tree, const struct etcd_sync_opts *opts,
		  struct etcd_sync **out)
{
	struct etcd_tls tls = { opts->cacert, opts->cert, opts->key };
	pthread_condattr_t ca;
	struct etcd_sync *s;
	size_t plen;
	int err;

	*out = NULL;
	if (!tree || !opts->endpoints || !opts->prefix || !*opts->prefix)
		return -EINVAL;
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK)
		return -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->wlock, NULL);
	pthread_mutex_init(&s->say_lock, NULL);
	pthread_cond_init(&s->report_wake, NULL);
	s->queue_tail = &s->queue_head;
	s->unnamed_max = ETCD_UNNAMED_MAX, s->queue_max = ETCD_REPORT_QUEUE_MAX;
	s->write_through = opts->write_through;
	s->key_by_key = opts->key_by_key;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	s->tree = tree;
	s->log = opts->log;
	s->log_arg = opts->log_arg;
	s->caller = opts->caller ? *opts->caller :
				   (struct sysctl_caller){ .uid = 0, .gid = 0, .pid = getpid() };
	s->backoff_min = opts->backoff_min_ms > 0 ? opts->backoff_min_ms : 100;
	s->backoff_max = opts->backoff_max_ms > 0 ? opts->backoff_max_ms : 5000;
	if (s->backoff_max < s->backoff_min)
		s->backoff_max = s->backoff_min;
	s->idle_ms = opts->idle_ms > 0 ? opts->idle_ms : 5000;
	/* A member that answers a small read in this time is alive. */
	s->probe_ms = s->idle_ms / 2 < 2000 ? (s->idle_ms / 2 > 100 ? s->idle_ms / 2 : 100) : 2000;
	s->seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	s->need_range = true;
	plen = strlen(opts->prefix);
	if (asprintf(&s->prefix, "%s%s", opts->prefix, opts->prefix[plen - 1] == '/' ? "" : "/") < 0) {
		s->prefix = NULL;
		err = -ENOMEM;
		goto fail;
	}
	s->prefix_len = strlen(s->prefix);
	err = etcd_conn_init(&s->conn, opts->endpoints, &tls);
	if (!err)
		err = etcd_conn_init(&s->wconn, opts->endpoints, &tls);
	if (!err)
		err = etcd_conn_init(&s->rconn, opts->endpoints, &tls);
	if (!err && opts->userpwd && ((err = etcd_conn_set_userpwd(&s->conn, opts->userpwd)) ||
				      (err = etcd_conn_set_userpwd(&s->wconn, opts->userpwd)) ||
				      (err = etcd_conn_set_userpwd(&s->rconn, opts->userpwd))))
		goto fail;
	if (err)
		goto fail;
	s->conn.cancel = etcd_stopping; /* a stop ends a long reply at once */
	s->conn.cancel_arg = s;
	if (opts->status_prefix) {
		if (asprintf(&s->status_prefix, "%s", opts->status_prefix) < 0) {
			s->status_prefix = NULL;
			err = -ENOMEM;
		}
	} else {
		err = default_status_prefix(s, opts->host);
	}
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	sync_free(s);
	return err;
}

int etcd_sync_run(struct etcd_sync *s)
{
	int err = etcd_report_start(s);

	if (!err)
		err = -pthread_create(&s->thread, NULL, run, s);
	if (!err)
		s->running = true;
	return err;
}

int etcd_sync_start(struct sysctl_tree *tree, const struct etcd_sync_opts *opts,
		    struct etcd_sync **out)
{
	int err = etcd_sync_new(tree, opts, out);

	if (!err) {
		err = etcd_sync_run(*out);
		if (err) {
			etcd_sync_stop(*out);
			*out = NULL;
		}
	}
	return err;
}

void etcd_sync_stop(struct etcd_sync *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&s->stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (s->running)
		pthread_join(s->thread, NULL);
	etcd_report_stop(s);
	etcd_say_flush(s, true);
	sync_free(s);
}

