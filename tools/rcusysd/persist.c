/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The store (see persist.h): opening and checking its file, loading it
 * (and migrating a text state file), applying what it keeps, the commit
 * hook that decides what each write keeps, and forgetting. The commits
 * themselves are in persist_commit.c.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rcustring/sysctl_commit.h"

#include "log.h"
#include "persist_int.h"
#include "rundir.h"
#include "sysctl_conf.h"
#include "trusted_file.h"

/* The longest value the store keeps: what the tree saves for a rollback too. */
#define VALUE_MAX (16u << 20)

static int fail(char *why, size_t why_size, int err, const char *fmt, const char *arg)
{
	snprintf(why, why_size, fmt, arg, strerror(-err));
	return err;
}

/*
 * The state file in the checked directory passes the one file check
 * (trusted_file.h), as every file rcusysd reads does; none yet is fine.
 */
static int check_file(int dirfd, const char *name, char *why, size_t why_size)
{
	struct stat st;
	int fd = trusted_file_openat(dirfd, name, &st, why, why_size);

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	close(fd);
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

static int open_store(struct sysctl_tree *tree, const char *path, bool check, struct persist **out,
		      char *why, size_t why_size)
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
	p->check = check;
	p->dirfd = p->lockfd = p->fd = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	persist_io_defaults(&p->io);
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
		if (!err && !check)
			err = take_lock(p, why, why_size);
	}
	free(copy);
	if (err) {
		persist_close(p);
		return err;
	}
	if (!check)
		remove_leftovers(p);
	*out = p;
	return 0;
}

int persist_open(struct sysctl_tree *tree, const char *path, struct persist **out, char *why,
		 size_t why_size)
{
	return open_store(tree, path, false, out, why, why_size);
}

int persist_open_check(struct sysctl_tree *tree, const char *path, struct persist **out,
		       char *why, size_t why_size)
{
	return open_store(tree, path, true, out, why, why_size);
}

/* The whole file at @fd (a regular file: checked again, a FIFO swapped in would hang us). */
static int read_all(int fd, char **out, size_t *out_len)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -EINVAL;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *t = realloc(text, cap = cap ? cap * 2 : 65536);

			if (!t) {
				free(text);
				return -ENOMEM;
			}
			text = t;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(text);
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*out = text;
	*out_len = len;
	return 0;
}

/*
 * @e's value as the store keeps it: the bytes a read gives, exactly (a
 * write of them stores the same value: "cat f > f"). A value longer than
 * VALUE_MAX is an error, so the write that made it is refused, not lost.
 */
static int read_value(struct sysctl_entry *e, char **out, size_t *out_len)
{
	return sysctl_entry_read_whole(e, 0, VALUE_MAX, out, out_len);
}

/* ---- a state file of the text format: migrated once ---- */

static int migrate_item(const struct sysctl_conf_item *it, void *arg)
{
	struct persist *p = arg;
	struct sysctl_entry *e;
	char *value;
	size_t len;
	int err;

	if (it->glob)
		return 0;
	err = sysctl_set_from(p->tree, it->key, *it->value ? it->value : "\n",
			      *it->value ? strlen(it->value) : 1, NULL, SYSCTL_ORIGIN_STATE);
	if (err) {
		rlog(LOG_WARNING, "%s:%u: %s: %s (not restored; not migrated)", p->path, it->line,
		     it->key, strerror(-err));
		return 0;
	}
	e = sysctl_lookup(p->tree, it->key);
	if (!e)
		return 0;
	err = read_value(e, &value, &len);
	if (!err) {
		const char *key = sysctl_entry_path(e);

		err = kept_set(&p->map, key, strlen(key), value, len, SYSCTL_ORIGIN_STATE, time(NULL));
		free(value);
	}
	if (err)
		rlog(LOG_WARNING, "%s:%u: %s: %s (restored, not kept)", p->path, it->line, it->key,
		     strerror(-err));
	sysctl_entry_put(e);
	return 0;
}

static void migrate_error(unsigned line, const char *message, void *arg)
{
	struct persist *p = arg;

	rlog(LOG_WARNING, "%s:%u: %s (not restored)", p->path, line, message);
}

/* The text file applied and kept beside as NAME.migrated-TIME; the journal takes its name. */
static int migrate(struct persist *p, const char *text, size_t len)
{
	char old[NAME_MAX + 48];
	int tries = 0, rc;

	if (p->check) { /* its lines are checked, the file left as it is */
		sysctl_conf_parse(text, len, migrate_item, migrate_error, p);
		return 0;
	}
	/* A second migration in the same second (a copied-in text file) gets ".N". */
	do {
		int n = snprintf(old, sizeof(old), "%s.migrated-%lld", p->name, (long long)time(NULL));

		if (tries)
			snprintf(old + n, sizeof(old) - (size_t)n, ".%d", tries);
		rc = linkat(p->dirfd, p->name, p->dirfd, old, 0);
	} while (rc != 0 && errno == EEXIST && ++tries < 100);
	if (rc != 0) {
		int err = -errno;

		rlog(LOG_ERR, "%s: cannot keep the text state file as %s: %s (not migrated)", p->path,
		     old, strerror(-err));
		return err;
	}
	sysctl_conf_parse(text, len, migrate_item, migrate_error, p);
	rlog(LOG_NOTICE, "%s: migrated %zu values of a text state file to the journal (the old file is %s)",
	     p->path, p->map.n, old);
	return 0;
}

/* ---- loading ---- */

/*
 * The journal's kept values into the tree; one that no longer applies is
 * kept no more. A value is written as it was read less the newline a read
 * adds, as the tree's own rollback does; "\n" alone stays (a zero-byte
 * write would change nothing, and "\n" sets an empty string).
 */
static void apply_kept(struct persist *p)
{
	for (size_t i = p->map.n; i-- > 0;) {
		struct kept *k = p->map.all[i];
		size_t len = k->len > 1 && k->value[k->len - 1] == '\n' ? k->len - 1 : k->len;
		int err = sysctl_set_from(p->tree, k->key, k->value, len, NULL, SYSCTL_ORIGIN_STATE);

		if (!err)
			continue;
		rlog(LOG_WARNING, "%s: %s: %s (not restored; kept no more)", p->path, k->key,
		     strerror(-err));
		kept_drop(&p->map, k->key, strlen(k->key));
	}
}

/* The file's records into p->map; a torn or corrupt tail is cut (logged). */
static int load(struct persist *p, const char *text, size_t len)
{
	size_t good = 0;
	int err;

	if (!len)
		return 0;
	if (!journal_is(text, len))
		return migrate(p, text, len);
	err = journal_parse(text + JOURNAL_MAGIC_LEN, len - JOURNAL_MAGIC_LEN, persist_apply_rec,
			    p, &good);
	if (err)
		return err;
	if (JOURNAL_MAGIC_LEN + good < len)
		rlog(LOG_WARNING, "%s: the last %zu bytes are a record cut by a crash or damaged: left out",
		     p->path, len - JOURNAL_MAGIC_LEN - good);
	apply_kept(p);
	return 0;
}

int persist_apply(struct persist *p)
{
	char *text = NULL, why[256];
	struct stat st;
	size_t len = 0;
	int err = 0, fd = trusted_file_openat(p->dirfd, p->name, &st, why, sizeof(why));

	if (fd < 0 && fd != -ENOENT) {
		rlog(LOG_ERR, "%s: refused: %s", p->path, why);
		return fd;
	}
	if (fd >= 0) {
		err = read_all(fd, &text, &len);
		close(fd);
	}
	if (!err)
		err = load(p, text, len);
	free(text);
	if (err) {
		kept_free(&p->map);
		p->broken = true; /* the next commit writes the file anew */
		return err;
	}
	p->epoch++;
	if (p->check)
		return 0;
	/* The epoch durable before any generation of it is handed out; the tail cut. */
	err = persist_compact(p, &p->map);
	if (err)
		rlog(LOG_ERR, "%s: cannot write the journal: %s (every write is refused until it can)",
		     p->path, strerror(-err));
	if (p->epoch < 1u << 23)
		sysctl_tree_set_generation_base(p->tree, p->epoch << SYSCTL_GENERATION_EPOCH_SHIFT);
	return 0;
}

uint64_t persist_epoch(const struct persist *p)
{
	return p ? p->epoch : 0;
}

/* ---- the commit hook ---- */

static void log_refused(struct persist *p, struct sysctl_entry *e, int err)
{
	rlog(LOG_ERR, "cannot persist %s to %s: %s (the write is refused)", sysctl_entry_path(e),
	     p->path, err == -EFBIG ? "the value is longer than the store keeps (16 MiB)" :
				      strerror(-err));
}

/* Does the store keep @key with exactly these bytes (durably: the map holds only that)? */
static bool holds_exactly(struct persist *p, const char *key, const char *value, size_t len)
{
	const struct kept *k;
	bool same;

	pthread_mutex_lock(&p->lock);
	k = kept_find(&p->map, key, strlen(key));
	same = k && k->len == len && !memcmp(k->value, value, len);
	pthread_mutex_unlock(&p->lock);
	return same;
}

/* The tree's commit hook: runs in the writer, under the entry's writer lock. */
/*
 * etcd's values, one revision committed at once by the mirror: each key of
 * it the store holds leaves it (etcd holds the key now), not the first
 * entry's alone, which is the one the hook is called with.
 */
static int drop_mirrored(struct persist *p, struct sysctl_entry *e, const struct sysctl_change *ch)
{
	struct sysctl_entry *const *entries = &e;
	size_t n = sysctl_change_entries(ch, &entries, NULL);

	for (size_t i = 0; i < n; i++) {
		const char *key = sysctl_entry_path(entries[i]);
		struct journal_rec r = { .op = JOURNAL_DROP, .origin = ch->origin,
					 .time = time(NULL), .key = key, .key_len = strlen(key) };
		int err;

		if (!persist_holds(p, key))
			continue; /* etcd's key, and we never held it */
		err = persist_commit(p, &r);
		if (err) {
			log_refused(p, entries[i], err);
			return err;
		}
	}
	return 0;
}

static int on_commit(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	struct persist *p = arg;
	const char *key = sysctl_entry_path(e);
	struct journal_rec r = { .op = JOURNAL_SET, .origin = ch->origin, .time = time(NULL),
				 .key = key, .key_len = strlen(key) };
	char *value = NULL;
	int err;

	switch (ch->origin) {
	case SYSCTL_ORIGIN_CLIENT:
	case SYSCTL_ORIGIN_STATE:
		break;
	case SYSCTL_ORIGIN_MIRROR:
		return drop_mirrored(p, e, ch);
	case SYSCTL_ORIGIN_PROGRAM:
		/* A default (a tunable declared again at reload) never pins itself: the
		 * kept value stays, and config's converge puts it back (persist_restore). */
		return 0;
	default:
		if (!persist_holds(p, key))
			return 0; /* a file's value: the files say it again at start */
		break;
	}
	if (r.op == JOURNAL_SET) {
		err = read_value(e, &value, &r.value_len);
		if (err) {
			log_refused(p, e, err);
			return err;
		}
		r.value = value;
		if (holds_exactly(p, key, value, r.value_len)) {
			free(value);
			return 0; /* durable already: a write of the same bytes, a restore */
		}
	}
	err = persist_commit(p, &r);
	free(value);
	if (err)
		log_refused(p, e, err);
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
	held = kept_find(&p->map, path, strlen(path)) != NULL;
	pthread_mutex_unlock(&p->lock);
	return held;
}

int persist_restore(struct persist *p, const char *path)
{
	struct sysctl_entry *e = sysctl_lookup(p->tree, path);
	char *value = NULL, *live = NULL;
	size_t len = 0, live_len = 0;
	struct kept *k;
	int err = 0;

	if (!e)
		return -ENOENT;
	pthread_mutex_lock(&p->lock);
	k = kept_find(&p->map, path, strlen(path));
	if (!k)
		err = -ENOENT;
	else if ((value = malloc(k->len ? k->len : 1)) != NULL)
		memcpy(value, k->value, len = k->len);
	else
		err = -ENOMEM;
	pthread_mutex_unlock(&p->lock);
	if (!err)
		err = read_value(e, &live, &live_len);
	if (!err && (live_len != len || memcmp(live, value, len))) {
		size_t n = len > 1 && value[len - 1] == '\n' ? len - 1 : len;

		err = sysctl_set_from(p->tree, path, value, n, NULL, SYSCTL_ORIGIN_STATE);
	}
	sysctl_entry_put(e);
	free(value);
	free(live);
	return err;
}

/* Every key dropped: the journal written anew with nothing kept. */
static int forget_all(struct persist *p)
{
	struct kept_map empty = { 0 };
	int err;

	pthread_mutex_lock(&p->lock);
	while (p->flushing)
		pthread_cond_wait(&p->cond, &p->lock);
	p->flushing = true;
	pthread_mutex_unlock(&p->lock);
	err = persist_compact(p, &empty);
	pthread_mutex_lock(&p->lock);
	if (!err)
		kept_free(&p->map);
	p->flushing = false;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return err;
}

int persist_forget(struct persist *p, const char *path)
{
	struct journal_rec r = { .op = JOURNAL_DROP, .origin = SYSCTL_ORIGIN_CLIENT };

	if (!p)
		return -ENOENT;
	if (!path)
		return forget_all(p);
	if (!persist_holds(p, path))
		return -ENOENT;
	r.time = time(NULL);
	r.key = path;
	r.key_len = strlen(path);
	return persist_commit(p, &r);
}

void persist_get_stats(struct persist *p, struct persist_stats *out)
{
	pthread_mutex_lock(&p->lock);
	*out = p->stats;
	out->kept = p->map.n;
	pthread_mutex_unlock(&p->lock);
}

void persist_set_io(struct persist *p, const struct persist_io *io)
{
	p->io = *io;
	persist_io_defaults(&p->io);
}

void persist_close(struct persist *p)
{
	if (!p)
		return;
	if (p->hooked)
		sysctl_tree_set_commit(p->tree, NULL, NULL);
	/* A refused batch that could not be cut off must not come back at the next start. */
	if (p->broken && p->fd >= 0 && persist_compact(p, &p->map))
		rlog(LOG_ERR, "%s: the journal may hold a refused write that could not be cut off",
		     p->path);
	kept_free(&p->map);
	if (p->open) {
		journal_buf_free(&p->open->buf);
		free(p->open);
	}
	if (p->fd >= 0)
		close(p->fd);
	if (p->dirfd >= 0)
		close(p->dirfd);
	if (p->lockfd >= 0)
		close(p->lockfd);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->path);
	free(p->name);
	free(p);
}
