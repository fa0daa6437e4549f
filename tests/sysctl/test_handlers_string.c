/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * String sysctl handlers against the kernel's _proc_do_string (strict
 * writes), plus what we do differently: over-long values are refused with
 * -EMSGSIZE and the old value stays. The same rows run on proc_dostring
 * (char array) and proc_rcu_string (struct rcustring).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"
#include "../failmalloc.h"

#define SL ((size_t)-1)
#define MAXLEN 8 /* value up to 7 bytes */

struct srow {
	int line;
	const char *init; /* value before */
	const char *in;
	size_t len;
	off_t pos;
	int ret;
	size_t lenp;
	off_t ppos;
	const char *want; /* value after */
};

#define S(init, in, pos, ret, lenp, ppos, want) { __LINE__, init, in, SL, pos, ret, lenp, ppos, want }
#define SLN(init, in, len, pos, ret, lenp, ppos, want) { __LINE__, init, in, len, pos, ret, lenp, ppos, want }

static const struct srow write_rows[] = {
	/* _proc_do_string write: stop at '\n' or NUL; all *lenp consumed */
	S("hello", "abc", 0, 0, 3, 3, "abc"),
	S("hello", "abc\n", 0, 0, 4, 4, "abc"),
	S("hello", "abc\ndef", 0, 0, 7, 7, "abc"),
	SLN("hello", "ab\0cd", 5, 0, 0, 5, 5, "ab"),
	S("hello", "\n", 0, 0, 1, 1, ""),
	/* strings keep their spaces */
	S("hello", "  a b  ", 0, 0, 7, 7, "  a b  "),
	/* *lenp == 0: nothing happens */
	S("hello", "", 0, 0, 0, 0, "hello"),
	/* strict mode continuation: the value is cut at *ppos, then appended */
	S("hello", "XY", 5, 0, 2, 7, "helloXY"),
	S("hello", "XY", 2, 0, 2, 4, "heXY"),
	S("hello", "\n", 2, 0, 1, 3, "he"),
	S("hello", "", 2, 0, 0, 2, "hello"),
	/* a position past the current length: ignored, counters unchanged */
	S("hello", "XY", 6, 0, 2, 6, "hello"),
	S("", "XY", 1, 0, 2, 1, ""),
	/* exactly maxlen - 1 fits */
	S("hello", "1234567", 0, 0, 7, 7, "1234567"),
	S("hello", "ab\nzzzzzzzzzz", 5, 0, 13, 18, "helloab"),
	/* deliberate difference: over-long is -EMSGSIZE, old value intact */
	S("hello", "12345678", 0, -EMSGSIZE, 8, 0, "hello"),
	S("hello", "abc", 5, -EMSGSIZE, 3, 5, "hello"),
	S("1234567", "x", 7, -EMSGSIZE, 1, 7, "1234567"),
	/* a negative position is refused */
	S("hello", "x", -1, -EINVAL, 1, -1, "hello"),
};

struct target {
	struct ctl_table t;
	char arr[MAXLEN];
	struct rcustring rs;
};

static void set_value(struct target *tg, const char *v)
{
	if (tg->t.proc_handler == proc_dostring) {
		memset(tg->arr, 'Z', sizeof(tg->arr));
		strcpy(tg->arr, v);
	} else {
		assert_int_equal(rcustring_set(&tg->rs, v), 0);
	}
}

static void value_is(struct target *tg, const char *want, int line)
{
	char buf[64];

	if (tg->t.proc_handler == proc_dostring)
		strcpy(buf, tg->arr);
	else
		assert_true(rcustring_copy(&tg->rs, buf, sizeof(buf)) >= 0);
	if (strcmp(buf, want)) {
		print_error("line %d: value \"%s\", want \"%s\"\n", line, buf, want);
		fail();
	}
}

static void target_init(struct target *tg, proc_handler *h)
{
	memset(tg, 0, sizeof(*tg));
	tg->t.procname = "s";
	tg->t.maxlen = MAXLEN;
	tg->t.mode = 0644;
	tg->t.proc_handler = h;
	if (h == proc_dostring) {
		tg->t.data = tg->arr;
	} else {
		assert_int_equal(rcustring_init(&tg->rs, MAXLEN, "dflt"), 0);
		tg->t.data = &tg->rs;
	}
}

static void target_fini(struct target *tg)
{
	if (tg->t.proc_handler == proc_rcu_string) {
		rcustring_destroy(&tg->rs);
		rcustring_barrier();
	}
}

static void run_write_rows(proc_handler *h)
{
	struct target tg;
	size_t r;

	target_init(&tg, h);
	for (r = 0; r < sizeof(write_rows) / sizeof(write_rows[0]); r++) {
		const struct srow *w = &write_rows[r];
		size_t len = w->len == SL ? strlen(w->in) : w->len;
		char *buf = malloc(len + 1);
		size_t lenp = len;
		off_t ppos = w->pos;
		int ret;

		assert_non_null(buf);
		memcpy(buf, w->in, len);
		set_value(&tg, w->init);
		ret = h(&tg.t, 1, buf, &lenp, &ppos);
		free(buf);
		if (ret != w->ret || lenp != w->lenp || ppos != w->ppos) {
			print_error("line %d: ret %d lenp %zu ppos %lld, want %d %zu %lld\n", w->line,
				    ret, lenp, (long long)ppos, w->ret, w->lenp, (long long)w->ppos);
			fail();
		}
		value_is(&tg, w->want, w->line);
	}
	target_fini(&tg);
}

static void test_dostring_write(void **state)
{
	(void)state;
	run_write_rows(proc_dostring);
}

static void test_rcu_string_write(void **state)
{
	(void)state;
	run_write_rows(proc_rcu_string);
}

static void read_is(struct target *tg, off_t pos, size_t size, const char *want,
		    off_t ppos_after)
{
	char buf[64];
	size_t lenp = size;
	off_t ppos = pos;

	memset(buf, '#', sizeof(buf));
	assert_int_equal(tg->t.proc_handler(&tg->t, 0, buf, &lenp, &ppos), 0);
	assert_int_equal(lenp, strlen(want));
	assert_memory_equal(buf, want, lenp);
	assert_int_equal(buf[lenp], '#');
	assert_int_equal(ppos, ppos_after);
}

static void run_reads(proc_handler *h)
{
	struct target tg;

	target_init(&tg, h);
	set_value(&tg, "hello");
	/* _proc_do_string read: value from *ppos, '\n' when it fits */
	read_is(&tg, 0, 100, "hello\n", 6);
	read_is(&tg, 0, 6, "hello\n", 6);
	read_is(&tg, 0, 5, "hello", 5);
	read_is(&tg, 0, 3, "hel", 3);
	read_is(&tg, 3, 100, "lo\n", 6);
	read_is(&tg, 3, 2, "lo", 5);
	read_is(&tg, 5, 100, "\n", 6);
	read_is(&tg, 6, 100, "", 6);
	read_is(&tg, 60, 100, "", 60);
	read_is(&tg, 0, 0, "", 0);
	set_value(&tg, "");
	read_is(&tg, 0, 100, "\n", 1);
	read_is(&tg, 1, 100, "", 1);
	set_value(&tg, "1234567");
	read_is(&tg, 0, 100, "1234567\n", 8);
	target_fini(&tg);
}

static void test_dostring_read(void **state)
{
	struct target tg;

	(void)state;
	run_reads(proc_dostring);
	/* An array without a NUL is read up to maxlen, never past it. */
	target_init(&tg, proc_dostring);
	memcpy(tg.arr, "abcdefgh", MAXLEN);
	read_is(&tg, 0, 100, "abcdefgh\n", 9);
}

static void test_rcu_string_read(void **state)
{
	(void)state;
	run_reads(proc_rcu_string);
}

static void test_rcu_string_generation(void **state)
{
	struct target tg;
	size_t lenp;
	off_t pos;

	(void)state;
	target_init(&tg, proc_rcu_string);
	/* A change publishes once; ignored, refused and unchanged writes never. */
	lenp = 3;
	pos = 0;
	assert_int_equal(proc_rcu_string(&tg.t, 1, "abc", &lenp, &pos), 0);
	assert_int_equal(rcustring_generation(&tg.rs), 1);
	lenp = 3;
	pos = 0;
	assert_int_equal(proc_rcu_string(&tg.t, 1, "abc", &lenp, &pos), 0);
	lenp = 2;
	pos = 9;
	assert_int_equal(proc_rcu_string(&tg.t, 1, "zz", &lenp, &pos), 0);
	lenp = 9;
	pos = 0;
	assert_int_equal(proc_rcu_string(&tg.t, 1, "123456789", &lenp, &pos), -EMSGSIZE);
	assert_int_equal(rcustring_generation(&tg.rs), 1);
	value_is(&tg, "abc", __LINE__);
	/* Writing back the static default's text still publishes a heap copy. */
	lenp = 4;
	pos = 0;
	assert_int_equal(proc_rcu_string(&tg.t, 1, "dflt", &lenp, &pos), 0);
	assert_int_equal(rcustring_generation(&tg.rs), 2);

	/* maxlen must equal the variable's capacity. */
	tg.t.maxlen = MAXLEN + 1;
	lenp = 1;
	pos = 0;
	assert_int_equal(proc_rcu_string(&tg.t, 1, "x", &lenp, &pos), -EINVAL);
	lenp = 10;
	assert_int_equal(proc_rcu_string(&tg.t, 0, (char[10]){ 0 }, &lenp, &pos), -EINVAL);
	tg.t.maxlen = MAXLEN;
	target_fini(&tg);
}

static void test_rcu_string_enomem(void **state)
{
	struct target tg;
	size_t lenp = 3;
	off_t pos = 0;
	char buf[16];

	(void)state;
	target_init(&tg, proc_rcu_string);
	set_value(&tg, "old");
	failmalloc_arm(1);
	assert_int_equal(proc_rcu_string(&tg.t, 1, "new", &lenp, &pos), -ENOMEM);
	assert_true(failmalloc_disarm() >= 1);
	assert_int_equal(lenp, 3);
	assert_int_equal(pos, 0);
	value_is(&tg, "old", __LINE__);
	assert_int_equal(rcustring_generation(&tg.rs), 1);
	/* Reads never allocate: they work with every malloc failing. */
	failmalloc_arm(1);
	lenp = sizeof(buf);
	assert_int_equal(proc_rcu_string(&tg.t, 0, buf, &lenp, &pos), 0);
	assert_int_equal(failmalloc_disarm(), 0);
	assert_int_equal(lenp, 4);
	assert_memory_equal(buf, "old\n", 4);
	/* And the next write succeeds. */
	lenp = 3;
	pos = 0;
	assert_int_equal(proc_rcu_string(&tg.t, 1, "new", &lenp, &pos), 0);
	value_is(&tg, "new", __LINE__);
	target_fini(&tg);
}

static void test_bad_arguments(void **state)
{
	struct target tg;
	size_t lenp = 1;
	off_t pos = 0;

	(void)state;
	target_init(&tg, proc_dostring);
	assert_int_equal(proc_dostring(NULL, 1, "x", &lenp, &pos), -EINVAL);
	assert_int_equal(proc_rcu_string(NULL, 1, "x", &lenp, &pos), -EINVAL);
	assert_int_equal(proc_dostring(&tg.t, 1, NULL, &lenp, &pos), -EINVAL);
	assert_int_equal(proc_dostring(&tg.t, 1, "x", NULL, &pos), -EINVAL);
	assert_int_equal(proc_dostring(&tg.t, 1, "x", &lenp, NULL), -EINVAL);
	/* NULL data or maxlen 0: nothing, like the kernel */
	tg.t.data = NULL;
	assert_int_equal(proc_dostring(&tg.t, 1, "x", &lenp, &pos), 0);
	assert_int_equal(lenp, 0);
	tg.t.data = tg.arr;
	tg.t.maxlen = 0;
	lenp = 1;
	assert_int_equal(proc_dostring(&tg.t, 1, "x", &lenp, &pos), 0);
	assert_int_equal(lenp, 0);
}

/* ---- readers through the handler while a writer writes through it ---- */

#define CMAXLEN 64
#define NVALUES 8
#define WRITES 3000

static struct rcustring conc_var = RCUSTRING_INITIALIZER(CMAXLEN, "");
static struct ctl_table conc_table = { .procname = "c", .data = &conc_var, .maxlen = CMAXLEN,
				       .mode = 0644, .proc_handler = proc_rcu_string };
static int conc_done;
static long conc_reads; /* reads done so far, all readers */

/* Value k: letter 'a' + k repeated 10 + 5 * k times (lengths all differ). */
static size_t value_of(int k, char *buf)
{
	size_t n = 10 + 5 * (size_t)k;

	memset(buf, 'a' + k, n);
	buf[n] = '\0';
	return n;
}

static void *conc_reader(void *arg)
{
	long reads = 0, bad = 0;

	(void)arg;
	while (!__atomic_load_n(&conc_done, __ATOMIC_ACQUIRE) || reads < 100) {
		char buf[CMAXLEN + 1];
		size_t lenp = sizeof(buf), i;
		off_t pos = 0;
		int k;

		if (proc_rcu_string(&conc_table, 0, buf, &lenp, &pos) != 0 || lenp < 1 ||
		    buf[lenp - 1] != '\n') {
			bad++;
			continue;
		}
		reads++;
		__atomic_add_fetch(&conc_reads, 1, __ATOMIC_RELAXED);
		if (lenp == 1)
			continue; /* the initial empty value */
		k = buf[0] - 'a';
		if (k < 0 || k >= NVALUES || lenp - 1 != 10 + 5 * (size_t)k) {
			bad++;
			continue;
		}
		for (i = 0; i < lenp - 1; i++)
			if (buf[i] != buf[0])
				bad++;
	}
	return (void *)bad;
}

static void test_rcu_string_concurrent(void **state)
{
	pthread_t readers[2];
	void *bad;
	int i, w;

	(void)state;
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&readers[i], NULL, conc_reader, NULL), 0);
	/* Keep writing until the readers have read a fair amount meanwhile. */
	for (w = 0; w < WRITES || __atomic_load_n(&conc_reads, __ATOMIC_RELAXED) < 2000; w++) {
		char buf[CMAXLEN];
		size_t lenp = value_of(w % NVALUES, buf);
		off_t pos = 0;

		buf[lenp++] = '\n'; /* as echo writes it */
		assert_int_equal(proc_rcu_string(&conc_table, 1, buf, &lenp, &pos), 0);
		assert_int_equal(pos, (off_t)lenp);
	}
	__atomic_store_n(&conc_done, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++) {
		assert_int_equal(pthread_join(readers[i], &bad), 0);
		assert_int_equal((long)bad, 0);
	}
	assert_int_equal(rcustring_generation(&conc_var), (uint64_t)w);
	rcustring_destroy(&conc_var);
	rcustring_barrier();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dostring_write),
		cmocka_unit_test(test_rcu_string_write),
		cmocka_unit_test(test_dostring_read),
		cmocka_unit_test(test_rcu_string_read),
		cmocka_unit_test(test_rcu_string_generation),
		cmocka_unit_test(test_rcu_string_enomem),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_rcu_string_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
