/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Nothing acknowledged is left out of the store, and what it keeps comes
 * back byte for byte. An entry whose handler (a program's own) keeps a
 * value sysctl.d text cannot hold (a newline inside) takes a client's
 * write of one: the journal keeps its bytes, and after a restart the
 * entry holds exactly them. (The text state file refused such a write
 * with EINVAL; before that it skipped the key at its next rewrite.)
 *
 * Prints "held: ..." or "failed: ..." per check, as the shell attacks do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rcustring/sysctl.h>

#include "persist.h"
#include "store_has.h"
#include "attack_check.h"



/* Stores the bytes written as they are, newlines included (no lock: one writer here). */
static char raw[256] = "plain";

static int raw_handler(const struct ctl_table *t, int write, void *buffer, size_t *lenp,
		       off_t *ppos)
{
	size_t len = strlen(raw);

	(void)t;
	if (write) {
		if (*ppos != 0 || *lenp >= sizeof(raw))
			return -EINVAL;
		memcpy(raw, buffer, *lenp);
		raw[*lenp] = '\0';
		*ppos += (off_t)*lenp;
		return 0;
	}
	if ((size_t)*ppos >= len + 1) {
		*lenp = 0;
		return 0;
	}
	if (*lenp > len + 1 - (size_t)*ppos)
		*lenp = len + 1 - (size_t)*ppos;
	memcpy(buffer, raw + *ppos, *lenp);
	if ((size_t)*ppos + *lenp == len + 1)
		((char *)buffer)[*lenp - 1] = '\n';
	*ppos += (off_t)*lenp;
	return 0;
}

int main(void)
{
	struct ctl_table table[] = {
		{ .procname = "raw", .data = raw, .maxlen = sizeof(raw), .mode = 0644,
		  .proc_handler = raw_handler },
	};
	char dir[] = "/tmp/attack-persist-XXXXXX", path[64], why[256], msg[512];
	struct sysctl_caller client = { 0, 0, 1 };
	struct sysctl_table_header *h;
	struct sysctl_tree *tree;
	struct persist *p;
	int err;

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	snprintf(path, sizeof(path), "%s/state/state.conf", dir);
	tree = sysctl_tree_new();
	if (!tree || sysctl_register_table(tree, "app", table, 1, &h))
		return fprintf(stderr, "cannot build the tree\n"), 1;
	if (persist_open(tree, path, &p, why, sizeof(why)) || persist_apply(p) || persist_watch(p))
		return fprintf(stderr, "state file: %s\n", why), 1;

	err = sysctl_set(tree, "app.raw", "kept", 4, &client);
	check("a client's plain value is written", !err && store_has(path, "app.raw", "kept"),
	      "the store lacks app.raw = kept");
	err = sysctl_set(tree, "app.raw", "two\nlines", 9, &client);
	snprintf(msg, sizeof(msg), "the write returned %d (%s); the entry holds \"%s\"", err,
		 err ? strerror(-err) : "acknowledged", raw);
	check("a value with a newline inside is acknowledged", err == 0, "%s", msg);
	check("and kept byte for byte", store_has(path, "app.raw", "two\nlines"),
	      "the store does not hold \"two\\nlines\"");
	printf("measured: %s\n", msg);

	/* A restart: the program's default again, then the store applied. */
	persist_close(p);
	strcpy(raw, "plain");
	if (persist_open(tree, path, &p, why, sizeof(why)) || persist_apply(p) || persist_watch(p))
		return fprintf(stderr, "state file: %s\n", why), 1;
	check("it comes back exactly after a restart", !strcmp(raw, "two\nlines"), "%s", raw);
	persist_close(p);
	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
	rcustring_barrier();
	snprintf(msg, sizeof(msg), "rm -rf %s", dir);
	if (system(msg) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("attack-persist: %d failed\n", nfailed);
	return nfailed != 0;
}
