/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "persist.h"
#include "sysctl_conf.h"

#define VALUE_MAX (65536 + 2)

struct watched {
	struct sysctl_entry *entry;
	struct sysctl_callback *cb;
};

struct persist {
	struct sysctl_tree *tree;
	char *path, *name, *tmp_name;
	int dirfd;
	pthread_mutex_t lock; /* keys, nkeys and the file */
	char **keys;          /* persisted paths, dotted as sysctl_entry_path() */
	size_t nkeys;
	struct watched *watched;
	size_t nwatched;
	char *value;          /* VALUE_MAX bytes, used under lock */
};

static __thread bool applying_files;

void persist_set_applying_files(bool on)
{
	applying_files = on;
}

static bool (*not_local)(void);

void persist_set_not_local(bool (*fn)(void))
{
	not_local = fn;
}

/* Under p->lock. */
static void drop_key(struct persist *p, const char *key)
{
	for (size_t i = 0; i < p->nkeys; i++)
		if (!strcmp(p->keys[i], key)) {
			free(p->keys[i]);
			p->keys[i] = p->keys[--p->nkeys];
			return;
		}
}

int persist_open(struct sysctl_tree *tree, const char *path, struct persist **out, char *why,
		 size_t why_size)
{
	struct persist *p = calloc(1, sizeof(*p));
	char *copy = strdup(path), *base = strdup(path), *dir;

	if (!p || !copy || !base) {
		free(p), free(copy), free(base);
		return snprintf(why, why_size, "out of memory"), -ENOMEM;
	}
	dir = dirname(copy);
	p->tree = tree;
	p->path = strdup(path);
	p->name = strdup(basename(base));
	p->value = malloc(VALUE_MAX);
	p->dirfd = -1;
	pthread_mutex_init(&p->lock, NULL);
	if (!p->path || !p->name || !p->value || asprintf(&p->tmp_name, ".%s.tmp", p->name) < 0) {
		p->tmp_name = NULL;
		free(copy), free(base);
		persist_close(p);
		return snprintf(why, why_size, "out of memory"), -ENOMEM;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		int err = -errno;

		snprintf(why, why_size, "cannot create directory %s: %s", dir, strerror(errno));
		free(copy), free(base);
		persist_close(p);
		return err;
	}
	p->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0) {
		int err = -errno;

		snprintf(why, why_size, "cannot open directory %s: %s", dir, strerror(errno));
		free(copy), free(base);
		persist_close(p);
		return err;
	}
	free(copy), free(base);
	/* A daemon killed between writing and renaming leaves its temporary file. */
	unlinkat(p->dirfd, p->tmp_name, 0);
	*out = p;
	return 0;
}

/* Under p->lock. */
static int add_key(struct persist *p, const char *key)
{
	char **keys;

	for (size_t i = 0; i < p->nkeys; i++)
		if (!strcmp(p->keys[i], key))
			return 0;
	keys = realloc(p->keys, (p->nkeys + 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	p->keys = keys;
	p->keys[p->nkeys] = strdup(key);
	if (!p->keys[p->nkeys])
		return -ENOMEM;
	p->nkeys++;
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Under p->lock: the whole file again, from the values the tree holds now
 * (a later write's value is as good as this one's: it is what a restart
 * should come back with).
 */
static int rewrite(struct persist *p)
{
	int fd, err = 0;

	fd = openat(p->dirfd, p->tmp_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < p->nkeys && !err; i++) {
		ssize_t n = sysctl_get(p->tree, p->keys[i], p->value, VALUE_MAX);

		if (n < 0)
			continue; /* gone (a tunable removed at reload): not kept */
		while (n > 0 && p->value[n - 1] == '\n')
			n--;
		/* sysctl.d has no way to write a newline inside a value. */
		if (memchr(p->value, '\n', (size_t)n))
			continue;
		err = write_all(fd, p->keys[i], strlen(p->keys[i]));
		if (!err)
			err = write_all(fd, " = ", 3);
		if (!err)
			err = write_all(fd, p->value, (size_t)n);
		if (!err)
			err = write_all(fd, "\n", 1);
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(p->dirfd, p->tmp_name, p->dirfd, p->name) < 0)
		err = -errno;
	/* The rename itself is durable once the directory is. */
	if (!err && fsync(p->dirfd) < 0)
		err = -errno;
	if (err)
		unlinkat(p->dirfd, p->tmp_name, 0);
	return err;
}

static void on_change(struct sysctl_entry *e, uint64_t changes, void *arg)
{
	struct persist *p = arg;
	int err = 0;

	(void)changes;
	pthread_mutex_lock(&p->lock);
	if (not_local && not_local())
		drop_key(p, sysctl_entry_path(e)); /* its source of truth is elsewhere now */
	else if (!applying_files)
		err = add_key(p, sysctl_entry_path(e));
	if (!err)
		err = rewrite(p);
	pthread_mutex_unlock(&p->lock);
	if (err)
		rlog(LOG_ERR, "cannot persist %s to %s: %s", sysctl_entry_path(e), p->path,
		     strerror(-err));
}


static int apply_item(const struct sysctl_conf_item *it, void *arg)
{
	struct persist *p = arg;
	struct sysctl_entry *e;
	int err;

	if (it->glob)
		return 0;
	err = sysctl_set(p->tree, it->key, it->value, strlen(it->value), NULL);
	if (err) {
		rlog(LOG_WARNING, "%s:%u: %s: %s (not restored)", p->path, it->line, it->key,
		     strerror(-err));
		return 0;
	}
	e = sysctl_lookup(p->tree, it->key);
	if (e) {
		pthread_mutex_lock(&p->lock);
		add_key(p, sysctl_entry_path(e));
		pthread_mutex_unlock(&p->lock);
		sysctl_entry_put(e);
	}
	return 0;
}

static void apply_error(unsigned line, const char *message, void *arg)
{
	struct persist *p = arg;

	rlog(LOG_WARNING, "%s:%u: %s", p->path, line, message);
}

int persist_apply(struct persist *p)
{
	int fd = openat(p->dirfd, p->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char *text = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *t = realloc(text, cap = cap ? cap * 2 : 65536);

			if (!t) {
				err = -ENOMEM;
				break;
			}
			text = t;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!err)
		sysctl_conf_parse(text, len, apply_item, apply_error, p);
	free(text);
	return err;
}

static int watch_one(struct sysctl_entry *e, void *arg)
{
	struct persist *p = arg;
	struct watched *w;
	int err;

	for (size_t i = 0; i < p->nwatched; i++)
		if (p->watched[i].entry == e)
			return 0;
	w = realloc(p->watched, (p->nwatched + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	p->watched = w;
	w = &p->watched[p->nwatched];
	err = sysctl_entry_on_change(e, on_change, p, &w->cb);
	if (err)
		return err;
	sysctl_entry_get(e);
	w->entry = e;
	p->nwatched++;
	return 0;
}

int persist_watch(struct persist *p)
{
	size_t kept = 0;

	/* Entries unregistered (a reload removed their tunable) are let go. */
	for (size_t i = 0; i < p->nwatched; i++) {
		if (sysctl_entry_live(p->watched[i].entry)) {
			p->watched[kept++] = p->watched[i];
			continue;
		}
		sysctl_callback_remove(p->watched[i].cb);
		sysctl_entry_put(p->watched[i].entry);
	}
	p->nwatched = kept;
	return sysctl_walk(p->tree, "", watch_one, p);
}

bool persist_holds(struct persist *p, const char *path)
{
	bool held = false;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->nkeys && !held; i++)
		held = !strcmp(p->keys[i], path);
	pthread_mutex_unlock(&p->lock);
	return held;
}

int persist_forget(struct persist *p, const char *path)
{
	size_t before;
	int err;

	if (!p)
		return -ENOENT;
	pthread_mutex_lock(&p->lock);
	before = p->nkeys;
	if (path)
		drop_key(p, path);
	else
		while (p->nkeys)
			drop_key(p, p->keys[0]);
	err = path && p->nkeys == before ? -ENOENT : rewrite(p);
	pthread_mutex_unlock(&p->lock);
	return err;
}

void persist_close(struct persist *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nwatched; i++) {
		sysctl_callback_remove(p->watched[i].cb);
		sysctl_entry_put(p->watched[i].entry);
	}
	for (size_t i = 0; i < p->nkeys; i++)
		free(p->keys[i]);
	free(p->keys);
	free(p->watched);
	if (p->dirfd >= 0)
		close(p->dirfd);
	pthread_mutex_destroy(&p->lock);
	free(p->path);
	free(p->name);
	free(p->tmp_name);
	free(p->value);
	free(p);
}
