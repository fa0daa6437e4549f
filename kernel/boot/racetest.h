/* SPDX-License-Identifier: GPL-2.0 */
/* What racetest's parts share: the run's parameters, small helpers, and
 * the writer thread that flips a tunable between two values.
 */
#ifndef RACETEST_H
#define RACETEST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

extern const char *kname;	/* kernel name printed on every line */
extern long want_reads, want_calls, want_helper_calls;
extern int ncpus;

double now(void);
void pin(int cpu);
void die(const char *what);
ssize_t read_file(const char *path, char *buf, size_t size);
int write_file(const char *path, const char *val);

struct writer {
	const char *path;
	const char *val[2];
	size_t len[2];
	int cpu;
	/* Write from a mount namespace of the writer thread's own, where the
	 * kernel refuses every "@" core_pattern (check_coredump_socket). */
	bool private_mntns;
	/* val[1] is one the kernel must refuse with EINVAL: such a failure
	 * is counted in refused instead of stopping the writer, and a write
	 * of it that succeeds in accepted. */
	bool refuse_b;
	atomic_bool stop;
	long writes, refused, accepted;
	int err;
	pthread_t thread;
};

void writer_start(struct writer *w, const char *path, const char *a,
		  const char *b);
void writer_start_opts(struct writer *w, const char *path, const char *a,
		       const char *b, bool private_mntns, bool refuse_b);
void writer_stop(struct writer *w, const char *tunable);

/* Phases and their progress lines, for boot-test's watchdog (progress.c):
 * phase_count() once, then per phase phase_begin(), phase_progress() as
 * work gets done (it prints at most every few seconds) and phase_end(). */
void phase_count(int total);
void phase_begin(const char *name, long want, const char *unit,
		 const char *what);
void phase_progress(long done);
void phase_end(long done);

/* Fork a child that crashes with SIGSEGV and wait for it (racetest.c). */
pid_t crash_one(bool *dumped);

/* The core_pattern lines of the socket forms (sockcore.c). */
void consume_core_socket(void);
void consume_core_refused(void);

/* Kernel messages: KCSAN reports copied to stdout (kmsg.c). */
void kmsg_watch_start(void);
void kmsg_watch_stop(void);

#endif
