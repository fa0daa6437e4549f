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

#include <rcustring/sysctl_commit.h>

#include "log.h"
#include "persist_int.h"
#include "rundir.h"
#include "sysctl_conf.h"
#include "trusted_file.h"

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
	log_limit_init(&p->own_log);
	p->log = &p->own_log;
	p->file_max = PERSIST_FILE_MAX;
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

/* A state file longer than p->file_max: logged, not read. */
static int too_big(struct persist *p, unsigned long long size, bool more)
{
	rlog(LOG_ERR, "%s: %s%llu bytes, over the limit of a state file (EFBIG: %zu bytes); not "
	     "read, the file is left as it is", p->path, more ? "more than " : "", size, p->file_max);
	return -EFBIG;
}

/*
 * The whole file at @fd (a regular file: checked again, a FIFO swapped in
 * would hang us), at most p->file_max bytes: the memory a start takes
 * is bounded by what the store itself may write.
 */
static int read_all(struct persist *p, int fd, char **out, size_t *out_len)
{
	char *text = NULL;
	size_t len = 0, cap = 0;
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -EINVAL;
	if ((unsigned long long)st.st_size > p->file_max)
		return too_big(p, (unsigned long long)st.st_size, false);
	for (;;) {
		ssize_t n;

		if (len > p->file_max) { /* it grew since the fstat */
			free(text);
			return too_big(p, p->file_max, true);
		}
		if (len == cap) {
			/* One byte past the limit tells a file of exactly the limit from a longer one. */
			size_t want = cap ? cap * 2 : 65536;
			char *t = realloc(text, cap = want > p->file_max + 1 ? p->file_max + 1 : want);

			if (!t) {
				free(text);
				return -ENOMEM;
			}
			text = t;
		}
		n = p->io.read(p->io.arg, fd, text + len, cap - len);
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
		char why[192];

		if (!err)
			continue;
		persist_explain(p, k->key, err, why, sizeof(why));
		rlog(LOG_WARNING, "%s: %s: %s (not restored; kept no more)", p->path, k->key, why);
		kept_drop(&p->map, k->key, k->key_len);
	}
}

/*
 * The file's records into p->map. A torn tail (journal_tail()) is cut
 * (logged); damage before it is an error, so a start never drops what
 * the file keeps after it.
 */
static int load(struct persist *p, const char *text, size_t len)
{
	size_t good = 0;
	int err;

	if (!len)
		return 0;
	if (!journal_is(text, len))
		return persist_migrate(p, text, len);
	err = journal_parse(text + JOURNAL_MAGIC_LEN, len - JOURNAL_MAGIC_LEN, persist_apply_rec,
			    p, &good);
	if (!err)
		err = journal_tail(text + JOURNAL_MAGIC_LEN, len - JOURNAL_MAGIC_LEN, good,
				   JOURNAL_MAGIC_LEN);
	if (err == -EBADMSG)
		rlog(LOG_ERR, "%s: the record at byte %zu is damaged and is not a torn tail (%zu bytes "
		     "follow it)", p->path, JOURNAL_MAGIC_LEN + good, len - JOURNAL_MAGIC_LEN - good);
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
		p->unread = fd;
		return fd;
	}
	if (fd >= 0) {
		err = read_all(p, fd, &text, &len);
		close(fd);
	}
	if (!err)
		err = load(p, text, len);
	free(text);
	if (err) {
		/* Nothing is written: the file stays for the operator, and no commit replaces it. */
		kept_free(&p->map);
		p->unread = err;
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

static const char *origin_word(enum sysctl_origin origin)
{
	static const char *const words[] = { "client", "program", "settings file", "state file",
					     "mirror" };

	return (unsigned)origin < sizeof(words) / sizeof(words[0]) ? words[origin] : "other origin";
}

/*
 * A write refused because it cannot be persisted: logged under the rate
 * limit of its source (a client by uid, another origin as itself) and its
 * errno, so a full disk under a loop of writes costs the log a few lines a
 * window, and one user's loop never hides another's. @what names the
 * write ("pub.val", "a commit of 2 entries (pub.val, ...)"); @value_err:
 * the value could not be read (its length), not the store written.
 */
static void log_refused(struct persist *p, const struct sysctl_change *ch, const char *what,
			int err, bool value_err)
{
	char key[LOG_LIMIT_KEY], num[16], limit[96];
	const char *name = persist_errname(err, num, sizeof(num)), *why = strerror(-err);

	if (ch->origin == SYSCTL_ORIGIN_CLIENT && ch->who)
		snprintf(key, sizeof(key), "unpersisted writes (%s) of uid %u", name,
			 (unsigned)ch->who->uid);
	else
		snprintf(key, sizeof(key), "unpersisted writes (%s) of the %s", name,
			 origin_word(ch->origin));
	if (err == -EFBIG && value_err) {
		why = "the value is longer than the store keeps (16 MiB)";
	} else if (err == -EFBIG) {
		snprintf(limit, sizeof(limit), "the state file would pass its limit (%zu bytes) even "
			 "compacted", p->file_max);
		why = limit;
	}
	rlog_limited(p->log, key, LOG_ERR, "cannot persist %s to %s: %s: %s (the write is refused)",
		     what, p->path, name, why);
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

/*
 * What the store writes for @e, changed by the write @ch: a record
 * in @r (1; @r->value, when set, is *@value, the caller's to free),
 * nothing (0: kept as it is), or a negative errno (logged).
 */
static int entry_record(struct persist *p, struct sysctl_entry *e, const struct sysctl_change *ch,
			struct journal_rec *r, char **value)
{
	const char *key = sysctl_entry_path(e);
	int err;

	*r = (struct journal_rec){ .op = JOURNAL_SET, .origin = ch->origin, .time = time(NULL),
				   .key = key, .key_len = strlen(key) };
	*value = NULL;
	switch (ch->origin) {
	case SYSCTL_ORIGIN_CLIENT:
	case SYSCTL_ORIGIN_STATE:
		break;
	case SYSCTL_ORIGIN_MIRROR:
		if (!persist_holds(p, key))
			return 0; /* etcd's key, and we never held it */
		r->op = JOURNAL_DROP;
		return 1;
	case SYSCTL_ORIGIN_PROGRAM:
		/* A default (a tunable declared again at reload) never pins itself: the
		 * kept value stays, and config's converge puts it back (persist_restore). */
		return 0;
	default:
		if (!persist_holds(p, key))
			return 0; /* a file's value: the files say it again at start */
		break;
	}
	err = persist_read_value(e, value, &r->value_len);
	if (err) {
		log_refused(p, ch, key, err, true);
		return err;
	}
	r->value = *value;
	if (holds_exactly(p, key, *value, r->value_len)) {
		free(*value);
		*value = NULL;
		return 0; /* durable already: a write of the same bytes, a restore */
	}
	return 1;
}

/*
 * A sysctl_commit() of @n entries: what each keeps, decided as for a
 * single write, in ONE record (one checksum), so a crash or a failed
 * fsync keeps all of it or none. One item left is a plain record.
 */
static int commit_entries(struct persist *p, struct sysctl_entry *const *all, size_t n,
			  const struct sysctl_change *ch)
{
	struct journal_rec items[SYSCTL_COMMIT_MAX], r = { .op = JOURNAL_COMMIT, .origin = ch->origin,
							   .time = time(NULL) };
	char *values[SYSCTL_COMMIT_MAX], what[160];
	struct journal_buf b = { 0 };
	bool too_big = false;
	size_t m = 0, i;
	int err = 0;

	for (i = 0; i < n && i < SYSCTL_COMMIT_MAX && err >= 0; i++) {
		err = entry_record(p, all[i], ch, &items[m], &values[m]);
		m += err > 0;
	}
	if (err >= 0 && m > 1) {
		err = journal_commit_payload(&b, items, m);
		too_big = err == -EFBIG;
		r.value = b.data;
		r.value_len = b.len;
	}
	if (err >= 0 && m)
		err = persist_commit(p, m > 1 ? &r : &items[0]);
	if (err < 0) {
		snprintf(what, sizeof(what), "a commit of %zu entries (%s, ...)", n,
			 sysctl_entry_path(all[0]));
		if (too_big)
			rlog_limited(p->log, "unpersisted commits over the record limit", LOG_ERR,
				     "cannot persist %s to %s: EFBIG: its record would be longer than "
				     "the store's limit of one record (64 MiB) (the commit is refused "
				     "whole)", what, p->path);
		else
			log_refused(p, ch, what, err, false);
	}
	journal_buf_free(&b);
	while (m--)
		free(values[m]);
	return err < 0 ? err : 0;
}

/*
 * The tree's commit hook: runs in the writer, under the writer lock of
 * every entry of the change, once for a sysctl_commit() of several.
 */
static int on_commit(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	struct persist *p = arg;
	struct sysctl_entry *const *all = &e;
	size_t n = sysctl_change_entries(ch, &all, NULL);
	struct journal_rec r;
	char *value;
	int err;

	if (n > 1)
		return commit_entries(p, all, n, ch);
	err = entry_record(p, e, ch, &r, &value);
	if (err <= 0)
		return err;
	err = persist_commit(p, &r);
	free(value);
	if (err)
		log_refused(p, ch, sysctl_entry_path(e), err, false);
	return err;
}

int persist_watch(struct persist *p)
{
	if (p->unread)
		return p->unread; /* its commits would write a journal of nothing over the file */
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
		err = persist_read_value(e, &live, &live_len);
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

void persist_set_log_limit(struct persist *p, struct log_limit *l)
{
	if (p)
		p->log = l ? l : &p->own_log;
}

void persist_set_file_max(struct persist *p, size_t max)
{
	p->file_max = max;
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
	/* Its own limit's "N similar messages suppressed" lines: a shared one's owner flushes. */
	log_limit_flush(&p->own_log, log_now_ns(), true);
	pthread_mutex_destroy(&p->own_log.lock);
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
