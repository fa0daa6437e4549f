/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Commits against snapshots: writers commit pairs (x, x) to an RCU string
 * (x spelled as a run of one letter, its length and letter both from x, so
 * two values differ in length and in every byte) and an int, while readers
 * take sysctl_snapshot()s of both; a reader that ever sees a string and a
 * number from different commits fails. Every 16th commit carries a number
 * its handler refuses: it must fail naming that item, and no reader, not
 * even a plain sysctl_get(), may ever see its string. --key-by-key writes the pair with
 * two sysctl_set() calls instead, the way a front end did before commits:
 * readers then see mixed pairs, which shows the test can fail.
 * Beside them, other writers commit to entries of their own: commits that
 * share no entry run at once, and must not open a window to the readers.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rcustring/rcustring.h"
#include "rcustring/sysctl.h"
#include "rcustring/sysctl_commit.h"

#define WRITERS 2
#define READERS 2
#define OTHERS 2 /* writers of commits to other entries */
#define OTHER_N 16
#define STR_MAX 64

static struct sysctl_tree *tree;
static struct rcustring name;
static int number;
static unsigned long next_x = 1;
static bool stop, key_by_key;
static unsigned long mixed, snapshots, commits, refused, leaked;

/* A commit whose number is refused: its name ("ZZZ", never spelled) must never show. */
static void refused_commit(void)
{
	struct sysctl_commit_item items[2] = {
		{ "pair.name", "ZZZ", 3 },
		{ "pair.number", "not-a-number", 12 },
	};
	size_t failed = 0;
	int err = sysctl_commit(tree, items, 2, NULL, SYSCTL_ORIGIN_PROGRAM, &failed);

	if (err != -EINVAL || failed != 1) {
		fprintf(stderr, "refused commit: %s, item %zu (want EINVAL, item 1)\n",
			strerror(-err), failed);
		exit(1);
	}
	__atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
}

/* Entries no pair writer touches; their commits run while the pairs' do. */
static int other[OTHER_N];
static char other_names[OTHER_N][8];
static struct ctl_table other_table[OTHER_N];

static void *other_writer(void *arg)
{
	char paths[OTHER_N][16], values[OTHER_N][24];
	struct sysctl_commit_item items[OTHER_N];

	(void)arg;
	for (int i = 0; i < OTHER_N; i++)
		snprintf(paths[i], sizeof(paths[i]), "other.o%d", i);
	for (unsigned long x = 1; !__atomic_load_n(&stop, __ATOMIC_RELAXED); x++) {
		size_t failed;

		for (int i = 0; i < OTHER_N; i++)
			items[i] = (struct sysctl_commit_item){ paths[i], values[i],
				(size_t)snprintf(values[i], sizeof(values[i]), "%lu", x) };
		if (sysctl_commit(tree, items, OTHER_N, NULL, SYSCTL_ORIGIN_PROGRAM, &failed)) {
			fprintf(stderr, "a commit of other entries failed at item %zu\n", failed);
			exit(1);
		}
	}
	return NULL;
}

static int register_others(struct sysctl_table_header **h)
{
	for (int i = 0; i < OTHER_N; i++) {
		snprintf(other_names[i], sizeof(other_names[i]), "o%d", i);
		other_table[i] = (struct ctl_table){ .procname = other_names[i], .data = &other[i],
			.maxlen = sizeof(int), .mode = 0644, .proc_handler = proc_dointvec };
	}
	return sysctl_register_table(tree, "other", other_table, OTHER_N, h);
}

static struct ctl_table table[] = {
	{ .procname = "name", .data = &name, .maxlen = STR_MAX, .mode = 0644,
	  .proc_handler = proc_rcu_string },
	{ .procname = "number", .data = &number, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec },
};

/* x as the string: 1..40 copies of one letter of 26 (the run is never empty). */
static size_t spell(unsigned long x, char *buf)
{
	size_t len = 1 + x % 40;

	memset(buf, 'a' + (int)(x % 26), len);
	buf[len] = '\0';
	return len;
}

static void *writer(void *arg)
{
	char s[STR_MAX], n[24];

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned long x = __atomic_fetch_add(&next_x, 1, __ATOMIC_RELAXED) % 1000000;
		struct sysctl_commit_item items[2] = {
			{ "pair.name", s, spell(x, s) },
			{ "pair.number", n, (size_t)snprintf(n, sizeof(n), "%lu", x) },
		};
		size_t failed;
		int err;

		if (!key_by_key && x % 16 == 0)
			refused_commit();
		if (key_by_key)
			err = sysctl_set(tree, items[0].path, s, items[0].len, NULL) ?:
			      sysctl_set(tree, items[1].path, n, items[1].len, NULL);
		else
			err = sysctl_commit(tree, items, 2, NULL, SYSCTL_ORIGIN_PROGRAM, &failed);
		if (err) {
			fprintf(stderr, "commit of %lu: %s\n", x, strerror(-err));
			exit(1);
		}
		__atomic_add_fetch(&commits, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *reader(void *arg)
{
	char s[STR_MAX + 2], n[32], want[STR_MAX];

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct sysctl_snapshot_item items[2] = {
			{ .path = "pair.name", .buf = s, .size = sizeof(s) },
			{ .path = "pair.number", .buf = n, .size = sizeof(n) },
		};
		unsigned long x;
		int err = sysctl_snapshot(tree, items, 2, NULL);

		if (err) {
			fprintf(stderr, "snapshot: %s\n", strerror(-err));
			exit(1);
		}
		x = strtoul(n, NULL, 10);
		spell(x, want);
		/* A read ends in '\n': compare the value before it. */
		if (strncmp(s, want, strlen(want)) || s[strlen(want)] != '\n') {
			if (__atomic_add_fetch(&mixed, 1, __ATOMIC_RELAXED) <= 3)
				fprintf(stderr, "mixed pair: name \"%.*s\" number %lu\n",
					(int)strcspn(s, "\n"), s, x);
		}
		__atomic_add_fetch(&snapshots, 1, __ATOMIC_RELAXED);
		/* A single read, outside any snapshot: never a refused commit's value. */
		if (sysctl_get(tree, "pair.name", s, sizeof(s)) > 0 && s[0] == 'Z' &&
		    __atomic_add_fetch(&leaked, 1, __ATOMIC_RELAXED) == 1)
			fprintf(stderr, "a refused commit's name was read: %s", s);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w[WRITERS], r[READERS], o[OTHERS];
	struct sysctl_table_header *h, *oh;
	double seconds = 2;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--key-by-key"))
			key_by_key = true;
		else
			return fprintf(stderr, "usage: %s [--seconds N] [--key-by-key]\n", argv[0]), 2;
	}
	tree = sysctl_tree_new();
	if (!tree || rcustring_init(&name, STR_MAX, "a") ||
	    sysctl_register_table(tree, "pair", table, 2, &h) || register_others(&oh))
		return fprintf(stderr, "setup failed\n"), 1;
	for (int i = 0; i < OTHERS; i++)
		pthread_create(&o[i], NULL, other_writer, NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&w[i], NULL, writer, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	nanosleep(&(struct timespec){ (time_t)seconds,
				      (long)((seconds - (time_t)seconds) * 1e9) }, NULL);
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	for (int i = 0; i < OTHERS; i++)
		pthread_join(o[i], NULL);
	printf("%lu commits, %lu refused, %lu snapshots, %lu mixed pairs, %lu refused values read\n",
	       commits, refused, snapshots, mixed, leaked);
	sysctl_unregister_table(h);
	sysctl_unregister_table(oh);
	sysctl_tree_free(tree);
	rcustring_destroy(&name);
	if (!commits || !snapshots)
		return fprintf(stderr, "nothing ran: the test proves nothing\n"), 1;
	return mixed || leaked ? 1 : 0;
}
