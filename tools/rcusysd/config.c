/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One home for rcusysd's configuration layers (config.h): the files are
 * read into one merged set, and one function (converge) brings the tree
 * to it, at start, at reload and after a reset alike.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "policy.h"
#include "sysctl_conf.h"
#include "trusted_file.h"
#include "tunables.h"
#include "values.h"

#define VALUE_MAX (65536 + 2)

struct tfile {
	char *path;
	struct tunables *declared;
};

/*
 * Locking. A start or a reload runs in the main thread, one at a time; a
 * reset in a control-socket thread, at any time. A reset holds the lock
 * throughout. A reload holds it only for one entry at a time and to swap
 * the new set in: it reads the files and registers the tunables
 * without it (the tunables files are the main thread's alone), so a reset
 * during a reload of 100 000 entries waits for one entry, not the reload.
 */
struct config {
	struct sysctl_tree *tree;
	const struct config_files *files;
	/* The main thread's (start, reload, free): */
	struct tfile *tfiles;
	size_t ntfiles;
	int failures; /* of the current start or reload (a reset's are only logged) */
	config_stop_fn *stop; /* the current reload's (NULL: none) */
	void *stop_arg;
	bool stopped; /* the stop said yes: the reload ends at the next step */
	pthread_mutex_t lock; /* everything below */
	struct values values; /* each entry's value before any file, and the last one applied */
	struct sysctl_conf_set *set; /* replaced by a reload under the lock, read by resets */
	struct persist *state;
	bool (*etcd_holds)(const char *key);
	char *value; /* VALUE_MAX bytes */
	bool announce; /* log each value applied (reload and reset, not start) */
	bool resetting; /* a reset converging: failures are not the reload's */
	bool reset_all; /* converging after --reset --all */
	struct log_limit *reset_log; /* any writer of an entry may reset it in a loop (NULL: no limit) */
};

/*
 * @path's text through the one file check (trusted_file.h); NULL for a
 * file refused or unreadable, named in the log with the reason, skipped.
 * A masked file (a link to /dev/null) reads as empty.
 */
static char *read_file(struct config *c, const char *path, size_t *len, bool reload)
{
	char why[512], *text = NULL;
	int err = trusted_file_read(path, TRUSTED_FILE_MAX, &text, len, why, sizeof(why));

	if (err >= 0)
		return text;
	/* FILE first, as every other problem names its file (rcusysd --check-config). */
	rlog(LOG_ERR, "%s%s: %s: %s (skipped)", reload ? "reload: " : "", path,
	     trusted_file_verdict(err), why);
	c->failures++;
	return NULL;
}

/* ---- layer 1: tunables and the defaults ---- */

/* Every -t file, then every tunables.d file (merged by name). */
static ssize_t tunables_paths(const struct config_files *f, char ***out)
{
	char **dir_paths = NULL, **paths;
	ssize_t ndir = sysctl_conf_list_dirs(f->tunables_dirs, &dir_paths);
	size_t n = 0;

	if (ndir < 0)
		return ndir;
	paths = calloc((size_t)f->ntunables + (size_t)ndir + 1, sizeof(*paths));
	for (int i = 0; paths && i < f->ntunables; i++)
		paths[n++] = strdup(f->tunables[i]);
	for (ssize_t i = 0; paths && i < ndir; i++)
		paths[n++] = strdup(dir_paths[i]);
	sysctl_conf_free_paths(dir_paths, (size_t)ndir);
	for (size_t i = 0; paths && i < n; i++)
		if (!paths[i]) {
			sysctl_conf_free_paths(paths, n);
			paths = NULL;
		}
	if (!paths)
		return -ENOMEM;
	*out = paths;
	return (ssize_t)n;
}

struct reload_ctx {
	struct config *c;
	const char *path;
};

/* A declaration the reload refused: the reload's end line says it had errors. */
static void reload_report(void *arg, unsigned line, const char *msg)
{
	struct reload_ctx *r = arg;

	rlog(LOG_ERR, "%s:%u: %s", r->path, line, msg);
	r->c->failures++;
}

/* The reload's stop, asked inside a file's parse (@file, at @line) or between entries. */
static bool ask_stop(struct config *c, const char *file, unsigned line)
{
	if (!c->stopped && c->stop && c->stop(c->stop_arg, file, line))
		c->stopped = true;
	return c->stopped;
}

static bool reload_stop(void *arg, unsigned line)
{
	struct reload_ctx *r = arg;

	return ask_stop(r->c, r->path, line);
}

/*
 * One file's reload. The files not reloaded yet (and those gone) lend
 * their live declarations: one moved to this file keeps its tunable.
 */
static int reload_file(struct config *c, struct tunables *old, const char *text, size_t len,
		       struct tunables **out, const char *path, char *err, size_t size)
{
	struct tunables **others = calloc(c->ntfiles ? c->ntfiles : 1, sizeof(*others));
	size_t n = 0;
	int ret;

	for (size_t j = 0; others && j < c->ntfiles; j++)
		if (c->tfiles[j].path)
			others[n++] = c->tfiles[j].declared;
	ret = tunables_reload(c->tree, old, others, n, text, len, out, reload_report, reload_stop,
			      &(struct reload_ctx){ c, path }, err, size);
	free(others);
	return ret;
}

/* What @path declared so far (NULL: nothing), taken from c->tfiles. */
static struct tunables *take_declared(struct config *c, const char *path)
{
	struct tunables *old = NULL;

	for (size_t j = 0; j < c->ntfiles; j++)
		if (c->tfiles[j].path && !strcmp(c->tfiles[j].path, path)) {
			old = c->tfiles[j].declared;
			free(c->tfiles[j].path);
			c->tfiles[j].path = NULL;
		}
	return old;
}

/*
 * One tunables file into @t (its path set, its old declarations in
 * t->declared). At start (@reload false) a bad file fails the start; at
 * reload it keeps its tunables, as it does once the reload is stopped
 * (the files after it are not read).
 */
static int load_file(struct config *c, struct tfile *t, bool reload)
{
	char err[512] = "";
	size_t len;
	char *text = c->stopped ? NULL : read_file(c, t->path, &len, reload);
	int ret;

	/* Skipped, logged; at reload its tunables are kept (a file gone keeps none). */
	if (!text)
		return 0;
	if (reload)
		ret = reload_file(c, t->declared, text, len, &t->declared, t->path, err, sizeof(err));
	else
		ret = tunables_load(c->tree, text, len, &t->declared, err, sizeof(err));
	free(text);
	if (ret == -EINTR && c->stopped)
		return 0; /* nothing changed */
	if (ret) {
		rlog(LOG_ERR, "%s%s:%s%s", reload ? "reload: " : "", t->path,
		     *err ? err : strerror(-ret), reload ? " (its tunables are kept)" : "");
		c->failures++;
	}
	return ret;
}

static int load_tunables(struct config *c, bool reload)
{
	char **paths;
	ssize_t n = tunables_paths(c->files, &paths);
	struct tfile *next;
	size_t nnext;
	int ret = 0;

	/* Room for the files gone as well: a stopped reload keeps them. */
	if (n < 0 || !(next = calloc((size_t)n + c->ntfiles + 1, sizeof(*next)))) {
		rlog(LOG_ERR, "tunables: out of memory");
		if (n >= 0)
			sysctl_conf_free_paths(paths, (size_t)n);
		return -ENOMEM;
	}
	for (ssize_t i = 0; i < n; i++) {
		next[i].path = paths[i];
		next[i].declared = take_declared(c, paths[i]);
		ret = load_file(c, &next[i], reload);
		if (ret && !reload && !c->files->check) {
			while (++i < n) /* kept for config_free() */
				next[i] = (struct tfile){ paths[i], take_declared(c, paths[i]) };
			break; /* a check goes on, to list every file's problem */
		}
	}
	/* Files gone from the directories: their tunables go too (unless stopped). */
	nnext = (size_t)n;
	for (size_t j = 0; j < c->ntfiles; j++)
		if (c->tfiles[j].path && c->stopped) {
			next[nnext++] = c->tfiles[j];
		} else if (c->tfiles[j].path) {
			tunables_free(c->tfiles[j].declared);
			free(c->tfiles[j].path);
		}
	free(c->tfiles);
	free(paths);
	c->tfiles = next;
	c->ntfiles = nnext;
	return reload ? 0 : ret;
}

/* The live value of @path without its trailing newline, in c->value; NULL if unreadable. */
static const char *live_value(struct config *c, const char *path)
{
	ssize_t n = sysctl_get(c->tree, path, c->value, VALUE_MAX);

	if (n < 0)
		return NULL;
	while (n > 0 && (c->value[n - 1] == '\n' || c->value[n - 1] == ' '))
		n--;
	c->value[n] = '\0';
	return c->value;
}

/*
 * Every entry, in a walk: the walk's callbacks run on entries it holds
 * references to, outside its read-side section, so they may read and
 * write. No list of path copies is kept meanwhile: at 100 000 tunables
 * one was 3.2 MB, whose freed chunks stayed in the heap below the records
 * made during the walk (RSS that never went back).
 */
static int walk_all(struct config *c, int (*fn)(struct sysctl_entry *e, void *arg), void *arg)
{
	int err = sysctl_walk(c->tree, "", fn, arg);

	if (err < 0)
		rlog(LOG_ERR, "cannot list the tree: %s", strerror(-err));
	return err;
}

/* One pass of capture or converge: which entries, the lock per entry, its stop. */
struct step {
	struct config *c;
	const char *only;           /* converge_entry(): that entry alone (a reset), */
	struct sysctl_entry *entry; /* which is this one */
	bool lock;                  /* take c->lock per entry (a reset holds it throughout) */
	bool stoppable;             /* ask c->stop every STOP_EVERY entries (a reload) */
	unsigned long n; /* entries so far */
};

/* Often enough to answer a stop within a millisecond, rarely enough to cost nothing. */
#define STOP_EVERY 256

/* A stop was asked for (checked every STOP_EVERY calls). */
static bool step_stopped(struct step *w)
{
	return w->stoppable && ++w->n % STOP_EVERY == 0 && ask_stop(w->c, NULL, 0);
}

/* Remembers the value of an entry not seen before: what it had before any file. */
static int capture_one(struct sysctl_entry *e, void *arg)
{
	struct step *w = arg;
	struct config *c = w->c;
	const char *path = sysctl_entry_path(e), *value;

	if (step_stopped(w))
		return 1;
	pthread_mutex_lock(&c->lock);
	if (!values_default(&c->values, path) && (value = live_value(c, path)))
		values_capture(&c->values, path, value);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* 0, or 1 when stopped. */
static int capture_defaults(struct config *c, bool stoppable)
{
	struct step w = { .c = c, .stoppable = stoppable };

	return walk_all(c, capture_one, &w) == 1;
}

/*
 * Layer 1 for @path: the value it had before any file, captured once its
 * tunable was registered, so a declared default= (applied at registration;
 * tunables.c then drops the text) or the value a subsystem registered with.
 */
static const char *default_of(struct config *c, const char *path)
{
	return values_default(&c->values, path);
}

/* ---- layer 2: the merged sysctl.d set ---- */

struct set_ctx {
	struct config *c;
	const char *file;
};

static void set_error(unsigned line, const char *message, void *arg)
{
	struct set_ctx *s = arg;

	rlog(LOG_ERR, "%s:%u: %s", s->file, line, message);
	s->c->failures++;
}

static bool set_stop(void *arg, const char *file, unsigned line)
{
	return ask_stop(arg, file, line);
}

/*
 * The sysctl.d directories (merged by name), then the -c files. NULL when
 * out of memory (logged) or stopped (c->stopped): the parse stops every
 * few hundred lines to ask, so a reload's stop waits for no file.
 */
static struct sysctl_conf_set *read_set(struct config *c)
{
	struct sysctl_conf_set *set = sysctl_conf_set_new();
	char **paths = NULL;
	ssize_t n = set ? sysctl_conf_list_dirs(c->files->sysctl_dirs, &paths) : -ENOMEM;
	int err = n < 0 ? (int)n : 0;

	if (set)
		sysctl_conf_set_stop(set, set_stop, c);
	for (ssize_t i = 0; !err && i < n + c->files->nconfigs; i++) {
		struct set_ctx s = { c, i < n ? paths[i] : c->files->configs[i - n] };
		size_t len;
		char *text = read_file(c, s.file, &len, false);

		if (!text)
			continue;
		if (i < n)
			rlog(LOG_INFO, "reading %s", s.file);
		err = sysctl_conf_set_add(set, s.file, text, len, set_error, &s);
		err = err < 0 ? err : 0;
		free(text);
	}
	if (n >= 0)
		sysctl_conf_free_paths(paths, (size_t)n);
	if (err) {
		if (err != -EINTR)
			rlog(LOG_ERR, "settings: out of memory");
		sysctl_conf_set_free(set);
		return NULL;
	}
	sysctl_conf_set_stop(set, NULL, NULL);
	return set;
}

/* ---- bringing the tree to its layers ---- */

/* Whether a line may be logged: a reset's lines share one rate limit. */
static bool may_log(struct config *c)
{
	return !c->resetting || !c->reset_log ||
	       log_limit_at(c->reset_log, "reset lines", LOG_NOTICE, log_now_ns());
}

static void report_set_error(struct config *c, const struct sysctl_conf_item *it, const char *path,
			     int err)
{
	struct sysctl_entry *e = sysctl_lookup(c->tree, path);
	char reason[160], name[4096];

	/* Refused by the write check (policy.h): its rule, "read-only entry (mode 0444)". */
	if (e && (err == -EACCES || err == -EPERM) &&
	    policy_decide(NULL, e, SYSCTL_ORIGIN_FILE, NULL, reason, sizeof(reason)))
		;
	else if (!e || sysctl_entry_explain(e, err, reason, sizeof(reason)) < 0)
		snprintf(reason, sizeof(reason), "%s", err == -ENOENT ? "no such entry" : strerror(-err));
	if (e)
		sysctl_entry_put(e);
	sysctl_conf_dotted(path, name, sizeof(name));
	if (!may_log(c))
		; /* counted in the limit's suppressed line */
	else if (it)
		rlog(LOG_ERR, "%s:%u: setting %s: %s", it->file, it->line, name, reason);
	else
		rlog(LOG_ERR, "restoring the default of %s: %s", name, reason);
	if (!c->resetting)
		c->failures++;
}

/*
 * Held by layer 3: a runtime write kept in the state file, etcd's value,
 * or (with no state file, or before it is read) a value someone changed
 * since this module last set it. @forced: a reset, which drops that last kind.
 */
static bool held(struct config *c, const char *path, const char *key, bool forced)
{
	const char *applied = values_applied(&c->values, path), *live;

	if (persist_holds(c->state, path)) {
		persist_restore(c->state, path); /* re-declared at reload: its runtime value again */
		return true;
	}
	if (c->etcd_holds && c->etcd_holds(key))
		return true;
	if (forced || !applied)
		return false;
	live = live_value(c, path);
	return live && strcmp(live, applied);
}

/* Writes @value to @path unless it is the live value already. */
static void converge_one(struct config *c, const char *path, const char *key,
			 const struct sysctl_conf_item *it, const char *value)
{
	const char *live = live_value(c, path);
	int err;

	if (live && !strcmp(live, value))
		return;
	/* SYSCTL_ORIGIN_FILE: a file's value or a default is no runtime write (persist.h). */
	/* "key =" sets the empty value, as systemd-sysctl's "\n" does (a zero-byte write changes nothing). */
	err = sysctl_set_from(c->tree, path, *value ? value : "\n", *value ? strlen(value) : 1, NULL,
			      SYSCTL_ORIGIN_FILE);
	if (err && !(it && it->ignore_failure))
		report_set_error(c, it, key, err);
	else if (!err && c->announce && !may_log(c))
		; /* counted in the limit's suppressed line */
	else if (!err && c->announce && it)
		rlog(LOG_INFO, "%s:%u: %s = %s", it->file, it->line, path, value);
	else if (!err && c->announce)
		rlog(LOG_INFO, "%s = %s (its default: no file names it)", path, value);
	/*
	 * Kept as it reads back ("1 2" reads "1\t2"), to tell a later runtime
	 * write from it. Last: this remakes the record, which a default @value
	 * points into.
	 */
	if (!err && (live = live_value(c, path)))
		values_set_applied(&c->values, path, live);
}

/* An explicit assignment: reported when it names no entry, else applied unless held. */
static void converge_explicit(struct config *c, const struct sysctl_conf_item *it, bool forced)
{
	struct sysctl_entry *e = sysctl_lookup(c->tree, it->key);
	char path[4096];

	if (!e) {
		if (!it->ignore_failure)
			report_set_error(c, it, it->key, -ENOENT);
		return;
	}
	snprintf(path, sizeof(path), "%s", sysctl_entry_path(e));
	sysctl_entry_put(e);
	if (!held(c, path, it->key, forced))
		converge_one(c, path, it->key, it, it->value);
}

/* Globs and defaults for one entry (converge; c->lock held). */
static int converge_entry(struct sysctl_entry *e, struct step *w)
{
	struct config *c = w->c;
	const char *path = sysctl_entry_path(e);
	const struct sysctl_conf_item *it;
	char key[4096];
	const char *value;
	bool writable = sysctl_entry_mode(e) & 0222;

	if (w->only && strcmp(w->only, path))
		return 0;
	snprintf(key, sizeof(key), "%s", path);
	sysctl_conf_normalize_key(key);
	it = sysctl_conf_set_lookup(c->set, key);
	if (it && !it->glob && w->only) {
		converge_explicit(c, it, true);
		return 0;
	}
	/* A glob or a default writes only what anyone could write. */
	if ((it && !it->glob) || !writable || held(c, path, key, w->only != NULL || c->reset_all))
		return 0;
	value = it ? it->value : default_of(c, path);
	if (value)
		converge_one(c, path, key, it, value);
	return 0;
}

static int converge_walked(struct sysctl_entry *e, void *arg)
{
	struct step *w = arg;
	int ret;

	if (step_stopped(w))
		return 1;
	if (w->lock)
		pthread_mutex_lock(&w->c->lock);
	ret = converge_entry(e, w);
	if (w->lock)
		pthread_mutex_unlock(&w->c->lock);
	return ret;
}

/*
 * Every entry of @w->only (NULL: all) gets the value of the highest layer
 * naming it: explicit assignments first, in the set's order (so messages
 * come in file order), then globs and defaults for writable entries that
 * no explicit key names. Returns 0, or 1 when stopped.
 */
static int converge(struct step *w)
{
	struct config *c = w->c;

	/* One entry: the reset's, not a walk of 100 000 to find it. */
	if (w->only)
		return sysctl_entry_is_dir(w->entry) ? 0 : converge_walked(w->entry, w);
	/* The set is replaced by the reload alone: a reload reads it unlocked. */
	for (size_t i = 0; i < sysctl_conf_set_count(c->set); i++) {
		if (sysctl_conf_set_item(c->set, i)->glob)
			continue;
		if (step_stopped(w))
			return 1;
		if (w->lock)
			pthread_mutex_lock(&c->lock);
		converge_explicit(c, sysctl_conf_set_item(c->set, i), c->reset_all);
		if (w->lock)
			pthread_mutex_unlock(&c->lock);
	}
	return walk_all(c, converge_walked, w) == 1;
}

int config_start(struct sysctl_tree *tree, const struct config_files *files, struct config **out)
{
	struct config *c = calloc(1, sizeof(*c));
	int err;

	if (!c || !(c->value = malloc(VALUE_MAX))) {
		free(c);
		rlog(LOG_ERR, "out of memory");
		return -ENOMEM;
	}
	c->tree = tree;
	c->files = files;
	pthread_mutex_init(&c->lock, NULL);
	err = load_tunables(c, false);
	if (err && !files->check) {
		config_free(c);
		return err;
	}
	capture_defaults(c, false);
	c->set = read_set(c);
	converge(&(struct step){ .c = c, .lock = true });
	c->announce = true; /* from now on (reloads, resets) */
	*out = c;
	return 0;
}

void config_set_layers(struct config *c, struct persist *state, bool (*etcd_holds)(const char *key))
{
	pthread_mutex_lock(&c->lock);
	c->state = state;
	c->etcd_holds = etcd_holds;
	pthread_mutex_unlock(&c->lock);
}

int config_reload(struct config *c, config_stop_fn *stop, void *stop_arg)
{
	struct sysctl_conf_set *set, *old;
	struct step w = { .c = c, .lock = true, .stoppable = true };

	c->failures = 0;
	c->stop = stop;
	c->stop_arg = stop_arg;
	c->stopped = false;
	load_tunables(c, true);
	if (ask_stop(c, NULL, 0) || capture_defaults(c, true))
		goto stopped;
	set = read_set(c);
	if (c->stopped)
		goto stopped;
	if (set) {
		pthread_mutex_lock(&c->lock);
		old = c->set;
		c->set = set;
		pthread_mutex_unlock(&c->lock);
		sysctl_conf_set_free(old);
	}
	/* Entries the reload declared are the state file's too: its commit hook is the tree's. */
	if (ask_stop(c, NULL, 0) || converge(&w))
		goto stopped;
	c->stop = NULL;
	rlog(c->failures ? LOG_WARNING : LOG_INFO, "reloaded%s", c->failures ?
	     " with errors: a line refused or a file skipped, each named above" : "");
	return 0;
stopped:
	c->stop = NULL;
	rlog(LOG_NOTICE, "reload stopped part way: stopping");
	return -EINTR;
}

int config_reset(struct config *c, const char *path, char *why, size_t size)
{
	struct sysctl_entry *e = path ? sysctl_lookup(c->tree, path) : NULL;
	char dotted_path[4096];
	int err;

	if (path && !e) {
		snprintf(why, size, "no such entry");
		return -ENOENT;
	}
	if (e)
		snprintf(dotted_path, sizeof(dotted_path), "%s", sysctl_entry_path(e));
	pthread_mutex_lock(&c->lock);
	err = c->state ? persist_forget(c->state, path ? dotted_path : NULL) : 0;
	if (err == -ENOENT)
		err = 0; /* nothing written at run time: the files' value is live already */
	if (err) {
		snprintf(why, size, "cannot rewrite the state file: %s", strerror(-err));
	} else {
		c->resetting = true;
		c->reset_all = !path;
		converge(&(struct step){ .c = c, .only = path ? dotted_path : NULL, .entry = e });
		c->reset_all = false;
		if (may_log(c))
			rlog(LOG_NOTICE, "reset %s to the configuration files' values",
			     path ? dotted_path : "all entries");
		c->resetting = false;
	}
	pthread_mutex_unlock(&c->lock);
	if (e)
		sysctl_entry_put(e);
	return err;
}

void config_free(struct config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ntfiles; i++) {
		tunables_free(c->tfiles[i].declared);
		free(c->tfiles[i].path);
	}
	values_free(&c->values);
	free(c->tfiles);
	sysctl_conf_set_free(c->set);
	pthread_mutex_destroy(&c->lock);
	free(c->value);
	free(c);
}

void config_set_log_limit(struct config *c, struct log_limit *l)
{
	pthread_mutex_lock(&c->lock);
	c->reset_log = l;
	pthread_mutex_unlock(&c->lock);
}

int config_failures(const struct config *c)
{
	return c->failures;
}
