/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tunables file: each declaration parsed (tunable_decl.c), checked
 * against the others and the tree, registered, and its default= applied
 * through the one set path (sysctl_set), so a default is checked exactly
 * as a client's write would be; a reload keeps what did not change.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysctl_conf.h"
#include "tunable_decl.h"
#include "tunable_register.h"
#include "tunables.h"

struct tunables {
	struct tunable *list;
};

static void tunable_free(struct tunable *t)
{
	const struct sysctl_handler_info *info = tunable_info(t);

	tunable_unregister(t);
	/* The union is set only once the handler is (tunable_parse_line), so NULL before. */
	if (info && (info->flags & SYSCTL_HF_STRING)) {
		if (t->str)
			rcustring_destroy(t->str);
		free(t->str);
	} else if (info && (info->flags & SYSCTL_HF_BITMAP)) {
		free(t->bitmap);
	} else if (t->data != &t->one) {
		free(t->data);
	}
	free((char *)t->table.desc); /* ours: decl_path() */
	free(t->default_value);
	free(t);
}

/*
 * @t again, in one allocation with @path, @sig and the bounds its row
 * points to after it (four chunks of the allocator become one, and no
 * pointer to them is kept: they count at 100 000 tunables), its pointers
 * into itself moved along; @t is gone, @path and @sig stay the caller's.
 * NULL when out of memory.
 */
static struct tunable *tunable_pack(struct tunable *t, const char *path, const char *sig)
{
	size_t plen = strlen(path) + 1, slen = strlen(sig) + 1;
	/* The bounds, aligned, after the two strings; only where the row has them. */
	size_t at = (sizeof(*t) + plen + slen + sizeof(union bound) - 1) / sizeof(union bound);
	size_t nb = t->table.extra2 ? 2 : t->table.extra1 ? 1 : 0;
	union bound *b;
	struct tunable *p = malloc(nb ? (at + nb) * sizeof(union bound) : sizeof(*p) + plen + slen);

	if (!p) {
		tunable_free(t);
		return NULL;
	}
	*p = *t;
	memcpy(p->path, path, plen);
	memcpy(p->path + plen, sig, slen);
	p->table.procname = p->path + (t->table.procname - path);
	if (t->data == &t->one)
		p->data = &p->one;
	if (t->table.data == &t->one)
		p->table.data = &p->one;
	else if (t->table.data == &t->bitmap)
		p->table.data = &p->bitmap;
	b = nb ? (union bound *)p + at : NULL;
	if (t->table.extra1) {
		b[0] = *(const union bound *)t->table.extra1;
		p->table.extra1 = &b[0];
	}
	if (t->table.extra2) {
		b[1] = *(const union bound *)t->table.extra2;
		p->table.extra2 = &b[1];
	}
	free(t);
	return p;
}

void tunables_free(struct tunables *ts)
{
	if (!ts)
		return;
	while (ts->list) {
		struct tunable *t = ts->list;

		ts->list = t->next;
		tunable_free(t);
	}
	free(ts);
}

/*
 * Asked every TUNABLES_STOP_EVERY lines of a reload's parse: a process
 * about to exit need not wait for a file of 100 000 lines (0.3 s or more).
 */
#define TUNABLES_STOP_EVERY 256

struct parse_stop {
	bool (*fn)(void *arg, unsigned line); /* NULL: never */
	void *arg;
};

/* Parses every declaration of @text into @ts (backwards); stops at the first error. */
static int parse_all(const char *text, size_t len, struct tunables *ts, char *err, size_t errsize,
		     const struct parse_stop *stop)
{
	unsigned lineno = 0;
	size_t pos = 0;
	int ret = 0;

	while (pos < len && ret == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = (nl ? (size_t)(nl - text) : len) - pos;
		char *line = strndup(text + pos, n), *p, buf[512];
		const char *why = "out of memory";
		struct tunable *t;

		lineno++;
		pos += n + 1;
		if (!line)
			return -ENOMEM;
		if (stop->fn && lineno % TUNABLES_STOP_EVERY == 0 && stop->fn(stop->arg, lineno)) {
			free(line);
			snprintf(err, errsize, "%u: stopped", lineno);
			return -EINTR;
		}
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p && *p != '#' && *p != '\r') {
			char *path = NULL, *sig = NULL;
			union bound bounds[2];

			t = calloc(1, sizeof(*t));
			ret = t ? tunable_parse_line(p, t, &path, &sig, bounds, &why, buf, sizeof(buf)) :
				  -ENOMEM;
			if (t && !ret && !(t = tunable_pack(t, path, sig)))
				ret = -ENOMEM;
			free(path);
			free(sig);
			if (t && !ret) {
				t->line = lineno;
				t->next = ts->list;
				ts->list = t;
			} else if (t) {
				tunable_free(t);
			}
			if (ret)
				snprintf(err, errsize, "%u: %s", lineno, why);
		}
		free(line);
	}
	return ret;
}

/*
 * Path order with '/' below every other byte, so that the declarations
 * under "a/b/" come right after "a/b" (before "a/b-c" and "a/b.c"); ties
 * in file order.
 */
static int path_cmp(const void *pa, const void *pb)
{
	const struct tunable *a = *(const struct tunable *const *)pa, *b = *(const struct tunable *const *)pb;
	const unsigned char *x = (const unsigned char *)a->path, *y = (const unsigned char *)b->path;

	for (; *x && *x == *y; x++, y++)
		;
	if (*x != *y) {
		int kx = *x == '/' ? 1 : *x ? *x + 1 : 0, ky = *y == '/' ? 1 : *y ? *y + 1 : 0;

		return kx - ky;
	}
	return (a->line > b->line) - (a->line < b->line);
}

/* @in lies under the leaf @leaf ("a/b/c" under "a/b"). */
static bool is_below(const struct tunable *in, const struct tunable *leaf, size_t ll)
{
	return !strncmp(in->path, leaf->path, ll) && in->path[ll] == '/';
}

/*
 * Two declarations of one file naming the same path, or a leaf and a
 * directory; the one reported is the clash found at the earliest line.
 * Sorted by path_cmp(), a duplicate is the next declaration and whatever
 * lies under a leaf follows it in one run, so a file of n declarations
 * costs n log n, not n^2 (100 000 tunables took 53 s to start).
 */
static int check_overlap(const struct tunables *ts, char *err, size_t errsize)
{
	const struct tunable **v, *t, *first = NULL, *second = NULL;
	size_t n = 0, i, j, g;
	unsigned best = UINT_MAX;
	char name[4096];

	for (t = ts->list; t; t = t->next)
		n++;
	if (n < 2)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v) {
		snprintf(err, errsize, "out of memory checking %zu declarations", n);
		return -ENOMEM;
	}
	for (i = 0, t = ts->list; t; t = t->next)
		v[i++] = t;
	qsort(v, n, sizeof(*v), path_cmp);
	for (i = 0; i < n; i = g) {
		size_t ll = strlen(v[i]->path);

		/* A group of equal paths, in file order: its first is the earliest. */
		for (g = i + 1; g < n && !strcmp(v[g]->path, v[i]->path); g++)
			;
		if (g > i + 1 && v[i + 1]->line < best)
			best = v[i + 1]->line, first = v[i], second = v[i + 1];
		for (j = g; j < n && is_below(v[j], v[i], ll); j++) {
			unsigned later = v[i]->line > v[j]->line ? v[i]->line : v[j]->line;

			if (later < best)
				best = later, first = v[i], second = v[j];
		}
	}
	free(v);
	if (!first)
		return 0;
	if (!strcmp(first->path, second->path))
		snprintf(err, errsize, "%u: already declared on line %u", second->line, first->line);
	else
		snprintf(err, errsize, "%u: %s is a tunable (line %u) and a directory (line %u)", best,
			 sysctl_conf_dotted(first->path, name, sizeof(name)), first->line, second->line);
	return -EEXIST;
}

/* The list in file order (it was built backwards). */
static void reverse(struct tunables *ts)
{
	struct tunable *prev = NULL, *t = ts->list, *next;

	for (; t; t = next) {
		next = t->next;
		t->next = prev;
		prev = t;
	}
	ts->list = prev;
}

/*
 * @text's declarations into @ts in file order, checked for clashes; a
 * reload's @stop is asked during the parse and after the sort, the last
 * point where stopping changes nothing.
 */
static int parse_checked(const char *text, size_t len, struct tunables *ts,
			 const struct parse_stop *stop, char *err, size_t errsize)
{
	int ret = parse_all(text, len, ts, err, errsize, stop);

	reverse(ts);
	if (!ret)
		ret = check_overlap(ts, err, errsize);
	if (!ret && stop->fn && stop->fn(stop->arg, 0)) {
		snprintf(err, errsize, "stopped");
		ret = -EINTR;
	}
	return ret;
}

/* The tunables of @ts not registered yet, as an array (NULL: out of memory; *@n set). */
static struct tunable **unregistered(struct tunables *ts, size_t *n)
{
	struct tunable **v, *t;
	size_t k = 0;

	for (t = ts->list; t; t = t->next)
		k += !t->header;
	v = malloc((k ? k : 1) * sizeof(*v));
	if (!v)
		return NULL;
	*n = 0;
	for (t = ts->list; t; t = t->next)
		if (!t->header)
			v[(*n)++] = t;
	return v;
}

/* tunables_load(): the failure at the earliest line becomes the error. */
struct first_failure {
	unsigned line;
	int err;
	char *msg;
	size_t size;
};

static void keep_first(void *arg, struct tunable *t, int err, const char *why)
{
	struct first_failure *f = arg;

	if (f->err && f->line <= t->line)
		return;
	f->line = t->line;
	f->err = err;
	snprintf(f->msg, f->size, "%u: %s", t->line, why);
}

int tunables_load(struct sysctl_tree *tree, const char *text, size_t len, struct tunables **out,
		  char *err, size_t errsize)
{
	struct tunables *ts = calloc(1, sizeof(*ts));
	struct first_failure first = { .msg = err, .size = errsize };
	struct tunable **v;
	size_t n;
	int ret;

	if (!ts)
		return -ENOMEM;
	ret = parse_checked(text, len, ts, &(struct parse_stop){ NULL, NULL }, err, errsize);
	if (!ret) {
		v = unregistered(ts, &n);
		if (!v) {
			snprintf(err, errsize, "out of memory registering the tunables");
			ret = -ENOMEM;
		} else if (tunables_register(tree, v, n, keep_first, &first)) {
			ret = first.err;
		}
		free(v);
	}
	if (ret) {
		tunables_free(ts);
		return ret;
	}
	*out = ts;
	return 0;
}

static size_t hash_path(const char *path)
{
	size_t h = 2166136261u; /* FNV-1a */

	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 16777619u;
	return h;
}

static size_t list_count(const struct tunables *ts)
{
	size_t n = 0;

	for (const struct tunable *t = ts ? ts->list : NULL; t; t = t->next)
		n++;
	return n;
}

/*
 * For each declaration of @ts in order, @old's tunable of that path, or
 * NULL, into @hit (none where @done has one already). A hash of @old's
 * paths (open addressing, at most half full): a scan per declaration
 * compared 10^10 paths at 100 000, and a sort took 0.2 s on a loaded
 * machine with no point to stop at. @stop (may be NULL) is asked every
 * TUNABLES_STOP_EVERY declarations: -EINTR when it says so.
 */
static int find_live(struct tunables *ts, struct tunables *old, struct tunable **done,
		     struct tunable **hit, const struct parse_stop *stop)
{
	size_t n_old = list_count(old), mask = 1, i, h;
	struct tunable **slot, *t;

	while (mask < 2 * n_old)
		mask <<= 1;
	slot = calloc(mask--, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (t = old ? old->list : NULL; t; t = t->next) {
		for (h = hash_path(t->path) & mask; slot[h]; h = (h + 1) & mask)
			;
		slot[h] = t;
	}
	for (i = 0, t = ts->list; t; t = t->next, i++) {
		if (stop && stop->fn && i % TUNABLES_STOP_EVERY == TUNABLES_STOP_EVERY - 1 &&
		    stop->fn(stop->arg, 0)) {
			free(slot);
			return -EINTR;
		}
		if (done && done[i])
			continue;
		for (h = hash_path(t->path) & mask; slot[h] && strcmp(slot[h]->path, t->path);
		     h = (h + 1) & mask)
			;
		hit[i] = slot[h];
	}
	free(slot);
	return 0;
}

/*
 * For each declaration of @ts in order, the live tunable of @old with its
 * path, or NULL, in @live (allocated when NULL; a path declared twice was
 * refused by check_overlap(): one match at most). Those found leave
 * @old's list. 0, -ENOMEM, or -EINTR when @stop said so (nothing taken).
 */
static int take_live(struct tunables *ts, struct tunables *old, struct tunable ***live,
		     const struct parse_stop *stop)
{
	size_t n = list_count(ts);
	struct tunable **hit = calloc(n ? n : 1, sizeof(*hit)), **into = *live, *t, **pp;
	int ret = hit ? 0 : -ENOMEM;

	if (!ret && !into && !(into = calloc(n ? n : 1, sizeof(*into))))
		ret = -ENOMEM;
	if (!ret)
		ret = find_live(ts, old, *live, hit, stop);
	for (size_t i = 0; !ret && i < n; i++)
		if (hit[i]) {
			into[i] = hit[i];
			into[i]->line = 0; /* taken: marked for the pass below */
		}
	free(hit);
	if (ret) {
		if (!*live)
			free(into);
		return ret;
	}
	for (pp = old ? &old->list : NULL; pp && (t = *pp);) {
		if (t->line == 0)
			*pp = t->next;
		else
			pp = &t->next;
	}
	*live = into;
	return 0;
}

/* tunables_reload(): each failure goes to the caller's report. */
struct reporter {
	void (*report)(void *arg, unsigned line, const char *msg);
	void *arg;
};

static void report_failure(void *arg, struct tunable *t, int err, const char *why)
{
	struct reporter *r = arg;

	(void)err;
	r->report(r->arg, t->line, why);
}

/*
 * The live tunable of each declaration of @ts, in *@live_of: this file's
 * (@old; @stop asked meanwhile), then those of @others (other files'
 * lists) for the ones left unmatched, so a declaration moved between
 * files keeps its entry. 0, -EINTR (nothing taken) or -ENOMEM (nothing
 * is lost: what stays is live).
 */
static int match_live(struct tunables *ts, struct tunables *old, struct tunables *const *others,
		      size_t nothers, struct tunable ***live_of, const struct parse_stop *stop)
{
	int ret;

	*live_of = NULL;
	ret = take_live(ts, old, live_of, stop);
	for (size_t k = 0; !ret && k < nothers; k++)
		if (others[k])
			ret = take_live(ts, others[k], live_of, NULL);
	if (ret && ret != -EINTR) {
		free(*live_of);
		*live_of = NULL;
	}
	return ret;
}

int tunables_reload(struct sysctl_tree *tree, struct tunables *old, struct tunables *const *others,
		    size_t nothers, const char *text, size_t len, struct tunables **out,
		    void (*report)(void *arg, unsigned line, const char *msg),
		    bool (*stop)(void *arg, unsigned line), void *arg, char *err, size_t errsize)
{
	struct tunables *ts = calloc(1, sizeof(*ts));
	struct tunable **pp, *t, **live_of, **v;
	struct reporter rep = { report, arg };
	char msg[512], name[4096];
	size_t i, n;
	int ret;

	if (!ts)
		return -ENOMEM;
	ret = parse_checked(text, len, ts, &(struct parse_stop){ stop, arg }, err, errsize);
	if (ret) {
		tunables_free(ts);
		return ret;
	}
	ret = match_live(ts, old, others, nothers, &live_of, &(struct parse_stop){ stop, arg });
	if (ret) {
		tunables_free(ts);
		snprintf(err, errsize, "%s", ret == -EINTR ? "stopped" :
			 "out of memory matching the declarations with the live ones");
		return ret;
	}
	/* Unchanged or refused: the live entry (and its value) stays, taken over from @old. */
	for (pp = &ts->list, i = 0; (t = *pp); i++) {
		struct tunable *live = live_of[i];

		if (!live) {
			pp = &t->next;
			continue;
		}
		if (strcmp(tunable_sig(live), tunable_sig(t))) {
			snprintf(msg, sizeof(msg),
				 "%s: declared \"%s\", live as \"%s\": a live entry keeps its declaration "
				 "(restart to change it)",
				 sysctl_conf_dotted(t->path, name, sizeof(name)), tunable_sig(t),
				 tunable_sig(live));
			report(arg, t->line, msg);
		}
		live->next = t->next;
		live->line = t->line;
		*pp = live;
		pp = &live->next;
		t->next = NULL;
		tunable_free(t);
	}
	free(live_of);
	/* Gone from the file: unregistered. */
	tunables_free(old);
	/* New: registered with their defaults; one that fails is reported and left out. */
	v = unregistered(ts, &n);
	if (v)
		tunables_register(tree, v, n, report_failure, &rep);
	free(v);
	for (pp = &ts->list; (t = *pp);) {
		if (t->header) {
			pp = &t->next;
			continue;
		}
		if (!v)
			report(arg, t->line, "out of memory");
		*pp = t->next;
		tunable_free(t);
	}
	*out = ts;
	return 0;
}
