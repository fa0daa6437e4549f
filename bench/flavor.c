/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Flavor comparison: the rcustring copy read, rebuilt on one liburcu flavor
 * inside the benchmark itself, so that bp (what the library uses, threads
 * register on first use) and memb (threads must register explicitly) are
 * compared with the same code, the same inlining and the same TLS access.
 *
 * Compiled twice by bench/meson.build: -DBENCH_FLAVOR_MEMB gives
 * scheme_memb_copy, otherwise scheme_bp_copy. Each build includes only its
 * own flavor's header (the two headers map the same rcu_* names) and calls
 * the urcu_<flavor>_* functions by their prefixed names.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef BENCH_FLAVOR_MEMB
#include <urcu/urcu-memb.h>
#define FL(x) urcu_memb_##x
#define FLAVOR_SCHEME scheme_memb_copy
#define FLAVOR_NAME "urcu memb copy"
#else
#include <urcu-bp.h>
#define FL(x) urcu_bp_##x
#define FLAVOR_SCHEME scheme_bp_copy
#define FLAVOR_NAME "urcu bp copy"
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

	/* Only the one writer raises the peak: a plain max is enough. */
	if (p > __atomic_load_n(&peak, __ATOMIC_RELAXED))
		__atomic_store_n(&peak, p, __ATOMIC_RELAXED);
	FL(call_rcu)(&old->rcu, fbuf_free_rcu);
}

static void thread_enter(void)
{
#ifdef BENCH_FLAVOR_MEMB
	FL(register_thread)();
#endif
}

static void thread_exit(void)
{
#ifdef BENCH_FLAVOR_MEMB
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
	thread_enter();
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

static bool flavor_read(void *state, size_t len, char *buf)
{
	ssize_t n = flavor_copy(state, buf, VALUE_CAP);

	keep(buf);
	return copy_torn(buf, n, len);
}

static void *flavor_reader(void *arg)
{
	thread_enter();
	reader_loop(arg, flavor_read);
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

const struct scheme FLAVOR_SCHEME = {
	.name = FLAVOR_NAME,
	.setup = flavor_setup,
	.teardown = flavor_teardown,
	.reader = flavor_reader,
	.write = flavor_write,
	.thread_enter = thread_enter,
	.thread_exit = thread_exit,
	.reset_peak = reset_peak,
	.pending_peak = pending_peak,
};
