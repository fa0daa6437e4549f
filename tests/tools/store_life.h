/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the store's tests (persist-faults, persist-commit, persist-batch)
 * share: a check that counts, and one life of a daemon: its store opened
 * with the test's system calls and applied, then closed with its tree;
 * for persist-faults and persist-batch the tree too, string entries
 * app.k0, app.k1, ... at their defaults ("default0", ...).
 * Static functions: include once per test program.
 */
#ifndef RCUSTRING_TESTS_STORE_LIFE_H
#define RCUSTRING_TESTS_STORE_LIFE_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rcustring/sysctl.h>

#include "persist.h"

#define STORE_LIFE_KEYS 4 /* at most */

static int nfailed, nchecks;

static void check(bool ok, const char *what, const char *ctx)
{
	nchecks++;
	if (!ok) {
		nfailed++;
		printf("FAIL %s (%s)\n", what, ctx);
	}
}

/*
 * The store at @path for @tree, with the test's system calls @io, applied
 * (*@applied: persist_apply()'s return) and, where that went, watching
 * the tree. -1 where it cannot be opened (said on stderr).
 */
static inline int store_start(struct sysctl_tree *tree, const char *path,
			      const struct persist_io *io, struct persist **p, int *applied)
{
	char why[256];

	if (persist_open(tree, path, p, why, sizeof(why))) {
		fprintf(stderr, "persist_open: %s\n", why);
		return -1;
	}
	persist_set_io(*p, io);
	*applied = persist_apply(*p);
	if (!*applied)
		persist_watch(*p);
	return 0;
}

static inline void store_end(struct persist *p, struct sysctl_table_header *h,
			     struct sysctl_tree *tree)
{
	persist_close(p);
	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
}

struct keys_life {
	char data[STORE_LIFE_KEYS][64];
	struct ctl_table table[STORE_LIFE_KEYS];
	char names[STORE_LIFE_KEYS][8];
	struct sysctl_tree *tree;
	struct sysctl_table_header *h;
	struct persist *p;
	int applied; /* persist_apply()'s return; the commit hook is in only where 0 */
};

/* @nkeys strings app.k0... at "default0"...; -1 where the tree or the store cannot be set up. */
static inline int keys_life_start(struct keys_life *l, const char *path, int nkeys,
				  const struct persist_io *io)
{
	memset(l, 0, sizeof(*l));
	for (int i = 0; i < nkeys; i++) {
		snprintf(l->names[i], sizeof(l->names[i]), "k%d", i);
		snprintf(l->data[i], sizeof(l->data[i]), "default%d", i);
		l->table[i] = (struct ctl_table){ .procname = l->names[i], .data = l->data[i],
						  .maxlen = sizeof(l->data[i]), .mode = 0644,
						  .proc_handler = proc_dostring };
	}
	l->tree = sysctl_tree_new();
	if (!l->tree || sysctl_register_table(l->tree, "app", l->table, nkeys, &l->h))
		return -1;
	return store_start(l->tree, path, io, &l->p, &l->applied);
}

static inline void keys_life_end(struct keys_life *l)
{
	store_end(l->p, l->h, l->tree);
}

#endif
