/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mirror's internals, shared by etcd_sync.c (the sync thread: reads,
 * watch, liveness), etcd_revision.c (one revision's values as one
 * commit), etcd_keys.c (what was applied per key, and its write into the
 * tree), etcd_report.c (log lines, status keys put in batches by their own
 * thread, the status) and etcd_owned.c (entries etcd owns, write-through).
 * Internal to the module. The files call one another one way only: sync
 * -> owned -> revision -> keys -> report -> the client (etcd_http.c,
 * etcd_json.c, etcd_b64.c); sync also calls keys and report directly.
 */
#ifndef RCUSTRING_ETCD_SYNC_INT_H
#define RCUSTRING_ETCD_SYNC_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "etcd_http.h"
#include "etcd_sync.h"

/*
 * What was last seen for one key: a resumed watch or a resync never applies
 * it twice. A key that leaves the prefix (a delete, or absent from a
 * whole-prefix read) is freed once its status key is gone from etcd
 * (etcd_keys_reap), so that keys put and deleted again and again cost no
 * memory; which entries hold a value from etcd is kept apart, per entry
 * (struct held).
 */
struct key_state {
	struct key_state *next; /* hash chain */
	struct key_state *gnext; /* the list of keys gone (listed) */
	int64_t mod_revision;   /* of the value last applied or refused; 0 after a delete */
	int refused;            /* errno of the refusal of the value at mod_revision, or 0 */
	uint32_t read;          /* the whole-prefix read that last saw it */
	bool gone : 1;          /* left the prefix: freed once nothing refers to it */
	bool listed : 1;        /* on the gone list */
	/* Status key (etcd_report.c, under lock): what etcd holds and what it should. */
	bool reported : 1;      /* a refusal is in etcd */
	bool queued : 1;        /* in the report queue */
	bool sending : 1;       /* in a batch being written (the reporter holds it) */
	bool unnamed : 1;       /* names no entry (counted in n_unnamed) */
	bool held : 1;          /* its entry is in the held set (which never shrinks) */
	char *report;           /* JSON to put, or NULL to delete */
	struct key_state *qnext;
	char key[];             /* NUL-free, checked by etcd_key_check() */
};

/* An entry that holds a value from etcd: its path in '/' form, trimmed. */
struct held {
	struct held *next;
	size_t hash;
	char path[];
};

/* A whole-prefix read logs this many refusals one by one, then a count. */
#define READ_REFUSALS_LOGGED 20

/* Log lines of one call site: SAY_BURST in SAY_WINDOW_MS, then a count. */
#define SAY_SITES 32
#define SAY_BURST 20
#define SAY_WINDOW_MS 10000
struct etcd_say_site {
	const char *fmt; /* the call site's format: NULL, a free slot */
	int64_t start;   /* rcs_now_ms() of the window's start */
	unsigned lines;
	size_t dropped;
};

/* Entries of etcd_sync_register_status(). */
#define ETCD_ST_COUNT 12

/*
 * Keys that name no entry whose state is kept (their revision, their
 * refusal's status key). A fleet's prefix may hold keys this host does not
 * declare (entries of other hosts' tunables.d), as many as the tunables
 * the project is built for (100 000): all of those are kept. Past the cap
 * such a key is refused and counted only (etcd.untracked): no state, no
 * status key, so that a hostile etcd that puts keys without end costs no
 * memory (about 200 bytes a key, 20 MB at the cap, were unbounded).
 */
#define ETCD_UNNAMED_MAX 100000
/* Status reports queued: one per key at most, so the entries plus the keys
 * above; a backstop. Past it a refusal's report is dropped and counted. */
#define ETCD_REPORT_QUEUE_MAX (2 * ETCD_UNNAMED_MAX)

struct etcd_sync {
	struct sysctl_tree *tree;
	struct etcd_conn conn;  /* the sync thread's */
	char *prefix, *status_prefix;
	size_t prefix_len;
	struct sysctl_caller caller;
	int backoff_min, backoff_max;
	int idle_ms, probe_ms;
	sysctl_log_fn *log;
	void *log_arg;
	pthread_mutex_t say_lock; /* say: log lines from any thread */
	struct etcd_say_site say[SAY_SITES];
	int64_t say_next_ms; /* etcd_say_flush(): the next look (atomic) */
	unsigned int seed; /* jitter */

	bool write_through;
	bool key_by_key; /* etcd_sync_opts.key_by_key (a test's) */
	pthread_mutex_t wlock; /* wconn: local writes, from any thread */
	struct etcd_conn wconn;
	struct owned_table *owned;

	pthread_t thread;
	bool running;
	pthread_mutex_t lock; /* st, stop, the key table, the report queue */
	pthread_cond_t wake;
	bool stop;
	bool rescan;          /* etcd_sync_rescan(): read the prefix again */
	struct etcd_sync_status st;
	char endpoint[200];   /* the member watched (for etcd.endpoint) */

	/* Key table (under lock; only the sync thread adds and frees keys). */
	struct key_state **buckets;
	size_t n_buckets, n_keys;
	size_t n_unnamed, unnamed_max; /* keys with unnamed set; the cap (tests lower it) */
	bool unnamed_said;      /* the cap's log line is out (until below it again) */
	struct key_state *gone; /* keys that left the prefix, to free */
	uint32_t read;          /* whole-prefix reads started */
	/* Entries holding a value from etcd (under lock), for etcd_sync_holds. */
	struct held **held;
	size_t n_held_buckets, n_held;
	uint64_t held_probes;   /* entries compared by lookups: the test hook's count */

	/* Report thread (etcd_report.c). */
	pthread_t reporter;
	bool reporter_running;
	bool report_flush; /* etcd_report_stop(): the sync thread has ended */
	pthread_cond_t report_wake;
	struct etcd_conn rconn;
	struct key_state *queue_head, **queue_tail;
	size_t queued, queue_max; /* queue_max: ETCD_REPORT_QUEUE_MAX (tests lower it) */

	/* The sync thread's own. */
	bool need_range, created;
	int64_t applying;     /* etcd_sync_applying_revision() (atomic) */
	size_t read_refusals; /* in the current whole-prefix read */
	struct etcd_kv *read_kvs; /* its values to commit (etcd_read_add()) */
	size_t n_read_kvs;
	int64_t last_msg_ms; /* rcs_now_ms() of the watch's last message */
	/* A value the tree refused for a passing reason (its commit failed: a full
	 * disk, an I/O error): the prefix is read again at retry_at_ms (sync thread). */
	int64_t retry_at_ms;
	int retry_delay_ms;

	struct ctl_table status_table[ETCD_ST_COUNT];
};

/* etcd_keys.c */
size_t etcd_hash(const char *s, size_t n);
struct key_state *etcd_key_find(struct etcd_sync *s, const char *key); /* lock held */
/* The state of @key (@path: the key less the prefix), made when new: 0,
 * -ENOSPC (it names no entry and ETCD_UNNAMED_MAX such keys are kept), or
 * -ENOMEM. Sync thread. */
int etcd_key_get(struct etcd_sync *s, const char *key, const char *path, struct key_state **out);
void etcd_keys_free(struct etcd_sync *s);
int64_t etcd_key_revision(struct etcd_sync *s, const char *key); /* any thread */
void etcd_key_deleted(struct etcd_sync *s, const char *key, int64_t rev);
/* After a whole read (number s->read): the keys it did not hold left the prefix. */
size_t etcd_keys_absent(struct etcd_sync *s);
/* Free the keys gone whose status key etcd no longer holds (sync thread). */
void etcd_keys_reap(struct etcd_sync *s);
void etcd_apply(struct etcd_sync *s, const struct etcd_kv *kv, bool resync);
/* One value on its way into the tree: etcd_apply() in steps, so that the
 * values of one revision are written by one commit (etcd_revision.c). */
struct etcd_pending {
	const struct etcd_kv *kv;
	struct key_state *k;
	const char *path;
	size_t len; /* the value's, less a final newline */
	int err;    /* the write's: 0 applied, 1 held already, < 0 refused */
};
bool etcd_apply_prepare(struct etcd_sync *s, const struct etcd_kv *kv, bool resync,
			struct etcd_pending *p);
void etcd_apply_finish(struct etcd_sync *s, struct etcd_pending *p, bool resync);
/* Does the tree hold @value at @path already (a re-read skips it)? */
bool etcd_tree_holds(struct etcd_sync *s, const char *path, const char *value, size_t len);
/* An error that says nothing of the value (a full disk): applied again later. */
bool etcd_passing(int err);

/* etcd_revision.c: the values of one revision (@n <= SYSCTL_COMMIT_MAX) as one commit. */
void etcd_apply_revision(struct etcd_sync *s, const struct etcd_kv *const *kvs, size_t n,
			 bool resync);
/* A whole-prefix read's kv: refused, skipped, or held for etcd_read_flush(). */
void etcd_read_add(struct etcd_sync *s, const struct etcd_kv *kv);
/* The held values committed, one revision at a time; etcd_read_drop(): freed unapplied. */
void etcd_read_flush(struct etcd_sync *s);
void etcd_read_drop(struct etcd_sync *s);
/* A value refused for a passing reason is due to be applied again (sync thread). */
bool etcd_retry_due(struct etcd_sync *s);
void etcd_refuse_undecodable(struct etcd_sync *s, size_t count);

/* etcd_held.c (lock held but etcd_held_free) */
int etcd_held_add(struct etcd_sync *s, const char *path);
bool etcd_held_find(struct etcd_sync *s, const char *path);
void etcd_held_free(struct etcd_sync *s);
/* @path in the one form of its entry ('/' form, no '/' at either end) in
 * @buf; false when it does not fit. */
bool etcd_path_canonical(const char *path, char *buf, size_t size);
/* Test hook: entries compared by etcd_sync_holds() so far (any thread). */
uint64_t etcd_sync_held_probes(struct etcd_sync *s);

/* etcd_report.c (also etcd_sync_status()) */
void etcd_say(struct etcd_sync *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Log the counts of lines dropped in windows that have ended (@all: every count). */
void etcd_say_flush(struct etcd_sync *s, bool all);
/* Queue @k's refusal; past queue_max it is dropped and counted (reports_dropped). */
void etcd_report_refusal(struct etcd_sync *s, struct key_state *k, int64_t rev, size_t len,
			 int err);
void etcd_report_clear(struct etcd_sync *s, struct key_state *k);
void etcd_report_clear_locked(struct etcd_sync *s, struct key_state *k);
int etcd_report_start(struct etcd_sync *s);
/* After the sync thread has ended: write what is queued (bounded), join. */
void etcd_report_stop(struct etcd_sync *s);

/* etcd_owned.c */
void etcd_owned_free(struct etcd_sync *s);

#endif /* RCUSTRING_ETCD_SYNC_INT_H */
