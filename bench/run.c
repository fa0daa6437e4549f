/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One measurement: start the readers and the writer, release them together,
 * let them run, stop them, collect what they counted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "bench.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Busy-wait @ns nanoseconds on the monotonic clock (no sleep, no slack). */
static void spin_ns(long ns)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		cpu_relax();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

/*
 * Writes the two values alternately, pausing r->pause_ns after each:
 * nanosleep, whose floor here is tens of microseconds, or a busy wait
 * (pause_spin), which really gives one write per pause + write time.
 */
static void *writer_main(void *arg)
{
	struct run *r = arg;
	const struct scheme *s = r->scheme;
	struct timespec pause = { r->pause_ns / 1000000000, r->pause_ns % 1000000000 };
	uint64_t n = 0;
	int err;

	/* Default 50 us timer slack would turn a 1 us pause into ~60 us. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (s->thread_enter)
		s->thread_enter();
	pthread_barrier_wait(&r->start);
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		n++;
		err = s->write(r->state, r->values[n & 1], r->len);
		if (err) {
			fprintf(stderr, "rcustring-bench: %s: write failed: %s\n", s->name,
				strerror(-err));
			exit(1);
		}
		__atomic_store_n(&r->writes_live, n, __ATOMIC_RELAXED);
		if (r->pause_ns && r->pause_spin)
			spin_ns(r->pause_ns);
		else if (r->pause_ns)
			nanosleep(&pause, NULL);
	}
	r->writes = n;
	if (s->thread_exit)
		s->thread_exit();
	return NULL;
}

int run_one(struct run *r, double seconds)
{
	const struct scheme *s = r->scheme;
	struct reader_arg args[MAX_READERS];
	pthread_t readers[MAX_READERS], writer;
	unsigned started = 0;
	bool has_writer = s->write != NULL;
	struct timespec span = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	double t0;
	int err;

	if (r->readers == 0 || r->readers > MAX_READERS)
		return -EINVAL;
	err = s->setup(r);
	if (err)
		return err;
	if (s->reset_peak)
		s->reset_peak();
	r->stop = 0;
	r->writes = 0;
	r->writes_live = 0;
	pthread_barrier_init(&r->start, NULL, r->readers + has_writer + 1);
	for (; started < r->readers; started++) {
		args[started] = (struct reader_arg){ .run = r, .res = &r->res[started] };
		err = -pthread_create(&readers[started], NULL, s->reader, &args[started]);
		if (err)
			goto fail;
	}
	if (has_writer) {
		err = -pthread_create(&writer, NULL, writer_main, r);
		if (err)
			goto fail;
	}
	pthread_barrier_wait(&r->start);
	t0 = now_s();
	nanosleep(&span, NULL);
	/*
	 * --validate: a torn count of 0 means nothing unless values changed
	 * under the readers, so run on until the writer has written
	 * min_writes values, however busy the machine (60 s: a hang guard).
	 */
	for (int ms = 0; has_writer && ms < 60000 &&
			 __atomic_load_n(&r->writes_live, __ATOMIC_RELAXED) < r->min_writes;
	     ms++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
	r->wall_s = now_s() - t0;
	for (unsigned i = 0; i < started; i++)
		pthread_join(readers[i], NULL);
	if (has_writer)
		pthread_join(writer, NULL);
	pthread_barrier_destroy(&r->start);
	/* Before teardown: destroying the variable retires one more version. */
	r->pending_peak = s->pending_peak ? s->pending_peak() : 0;
	s->teardown(r);
	return 0;
fail:
	/* Threads already started wait at the barrier forever: give up. */
	fprintf(stderr, "rcustring-bench: %s: cannot start threads: %s\n", s->name, strerror(-err));
	exit(1);
}
