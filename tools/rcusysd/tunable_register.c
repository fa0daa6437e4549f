/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tunables into the tree (tunable_register.h). The tunables of one
 * directory share one table: sysctl_register_rows() with a pointer to
 * each tunable's row, so 100 000 tunables in 100 directories cost 100
 * table headers, not 100 000 (64 bytes each). When the tree refuses a
 * directory's table, its tunables are registered one by one, so that the
 * one refused is named. Each default goes through the one set path
 * (sysctl_set), checked exactly as a client's write would be.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysctl_conf.h"
#include "tunable_register.h"

static size_t dir_len(const struct tunable *t)
{
	return (size_t)(t->table.procname - 1 - t->path);
}

/* By directory, then in file order. */
static int by_dir(const void *pa, const void *pb)
{
	const struct tunable *a = *(const struct tunable *const *)pa;
	const struct tunable *b = *(const struct tunable *const *)pb;
	size_t la = dir_len(a), lb = dir_len(b);
	int c = memcmp(a->path, b->path, la < lb ? la : lb);

	if (c)
		return c;
	if (la != lb)
		return la < lb ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

static bool same_dir(const struct tunable *a, const struct tunable *b)
{
	return dir_len(a) == dir_len(b) && !memcmp(a->path, b->path, dir_len(a));
}

/* A path's name is a directory of @tree, or one of its directories an entry? */
static const char *tree_conflict(struct sysctl_tree *tree, const struct tunable *t, char *buf,
				 size_t bufsize)
{
	struct sysctl_entry *e = sysctl_lookup(tree, t->path);
	char *prefix, name[2048];

	if (e) {
		bool dir = sysctl_entry_is_dir(e);

		sysctl_entry_put(e);
		snprintf(buf, bufsize, "%s: %s", sysctl_conf_dotted(t->path, name, sizeof(name)),
			 dir ? "a directory of the tree already has this name" :
			       "already registered (by rcusysd or another tunables file)");
		return buf;
	}
	prefix = strdup(t->path);
	if (!prefix)
		return "out of memory";
	for (char *s = strchr(prefix + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		e = sysctl_lookup(tree, prefix);
		if (e && !sysctl_entry_is_dir(e)) {
			snprintf(buf, bufsize, "%s is an entry, so it cannot be a directory too",
				 sysctl_entry_path(e));
			sysctl_entry_put(e);
			free(prefix);
			return buf;
		}
		if (e)
			sysctl_entry_put(e);
		*s = '/';
	}
	free(prefix);
	return NULL;
}

static struct tunable *tunable_of(struct ctl_table *row)
{
	return (struct tunable *)((char *)row - offsetof(struct tunable, table));
}

static void refused(struct tunable *t, int err, tunable_fail_fn *fail, void *arg)
{
	char name[2048], buf[2560];

	snprintf(buf, sizeof(buf), "%s: %s", sysctl_conf_dotted(t->path, name, sizeof(name)),
		 err == -EEXIST ? "already registered" :
		 err == -ENOMEM ? "out of memory" : "refused by the tree (see log)");
	fail(arg, t, err, buf);
}

/* The @n tunables @v of one directory: one table, else one by one. Returns failures. */
static size_t register_dir(struct sysctl_tree *tree, struct tunable **v, size_t n,
			   tunable_fail_fn *fail, void *arg)
{
	struct ctl_table **rows = malloc(n * sizeof(*rows));
	struct sysctl_table_header *h;
	char *dir = strndup(v[0]->path, dir_len(v[0])), buf[2560];
	size_t k = 0, failed = 0;

	if (!rows || !dir) {
		free(rows);
		free(dir);
		for (size_t i = 0; i < n; i++)
			fail(arg, v[i], -ENOMEM, "out of memory");
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		const char *conflict = tree_conflict(tree, v[i], buf, sizeof(buf));

		if (conflict) {
			fail(arg, v[i], -EEXIST, conflict);
			failed++;
		} else {
			rows[k++] = &v[i]->table;
		}
	}
	if (k && sysctl_register_rows(tree, dir, rows, k, &h) == 0) {
		for (size_t i = 0; i < k; i++)
			tunable_of(rows[i])->header = h;
	} else {
		for (size_t i = 0; i < k; i++) {
			struct tunable *t = tunable_of(rows[i]);
			int err = sysctl_register_rows(tree, dir, &rows[i], 1, &t->header);

			if (err) {
				t->header = NULL;
				refused(t, err, fail, arg);
				failed++;
			}
		}
	}
	free(rows);
	free(dir);
	return failed;
}

/* Writes @t's default, then forgets it (a reload keeps the live value). */
static int apply_default(struct sysctl_tree *tree, struct tunable *t, tunable_fail_fn *fail,
			 void *arg)
{
	int err = sysctl_set(tree, t->path, t->default_value, strlen(t->default_value), NULL);

	if (err) {
		struct sysctl_entry *e = sysctl_lookup(tree, t->path);
		char reason[160], buf[512];

		if (!e || sysctl_entry_explain(e, err, reason, sizeof(reason)) < 0)
			snprintf(reason, sizeof(reason), "%s", strerror(-err));
		if (e)
			sysctl_entry_put(e);
		snprintf(buf, sizeof(buf), "default=\"%s\": %s", t->default_value, reason);
		tunable_unregister(t);
		fail(arg, t, err, buf);
		return err;
	}
	free(t->default_value);
	t->default_value = NULL;
	return 0;
}

size_t tunables_register(struct sysctl_tree *tree, struct tunable **v, size_t n,
			 tunable_fail_fn *fail, void *arg)
{
	size_t failed = 0, i, g;

	qsort(v, n, sizeof(*v), by_dir);
	for (i = 0; i < n; i = g) {
		for (g = i + 1; g < n && same_dir(v[i], v[g]); g++)
			;
		failed += register_dir(tree, v + i, g - i, fail, arg);
	}
	for (i = 0; i < n; i++)
		if (v[i]->header && v[i]->default_value && apply_default(tree, v[i], fail, arg))
			failed++;
	return failed;
}

void tunable_unregister(struct tunable *t)
{
	if (!t->header)
		return;
	sysctl_unregister_row(t->header, &t->table);
	t->header = NULL;
}
