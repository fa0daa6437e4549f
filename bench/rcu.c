/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The three ways to read an rcustring, through the public API only:
 * copy into a caller buffer (rcustring_copy), use in place inside a
 * read-side section, and heap copy (rcustring_dup + free); and the first two
 * again through the opt-in inline read side (<rcustring/static/rcustring.h>).
 */
#include <errno.h>
#include <stdlib.h>

#include <rcustring/rcustring.h>
#include <rcustring/static/rcustring.h>

#include "bench.h"

static int rcu_setup(struct run *r)
{
	struct rcustring *s = malloc(sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	/* values[0] is static: it is the default, never freed. */
	err = rcustring_init(s, VALUE_CAP, r->values[0]);
	if (err) {
		free(s);
		return err;
	}
	r->state = s;
	return 0;
}

static void rcu_teardown(struct run *r)
{
	rcustring_destroy(r->state);
	/* Every old version is freed before the next run starts counting. */
	rcustring_barrier();
	free(r->state);
	r->state = NULL;
}

static int rcu_write(void *state, const char *value, size_t len)
{
	(void)len;
	return rcustring_set(state, value);
}

static uint64_t rcu_pending_peak(void)
{
	struct rcustring_stats st;

	rcustring_get_stats(&st);
	return st.pending_peak;
}

READ_FN copy_read(void *state, const struct expect *e, char *buf, bool full)
{
	ssize_t n = rcustring_copy(state, buf, VALUE_CAP);

	keep(buf);
	return copy_torn(buf, n, e, full);
}
DEFINE_READER(copy_reader, copy_read)

/*
 * In place: the same check on the published value, inside the section; no
 * copy and no strnlen, which is the point of reading in place.
 */
READ_FN inplace_read(void *state, const struct expect *e, char *buf, bool full)
{
	const char *p;
	bool torn;

	(void)buf;
	rcustring_read_lock();
	p = rcustring_dereference(state);
	torn = value_torn(p, e, full);
	rcustring_read_unlock();
	return torn;
}
DEFINE_READER(inplace_reader, inplace_read)

READ_FN copy_inline_read(void *state, const struct expect *e, char *buf, bool full)
{
	ssize_t n = rcustring_copy_inline(state, buf, VALUE_CAP);

	keep(buf);
	return copy_torn(buf, n, e, full);
}
DEFINE_READER(copy_inline_reader, copy_inline_read)

READ_FN inplace_inline_read(void *state, const struct expect *e, char *buf, bool full)
{
	const char *p;
	bool torn;

	(void)buf;
	rcustring_read_lock_inline();
	p = rcustring_dereference(state);
	torn = value_torn(p, e, full);
	rcustring_read_unlock_inline();
	return torn;
}
DEFINE_READER(inplace_inline_reader, inplace_inline_read)

/* The heap copy holds VALUE_CAP bytes, so p[len] is inside it. */
READ_FN dup_read(void *state, const struct expect *e, char *buf, bool full)
{
	char *p = rcustring_dup(state);
	bool torn;

	(void)buf;
	if (!p)
		return true;
	keep(p);
	torn = value_torn(p, e, full);
	free(p);
	return torn;
}
DEFINE_READER(dup_reader, dup_read)

#define RCU_SCHEME(name_, reader_)                     \
	{                                              \
		.name = name_,                         \
		.setup = rcu_setup,                    \
		.teardown = rcu_teardown,              \
		.reader = reader_,                     \
		.write = rcu_write,                    \
		.reset_peak = rcustring_reset_peak,    \
		.pending_peak = rcu_pending_peak,      \
	}

const struct scheme scheme_rcu_copy = RCU_SCHEME("rcustring copy", copy_reader);
const struct scheme scheme_rcu_inplace = RCU_SCHEME("rcustring in-place", inplace_reader);
const struct scheme scheme_rcu_dup = RCU_SCHEME("rcustring dup+free", dup_reader);
const struct scheme scheme_rcu_copy_inline = RCU_SCHEME("rcustring copy inline", copy_inline_reader);
const struct scheme scheme_rcu_inplace_inline =
	RCU_SCHEME("rcustring in-place inline", inplace_inline_reader);
