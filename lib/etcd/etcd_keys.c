/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Keys of the prefix: which ones may name an entry, what was last applied
 * for each (a hash table: a prefix may hold thousands of keys, refused
 * ones included, up to ETCD_UNNAMED_MAX that name no entry; a key that
 * left the prefix is freed), and the write of one value into the tree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/deadline.h"
#include "etcd_sync_int.h"

static size_t key_hash(const char *key)
{
	return etcd_hash(key, strlen(key));
}

struct key_state *etcd_key_find(struct etcd_sync *s, const char *key)
{
	struct key_state *k;

	if (!s->n_buckets)
		return NULL;
	for (k = s->buckets[key_hash(key) & (s->n_buckets - 1)]; k; k = k->next)
		if (!strcmp(k->key, key))
			return k;
	return NULL;
}

/* Double the table (lock held); a failure leaves it as it was, only slower. */
static void grow(struct etcd_sync *s)
{
	size_t n = s->n_buckets ? s->n_buckets * 2 : 64;
	struct key_state **b = calloc(n, sizeof(*b));

	if (!b)
		return;
	for (size_t i = 0; i < s->n_buckets; i++) {
		while (s->buckets[i]) {
			struct key_state *k = s->buckets[i];

			s->buckets[i] = k->next;
			k->next = b[key_hash(k->key) & (n - 1)];
			b[key_hash(k->key) & (n - 1)] = k;
		}
	}
	free(s->buckets);
	s->buckets = b;
	s->n_buckets = n;
}

/* Does @path name an entry? Not under s->lock: a status entry's read takes
 * it from within the tree. */
static bool names_entry(struct etcd_sync *s, const char *path)
{
	struct sysctl_entry *e = sysctl_lookup(s->tree, path);

	if (e)
		sysctl_entry_put(e);
	return e != NULL;
}

/* Whether @k names no entry (lock held): n_unnamed counts those that do not. */
static void set_unnamed(struct etcd_sync *s, struct key_state *k, bool unnamed)
{
	if (k->unnamed == unnamed)
		return;
	k->unnamed = unnamed;
	if (unnamed)
		s->n_unnamed++;
	else if (--s->n_unnamed < s->unnamed_max)
		s->unnamed_said = false; /* room again: a later storm is logged anew */
}

int etcd_key_get(struct etcd_sync *s, const char *key, const char *path, struct key_state **out)
{
	size_t len = strlen(key);
	struct key_state *k;
	bool unnamed;

	pthread_mutex_lock(&s->lock);
	k = etcd_key_find(s, key);
	if (k) {
		k->gone = false; /* back in the prefix; etcd_keys_reap() unlists it */
		goto out;
	}
	pthread_mutex_unlock(&s->lock);
	/* A new key (only this thread adds keys: none can come in between). */
	unnamed = !names_entry(s, path);
	pthread_mutex_lock(&s->lock);
	if (unnamed && s->n_unnamed >= s->unnamed_max) {
		pthread_mutex_unlock(&s->lock);
		return -ENOSPC;
	}
	if (s->n_keys >= s->n_buckets)
		grow(s);
	k = s->n_buckets ? calloc(1, sizeof(*k) + len + 1) : NULL;
	if (k) {
		size_t b = key_hash(key) & (s->n_buckets - 1);

		memcpy(k->key, key, len + 1);
		k->next = s->buckets[b];
		s->buckets[b] = k;
		s->n_keys++;
		set_unnamed(s, k, unnamed);
	}
out:
	if (k)
		k->read = s->read;
	pthread_mutex_unlock(&s->lock);
	*out = k;
	return k ? 0 : -ENOMEM;
}

void etcd_keys_free(struct etcd_sync *s)
{
	for (size_t i = 0; i < s->n_buckets; i++)
		while (s->buckets[i]) {
			struct key_state *k = s->buckets[i];

			s->buckets[i] = k->next;
			free(k->report);
			free(k);
		}
	free(s->buckets);
	s->buckets = NULL;
	s->n_buckets = s->n_keys = s->n_unnamed = 0;
	s->gone = NULL;
}

int64_t etcd_sync_applying_revision(struct etcd_sync *s)
{
	return __atomic_load_n(&s->applying, __ATOMIC_ACQUIRE);
}

int64_t etcd_key_revision(struct etcd_sync *s, const char *key)
{
	struct key_state *k;
	int64_t rev;

	pthread_mutex_lock(&s->lock);
	k = etcd_key_find(s, key);
	rev = k ? k->mod_revision : 0;
	pthread_mutex_unlock(&s->lock);
	return rev;
}

/*
 * @k left the prefix (lock held): a write-through must create it (compare
 * on mod_revision 0), its status key no longer stands (deleted from etcd),
 * and its state is freed by etcd_keys_reap() once that delete is written.
 */
static void leave(struct etcd_sync *s, struct key_state *k)
{
	k->mod_revision = 0;
	k->refused = 0;
	k->gone = true;
	etcd_report_clear_locked(s, k);
	if (!k->listed) {
		k->listed = true;
		k->gnext = s->gone;
		s->gone = k;
	}
}

/* A delete: the tree keeps the value (a tunable cannot vanish). */
void etcd_key_deleted(struct etcd_sync *s, const char *key, int64_t rev)
{
	struct key_state *k;

	pthread_mutex_lock(&s->lock);
	k = etcd_key_find(s, key);
	if (k)
		leave(s, k);
	pthread_mutex_unlock(&s->lock);
	etcd_say(s, "%s was deleted in etcd at revision %lld; the tree keeps its value", key,
		 (long long)rev);
}

size_t etcd_keys_absent(struct etcd_sync *s)
{
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_buckets; i++)
		for (struct key_state *k = s->buckets[i]; k; k = k->next)
			if (k->read != s->read && !k->gone) {
				leave(s, k);
				n++;
			}
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* Unlink @k from its hash chain and free it (lock held). */
static void key_free(struct etcd_sync *s, struct key_state *k)
{
	struct key_state **pp = &s->buckets[key_hash(k->key) & (s->n_buckets - 1)];

	while (*pp != k)
		pp = &(*pp)->next;
	*pp = k->next;
	s->n_keys--;
	set_unnamed(s, k, false);
	free(k->report);
	free(k);
}

void etcd_keys_reap(struct etcd_sync *s)
{
	struct key_state **pp;

	pthread_mutex_lock(&s->lock);
	for (pp = &s->gone; *pp;) {
		struct key_state *k = *pp;

		if (k->gone && (k->queued || k->sending || k->reported)) {
			pp = &k->gnext; /* its status key's delete is not written yet */
			continue;
		}
		*pp = k->gnext;
		k->listed = false;
		if (k->gone)
			key_free(s, k);
	}
	pthread_mutex_unlock(&s->lock);
}

static void count(struct etcd_sync *s, bool applied)
{
	pthread_mutex_lock(&s->lock);
	if (applied) {
		s->st.applied++;
		clock_gettime(CLOCK_REALTIME, &s->st.last_applied);
	} else {
		s->st.refused++;
	}
	pthread_mutex_unlock(&s->lock);
}

/* A key that names no entry: counted and logged; no status key can name it. */
static void refuse_key(struct etcd_sync *s, const struct etcd_kv *kv, int err)
{
	count(s, false);
	etcd_say(s, "refused a key of %zu bytes at revision %lld: %s (a key needs a path under %s "
		    "of at most %d bytes, with no NUL, empty, \".\" or \"..\" component)",
		 kv->key_len, (long long)kv->mod_revision, strerror(-err), s->prefix,
		 ETCD_KEY_MAX);
}

/*
 * A key past the cap on keys that name no entry (ETCD_UNNAMED_MAX): refused
 * and counted, with no state and no status key. One line says the cap was
 * reached; the keys past it are counted only (etcd.untracked).
 */
static void refuse_untracked(struct etcd_sync *s, const struct etcd_kv *kv)
{
	bool said;

	pthread_mutex_lock(&s->lock);
	s->st.refused++;
	s->st.untracked++;
	said = s->unnamed_said;
	s->unnamed_said = true;
	pthread_mutex_unlock(&s->lock);
	/* Its first word is not "refused": rcusysd rate-limits the lines by it,
	 * and this one must not drown among the refusals of the keys kept. */
	if (!said)
		etcd_say(s, "cap reached: state is kept for %zu keys that name no entry (the "
			    "most); %s (revision %lld) and the keys past them are refused and "
			    "counted only (etcd.untracked), with no status key",
			 s->unnamed_max, kv->key, (long long)kv->mod_revision);
}

void etcd_refuse_undecodable(struct etcd_sync *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		count(s, false);
	if (n)
		etcd_say(s, "refused %zu kv(s) of a range reply whose key could not be decoded", n);
}

bool etcd_tree_holds(struct etcd_sync *s, const char *path, const char *value, size_t len)
{
	char cur[4096];
	ssize_t n = sysctl_get(s->tree, path, cur, sizeof(cur));

	return n == (ssize_t)len + 1 && !memcmp(cur, value, len) && cur[len] == '\n';
}

/* The tree write of one value (1: a re-read found it there already). */
static int write_value(struct etcd_sync *s, const char *path, const char *value, size_t len,
		       bool resync)
{
	if (resync && etcd_tree_holds(s, path, value, len))
		return 1;
	/* The owner's write, origin SYSCTL_ORIGIN_MIRROR: owned entries take it,
	 * the state file lets the key go (etcd is its source of truth). */
	return sysctl_set_owner(s->tree, path, value, len, &s->caller);
}

/*
 * A refusal that says nothing of the value: the commit could not be made
 * durable (a full disk, an I/O error) or memory ran out. The same value is
 * applied again later (etcd_retry_due()), not dropped for good.
 */
bool etcd_passing(int err)
{
	return err == -EIO || err == -ENOSPC || err == -EDQUOT || err == -ENOMEM ||
	       err == -EAGAIN || err == -EBUSY || err == -EINTR;
}

/* Read the prefix again after the backoff, doubling while refusals keep passing. */
static void retry_later(struct etcd_sync *s)
{
	if (s->retry_at_ms)
		return;
	s->retry_delay_ms = s->retry_delay_ms ? s->retry_delay_ms * 2 : s->backoff_min;
	if (s->retry_delay_ms > s->backoff_max)
		s->retry_delay_ms = s->backoff_max;
	s->retry_at_ms = rcs_now_ms() + s->retry_delay_ms;
}

bool etcd_retry_due(struct etcd_sync *s)
{
	if (!s->retry_at_ms || rcs_now_ms() < s->retry_at_ms)
		return false;
	s->retry_at_ms = 0;
	return true;
}

/* A value refused before: worth applying again (its entry exists now, after
 * a reload; or its refusal was a passing one)? */
static bool worth_again(struct etcd_sync *s, const char *path, int refused)
{
	struct sysctl_entry *e;

	if (etcd_passing(refused))
		return true;
	if (refused != -ENOENT)
		return false;
	e = sysctl_lookup(s->tree, path);
	if (e)
		sysctl_entry_put(e);
	return e != NULL;
}

/* The entry at @path holds a value from etcd now (lock held). */
static int hold(struct etcd_sync *s, const char *path)
{
	char canon[ETCD_KEY_MAX + 1];

	return etcd_path_canonical(path, canon, sizeof(canon)) ? etcd_held_add(s, canon) : 0;
}

/*
 * What a value from etcd needs before its write. @resync: a whole-prefix
 * read, which applies differences only (the write skips a value the tree
 * holds); otherwise a revision already applied for the key is not applied
 * again. Return: true when there is nothing more to do (a replay, a key
 * that names no entry, a refusal already reported); false with p->err 0
 * (write the value) or a refusal (etcd_apply_finish() reports it).
 */
bool etcd_apply_prepare(struct etcd_sync *s, const struct etcd_kv *kv, bool resync,
			struct etcd_pending *p)
{
	int err = etcd_key_check(kv->key, kv->key_len, s->prefix, s->prefix_len);
	int64_t seen;
	int was;

	*p = (struct etcd_pending){ .kv = kv, .path = kv->key + s->prefix_len,
				    .len = kv->value_len };
	if (err) {
		refuse_key(s, kv, err);
		return true;
	}
	err = etcd_key_get(s, kv->key, p->path, &p->k);
	if (err == -ENOSPC)
		refuse_untracked(s, kv);
	else if (err)
		etcd_say(s, "out of memory for the state of %s", kv->key);
	if (err)
		return true;
	pthread_mutex_lock(&s->lock);
	seen = p->k->mod_revision;
	was = p->k->refused;
	pthread_mutex_unlock(&s->lock);
	/* A watch event at or below what was applied is a replay: skip it. A
	 * re-read compares values instead, so that it also restores a value
	 * changed in the tree behind etcd's back. A value refused because its
	 * entry did not exist is tried again (a reload may have declared it), and
	 * so is one whose commit failed (a full disk): the store's error, not the value's. */
	if (!resync && seen >= kv->mod_revision)
		return true;
	if (resync && seen == kv->mod_revision && was && !worth_again(s, p->path, was))
		return true; /* the same value, refused already: not counted or reported twice */
	p->err = kv->err;
	if (!p->err && p->len && kv->value[p->len - 1] == '\n')
		p->len--; /* "value\n" is how a file is written; the same value */
	/* A string handler stops at the first newline or NUL: a value holding one
	 * would be applied in part. Refuse it whole. */
	if (!p->err && (memchr(kv->value, '\n', p->len) || memchr(kv->value, '\0', p->len)))
		p->err = -EINVAL;
	return false;
}

/* Count, log and report what became of a value; remember its revision. */
void etcd_apply_finish(struct etcd_sync *s, struct etcd_pending *p, bool resync)
{
	const struct etcd_kv *kv = p->kv;
	struct key_state *k = p->k;
	int err = p->err, no_room = 0;
	/* Only the write tells -ENOENT; a value refused before it (a newline
	 * inside, undecodable) says nothing of the entry: look, or such values
	 * would take keys naming no entry past ETCD_UNNAMED_MAX. */
	bool unnamed = err == -ENOENT || (err < 0 && !names_entry(s, p->path));

	if (err < 0) {
		count(s, false);
		/* The key names the tunable; the value may be private and is not logged.
		 * A read of thousands of refused keys logs a few and a count. */
		if (!resync || s->read_refusals++ < READ_REFUSALS_LOGGED)
			etcd_say(s, "refused %s at revision %lld (%zu bytes): %s", kv->key,
				 (long long)kv->mod_revision, p->len,
				 kv->err ? "the value could not be decoded" : strerror(-err));
		etcd_report_refusal(s, k, kv->mod_revision, p->len, err);
		if (etcd_passing(err))
			retry_later(s);
	} else {
		if (!err)
			count(s, true);
		etcd_report_clear(s, k);
	}
	pthread_mutex_lock(&s->lock);
	k->mod_revision = kv->mod_revision;
	k->refused = err < 0 ? err : 0;
	set_unnamed(s, k, unnamed);
	/* Once in the held set, always: a re-read of 100 000 keys skips 100 000 searches. */
	if (err >= 0 && !k->held) {
		no_room = hold(s, p->path);
		k->held = !no_room;
	}
	pthread_mutex_unlock(&s->lock);
	if (no_room)
		etcd_say(s, "out of memory: a settings file read again may overwrite %s", p->path);
}

/* Write one value from etcd into the tree, alone (see etcd_apply_prepare()). */
void etcd_apply(struct etcd_sync *s, const struct etcd_kv *kv, bool resync)
{
	struct etcd_pending p;

	if (etcd_apply_prepare(s, kv, resync, &p))
		return;
	if (!p.err) {
		__atomic_store_n(&s->applying, kv->mod_revision, __ATOMIC_RELEASE);
		p.err = write_value(s, p.path, kv->value, p.len, resync);
		__atomic_store_n(&s->applying, 0, __ATOMIC_RELEASE);
	}
	etcd_apply_finish(s, &p, resync);
}
