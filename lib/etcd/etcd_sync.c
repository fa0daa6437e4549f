/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sync thread: read the prefix, watch it, write each value through the
 * tree, report what was refused, reconnect with backoff. Everything that
 * talks to etcd runs here; other threads only read the status under a
 * mutex that is never held across network I/O.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcd_http.h"
#include "etcd_sync.h"

#define VALUE_CMP_MAX 4096 /* values compared with the tree's before a resync write */
#define ESTALE_RANGE (-ESTALE) /* the watch's revision was compacted: read the prefix again */

enum status_field {
	ST_CONNECTED, ST_REVISION, ST_LAG, ST_APPLIED, ST_REFUSED, ST_RECONNECTS, ST_RESYNCS,
	ST_LAST_ERROR, ST_COUNT
};

static const char *const status_names[ST_COUNT] = {
	"connected", "revision", "lag", "applied", "refused", "reconnects", "resyncs", "last_error",
};
static const char *const status_desc[ST_COUNT] = {
	"1 while the etcd watch stream is up",
	"etcd revision the tree holds every change up to",
	"revisions etcd reported beyond the applied one",
	"values from etcd written into the tree",
	"values from etcd the tree refused (see the status keys)",
	"etcd watch streams lost and started again",
	"whole-prefix reads after the watched revision was compacted",
	"last error talking to etcd",
};

/* What was last applied for one key: a resumed watch or a resync never applies it twice. */
struct key_state {
	char *key;
	int64_t mod_revision;
	bool reported; /* a refusal is in etcd under the status prefix */
	bool refused;  /* the value at mod_revision was refused */
	bool applied;  /* some value of the key is in the tree (etcd_sync_holds) */
};

/* A row of an owned table: the tree calls owned_handler with data = this. */
struct owned_row {
	struct etcd_sync *s;
	struct ctl_table orig;
	char *key; /* the etcd key of the entry */
	/* Borrowed: its handler runs only while the table is registered, when
	 * the entry lives; asked whose write is in progress. */
	struct sysctl_entry *entry;
};

struct owned_table {
	struct owned_table *next;
	struct ctl_table *rows; /* what the tree holds */
	struct owned_row *owned;
	size_t count;
};

struct etcd_sync {
	struct sysctl_tree *tree;
	struct etcd_conn conn;
	char *prefix, *status_prefix;
	size_t prefix_len;
	struct sysctl_caller caller;
	int backoff_min, backoff_max;
	sysctl_log_fn *log;
	void *log_arg;
	unsigned int seed; /* jitter */

	bool write_through;
	pthread_mutex_t wlock; /* wconn: local writes, from any thread */
	struct etcd_conn wconn;
	struct owned_table *owned;

	pthread_t thread;
	bool running;
	pthread_mutex_t lock; /* st, stop, keys[].mod_revision and the keys array */
	pthread_cond_t wake;
	bool stop;
	struct etcd_sync_status st;

	/* written by the sync thread only (under lock) */
	struct key_state *keys;
	size_t n_keys, cap_keys;
	bool need_range, created;

	struct ctl_table status_table[ST_COUNT];
};

static void say(struct etcd_sync *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct etcd_sync *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (s->log)
		s->log(s->log_arg, msg);
	else
		fprintf(stderr, "rcustring-etcd: %s\n", msg);
}

static int stopping(void *arg)
{
	struct etcd_sync *s = arg;

	return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

/* Copy @src into @dst, cut to @size - 1 bytes (messages may be longer). */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void set_error(struct etcd_sync *s, const char *msg)
{
	pthread_mutex_lock(&s->lock);
	copy_cut(s->st.last_error, sizeof(s->st.last_error), msg);
	pthread_mutex_unlock(&s->lock);
}

static struct key_state *key_state(struct etcd_sync *s, const char *key)
{
	struct key_state *k;

	/* Linear: a service has tens of tunables, not thousands. */
	for (size_t i = 0; i < s->n_keys; i++)
		if (!strcmp(s->keys[i].key, key))
			return &s->keys[i];
	pthread_mutex_lock(&s->lock); /* writers read the array (key_revision) */
	if (s->n_keys == s->cap_keys) {
		size_t cap = s->cap_keys ? s->cap_keys * 2 : 16;

		k = realloc(s->keys, cap * sizeof(*k));
		if (!k)
			goto fail;
		s->keys = k;
		s->cap_keys = cap;
	}
	k = &s->keys[s->n_keys];
	k->key = strdup(key);
	if (!k->key)
		goto fail;
	k->mod_revision = 0;
	k->reported = false;
	k->refused = false;
	k->applied = false;
	s->n_keys++;
	pthread_mutex_unlock(&s->lock);
	return k;
fail:
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

bool etcd_sync_holds(struct etcd_sync *s, const char *path)
{
	struct sysctl_entry *e = sysctl_lookup(s->tree, path);
	bool holds = false;

	if (!e)
		return false;
	/* Entries, not strings: "a.b" and "a/b" name the same one. */
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_keys && !holds; i++) {
		struct sysctl_entry *k;

		if (!s->keys[i].applied)
			continue;
		k = sysctl_lookup(s->tree, s->keys[i].key + s->prefix_len);
		holds = k == e;
		if (k)
			sysctl_entry_put(k);
	}
	pthread_mutex_unlock(&s->lock);
	sysctl_entry_put(e);
	return holds;
}

/* The key's mod_revision as this host last applied it (0: never seen). Any thread. */
static int64_t key_revision(struct etcd_sync *s, const char *key)
{
	int64_t rev = 0;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_keys; i++)
		if (!strcmp(s->keys[i].key, key)) {
			rev = s->keys[i].mod_revision;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	return rev;
}


static char *status_key(struct etcd_sync *s, const char *key)
{
	char *out;

	if (asprintf(&out, "%s%s", s->status_prefix, key + s->prefix_len) < 0)
		return NULL;
	return out;
}

/* Tell the fleet's operator which value this host refused and why. */
static void report_refusal(struct etcd_sync *s, struct key_state *k, const char *key,
			   int64_t rev, size_t len, int err)
{
	json_object *o = json_object_new_object();
	char *skey = status_key(s, key);
	struct timespec now;
	const char *text;
	int ret = -ENOMEM;

	clock_gettime(CLOCK_REALTIME, &now);
	if (o && skey) {
		const char *name = strerrorname_np(-err);

		json_object_object_add(o, "revision", json_object_new_int64(rev));
		json_object_object_add(o, "error", json_object_new_string(name ? name : "?"));
		json_object_object_add(o, "message", json_object_new_string(strerror(-err)));
		json_object_object_add(o, "value_bytes", json_object_new_int64((int64_t)len));
		json_object_object_add(o, "time", json_object_new_int64(now.tv_sec));
		text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		ret = etcd_put(&s->conn, skey, text, strlen(text), NULL);
	}
	if (ret)
		say(s, "cannot report the refusal of %s to etcd: %s", key, s->conn.err);
	else if (k)
		k->reported = true;
	json_object_put(o);
	free(skey);
}

static void clear_refusal(struct etcd_sync *s, struct key_state *k, const char *key)
{
	char *skey = status_key(s, key);

	if (skey && !etcd_delete(&s->conn, skey))
		k->reported = false;
	free(skey);
}

/*
 * Write one value from etcd into the tree. @resync: skip the write when the
 * tree already holds the value (a whole-prefix read applies differences
 * only); otherwise a revision already applied for the key is not applied
 * again.
 */
static void apply(struct etcd_sync *s, const char *key, const char *value, size_t len,
		  int64_t rev, bool resync)
{
	struct key_state *k = key_state(s, key);
	const char *path = key + s->prefix_len;
	char cur[VALUE_CMP_MAX];
	int err = 0;

	/* A watch event at or below what was applied is a replay: skip it. A
	 * re-read compares values instead, so that it also restores a value
	 * changed in the tree behind etcd's back. */
	if (k && !resync && k->mod_revision >= rev)
		return;
	if (k && resync && k->mod_revision == rev && k->refused)
		return; /* the same value, refused already: not counted or reported twice */
	if (len && value[len - 1] == '\n')
		len--; /* "value\n" is how a file is written; the same value */
	/* A string handler stops at the first newline or NUL: a value holding one
	 * would be applied in part. Refuse it whole. */
	if (!*path || memchr(value, '\n', len) || memchr(value, '\0', len))
		err = -EINVAL;
	if (!err && resync) {
		ssize_t n = sysctl_get(s->tree, path, cur, sizeof(cur));

		if (n == (ssize_t)len + 1 && !memcmp(cur, value, len) && cur[len] == '\n')
			goto done;
	}
	/* The origin travels with the write: owned entries let it through, the
	 * state file lets the key go (etcd is its source of truth). */
	if (!err)
		err = sysctl_set_from(s->tree, path, value, len, &s->caller, SYSCTL_ORIGIN_MIRROR);
	if (err) {
		pthread_mutex_lock(&s->lock);
		s->st.refused++;
		pthread_mutex_unlock(&s->lock);
		/* The key names the tunable; the value may be private and is not logged. */
		say(s, "refused %s at revision %lld (%zu bytes): %s", key, (long long)rev, len,
		    strerror(-err));
		report_refusal(s, k, key, rev, len, err);
	} else {
		pthread_mutex_lock(&s->lock);
		s->st.applied++;
		clock_gettime(CLOCK_REALTIME, &s->st.last_applied);
		pthread_mutex_unlock(&s->lock);
		if (k && k->reported)
			clear_refusal(s, k, key);
	}
done:
	if (k) {
		pthread_mutex_lock(&s->lock);
		k->mod_revision = rev;
		k->refused = err != 0;
		k->applied |= !err;
		pthread_mutex_unlock(&s->lock);
	}
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

/* Read the whole prefix at one revision and apply what differs. */
static int full_read(struct etcd_sync *s)
{
	struct etcd_kv *kvs;
	int64_t rev = 0;
	size_t n;
	int err = etcd_range_prefix(&s->conn, s->prefix, &rev, &kvs, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n && !stopping(s); i++)
		if (!strncmp(kvs[i].key, s->prefix, s->prefix_len))
			apply(s, kvs[i].key, kvs[i].value, kvs[i].value_len, kvs[i].mod_revision,
			      true);
	etcd_kvs_free(kvs, n);
	/* After a compaction the revision may move back below what we applied
	 * only if etcd lost data; keep the newest. */
	set_revision(s, rev, rev);
	return 0;
}

static int on_watch(void *arg, json_object *res)
{
	struct etcd_sync *s = arg;
	json_object *hdr, *events, *flag;
	int64_t compacted = etcd_json_i64(res, "compact_revision"), top = 0;

	if (json_object_object_get_ex(res, "header", &hdr))
		set_revision(s, 0, etcd_json_i64(hdr, "revision"));
	if (json_object_object_get_ex(res, "created", &flag) && json_object_get_boolean(flag)) {
		s->created = true;
		pthread_mutex_lock(&s->lock);
		s->st.connected = 1;
		s->st.last_error[0] = '\0';
		pthread_mutex_unlock(&s->lock);
	}
	if (compacted) {
		say(s, "revision %lld was compacted (oldest kept %lld): reading the prefix again",
		    (long long)(s->st.revision + 1), (long long)compacted);
		s->need_range = true;
		return ESTALE_RANGE;
	}
	if (json_object_object_get_ex(res, "canceled", &flag) && json_object_get_boolean(flag))
		return -ECONNRESET;
	if (!json_object_object_get_ex(res, "events", &events))
		return 0;
	for (size_t i = 0; i < json_object_array_length(events); i++) {
		json_object *ev = json_object_array_get_idx(events, i), *kv, *type, *v;
		char *key = NULL, *value = NULL;
		size_t klen, vlen = 0;
		int64_t rev;

		if (!json_object_object_get_ex(ev, "kv", &kv) ||
		    !json_object_object_get_ex(kv, "key", &v) ||
		    etcd_b64_decode(json_object_get_string(v), &key, &klen))
			return -EBADMSG;
		rev = etcd_json_i64(kv, "mod_revision");
		if (json_object_object_get_ex(ev, "type", &type) &&
		    !strcmp(json_object_get_string(type), "DELETE")) {
			/* A tunable cannot vanish from the tree: it keeps its last value. */
			say(s, "%s was deleted in etcd at revision %lld; the tree keeps its value",
			    key, (long long)rev);
		} else if (json_object_object_get_ex(kv, "value", &v) ?
				   etcd_b64_decode(json_object_get_string(v), &value, &vlen) == 0 :
				   (value = strdup("")) != NULL) {
			if (!strncmp(key, s->prefix, s->prefix_len))
				apply(s, key, value, vlen, rev, false);
		} else {
			free(key);
			return -EBADMSG;
		}
		free(key);
		free(value);
		if (rev > top)
			top = rev;
	}
	set_revision(s, top, 0);
	return stopping(s) ? -ECANCELED : 0;
}

static void wait_ms(struct etcd_sync *s, int ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
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

static void *run(void *arg)
{
	struct etcd_sync *s = arg;
	unsigned attempt = 0;
	char where[200], last[512] = "";

	while (!stopping(s)) {
		int64_t from;
		int err = 0;

		s->created = false;
		if (s->need_range) {
			err = full_read(s);
			if (!err)
				s->need_range = false;
		}
		if (!err) {
			pthread_mutex_lock(&s->lock);
			from = s->st.revision + 1;
			pthread_mutex_unlock(&s->lock);
			err = etcd_watch(&s->conn, s->prefix, from, on_watch, s, stopping);
		}
		if (err == -ECANCELED || stopping(s))
			break;
		pthread_mutex_lock(&s->lock);
		if (s->st.connected)
			s->st.reconnects++;
		if (err == ESTALE_RANGE)
			s->st.resyncs++;
		s->st.connected = 0;
		pthread_mutex_unlock(&s->lock);
		if (err == ESTALE_RANGE)
			continue; /* not an outage: read again at once */
		if (s->created)
			attempt = 0; /* the stream worked: start the backoff over */
		etcd_conn_name(&s->conn, where, sizeof(where));
		{
			char msg[sizeof(last)];

			snprintf(msg, sizeof(msg), "%.200s: %.250s", where,
				 s->conn.err[0] ? s->conn.err : strerror(-err));
			set_error(s, msg);
			if (strcmp(msg, last)) /* one line per new trouble, not per retry */
				say(s, "%s; reconnecting", msg);
			memcpy(last, msg, sizeof(last));
		}
		s->conn.err[0] = '\0';
		if (!s->created)
			etcd_conn_next(&s->conn);
		wait_ms(s, backoff(s, attempt++));
	}
	return NULL;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void sync_free(struct etcd_sync *s)
{
	while (s->owned) {
		struct owned_table *o = s->owned;

		s->owned = o->next;
		for (size_t i = 0; i < o->count; i++)
			free(o->owned[i].key);
		free(o->owned);
		free(o->rows);
		free(o);
	}
	etcd_conn_free(&s->wconn);
	pthread_mutex_destroy(&s->wlock);
	for (size_t i = 0; i < s->n_keys; i++)
		free(s->keys[i].key);
	free(s->keys);
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
	s->write_through = opts->write_through;
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
	if (err)
		goto fail;
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
	int err = -pthread_create(&s->thread, NULL, run, s);

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

void etcd_sync_status(struct etcd_sync *s, struct etcd_sync_status *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	pthread_mutex_unlock(&s->lock);
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
	sync_free(s);
}

/* Read-only entries: the value is formatted at each read, from one status copy. */
static int status_handler(const struct ctl_table *t, int write, void *buffer, size_t *lenp,
			  off_t *ppos)
{
	struct etcd_sync *s = t->data;
	struct etcd_sync_status st;
	char text[sizeof(st.last_error) + 2];
	size_t len, pos;

	if (write)
		return -EPERM;
	if (!lenp || !ppos || *ppos < 0 || (!buffer && *lenp))
		return -EINVAL;
	etcd_sync_status(s, &st);
	switch ((enum status_field)(t - s->status_table)) {
	case ST_CONNECTED:
		len = (size_t)snprintf(text, sizeof(text), "%d\n", st.connected);
		break;
	case ST_REVISION:
		len = (size_t)snprintf(text, sizeof(text), "%lld\n", (long long)st.revision);
		break;
	case ST_LAG:
		len = (size_t)snprintf(text, sizeof(text), "%lld\n",
				       (long long)(st.etcd_revision > st.revision ?
							   st.etcd_revision - st.revision : 0));
		break;
	case ST_APPLIED:
		len = (size_t)snprintf(text, sizeof(text), "%llu\n", (unsigned long long)st.applied);
		break;
	case ST_REFUSED:
		len = (size_t)snprintf(text, sizeof(text), "%llu\n", (unsigned long long)st.refused);
		break;
	case ST_RECONNECTS:
		len = (size_t)snprintf(text, sizeof(text), "%llu\n",
				       (unsigned long long)st.reconnects);
		break;
	case ST_RESYNCS:
		len = (size_t)snprintf(text, sizeof(text), "%llu\n", (unsigned long long)st.resyncs);
		break;
	default:
		len = (size_t)snprintf(text, sizeof(text), "%s\n", st.last_error);
		break;
	}
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

/* ---- entries owned by etcd ---- */

/*
 * Would the entry's handler take @value? Run it on a scratch copy of the
 * entry's data. Called inside the tree's write of this entry (its writer
 * lock held), so the data cannot change under the copy.
 */
static int check_value(const struct ctl_table *orig, const char *value, size_t len)
{
	struct ctl_table t = *orig;
	struct rcustring tmp;
	void *copy = NULL;
	off_t pos = 0;
	int err;

	if (orig->proc_handler == proc_rcu_string) {
		err = rcustring_init(&tmp, rcustring_maxlen(orig->data), "");
		if (err)
			return err;
		t.data = &tmp;
	} else if (orig->data && orig->maxlen > 0) {
		copy = malloc((size_t)orig->maxlen);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, orig->data, (size_t)orig->maxlen);
		t.data = copy;
	}
	err = t.proc_handler(&t, 1, (void *)value, &len, &pos);
	if (orig->proc_handler == proc_rcu_string)
		rcustring_destroy(&tmp);
	free(copy);
	return err;
}

static int write_through(struct owned_row *r, const char *buf, size_t len)
{
	struct etcd_sync *s = r->s;
	int64_t expect, rev;
	int err, done = 0;

	if (len && buf[len - 1] == '\n')
		len--;
	if (memchr(buf, '\n', len) || memchr(buf, '\0', len))
		return -EINVAL; /* etcd would hold a value no host can apply whole */
	err = check_value(&r->orig, buf, len);
	if (err)
		return err;
	expect = key_revision(s, r->key);
	pthread_mutex_lock(&s->wlock);
	err = etcd_put_if(&s->wconn, r->key, buf, len, expect, &done, &rev);
	if (err) {
		char where[200];

		etcd_conn_name(&s->wconn, where, sizeof(where));
		say(s, "write-through of %s: %s: %s", r->key, where, s->wconn.err);
		etcd_conn_next(&s->wconn);
	}
	pthread_mutex_unlock(&s->wlock);
	if (!err && !done)
		err = -EAGAIN; /* someone else wrote the key since this host applied it */
	return err;
}

static int owned_handler(const struct ctl_table *t, int write, void *buffer, size_t *lenp,
			 off_t *ppos)
{
	struct owned_row *r = t->data;
	const struct sysctl_change *w = write ? sysctl_entry_writing(r->entry) : NULL;
	int err;

	/* This sync's own write: the record names its caller, whatever the thread. */
	if (!write || (w && w->origin == SYSCTL_ORIGIN_MIRROR && w->who == &r->s->caller))
		return r->orig.proc_handler(&r->orig, write, buffer, lenp, ppos);
	if (!r->s->write_through)
		return -EROFS; /* etcd owns the entry: change it there */
	if (!lenp || !ppos || *ppos != 0 || (!buffer && *lenp))
		return -EINVAL;
	err = write_through(r, buffer, *lenp);
	if (!err)
		*ppos += (off_t)*lenp;
	return err;
}

/*
 * Keys use the tree's '/' form. A directory given in '.' form
 * ("net.ipv4.conf.eth0/200", where '/' stands for a '.' in a name) is
 * turned into it ("net/ipv4/conf/eth0.200"): swap the two in its @len bytes.
 */
static void slash_form(char *dir, size_t len)
{
	size_t first = strcspn(dir, "./");

	if (first >= len || dir[first] != '.')
		return;
	for (size_t i = 0; i < len; i++)
		dir[i] = dir[i] == '.' ? '/' : dir[i] == '/' ? '.' : dir[i];
}

int etcd_sync_own_table(struct etcd_sync *s, const char *dir, struct ctl_table *table,
			size_t count, struct sysctl_table_header **out)
{
	struct owned_table *o = calloc(1, sizeof(*o));
	struct sysctl_tree *check = sysctl_tree_new();
	struct sysctl_table_header *h;
	int err = -ENOMEM;
	size_t i;

	if (!o || !check)
		goto fail;
	/* The kernel's table checks run on the real rows, in a scratch tree: the
	 * wrapped rows would hide a bad string or minmax row from them. */
	err = sysctl_register_table(check, dir, table, count, &h);
	if (err)
		goto fail;
	sysctl_unregister_table(h);
	err = -ENOMEM;
	o->rows = calloc(count ? count : 1, sizeof(*o->rows));
	o->owned = calloc(count ? count : 1, sizeof(*o->owned));
	if (!o->rows || !o->owned)
		goto fail;
	o->count = count;
	for (i = 0; i < count; i++) {
		struct owned_row *r = &o->owned[i];

		r->s = s;
		r->orig = table[i];
		if (asprintf(&r->key, "%s%s%s%s", s->prefix, dir, *dir ? "/" : "",
			     table[i].procname) < 0) {
			r->key = NULL;
			goto fail;
		}
		slash_form(r->key + s->prefix_len, strlen(dir));
		o->rows[i] = table[i];
		o->rows[i].data = r;
		o->rows[i].proc_handler = owned_handler;
	}
	err = sysctl_register_table(s->tree, dir, o->rows, count, out);
	if (err)
		goto fail;
	for (i = 0; i < count; i++) {
		o->owned[i].entry = sysctl_lookup(s->tree, o->owned[i].key + s->prefix_len);
		if (!o->owned[i].entry)
			err = -ENOENT; /* cannot be: it was just registered there */
		sysctl_entry_put(o->owned[i].entry);
	}
	if (err) {
		sysctl_unregister_table(*out);
		goto fail;
	}
	sysctl_tree_free(check);
	pthread_mutex_lock(&s->lock);
	o->next = s->owned;
	s->owned = o;
	pthread_mutex_unlock(&s->lock);
	return 0;
fail:
	if (check)
		sysctl_tree_free(check);
	if (o) {
		for (i = 0; o->owned && i < count; i++)
			free(o->owned[i].key);
		free(o->owned);
		free(o->rows);
		free(o);
	}
	return err;
}
