/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The locks of one entry in one 32-bit word (entry_lock.c), and the tree's
 * table of wait slots where a thread that must wait for an entry (or for a
 * table's handlers to drain) sleeps. Internal to the library.
 *
 * Three locks live in the word:
 *   - the data lock, a reader/writer lock preferring writers: a handler that
 *     changes its data in place writes under it exclusive, reads through
 *     the tree hold it shared (entries whose reads need it);
 *   - the writer lock: one write of the entry at a time, so the audit's
 *     old/new pair belongs together;
 *   - the callback lock, with a condition: the entry's change callbacks.
 * Waiting threads sleep on a futex of the slot the entry hashes to; the
 * word's waiter bits tell a releaser whether anyone may sleep, so an
 * uncontended lock and unlock is one atomic operation each and no system
 * call.
 */
#ifndef RCUSTRING_LIB_SYSCTL_ENTRY_LOCK_H
#define RCUSTRING_LIB_SYSCTL_ENTRY_LOCK_H

#include <stdint.h>

struct sysctl_tree;
struct sysctl_entry;

/* Slots of a tree's wait table (a power of two). */
#define RCS_WAIT_SLOTS 64

/*
 * One slot: futex words that only grow. lock_seq is bumped when a lock bit
 * is released with waiters; event_seq when a condition is signalled
 * (callback condition, a table's handlers drained).
 */
struct rcs_wait_slot {
	uint32_t lock_seq;
	uint32_t event_seq;
};

/*
 * Every call below is made with a reference on @e held: an unlock reads
 * the entry's tree after it released the word.
 */

/* The data lock, shared: no writer of the data holds it or waits for it. */
void rcs_elock_read(struct sysctl_entry *e);
void rcs_elock_read_unlock(struct sysctl_entry *e);
/* The data lock, exclusive: new readers wait, then the readers in it drain. */
void rcs_elock_data(struct sysctl_entry *e);
void rcs_elock_data_unlock(struct sysctl_entry *e);
/* The writer lock (a mutex; not recursive). */
void rcs_elock_write(struct sysctl_entry *e);
void rcs_elock_write_unlock(struct sysctl_entry *e);
/* The callback lock (a mutex; not recursive) and its condition. */
void rcs_elock_cb(struct sysctl_entry *e);
void rcs_elock_cb_unlock(struct sysctl_entry *e);
/*
 * With the callback lock held: drop it, sleep until rcs_elock_cb_broadcast()
 * (or spuriously, as pthread_cond_wait), take it again.
 */
void rcs_elock_cb_wait(struct sysctl_entry *e);
/* With the callback lock held: wake every rcs_elock_cb_wait() of @e. */
void rcs_elock_cb_broadcast(struct sysctl_entry *e);

/*
 * Waiting for a condition on any object of @tree, keyed by its address:
 * take the ticket, test the condition, and sleep with the ticket only when
 * it does not hold; whoever makes it hold changes it first, then calls
 * rcs_event_wake() on the same key. No wake-up is lost: a wake after the
 * ticket makes the sleep return at once. A sleep may return spuriously.
 */
uint32_t rcs_event_ticket(struct sysctl_tree *tree, const void *key);
void rcs_event_sleep(struct sysctl_tree *tree, const void *key, uint32_t ticket);
void rcs_event_wake(struct sysctl_tree *tree, const void *key);

#endif
