/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fleet-bench: how fast a value put in etcd reaches a reader of a mirroring
 * tree, and how many values one instance applies per second.
 *
 *   fleet-bench URL [--changes N] [--batches B]
 *
 * One process: a tree, its etcd sync (prefix /rcustring-bench/PID/), and a
 * client of its own. Propagation: N times, put a new value and wait for the
 * entry's change notification, then check that a reader copies the new
 * value; the time runs from just before the put (its round trip included)
 * to the reader's copy. Apply rate: B transactions of 100 puts each (one
 * per entry, one revision per transaction), timed from the first put to
 * the last value applied; the put side is batched so that the figure is
 * the instance's, not the client's round trips. Prints
 *   summary fleet_propagation_p50_ms X
 *   summary fleet_propagation_p99_ms X
 *   summary fleet_applied_per_s X
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etcd_http.h"
#include "etcd_sync.h"

#define ENTRIES 100

static struct rcustring value = RCUSTRING_INITIALIZER(64, "none");
static int ints[ENTRIES];
static char names[ENTRIES][16];
static struct ctl_table one[] = {
	{ "value", &value, 64, 0644, proc_rcu_string, NULL, NULL, "propagation probe" },
};
static struct ctl_table many[ENTRIES];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "fleet-bench: %s\n", msg);
}

int main(int argc, char **argv)
{
	struct etcd_sync_opts so = { .log = quiet };
	struct sysctl_table_header *h1, *h2;
	struct etcd_sync_status st;
	struct sysctl_tree *tree;
	struct sysctl_entry *e;
	struct etcd_sync *sync;
	struct etcd_conn c;
	char prefix[64], key[128], want[64], got[64];
	int changes = 1000, batches = 50, err;
	double *lat, t0, t1;
	uint64_t base;

	if (argc < 2) {
		fprintf(stderr, "usage: %s URL [--changes N] [--batches B]\n", argv[0]);
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--changes"))
			changes = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--batches"))
			batches = atoi(argv[i + 1]);
	}
	if (changes < 1 || batches < 1)
		return 2;
	snprintf(prefix, sizeof(prefix), "/rcustring-bench/%d/", (int)getpid());
	so.endpoints = argv[1];
	so.prefix = prefix;
	so.host = "bench";
	for (int i = 0; i < ENTRIES; i++) {
		snprintf(names[i], sizeof(names[i]), "k%d", i);
		many[i] = (struct ctl_table){ names[i], &ints[i], sizeof(int), 0644, proc_dointvec,
					      NULL, NULL, "apply-rate probe" };
	}
	tree = sysctl_tree_new();
	if (!tree || sysctl_register_table(tree, "bench", one, 1, &h1) ||
	    sysctl_register_table(tree, "many", many, ENTRIES, &h2))
		return 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (etcd_conn_init(&c, argv[1], NULL) || etcd_sync_start(tree, &so, &sync))
		return 1;
	for (int i = 0; i < 200; i++) { /* 20 s hang guard for the first watch */
		etcd_sync_status(sync, &st);
		if (st.connected)
			break;
		usleep(100000);
	}
	if (!st.connected) {
		fprintf(stderr, "fleet-bench: no watch on %s\n", argv[1]);
		return 1;
	}

	lat = calloc((size_t)changes, sizeof(*lat));
	e = sysctl_lookup(tree, "bench/value");
	if (!lat || !e)
		return 1;
	snprintf(key, sizeof(key), "%sbench/value", prefix);
	for (int i = 0; i < changes; i++) {
		uint64_t seen = sysctl_entry_changes(e);

		snprintf(want, sizeof(want), "v%d", i);
		t0 = now_ms();
		err = etcd_put(&c, key, want, strlen(want), NULL);
		if (err) {
			fprintf(stderr, "fleet-bench: put: %s\n", c.err);
			return 1;
		}
		for (;;) {
			if (sysctl_entry_wait(e, seen, 10000) < 0) {
				fprintf(stderr, "fleet-bench: %s not applied within 10 s\n", want);
				return 1;
			}
			seen = sysctl_entry_changes(e);
			if (rcustring_copy(&value, got, sizeof(got)) >= 0 && !strcmp(got, want))
				break;
		}
		lat[i] = now_ms() - t0;
	}
	qsort(lat, (size_t)changes, sizeof(*lat), cmp_double);
	printf("propagation over %d changes: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", changes,
	       lat[changes / 2], lat[(size_t)((changes - 1) * 0.99)], lat[changes - 1]);
	printf("summary fleet_propagation_p50_ms %.3f\n", lat[changes / 2]);
	printf("summary fleet_propagation_p99_ms %.3f\n", lat[(size_t)((changes - 1) * 0.99)]);

	{
		static char kbuf[ENTRIES][128], vbuf[ENTRIES][16];
		const char *keys[ENTRIES], *vals[ENTRIES];

		etcd_sync_status(sync, &st);
		base = st.applied;
		t0 = now_ms();
		for (int b = 0; b < batches; b++) {
			for (int i = 0; i < ENTRIES; i++) {
				snprintf(kbuf[i], sizeof(kbuf[i]), "%smany/k%d", prefix, i);
				snprintf(vbuf[i], sizeof(vbuf[i]), "%d", b + 1);
				keys[i] = kbuf[i];
				vals[i] = vbuf[i];
			}
			if (etcd_put_many(&c, keys, vals, ENTRIES)) {
				fprintf(stderr, "fleet-bench: txn: %s\n", c.err);
				return 1;
			}
		}
		for (int i = 0; i < 600; i++) { /* 60 s hang guard */
			etcd_sync_status(sync, &st);
			if (st.applied - base >= (uint64_t)batches * ENTRIES)
				break;
			usleep(1000);
		}
		t1 = now_ms();
		if (st.applied - base < (uint64_t)batches * ENTRIES) {
			fprintf(stderr, "fleet-bench: only %llu of %d applied\n",
				(unsigned long long)(st.applied - base), batches * ENTRIES);
			return 1;
		}
		printf("applied %d values in %.1f ms\n", batches * ENTRIES, t1 - t0);
		printf("summary fleet_applied_per_s %.0f\n", batches * ENTRIES * 1e3 / (t1 - t0));
	}
	sysctl_entry_put(e);
	etcd_sync_stop(sync);
	sysctl_unregister_table(h1);
	sysctl_unregister_table(h2);
	sysctl_tree_free(tree);
	etcd_conn_free(&c);
	free(lat);
	rcustring_destroy(&value);
	rcustring_barrier();
	curl_global_cleanup();
	return 0;
}
