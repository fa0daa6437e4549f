// SPDX-License-Identifier: GPL-2.0
/*
 * racetest: does the running kernel ever hand out a torn string tunable?
 *
 * Runs inside the throwaway QEMU guest of kernel/boot/boot-test, as root.
 * For kernel.core_pattern, kernel.modprobe, kernel.poweroff_cmd,
 * kernel.hotplug and /sys/kernel/uevent_helper a writer thread flips the
 * value between two strings of different lengths that differ in every byte,
 * so that any mix of the two is recognisably neither:
 *
 *   procsys/sysfs: reader threads (one per CPU besides the writer's) read
 *                  the file and check that each read is exactly one value;
 *   consumer:      the kernel itself reads the value and runs it: a crashing
 *                  child (core_pattern pipe helper), socket() of an
 *                  unregistered family (request_module runs kernel.modprobe),
 *                  "add" written to a device's uevent file (the uevent
 *                  helper). Each helper is /recorder under two names; a call
 *                  counts as whole when the helper ran, its argv[0] is one of
 *                  the two names and the binary the kernel executed has that
 *                  same name. A torn name runs nothing, or runs one binary
 *                  under another's name.
 *
 * It prints, one per line:
 *   race KERNEL TUNABLE PATH reads=N torn=N   (PATH: procsys, sysfs, consumer;
 *                                             for consumer lines reads = calls)
 *   rate KERNEL core_pattern procsys-alone|procsys-with-writer round=N
 *        reads_per_s=N reads=N torn=N        (RT_MODE=rate only)
 *   sample KERNEL TUNABLE PATH "<first torn value seen>"
 *   note ...                                  (details)
 *   racetest: phase N/T NAME start|progress|end: ...   (progress.c)
 *   racetest: done
 * Environment: RT_KERNEL (name printed), RT_READS (reads per procsys/sysfs
 * line), RT_CALLS (crashes per core_pattern consumer line),
 * RT_HELPER_CALLS (calls per modprobe, hotplug and uevent_helper consumer
 * line), RT_MODE (race, the default, or rate: only the read-rate rounds,
 * see rate_test()), RT_ROUNDS (rate rounds, default 3); RT_HANG and RT_SLOW
 * are test knobs (progress.c). Every phase ends after its count of reads
 * or calls, however long that takes.
 *
 * It never triggers a power-off: poweroff_cmd is only read back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "racetest.h"
#include "record.h"

/* An address family no tiny kernel registers: socket() asks for net-pf-5. */
#define UNREGISTERED_FAMILY 5
#define UEVENT_DEVICE "/sys/class/mem/null/uevent"
#define UEVENT_DEVPATH "/devices/virtual/mem/null"
#define MAX_READERS 16
/* Lines of a race run, one phase each (main()). */
#define RACE_PHASES 11

/* Work is bounded by counts alone: a phase that takes long under a busy
 * host still finishes (boot-test's watchdog catches one that stops moving).
 * After the last call, helpers still running get this long to record. */
#define SETTLE_IDLE_S 5.0

const char *kname = "guest";
long want_reads = 100000;
long want_calls = 1000;
long want_helper_calls = 200;
int ncpus = 1;

/* /proc/sys and sysfs values: 37 'a' and 101 'b' (core_pattern holds 127). */
static char val_a[38], val_b[102];
/* Helper names, relative to / (the helpers' working directory), so that
 * the two differ in every byte too; core patterns are "|NAME %p". */
static char help_a[24], help_b[62];
static char core_a[32], core_b[72];

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % ncpus, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

void die(const char *what)
{
	printf("racetest: error: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Read a whole small file into buf (NUL-terminated); -1 on error. */
ssize_t read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = pread(fd, buf, size - 1, 0);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int write_file(const char *path, const char *val)
{
	size_t len = strlen(val);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pwrite(fd, val, len, 0);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

/* ---- the writer: flips one file between two values until told to stop */

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	int fd;
	long i;

	/* Own fs_struct and mount namespace for this thread alone: the
	 * kernel checks the writer's namespace, the crashing children keep
	 * the initial one. */
	if (w->private_mntns && unshare(CLONE_FS | CLONE_NEWNS)) {
		w->err = errno;
		return NULL;
	}
	fd = open(w->path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		w->err = errno;
		return NULL;
	}
	pin(w->cpu);
	for (i = 0; !atomic_load_explicit(&w->stop, memory_order_relaxed); i++) {
		int k = i & 1;
		ssize_t n = pwrite(fd, w->val[k], w->len[k], 0);

		if (k == 1 && w->refuse_b) {
			if (n < 0 && errno == EINVAL)
				w->refused++;
			else if (n == (ssize_t)w->len[k])
				w->accepted++;
			else {
				w->err = n < 0 ? errno : EIO;
				break;
			}
			continue;
		}
		if (n != (ssize_t)w->len[k]) {
			w->err = errno ? errno : EIO;
			break;
		}
		w->writes++;
	}
	close(fd);
	return NULL;
}

/* Sets the value to a first, so that no read sees the value from before. */
void writer_start_opts(struct writer *w, const char *path, const char *a,
		       const char *b, bool private_mntns, bool refuse_b)
{
	if (write_file(path, a))
		die(path);
	memset(w, 0, sizeof(*w));
	w->path = path;
	w->val[0] = a;
	w->val[1] = b;
	w->len[0] = strlen(a);
	w->len[1] = strlen(b);
	w->cpu = 0;
	w->private_mntns = private_mntns;
	w->refuse_b = refuse_b;
	atomic_init(&w->stop, false);
	errno = pthread_create(&w->thread, NULL, writer_main, w);
	if (errno)
		die("pthread_create");
}

void writer_start(struct writer *w, const char *path, const char *a,
		  const char *b)
{
	writer_start_opts(w, path, a, b, false, false);
}

void writer_stop(struct writer *w, const char *tunable)
{
	atomic_store(&w->stop, true);
	pthread_join(w->thread, NULL);
	if (w->err)
		printf("note %s %s writer stopped on error: %s\n", kname, tunable,
		       strerror(w->err));
}

/* ---- readers: read a file, check each read is exactly one value */

struct reader {
	const char *path;
	char expect[2][160];
	size_t elen[2];
	long target;
	double until;	/* stop at this time instead, if not 0 */
	int cpu;
	int nreaders;	/* progress: this one prints for all nreaders */
	bool progress;
	long reads, torn;
	double secs;
	char sample[160];
	pthread_t thread;
};

static void keep_sample(struct reader *r, const char *buf, ssize_t n)
{
	ssize_t i;

	if (r->sample[0])
		return;
	if (n < 0) {
		snprintf(r->sample, sizeof(r->sample), "read error: %s", strerror(errno));
		return;
	}
	for (i = 0; i < n && i < (ssize_t)sizeof(r->sample) - 1; i++)
		r->sample[i] = (buf[i] >= 0x20 && buf[i] < 0x7f) ? buf[i] : '?';
	r->sample[i] = '\0';
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char buf[512];
	double t0;
	int fd = open(r->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(r->sample, sizeof(r->sample), "open: %s", strerror(errno));
		return NULL;
	}
	pin(r->cpu);
	t0 = now();
	while (r->until || r->reads < r->target) {
		ssize_t n;

		if ((r->reads & 1023) == 0) {
			if (r->until && now() >= r->until)
				break;
			if (r->progress)
				phase_progress(r->reads * r->nreaders);
		}
		/* One read at offset 0 returns the whole value and its newline. */
		n = pread(fd, buf, sizeof(buf), 0);
		r->reads++;
		if (n == (ssize_t)r->elen[0] && !memcmp(buf, r->expect[0], n))
			continue;
		if (n == (ssize_t)r->elen[1] && !memcmp(buf, r->expect[1], n))
			continue;
		r->torn++;
		keep_sample(r, buf, n);
	}
	r->secs = now() - t0;
	close(fd);
	return NULL;
}

struct read_result {
	long reads, torn;
	double rate;	/* reads per second, all readers together */
	char sample[160];
};

/* Readers on every CPU but the writer's (CPU 0); a and b as written.
 * They stop after want_reads reads in all, or after @secs if not 0. */
static void run_readers(const char *path, const char *a, const char *b,
			double secs, struct read_result *res)
{
	struct reader r[MAX_READERS];
	int n = ncpus > 1 ? ncpus - 1 : 1, i;

	if (n > MAX_READERS)
		n = MAX_READERS;
	memset(r, 0, sizeof(r));
	memset(res, 0, sizeof(*res));
	for (i = 0; i < n; i++) {
		r[i].path = path;
		r[i].elen[0] = snprintf(r[i].expect[0], sizeof(r[i].expect[0]), "%s\n", a);
		r[i].elen[1] = snprintf(r[i].expect[1], sizeof(r[i].expect[1]), "%s\n", b);
		r[i].target = (want_reads + n - 1) / n;
		r[i].until = secs > 0 ? now() + secs : 0;
		r[i].cpu = ncpus > 1 ? 1 + i : 0;
		r[i].nreaders = n;
		r[i].progress = i == 0 && secs == 0;
		errno = pthread_create(&r[i].thread, NULL, reader_main, &r[i]);
		if (errno)
			die("pthread_create");
	}
	for (i = 0; i < n; i++) {
		pthread_join(r[i].thread, NULL);
		res->reads += r[i].reads;
		res->torn += r[i].torn;
		if (r[i].secs > 0)
			res->rate += r[i].reads / r[i].secs;
		if (!res->sample[0] && r[i].sample[0])
			memcpy(res->sample, r[i].sample, sizeof(res->sample));
	}
}

/* One /proc/sys or sysfs line: writer on wpath, readers on rpath. */
static void race_read(const char *tunable, const char *kind, const char *wpath,
		      const char *rpath)
{
	struct writer w;
	struct read_result res;
	char name[48], what[80];

	snprintf(name, sizeof(name), "%s-%s", tunable, kind);
	snprintf(what, sizeof(what), "writer on %s", wpath);
	phase_begin(name, want_reads, "reads", what);
	writer_start(&w, wpath, val_a, val_b);
	run_readers(rpath, val_a, val_b, 0, &res);
	writer_stop(&w, tunable);
	printf("race %s %s %s reads=%ld torn=%ld\n", kname, tunable, kind,
	       res.reads, res.torn);
	if (res.sample[0])
		printf("sample %s %s %s \"%s\"\n", kname, tunable, kind, res.sample);
	printf("note %s %s %s writes=%ld\n", kname, tunable, kind, w.writes);
	phase_end(res.reads);
}

/*
 * Read rate (RT_MODE=rate): RT_ROUNDS rounds, each RATE_ROUND_S of reading
 * core_pattern with no writer, then as long with the writer flipping it.
 * One line per round; boot-test boots the stock and the patched kernel
 * one after the other, several times, and compares the medians. Rounds
 * are time-bound and long because the guest's clock may tick in jiffies
 * (4 ms) under TCG.
 */
#define RATE_ROUND_S 1.0

static int rate_rounds = 3;

static void rate_round(int round, bool with_writer)
{
	const char *path = "/proc/sys/kernel/core_pattern";
	const char *kind = with_writer ? "with-writer" : "alone";
	struct read_result res;
	struct writer w;

	if (with_writer)
		writer_start(&w, path, val_a, val_b);
	else if (write_file(path, val_a))
		die("writing core_pattern");
	run_readers(path, val_a, with_writer ? val_b : val_a, RATE_ROUND_S, &res);
	if (with_writer)
		writer_stop(&w, "core_pattern");
	printf("rate %s core_pattern procsys-%s round=%d reads_per_s=%.0f reads=%ld torn=%ld\n",
	       kname, kind, round, res.rate, res.reads, res.torn);
	if (res.sample[0])
		printf("sample %s core_pattern procsys-%s \"%s\"\n", kname, kind, res.sample);
}

static void rate_test(void)
{
	int i;

	phase_begin("read-rate", rate_rounds, "rounds",
		    "each one second alone and one with a writer");
	for (i = 1; i <= rate_rounds; i++) {
		rate_round(i, false);
		rate_round(i, true);
		phase_progress(i);
	}
	phase_end(rate_rounds);
}

/* ---- consumers: the kernel reads the value and runs the helper */

struct record {
	char exe[REC_EXE_W + 1], argv0[REC_ARGV0_W + 1];
	char last[REC_LAST_W + 1], dev[REC_DEV_W + 1];
};

static long rec_count(void)
{
	struct stat st;

	if (stat(REC_PATH, &st))
		return 0;
	return st.st_size / REC_LEN;
}

/* Wait until want records exist or none arrives for SETTLE_IDLE_S. */
static void rec_settle(long want)
{
	long last = -1, n;
	double idle_since = now();

	while ((n = rec_count()) < want) {
		if (n != last) {
			last = n;
			idle_since = now();
		} else if (now() - idle_since > SETTLE_IDLE_S) {
			break;
		}
		usleep(10000);
	}
}

static void field(char *dst, const char *src, int width)
{
	int len = width;

	while (len > 0 && src[len - 1] == ' ')
		len--;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* Calls whose record shows one whole helper name; check() tests the rest. */
static long rec_valid(bool (*check)(const struct record *, void *), void *ctx,
		      long *records)
{
	char buf[REC_LEN];
	long valid = 0;
	int fd = open(REC_PATH, O_RDONLY | O_CLOEXEC);

	*records = 0;
	if (fd < 0)
		return 0;
	while (read(fd, buf, REC_LEN) == REC_LEN) {
		struct record rec;
		char exe_want[REC_EXE_W + 2];
		const char *p = buf;

		(*records)++;
		field(rec.exe, p, REC_EXE_W);
		p += REC_EXE_W + 1;
		field(rec.argv0, p, REC_ARGV0_W);
		p += REC_ARGV0_W + 1;
		field(rec.last, p, REC_LAST_W);
		p += REC_LAST_W + 1;
		field(rec.dev, p, REC_DEV_W);
		if (strcmp(rec.argv0, help_a) && strcmp(rec.argv0, help_b))
			continue;
		/* The binary run must be the one argv[0] names. */
		snprintf(exe_want, sizeof(exe_want), "/%s", rec.argv0);
		if (strcmp(rec.exe, exe_want))
			continue;
		if (check(&rec, ctx))
			valid++;
	}
	close(fd);
	return valid;
}

static void consumer_report(const char *tunable, long calls, long valid,
			    long records)
{
	long good = valid < calls ? valid : calls;

	printf("race %s %s consumer reads=%ld torn=%ld\n", kname, tunable, calls,
	       calls - good);
	printf("note %s %s consumer calls=%ld records=%ld whole=%ld\n", kname,
	       tunable, calls, records, valid);
	phase_end(calls);
}

/* Fork a child that crashes with SIGSEGV and a core dump of its ELF notes
 * alone (small and quick); wait for it. Returns its pid; *dumped says
 * whether the kernel reported a core dumped. */
pid_t crash_one(bool *dumped)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
		int fd = open("/proc/self/coredump_filter", O_WRONLY);

		if (fd >= 0) {
			if (write(fd, "0", 1) != 1)
				_exit(2);
			close(fd);
		}
		setrlimit(RLIMIT_CORE, &rl);
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		_exit(3);
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	*dumped = WIFSIGNALED(status) && WCOREDUMP(status);
	return pid;
}

struct core_ctx {
	pid_t *pids;
	bool *seen;
	long n;
};

static bool core_check(const struct record *rec, void *arg)
{
	struct core_ctx *c = arg;
	long pid = strtol(rec->last, NULL, 10), i;

	for (i = 0; i < c->n; i++) {
		if (c->pids[i] == pid && !c->seen[i]) {
			c->seen[i] = true;
			return true;
		}
	}
	return false;
}

static void consume_core(void)
{
	struct core_ctx ctx;
	struct writer w;
	long i, dumped = 0, records, valid;

	phase_begin("core_pattern-consumer", want_calls, "crashes", "pipe helper");
	ctx.pids = calloc(want_calls, sizeof(*ctx.pids));
	ctx.seen = calloc(want_calls, sizeof(*ctx.seen));
	ctx.n = 0;
	if (!ctx.pids || !ctx.seen)
		die("calloc");
	unlink(REC_PATH);
	writer_start(&w, "/proc/sys/kernel/core_pattern", core_a, core_b);
	pin(1);
	for (i = 0; i < want_calls; i++) {
		bool dumped_core;

		ctx.pids[ctx.n++] = crash_one(&dumped_core);
		dumped += dumped_core;
		phase_progress(i + 1);
	}
	writer_stop(&w, "core_pattern");
	rec_settle(want_calls);
	valid = rec_valid(core_check, &ctx, &records);
	printf("note %s core_pattern consumer dumped=%ld\n", kname, dumped);
	consumer_report("core_pattern", want_calls, valid, records);
	free(ctx.pids);
	free(ctx.seen);
}

static bool modprobe_check(const struct record *rec, void *arg)
{
	(void)arg;
	return !strcmp(rec->last, "net-pf-5");
}

static void consume_modprobe(void)
{
	struct writer w;
	long i, records, valid;

	phase_begin("modprobe-consumer", want_helper_calls, "module requests",
		    "socket() of family 5");
	unlink(REC_PATH);
	writer_start(&w, "/proc/sys/kernel/modprobe", help_a, help_b);
	pin(1);
	for (i = 0; i < want_helper_calls; i++) {
		/* request_module("net-pf-5") waits for the helper to exit. */
		int s = socket(UNREGISTERED_FAMILY, SOCK_DGRAM, 0);

		if (s >= 0) {
			printf("note %s modprobe family %d is registered\n", kname,
			       UNREGISTERED_FAMILY);
			close(s);
		}
		phase_progress(i + 1);
	}
	writer_stop(&w, "modprobe");
	rec_settle(want_helper_calls);
	valid = rec_valid(modprobe_check, NULL, &records);
	consumer_report("modprobe", want_helper_calls, valid, records);
}

static bool uevent_check(const struct record *rec, void *arg)
{
	(void)arg;
	return !strcmp(rec->last, "mem") && !strcmp(rec->dev, UEVENT_DEVPATH);
}

/* The uevent helper runs asynchronously (UMH_NO_WAIT): keep at most this
 * many helpers in flight so the small guest does not run out of memory. */
#define UEVENT_WINDOW 32

/* Threads in the system, from /proc/loadavg ("0.00 0.00 0.00 1/42 123").
 * Counts helpers in flight whether or not they will manage to record. */
static long nr_threads(void)
{
	char buf[128], *slash;

	if (read_file("/proc/loadavg", buf, sizeof(buf)) < 0)
		return -1;
	slash = strchr(buf, '/');
	return slash ? atol(slash + 1) : -1;
}

static void consume_uevent(const char *tunable, const char *wpath)
{
	struct writer w;
	long i, records, valid, base;
	char name[48], what[80];
	int fd = open(UEVENT_DEVICE, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		die(UEVENT_DEVICE);
	snprintf(name, sizeof(name), "%s-consumer", tunable);
	snprintf(what, sizeof(what), "writer on %s", wpath);
	phase_begin(name, want_helper_calls, "uevents", what);
	unlink(REC_PATH);
	writer_start(&w, wpath, help_a, help_b);
	pin(1);
	base = nr_threads();
	for (i = 0; i < want_helper_calls; i++) {
		double t1 = now();

		if (pwrite(fd, "add", 3, 0) != 3)
			die("writing " UEVENT_DEVICE);
		/* Bounded wait: a stuck helper slows the stage, never hangs it. */
		while (nr_threads() > base + UEVENT_WINDOW && now() - t1 < 5.0)
			usleep(1000);
		phase_progress(i + 1);
	}
	writer_stop(&w, tunable);
	close(fd);
	/* No more helpers: the value must not name a program from here on. */
	if (write_file("/proc/sys/kernel/hotplug", "\n"))
		die("clearing kernel.hotplug");
	rec_settle(want_helper_calls);
	valid = rec_valid(uevent_check, NULL, &records);
	consumer_report(tunable, want_helper_calls, valid, records);
}

/* ---- main */

struct saved {
	const char *path;
	char val[300];
};

static struct saved saved[] = {
	{ "/proc/sys/kernel/core_pattern", "" },
	{ "/proc/sys/kernel/modprobe", "" },
	{ "/proc/sys/kernel/poweroff_cmd", "" },
	{ "/proc/sys/kernel/hotplug", "" },
};

static void save_all(void)
{
	size_t i;

	for (i = 0; i < sizeof(saved) / sizeof(saved[0]); i++) {
		ssize_t n = read_file(saved[i].path, saved[i].val, sizeof(saved[i].val));

		if (n < 0)
			die(saved[i].path);
		if (n == 0 || saved[i].val[n - 1] != '\n')
			strcat(saved[i].val, "\n");
	}
}

static void restore_all(void)
{
	size_t i;

	for (i = 0; i < sizeof(saved) / sizeof(saved[0]); i++)
		if (write_file(saved[i].path, saved[i].val))
			printf("note %s could not restore %s\n", kname, saved[i].path);
}

static void install_helper(const char *name)
{
	char path[80];

	snprintf(path, sizeof(path), "/%s", name);
	if (link("/recorder", path) && errno != EEXIST)
		die(path);
}

int main(void)
{
	const char *env;
	char self[64];
	ssize_t n;
	bool rate_mode;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* It rewrites system tunables and crashes processes on purpose: only
	 * in the guest, where boot-test's init starts /racetest with
	 * RT_KERNEL set. */
	env = getenv("RT_KERNEL");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	if (!env || getppid() != 1 || strcmp(self, "/racetest")) {
		fprintf(stderr, "racetest: only runs as the boot test guest's init child\n");
		return 2;
	}
	kname = env;
	if ((env = getenv("RT_READS")))
		want_reads = atol(env);
	if ((env = getenv("RT_CALLS")))
		want_calls = atol(env);
	if ((env = getenv("RT_HELPER_CALLS")))
		want_helper_calls = atol(env);
	if ((env = getenv("RT_ROUNDS")))
		rate_rounds = atoi(env);
	env = getenv("RT_MODE");
	rate_mode = env && !strcmp(env, "rate");
	if (want_reads < 1 || want_calls < 1 || want_helper_calls < 1 || rate_rounds < 1 ||
	    (env && !rate_mode && strcmp(env, "race"))) {
		fprintf(stderr, "racetest: RT_READS, RT_CALLS, RT_HELPER_CALLS and RT_ROUNDS must be positive, RT_MODE race or rate\n");
		return 2;
	}
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus < 1)
		ncpus = 1;

	memset(val_a, 'a', sizeof(val_a) - 1);
	memset(val_b, 'b', sizeof(val_b) - 1);
	memset(help_a, 'a', sizeof(help_a) - 1);
	memset(help_b, 'b', sizeof(help_b) - 1);
	snprintf(core_a, sizeof(core_a), "|%s %%p", help_a);
	snprintf(core_b, sizeof(core_b), "|%s %%p", help_b);
	install_helper(help_a);
	install_helper(help_b);
	save_all();
	/* A newline first: the console line may start with the firmware's
	 * escape sequences. */
	printf("\nracetest: kernel %s, %d CPUs, %ld reads per line, %ld calls per core_pattern consumer, %ld per helper consumer\n",
	       kname, ncpus, want_reads, want_calls, want_helper_calls);
	printf("note %s cpus=%d\n", kname, ncpus);

	phase_count(rate_mode ? 1 : RACE_PHASES);
	if (rate_mode) {
		rate_test();
		restore_all();
		printf("racetest: done\n");
		return 0;
	}
	kmsg_watch_start();
	race_read("core_pattern", "procsys", "/proc/sys/kernel/core_pattern",
		  "/proc/sys/kernel/core_pattern");
	race_read("modprobe", "procsys", "/proc/sys/kernel/modprobe",
		  "/proc/sys/kernel/modprobe");
	race_read("poweroff_cmd", "procsys", "/proc/sys/kernel/poweroff_cmd",
		  "/proc/sys/kernel/poweroff_cmd");
	race_read("hotplug", "procsys", "/proc/sys/kernel/hotplug",
		  "/proc/sys/kernel/hotplug");
	race_read("uevent_helper", "sysfs", "/sys/kernel/uevent_helper",
		  "/sys/kernel/uevent_helper");
	restore_all();

	consume_core();
	consume_core_socket();
	consume_core_refused();
	restore_all();
	consume_modprobe();
	consume_uevent("hotplug", "/proc/sys/kernel/hotplug");
	consume_uevent("uevent_helper", "/sys/kernel/uevent_helper");
	restore_all();
	kmsg_watch_stop();
	printf("racetest: done\n");
	return 0;
}
