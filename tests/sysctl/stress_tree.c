/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stress: two threads churn tables (register, unregister, free the table
 * and its data at once), two threads look entries up, read, write, hold
 * references across unregisters, walk and list. Checks: a lookup finds
 * nothing (ENOENT) or an entry; a read or write on it returns 0 or, once
 * the entry is dead, -ENOENT; values read are always ones written, checked
 * whole (never the poison written after unregister, never freed memory: run
 * under ASan/valgrind). The strings written differ from each other in
 * length and in every byte, so a read that mixes two shows; one string
 * entry is an in-place proc_dostring array, which the tree must not copy
 * while one of its writers changes it. Usage: stress_tree [--seconds S]
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rcustring/sysctl.h"

#define CHURNERS 2
#define LOOKERS 2
#define SLOTS 4
#define POISON (-1)

#define NPATTERNS 6
#define STR_MAX 4096 /* the proc_dostring entry's capacity */
#define RCU_MAX 32   /* the proc_rcu_string entry's capacity */

/* One registration's table and data, freed right after unregister. */
struct reg {
	struct ctl_table tbl[3];
	int ival;
	struct rcustring s;
	char d[STR_MAX];
	struct sysctl_table_header *h;
	char path[32];
};

static struct sysctl_tree *tree;
static int stop;
static long failures;
static long stat_found, stat_missing, stat_dead_reads, stat_reads, stat_writes, stat_regs,
	stat_walked;

#define FAIL(...)                                                                  \
	do {                                                                       \
		fprintf(stderr, "stress_tree: " __VA_ARGS__);                      \
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);                \
	} while (0)

/*
 * Value number @k for an entry of @scale: NPATTERNS strings of lengths
 * @scale * (k + 1), each one letter repeated, no letter shared, so any two
 * differ in length and in every byte. The in-place entry gets long values,
 * so that a copy racing with a write has time to show.
 */
static size_t scale_of(const char *name)
{
	return !strcmp(name, "d") ? 600 : 5;
}

static size_t pattern(int k, size_t scale, char *out)
{
	size_t len = scale * (size_t)(k + 1);

	memset(out, 'a' + k, len);
	out[len] = '\0';
	return len;
}

/* @buf (@len bytes as read, "\n" included) is exactly a pattern or @dflt. */
static bool whole_string(const char *buf, size_t len, size_t scale, const char *dflt)
{
	size_t n;

	if (len == strlen(dflt) + 1 && !memcmp(buf, dflt, len - 1) && buf[len - 1] == '\n')
		return true;
	if (len < 2 || buf[len - 1] != '\n' || buf[0] < 'a' || buf[0] >= 'a' + NPATTERNS)
		return false;
	n = len - 1;
	if (n != scale * (size_t)(buf[0] - 'a' + 1))
		return false;
	for (size_t i = 1; i < n; i++)
		if (buf[i] != buf[0])
			return false;
	return true;
}

/* @buf is one decimal int in [1000, 1000 + 100000) and "\n", nothing else. */
static bool whole_int(const char *buf, size_t len)
{
	long v = 0;
	size_t i;

	if (len < 2 || buf[len - 1] != '\n')
		return false;
	for (i = 0; i < len - 1; i++) {
		if (buf[i] < '0' || buf[i] > '9' || i > 6)
			return false;
		v = v * 10 + (buf[i] - '0');
	}
	return v >= 1000 && v < 1000 + 100000;
}

static struct reg *reg_new(int churner, int slot)
{
	struct reg *r = calloc(1, sizeof(*r));

	if (!r || rcustring_init(&r->s, RCU_MAX, "s-default")) {
		FAIL("out of memory\n");
		exit(1);
	}
	r->ival = 1000 + slot;
	r->tbl[0] = (struct ctl_table){ "i", &r->ival, sizeof(int), 0644, proc_dointvec, NULL,
					NULL, "churned int" };
	r->tbl[1] = (struct ctl_table){ "s", &r->s, RCU_MAX, 0644, proc_rcu_string, NULL, NULL,
					NULL };
	snprintf(r->d, sizeof(r->d), "s-default");
	r->tbl[2] = (struct ctl_table){ "d", r->d, STR_MAX, 0644, proc_dostring, NULL, NULL, NULL };
	snprintf(r->path, sizeof(r->path), "churn/c%d/slot%d", churner, slot);
	return r;
}

static void reg_free(struct reg *r)
{
	/* Unregister returned: no handler runs on it any more, so poison is unseen. */
	r->ival = POISON;
	snprintf(r->d, sizeof(r->d), "POISON");
	rcustring_set(&r->s, "POISON");
	rcustring_destroy(&r->s);
	free(r);
}

static void *churner(void *arg)
{
	int id = (int)(long)arg;
	struct reg *slots[SLOTS] = { 0 };
	unsigned int seed = (unsigned int)id * 7919u + 1;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int k = (int)(rand_r(&seed) % SLOTS);

		if (slots[k]) {
			sysctl_unregister_table(slots[k]->h);
			reg_free(slots[k]);
			slots[k] = NULL;
		} else {
			struct reg *r = reg_new(id, k);
			int err = sysctl_register_table(tree, r->path, r->tbl, 3, &r->h);

			if (err) {
				FAIL("register %s: %d\n", r->path, err);
				reg_free(r);
				continue;
			}
			slots[k] = r;
			__atomic_add_fetch(&stat_regs, 1, __ATOMIC_RELAXED);
		}
	}
	for (int k = 0; k < SLOTS; k++) {
		if (slots[k]) {
			sysctl_unregister_table(slots[k]->h);
			reg_free(slots[k]);
		}
	}
	return NULL;
}

/* Read @e and check the value; dead entries must say -ENOENT. */
static void check_read(struct sysctl_entry *e)
{
	char buf[STR_MAX + 1];
	size_t len = sizeof(buf) - 1;
	off_t pos = 0;
	int err = sysctl_entry_read(e, buf, &len, &pos);
	const char *name = sysctl_entry_name(e);

	if (err == -ENOENT) {
		if (sysctl_entry_live(e))
			FAIL("%s: -ENOENT from a live entry\n", sysctl_entry_path(e));
		__atomic_add_fetch(&stat_dead_reads, 1, __ATOMIC_RELAXED);
		return;
	}
	if (err) {
		FAIL("%s: read %d\n", sysctl_entry_path(e), err);
		return;
	}
	buf[len] = '\0';
	__atomic_add_fetch(&stat_reads, 1, __ATOMIC_RELAXED);
	if (!strcmp(name, "i") ? !whole_int(buf, len) :
				 !whole_string(buf, len, scale_of(name), "s-default"))
		FAIL("%s: bad value of %zu bytes \"%.40s...\"\n", sysctl_entry_path(e), len, buf);
}

static int walk_fn(struct sysctl_entry *e, void *arg)
{
	(void)arg;
	if (!sysctl_entry_live(e))
		return 0;
	check_read(e);
	__atomic_add_fetch(&stat_walked, 1, __ATOMIC_RELAXED);
	return 0;
}

static void *looker(void *arg)
{
	unsigned int seed = (unsigned int)(long)arg * 104729u + 3;
	struct sysctl_entry *held = NULL;
	char path[64];
	long iter = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int c = (int)(rand_r(&seed) % CHURNERS), k = (int)(rand_r(&seed) % SLOTS);
		int which = (int)(rand_r(&seed) % 3);
		const char *leaf = which == 0 ? "i" : which == 1 ? "s" : "d";
		struct sysctl_entry *e;

		snprintf(path, sizeof(path), rand_r(&seed) % 2 ? "churn/c%d/slot%d/%s" :
								  "churn.c%d.slot%d.%s",
			 c, k, leaf);
		e = sysctl_lookup(tree, path);
		if (!e) {
			if (errno != ENOENT)
				FAIL("lookup %s: errno %d\n", path, errno);
			__atomic_add_fetch(&stat_missing, 1, __ATOMIC_RELAXED);
			continue;
		}
		__atomic_add_fetch(&stat_found, 1, __ATOMIC_RELAXED);
		if (strcmp(sysctl_entry_name(e), leaf))
			FAIL("lookup %s found %s\n", path, sysctl_entry_path(e));
		check_read(e);
		if (iter % 4 == 0) {
			char v[STR_MAX];
			size_t len;
			off_t pos = 0;
			int err;

			if (which)
				len = pattern((int)(rand_r(&seed) % NPATTERNS), scale_of(leaf), v);
			else
				len = (size_t)snprintf(v, sizeof(v), "%ld", 1000 + iter % 100000);
			err = sysctl_entry_write(e, NULL, v, &len, &pos);
			if (err && !(err == -ENOENT && !sysctl_entry_live(e)))
				FAIL("write %s: %d\n", path, err);
			if (!err)
				__atomic_add_fetch(&stat_writes, 1, __ATOMIC_RELAXED);
		}
		/* Keep one reference across later unregisters, then use it. */
		if (held) {
			check_read(held);
			sysctl_entry_put(held);
		}
		held = e;
		if (iter % 64 == 0) {
			int err = sysctl_walk(tree, "churn", walk_fn, NULL);

			if (err && err != -ENOENT)
				FAIL("walk: %d\n", err);
		}
		iter++;
	}
	if (held)
		sysctl_entry_put(held);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = 2;
	pthread_t th[CHURNERS + LOOKERS];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
			return 2;
		}
	}
	tree = sysctl_tree_new();
	if (!tree)
		return 1;
	for (long i = 0; i < CHURNERS; i++)
		pthread_create(&th[i], NULL, churner, (void *)i);
	for (long i = 0; i < LOOKERS; i++)
		pthread_create(&th[CHURNERS + i], NULL, looker, (void *)i);
	usleep((useconds_t)(seconds * 1e6));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < CHURNERS + LOOKERS; i++)
		pthread_join(th[i], NULL);

	/* Everything was unregistered: the churn directories went too. */
	if (sysctl_lookup(tree, "churn") || errno != ENOENT)
		FAIL("churn directory left behind\n");
	sysctl_tree_free(tree);
	rcustring_barrier();
	printf("stress_tree: %ld registrations, %ld lookups found, %ld missing, %ld reads, "
	       "%ld dead reads, %ld writes, %ld walked, %ld failures\n",
	       stat_regs, stat_found, stat_missing, stat_reads, stat_dead_reads, stat_writes,
	       stat_walked, failures);
	if (!stat_regs || !stat_found || !stat_missing || !stat_reads)
		FAIL("the run did not exercise both outcomes\n");
	return failures ? 1 : 0;
}
