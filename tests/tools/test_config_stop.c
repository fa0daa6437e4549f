/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A reload of rcusysd's configuration (tools/rcusysd/config.h) answers
 * while one big file is parsed (issue 40), proved without timing: a
 * reload of N tunables and N settings, each in one file, runs in a thread
 * whose stop callback records where it is asked (which file, which line)
 * and, once the settings file's parse is half done, pauses the reload
 * there. While it is paused a reset must get its answer (if the parse held
 * the configuration's lock the reset would wait for ever: a 60 s guard
 * fails it) and set the entry to the old settings' value (the new set is
 * not swapped in yet). Then the callback says stop: the reload returns
 * -EINTR with the new settings not applied. The stop must have been asked
 * inside both files' parses, every few hundred lines; with the stop
 * points removed the test fails ("never asked inside ...").
 *   config-stop [N]   (default 20 000)
 * config-stop --gaps N (make bench, bench/reload_answer.sh): a whole
 * reload of N, printing the longest stretch between two asks of the stop
 * in the reload thread's CPU time (what a SIGTERM waits for at most, the
 * load's queueing aside) and in wall time, and where it ended.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rcustring/sysctl.h>

#include "config.h"
#include "log.h"

static int nfailed, nchecks;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		nchecks++;                                                                         \
		if (!(cond)) {                                                                     \
			nfailed++;                                                                 \
			printf("FAIL: ");                                                          \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

struct pause {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	const char *tunables, *settings; /* the two files' paths */
	unsigned pause_at;               /* the settings line to pause at */
	unsigned long asked_tunables, asked_settings, asked_between;
	unsigned max_gap;     /* the most settings lines between two asks */
	unsigned last_line;   /* the settings line of the last ask */
	bool paused, go, stop_now;
	struct config *c;
	int reload_ret, reset_ret;
	bool reload_done, reset_done;
};

/* The reload's stop: records where it is asked; pauses once in the settings file. */
static bool test_stop(void *arg, const char *file, unsigned line)
{
	struct pause *p = arg;
	bool stop;

	pthread_mutex_lock(&p->lock);
	if (file && !strcmp(file, p->tunables) && line) {
		p->asked_tunables++;
	} else if (file && !strcmp(file, p->settings) && line) {
		p->asked_settings++;
		if (line - p->last_line > p->max_gap)
			p->max_gap = line - p->last_line;
		p->last_line = line;
	} else {
		p->asked_between++;
	}
	if (file && !strcmp(file, p->settings) && line >= p->pause_at && !p->paused) {
		p->paused = true;
		pthread_cond_broadcast(&p->cond);
		while (!p->go)
			pthread_cond_wait(&p->cond, &p->lock);
	}
	stop = p->stop_now;
	pthread_mutex_unlock(&p->lock);
	return stop;
}

static void *reloader(void *arg)
{
	struct pause *p = arg;
	int ret = config_reload(p->c, test_stop, p);

	pthread_mutex_lock(&p->lock);
	p->reload_ret = ret;
	p->reload_done = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void *resetter(void *arg)
{
	struct pause *p = arg;
	char why[256] = "";
	int ret = config_reset(p->c, "app/t000001", why, sizeof(why));

	pthread_mutex_lock(&p->lock);
	p->reset_ret = ret;
	p->reset_done = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Waits (p->lock held) until *@flag, for at most 60 s: a hang guard, not a timing. */
static bool wait_flag(struct pause *p, const bool *flag)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	while (!*flag)
		if (pthread_cond_timedwait(&p->cond, &p->lock, &until) == ETIMEDOUT)
			return false;
	return true;
}

/* Writes N lines of FORMAT(i, i + @offset) to @path. */
static int write_lines(const char *path, const char *format, long n, long offset)
{
	FILE *f = fopen(path, "w");

	for (long i = 0; f && i < n; i++)
		fprintf(f, format, i, i + offset);
	return f && fclose(f) == 0 ? 0 : -1;
}

static long value_of(struct sysctl_tree *tree, const char *path)
{
	char buf[64];

	return sysctl_get(tree, path, buf, sizeof(buf)) > 0 ? atol(buf) : -1;
}

/* The paused reload, the reset during it, and the stop. */
static void pause_reset_stop(struct pause *p, struct sysctl_tree *tree, const char *last, long n)
{
	pthread_t rt, st;
	bool reset_answered;

	pthread_create(&rt, NULL, reloader, p);
	pthread_mutex_lock(&p->lock);
	CHECK(wait_flag(p, &p->paused), "the reload never paused inside the settings file's parse "
	      "(its stop was never asked there after line %u)", p->pause_at);
	pthread_mutex_unlock(&p->lock);
	if (p->paused) {
		pthread_create(&st, NULL, resetter, p);
		pthread_mutex_lock(&p->lock);
		reset_answered = wait_flag(p, &p->reset_done);
		CHECK(reset_answered, "a reset got no answer in 60 s while the settings file's parse "
		      "was paused: the parse holds what a reset needs");
		CHECK(!reset_answered || p->reset_ret == 0, "the reset failed: %d", p->reset_ret);
		pthread_mutex_unlock(&p->lock);
		CHECK(value_of(tree, "app/t000001") == 8, "the reset set app.t000001 to %ld, "
		      "expected the old settings' 8 (the new set is not in yet)",
		      value_of(tree, "app/t000001"));
	}
	pthread_mutex_lock(&p->lock);
	p->stop_now = true;
	p->go = true;
	pthread_cond_broadcast(&p->cond);
	CHECK(wait_flag(p, &p->reload_done), "the reload did not end in 60 s once told to stop");
	pthread_mutex_unlock(&p->lock);
	pthread_join(rt, NULL);
	if (p->reset_done)
		pthread_join(st, NULL);
	CHECK(p->reload_ret == -EINTR, "the stopped reload returned %d, expected -EINTR",
	      p->reload_ret);
	CHECK(value_of(tree, last) == n - 1 + 7, "%s is %ld after the stopped reload, expected the "
	      "old settings' %ld", last, value_of(tree, last), n - 1 + 7);
}

static void where_asked(const struct pause *p, long n)
{
	printf("config-stop: stop asked %lu times in the tunables file, %lu in the settings file "
	       "(at most %u lines apart), %lu between files and entries\n", p->asked_tunables,
	       p->asked_settings, p->max_gap, p->asked_between);
	CHECK(p->asked_tunables >= (unsigned long)n / 1024, "stop never asked inside the tunables "
	      "file's parse of %ld lines (asked %lu times)", n, p->asked_tunables);
	CHECK(p->asked_settings >= 2 && p->max_gap <= 1024, "stop not asked every few hundred lines "
	      "of the settings file (%lu times, at most %u lines apart)", p->asked_settings,
	      p->max_gap);
}

/* --gaps: the longest stretch between asks, CPU and wall. */
struct gaps {
	double cpu_last, wall_last, cpu_max, wall_max;
	char where[200], last[96];
	unsigned long asks;
};

static double clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool gap_stop(void *arg, const char *file, unsigned line)
{
	struct gaps *g = arg;
	double cpu = clock_ms(CLOCK_THREAD_CPUTIME_ID), wall = clock_ms(CLOCK_MONOTONIC);

	char here[96];

	snprintf(here, sizeof(here), "%s:%u", file ? strrchr(file, '/') + 1 : "entries", line);
	if (cpu - g->cpu_last > g->cpu_max) {
		g->cpu_max = cpu - g->cpu_last;
		snprintf(g->where, sizeof(g->where), "%s to %s", g->asks ? g->last : "start", here);
	}
	snprintf(g->last, sizeof(g->last), "%s", here);
	if (wall - g->wall_last > g->wall_max)
		g->wall_max = wall - g->wall_last;
	g->cpu_last = cpu;
	g->wall_last = wall;
	g->asks++;
	return false;
}

/* Resets, one after another, during the reload: each one's wall time. */
struct resets {
	struct config *c;
	int done; /* atomic: the reload ended */
	double ms[4096], max;
	int n;
};

static void *reset_loop(void *arg)
{
	struct resets *r = arg;
	char why[256];

	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) && r->n < 4096) {
		double t0 = clock_ms(CLOCK_MONOTONIC);

		config_reset(r->c, "app/t000001", why, sizeof(why));
		r->ms[r->n] = clock_ms(CLOCK_MONOTONIC) - t0;
		if (r->ms[r->n] > r->max)
			r->max = r->ms[r->n];
		r->n++;
		usleep(1000);
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One whole reload of the configuration @c (settings in @spath changed to @offset). */
static int gaps(struct config *c, const char *spath, long n)
{
	static struct resets r;
	struct gaps g = { 0 };
	double cpu0, wall0;
	pthread_t t;
	int ret;

	if (write_lines(spath, "app.t%06ld = %ld\n", n, 9))
		return 1;
	r.c = c;
	cpu0 = g.cpu_last = clock_ms(CLOCK_THREAD_CPUTIME_ID);
	wall0 = g.wall_last = clock_ms(CLOCK_MONOTONIC);
	pthread_create(&t, NULL, reset_loop, &r);
	ret = config_reload(c, gap_stop, &g);
	__atomic_store_n(&r.done, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	if (ret || !r.n)
		return 1;
	gap_stop(&g, NULL, 0); /* the stretch after the last ask */
	qsort(r.ms, (size_t)r.n, sizeof(r.ms[0]), cmp_double);
	printf("config-stop: %d resets (in process) during the reload: median %.3f ms, max %.3f ms\n",
	       r.n, r.ms[r.n / 2], r.max);
	printf("summary reload_100k_reset_inproc_max_ms %.3f # config_reset() during a reload of "
	       "%ld, one after another; median %.3f of %d\n", r.max, n, r.ms[r.n / 2], r.n);
	printf("config-stop: a reload of %ld took %.0f ms CPU, %.0f ms wall; the stop asked %lu "
	       "times, at most %.2f ms CPU apart (the longest from %s), %.2f ms wall\n", n,
	       clock_ms(CLOCK_THREAD_CPUTIME_ID) - cpu0, clock_ms(CLOCK_MONOTONIC) - wall0, g.asks,
	       g.cpu_max, g.where, g.wall_max);
	printf("summary reload_100k_stop_gap_cpu_ms %.2f # the longest CPU stretch between two "
	       "stop points of a reload of %ld (from %s)\n", g.cpu_max, n, g.where);
	return 0;
}

int main(int argc, char **argv)
{
	bool gap_mode = argc > 2 && !strcmp(argv[1], "--gaps");
	long n = argc > 1 ? atol(argv[argc - 1]) : 20000;
	char dir[] = "/tmp/config-stop.XXXXXX", tpath[64], spath[64], last[32];
	struct config_files files = { .sysctl_dirs = "", .tunables_dirs = "" };
	struct pause p = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct sysctl_tree *tree = sysctl_tree_new();

	if (n < 2048 || !tree || !mkdtemp(dir))
		return 2;
	log_set_level(LOG_WARNING); /* not a line per value applied */
	snprintf(tpath, sizeof(tpath), "%s/tunables.conf", dir);
	snprintf(spath, sizeof(spath), "%s/settings.conf", dir);
	snprintf(last, sizeof(last), "app/t%06ld", n - 1);
	files.tunables[files.ntunables++] = p.tunables = tpath;
	files.configs[files.nconfigs++] = p.settings = spath;
	p.pause_at = (unsigned)n / 2;
	if (write_lines(tpath, "app.t%06ld int default=%ld\n", n, 0) ||
	    write_lines(spath, "app.t%06ld = %ld\n", n, 7) || config_start(tree, &files, &p.c)) {
		printf("FAIL: setting up %s\n", dir);
		return 1;
	}
	config_set_layers(p.c, NULL, NULL);
	if (gap_mode)
		return gaps(p.c, spath, n);
	CHECK(value_of(tree, "app/t000001") == 8, "the start set app.t000001 to %ld, expected 8",
	      value_of(tree, "app/t000001"));
	/* A runtime write for the reset to drop, and new settings for the reload. */
	sysctl_set(tree, "app/t000001", "555", 3, NULL);
	if (write_lines(spath, "app.t%06ld = %ld\n", n, 9))
		return 1;
	pause_reset_stop(&p, tree, last, n);
	where_asked(&p, n);
	/* A reload with no stop still applies everything. */
	CHECK(config_reload(p.c, NULL, NULL) == 0, "a reload with no stop failed");
	CHECK(value_of(tree, last) == n - 1 + 9, "%s is %ld after a whole reload, expected %ld",
	      last, value_of(tree, last), n - 1 + 9);
	config_free(p.c);
	sysctl_tree_free(tree);
	unlink(tpath);
	unlink(spath);
	rmdir(dir);
	printf("config-stop: %d checks, %d failed\n", nchecks, nfailed);
	return nfailed ? 1 : 0;
}
