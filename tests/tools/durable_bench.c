/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd-durable-bench: acknowledged durable writes per second through
 * the control socket, with rcusysd's store (tools/rcusysd/persist.h) as
 * the tree's commit hook, in this process.
 *
 * Three trees side by side, each with its own socket: 100 kept values, 100
 * 000 kept values (the journal written directly, then restored at open, so
 * setting up costs no 100 000 fsyncs), and 100 values with no store. Clients
 * (one thread and connection each) send SET and wait for each OK, each on
 * its own key; the 100 000 case spreads one client's writes over every key.
 * Cases run interleaved, REPS repetitions, the order rotating, so a burst
 * of load hits each alike; each ratio is the median of its per-repetition
 * ratios. Ends with
 *   summary durable_writes_100k_vs_100 R     (target >= 0.8)
 *   summary durable_group_commit_16_vs_1 R   (target >= 10)
 *   summary durable_vs_nopersist R           (recorded; this machine's
 *                                             fdatasync cost beside it)
 * Usage: rcusysd-durable-bench [--seconds S] [--reps N] (default 1 s, 7)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rcustring/sysctl_socket.h"
#include "journal.h"
#include "log.h"
#include "persist.h"
#include "socket_client.h"

#define PER_DIR 1000
#define MAX_CLIENTS 16
#define MAX_REPS 15

struct side {
	unsigned int n;
	int *values;
	struct ctl_table *rows;
	char (*names)[16];
	struct sysctl_table_header **h;
	struct sysctl_tree *tree;
	struct persist *store;
	struct sysctl_socket *srv;
	char sock[128];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "durable-bench: %s\n", what);
	exit(1);
}

static void key_of(unsigned int i, char *buf, size_t size)
{
	snprintf(buf, size, "app.d%03u.t%06u", i / PER_DIR, i);
}

/* A journal keeping @n values, as a store that took @n writes would hold it. */
static void write_journal(const char *path, unsigned int n)
{
	struct journal_buf b = { 0 };
	char key[32];
	int fd;

	if (journal_put_magic(&b))
		die("out of memory");
	for (unsigned int i = 0; i < n; i++) {
		struct journal_rec r = { .op = JOURNAL_SET, .time = time(NULL), .key = key,
					 .value = "7\n", .value_len = 2 };

		key_of(i, key, sizeof(key));
		r.key_len = strlen(key);
		if (journal_put(&b, &r))
			die("out of memory");
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, b.data, b.len) != (ssize_t)b.len || close(fd))
		die("cannot write the journal");
	journal_buf_free(&b);
}

static void side_start(struct side *s, const char *dir, const char *name, unsigned int n,
		       bool store)
{
	char path[256], why[256];

	s->n = n;
	s->values = calloc(n, sizeof(*s->values));
	s->rows = calloc(n, sizeof(*s->rows));
	s->names = calloc(n, sizeof(*s->names));
	s->h = calloc((n + PER_DIR - 1) / PER_DIR, sizeof(*s->h));
	s->tree = sysctl_tree_new();
	if (!s->values || !s->rows || !s->names || !s->h || !s->tree)
		die("out of memory");
	for (unsigned int i = 0; i < n; i++) {
		snprintf(s->names[i], sizeof(s->names[i]), "t%06u", i);
		s->rows[i] = (struct ctl_table){ .procname = s->names[i], .data = &s->values[i],
						 .maxlen = sizeof(int), .mode = 0644,
						 .proc_handler = proc_dointvec };
	}
	for (unsigned int d = 0; d * PER_DIR < n; d++) {
		snprintf(path, sizeof(path), "app.d%03u", d);
		if (sysctl_register_table(s->tree, path, s->rows + d * PER_DIR,
					  n - d * PER_DIR < PER_DIR ? n - d * PER_DIR : PER_DIR, &s->h[d]))
			die("cannot register the tunables");
	}
	if (store) {
		snprintf(path, sizeof(path), "%s/%s/state.conf", dir, name);
		snprintf(why, sizeof(why), "%s/%s", dir, name);
		if (mkdir(why, 0755))
			die("mkdir");
		write_journal(path, n);
		if (persist_open(s->tree, path, &s->store, why, sizeof(why)) ||
		    persist_apply(s->store) || persist_watch(s->store))
			die(why);
	}
	snprintf(s->sock, sizeof(s->sock), "%s/%s.sock", dir, name);
	if (sysctl_socket_start(s->tree, s->sock, 0600, &s->srv))
		die("cannot start the socket server");
}

static void side_stop(struct side *s)
{
	sysctl_socket_stop(s->srv);
	persist_close(s->store);
	for (unsigned int d = 0; d * PER_DIR < s->n; d++)
		sysctl_unregister_table(s->h[d]);
	sysctl_tree_free(s->tree);
	free(s->values), free(s->rows), free(s->names), free(s->h);
}

struct job {
	struct side *side;
	unsigned int first, step;
	double seconds;
	long done;
	int err;
};

static void *client_main(void *arg)
{
	struct job *j = arg;
	struct sock_client *c;
	unsigned int k = j->first;
	char key[32], value[16];
	double end;

	j->err = sock_client_connect(j->side->sock, &c);
	if (j->err)
		return NULL;
	end = now() + j->seconds;
	while (!j->err && now() < end) {
		struct sock_reply r;
		int n = snprintf(value, sizeof(value), "%ld", j->done % 1000);

		key_of(k, key, sizeof(key));
		j->err = sock_client_send(c, "SET", key, value, (size_t)n);
		if (!j->err)
			j->err = sock_client_reply(c, &r);
		if (!j->err && r.kind != SOCK_REPLY_OK)
			j->err = r.err ? r.err : -1;
		j->done++;
		k = (k + j->step) % j->side->n;
	}
	sock_client_close(c);
	return NULL;
}

/* Acknowledged writes per second of @clients clients on @s. */
static double run(struct side *s, int clients, unsigned int step, double seconds)
{
	struct job jobs[MAX_CLIENTS];
	pthread_t t[MAX_CLIENTS];
	double start = now();
	long total = 0;

	for (int i = 0; i < clients; i++) {
		jobs[i] = (struct job){ .side = s, .first = (unsigned int)i, .step = step,
					.seconds = seconds };
		if (pthread_create(&t[i], NULL, client_main, &jobs[i]))
			die("pthread_create");
	}
	for (int i = 0; i < clients; i++) {
		pthread_join(t[i], NULL);
		if (jobs[i].err)
			die("a client's SET failed");
		total += jobs[i].done;
	}
	return (double)total / (now() - start);
}

/* Median µs of an fdatasync after a 1-byte append in @dir: the floor of one durable write. */
static double fsync_us(const char *dir)
{
	char path[256];
	double t[64];
	int fd;

	snprintf(path, sizeof(path), "%s/fsync-probe", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (fd < 0)
		die("cannot open the fsync probe");
	for (int i = 0; i < 64; i++) {
		double t0 = now();

		if (write(fd, "x", 1) != 1 || fdatasync(fd))
			die("fsync probe");
		t[i] = (now() - t0) * 1e6;
	}
	close(fd);
	unlink(path);
	for (int i = 1; i < 64; i++)
		for (int k = i; k > 0 && t[k] < t[k - 1]; k--) {
			double x = t[k];

			t[k] = t[k - 1], t[k - 1] = x;
		}
	return t[32];
}

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && v[k] < v[k - 1]; k--) {
			double x = v[k];

			v[k] = v[k - 1], v[k - 1] = x;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { C_100, C_100K, C_G1, C_G16, C_OFF, C_COUNT };
static const char *const case_names[] = { "100 kept, 1 client", "100 000 kept, 1 client",
					  "100 kept, 1 client (group)", "100 kept, 16 clients",
					  "no store, 1 client" };

int main(int argc, char **argv)
{
	char dir[] = "/tmp/durable-bench-XXXXXX", cmd[64];
	double seconds = 1, rate[C_COUNT][MAX_REPS], r1[MAX_REPS], r2[MAX_REPS], r3[MAX_REPS];
	struct side small, big, off;
	int reps = 7;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
	}
	if (seconds <= 0 || reps < 1 || reps > MAX_REPS || argc % 2 == 0)
		die("usage: rcusysd-durable-bench [--seconds S] [--reps N (1..15)]");
	log_set_level(LOG_WARNING);
	if (!mkdtemp(dir))
		die("mkdtemp");
	side_start(&small, dir, "small", 100, true);
	side_start(&big, dir, "big", 100000, true);
	side_start(&off, dir, "off", 100, false);
	for (int rep = 0; rep < reps; rep++)
		for (int c = 0; c < C_COUNT; c++) {
			int k = (c + rep) % C_COUNT;

			rate[k][rep] = k == C_100   ? run(&small, 1, 37, seconds) :
				       k == C_100K  ? run(&big, 1, 7919, seconds) :
				       k == C_G1    ? run(&small, 1, 0, seconds) :
				       k == C_G16   ? run(&small, 16, 0, seconds) :
						      run(&off, 1, 37, seconds);
		}
	for (int c = 0; c < C_COUNT; c++) {
		double v[MAX_REPS];

		memcpy(v, rate[c], sizeof(v));
		printf("%-28s %9.0f acknowledged writes/s (median of %d)\n", case_names[c],
		       median(v, reps), reps);
	}
	for (int rep = 0; rep < reps; rep++) {
		r1[rep] = rate[C_100K][rep] / rate[C_100][rep];
		r2[rep] = rate[C_G16][rep] / rate[C_G1][rep];
		r3[rep] = rate[C_100][rep] / rate[C_OFF][rep];
	}
	printf("summary durable_writes_100k_vs_100 %.2f # target >= 0.8; writes/s with 100 000 kept values "
	       "over 100, one client; median of %d interleaved\n", median(r1, reps), reps);
	printf("summary durable_group_commit_16_vs_1 %.2f # target >= 10; writes/s of 16 socket clients "
	       "over one, 100 kept; median of %d interleaved\n", median(r2, reps), reps);
	printf("summary durable_vs_nopersist %.4f # recorded; one client, store over none; fdatasync of "
	       "a 1-byte append here: %.0f us\n", median(r3, reps), fsync_us(dir));
	side_stop(&small);
	side_stop(&big);
	side_stop(&off);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "durable-bench: cannot remove %s\n", dir);
	return 0;
}
