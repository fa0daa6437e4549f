/* Unit tests of the rcustring core: every public function, its error paths. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/rcustring.h"
#include "../failmalloc.h"

static struct rcustring global_var = RCUSTRING_INITIALIZER(16, "static-default");

static void read_is(const struct rcustring *s, const char *want)
{
	char buf[256];

	assert_int_equal(rcustring_copy(s, buf, sizeof(buf)), (ssize_t)strlen(want));
	assert_string_equal(buf, want);
}

static void test_static_initializer(void **state)
{
	(void)state;
	assert_int_equal(rcustring_maxlen(&global_var), 16);
	assert_int_equal(rcustring_generation(&global_var), 0);
	read_is(&global_var, "static-default");
	assert_int_equal(rcustring_set(&global_var, "x"), 0);
	read_is(&global_var, "x");
	/* Back to the static default: must not be freed by the next write. */
	assert_int_equal(rcustring_reset(&global_var), 0);
	rcustring_read_lock();
	assert_ptr_equal(rcustring_dereference(&global_var), global_var.static_default);
	rcustring_read_unlock();
	assert_int_equal(rcustring_set(&global_var, "y"), 0);
	assert_int_equal(rcustring_generation(&global_var), 3);
	rcustring_destroy(&global_var);
	read_is(&global_var, "static-default");
	rcustring_barrier();
}

static void test_init_errors(void **state)
{
	struct rcustring s;

	(void)state;
	assert_int_equal(rcustring_init(NULL, 8, "a"), -EINVAL);
	assert_int_equal(rcustring_init(&s, 8, NULL), -EINVAL);
	assert_int_equal(rcustring_init(&s, 0, ""), -EINVAL);
	assert_int_equal(rcustring_init(&s, 4, "abcd"), -EMSGSIZE);
	assert_int_equal(rcustring_init(&s, 5, "abcd"), 0);
	read_is(&s, "abcd");
	rcustring_destroy(&s);
	assert_int_equal(rcustring_init(&s, 1, ""), 0);
	read_is(&s, "");
	assert_int_equal(rcustring_set(&s, "a"), -EMSGSIZE);
	assert_int_equal(rcustring_set(&s, ""), 0);
	rcustring_destroy(&s);
	rcustring_barrier();
}

static void test_set(void **state)
{
	struct rcustring s;

	(void)state;
	assert_int_equal(rcustring_init(&s, 8, "def"), 0);
	assert_int_equal(rcustring_set(&s, "1234567"), 0);
	read_is(&s, "1234567");
	assert_int_equal(rcustring_generation(&s), 1);

	/* Too long: refused, nothing truncated, old value and generation kept. */
	assert_int_equal(rcustring_set(&s, "12345678"), -EMSGSIZE);
	read_is(&s, "1234567");
	assert_int_equal(rcustring_generation(&s), 1);

	assert_int_equal(rcustring_set(NULL, "a"), -EINVAL);
	assert_int_equal(rcustring_set(&s, NULL), -EINVAL);
	read_is(&s, "1234567");
	rcustring_destroy(&s);
	rcustring_barrier();
}

static void test_set_len(void **state)
{
	struct rcustring s;
	const char bytes[] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i' };

	(void)state;
	assert_int_equal(rcustring_init(&s, 8, ""), 0);
	assert_int_equal(rcustring_set_len(&s, bytes, 3), 0);
	read_is(&s, "abc");
	assert_int_equal(rcustring_set_len(&s, bytes, 8), -EMSGSIZE);
	read_is(&s, "abc");
	/* An embedded NUL ends the value, so a long buffer can still fit. */
	assert_int_equal(rcustring_set_len(&s, "xy\0zzzzzzzzzz", 13), 0);
	read_is(&s, "xy");
	assert_int_equal(rcustring_set_len(&s, bytes, 0), 0);
	read_is(&s, "");
	assert_int_equal(rcustring_set_len(&s, NULL, 1), -EINVAL);
	assert_int_equal(rcustring_generation(&s), 3);
	rcustring_destroy(&s);
	rcustring_barrier();
}

/* Fail each allocation of a write in turn: the old value must survive. */
static void test_set_enomem(void **state)
{
	struct rcustring s;
	long n, calls;
	int ret;

	(void)state;
	assert_int_equal(rcustring_init(&s, 32, "old"), 0);
	for (n = 1;; n++) {
		failmalloc_arm(n);
		ret = rcustring_set(&s, "new value");
		calls = failmalloc_disarm();
		if (ret == 0)
			break;
		assert_int_equal(ret, -ENOMEM);
		read_is(&s, "old");
		assert_int_equal(rcustring_generation(&s), 0);
		assert_true(n <= calls);
	}
	assert_true(n > 1); /* at least one allocation was failed */
	read_is(&s, "new value");
	rcustring_destroy(&s);
	rcustring_barrier();
}

static void test_edit(void **state)
{
	struct rcustring s;
	struct rcustring_edit e;

	(void)state;
	assert_int_equal(rcustring_init(&s, 8, "abc"), 0);
	assert_int_equal(rcustring_edit_begin(&s, &e), 0);
	assert_string_equal(e.buf, "abc");
	assert_int_equal(e.size, 8);
	strcat(e.buf, "def");
	read_is(&s, "abc"); /* not published yet */
	assert_int_equal(rcustring_edit_commit(&e), 0);
	read_is(&s, "abcdef");
	assert_int_equal(rcustring_generation(&s), 1);

	/* Abort: discarded, lock released (a later write goes through). */
	assert_int_equal(rcustring_edit_begin(&s, &e), 0);
	strcpy(e.buf, "zzz");
	rcustring_edit_abort(&e);
	read_is(&s, "abcdef");
	assert_int_equal(rcustring_generation(&s), 1);

	/* No NUL within size: refused and discarded. */
	assert_int_equal(rcustring_edit_begin(&s, &e), 0);
	memset(e.buf, 'q', e.size);
	assert_int_equal(rcustring_edit_commit(&e), -EMSGSIZE);
	read_is(&s, "abcdef");
	assert_int_equal(rcustring_set(&s, "after"), 0);
	read_is(&s, "after");

	assert_int_equal(rcustring_edit_begin(NULL, &e), -EINVAL);
	assert_int_equal(rcustring_edit_begin(&s, NULL), -EINVAL);
	assert_int_equal(rcustring_edit_commit(NULL), -EINVAL);
	rcustring_edit_abort(NULL);

	failmalloc_arm(1);
	assert_int_equal(rcustring_edit_begin(&s, &e), -ENOMEM);
	failmalloc_disarm();
	assert_int_equal(rcustring_set(&s, "free"), 0); /* lock not held */
	read_is(&s, "free");
	rcustring_destroy(&s);
	rcustring_barrier();
}

static void test_copy(void **state)
{
	struct rcustring s;
	char buf[16];

	(void)state;
	assert_int_equal(rcustring_init(&s, 16, "0123456789"), 0);
	assert_int_equal(rcustring_copy(&s, buf, 11), 10);
	assert_string_equal(buf, "0123456789");
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(rcustring_copy(&s, buf, 10), -ERANGE);
	assert_string_equal(buf, "");
	assert_int_equal(rcustring_copy(&s, buf, 0), -EINVAL);
	assert_int_equal(rcustring_copy(&s, NULL, 8), -EINVAL);
	assert_int_equal(rcustring_copy(NULL, buf, 8), -EINVAL);
	rcustring_destroy(&s);
}

static void test_dup(void **state)
{
	struct rcustring s;
	char *p;

	(void)state;
	assert_int_equal(rcustring_init(&s, 16, "dflt"), 0);
	assert_int_equal(rcustring_set(&s, "kept"), 0);
	p = rcustring_dup(&s);
	assert_non_null(p);
	assert_string_equal(p, "kept");
	assert_int_equal(rcustring_set(&s, "changed"), 0);
	assert_string_equal(p, "kept"); /* the copy is the caller's */
	free(p);

	failmalloc_arm(1);
	errno = 0;
	assert_null(rcustring_dup(&s));
	failmalloc_disarm();
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(rcustring_dup(NULL));
	assert_int_equal(errno, EINVAL);
	rcustring_destroy(&s);
	rcustring_barrier();
}

struct replacer {
	struct rcustring *s;
	int done;
};

static void *replace_once(void *arg)
{
	struct replacer *r = arg;

	assert_int_equal(rcustring_set(r->s, "second"), 0);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A reader's pointer stays valid (not freed) until its read unlock. */
static void test_reader_keeps_old_version(void **state)
{
	struct rcustring s;
	struct replacer r = { &s, 0 };
	pthread_t t;
	const char *p;

	(void)state;
	assert_int_equal(rcustring_init(&s, 16, "dflt"), 0);
	assert_int_equal(rcustring_set(&s, "first"), 0);
	rcustring_read_lock();
	rcustring_read_lock(); /* nests */
	p = rcustring_dereference(&s);
	assert_int_equal(pthread_create(&t, NULL, replace_once, &r), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE));
	assert_string_equal(p, "first"); /* ASan flags this if freed early */
	rcustring_read_unlock();
	assert_string_equal(p, "first");
	rcustring_read_unlock();
	read_is(&s, "second");
	rcustring_destroy(&s);
	rcustring_barrier();
}

/* Counts balance: every buffer allocated is freed once everything settles. */
static void test_stats_balance(void **state)
{
	struct rcustring_stats before, after;
	struct rcustring s;
	int i;

	(void)state;
	rcustring_barrier();
	rcustring_get_stats(&before);
	assert_int_equal(rcustring_init(&s, 16, "d"), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(rcustring_set(&s, i % 2 ? "odd" : "even"), 0);
	rcustring_destroy(&s);
	rcustring_barrier();
	rcustring_get_stats(&after);
	assert_int_equal(after.allocated - before.allocated, 100);
	assert_int_equal(after.freed - before.freed, 100);
	assert_int_equal(after.pending, 0);
}

struct blocker {
	int release;
	int holding;
};

static void *hold_grace_period(void *arg)
{
	struct blocker *b = arg;
	struct rcustring_stats st;

	rcustring_read_lock();
	__atomic_store_n(&b->holding, 1, __ATOMIC_RELEASE);
	/* Keep the grace period from ending until the backlog is full. */
	do {
		usleep(1000);
		rcustring_get_stats(&st);
	} while (st.pending < RCUSTRING_PENDING_MAX && !__atomic_load_n(&b->release, __ATOMIC_ACQUIRE));
	usleep(20000);
	rcustring_read_unlock();
	return NULL;
}

/* A write storm while a reader stalls grace periods stays under the bound. */
static void test_backlog_bounded(void **state)
{
	struct rcustring_stats before, after;
	struct blocker b = { 0, 0 };
	struct rcustring s;
	pthread_t t;
	int i;

	(void)state;
	rcustring_barrier();
	rcustring_reset_peak();
	rcustring_get_stats(&before);
	assert_int_equal(rcustring_init(&s, 16, "d"), 0);
	assert_int_equal(pthread_create(&t, NULL, hold_grace_period, &b), 0);
	while (!__atomic_load_n(&b.holding, __ATOMIC_ACQUIRE))
		usleep(100);
	for (i = 0; i < RCUSTRING_PENDING_MAX + 50; i++)
		assert_int_equal(rcustring_set(&s, i % 2 ? "odd" : "even"), 0);
	__atomic_store_n(&b.release, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(t, NULL), 0);
	rcustring_destroy(&s);
	rcustring_barrier();
	rcustring_get_stats(&after);
	assert_true(after.pending_peak <= RCUSTRING_PENDING_MAX);
	assert_true(after.throttled > before.throttled);
	assert_int_equal(after.allocated - before.allocated, after.freed - before.freed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_initializer),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_set_len),
		cmocka_unit_test(test_set_enomem),
		cmocka_unit_test(test_edit),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_reader_keeps_old_version),
		cmocka_unit_test(test_stats_balance),
		cmocka_unit_test(test_backlog_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
