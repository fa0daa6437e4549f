/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * etcd_sync_holds() at scale, counting instead of timing (issue 40): a
 * reload asks it once per settings entry, and it used to look up every
 * applied key each time, so a reload with N keys in etcd made N * N
 * lookups. Mirrors N keys into N entries (no network: the values go through
 * the mirror's own apply, as a whole-prefix read does), asks holds() for
 * each entry and for some it does not hold, and counts the entries the
 * lookups compared (the test hook etcd_sync_held_probes). Fails when 20 000
 * keys cost more than 2.5 times what 10 000 do, when an answer is wrong, or
 * when a re-read of the same values searches the held set at all.
 *
 *   etcd-holds-count [N]   (default 10000; N and 2N are run)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_sync_int.h"

#define PREFIX "/holds/"

struct scale {
	struct sysctl_tree *tree;
	struct etcd_sync *sync;
	struct sysctl_table_header *hdr;
	struct ctl_table *rows;
	int *data;
	char (*names)[24];
};

static void quiet(void *arg, const char *msg)
{
	(void)arg, (void)msg;
}

static int setup(struct scale *sc, size_t n)
{
	struct etcd_sync_opts so = { .endpoints = "http://127.0.0.1:9", .prefix = PREFIX,
				     .host = "h", .log = quiet };

	memset(sc, 0, sizeof(*sc));
	sc->rows = calloc(n, sizeof(*sc->rows));
	sc->data = calloc(n, sizeof(*sc->data));
	sc->names = calloc(n, sizeof(*sc->names));
	sc->tree = sysctl_tree_new();
	if (!sc->rows || !sc->data || !sc->names || !sc->tree)
		return -1;
	for (size_t i = 0; i < n; i++) {
		snprintf(sc->names[i], sizeof(sc->names[i]), "k%zu", i);
		sc->rows[i] = (struct ctl_table){ .procname = sc->names[i], .data = &sc->data[i],
						  .maxlen = sizeof(int), .mode = 0644,
						  .proc_handler = proc_dointvec };
	}
	if (sysctl_register_table(sc->tree, "app", sc->rows, n, &sc->hdr))
		return -1;
	return etcd_sync_new(sc->tree, &so, &sc->sync) ? -1 : 0;
}

static void teardown(struct scale *sc)
{
	sysctl_unregister_table(sc->hdr);
	etcd_sync_stop(sc->sync);
	sysctl_tree_free(sc->tree);
	free(sc->rows);
	free(sc->data);
	free(sc->names);
}

/* The N keys' values through the mirror's apply, as a whole-prefix read
 * does (the dotted form for half: both name their entries). */
static void mirror(struct scale *sc, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char key[64], value[24];
		struct etcd_kv kv = { .key = key, .value = value, .mod_revision = (int64_t)i + 1 };

		kv.key_len = (size_t)snprintf(key, sizeof(key), PREFIX "app%ck%zu",
					      i % 2 ? '.' : '/', i);
		kv.value_len = (size_t)snprintf(value, sizeof(value), "%zu", i + 7);
		etcd_apply(sc->sync, &kv, true);
	}
}

/* Mirror N keys, then ask holds() for each entry; return the entries
 * compared, or -1. */
static long long run(size_t n)
{
	struct scale sc;
	long long probes = -1;
	uint64_t before;
	size_t wrong = 0;

	if (setup(&sc, n))
		goto out;
	mirror(&sc, n);
	/* A re-read that finds every value there: the held set is not searched
	 * again (a key's entry, once held, stays held). */
	before = etcd_sync_held_probes(sc.sync);
	mirror(&sc, n);
	if (etcd_sync_held_probes(sc.sync) != before) {
		fprintf(stderr, "FAIL: a re-read of %zu keys searched the held set %llu times\n", n,
			(unsigned long long)(etcd_sync_held_probes(sc.sync) - before));
		wrong++;
	}
	for (size_t i = 0; i < n; i++) {
		char path[48];

		snprintf(path, sizeof(path), i % 3 ? "app.k%zu" : "app/k%zu", i);
		wrong += !etcd_sync_holds(sc.sync, path) || sc.data[i] != (int)i + 7;
	}
	/* Not held: an entry etcd never set, and paths that name nothing. */
	wrong += etcd_sync_holds(sc.sync, "app") + etcd_sync_holds(sc.sync, "app.k") +
		 etcd_sync_holds(sc.sync, "nothing.here");
	if (wrong)
		fprintf(stderr, "FAIL: %zu wrong answers of holds() with %zu keys\n", wrong, n);
	else
		probes = (long long)etcd_sync_held_probes(sc.sync);
out:
	teardown(&sc);
	return probes;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	long long a = run(n), b = a < 0 ? -1 : run(2 * n);

	if (a <= 0 || b <= 0) {
		fprintf(stderr, "FAIL: the runs did not complete (%lld, %lld)\n", a, b);
		return 1;
	}
	printf("holds() with %zu keys: %lld entries compared; with %zu: %lld (x%.2f)\n", n, a,
	       2 * n, b, (double)b / (double)a);
	if ((double)b > 2.5 * (double)a) {
		printf("FAIL: more than 2.5 times the comparisons for twice the keys: quadratic\n");
		return 1;
	}
	printf("PASS: holds() is linear in the keys\n");
	return 0;
}
