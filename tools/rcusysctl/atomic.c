/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl --atomic (atomic.h): the collected writes and their one commit
 * over the control socket (socktree_commit(): MSET or MAPPLY).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl_commit.h"
#include "atomic.h"
#include "socket_proto.h"
#include "socktree.h"

static char *keys[SYSCTL_COMMIT_MAX], *names[SYSCTL_COMMIT_MAX], *values[SYSCTL_COMMIT_MAX];
static size_t count;

int atomic_add(const char *key, const char *name, const char *value)
{
	size_t i;

	for (i = 0; i < count && strcmp(keys[i], key); i++)
		;
	if (i == SYSCTL_COMMIT_MAX) {
		fprintf(stderr, "rcusysctl: --atomic: more than %d keys for one commit (at \"%s\"); "
				"nothing was changed\n", SYSCTL_COMMIT_MAX, name);
		return -E2BIG;
	}
	if (i < count) {
		free(values[i]);
		values[i] = strdup(value);
		return values[i] ? 0 : -ENOMEM;
	}
	keys[i] = strdup(key);
	names[i] = strdup(name);
	values[i] = strdup(value);
	count++;
	if (!keys[i] || !names[i] || !values[i]) {
		fprintf(stderr, "rcusysctl: --atomic: out of memory\n");
		return -ENOMEM;
	}
	return 0;
}

static void drop_all(void)
{
	for (size_t i = 0; i < count; i++) {
		free(keys[i]);
		free(names[i]);
		free(values[i]);
	}
	count = 0;
}

int atomic_commit(bool apply, void (*echo)(const char *name, const char *value))
{
	char errname[16];
	size_t refused;
	int err = 0;

	if (count)
		err = socktree_commit((const char *const *)keys, (const char *const *)values, count,
				      apply, &refused);
	if (err && refused < count)
		fprintf(stderr, "rcusysctl: --atomic: key \"%s\" refused (%s): %s\n", names[refused],
			sock_errname(-err, errname, sizeof(errname)),
			*socktree_message() ? socktree_message() : strerror(-err));
	else if (err)
		fprintf(stderr, "rcusysctl: --atomic: commit of %zu keys refused (%s): %s\n", count,
			sock_errname(-err, errname, sizeof(errname)),
			*socktree_message() ? socktree_message() : strerror(-err));
	if (err)
		fprintf(stderr, "rcusysctl: --atomic: nothing was changed\n");
	for (size_t i = 0; i < count && !err; i++)
		echo(names[i], values[i]);
	drop_all();
	return err;
}
