/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Value buffers: a string with a header in front, so the free path knows
 * what it frees without guessing from the address. Internal to the library.
 *
 * Old versions wait for a grace period in a library-wide backlog bounded in
 * buffers (RCUSTRING_PENDING_MAX) and in bytes (RCUSTRING_PENDING_BYTES_MAX),
 * each buffer counted as rcs_buf_size(). A writer reserves room in the
 * backlog before it publishes, so a write that cannot get room fails with
 * the old value still in place instead of publishing and then overflowing.
 */
#ifndef RCUSTRING_LIB_BUF_H
#define RCUSTRING_LIB_BUF_H

#include <stdbool.h>
#include <stddef.h>

/* Allocate a buffer of @capacity bytes; returns its string or NULL. */
char *rcs_buf_alloc(size_t capacity);

/*
 * Shrink an unpublished buffer to @capacity bytes (its contents must fit);
 * returns the string, moved or not. Keeps the buffer as it is if the
 * allocator cannot shrink it.
 */
char *rcs_buf_shrink(char *str, size_t capacity);

/* Bytes a buffer of @capacity counts for in the backlog (header included). */
size_t rcs_buf_size(size_t capacity);

/* Bytes @str (a buffer from rcs_buf_alloc) counts for in the backlog. */
size_t rcs_buf_size_of(const char *str);

/* Free a buffer that no reader can have seen (never published). */
void rcs_buf_free_now(char *str);

/*
 * Reserve room in the backlog for one old version of up to @bytes bytes.
 * When the backlog is full, waits with rcu_barrier() until every queued free
 * has run, then tries again; the backlog is then empty, so a single wait
 * suffices unless other writers refill it first. Waiting is impossible
 * inside a read-side section (the grace period would wait for the caller):
 * there it returns -EDEADLK at once, or, with @force, takes the room anyway
 * beyond the bound. A reservation larger than the byte bound is granted
 * when the backlog is empty. Return: 0 or -EDEADLK.
 */
int rcs_buf_reserve(size_t bytes, bool force);

/* Give back @bytes of a reservation (the old version was smaller or none). */
void rcs_buf_unreserve(size_t bytes);

/*
 * Free published buffer @str after a grace period, into a reservation of
 * @reserved bytes made by rcs_buf_reserve(); the unused part of the
 * reservation is given back. Never waits, so it may run inside a read-side
 * section.
 */
void rcs_buf_free_reserved(char *str, size_t reserved);

/*
 * Reserve for @str (waiting if the backlog is full, or exceeding it inside
 * a read-side section: the callers cannot fail) and free it after a grace
 * period. NULL is ignored.
 */
void rcs_buf_free_deferred(char *str);

/*
 * rcs_buf_hold_frees - hold back this thread's frees (rcs_buf_free_reserved,
 * rcs_buf_free_deferred) until the matching rcs_buf_release_frees(), which
 * queues them to call_rcu. A writer that wakes its readers (a change
 * notification) between the two does so before call_rcu wakes liburcu's
 * worker thread: on a busy machine the reader gets the core first. A grace
 * period that starts later is only later; the backlog counts the held
 * buffers already, and a writer that must wait for it queues them first.
 * Context: any thread, outside or inside a read-side section; nests; up to
 * 64 buffers are held at a time (more go to call_rcu at once).
 */
void rcs_buf_hold_frees(void);
/*
 * rcs_buf_release_frees - end the outermost rcs_buf_hold_frees(): queue
 * what this thread held to call_rcu.
 * Context: the thread that called rcs_buf_hold_frees().
 */
void rcs_buf_release_frees(void);

#endif
