/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcs_buf_hold_frees() (lib/core/buf.h): the old versions a thread retires
 * while it holds its frees are not queued to call_rcu (a barrier frees
 * none of them) until the outermost rcs_buf_release_frees(); nesting, the
 * limit of 64 held, and a writer that finds the backlog full while it
 * holds (it queues what it held, then waits: without that it would wait
 * for ever, so an alarm ends a hang as a failure).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rcustring/rcustring.h"
#include "../../lib/core/buf.h"

static int failures;

static uint64_t freed(void)
{
	struct rcustring_stats st;

	rcustring_barrier(); /* every queued free has run */
	rcustring_get_stats(&st);
	return st.freed;
}

static void expect(const char *what, uint64_t got, uint64_t want)
{
	if (got != want) {
		printf("FAIL %s: %llu freed, want %llu\n", what, (unsigned long long)got,
		       (unsigned long long)want);
		failures++;
	}
}

/* @n writes of @s, each retiring the previous version (the first retires the default). */
static void writes(struct rcustring *s, int n)
{
	char v[32];

	for (int i = 0; i < n; i++) {
		snprintf(v, sizeof(v), "v%d", i);
		if (rcustring_set(s, v))
			failures++;
	}
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] =
		"FAIL a writer holding its frees waited for ever on a full backlog\n";
	(void)!write(1, msg, sizeof(msg) - 1);
	_exit(1);
}

/* Values of 1 MiB into a backlog of 4 MiB: the fourth write finds it full. */
static void full_backlog(void)
{
	static struct rcustring big = RCUSTRING_INITIALIZER((3u << 19), "");
	size_t len = 1u << 20;
	char *v = malloc(len + 1);
	uint64_t base = freed();
	struct rcustring_stats st0, st1;

	if (!v) {
		failures++;
		return;
	}
	rcustring_get_stats(&st0);
	signal(SIGALRM, on_alarm);
	alarm(30);
	rcs_buf_hold_frees();
	for (int i = 0; i < 8; i++) {
		memset(v, 'a' + i, len);
		v[len] = '\0';
		if (rcustring_set(&big, v))
			failures++;
	}
	rcs_buf_release_frees();
	alarm(0);
	rcustring_get_stats(&st1);
	if (st1.throttled == st0.throttled) {
		printf("FAIL the backlog was never full: the case proves nothing\n");
		failures++;
	}
	expect("1 MiB values held past a full backlog", freed() - base, 7);
	rcustring_destroy(&big);
	free(v);
}

int main(void)
{
	static struct rcustring s = RCUSTRING_INITIALIZER(32, "default");
	uint64_t base;

	writes(&s, 1); /* the default is never freed: from here each write retires one */
	base = freed();
	rcs_buf_hold_frees();
	writes(&s, 3);
	expect("held", freed() - base, 0);
	rcs_buf_release_frees();
	expect("released", freed() - base, 3);

	base = freed();
	rcs_buf_hold_frees();
	rcs_buf_hold_frees();
	writes(&s, 2);
	rcs_buf_release_frees();
	expect("held by the outer hold", freed() - base, 0);
	rcs_buf_release_frees();
	expect("released by the outer hold", freed() - base, 2);

	base = freed();
	rcs_buf_hold_frees();
	writes(&s, 100);
	expect("beyond 64 held, queued at once", freed() - base, 36);
	rcs_buf_release_frees();
	expect("all 100 released", freed() - base, 100);

	full_backlog();
	rcustring_destroy(&s);
	printf("hold-frees: %d failures\n", failures);
	return failures ? 1 : 0;
}
