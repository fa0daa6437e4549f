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
#include "sysctl_conf.h"
#include "tunables.h"

#define VALUE_MAX (65536 + 2)

struct tfile {
	char *path;
	struct tunables *declared;
};

/*
 * What this module knows of each entry, by path (dotted, as
 * sysctl_entry_path()), in an open-addressing hash table, so a tree of
 * 100 000 tunables costs n lookups, not n^2 string compares (a list here
 * made rcusysd's start 27 times slower at 20 000). One record per path, one
 * allocation: the path, the default, and the value this module last left
 * in the entry only where it is not the default (after the start it is
 * the default everywhere), with a byte of flags for a header: memory per
 * tunable counts at 100 000 of them, and a pointer and an offset took a
 * 48-byte chunk where 32 bytes now hold "app.d000.t000000" and its default.
 */
enum {
	REC_DEF = 1,         /* a default follows the path */
	REC_APPLIED = 2,     /* this module set the entry (else: never here) */
	REC_APPLIED_OWN = 4, /* what it set differs from the default: it follows */
};

struct record {
	unsigned char flags;
	char text[]; /* path '\0', [default '\0'], [applied '\0'] */
};

struct values {
	struct record **v;
	size_t n, cap; /* cap: 0 or a power of two, at most 7/8 full */
};

struct config {
	struct sysctl_tree *tree;
	const struct config_files *files;
	pthread_mutex_t lock; /* everything below; a reset and a reload take turns */
	struct tfile *tfiles;
	size_t ntfiles;
	struct values values; /* each entry's value before any file, and the last one applied */
	struct sysctl_conf_set *set;
	struct persist *state;
	bool (*etcd_holds)(const char *key);
	char *value; /* VALUE_MAX bytes */
	int failures; /* of the current start, reload or reset */
	bool announce; /* log each value applied (reload and reset, not start) */
	bool reset_all; /* converging after --reset --all */
};

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)size + 1)) != NULL) {
		*len = fread(buf, 1, (size_t)size, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
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

static void reload_report(void *arg, unsigned line, const char *msg)
{
	rlog(LOG_ERR, "%s:%u: %s", (const char *)arg, line, msg);
}

/* At start (@reload false) a bad file fails the start; at reload it keeps its tunables. */
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
	ret = tunables_reload(c->tree, old, others, n, text, len, out, reload_report, (void *)path,
			      err, size);
	free(others);
	return ret;
}

static int load_tunables(struct config *c, bool reload)
{
	char **paths;
	ssize_t n = tunables_paths(c->files, &paths);
	struct tfile *next;
	int ret = 0;

	if (n < 0 || !(next = calloc((size_t)n + 1, sizeof(*next)))) {
		rlog(LOG_ERR, "tunables: out of memory");
		if (n >= 0)
			sysctl_conf_free_paths(paths, (size_t)n);
		return -ENOMEM;
	}
	for (ssize_t i = 0; i < n; i++) {
		struct tunables *old = NULL;
		char err[512] = "";
		size_t len;
		char *text = read_file(paths[i], &len);

		/* The same file as before takes over its declarations. */
		for (size_t j = 0; j < c->ntfiles; j++)
			if (c->tfiles[j].path && !strcmp(c->tfiles[j].path, paths[i])) {
				old = c->tfiles[j].declared;
				free(c->tfiles[j].path);
				c->tfiles[j].path = NULL;
			}
		next[i].path = paths[i];
		next[i].declared = old;
		if (!text) {
			rlog(LOG_ERR, "%scannot read %s: %s%s", reload ? "reload: " : "", paths[i],
			     strerror(errno), reload ? " (its tunables are kept)" : "");
			c->failures++;
			ret = ret ? ret : -EIO;
			continue;
		}
		if (reload)
			ret = reload_file(c, old, text, len, &next[i].declared, paths[i], err,
					  sizeof(err));
		else
			ret = tunables_load(c->tree, text, len, &next[i].declared, err, sizeof(err));
		free(text);
		if (ret) {
			rlog(LOG_ERR, "%s%s:%s%s", reload ? "reload: " : "", paths[i],
			     *err ? err : strerror(-ret), reload ? " (its tunables are kept)" : "");
			c->failures++;
		}
		if (ret && !reload)
			break;
	}
	/* Files gone from the directories: their tunables go too. */
	for (size_t j = 0; j < c->ntfiles; j++)
		if (c->tfiles[j].path) {
			tunables_free(c->tfiles[j].declared);
			free(c->tfiles[j].path);
		}
	free(c->tfiles);
	free(paths);
	c->tfiles = next;
	c->ntfiles = (size_t)n;
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

static size_t hash_path(const char *path)
{
	size_t h = 2166136261u; /* FNV-1a */

	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 16777619u;
	return h;
}

/* The slot of @path, or the empty slot where it would go (vs->cap > 0). */
static struct record **values_slot(const struct values *vs, const char *path)
{
	size_t i = hash_path(path) & (vs->cap - 1);

	while (vs->v[i] && strcmp(vs->v[i]->text, path))
		i = (i + 1) & (vs->cap - 1);
	return &vs->v[i];
}

static struct record *values_find(const struct values *vs, const char *path)
{
	return vs->cap ? *values_slot(vs, path) : NULL;
}

static const char *record_default(const struct record *r)
{
	return r->flags & REC_DEF ? r->text + strlen(r->text) + 1 : NULL;
}

/* What this module last left in the entry, as it reads back; NULL if never set here. */
static const char *record_applied(const struct record *r)
{
	const char *after = r->text + strlen(r->text) + 1;

	if (!(r->flags & REC_APPLIED))
		return NULL;
	if (!(r->flags & REC_APPLIED_OWN))
		return after; /* the default */
	return r->flags & REC_DEF ? after + strlen(after) + 1 : after;
}

/* The value @path had before any file; NULL if none was captured. */
static const char *values_default(const struct values *vs, const char *path)
{
	struct record *r = values_find(vs, path);

	return r ? record_default(r) : NULL;
}

/* What this module last left in @path; NULL if it never set it. */
static const char *values_applied(const struct values *vs, const char *path)
{
	struct record *r = values_find(vs, path);

	return r ? record_applied(r) : NULL;
}

static bool values_grow(struct values *vs)
{
	size_t cap = vs->cap ? vs->cap * 2 : 64;
	struct values bigger = { calloc(cap, sizeof(struct record *)), vs->n, cap };

	if (!bigger.v)
		return false;
	for (size_t i = 0; i < vs->cap; i++)
		if (vs->v[i])
			*values_slot(&bigger, vs->v[i]->text) = vs->v[i];
	free(vs->v);
	*vs = bigger;
	return true;
}

/*
 * A record for @path with default @def (NULL: none) and applied value
 * @applied (NULL: never set here), or NULL when out of memory.
 */
static struct record *record_new(const char *path, const char *def, const char *applied)
{
	size_t plen = strlen(path) + 1, dlen = def ? strlen(def) + 1 : 0;
	bool own = applied && !(def && !strcmp(def, applied));
	size_t alen = own ? strlen(applied) + 1 : 0;
	struct record *r = malloc(sizeof(*r) + plen + dlen + alen);

	if (!r)
		return NULL;
	r->flags = (def ? REC_DEF : 0) | (applied ? REC_APPLIED : 0) | (own ? REC_APPLIED_OWN : 0);
	memcpy(r->text, path, plen);
	if (def)
		memcpy(r->text + plen, def, dlen);
	if (own)
		memcpy(r->text + plen + dlen, applied, alen);
	return r;
}

/*
 * Replaces the record of @path (its slot's) with one holding @def and
 * @applied; NULL when out of memory, with the old record left as it was.
 * @def and @applied may point into the old record.
 */
static struct record *values_put(struct values *vs, const char *path, const char *def,
				 const char *applied)
{
	struct record **slot, *r;

	if ((vs->n + 1) * 8 > vs->cap * 7 && !values_grow(vs))
		return NULL;
	slot = values_slot(vs, path);
	r = record_new(path, def, applied);
	if (!r)
		return NULL;
	if (!*slot)
		vs->n++;
	free(*slot);
	*slot = r;
	return r;
}

/* Captures @value as @path's default, unless one is, and as what it was last left at. */
static void values_capture(struct values *vs, const char *path, const char *value)
{
	struct record *r = values_find(vs, path);

	/* Out of memory, the default is not remembered: no file's value can fall back to it. */
	if (!r || !record_default(r))
		values_put(vs, path, value, value);
}

/* Out of memory, the value is not remembered: the entry then counts as never set here. */
static void values_set_applied(struct values *vs, const char *path, const char *value)
{
	struct record *r = values_find(vs, path);
	const char *def = r ? record_default(r) : NULL;

	if (r && r->flags & REC_APPLIED && !strcmp(record_applied(r), value))
		return;
	/* Forgotten rather than left stale (its bytes, if any, stay unused). */
	if (!values_put(vs, path, def, value) && r)
		r->flags &= (unsigned char)~(REC_APPLIED | REC_APPLIED_OWN);
}

static void values_free(struct values *vs)
{
	for (size_t i = 0; i < vs->cap; i++)
		free(vs->v[i]);
	free(vs->v);
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

	if (err)
		rlog(LOG_ERR, "cannot list the tree: %s", strerror(-err));
	return err;
}

/* Remembers the value of an entry not seen before: what it had before any file. */
static int capture_one(struct sysctl_entry *e, void *arg)
{
	struct config *c = arg;
	const char *path = sysctl_entry_path(e), *value;

	if (!values_default(&c->values, path) && (value = live_value(c, path)))
		values_capture(&c->values, path, value);
	return 0;
}

static void capture_defaults(struct config *c)
{
	walk_all(c, capture_one, c);
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

/* The sysctl.d directories (merged by name), then the -c files. */
static struct sysctl_conf_set *read_set(struct config *c)
{
	struct sysctl_conf_set *set = sysctl_conf_set_new();
	char **paths = NULL;
	ssize_t n = set ? sysctl_conf_list_dirs(c->files->sysctl_dirs, &paths) : -ENOMEM;

	for (ssize_t i = 0; i < n + c->files->nconfigs && n >= 0; i++) {
		struct set_ctx s = { c, i < n ? paths[i] : c->files->configs[i - n] };
		size_t len;
		char *text = read_file(s.file, &len);

		if (!text) {
			rlog(LOG_ERR, "cannot read %s: %s", s.file, strerror(errno));
			c->failures++;
			continue;
		}
		if (i < n)
			rlog(LOG_INFO, "reading %s", s.file);
		if (sysctl_conf_set_add(set, s.file, text, len, set_error, &s) < 0)
			n = -ENOMEM;
		free(text);
	}
	if (n >= 0)
		sysctl_conf_free_paths(paths, (size_t)n);
	if (n < 0) {
		rlog(LOG_ERR, "settings: out of memory");
		sysctl_conf_set_free(set);
		return NULL;
	}
	return set;
}

/* ---- bringing the tree to its layers ---- */

static void report_set_error(struct config *c, const struct sysctl_conf_item *it, const char *path,
			     int err)
{
	struct sysctl_entry *e = sysctl_lookup(c->tree, path);
	char reason[160], name[4096];

	if (!e || sysctl_entry_explain(e, err, reason, sizeof(reason)) < 0)
		snprintf(reason, sizeof(reason), "%s", err == -ENOENT ? "no such entry" : strerror(-err));
	if (e)
		sysctl_entry_put(e);
	sysctl_conf_dotted(path, name, sizeof(name));
	if (it)
		rlog(LOG_ERR, "%s:%u: setting %s: %s", it->file, it->line, name, reason);
	else
		rlog(LOG_ERR, "restoring the default of %s: %s", name, reason);
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

struct converge_walk {
	struct config *c;
	const char *only;
};

/* Globs and defaults for one entry (converge). */
static int converge_entry(struct sysctl_entry *e, void *arg)
{
	struct converge_walk *w = arg;
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

/*
 * Every entry of @only (NULL: all) gets the value of the highest layer
 * naming it: explicit assignments first, in the set's order (so messages
 * come in file order), then globs and defaults for writable entries that
 * no explicit key names.
 */
static void converge(struct config *c, const char *only)
{
	struct converge_walk w = { c, only };

	for (size_t i = 0; !only && i < sysctl_conf_set_count(c->set); i++)
		if (!sysctl_conf_set_item(c->set, i)->glob)
			converge_explicit(c, sysctl_conf_set_item(c->set, i), c->reset_all);
	walk_all(c, converge_entry, &w);
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
	if (err) {
		config_free(c);
		return err;
	}
	capture_defaults(c);
	c->set = read_set(c);
	converge(c, NULL);
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

void config_reload(struct config *c)
{
	struct sysctl_conf_set *set;

	pthread_mutex_lock(&c->lock);
	c->failures = 0;
	c->announce = true;
	load_tunables(c, true);
	capture_defaults(c);
	set = read_set(c);
	if (set) {
		sysctl_conf_set_free(c->set);
		c->set = set;
	}
	/* Entries the reload declared are the state file's too: its commit hook is the tree's. */
	converge(c, NULL);
	rlog(c->failures ? LOG_WARNING : LOG_INFO, "reloaded%s",
	     c->failures ? " with errors (see above)" : "");
	pthread_mutex_unlock(&c->lock);
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
	if (e) {
		snprintf(dotted_path, sizeof(dotted_path), "%s", sysctl_entry_path(e));
		sysctl_entry_put(e);
	}
	pthread_mutex_lock(&c->lock);
	err = c->state ? persist_forget(c->state, path ? dotted_path : NULL) : 0;
	if (err == -ENOENT)
		err = 0; /* nothing written at run time: the files' value is live already */
	if (err) {
		snprintf(why, size, "cannot rewrite the state file: %s", strerror(-err));
	} else {
		c->failures = 0;
		c->announce = true;
		c->reset_all = !path;
		converge(c, path ? dotted_path : NULL);
		c->reset_all = false;
		rlog(LOG_NOTICE, "reset %s to the configuration files' values", path ? dotted_path : "all entries");
	}
	pthread_mutex_unlock(&c->lock);
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
