// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "lockcmp": the readers a lock cannot serve, on the UML KUnit
 * kernel of the RCU series (PROVE_LOCKING, PROVE_RCU, DEBUG_ATOMIC_SLEEP,
 * KASAN, two CPUs). Not part of a patch: kernel/lockcmp/run copies it into
 * lib/tests/ of its UML tree. It holds one string of each shape, 128 bytes
 * like core_pattern: an rcustring, read with rcustring_copy() as the RCU
 * series' readers do, and a char array with a mutex, read with strscpy()
 * under the mutex as every reader of the lock alternative
 * (kernel/lockcmp/patches) does. Each is read with interrupts off (an
 * oops-time or NMI reader), inside rcu_read_lock() (mptcp's socket
 * creation), and inside rcu_read_lock() while a writer holds the writers'
 * mutex. What lockdep and might_sleep() say goes to the kernel log between
 * "lockcmp: ctx begin" and "lockcmp: ctx end" lines, which
 * kernel/lockcmp/summary.py judges; the cases themselves check the value
 * read and whether the reader waited for the writer. Kernel parameter
 * lockcmp_kunit.break_rcu=1 makes the RCU reader take the writers' mutex:
 * the deliberate break the log check and the waiting check must catch.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcustring.h>
#include <linux/string.h>

#define LOCKCMP_LEN 128
#define LOCKCMP_HOLD_MS 200

static bool break_rcu;
module_param(break_rcu, bool, 0444);

static struct rcustring lockcmp_rcu = RCUSTRING_INIT(lockcmp_rcu, "core", LOCKCMP_LEN);
static char lockcmp_str[LOCKCMP_LEN] = "core";
/* The lock alternative's mutex: its writer and every reader hold it. */
static DEFINE_MUTEX(lockcmp_mutex);

static void lockcmp_read_rcu(char *buf, size_t size)
{
	if (break_rcu)
		mutex_lock(&lockcmp_rcu.lock);
	rcustring_copy(&lockcmp_rcu, buf, size);
	if (break_rcu)
		mutex_unlock(&lockcmp_rcu.lock);
}

static void lockcmp_read_lock(char *buf, size_t size)
{
	scoped_guard(mutex, &lockcmp_mutex)
		strscpy(buf, lockcmp_str, size);
}

struct lockcmp_holder {
	struct completion held;
	struct mutex *lock;
};

static int lockcmp_hold_fn(void *arg)
{
	struct lockcmp_holder *h = arg;

	mutex_lock(h->lock);
	complete(&h->held);
	msleep(LOCKCMP_HOLD_MS);
	mutex_unlock(h->lock);
	return 0;
}

enum lockcmp_how { IRQS_OFF, IN_RCU, IN_RCU_WRITER_HOLDS };
static const char * const lockcmp_how_name[] = {
	"irqs-off", "rcu-read-lock", "rcu-read-lock-writer-holds-lock",
};

/* Returns how long the read took, in microseconds. */
static u64 lockcmp_ctx(struct kunit *test, bool rcu, enum lockcmp_how how)
{
	struct lockcmp_holder h = {
		.lock = rcu ? &lockcmp_rcu.lock : &lockcmp_mutex,
	};
	void (*read)(char *buf, size_t size) =
		rcu ? lockcmp_read_rcu : lockcmp_read_lock;
	const char *variant = rcu ? "rcu" : "lock";
	char buf[LOCKCMP_LEN] = "";
	unsigned long flags;
	u64 t0, us;

	/* might_sleep() reports at most once a second: space the cases. */
	msleep(1100);
	if (how == IN_RCU_WRITER_HOLDS) {
		init_completion(&h.held);
		KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(lockcmp_hold_fn, &h,
							    "lockcmp_hold")));
		wait_for_completion(&h.held);
	}
	pr_info("lockcmp: ctx begin %s %s break=%d\n", variant,
		lockcmp_how_name[how], break_rcu);
	t0 = ktime_get_ns();
	if (how == IRQS_OFF) {
		local_irq_save(flags);
		read(buf, sizeof(buf));
		local_irq_restore(flags);
	} else {
		rcu_read_lock();
		read(buf, sizeof(buf));
		rcu_read_unlock();
	}
	us = (ktime_get_ns() - t0) / 1000;
	pr_info("lockcmp: ctx end %s %s read '%s' in %llu us\n", variant,
		lockcmp_how_name[how], buf, us);
	/* The holder still uses h: let it finish before h goes away. */
	if (how == IN_RCU_WRITER_HOLDS)
		msleep(LOCKCMP_HOLD_MS + 100);
	KUNIT_EXPECT_STREQ(test, buf, "core");
	return us;
}

static void lockcmp_rcu_irqs_off(struct kunit *test)
{
	lockcmp_ctx(test, true, IRQS_OFF);
}

static void lockcmp_rcu_in_rcu(struct kunit *test)
{
	lockcmp_ctx(test, true, IN_RCU);
}

/* A reader of the RCU version never waits for a writer. */
static void lockcmp_rcu_writer_holds(struct kunit *test)
{
	KUNIT_EXPECT_LT(test, lockcmp_ctx(test, true, IN_RCU_WRITER_HOLDS),
			LOCKCMP_HOLD_MS * 1000 / 2);
}

static void lockcmp_lock_irqs_off(struct kunit *test)
{
	lockcmp_ctx(test, false, IRQS_OFF);
}

static void lockcmp_lock_in_rcu(struct kunit *test)
{
	lockcmp_ctx(test, false, IN_RCU);
}

/* A reader of the lock version sleeps until the writer is done. */
static void lockcmp_lock_writer_holds(struct kunit *test)
{
	KUNIT_EXPECT_GE(test, lockcmp_ctx(test, false, IN_RCU_WRITER_HOLDS),
			LOCKCMP_HOLD_MS * 1000 / 2);
}

/* The RCU cases first: lockdep may stop checking after the lock ones. */
static struct kunit_case lockcmp_cases[] = {
	KUNIT_CASE_SLOW(lockcmp_rcu_irqs_off),
	KUNIT_CASE_SLOW(lockcmp_rcu_in_rcu),
	KUNIT_CASE_SLOW(lockcmp_rcu_writer_holds),
	KUNIT_CASE_SLOW(lockcmp_lock_irqs_off),
	KUNIT_CASE_SLOW(lockcmp_lock_in_rcu),
	KUNIT_CASE_SLOW(lockcmp_lock_writer_holds),
	{}
};

static struct kunit_suite lockcmp_suite = {
	.name = "lockcmp",
	.test_cases = lockcmp_cases,
};
kunit_test_suite(lockcmp_suite);

MODULE_DESCRIPTION("RCU string readers against mutex readers in atomic contexts");
MODULE_LICENSE("GPL");
