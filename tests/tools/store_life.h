/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the store's fault tests (persist-faults, persist-batch) share: a
 * check that counts, and one life of a daemon: a tree of string entries
 * app.k0, app.k1, ... at their defaults ("default0", ...), its store
 * opened with the test's system calls and applied, then closed again.
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

struct life {
	char data[STORE_LIFE_KEYS][64];
	struct ctl_table table[STORE_LIFE_KEYS];
	char names[STORE_LIFE_KEYS][8];
	struct sysctl_tree *tree;
	struct sysctl_table_header *h;
	struct persist *p;
	int applied; /* persist_apply()'s return; the commit hook is in only where 0 */
};

/* -1 where the tree or the store cannot be set up (said on stderr). */
static int life_start_io(struct life *l, const char *path, int nkeys, const struct persist_io *io)
{
	char why[256];

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
	if (persist_open(l->tree, path, &l->p, why, sizeof(why))) {
		fprintf(stderr, "persist_open: %s\n", why);
		return -1;
	}
	persist_set_io(l->p, io);
	l->applied = persist_apply(l->p);
	if (!l->applied)
		persist_watch(l->p);
	return 0;
}

static void life_end(struct life *l)
{
	persist_close(l->p);
	sysctl_unregister_table(l->h);
	sysctl_tree_free(l->tree);
}

#endif
