/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state file (see persist.h): a cache of the kept keys and their
 * values, written whole through a temporary file at each commit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "persist.h"
#include "rundir.h"
#include "sysctl_conf.h"

/* The longest value a state file line holds: the line must parse again. */
#define VALUE_MAX (SYSCTL_CONF_LINE_MAX - 1024)

struct kept {
	char *key;   /* dotted, as sysctl_entry_path() */
	char *value; /* without the trailing newline */
	size_t len;
};

struct persist {
	struct sysctl_tree *tree;
	char *path, *name;
	int dirfd, lockfd;
	bool hooked;
	pthread_mutex_t lock; /* kept, nkept and the file */
	struct kept *kept;
	size_t nkept;
};

static int fail(char *why, size_t why_size, int err, const char *fmt, const char *arg)
{
	snprintf(why, why_size, fmt, arg, strerror(-err));
	return err;
}

/* The state file's name in the checked directory: a regular file of ours, or none yet. */
static int check_file(int dirfd, const char *name, char *why, size_t why_size)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : fail(why, why_size, -errno, "cannot inspect it%s: %s", "");
	if (S_ISLNK(st.st_mode))
		return snprintf(why, why_size, "a symbolic link (refused)"), -ELOOP;
	if (!S_ISREG(st.st_mode))
		return snprintf(why, why_size, "not a regular file (refused)"), -EINVAL;
	if (st.st_uid != geteuid()) {
		snprintf(why, why_size, "owned by uid %u, not by us (uid %u)", (unsigned)st.st_uid,
			 (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, why_size, "writable by group or others (mode %04o)",
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* ".NAME.lock", held (flock) while we run: two daemons never share a state file. */
static int take_lock(struct persist *p, char *why, size_t why_size)
{
	char lock[NAME_MAX + 16];
	struct stat st;

	snprintf(lock, sizeof(lock), ".%s.lock", p->name);
	p->lockfd = openat(p->dirfd, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			   0600);
	if (p->lockfd < 0)
		return fail(why, why_size, -errno, "cannot open its lock file%s: %s", "");
	if (fstat(p->lockfd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return snprintf(why, why_size, "its lock file %s is not a regular file of ours", lock),
		       -EPERM;
	if (flock(p->lockfd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			return snprintf(why, why_size, "in use by another rcusysd (it holds %s)", lock),
			       -EBUSY;
		return fail(why, why_size, -errno, "cannot lock it%s: %s", "");
	}
	return 0;
}

/* Temporary files a killed daemon left: ".NAME.tmp-XXXXXXXX". */
static void remove_leftovers(struct persist *p)
{
	int fd = dup(p->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char prefix[NAME_MAX + 16];
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(prefix, sizeof(prefix), ".%s.tmp-", p->name);
	while ((de = readdir(d)) != NULL)
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			unlinkat(p->dirfd, de->d_name, 0);
	closedir(d);
}

int persist_open(struct sysctl_tree *tree, const char *path, struct persist **out, char *why,
		 size_t why_size)
{
	struct persist *p = calloc(1, sizeof(*p));
	char *copy = strdup(path), *base = strdup(path), canon[PATH_MAX], cwd[PATH_MAX], dirwhy[512];
	const char *dir;
	int err;

	if (!p || !copy || !base || !(p->path = strdup(path)) || !(p->name = strdup(basename(base)))) {
		if (p)
			free(p->path);
		free(p), free(copy), free(base);
		return snprintf(why, why_size, "out of memory"), -ENOMEM;
	}
	free(base);
	p->tree = tree;
	p->dirfd = p->lockfd = -1;
	pthread_mutex_init(&p->lock, NULL);
	dir = dirname(copy);
	/* "state.conf" alone: the current directory, checked by its real name. */
	if (!strcmp(dir, ".") && getcwd(canon, sizeof(canon)))
		dir = strcpy(cwd, canon);
	/* The run directory's rules: whoever can change it chooses what we apply as root. */
	p->dirfd = rundir_open(dir, canon, sizeof(canon), dirwhy, sizeof(dirwhy));
	if (p->dirfd < 0) {
		err = p->dirfd;
		snprintf(why, why_size, "%s state directory %s: %s",
			 err == -EPERM || err == -ELOOP || err == -ENOTDIR || err == -EAGAIN ? "unsafe" :
											     "cannot use",
			 dir, dirwhy);
	} else {
		err = check_file(p->dirfd, p->name, why, why_size);
		if (!err)
			err = take_lock(p, why, why_size);
	}
	free(copy);
	if (err) {
		persist_close(p);
		return err;
	}
	remove_leftovers(p);
	*out = p;
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

/* A new temporary file: a random name, O_EXCL, so nothing planted is opened. */
static int open_temp(struct persist *p, char *name, size_t size)
{
	for (int tries = 0; tries < 100; tries++) {
		unsigned int r;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return -EIO;
		snprintf(name, size, ".%s.tmp-%08x", p->name, r);
		fd = openat(p->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

/*
 * Under p->lock: the whole file from the kept values, written to a
 * temporary file, fsync'ed, renamed over the old one, the directory
 * fsync'ed. Whatever moment we die, the file is the old one or the new one.
 */
static int rewrite(struct persist *p)
{
	char tmp[NAME_MAX + 32];
	int fd, err = 0;

	/* A tunable removed at reload: its value has nowhere to go back to. */
	for (size_t i = 0; i < p->nkept;) {
		struct sysctl_entry *e = sysctl_lookup(p->tree, p->kept[i].key);

		if (e || errno != ENOENT) {
			sysctl_entry_put(e);
			i++;
			continue;
		}
		rlog(LOG_NOTICE, "%s: %s left out: the entry is gone", p->path, p->kept[i].key);
		free(p->kept[i].key);
		free(p->kept[i].value);
		p->kept[i] = p->kept[--p->nkept];
	}
	fd = open_temp(p, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	for (size_t i = 0; i < p->nkept && !err; i++) {
		err = write_all(fd, p->kept[i].key, strlen(p->kept[i].key));
		if (!err)
			err = write_all(fd, " = ", 3);
		if (!err)
			err = write_all(fd, p->kept[i].value, p->kept[i].len);
		if (!err)
			err = write_all(fd, "\n", 1);
	}
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(p->dirfd, tmp, p->dirfd, p->name) < 0)
		err = -errno;
	if (!err && fsync(p->dirfd) < 0)
		err = -errno;
	if (err)
		unlinkat(p->dirfd, tmp, 0);
	return err;
}

/*
 * @e's value as the file keeps it: read whole, without the trailing
 * newline. A value the file cannot hold (a newline inside, longer than a
 * line) is an error, so the write that made it is refused, not forgotten.
 */
static int read_value(struct sysctl_entry *e, char **out, size_t *out_len)
{
	char *buf;
	size_t len;
	int err = sysctl_entry_read_whole(e, 0, VALUE_MAX + 1, &buf, &len);

	if (err)
		return err;
	while (len > 0 && buf[len - 1] == '\n')
		len--;
	if (memchr(buf, '\n', len) || memchr(buf, '\0', len))
		err = -EINVAL;
	else if (len > VALUE_MAX)
		err = -EFBIG;
	if (err)
		free(buf);
	else
		*out = buf, *out_len = len;
	return err;
}

/* Under p->lock. */
static struct kept *find(struct persist *p, const char *key)
{
	for (size_t i = 0; i < p->nkept; i++)
		if (!strcmp(p->kept[i].key, key))
			return &p->kept[i];
	return NULL;
}

/* Under p->lock: @key kept with @value (taken over); the file is not written. */
static int keep(struct persist *p, const char *key, char *value, size_t len, char **old)
{
	struct kept *k = find(p, key), *v;

	*old = NULL;
	if (k) {
		*old = k->value;
		k->value = value;
		k->len = len;
		return 0;
	}
	v = realloc(p->kept, (p->nkept + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->kept = v;
	v[p->nkept].key = strdup(key);
	if (!v[p->nkept].key)
		return -ENOMEM;
	v[p->nkept].value = value;
	v[p->nkept].len = len;
	p->nkept++;
	return 0;
}

/* Under p->lock: a client's (or the file's own) value, kept and on disk before the write is acknowledged. */
static int commit_keep(struct persist *p, struct sysctl_entry *e, bool add)
{
	const char *key = sysctl_entry_path(e);
	struct kept *k = find(p, key);
	size_t len, old_len = k ? k->len : 0;
	char *value, *old;
	bool added = !k;
	int err;

	if (!k && !add)
		return 0; /* a file's or the program's value: the files say it again at start */
	err = read_value(e, &value, &len);
	if (err)
		return err;
	err = keep(p, key, value, len, &old);
	if (err) {
		free(value);
		return err;
	}
	err = rewrite(p);
	if (!err) {
		free(old);
		return 0;
	}
	/* Not on disk: the cache goes back to what the file holds. */
	k = find(p, key);
	if (added) {
		free(k->key);
		free(k->value);
		*k = p->kept[--p->nkept];
	} else {
		free(k->value);
		k->value = old;
		k->len = old_len;
	}
	return err;
}

/* Under p->lock: the key's source of truth is elsewhere now (etcd). */
static int commit_drop(struct persist *p, struct sysctl_entry *e)
{
	struct kept *k = find(p, sysctl_entry_path(e)), saved;
	int err;

	if (!k)
		return 0;
	saved = *k;
	*k = p->kept[--p->nkept];
	err = rewrite(p);
	if (err) {
		p->kept[p->nkept++] = saved; /* the array only shrank: there is room */
		return err;
	}
	free(saved.key);
	free(saved.value);
	return 0;
}

/* The tree's commit hook: runs in the writer, under the entry's writer lock. */
static int on_commit(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	struct persist *p = arg;
	int err;

	pthread_mutex_lock(&p->lock);
	switch (ch->origin) {
	case SYSCTL_ORIGIN_CLIENT:
	case SYSCTL_ORIGIN_STATE:
		err = commit_keep(p, e, true);
		break;
	case SYSCTL_ORIGIN_MIRROR:
		err = commit_drop(p, e);
		break;
	default:
		err = commit_keep(p, e, false);
		break;
	}
	pthread_mutex_unlock(&p->lock);
	if (err)
		rlog(LOG_ERR, "cannot persist %s to %s: %s (the write is refused)", sysctl_entry_path(e),
		     p->path,
		     err == -EINVAL ? "the value holds a newline, which a state file cannot hold" :
		     err == -EFBIG ? "the value is longer than a state file line" : strerror(-err));
	return err;
}

static int apply_item(const struct sysctl_conf_item *it, void *arg)
{
	struct persist *p = arg;
	struct sysctl_entry *e;
	char *value, *old;
	size_t len;
	int err;

	if (it->glob)
		return 0;
	err = sysctl_set_from(p->tree, it->key, it->value, strlen(it->value), NULL,
			      SYSCTL_ORIGIN_STATE);
	if (err) {
		rlog(LOG_WARNING, "%s:%u: %s: %s (not restored; left out of the file from now on)",
		     p->path, it->line, it->key, strerror(-err));
		return 0;
	}
	e = sysctl_lookup(p->tree, it->key);
	if (!e)
		return 0;
	pthread_mutex_lock(&p->lock);
	err = read_value(e, &value, &len);
	if (!err && (err = keep(p, sysctl_entry_path(e), value, len, &old)) != 0)
		free(value);
	if (!err)
		free(old);
	pthread_mutex_unlock(&p->lock);
	if (err)
		rlog(LOG_WARNING, "%s:%u: %s: %s (restored, not kept)", p->path, it->line, it->key,
		     strerror(-err));
	sysctl_entry_put(e);
	return 0;
}

static void apply_error(unsigned line, const char *message, void *arg)
{
	struct persist *p = arg;

	rlog(LOG_WARNING, "%s:%u: %s (not restored)", p->path, line, message);
}

int persist_apply(struct persist *p)
{
	int fd = openat(p->dirfd, p->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	char *text = NULL;
	size_t len = 0, cap = 0;
	struct stat st;
	int err = 0;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* Checked at open, but a FIFO swapped in since would hang the read. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
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

int persist_watch(struct persist *p)
{
	if (!p->hooked)
		sysctl_tree_set_commit(p->tree, on_commit, p);
	p->hooked = true;
	return 0;
}

bool persist_holds(struct persist *p, const char *path)
{
	bool held;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	held = find(p, path) != NULL;
	pthread_mutex_unlock(&p->lock);
	return held;
}

int persist_forget(struct persist *p, const char *path)
{
	struct kept *gone, *k;
	size_t ngone = 0;
	int err;

	if (!p)
		return -ENOENT;
	pthread_mutex_lock(&p->lock);
	k = path ? find(p, path) : NULL;
	if (path && !k) {
		pthread_mutex_unlock(&p->lock);
		return -ENOENT;
	}
	/* Set aside, not freed: a rewrite that fails puts them back. */
	gone = malloc((path ? 1 : p->nkept ? p->nkept : 1) * sizeof(*gone));
	if (!gone) {
		pthread_mutex_unlock(&p->lock);
		return -ENOMEM;
	}
	if (path) {
		gone[ngone++] = *k;
		*k = p->kept[--p->nkept];
	} else {
		while (p->nkept)
			gone[ngone++] = p->kept[--p->nkept];
	}
	err = rewrite(p);
	for (size_t i = 0; i < ngone; i++) {
		if (err) {
			p->kept[p->nkept++] = gone[i]; /* the array only shrank: there is room */
			continue;
		}
		free(gone[i].key);
		free(gone[i].value);
	}
	pthread_mutex_unlock(&p->lock);
	free(gone);
	return err;
}

void persist_close(struct persist *p)
{
	if (!p)
		return;
	if (p->hooked)
		sysctl_tree_set_commit(p->tree, NULL, NULL);
	for (size_t i = 0; i < p->nkept; i++) {
		free(p->kept[i].key);
		free(p->kept[i].value);
	}
	free(p->kept);
	if (p->dirfd >= 0)
		close(p->dirfd);
	if (p->lockfd >= 0)
		close(p->lockfd);
	pthread_mutex_destroy(&p->lock);
	free(p->path);
	free(p->name);
	free(p);
}
