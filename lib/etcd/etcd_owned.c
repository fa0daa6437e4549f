/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Entries etcd owns (etcd_sync_own_table): registered with their own
 * handlers, so that reads are what they would be without etcd (lock-free
 * for proc_rcu_string), and with a write hook, so that a local write never
 * changes the entry: it is refused (read-only mirror) or put to etcd
 * (write-through) outside the entry's locks, and the entry changes when
 * the watch delivers the put, one change per accepted write.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/path_form.h"
#include "etcd_sync_int.h"

struct owned_table {
	struct owned_table *next;
	struct etcd_sync *s;
	const struct ctl_table *rows; /* the caller's, as registered */
	char **keys;                  /* the etcd key of each row */
	size_t count;
};

void etcd_owned_free(struct etcd_sync *s)
{
	while (s->owned) {
		struct owned_table *o = s->owned;

		s->owned = o->next;
		for (size_t i = 0; i < o->count; i++)
			free(o->keys[i]);
		free(o->keys);
		free(o);
	}
}

/* The put of a write-through, with the compare that makes it safe. */
static int put_through(struct etcd_sync *s, struct sysctl_entry *e, const char *key,
		       const char *buf, size_t len, const uint64_t *expected)
{
	int64_t expect, rev;
	int err, done = 0;

	/* The key's revision before the entry's counter: a value applied in
	 * between moves the counter, so SETIF fails rather than compare with
	 * a revision the writer never saw. */
	expect = etcd_key_revision(s, key);
	if (expected && sysctl_entry_changes(e) != *expected)
		return -ESTALE;
	pthread_mutex_lock(&s->wlock);
	err = etcd_put_if(&s->wconn, key, buf, len, expect, &done, &rev);
	if (err) {
		char where[200];

		etcd_conn_name(&s->wconn, where, sizeof(where));
		etcd_say(s, "write-through of %s: %s: %s", key, where, s->wconn.err);
		etcd_conn_next(&s->wconn);
	}
	pthread_mutex_unlock(&s->wlock);
	if (!err && !done)
		err = -EAGAIN; /* etcd's key moved past what this host applied */
	return err;
}

static int write_hook(void *arg, struct sysctl_entry *e, const struct sysctl_caller *who,
		      const char *buf, size_t len, const uint64_t *expected)
{
	struct owned_table *o = arg;
	const struct ctl_table *t = sysctl_entry_table(e);
	int err;

	(void)who; /* the tree checked the permission */
	if (!t || t < o->rows || t >= o->rows + o->count)
		return -ENOENT;
	if (!o->s->write_through)
		return -EROFS; /* etcd owns the entry: change it there */
	if (len && buf[len - 1] == '\n')
		len--;
	if (memchr(buf, '\n', len) || memchr(buf, '\0', len))
		return -EINVAL; /* etcd would hold a value no host can apply whole */
	err = sysctl_entry_check(e, buf, len);
	if (!err)
		err = put_through(o->s, e, o->keys[t - o->rows], buf, len, expected);
	return err;
}

/*
 * Only rows whose data the tree's handler table describes (a library
 * handler or a declared wrapper of one) can have a value checked.
 */
static int check_rows(struct etcd_sync *s, const char *dir, const struct ctl_table *table,
		      size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (!sysctl_tree_handler_info(s->tree, table[i].proc_handler)) {
			etcd_say(s, "%s/%s: its handler is the program's own: etcd cannot own the "
				    "entry (a write-through value could not be checked)",
				 dir, table[i].procname ? table[i].procname : "?");
			return -EINVAL;
		}
	return 0;
}

int etcd_sync_own_table(struct etcd_sync *s, const char *dir, struct ctl_table *table,
			size_t count, struct sysctl_table_header **out)
{
	struct owned_table *o = NULL;
	int err = check_rows(s, dir, table, count);
	char *slashed = NULL;
	size_t i;

	if (err)
		return err;
	/* Keys use the tree's '/' form; the directory may be given in either. */
	slashed = strdup(dir);
	if (!slashed)
		goto nomem;
	rcs_path_to_slash(slashed);
	o = calloc(1, sizeof(*o));
	if (!o || !(o->keys = calloc(count ? count : 1, sizeof(*o->keys))))
		goto nomem;
	o->s = s;
	o->rows = table;
	o->count = count;
	for (i = 0; i < count; i++) {
		if (asprintf(&o->keys[i], "%s%s%s%s", s->prefix, slashed, *slashed ? "/" : "",
			     table[i].procname) < 0) {
			o->keys[i] = NULL;
			goto nomem;
		}
	}
	free(slashed);
	slashed = NULL;
	err = sysctl_register_table_hooked(s->tree, dir, table, count, write_hook, o, out);
	if (err)
		goto fail;
	pthread_mutex_lock(&s->lock);
	o->next = s->owned;
	s->owned = o;
	pthread_mutex_unlock(&s->lock);
	return 0;
nomem:
	err = -ENOMEM;
fail:
	free(slashed);
	if (o) {
		for (i = 0; o->keys && i < count; i++)
			free(o->keys[i]);
		free(o->keys);
		free(o);
	}
	return err;
}
