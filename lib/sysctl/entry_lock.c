/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An entry's locks in one 32-bit word, and the tree's wait slots (see
 * entry_lock.h). The word:
 *
 *   bits 0-23  readers holding the data lock
 *   DATA_W     the data lock is held, or wanted, exclusive: no new reader
 *   WRITE      the writer lock is held
 *   CB         the callback lock is held
 *   W_LOCK     a thread sleeps until a bit above changes (lock_seq)
 *   W_COND     a thread sleeps in rcs_elock_cb_wait() (event_seq)
 *
 * A waiter takes its slot's ticket first, then sets its waiter bit with a
 * compare-and-swap that also checks the lock is still held, then sleeps on
 * the ticket. A releaser clears the lock bit and the waiter bit in one
 * operation and, when the waiter bit was set, bumps the slot and wakes
 * every sleeper of it; so a release either comes before the compare-and-swap
 * (which then fails, and the waiter looks again) or after it (and then
 * after the ticket, so the sleep returns). Every sleeper of a slot wakes,
 * whichever entry it waits for, and looks again: waits are rare (writes
 * are), and a slot is shared by 1 in 64 entries. All atomics are seq_cst.
 *
 * Like the kernel's futex-based locks in glibc (and the parking lot of
 * WebKit or Rust), the word carries the state and the slot carries the
 * sleep: 4 bytes an entry instead of a mutex, a rwlock, another mutex and
 * a condition variable (184 bytes).
 */
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "entry_lock.h"
#include "tree.h"

#define READERS 0x00ffffffu
#define DATA_W (1u << 24)
#define WRITE (1u << 25)
#define CB (1u << 26)
#define W_LOCK (1u << 27)
#define W_COND (1u << 28)

static struct rcs_wait_slot *slot_of(struct sysctl_tree *tree, const void *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ULL;

	return &tree->wait_slots[h >> (64 - 6)];
}

_Static_assert(RCS_WAIT_SLOTS == 1 << 6, "slot_of() takes 6 bits of the hash");

static void futex_wait(uint32_t *word, uint32_t ticket)
{
	/* EAGAIN (the word moved on) and EINTR return as a spurious wake-up. */
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, ticket, NULL, NULL, 0);
}

static void futex_wake_all(uint32_t *word)
{
	__atomic_add_fetch(word, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static uint32_t load(const struct sysctl_entry *e)
{
	return __atomic_load_n(&e->lockw, __ATOMIC_SEQ_CST);
}

static int cas(struct sysctl_entry *e, uint32_t old, uint32_t new)
{
	return __atomic_compare_exchange_n(&e->lockw, &old, new, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_SEQ_CST);
}

/*
 * Wait until @busy bits of the word are clear, then add @add to it in the
 * same compare-and-swap (a lock bit, or 1 for a reader). @add 0 with @busy
 * READERS waits for the readers to drain.
 */
static void acquire(struct sysctl_entry *e, uint32_t busy, uint32_t add)
{
	struct rcs_wait_slot *slot = slot_of(rcs_entry_tree(e), e);

	for (;;) {
		uint32_t ticket = __atomic_load_n(&slot->lock_seq, __ATOMIC_SEQ_CST);
		uint32_t old = load(e);

		if (!(old & busy)) {
			if (!add || cas(e, old, old + add))
				return;
			continue;
		}
		if (!(old & W_LOCK) && !cas(e, old, old | W_LOCK))
			continue;
		futex_wait(&slot->lock_seq, ticket);
	}
}

/* Clear @bits; wake the slot's lock waiters if any may sleep on @e. */
static void release(struct sysctl_entry *e, uint32_t bits)
{
	uint32_t old = __atomic_fetch_and(&e->lockw, ~(bits | W_LOCK), __ATOMIC_SEQ_CST);

	if (old & W_LOCK)
		futex_wake_all(&slot_of(rcs_entry_tree(e), e)->lock_seq);
}

void rcs_elock_read(struct sysctl_entry *e)
{
	/* One more reader (never more than 2^24: one per thread at most). */
	acquire(e, DATA_W, 1);
}

void rcs_elock_read_unlock(struct sysctl_entry *e)
{
	uint32_t old = __atomic_fetch_sub(&e->lockw, 1, __ATOMIC_SEQ_CST);

	/* Only a writer draining the readers waits for the last one. */
	if ((old & READERS) == 1 && (old & W_LOCK))
		release(e, 0);
}

void rcs_elock_data(struct sysctl_entry *e)
{
	acquire(e, DATA_W, DATA_W); /* new readers wait from here on */
	acquire(e, READERS, 0);
}

void rcs_elock_data_unlock(struct sysctl_entry *e)
{
	release(e, DATA_W);
}

void rcs_elock_write(struct sysctl_entry *e)
{
	acquire(e, WRITE, WRITE);
}

void rcs_elock_write_unlock(struct sysctl_entry *e)
{
	release(e, WRITE);
}

void rcs_elock_cb(struct sysctl_entry *e)
{
	acquire(e, CB, CB);
}

void rcs_elock_cb_unlock(struct sysctl_entry *e)
{
	release(e, CB);
}

void rcs_elock_cb_wait(struct sysctl_entry *e)
{
	struct rcs_wait_slot *slot = slot_of(rcs_entry_tree(e), e);
	uint32_t ticket = __atomic_load_n(&slot->event_seq, __ATOMIC_SEQ_CST);

	/* Set while the lock is held: a broadcast needs the lock, so it sees it. */
	__atomic_fetch_or(&e->lockw, W_COND, __ATOMIC_SEQ_CST);
	release(e, CB);
	futex_wait(&slot->event_seq, ticket);
	acquire(e, CB, CB);
}

void rcs_elock_cb_broadcast(struct sysctl_entry *e)
{
	if (__atomic_fetch_and(&e->lockw, ~W_COND, __ATOMIC_SEQ_CST) & W_COND)
		futex_wake_all(&slot_of(rcs_entry_tree(e), e)->event_seq);
}

uint32_t rcs_event_ticket(struct sysctl_tree *tree, const void *key)
{
	return __atomic_load_n(&slot_of(tree, key)->event_seq, __ATOMIC_SEQ_CST);
}

void rcs_event_sleep(struct sysctl_tree *tree, const void *key, uint32_t ticket)
{
	futex_wait(&slot_of(tree, key)->event_seq, ticket);
}

void rcs_event_wake(struct sysctl_tree *tree, const void *key)
{
	futex_wake_all(&slot_of(tree, key)->event_seq);
}
