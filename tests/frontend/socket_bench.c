/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcustring-socket-bench: control socket round trips per second.
 *
 * A server on a temporary socket serves a small tree in this process;
 * clients (one per thread) send GET or SET and wait for each reply, so the
 * figure is round trips, not pipelined throughput. Runs GET and SET over
 * one connection and over four, then prints
 *   summary socket_roundtrips_per_s <n>
 * where n is the GET rate over four connections (what the server sustains;
 * one connection's rate is bounded by two thread wake-ups per round trip,
 * which on a busy machine cost more than the request itself).
 * Usage: rcustring-socket-bench [--seconds S] (default 1 per case)
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rcustring/sysctl_socket.h"
#include "socket_client.h"

static struct rcustring core_pattern = RCUSTRING_INITIALIZER(128, "core.%p");
static int swappiness = 60, sw_min = 0, sw_max = 200;
static struct ctl_table table[] = {
	{ "core_pattern", &core_pattern, 128, 0644, proc_rcu_string, NULL, NULL, "pattern" },
	{ "swappiness", &swappiness, sizeof(int), 0644, proc_dointvec_minmax, &sw_min, &sw_max, "" },
};

struct job {
	const char *path;
	bool set;
	double seconds;
	long done;
	int err;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *client_main(void *arg)
{
	struct job *j = arg;
	struct sock_client *c;
	double end;

	j->err = sock_client_connect(j->path, &c);
	if (j->err)
		return NULL;
	end = now() + j->seconds;
	while (!j->err) {
		/* Check the clock every 256 round trips only. */
		for (int i = 0; i < 256 && !j->err; i++, j->done++) {
			struct sock_reply r;

			if (j->set)
				j->err = sock_client_send(c, "SET", "kernel.core_pattern",
							  i & 1 ? "core.%p" : "core.%e", 7);
			else
				j->err = sock_client_send(c, "GET", "kernel.core_pattern", NULL, 0);
			if (!j->err)
				j->err = sock_client_reply(c, &r);
			if (!j->err && r.kind != SOCK_REPLY_OK)
				j->err = r.err ? r.err : -1;
		}
		if (now() >= end)
			break;
	}
	sock_client_close(c);
	return NULL;
}

static double run(const char *path, bool set, int conns, double seconds)
{
	struct job jobs[4];
	pthread_t t[4];
	double start = now(), rate;
	long total = 0;

	for (int i = 0; i < conns; i++) {
		jobs[i] = (struct job){ .path = path, .set = set, .seconds = seconds };
		if (pthread_create(&t[i], NULL, client_main, &jobs[i]) != 0) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < conns; i++) {
		pthread_join(t[i], NULL);
		if (jobs[i].err) {
			fprintf(stderr, "socket-bench: client error %d\n", jobs[i].err);
			exit(1);
		}
		total += jobs[i].done;
	}
	rate = (double)total / (now() - start);
	printf("%-3s over %d connection%s: %10.0f round trips/s (%ld in all)\n", set ? "SET" : "GET",
	       conns, conns > 1 ? "s" : " ", rate, total);
	return rate;
}

int main(int argc, char **argv)
{
	struct sysctl_table_header *h;
	struct sysctl_tree *tree;
	struct sysctl_socket *srv;
	char dir[] = "/tmp/rcs-bench-XXXXXX", path[64];
	double seconds = 1, get4;
	int err;

	if (argc == 3 && strcmp(argv[1], "--seconds") == 0)
		seconds = atof(argv[2]);
	if (seconds <= 0 || (argc != 1 && argc != 3)) {
		fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
		return 2;
	}
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/control.sock", dir);
	tree = sysctl_tree_new();
	if (!tree || sysctl_register_table(tree, "kernel", table, 2, &h))
		return 1;
	err = sysctl_socket_start(tree, path, 0600, &srv);
	if (err) {
		fprintf(stderr, "socket-bench: %s: %s\n", path, strerror(-err));
		return 1;
	}
	run(path, false, 1, seconds);
	run(path, true, 1, seconds);
	get4 = run(path, false, 4, seconds);
	run(path, true, 4, seconds);
	sysctl_socket_stop(srv);
	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
	rmdir(dir);
	rcustring_destroy(&core_pattern);
	rcustring_barrier();
	printf("summary socket_roundtrips_per_s %.0f\n", get4);
	return 0;
}
