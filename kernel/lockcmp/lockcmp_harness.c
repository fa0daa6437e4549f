// SPDX-License-Identifier: GPL-2.0
/*
 * lockcmp timing harness: the guest side of kernel/lockcmp/run's timing
 * guests. Not part of a patch: run copies it into lib/ of the RCU tree
 * (obj-y). It holds two strings of 128 bytes (core_pattern's size), one of
 * each protocol, side by side in one kernel:
 *   kernel.lockcmp_rcu   an rcustring behind proc_rcu_string() (the RCU
 *                        series); a reader copies it with rcustring_copy()
 *   kernel.lockcmp_lock  a char array behind proc_dostring_locked() (patch
 *                        0001 of kernel/lockcmp/patches, copied below: this
 *                        tree has the RCU series, not that one); a reader
 *                        copies it with strscpy() under its mutex, as every
 *                        reader of the lock alternative does
 * so both are measured on the same base, config, boot and machine, in
 * interleaved rounds. Commands are written to
 * /sys/module/lockcmp_harness/parameters/run:
 *   "bench rcu|lock N [writer]"  one round: a reader kthread per online
 *       CPU, N reads each, one in 16 timed with rdtsc; prints reads/s, p50
 *       and p99 latency and torn reads. "writer" only labels the round: the
 *       guest's init runs the writer storm, a shell rewriting the sysctl
 *       through /proc/sys as fast as it can.
 */
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/rcustring.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/sysctl.h>
#include <linux/vmalloc.h>
#include <asm/tsc.h>

#define LOCKCMP_LEN 128
/* One read in LOCKCMP_SAMPLE is timed and kept: the latencies are sorted. */
#define LOCKCMP_SAMPLE 16

static struct rcustring lockcmp_rcu = RCUSTRING_INIT(lockcmp_rcu, "core", LOCKCMP_LEN);
static char lockcmp_str[LOCKCMP_LEN] = "core";
/* The lock alternative's mutex: its sysctl handler and every reader hold it. */
static DEFINE_MUTEX(lockcmp_mutex);

/* kernel/lockcmp/patches/0001's proc_dostring_locked(), as it is there. */
static int lockcmp_dostring_locked(const struct ctl_table *table, int dir,
				   void *buffer, size_t *lenp, loff_t *ppos)
{
	guard(mutex)(table->extra1);
	return proc_dostring(table, dir, buffer, lenp, ppos);
}

static const struct ctl_table lockcmp_table[] = {
	{
		.procname	= "lockcmp_rcu",
		.data		= &lockcmp_rcu,
		.maxlen		= LOCKCMP_LEN,
		.mode		= 0644,
		.proc_handler	= proc_rcu_string,
	},
	{
		.procname	= "lockcmp_lock",
		.data		= lockcmp_str,
		.maxlen		= LOCKCMP_LEN,
		.mode		= 0644,
		.proc_handler	= lockcmp_dostring_locked,
		.extra1		= &lockcmp_mutex,
	},
};

static void lockcmp_read_rcu(char *buf, size_t size)
{
	rcustring_copy(&lockcmp_rcu, buf, size);
}

static void lockcmp_read_lock(char *buf, size_t size)
{
	scoped_guard(mutex, &lockcmp_mutex)
		strscpy(buf, lockcmp_str, size);
}

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

struct lockcmp_reader {
	struct completion done;
	void (*read)(char *buf, size_t size);
	u32 *lat;
	unsigned int n;
	unsigned int torn;
	u64 cycles;	/* the reader's whole run, on its own CPU */
};

static int lockcmp_reader_fn(void *arg)
{
	struct lockcmp_reader *r = arg;
	char buf[LOCKCMP_LEN];
	unsigned int i;
	u64 c0, c1, start;

	start = rdtsc_ordered();
	for (i = 0; i < r->n; i++) {
		if (i % LOCKCMP_SAMPLE) {
			r->read(buf, sizeof(buf));
		} else {
			c0 = rdtsc_ordered();
			r->read(buf, sizeof(buf));
			c1 = rdtsc_ordered();
			r->lat[i / LOCKCMP_SAMPLE] = min_t(u64, c1 - c0, U32_MAX);
		}
		if (!lockcmp_whole(buf))
			r->torn++;
		if (!(i & 255))
			cond_resched();
	}
	r->cycles = rdtsc_ordered() - start;
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

static void lockcmp_report(const char *variant, struct lockcmp_reader *r,
			   int nr, unsigned int n, u32 *all, bool writer)
{
	size_t samples = (size_t)nr * DIV_ROUND_UP(n, LOCKCMP_SAMPLE);
	u64 total = (u64)nr * n, ops = 0, longest = 0, ns;
	unsigned int torn = 0;
	int i;

	/*
	 * The guest's TSCs are not synchronised across CPUs: each reader's
	 * rate comes from its own start and end, and the rates add up.
	 */
	for (i = 0; i < nr; i++) {
		ns = max_t(u64, lockcmp_cyc_to_ns(r[i].cycles), 1);
		ops += div64_u64((u64)n * NSEC_PER_SEC, ns);
		longest = max(longest, ns);
		torn += r[i].torn;
	}
	sort(all, samples, sizeof(u32), lockcmp_cmp_u32, NULL);
	pr_info("lockcmp: result variant=%s cpus=%d writer=%d reads=%llu ms=%llu ops_per_s=%llu p50_ns=%llu p99_ns=%llu torn=%u tsc_khz=%u\n",
		variant, nr, writer, total, div_u64(longest, NSEC_PER_MSEC), ops,
		lockcmp_cyc_to_ns(all[samples / 2]),
		lockcmp_cyc_to_ns(all[samples * 99 / 100]), torn, tsc_khz);
}

static int lockcmp_bench(const char *variant, unsigned int n, bool writer)
{
	int nr = num_online_cpus(), cpu, i = 0;
	size_t per = DIV_ROUND_UP(n, LOCKCMP_SAMPLE);
	struct lockcmp_reader *r;
	struct task_struct *t;
	u32 *all;

	all = vmalloc(array_size((size_t)nr * per, sizeof(u32)));
	r = kcalloc(nr, sizeof(*r), GFP_KERNEL);
	if (!all || !r) {
		vfree(all);
		kfree(r);
		return -ENOMEM;
	}
	for_each_online_cpu(cpu) {
		r[i].n = n;
		r[i].lat = all + (size_t)i * per;
		r[i].read = strcmp(variant, "rcu") ? lockcmp_read_lock : lockcmp_read_rcu;
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
		lockcmp_report(variant, r, nr, n, all, writer);
	vfree(all);
	kfree(r);
	return nr ? 0 : -ECHILD;
}

static int lockcmp_set(const char *val, const struct kernel_param *kp)
{
	char variant[8] = "", w[8] = "";
	unsigned int n;

	if (sscanf(val, "bench %7s %u %7s", variant, &n, w) < 2 ||
	    (strcmp(variant, "rcu") && strcmp(variant, "lock")) ||
	    !n || n > 10000000)
		return -EINVAL;
	return lockcmp_bench(variant, n, !strcmp(w, "writer"));
}

static const struct kernel_param_ops lockcmp_ops = {
	.set = lockcmp_set,
};
module_param_cb(run, &lockcmp_ops, NULL, 0200);

static int __init lockcmp_init(void)
{
	return register_sysctl("kernel", lockcmp_table) ? 0 : -ENOMEM;
}
late_initcall(lockcmp_init);
