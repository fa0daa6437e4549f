/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Removing a table's rows one by one (sysctl_unregister_row(), what an
 * rcusysd reload that drops a directory's tunables does) stays linear:
 * the rows each removal compares are counted through the tree's test hook
 * (rcs_sysctl_count_probes), not timed, for N and 2N rows of one table
 * (each row its own allocation, as rcusysd's), removed half in
 * registration order and half in reverse. Twice the rows may cost at most
 * 2.5 times the comparisons; a search of the table per row costs 4 times.
 * Every removal must succeed and leave the others registered.
 * Usage: test_unregister_ops [--rows N]   (default 10 000)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl.h"
#include "tree.h"

static int failures;

#define CHECK(cond, ...)                                                           \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                              \
			fputc('\n', stderr);                                       \
			if (++failures > 20)                                       \
				exit(1);                                           \
		}                                                                  \
	} while (0)

/* Registers @n rows in one table, removes them all; returns the rows compared. */
static unsigned long removal_probes(long n)
{
	struct sysctl_tree *tree = sysctl_tree_new();
	struct ctl_table **rows = calloc((size_t)n, sizeof(*rows));
	int *data = calloc((size_t)n, sizeof(*data));
	struct sysctl_table_header *h = NULL;
	struct sysctl_entry *gone;
	unsigned long probes = 0;
	char path[64];

	if (!tree || !rows || !data)
		abort();
	for (long i = 0; i < n; i++) {
		char *name = malloc(24);

		rows[i] = malloc(sizeof(**rows));
		if (!name || !rows[i])
			abort();
		snprintf(name, 24, "t%06ld", i);
		*rows[i] = (struct ctl_table){ name, &data[i], sizeof(int), 0644, proc_dointvec,
					       NULL, NULL, NULL };
	}
	CHECK(sysctl_register_rows(tree, "app/d", rows, (size_t)n, &h) == 0, "register %ld rows", n);
	rcs_sysctl_count_probes(tree, &probes);
	for (long k = 0; k < n; k++) {
		/* First half from the front, the rest from the back. */
		long i = k < n / 2 ? k : n - 1 - (k - n / 2);

		CHECK(sysctl_unregister_row(h, rows[i]) == 0, "remove row %ld of %ld", i, n);
		if (k == n / 2) {
			snprintf(path, sizeof(path), "app/d/t%06ld", n / 2);
			CHECK(sysctl_set(tree, path, "7", 1, NULL) == 0, "%s still there", path);
			snprintf(path, sizeof(path), "app/d/t%06ld", n / 2 - 1);
			CHECK(sysctl_set(tree, path, "7", 1, NULL) == -ENOENT, "%s gone", path);
		}
	}
	rcs_sysctl_count_probes(tree, NULL);
	gone = sysctl_lookup(tree, "app");
	CHECK(gone == NULL, "the last row took its directories");
	sysctl_entry_put(gone);
	sysctl_tree_free(tree);
	for (long i = 0; i < n; i++) {
		free((char *)rows[i]->procname);
		free(rows[i]);
	}
	free(rows);
	free(data);
	return probes;
}

int main(int argc, char **argv)
{
	long n = argc == 3 && !strcmp(argv[1], "--rows") ? atol(argv[2]) : 10000;
	unsigned long once, twice;
	double ratio;

	if (n < 100) {
		fprintf(stderr, "usage: test_unregister_ops [--rows N (>= 100)]\n");
		return 2;
	}
	once = removal_probes(n);
	twice = removal_probes(2 * n);
	ratio = once ? (double)twice / (double)once : 0;
	printf("unregister_row: %lu rows compared for %ld rows, %lu for %ld: x%.2f (at most 2.5)\n",
	       once, n, twice, 2 * n, ratio);
	/* A hook that counts nothing would pass the ratio: each removal compares one row at least. */
	CHECK(once >= (unsigned long)n, "%lu comparisons for %ld removals", once, n);
	CHECK(ratio <= 2.5, "x%.2f: removal is no longer linear", ratio);
	return failures ? 1 : 0;
}
