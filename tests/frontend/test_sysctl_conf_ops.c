/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A settings set stays linear in its lines: what rcusysd's start does
 * with N settings (sysctl_conf_set_add() of the files, then one
 * sysctl_conf_set_lookup() per entry of the tree) is counted through the
 * set's test hook (sysctl_conf_set_count_probes: keys compared), not
 * timed, for N and 2N lines. Twice the lines may cost at most 2.5 times
 * the comparisons; a scan of the set per line or per lookup costs 4 times.
 * The files: one line per key, then a second file repeating every tenth
 * key with another value and adding two globs; every lookup must give the
 * value a merge keeps, and the repeated keys must go last.
 * Usage: test_sysctl_conf_ops [--lines N]   (default 10 000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysctl_conf.h"

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

/* The two files' text for @n keys (freed by the caller). */
static char *file_text(long n, int second)
{
	size_t size = (size_t)n * 48 + 128, len = 0;
	char *text = malloc(size);

	if (!text)
		abort();
	for (long i = 0; i < n; i++)
		if (!second || i % 10 == 0)
			len += (size_t)snprintf(text + len, size - len, "app.d%03ld.t%06ld = %ld\n",
						i / 1000, i, second ? -i : i);
	if (second)
		len += (size_t)snprintf(text + len, size - len, "other.*.x = glob\n-zz.* = late\n");
	text[len] = '\0';
	return text;
}

static void check_lookup(const struct sysctl_conf_set *set, long i)
{
	char key[64], want[32];
	const struct sysctl_conf_item *it;

	snprintf(key, sizeof(key), "app/d%03ld/t%06ld", i / 1000, i);
	snprintf(want, sizeof(want), "%ld", i % 10 ? i : -i);
	it = sysctl_conf_set_lookup(set, key);
	CHECK(it && !strcmp(it->value, want), "%s: %s, expected %s", key, it ? it->value : "none",
	      want);
}

/* One start's worth of work on @n lines; returns the keys compared. */
static unsigned long start_probes(long n)
{
	struct sysctl_conf_set *set = sysctl_conf_set_new();
	char *a = file_text(n, 0), *b = file_text(n, 1), key[64];
	unsigned long probes = 0;
	long repeated = (n + 9) / 10;

	if (!set)
		abort();
	sysctl_conf_set_count_probes(set, &probes);
	CHECK(sysctl_conf_set_add(set, "a.conf", a, strlen(a), NULL, NULL) == 0, "a.conf");
	CHECK(sysctl_conf_set_add(set, "b.conf", b, strlen(b), NULL, NULL) == 0, "b.conf");
	for (long i = 0; i < n; i++)
		check_lookup(set, i);
	for (long i = 0; i < n / 10; i++) {
		snprintf(key, sizeof(key), "other/d%ld/y", i);
		CHECK(sysctl_conf_set_lookup(set, key) == NULL, "%s: found", key);
	}
	CHECK(!strcmp(sysctl_conf_set_lookup(set, "other/q/x")->value, "glob"), "glob");
	sysctl_conf_set_count_probes(set, NULL);
	CHECK(sysctl_conf_set_count(set) == (size_t)n + 2, "%zu items for %ld keys and 2 globs",
	      sysctl_conf_set_count(set), n);
	/* A repeated key leaves its place: the second file's lines come last. */
	CHECK(!strcmp(sysctl_conf_set_item(set, (size_t)(n - repeated))->key, "app/d000/t000000"),
	      "item %ld is %s", n - repeated, sysctl_conf_set_item(set, (size_t)(n - repeated))->key);
	sysctl_conf_set_free(set);
	free(a);
	free(b);
	return probes;
}

int main(int argc, char **argv)
{
	long n = argc == 3 && !strcmp(argv[1], "--lines") ? atol(argv[2]) : 10000;
	unsigned long once, twice;
	double ratio;

	if (n < 100 || n > 900000) {
		fprintf(stderr, "usage: test_sysctl_conf_ops [--lines N (100 to 900 000)]\n");
		return 2;
	}
	once = start_probes(n);
	twice = start_probes(2 * n);
	ratio = once ? (double)twice / (double)once : 0;
	printf("settings set: %lu keys compared for %ld lines, %lu for %ld: x%.2f (at most 2.5)\n",
	       once, n, twice, 2 * n, ratio);
	/* A hook that counts nothing would pass the ratio: each lookup compares a key at least. */
	CHECK(once >= (unsigned long)n, "%lu comparisons for %ld lookups", once, n);
	CHECK(ratio <= 2.5, "x%.2f: adding or looking up is no longer linear", ratio);
	return failures ? 1 : 0;
}
