/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcustring-bench: what every scheme shares.
 *
 * A scheme is one way to share a string between reader threads and one
 * writer (a lock, a seqlock, RCU...). Every scheme reads through the same
 * reader_loop() and checks every read with the same value_torn(), so the
 * only thing that differs between two rows of the table is the scheme's own
 * read-side work.
 *
 * Every value written is one character repeated exactly len times ('a'...
 * then 'b'... alternately). A measured read is torn when its NUL is not at
 * len or its first and last characters differ: three loads, the same for
 * all. Under --validate every read is instead compared in full with the two
 * values written (a check, not a measurement: it costs a memcmp per read).
 */
#ifndef RCUSTRING_BENCH_H
#define RCUSTRING_BENCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#define VALUE_CAP 256   /* capacity of every shared buffer, NUL included */
#define MAX_READERS 256

struct reader_result {
	uint64_t reads;
	uint64_t torn;
	uint64_t cpu_ns;        /* thread CPU time spent in the timed loop */
};

/* One measurement: one scheme, one reader count, one writer pause, one size. */
struct run {
	const struct scheme *scheme;
	void *state;            /* the scheme's shared object */
	const char *values[2];  /* the two values written alternately */
	size_t len;             /* strlen of every value */
	long pause_ns;          /* writer pause between writes; 0: none (storm) */
	bool pause_spin;        /* busy-wait the pause (clock polling), not nanosleep */
	bool full_check;        /* compare every read with values[] in full */
	unsigned readers;
	int stop;               /* set by the main thread; polled relaxed */
	pthread_barrier_t start;
	struct reader_result res[MAX_READERS];
	uint64_t writes;
	/* writes so far, stored relaxed by the writer; own line, away from stop */
	uint64_t writes_live __attribute__((aligned(64)));
	uint64_t min_writes;    /* run at least until this many writes (--validate) */
	double wall_s;
	uint64_t pending_peak;  /* schemes with reset_peak/pending_peak only */
};

/* Argument of a reader thread. */
struct reader_arg {
	struct run *run;
	struct reader_result *res;
};

struct scheme {
	const char *name;
	/* Create r->state holding r->values[0]. Return 0 or -errno. */
	int (*setup)(struct run *r);
	void (*teardown)(struct run *r);
	/* Reader thread body: runs reader_loop() with the scheme's read. */
	void *(*reader)(void *arg);
	/* Publish one value; NULL: no writer (the baseline). 0 or -errno. */
	int (*write)(void *state, const char *value, size_t len);
	/* Writer thread hooks (RCU flavors that need registration), or NULL. */
	void (*thread_enter)(void);
	void (*thread_exit)(void);
	/* Old versions awaiting a grace period: restart / read the peak. */
	void (*reset_peak)(void);
	uint64_t (*pending_peak)(void);
};

/* Schemes, in table order (schemes.c, rcu.c, flavor.c). */
extern const struct scheme scheme_baseline, scheme_baseline_inplace, scheme_racy, scheme_mutex, scheme_rwlock,
	scheme_seqlock, scheme_rcu_copy, scheme_rcu_inplace, scheme_rcu_dup, scheme_rcu_copy_inline,
	scheme_rcu_inplace_inline,
	scheme_bp_copy, scheme_memb_copy, scheme_memb_auto_copy, scheme_bp_inplace, scheme_memb_inplace,
	scheme_memb_auto_inplace;

/* run.c: run @r for @seconds; fills the results in @r. 0 or -errno. */
int run_one(struct run *r, double seconds);

static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy-wait hint for spinning readers. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* What a reader expects: the length of both values and the values. */
struct expect {
	size_t len;
	const char *v0, *v1;
};

/*
 * The check every read of every scheme gets. Cheap form (@full false, the
 * measurement): the NUL is exactly at len and the first and last characters
 * agree. Written values never hold a NUL before len, so "NUL at len" is
 * "strlen == len" here, without a strnlen: an in-place reader pays only
 * these three loads, as a copying reader does on its copy. Full form (@full
 * true, --validate): the len + 1 bytes, NUL included, equal one of the two
 * values written, so a tear in the middle of a value is seen too. @full is
 * a constant in each instance of reader_loop(), so the measured loop has no
 * branch on it.
 */
static inline __attribute__((always_inline)) bool value_torn(const char *p, const struct expect *e,
							      bool full)
{
	if (full)
		return memcmp(p, e->v0, e->len + 1) != 0 && memcmp(p, e->v1, e->len + 1) != 0;
	return p[e->len] != '\0' || p[0] != p[e->len - 1];
}

/* The same check on a copy, whose length the copy returned (< 0: failed). */
static inline __attribute__((always_inline)) bool copy_torn(const char *buf, ssize_t n,
							     const struct expect *e, bool full)
{
	return (size_t)n != e->len || value_torn(buf, e, full);
}

/*
 * The copy every copying scheme makes: strnlen + memcpy, as rcustring_copy()
 * does. Bounded by the capacity so that a torn source cannot overrun. The
 * bound is hidden from the compiler, as the library's run-time size is:
 * knowing n < 256 it would inline memcpy as "rep movsq", which is slower on
 * this CPU than the library's call to glibc's memcpy and would handicap the
 * baseline.
 */
static inline ssize_t copy_value(char *buf, const char *src)
{
	size_t size = VALUE_CAP - 1, n;

	/*
	 * @src is hidden too: GCC 12 with -fsanitize=address, once this is
	 * inlined between a lock and an unlock call, takes the source for an
	 * object of size 0 and fails the build (-Warray-bounds,
	 * -Wstringop-overread). An empty asm costs no instruction.
	 */
	__asm__("" : "+r"(size), "+r"(src));
	n = strnlen(src, size);
	memcpy(buf, src, n + 1);
	return (ssize_t)n;
}

/*
 * Make the compiler believe @buf is read in full: otherwise it could drop a
 * copy whose only use is two bytes of it, and the baseline would be free.
 */
static inline void keep(const char *buf)
{
	__asm__ volatile("" : : "r"(buf) : "memory");
}

/*
 * A scheme's read function: always inlined into both loop instances, so
 * that @full is a constant there and the measured loop has no branch on it.
 */
#define READ_FN static inline __attribute__((always_inline)) bool

/* One read of a scheme: returns true when the value read was torn. */
typedef bool (*read_fn)(void *state, const struct expect *e, char *buf, bool full);

/*
 * The reader loop of every scheme. Inlined into each scheme's reader with its
 * read_fn, so no scheme pays an indirect call the others do not; @full is a
 * constant in each instance (see value_torn()).
 */
static inline __attribute__((always_inline)) void reader_loop(struct reader_arg *a, read_fn read_one,
							       bool full)
{
	struct run *r = a->run;
	void *state = r->state;
	const struct expect e = { r->len, r->values[0], r->values[1] };
	char buf[VALUE_CAP];
	uint64_t reads = 0, torn = 0, c0;

	/* One untimed read first: registration on first use, cold caches. */
	torn += read_one(state, &e, buf, full);
	pthread_barrier_wait(&r->start);
	c0 = thread_cpu_ns();
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		torn += read_one(state, &e, buf, full);
		reads++;
	}
	a->res->cpu_ns = thread_cpu_ns() - c0;
	a->res->reads = reads;
	a->res->torn = torn;
}

/* Both instances of the loop: the cheap check, or the full one (--validate). */
static inline __attribute__((always_inline)) void reader_loops(void *arg, read_fn read_one)
{
	struct reader_arg *a = arg;

	if (a->run->full_check)
		reader_loop(a, read_one, true);
	else
		reader_loop(a, read_one, false);
}

/* Define the reader thread of scheme @name from its read function. */
#define DEFINE_READER(name, read)                              \
	static void *name(void *arg)                           \
	{                                                      \
		reader_loops(arg, read);                       \
		return NULL;                                   \
	}

#endif /* RCUSTRING_BENCH_H */
