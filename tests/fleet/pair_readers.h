/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Readers of a pair (fleet-host --pair-readers): threads of a host that
 * read two entries with sysctl_snapshot() and count the pairs whose values
 * differ, for the fleet test of one revision, one commit.
 */
#ifndef FLEET_PAIR_READERS_H
#define FLEET_PAIR_READERS_H

#include <rcustring/sysctl.h>

/* Start @n readers of @a and @b in @tree. Return: 0, -EINVAL, or -errno. */
int pair_readers_start(struct sysctl_tree *tree, const char *a, const char *b, int n);
/* Count the commits of more than one entry (before the tree is shared). */
int pair_commits_count(struct sysctl_tree *tree);
/* Stop them and print "pairs HOST snapshots=N mixed=M commits=C" on stdout. */
void pair_readers_stop(const char *host);

#endif
