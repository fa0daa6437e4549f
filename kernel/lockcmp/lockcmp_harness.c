// SPDX-License-Identifier: GPL-2.0
/*
 * lockcmp harness: the guest side of kernel/lockcmp/run. It is copied into
 * fs/ of the guest kernels and #included at the end of fs/coredump.c (so it
 * sees the static core_pattern and its lock); it is never part of a patch.
 * It reads core_pattern the way a reader of each version does, one whole
 * copy into a buffer: with the RCU series rcustring_copy(), with the lock
 * version strscpy() under core_pattern_mutex. Commands are written to
 * /sys/module/coredump/parameters/lockcmp:
 *   "ctx"           the readers a lock cannot serve: one with interrupts
 *                   off (an oops-time or NMI reader), one inside
 *                   rcu_read_lock() (mptcp's socket creation), and one
 *                   inside rcu_read_lock() while a writer holds the lock;
 *                   the debug guests' log shows what lockdep and
 *                   might_sleep() think of each
 *   "bench N [writer]"  one timing round: a reader kthread per online CPU,
 *                   N reads each, each read timed with rdtsc; prints
 *                   reads/s, p50 and p99 latency and torn reads ("writer"
 *                   only labels the round: the guest's init runs the
 *                   writer storm, a shell writing /proc/sys/kernel/core_pattern)
 * Boot parameter coredump.lockcmp_break=1 makes the RCU version's reader
 * take the writers' mutex: the deliberate break that the context check
 * must catch.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <asm/tsc.h>

static bool lockcmp_break;
module_param(lockcmp_break, bool, 0444);

#ifdef RCUSTRING_INIT
#define LOCKCMP_VARIANT "rcu"
#define LOCKCMP_WRITER_LOCK (&core_pattern.lock)
static void lockcmp_read(char *buf, size_t size)
{
	if (lockcmp_break)
		mutex_lock(&core_pattern.lock);
	rcustring_copy(&core_pattern, buf, size);
	if (lockcmp_break)
		mutex_unlock(&core_pattern.lock);
}
#else
#define LOCKCMP_VARIANT "lock"
#define LOCKCMP_WRITER_LOCK (&core_pattern_mutex)
static void lockcmp_read(char *buf, size_t size)
{
	guard(mutex)(&core_pattern_mutex);
	strscpy(buf, core_pattern, size);
}
#endif

/* Every value the guest's writer stores is "core" or "core.<digits>". */
static bool lockcmp_whole(const char *s)
{
	if (strncmp(s, "core", 4))
		return false;
	s += 4;
	if (!*s)
		return true;
	if (*s++ != '.' || !*s)
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	return !*s;
}

struct lockcmp_holder {
	struct completion held;
	unsigned int ms;
};

static int lockcmp_hold_fn(void *arg)
{
	struct lockcmp_holder *h = arg;

	mutex_lock(LOCKCMP_WRITER_LOCK);
	complete(&h->held);
	msleep(h->ms);
	mutex_unlock(LOCKCMP_WRITER_LOCK);
	return 0;
}

static void lockcmp_ctx_one(const char *name, int how)
{
	char buf[CORENAME_MAX_SIZE] = "";
	struct lockcmp_holder h = { .ms = 200 };
	unsigned long flags;
	u64 t0, t1;

	/* might_sleep() reports at most once a second: space the cases. */
	msleep(1100);
	pr_info("lockcmp: ctx begin %s\n", name);
	if (how == 2) {
		init_completion(&h.held);
		if (IS_ERR(kthread_run(lockcmp_hold_fn, &h, "lockcmp_hold"))) {
			pr_info("lockcmp: ctx end %s error no kthread\n", name);
			return;
		}
		wait_for_completion(&h.held);
	}
	t0 = ktime_get_ns();
	if (how == 0) {
		local_irq_save(flags);
		lockcmp_read(buf, sizeof(buf));
		local_irq_restore(flags);
	} else {
		rcu_read_lock();
		lockcmp_read(buf, sizeof(buf));
		rcu_read_unlock();
	}
	t1 = ktime_get_ns();
	/* The holder may still sleep: let it finish before h goes away. */
	if (how == 2)
		msleep(h.ms + 100);
	pr_info("lockcmp: ctx end %s read '%s' in %llu us\n", name, buf,
		(t1 - t0) / 1000);
}

struct lockcmp_reader {
	struct completion done;
	u32 *lat;
	unsigned int n;
	unsigned int torn;
	u64 t_start, t_end;
};

static int lockcmp_reader_fn(void *arg)
{
	struct lockcmp_reader *r = arg;
	char buf[CORENAME_MAX_SIZE];
	unsigned int i;
	u64 c0, c1;

	r->t_start = ktime_get_ns();
	for (i = 0; i < r->n; i++) {
		c0 = rdtsc_ordered();
		lockcmp_read(buf, sizeof(buf));
		c1 = rdtsc_ordered();
		r->lat[i] = min_t(u64, c1 - c0, U32_MAX);
		if (!lockcmp_whole(buf))
			r->torn++;
		if (!(i & 255))
			cond_resched();
	}
	r->t_end = ktime_get_ns();
	complete(&r->done);
	return 0;
}

static int lockcmp_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

static u64 lockcmp_cyc_to_ns(u64 cyc)
{
	return tsc_khz ? div_u64(cyc * 1000000, tsc_khz) : cyc;
}

static void lockcmp_report(struct lockcmp_reader *r, int nr, unsigned int n,
			   u32 *all, bool writer)
{
	u64 first = U64_MAX, last = 0, total = (u64)nr * n, wall;
	unsigned int torn = 0;
	int i;

	for (i = 0; i < nr; i++) {
		first = min(first, r[i].t_start);
		last = max(last, r[i].t_end);
		torn += r[i].torn;
	}
	wall = max_t(u64, last - first, 1);
	sort(all, total, sizeof(u32), lockcmp_cmp_u32, NULL);
	pr_info("lockcmp: result variant=%s cpus=%d writer=%d reads=%llu ms=%llu ops_per_s=%llu p50_ns=%llu p99_ns=%llu torn=%u tsc_khz=%u\n",
		LOCKCMP_VARIANT, nr, writer, total, div_u64(wall, 1000000),
		div_u64(total * 1000000000ULL, wall),
		lockcmp_cyc_to_ns(all[total / 2]),
		lockcmp_cyc_to_ns(all[total * 99 / 100]), torn, tsc_khz);
}

static int lockcmp_bench(unsigned int n, bool writer)
{
	int nr = num_online_cpus(), cpu, i = 0;
	struct lockcmp_reader *r;
	struct task_struct *t;
	u32 *all;

	all = vmalloc(array_size((size_t)nr * n, sizeof(u32)));
	r = kcalloc(nr, sizeof(*r), GFP_KERNEL);
	if (!all || !r) {
		vfree(all);
		kfree(r);
		return -ENOMEM;
	}
	for_each_online_cpu(cpu) {
		r[i].n = n;
		r[i].lat = all + (size_t)i * n;
		init_completion(&r[i].done);
		t = kthread_create_on_cpu(lockcmp_reader_fn, &r[i], cpu,
					  "lockcmp/%u");
		if (IS_ERR(t))
			break;
		wake_up_process(t);
		i++;
	}
	nr = i;
	for (i = 0; i < nr; i++)
		wait_for_completion(&r[i].done);
	if (nr)
		lockcmp_report(r, nr, n, all, writer);
	vfree(all);
	kfree(r);
	return nr ? 0 : -ECHILD;
}

static int lockcmp_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	char w[8] = "";

	if (sysfs_streq(val, "ctx")) {
		pr_info("lockcmp: ctx variant=%s break=%d\n", LOCKCMP_VARIANT,
			lockcmp_break);
		lockcmp_ctx_one("irqs-off", 0);
		lockcmp_ctx_one("rcu-read-lock", 1);
		lockcmp_ctx_one("rcu-read-lock-writer-holds-lock", 2);
		pr_info("lockcmp: ctx done\n");
		return 0;
	}
	if (sscanf(val, "bench %u %7s", &n, w) >= 1 && n > 0 && n <= 10000000)
		return lockcmp_bench(n, !strcmp(w, "writer"));
	return -EINVAL;
}

static const struct kernel_param_ops lockcmp_ops = {
	.set = lockcmp_set,
};
module_param_cb(lockcmp, &lockcmp_ops, NULL, 0200);
