/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Flavor comparison: the rcustring copy read, rebuilt on one liburcu flavor
 * inside the benchmark itself, so that bp (what the library uses, threads
 * register on first use), memb with every thread registered explicitly, and
 * memb with registration managed for the caller (a thread-local flag tested
 * on every read lock and call_rcu, registration on a thread's first use, a
 * pthread key whose destructor unregisters the thread at exit: what the
 * library would do on memb so that readers still need no registration call)
 * are compared with the same code, the same inlining and the same TLS access.
 *
 * Compiled three times by bench/meson.build: -DBENCH_FLAVOR_MEMB gives
 * scheme_memb_copy, with -DBENCH_FLAVOR_AUTO as well scheme_memb_auto_copy,
 * neither scheme_bp_copy; each with its in-place twin (scheme_*_inplace),
 * the read rcustring in-place makes, on that flavor. Each build includes only its own flavor's header
 * (the headers map the same rcu_* names) and calls the urcu_<flavor>_*
 * functions by their prefixed names.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_FLAVOR_MEMB
#include <pthread.h>
#include <urcu/urcu-memb.h>
#define FL(x) urcu_memb_##x
#ifdef BENCH_FLAVOR_AUTO
#define FLAVOR_SCHEME scheme_memb_auto_copy
#define FLAVOR_INPLACE scheme_memb_auto_inplace
#define FLAVOR_NAME "urcu memb auto"
#else
#define FLAVOR_SCHEME scheme_memb_copy
#define FLAVOR_INPLACE scheme_memb_inplace
#define FLAVOR_NAME "urcu memb"
#endif
#else
#include <urcu-bp.h>
#define FL(x) urcu_bp_##x
#define FLAVOR_SCHEME scheme_bp_copy
#define FLAVOR_INPLACE scheme_bp_inplace
#define FLAVOR_NAME "urcu bp"
#endif

#include "bench.h"

/* A published value, with its rcu_head in front like the library's buffers. */
struct fbuf {
	struct rcu_head rcu;
	char str[VALUE_CAP];
};

struct fstring {
	struct fbuf *value;
};

#ifdef BENCH_FLAVOR_AUTO
/* Managed registration: the thread-local flag every read lock tests. */
static __thread bool registered;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void unregister_at_exit(void *unused)
{
	(void)unused;
	FL(unregister_thread)();
	registered = false;
}

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, unregister_at_exit))
		abort();
}

static __attribute__((noinline, cold)) void register_slow(void)
{
	pthread_once(&exit_key_once, make_exit_key);
	FL(register_thread)();
	/* Any non-NULL value: the destructor runs only for those. */
	if (pthread_setspecific(exit_key, &registered))
		abort();
	registered = true;
}

static inline void ensure_registered(void)
{
	if (__builtin_expect(!registered, 0))
		register_slow();
}
#else
static inline void ensure_registered(void)
{
}
#endif

static uint64_t pending, peak;

static struct fbuf *fbuf_new(const char *value)
{
	struct fbuf *b = malloc(sizeof(*b));

	if (b)
		strcpy(b->str, value);
	return b;
}

static void fbuf_free_rcu(struct rcu_head *head)
{
	free(caa_container_of(head, struct fbuf, rcu));
	__atomic_sub_fetch(&pending, 1, __ATOMIC_RELAXED);
}

static void retire(struct fbuf *old)
{
	uint64_t p = __atomic_add_fetch(&pending, 1, __ATOMIC_RELAXED);

	ensure_registered(); /* call_rcu takes a read lock inside */

	/* Only the one writer raises the peak: a plain max is enough. */
	if (p > __atomic_load_n(&peak, __ATOMIC_RELAXED))
		__atomic_store_n(&peak, p, __ATOMIC_RELAXED);
	FL(call_rcu)(&old->rcu, fbuf_free_rcu);
}

/* Explicit registration: the memb scheme's threads, around their work. */
static void thread_enter(void)
{
#if defined(BENCH_FLAVOR_MEMB) && !defined(BENCH_FLAVOR_AUTO)
	FL(register_thread)();
#endif
}

static void thread_exit(void)
{
#if defined(BENCH_FLAVOR_MEMB) && !defined(BENCH_FLAVOR_AUTO)
	FL(unregister_thread)();
#endif
}

static int flavor_setup(struct run *r)
{
	struct fstring *fs = malloc(sizeof(*fs));

	if (!fs)
		return -ENOMEM;
	fs->value = fbuf_new(r->values[0]);
	if (!fs->value) {
		free(fs);
		return -ENOMEM;
	}
	r->state = fs;
	return 0;
}

static void flavor_teardown(struct run *r)
{
	struct fstring *fs = r->state;

	/* No reader is left: the last value can go at once. */
	free(fs->value);
	free(fs);
	r->state = NULL;
	thread_enter(); /* rcu_barrier needs no registration; memb's explicit path keeps it */
	FL(barrier)();
	thread_exit();
}

/* The writer: a new buffer, published, the old one freed after a grace period. */
static int flavor_write(void *state, const char *value, size_t len)
{
	struct fstring *fs = state;
	struct fbuf *new = fbuf_new(value), *old;

	(void)len;
	if (!new)
		return -ENOMEM;
	old = fs->value;
	rcu_assign_pointer(fs->value, new);
	retire(old);
	return 0;
}

/* Same body as rcustring_copy(), and like it not inlined into the loop. */
static __attribute__((noinline)) ssize_t flavor_copy(struct fstring *fs, char *buf, size_t size)
{
	const char *v;
	size_t len;

	/* Keep @size unknown, as in the library: a known bound turns memcpy into rep movsq. */
	__asm__("" : "+r"(size));
	ensure_registered();
	FL(read_lock)();
	v = rcu_dereference(fs->value)->str;
	len = strnlen(v, size);
	if (len < size)
		memcpy(buf, v, len + 1);
	FL(read_unlock)();
	if (len >= size) {
		buf[0] = '\0';
		return -ERANGE;
	}
	return (ssize_t)len;
}

READ_FN flavor_read(void *state, const struct expect *e, char *buf, bool full)
{
	ssize_t n = flavor_copy(state, buf, VALUE_CAP);

	keep(buf);
	return copy_torn(buf, n, e, full);
}

static void *flavor_reader(void *arg)
{
	thread_enter();
	reader_loops(arg, flavor_read);
	thread_exit();
	return NULL;
}

/* In place: the same check as rcustring in-place, on the published value inside the section. */
READ_FN flavor_inplace_read(void *state, const struct expect *e, char *buf, bool full)
{
	struct fstring *fs = state;
	bool torn;

	(void)buf;
	ensure_registered();
	FL(read_lock)();
	torn = value_torn(rcu_dereference(fs->value)->str, e, full);
	FL(read_unlock)();
	return torn;
}

static void *flavor_inplace_reader(void *arg)
{
	thread_enter();
	reader_loops(arg, flavor_inplace_read);
	thread_exit();
	return NULL;
}

static void reset_peak(void)
{
	__atomic_store_n(&peak, __atomic_load_n(&pending, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

static uint64_t pending_peak(void)
{
	return __atomic_load_n(&peak, __ATOMIC_RELAXED);
}

#define FLAVOR_SCHEME_OF(name_, reader_)   \
	{                                  \
		.name = name_,             \
		.setup = flavor_setup,     \
		.teardown = flavor_teardown, \
		.reader = reader_,         \
		.write = flavor_write,     \
		.thread_enter = thread_enter, \
		.thread_exit = thread_exit, \
		.reset_peak = reset_peak,  \
		.pending_peak = pending_peak, \
	}

const struct scheme FLAVOR_SCHEME = FLAVOR_SCHEME_OF(FLAVOR_NAME " copy", flavor_reader);
const struct scheme FLAVOR_INPLACE = FLAVOR_SCHEME_OF(FLAVOR_NAME " in-place", flavor_inplace_reader);
