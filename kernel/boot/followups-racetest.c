// SPDX-License-Identifier: GPL-2.0
/*
 * The follow-up series' race test, run in the guest as /racetest by the
 * boot test's init (kernel/boot/followups-boot-test builds the initramfs).
 * One line per tunable, "race KERNEL TUNABLE PATH reads=N torn=N ...":
 *
 *   ftrace_dump_on_oops procsys  a writer flips the value between 37 'a'
 *       and 97 'b' (they differ in every byte); a reader on the other
 *       CPU counts reads that are neither plus a newline.
 *   cdrom_info procsys  no writer: every read rebuilds the text
 *       (cdrom_sysctl_info()); one reader per CPU compares each read with
 *       the text read alone at the start. No drive: the consumer is the
 *       file itself, nothing else in the kernel reads the text.
 *   firmware_path consumer  a writer flips firmware_class.path between
 *       "/" + 36 'a' and "/" + 96 'b', two directories of the initramfs
 *       that both hold fu-test.bin; this thread makes the kernel load
 *       that file (test_firmware's trigger_request). A load that fails
 *       with ENOENT looked in neither directory: torn (the paths after
 *       the customized one, under /lib/firmware, do not exist); errors
 *       counts other failures.
 *   mptcp_scheduler procsys  a writer rewrites the name with "default",
 *       the one scheduler a guest can have (others are BPF struct_ops), so
 *       a torn read cannot show here (torn=0 on both kernels, the line
 *       proves nothing alone); KCSAN is the evidence for this tunable.
 *   mptcp_scheduler consumer  the same writer while one thread per CPU
 *       creates MPTCP sockets, which look the name up
 *       (mptcp_init_sock()); failed counts sockets that could not be
 *       created.
 *   printk_devkmsg procsys  a writer flips "ratelimit" and "on"; a reader
 *       counts reads that are neither. printk_devkmsg refused: a writer
 *       alternates "ratelimit" with a word the handler refuses; a reader
 *       counts reads that are not "ratelimit" (a refused word, or a mix).
 *       The handler takes a word only with one character after it (the
 *       newline of "echo"): every value is written with its newline.
 *   mptcp_path_manager procsys  a writer flips "kernel" and "userspace"
 *       (word-sized copies on both sides: a torn read is unlikely, KCSAN
 *       is the evidence). mptcp_path_manager pm_type and consumer: the
 *       same writer (each write also sets pm_type) while a reader of
 *       pm_type's file and a thread creating MPTCP sockets, which read
 *       pm_type (mptcp_get_pm_type()), run on the other CPU; failed
 *       counts sockets that could not be created. mptcp_path_manager
 *       pair: FU_CALLS rounds in which two threads write at once, one
 *       path_manager by name, the other pm_type as the other one; after
 *       each round the two files must name the same path manager
 *       (disagree counts those that do not: pm_type is what the kernel
 *       uses).
 *
 * Every writer prints "writer KERNEL TUNABLE LABEL writes=N" (writes that
 * succeeded), with refused=N for one that also writes a refused word and
 * error=E when a write failed otherwise: a writer whose writes all fail
 * leaves the readers nothing to see, and the boot test fails it.
 *
 * KCSAN reports are copied to the console by kmsg.c; boot-test places
 * them (followups-kcsan-places). Kernel log lines of the KUnit run that
 * name rcustring are printed first, as "kunit " lines.
 *
 * Environment (from the kernel command line): RT_KERNEL (name printed on
 * every line), FU_READS (reads or sockets per line, default 10000),
 * FU_CALLS (firmware loads and path-manager rounds, default 2000),
 * FU_KCSAN_SKIP_WATCH and FU_KCSAN_UDELAY_TASK (written to KCSAN's
 * skip_watch and udelay_task before the lines, for a sharper pass:
 * watchpoints more often and held longer; boot runs with the defaults).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "racetest.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#define FTRACE_PATH "/proc/sys/kernel/ftrace_dump_on_oops"
#define CDROM_PATH "/proc/sys/dev/cdrom/info"
#define MPTCP_PATH "/proc/sys/net/mptcp/scheduler"
#define FWPATH_PATH "/sys/module/firmware_class/parameters/path"
#define DEVKMSG_PATH "/proc/sys/kernel/printk_devkmsg"
#define PM_PATH "/proc/sys/net/mptcp/path_manager"
#define PM_TYPE_PATH "/proc/sys/net/mptcp/pm_type"
#define FWTRIGGER_PATH "/sys/devices/virtual/misc/test_firmware/trigger_request"

const char *kname = "unknown";	/* kmsg.c prints it too */
static long reads_per_line = 10000;
static long calls_per_line = 2000;
static int cpus;

void die(const char *what)
{
	printf("racetest: %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % cpus, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static ssize_t pread_all(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

struct flipper {
	const char *path;
	const char *val[2];
	bool refusable;		/* val[1] is refused (EINVAL) by the handler */
	atomic_bool stop, first;
	long tries, writes, refused;	/* writes: those that succeeded */
	int err;
	pthread_t thread;
};

static void *flip(void *arg)
{
	struct flipper *f = arg;
	int fd = open(f->path, O_WRONLY | O_CLOEXEC);

	pin_to(0);
	if (fd < 0) {
		f->err = errno;
		return NULL;
	}
	while (!atomic_load(&f->stop)) {
		const char *v = f->val[f->tries++ & 1];

		if (pwrite(fd, v, strlen(v), 0) < 0) {
			if (f->refusable && errno == EINVAL && !(f->tries & 1)) {
				f->refused++;
				continue;
			}
			f->err = errno;
			break;
		}
		f->writes++;
		atomic_store(&f->first, true);
	}
	close(fd);
	return NULL;
}

static void flip_start(struct flipper *f, const char *path, const char *a,
		       const char *b, bool refusable)
{
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->refusable = refusable;
	f->val[0] = a;
	f->val[1] = b;
	if (pthread_create(&f->thread, NULL, flip, f))
		die("pthread_create");
	/* Readers start after the first write: the value before it is
	 * neither of the two. */
	while (!atomic_load(&f->first) && !f->err)
		usleep(100);
}

/* One "writer" line: what the writer wrote (see the top of the file). */
static void writer_line(const char *tunable, const char *label, long writes,
			const long *refused, int err)
{
	printf("writer %s %s %s writes=%ld", kname, tunable, label, writes);
	if (refused)
		printf(" refused=%ld", *refused);
	if (err)
		printf(" error=%s", strerror(err));
	printf("\n");
	fflush(stdout);
}

static void flip_stop(struct flipper *f, const char *tunable, const char *label)
{
	atomic_store(&f->stop, true);
	pthread_join(f->thread, NULL);
	writer_line(tunable, label, f->writes, f->refusable ? &f->refused : NULL, f->err);
}

/* Readers: each compares its reads with the whole values it may see. */
struct reader {
	const char *path;
	const char *ok[2];	/* whole values, newline included */
	int cpu;
	long reads, torn;
	int err;
	char sample[128];	/* first torn value, cut short */
	pthread_t thread;
};

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	static char bufs[4][2048];
	char *buf = bufs[r->cpu & 3];
	int fd = open(r->path, O_RDONLY | O_CLOEXEC);

	pin_to(r->cpu);
	if (fd < 0) {
		r->err = errno;
		return NULL;
	}
	for (r->reads = 0; r->reads < reads_per_line; r->reads++) {
		if (pread_all(fd, buf, sizeof(bufs[0])) < 0) {
			r->err = errno;
			break;
		}
		if (strcmp(buf, r->ok[0]) && (!r->ok[1] || strcmp(buf, r->ok[1]))) {
			if (!r->torn++)
				snprintf(r->sample, sizeof(r->sample), "%zu bytes: %.60s",
					 strlen(buf), buf);
		}
	}
	close(fd);
	return NULL;
}

/* Run NR readers (CPU first_cpu onwards) and print one race line. */
static void readers_line(const char *tunable, const char *label, const char *path,
			 const char *a, const char *b, int nr, int first_cpu, long writes)
{
	struct reader r[4];
	long reads = 0, torn = 0;
	int i, err = 0;

	memset(r, 0, sizeof(r));
	for (i = 0; i < nr; i++) {
		r[i].path = path;
		r[i].ok[0] = a;
		r[i].ok[1] = b;
		r[i].cpu = first_cpu + i;
		if (pthread_create(&r[i].thread, NULL, read_loop, &r[i]))
			die("pthread_create");
	}
	for (i = 0; i < nr; i++) {
		pthread_join(r[i].thread, NULL);
		reads += r[i].reads;
		torn += r[i].torn;
		if (r[i].err)
			err = r[i].err;
	}
	printf("race %s %s %s reads=%ld torn=%ld", kname, tunable, label, reads, torn);
	if (writes >= 0)
		printf(" writes=%ld", writes);
	if (err)
		printf(" error=%s", strerror(err));
	printf("\n");
	for (i = 0; i < nr; i++)
		if (r[i].torn) {
			printf("sample %s %s %s torn \"%s\"\n", kname, tunable, label,
			       r[i].sample);
			break;
		}
	fflush(stdout);
}

static void write_restore(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		printf("note %s cannot restore %s: %s\n", kname, path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static char *repeat(int c, size_t n, bool nl)
{
	char *s = malloc(n + 2);

	if (!s)
		die("malloc");
	memset(s, c, n);
	s[n] = '\n';
	s[n + nl] = '\0';
	return s;
}

/*
 * The KUnit results in the kernel log (the patched kernel runs the
 * rcustring suite's module-parameter case at boot), as "kunit " lines.
 */
static void kunit_results(void)
{
	char rec[8192];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = read(fd, rec, sizeof(rec) - 1)) != 0) {
		char *text, *nl;

		if (n < 0 && errno == EPIPE)
			continue;
		if (n < 0)
			break;
		rec[n] = '\0';
		text = strchr(rec, ';');
		if (!text)
			continue;
		text++;
		nl = strchr(text, '\n');
		if (nl)
			*nl = '\0';
		if (strstr(text, "rcustring") || strstr(text, "KTAP") ||
		    strstr(text, "# Totals"))
			printf("kunit %s\n", text);
	}
	close(fd);
}

static void line_ftrace(void)
{
	struct flipper f;
	char *a = repeat('a', 37, false), *b = repeat('b', 97, false);
	char *an = repeat('a', 37, true), *bn = repeat('b', 97, true);

	flip_start(&f, FTRACE_PATH, a, b, false);
	readers_line("ftrace_dump_on_oops", "procsys", FTRACE_PATH, an, bn, 1, 1, -1);
	flip_stop(&f, "ftrace_dump_on_oops", "procsys");
	write_restore(FTRACE_PATH, "0");
}

static void line_cdrom(void)
{
	static char ref[2048];
	int fd = open(CDROM_PATH, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || pread_all(fd, ref, sizeof(ref)) <= 0) {
		printf("note %s cdrom_info: cannot read %s: %s\n", kname, CDROM_PATH,
		       strerror(errno));
		return;
	}
	close(fd);
	printf("note %s cdrom_info len=%zu\n", kname, strlen(ref));
	readers_line("cdrom_info", "procsys", CDROM_PATH, ref, NULL, cpus > 1 ? 2 : 1, 0, -1);
}

struct sockets {
	int cpu;
	long calls, failed;
	int err;
	pthread_t thread;
};

static void *socket_loop(void *arg)
{
	struct sockets *s = arg;

	pin_to(s->cpu);
	for (s->calls = 0; s->calls < reads_per_line; s->calls++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_MPTCP);

		if (fd < 0) {
			s->failed++;
			s->err = errno;
			continue;
		}
		close(fd);
	}
	return NULL;
}

static void line_firmware(void)
{
	struct flipper f;
	char *a = repeat('a', 36, false), *b = repeat('b', 96, false);
	char a_dir[40], b_dir[100];
	long calls, torn = 0, errors = 0;
	int fd, err = 0;

	snprintf(a_dir, sizeof(a_dir), "/%s", a);
	snprintf(b_dir, sizeof(b_dir), "/%s", b);
	fd = open(FWTRIGGER_PATH, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		printf("note %s firmware_path: cannot open %s: %s\n", kname,
		       FWTRIGGER_PATH, strerror(errno));
		return;
	}
	flip_start(&f, FWPATH_PATH, a_dir, b_dir, false);
	pin_to(1);
	for (calls = 0; calls < calls_per_line; calls++) {
		if (pwrite(fd, "fu-test.bin", 11, 0) >= 0)
			continue;
		if (errno == ENOENT) {
			torn++;
		} else {
			errors++;
			err = errno;
		}
	}
	flip_stop(&f, "firmware_path", "consumer");
	close(fd);
	printf("race %s firmware_path consumer calls=%ld torn=%ld errors=%ld%s%s\n",
	       kname, calls, torn, errors, err ? " error=" : "", err ? strerror(err) : "");
	fflush(stdout);
}

static void line_mptcp(void)
{
	static char avail[256];
	struct flipper f;
	struct sockets s[2];
	long calls = 0, failed = 0;
	int i, err = 0, fd;

	fd = open("/proc/sys/net/mptcp/available_schedulers", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && pread_all(fd, avail, sizeof(avail)) > 0)
		printf("note %s mptcp_scheduler available=%s", kname, avail);
	if (fd >= 0)
		close(fd);

	flip_start(&f, MPTCP_PATH, "default", "default", false);
	readers_line("mptcp_scheduler", "procsys", MPTCP_PATH, "default\n", NULL, 1, 1, -1);
	/* The consumer: socket creation looks the name up. */
	memset(s, 0, sizeof(s));
	for (i = 0; i < 2; i++) {
		s[i].cpu = i;
		if (pthread_create(&s[i].thread, NULL, socket_loop, &s[i]))
			die("pthread_create");
	}
	for (i = 0; i < 2; i++) {
		pthread_join(s[i].thread, NULL);
		calls += s[i].calls;
		failed += s[i].failed;
		if (s[i].err)
			err = s[i].err;
	}
	flip_stop(&f, "mptcp_scheduler", "procsys");
	printf("race %s mptcp_scheduler consumer calls=%ld failed=%ld%s%s\n", kname,
	       calls, failed, err ? " error=" : "", err ? strerror(err) : "");
	fflush(stdout);
}

/*
 * printk_devkmsg: a writer flips "ratelimit" and "on" (they differ in
 * every byte "on" has); then a writer alternates "ratelimit" with a word
 * the handler refuses, and readers must only ever see "ratelimit". The
 * handler refuses a word without exactly one character after it
 * (devkmsg_sysctl_set_loglvl(): "err + 1 != *lenp"), so each value is
 * written with its newline, as echo writes it.
 */
static void line_printk(void)
{
	struct flipper f;

	flip_start(&f, DEVKMSG_PATH, "ratelimit\n", "on\n", false);
	readers_line("printk_devkmsg", "procsys", DEVKMSG_PATH, "ratelimit\n", "on\n",
		     1, 1, -1);
	flip_stop(&f, "printk_devkmsg", "procsys");
	write_restore(DEVKMSG_PATH, "ratelimit\n");

	flip_start(&f, DEVKMSG_PATH, "ratelimit\n", "refused9\n", true);
	readers_line("printk_devkmsg", "refused", DEVKMSG_PATH, "ratelimit\n", NULL,
		     1, 1, -1);
	flip_stop(&f, "printk_devkmsg", "refused");
	write_restore(DEVKMSG_PATH, "ratelimit\n");
	fflush(stdout);
}

/*
 * net.mptcp.path_manager and pm_type: readers of the name while a writer
 * flips it; then rounds in which one thread writes a path manager by name
 * and another the other one by type, at once; after each round the two
 * files must name the same one ("kernel" is type 0, "userspace" 1).
 */
struct pm_writer {
	pthread_barrier_t *start, *done;
	const char *path;
	const char *val[2];
	int cpu, err;
	long writes;
	pthread_t thread;
};

static void *pm_write_loop(void *arg)
{
	struct pm_writer *w = arg;
	int fd = open(w->path, O_WRONLY | O_CLOEXEC);
	long i;

	pin_to(w->cpu);
	if (fd < 0)
		w->err = errno;
	for (i = 0; i < calls_per_line; i++) {
		const char *v = w->val[i & 1];

		pthread_barrier_wait(w->start);
		if (fd >= 0 && pwrite(fd, v, strlen(v), 0) < 0)
			w->err = errno;
		else if (fd >= 0)
			w->writes++;
		pthread_barrier_wait(w->done);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void line_path_manager(void)
{
	static char name[64], type[16];
	pthread_barrier_t start, done;
	struct pm_writer w[2] = {
		{ .path = PM_PATH, .val = { "kernel", "userspace" }, .cpu = 0 },
		{ .path = PM_TYPE_PATH, .val = { "1", "0" }, .cpu = 1 },
	};
	struct flipper f;
	struct sockets s;
	long i, disagree = 0;
	int nfd, tfd, k, err = 0;

	flip_start(&f, PM_PATH, "kernel", "userspace", false);
	readers_line("mptcp_path_manager", "procsys", PM_PATH, "kernel\n", "userspace\n",
		     1, 1, -1);
	flip_stop(&f, "mptcp_path_manager", "procsys");

	/* The consumers of pm_type, which each write of the name sets: its
	 * file, and socket creation. */
	flip_start(&f, PM_PATH, "kernel", "userspace", false);
	memset(&s, 0, sizeof(s));
	s.cpu = 1;
	if (pthread_create(&s.thread, NULL, socket_loop, &s))
		die("pthread_create");
	readers_line("mptcp_path_manager", "pm_type", PM_TYPE_PATH, "0\n", "1\n", 1, 1, -1);
	pthread_join(s.thread, NULL);
	flip_stop(&f, "mptcp_path_manager", "consumer");
	printf("race %s mptcp_path_manager consumer calls=%ld failed=%ld%s%s\n", kname,
	       s.calls, s.failed, s.err ? " error=" : "", s.err ? strerror(s.err) : "");

	nfd = open(PM_PATH, O_RDONLY | O_CLOEXEC);
	tfd = open(PM_TYPE_PATH, O_RDONLY | O_CLOEXEC);
	if (nfd < 0 || tfd < 0)
		die("open path_manager/pm_type");
	pthread_barrier_init(&start, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	for (k = 0; k < 2; k++) {
		w[k].start = &start;
		w[k].done = &done;
		if (pthread_create(&w[k].thread, NULL, pm_write_loop, &w[k]))
			die("pthread_create");
	}
	for (i = 0; i < calls_per_line; i++) {
		pthread_barrier_wait(&start);
		pthread_barrier_wait(&done);
		if (pread_all(nfd, name, sizeof(name)) < 0 ||
		    pread_all(tfd, type, sizeof(type)) < 0) {
			err = errno;
			continue;
		}
		if (!((!strcmp(name, "kernel\n") && !strcmp(type, "0\n")) ||
		      (!strcmp(name, "userspace\n") && !strcmp(type, "1\n")))) {
			if (!disagree++)
				printf("sample %s mptcp_path_manager pair \"%.20s\" type %.4s\n",
				       kname, name, type);
		}
	}
	for (k = 0; k < 2; k++) {
		pthread_join(w[k].thread, NULL);
		writer_line("mptcp_path_manager", k ? "pair-type" : "pair-name", w[k].writes,
			    NULL, w[k].err);
		if (w[k].err)
			err = w[k].err;
	}
	close(nfd);
	close(tfd);
	printf("race %s mptcp_path_manager pair rounds=%ld disagree=%ld%s%s\n", kname,
	       i, disagree, err ? " error=" : "", err ? strerror(err) : "");
	write_restore(PM_PATH, "kernel");
	fflush(stdout);
}

/*
 * KCSAN's watchpoint settings for a sharper pass, from FU_KCSAN_SKIP_WATCH
 * and FU_KCSAN_UDELAY_TASK; printed as read back ("note KERNEL kcsan ...").
 */
static void kcsan_settings(void)
{
	static const char *const param[] = { "skip_watch", "udelay_task" };
	static const char *const env[] = { "FU_KCSAN_SKIP_WATCH", "FU_KCSAN_UDELAY_TASK" };
	char path[96], val[32];
	int i;

	for (i = 0; i < 2; i++) {
		const char *v = getenv(env[i]);
		int fd;

		if (!v)
			continue;
		snprintf(path, sizeof(path), "/sys/module/kcsan/parameters/%s", param[i]);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0 || pwrite(fd, v, strlen(v), 0) < 0 ||
		    pread_all(fd, val, sizeof(val)) <= 0) {
			printf("note %s kcsan cannot set %s: %s\n", kname, param[i],
			       strerror(errno));
		} else {
			val[strcspn(val, "\n")] = '\0';
			printf("note %s kcsan %s=%s\n", kname, param[i], val);
		}
		if (fd >= 0)
			close(fd);
	}
}

int main(void)
{
	const char *v;

	if (getpid() != 1 && getppid() != 1) {
		fprintf(stderr, "racetest: runs only in the boot test's guest\n");
		return 2;
	}
	v = getenv("RT_KERNEL");
	if (v)
		kname = v;
	v = getenv("FU_READS");
	if (v && atol(v) > 0)
		reads_per_line = atol(v);
	v = getenv("FU_CALLS");
	if (v && atol(v) > 0)
		calls_per_line = atol(v);
	cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("note %s cpus=%d\n", kname, cpus);
	printf("note %s reads_per_line=%ld\n", kname, reads_per_line);
	printf("note %s calls_per_line=%ld\n", kname, calls_per_line);
	kunit_results();
	kcsan_settings();
	kmsg_watch_start();
	line_ftrace();
	line_cdrom();
	line_firmware();
	line_mptcp();
	line_printk();
	line_path_manager();
	kmsg_watch_stop();
	printf("racetest: done\n");
	return 0;
}
