/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * String variables: publish whole values with RCU, serialize writers with a
 * per-variable mutex, never free the static default.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>

#include "rcustring/rcustring.h"
#include "rcustring/static/rcustring.h"
#include "buf.h"

/*
 * Readers load only value; a write stores to the writer's fields several
 * times. Keep them at least a line apart so that, however the variable is
 * aligned, the line readers load is written once per write.
 */
_Static_assert(offsetof(struct rcustring, writer_lock) >=
		       offsetof(struct rcustring, value) + RCUSTRING_CACHE_LINE,
	       "writer_lock shares the readers' cache line");
_Static_assert(offsetof(struct rcustring, generation) >=
		       offsetof(struct rcustring, value) + RCUSTRING_CACHE_LINE,
	       "generation shares the readers' cache line");

int rcustring_init(struct rcustring *s, size_t maxlen, const char *static_default)
{
	int err;

	if (!s || !static_default || maxlen == 0)
		return -EINVAL;
	if (strnlen(static_default, maxlen) >= maxlen)
		return -EMSGSIZE;
	err = pthread_mutex_init(&s->writer_lock, NULL);
	if (err)
		return -err;
	s->value = (char *)static_default;
	s->maxlen = maxlen;
	s->static_default = static_default;
	s->generation = 0;
	return 0;
}

/* Free a value that was published, unless it is the static default. */
static void retire(struct rcustring *s, char *old)
{
	if (old != s->static_default)
		rcs_buf_free_deferred(old);
}

/*
 * Backlog room a write of @s reserves before it publishes: enough for any
 * old value it can replace (a buffer holds at most maxlen bytes). Reserving
 * before taking the writer lock means no writer ever waits for a grace
 * period while holding it (a reader inside a section may be waiting for
 * that lock), and a write that cannot get room changes nothing.
 */
static size_t write_reservation(const struct rcustring *s)
{
	return rcs_buf_size(s->maxlen);
}

/* Free @old into the room reserved by its write, giving back the rest. */
static void retire_reserved(struct rcustring *s, char *old, size_t reserved)
{
	if (old == s->static_default)
		rcs_buf_unreserve(reserved);
	else
		rcs_buf_free_reserved(old, reserved);
}

/* Publish @new (a buffer or the static default) under the writer lock. */
static char *publish_locked(struct rcustring *s, char *new)
{
	char *old = s->value;

	rcu_assign_pointer(s->value, new);
	__atomic_store_n(&s->generation, s->generation + 1, __ATOMIC_RELEASE);
	return old;
}

void rcustring_destroy(struct rcustring *s)
{
	char *old;

	if (!s)
		return;
	pthread_mutex_lock(&s->writer_lock);
	old = s->value;
	rcu_assign_pointer(s->value, (char *)s->static_default);
	pthread_mutex_unlock(&s->writer_lock);
	retire(s, old);
	pthread_mutex_destroy(&s->writer_lock);
}

int rcustring_set_len(struct rcustring *s, const char *value, size_t len)
{
	size_t reserved;
	char *new, *old;
	int err;

	if (!s || !value)
		return -EINVAL;
	len = strnlen(value, len);
	if (len >= s->maxlen)
		return -EMSGSIZE;
	/*
	 * Allocate what the value needs, not maxlen: the backlog bound is in
	 * bytes, and a short value in a large variable should cost little.
	 * Allocate and fill outside the lock: only the publish is serialized.
	 */
	new = rcs_buf_alloc(len + 1);
	if (!new)
		return -ENOMEM;
	memcpy(new, value, len);
	new[len] = '\0';
	reserved = write_reservation(s);
	err = rcs_buf_reserve(reserved, false);
	if (err) {
		rcs_buf_free_now(new);
		return err;
	}
	pthread_mutex_lock(&s->writer_lock);
	old = publish_locked(s, new);
	pthread_mutex_unlock(&s->writer_lock);
	retire_reserved(s, old, reserved);
	return 0;
}

int rcustring_set(struct rcustring *s, const char *value)
{
	if (!s || !value)
		return -EINVAL;
	return rcustring_set_len(s, value, strnlen(value, s->maxlen));
}

int rcustring_reset(struct rcustring *s)
{
	size_t reserved;
	char *old;
	int err;

	if (!s)
		return -EINVAL;
	reserved = write_reservation(s);
	err = rcs_buf_reserve(reserved, false);
	if (err)
		return err;
	pthread_mutex_lock(&s->writer_lock);
	old = publish_locked(s, (char *)s->static_default);
	pthread_mutex_unlock(&s->writer_lock);
	retire_reserved(s, old, reserved);
	return 0;
}

int rcustring_edit_begin(struct rcustring *s, struct rcustring_edit *e)
{
	char *copy;
	int err;

	if (!s || !e)
		return -EINVAL;
	/* The edit form hands out maxlen bytes to edit in place. */
	copy = rcs_buf_alloc(s->maxlen);
	if (!copy)
		return -ENOMEM;
	/*
	 * Reserve the backlog room for commit now, before the writer lock:
	 * commit then never waits, and never waits holding the lock.
	 */
	err = rcs_buf_reserve(write_reservation(s), false);
	if (err) {
		rcs_buf_free_now(copy);
		return err;
	}
	pthread_mutex_lock(&s->writer_lock);
	/* Holding the writer lock: the value cannot change or be freed. */
	strcpy(copy, s->value);
	e->s = s;
	e->buf = copy;
	e->size = s->maxlen;
	return 0;
}

static void edit_end(struct rcustring_edit *e)
{
	pthread_mutex_unlock(&e->s->writer_lock);
	e->buf = NULL;
	e->s = NULL;
}

int rcustring_edit_commit(struct rcustring_edit *e)
{
	struct rcustring *s;
	char *old;

	if (!e || !e->s || !e->buf)
		return -EINVAL;
	s = e->s;
	if (!memchr(e->buf, '\0', e->size)) {
		rcustring_edit_abort(e);
		return -EMSGSIZE;
	}
	/*
	 * The copy had maxlen bytes to edit in; the published version keeps
	 * what the value needs, as rcustring_set() would allocate.
	 */
	old = publish_locked(s, rcs_buf_shrink(e->buf, strlen(e->buf) + 1));
	edit_end(e);
	retire_reserved(s, old, write_reservation(s));
	return 0;
}

void rcustring_edit_abort(struct rcustring_edit *e)
{
	if (!e || !e->s)
		return;
	rcs_buf_unreserve(write_reservation(e->s));
	rcs_buf_free_now(e->buf);
	edit_end(e);
}

/* The read side is the inline one of <rcustring/static/rcustring.h>: one copy of it. */
void rcustring_read_lock(void)
{
	rcustring_read_lock_inline();
}

void rcustring_read_unlock(void)
{
	rcustring_read_unlock_inline();
}

ssize_t rcustring_copy(const struct rcustring *s, char *buf, size_t size)
{
	return rcustring_copy_inline(s, buf, size);
}

char *rcustring_dup(const struct rcustring *s)
{
	char *copy;

	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	/* Allocate before the read lock; maxlen always fits. */
	copy = malloc(s->maxlen);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	rcustring_copy(s, copy, s->maxlen);
	return copy;
}

uint64_t rcustring_generation(const struct rcustring *s)
{
	return __atomic_load_n(&s->generation, __ATOMIC_ACQUIRE);
}

size_t rcustring_maxlen(const struct rcustring *s)
{
	return s->maxlen;
}
