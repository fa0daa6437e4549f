/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The five subsystems against their tunables: each helper run is logged by
 * helpers/record.c (argv, environment, stdin) through two symlinks a/NAME
 * and b/NAME, while another thread rewrites the tunable between the two
 * whole values; every logged run must match one whole value, and both must
 * show up. The two values differ in length and in every byte but the
 * leading '/' (see unlike()): a value stitched from both (the head of one
 * read, the tail of another) or mixed byte by byte is neither, names no
 * file, and shows as a failed call or a torn log line. Also the registered
 * entries, defaults, error paths, and coredump_record() writing files and
 * feeding a pipe helper.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/umh.h"
#include "subsys.h"
#include "../umh_wait.h"

#define WORKERS 3
#define CALLS 20 /* per worker */

static char tmpdir[] = "/tmp/subsys-test-XXXXXX";
static char logpath[300];
static struct sysctl_tree *tree;

/* tmpdir/<side>/<name>, a symlink to the recorder */
static const char *helper(char side, const char *name)
{
	static char buf[8][300];
	static int next;
	char *p = buf[next++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%c/%s", tmpdir, side, name);
	return p;
}

/*
 * @path (absolute) written so that, past the leading '/', it differs from
 * @avoid in every byte position and is longer: '/' where @avoid has
 * anything else, '.' where it has '/' (so "/./" and "//", both harmless),
 * then @path itself. tmpdir/b/x against tmpdir/a/x gives
 * "///////.////..../tmp/...": a value stitched from the two at any offset,
 * or mixed byte by byte, is neither.
 */
static const char *unlike(const char *avoid, const char *path)
{
	static char buf[4][300];
	static int next;
	char *p = buf[next++ % 4];
	size_t i, n = strlen(avoid);

	assert_true(n + strlen(path) + 1 < sizeof(buf[0]));
	p[0] = '/';
	for (i = 1; i < n; i++)
		p[i] = avoid[i] == '/' ? '.' : '/';
	snprintf(p + (n ? n : 1), sizeof(buf[0]) - n - 1, "%s", path);
	return p;
}

/*
 * Fails unless the two values flipped differ in length and in every byte
 * position but a leading '/' (a path's first byte is always one): the tear
 * checks below rely on it.
 */
static void assert_distinct(const char *a, const char *b)
{
	size_t i, la = strlen(a), lb = strlen(b);

	assert_true(la != lb);
	for (i = a[0] == '/' ? 1 : 0; i < la && i < lb; i++)
		if (a[i] == b[i])
			fail_msg("\"%s\" and \"%s\" share byte %zu", a, b, i);
}

/* "" is written as "\n": a write of 0 bytes changes nothing, as in /proc */
static void set(const char *path, const char *value)
{
	int err;

	if (!*value)
		value = "\n";
	err = sysctl_set(tree, path, value, strlen(value), NULL);

	if (err)
		fail_msg("sysctl_set(%s, \"%s\"): %d", path, value, err);
}

/* The log, whole; NULL-terminated array of lines in one allocation. */
static char **read_log(int *count)
{
	static char buf[1 << 16];
	static char *lines[1024];
	ssize_t n = 0;
	int fd, i = 0;
	char *p, *nl;

	fd = open(logpath, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	assert_true(n >= 0);
	buf[n] = '\0';
	for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		assert_true(i < 1023);
		lines[i++] = p;
	}
	assert_string_equal(p, ""); /* no partial line */
	lines[i] = NULL;
	*count = i;
	unlink(logpath);
	return lines;
}

/* Every line is @a or @b, there are @want of them, and both appear. */
static void check_log(const char *a, const char *b, int want, bool need_both)
{
	int count, i, na = 0, nb = 0;
	char **lines = read_log(&count);

	for (i = 0; i < count; i++) {
		if (strcmp(lines[i], a) == 0)
			na++;
		else if (b && strcmp(lines[i], b) == 0)
			nb++;
		else
			fail_msg("torn or unexpected run:\n  %s\nwant\n  %s\nor\n  %s", lines[i], a,
				 b ? b : "-");
	}
	assert_int_equal(count, want);
	if (need_both && (na == 0 || nb == 0))
		fail_msg("value A seen %d times, B %d times: the flips did not overlap", na, nb);
}

static int setup(void **state)
{
	static const char *names[] = { "modprobe", "poweroff", "hotplug", "hb_ctl", "core" };
	char path[300];
	size_t i;
	char side;

	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(logpath, sizeof(logpath), "%s/record.log", tmpdir);
	for (side = 'a'; side <= 'b'; side++) {
		snprintf(path, sizeof(path), "%s/%c", tmpdir, side);
		if (mkdir(path, 0700))
			return -1;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (symlink(RECORD_HELPER, helper(side, names[i])))
				return -1;
	}
	/* the workers' runs may overlap: stay clear of the default limit */
	umh_set_max_concurrent(500);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];

	(void)state;
	rcustring_barrier();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static int tree_setup(void **state)
{
	(void)state;
	tree = sysctl_tree_new();
	if (!tree)
		return -1;
	unlink(logpath);
	return subsys_register_all(tree);
}

static int tree_teardown(void **state)
{
	(void)state;
	subsys_unregister_all();
	sysctl_tree_free(tree);
	tree = NULL;
	return 0;
}

/* ---- a flipper and workers ---- */

struct flip {
	const char *path;
	const char *a, *b;
	atomic_bool stop;
	atomic_int done;   /* calls completed */
	atomic_int phase;  /* the flipper's phases so far */
	atomic_int parked; /* workers waiting before their last call */
	atomic_int writes; /* values written by the flipper */
	int (*call)(int worker, int i);
	atomic_int errors;
	int last_error;
};

static struct flip flip;

/*
 * Writes the tunable in phases of WORKERS + 1 completed calls each: hold a,
 * churn, hold b, churn. A hold writes one value over and over (a new buffer
 * each time, the old one retired under the readers) until WORKERS + 1 calls
 * completed, so at least one call started and finished within it: both
 * values are surely used, with no timing involved. A flipper that gets no
 * CPU while the calls run (a loaded machine) would leave b unused, so the
 * workers wait before their last call until it reached hold b, and once all
 * wait, it moves on at once. A churn alternates a and b at every write, so
 * that reads land on changes and a consumer that reads the value twice (a
 * test, then a use) stitches the two together.
 */
static void *flipper(void *arg)
{
	unsigned long phase = 0, writes = 0;
	int mark = 0;

	(void)arg;
	while (!atomic_load(&flip.stop)) {
		const char *v;

		if (atomic_load(&flip.done) >= mark + WORKERS + 1 ||
		    (atomic_load(&flip.parked) == WORKERS && phase < 2)) {
			phase++;
			mark = atomic_load(&flip.done);
		}
		switch (phase % 4) {
		case 0: v = flip.a; break;
		case 2: v = flip.b; break;
		default: v = writes % 2 ? flip.a : flip.b; break;
		}
		writes++;
		if (!*v)
			v = "\n";
		if (sysctl_set(tree, flip.path, v, strlen(v), NULL))
			atomic_fetch_add(&flip.errors, 1);
		atomic_store(&flip.phase, (int)phase); /* after its value is in */
		atomic_fetch_add(&flip.writes, 1);
		sched_yield();
	}
	return NULL;
}

static void *worker(void *arg)
{
	int w = (int)(long)arg, i, ret;

	for (i = 0; i < CALLS; i++) {
		if (i == CALLS - 1) { /* hang guard 30 s: then check_log() says b was not used */
			atomic_fetch_add(&flip.parked, 1);
			for (int t = 0; t < 30000 && atomic_load(&flip.phase) < 2; t++)
				usleep(1000);
			atomic_fetch_sub(&flip.parked, 1);
		}
		ret = flip.call(w, i);
		if (ret != 0) {
			flip.last_error = ret;
			atomic_fetch_add(&flip.errors, 1);
		}
		atomic_fetch_add(&flip.done, 1);
	}
	return NULL;
}

static void run_flipped(const char *path, const char *a, const char *b, int (*call)(int, int))
{
	pthread_t f, w[WORKERS];
	long i;

	flip.path = path;
	flip.a = a;
	flip.b = b;
	flip.call = call;
	set(path, a); /* no call may see the default */
	atomic_store(&flip.stop, false);
	atomic_store(&flip.errors, 0);
	atomic_store(&flip.done, 0);
	atomic_store(&flip.phase, 0);
	atomic_store(&flip.parked, 0);
	atomic_store(&flip.writes, 0);
	assert_int_equal(pthread_create(&f, NULL, flipper, NULL), 0);
	for (i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&w[i], NULL, worker, (void *)i), 0);
	for (i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	atomic_store(&flip.stop, true);
	pthread_join(f, NULL);
	wait_all_reaped();
	assert_true(atomic_load(&flip.writes) > 0);
	if (atomic_load(&flip.errors))
		fail_msg("%d failed calls, last %d", atomic_load(&flip.errors), flip.last_error);
}

/* ---- registration ---- */

static void expect_entry(const char *path, int maxlen, const char *value)
{
	struct sysctl_entry *e = sysctl_lookup(tree, path);
	char buf[300];

	if (!e)
		fail_msg("%s not registered", path);
	assert_int_equal(sysctl_entry_mode(e), 0644);
	assert_int_equal(sysctl_entry_table(e)->maxlen, maxlen);
	sysctl_entry_put(e);
	assert_true(sysctl_get(tree, path, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, value);
}

static void test_registration(void **state)
{
	(void)state;
	expect_entry("kernel.modprobe", 256, "/sbin/modprobe\n");
	expect_entry("kernel.core_pattern", 128, "core\n");
	expect_entry("kernel.core_uses_pid", (int)sizeof(int), "0\n");
	expect_entry("kernel.poweroff_cmd", 256, "/sbin/poweroff\n");
	expect_entry("kernel.hotplug", 256, "\n");
	expect_entry("fs/ocfs2/nm/hb_ctl_path", 256, "/sbin/ocfs2_hb_ctl\n");
	{
		struct sysctl_entry *e = sysctl_lookup(tree, "kernel.modprobe");

		assert_non_null(e);
		assert_true(sysctl_entry_table(e)->proc_handler == proc_rcu_string);
		sysctl_entry_put(e);
	}

	/* one tree at a time */
	assert_int_equal(subsys_kmod_register(tree), -EBUSY);
	assert_int_equal(subsys_register_all(tree), -EBUSY);
	assert_int_equal(subsys_coredump_register(NULL), -EINVAL);
	/* core_uses_pid is 0 or 1; over-long strings are refused */
	assert_int_equal(sysctl_set(tree, "kernel.core_uses_pid", "2", 1, NULL), -EINVAL);
	{
		char longv[300];

		memset(longv, 'x', sizeof(longv));
		assert_int_equal(sysctl_set(tree, "kernel.modprobe", longv, 256, NULL), -EMSGSIZE);
		assert_int_equal(sysctl_set(tree, "kernel.core_pattern", longv, 128, NULL), -EMSGSIZE);
		assert_int_equal(sysctl_set(tree, "kernel.core_pattern", longv, 127, NULL), 0);
	}

	/* unregistering resets to the default; registering again works */
	set("kernel.modprobe", "/x/modprobe");
	subsys_kmod_unregister();
	assert_null(sysctl_lookup(tree, "kernel.modprobe"));
	assert_int_equal(subsys_kmod_register(tree), 0);
	expect_entry("kernel.modprobe", 256, "/sbin/modprobe\n");
}

/* ---- kmod ---- */

#define KMOD_ENV "HOME=/\tTERM=linux\tPATH=/sbin:/usr/sbin:/bin:/usr/bin"

static int call_kmod(int w, int i)
{
	(void)w;
	(void)i;
	return request_module("fs-%s", "dummy");
}

static void test_kmod_flipped(void **state)
{
	const char *pa = helper('a', "modprobe"), *pb = unlike(pa, helper('b', "modprobe"));
	char a[600], b[600];

	(void)state;
	snprintf(a, sizeof(a), "%s\t-q\t--\tfs-dummy\t|\t" KMOD_ENV "\t|\t", pa);
	snprintf(b, sizeof(b), "%s\t-q\t--\tfs-dummy\t|\t" KMOD_ENV "\t|\t", pb);
	assert_distinct(pa, pb);
	run_flipped("kernel.modprobe", pa, pb, call_kmod);
	check_log(a, b, WORKERS * CALLS, true);
}

static void test_kmod_errors(void **state)
{
	char name[MODULE_NAME_LEN + 1], want[600];
	int count;

	(void)state;
	memset(name, 'm', sizeof(name));
	name[MODULE_NAME_LEN] = '\0';
	assert_int_equal(request_module("%s", name), -ENAMETOOLONG);
	set("kernel.modprobe", "");
	assert_int_equal(request_module("%s", "x"), -ENOENT);
	assert_int_equal(request_module("%s", name), -ENOENT); /* disabled wins */
	set("kernel.modprobe", "/nonexistent/modprobe");
	assert_int_equal(request_module("%s", "x"), -ENOENT);
	set("kernel.modprobe", "sbin/modprobe");
	assert_int_equal(request_module("%s", "x"), -EINVAL);
	assert_int_equal(request_module(NULL), -EINVAL);
	read_log(&count);
	assert_int_equal(count, 0); /* none of those ran anything */

	/* the longest name that fits runs, with exit status 0 */
	set("kernel.modprobe", helper('a', "modprobe"));
	name[MODULE_NAME_LEN - 1] = '\0';
	assert_int_equal(request_module("%s", name), 0);
	snprintf(want, sizeof(want), "%s\t-q\t--\t%s\t|\t" KMOD_ENV "\t|\t", helper('a', "modprobe"),
		 name);
	check_log(want, NULL, 1, false);
}

/* ---- reboot ---- */

static int emergencies;
static int emergency_error;

static void emergency(void *arg, int error)
{
	(void)arg;
	emergencies++;
	emergency_error = error;
}

#define REBOOT_ENV "HOME=/\tPATH=/sbin:/bin:/usr/sbin:/usr/bin"

static int call_poweroff(int w, int i)
{
	(void)w;
	(void)i;
	return orderly_poweroff(false);
}

static void test_reboot_flipped(void **state)
{
	char cmd_a[400], cmd_b[400], a[600], b[600];
	const char *pb;

	(void)state;
	/* whole command lines: the split must come from one value */
	snprintf(cmd_a, sizeof(cmd_a), "  %s -h now", helper('a', "poweroff"));
	/* one more blank, so that the two paths' leading '/' do not line up */
	pb = unlike(cmd_a + 3, helper('b', "poweroff"));
	snprintf(cmd_b, sizeof(cmd_b), "\t\t\t%s\t--poweroff ", pb);
	assert_distinct(cmd_a, cmd_b);
	snprintf(a, sizeof(a), "%s\t-h\tnow\t|\t" REBOOT_ENV "\t|\t", helper('a', "poweroff"));
	snprintf(b, sizeof(b), "%s\t--poweroff\t|\t" REBOOT_ENV "\t|\t", pb);
	run_flipped("kernel.poweroff_cmd", cmd_a, cmd_b, call_poweroff);
	check_log(a, b, WORKERS * CALLS, true);
}

static void test_reboot_errors(void **state)
{
	int count;

	(void)state;
	subsys_reboot_set_emergency(emergency, NULL);
	emergencies = 0;
	set("kernel.poweroff_cmd", "   ");
	assert_int_equal(orderly_poweroff(false), -ENOENT);
	assert_int_equal(emergencies, 0);
	assert_int_equal(orderly_poweroff(true), -ENOENT);
	assert_int_equal(emergencies, 1);
	assert_int_equal(emergency_error, -ENOENT);
	set("kernel.poweroff_cmd", "/nonexistent/poweroff -h");
	assert_int_equal(orderly_poweroff(true), -ENOENT);
	assert_int_equal(emergencies, 2);
	/* started: no emergency */
	set("kernel.poweroff_cmd", helper('a', "poweroff"));
	assert_int_equal(orderly_poweroff(true), 0);
	assert_int_equal(emergencies, 2);
	wait_all_reaped();
	read_log(&count);
	assert_int_equal(count, 1);
	/* the default hook only logs */
	subsys_reboot_set_emergency(NULL, NULL);
	set("kernel.poweroff_cmd", "");
	assert_int_equal(orderly_poweroff(true), -ENOENT);
	assert_int_equal(emergencies, 2);
}

/* ---- uevent ---- */

static int call_uevent(int w, int i)
{
	(void)w;
	(void)i;
	return uevent_helper_call("block", "add", "/devices/virtual/block/loop0", 42);
}

#define UEVENT_ENV "ACTION=add\tDEVPATH=/devices/virtual/block/loop0\tSUBSYSTEM=block\t" \
		   "SEQNUM=42\tHOME=/\tPATH=/sbin:/bin:/usr/sbin:/usr/bin"

static void test_uevent_flipped(void **state)
{
	const char *pa = helper('a', "hotplug"), *pb = unlike(pa, helper('b', "hotplug"));
	char a[600], b[600];

	(void)state;
	snprintf(a, sizeof(a), "%s\tblock\t|\t" UEVENT_ENV "\t|\t", pa);
	snprintf(b, sizeof(b), "%s\tblock\t|\t" UEVENT_ENV "\t|\t", pb);
	assert_distinct(pa, pb);
	run_flipped("kernel.hotplug", pa, pb, call_uevent);
	check_log(a, b, WORKERS * CALLS, true);
}

/* Flipped between a helper and "": the test and the run see one value. */
static void test_uevent_flipped_empty(void **state)
{
	char a[600];
	int count;

	(void)state;
	snprintf(a, sizeof(a), "%s\tblock\t|\t" UEVENT_ENV "\t|\t", helper('a', "hotplug"));
	run_flipped("kernel.hotplug", helper('a', "hotplug"), "", call_uevent);
	/*
	 * No call failed (an empty path tested live and then run would be
	 * -EINVAL or nothing, a torn one -ENOENT), and every run is whole.
	 */
	{
		char **lines = read_log(&count);
		int i;

		assert_true(count >= 1 && count <= WORKERS * CALLS);
		for (i = 0; i < count; i++)
			assert_string_equal(lines[i], a);
	}
	set("kernel.hotplug", helper('a', "hotplug"));
	assert_int_equal(call_uevent(0, 0), 0);
	wait_all_reaped();
	check_log(a, NULL, 1, false);
}

static void test_uevent_errors(void **state)
{
	char big[300];
	int count;

	(void)state;
	/* default "": nothing runs, success */
	assert_int_equal(uevent_helper_call("block", "add", "/d", 1), 0);
	set("kernel.hotplug", "/nonexistent/hotplug");
	assert_int_equal(uevent_helper_call("block", "add", "/d", 1), -ENOENT);
	assert_int_equal(uevent_helper_call(NULL, "add", "/d", 1), -EINVAL);
	assert_int_equal(uevent_helper_call("block", NULL, "/d", 1), -EINVAL);
	assert_int_equal(uevent_helper_call("block", "add", NULL, 1), -EINVAL);
	memset(big, 'd', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	set("kernel.hotplug", helper('a', "hotplug"));
	assert_int_equal(uevent_helper_call("block", "add", big, 1), -E2BIG);
	wait_all_reaped();
	read_log(&count);
	assert_int_equal(count, 0);
}

/* ---- ocfs2 ---- */

static int call_ocfs2(int w, int i)
{
	(void)w;
	(void)i;
	return ocfs2_leave_group("0123456789ABCDEF");
}

#define OCFS2_ENV "HOME=/\tPATH=/sbin:/bin:/usr/sbin:/usr/bin"

static void test_ocfs2_flipped(void **state)
{
	const char *pa = helper('a', "hb_ctl"), *pb = unlike(pa, helper('b', "hb_ctl"));
	char a[600], b[600];

	(void)state;
	snprintf(a, sizeof(a), "%s\t-K\t-u\t0123456789ABCDEF\t|\t" OCFS2_ENV "\t|\t", pa);
	snprintf(b, sizeof(b), "%s\t-K\t-u\t0123456789ABCDEF\t|\t" OCFS2_ENV "\t|\t", pb);
	assert_distinct(pa, pb);
	run_flipped("fs.ocfs2.nm.hb_ctl_path", pa, pb, call_ocfs2);
	check_log(a, b, WORKERS * CALLS, true);
}

static void test_ocfs2_errors(void **state)
{
	int count;

	(void)state;
	assert_int_equal(ocfs2_leave_group(NULL), -EINVAL);
	set("fs.ocfs2.nm.hb_ctl_path", "");
	assert_int_equal(ocfs2_leave_group("g"), -ENOENT);
	set("fs.ocfs2.nm.hb_ctl_path", "/nonexistent/ocfs2_hb_ctl");
	assert_int_equal(ocfs2_leave_group("g"), -ENOENT);
	read_log(&count);
	assert_int_equal(count, 0);
}

/* ---- coredump ---- */

static const struct core_info crash = {
	.pid = 4321, .global_pid = 4321, .tid = 4322, .global_tid = 4322,
	.uid = 1000, .gid = 1000, .signal = 6, .time = 1700000001, .dumpable = 1,
	.core_limit = 0, .cpu = 0,
	.hostname = "host", .comm = "my prog", .exe_path = "/opt/my prog",
};

static const char record[] = "crash record: SIGABRT"; /* the log adds the newline */

static void expect_file(int dirfd, const char *name, const char *content)
{
	struct stat st;
	char buf[256];
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail_msg("%s not written", name);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, content);
}

static void test_coredump_file(void **state)
{
	char dir[300];
	int dirfd;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/cores", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);

	/* the default "core", relative to dirfd */
	assert_int_equal(coredump_record(&crash, dirfd, record, strlen(record)), 0);
	expect_file(dirfd, "core", record);
	/* never overwritten */
	assert_int_equal(coredump_record(&crash, dirfd, record, strlen(record)), -EEXIST);
	/* core_uses_pid */
	set("kernel.core_uses_pid", "1");
	assert_int_equal(coredump_record(&crash, dirfd, "x", 1), 0);
	expect_file(dirfd, "core.4321", "x");
	set("kernel.core_pattern", "core.%e.%s.%p");
	assert_int_equal(coredump_record(&crash, dirfd, "", 0), 0);
	expect_file(dirfd, "core.my prog.6.4321", "");
	/* a symlink at the name is not followed */
	assert_int_equal(symlinkat("/tmp/should-not-exist", dirfd, "link.4321"), 0);
	set("kernel.core_pattern", "link");
	assert_int_equal(coredump_record(&crash, dirfd, "x", 1), -EEXIST);
	assert_int_equal(access("/tmp/should-not-exist", F_OK), -1);
	/* absolute pattern; missing directory */
	set("kernel.core_uses_pid", "0");
	{
		char pat[400];

		snprintf(pat, sizeof(pat), "%s/abs.%%t", dir);
		set("kernel.core_pattern", pat);
	}
	assert_int_equal(coredump_record(&crash, AT_FDCWD, "abs", 3), 0);
	expect_file(dirfd, "abs.1700000001", "abs");
	set("kernel.core_pattern", "nodir/core");
	assert_int_equal(coredump_record(&crash, dirfd, "x", 1), -ENOENT);
	set("kernel.core_pattern", "");
	assert_int_equal(coredump_record(&crash, dirfd, "x", 1), -ENOENT);
	assert_int_equal(coredump_record(NULL, dirfd, "x", 1), -EINVAL);
	assert_int_equal(coredump_record(&crash, dirfd, NULL, 1), -EINVAL);
	close(dirfd);
}

static int call_core(int w, int i)
{
	(void)w;
	(void)i;
	return coredump_record(&crash, AT_FDCWD, record, strlen(record));
}

/* Pipe patterns flipped: argv split from one pattern, record on stdin. */
static void test_coredump_pipe_flipped(void **state)
{
	char pa[128], pb[128], a[600], b[600];
	const char *hb;

	(void)state;
	snprintf(pa, sizeof(pa), "| %s %%p %%e", helper('a', "core"));
	hb = unlike(pa + 3, helper('b', "core"));
	assert_true(strlen(hb) + 13 < sizeof(pb)); /* the pattern's maxlen */
	snprintf(pb, sizeof(pb), "|\t\t%s %%s  %%E x", hb);
	assert_distinct(pa + 1, pb + 1); /* both start with the '|' */
	/* an empty environment, the record on stdin */
	snprintf(a, sizeof(a), "%s\t4321\tmy prog\t|\t|\t%s", helper('a', "core"), record);
	snprintf(b, sizeof(b), "%s\t6\t!opt!my prog\tx\t|\t|\t%s", hb, record);
	set("kernel.core_uses_pid", "1"); /* never for a pipe */
	run_flipped("kernel.core_pattern", pa, pb, call_core);
	check_log(a, b, WORKERS * CALLS, true);
}

static void test_coredump_pipe_errors(void **state)
{
	(void)state;
	set("kernel.core_pattern", "|/nonexistent/helper %p");
	assert_int_equal(call_core(0, 0), -ENOENT);
	set("kernel.core_pattern", "|");
	assert_int_equal(call_core(0, 0), -EINVAL);
	set("kernel.core_pattern", "|relative/helper");
	assert_int_equal(call_core(0, 0), -EINVAL);
	/* the helper's exit status comes back */
	set("kernel.core_pattern", "|/bin/false %p");
	assert_int_equal(call_core(0, 0), 1 << 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_registration, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_kmod_flipped, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_kmod_errors, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_reboot_flipped, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_reboot_errors, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_uevent_flipped, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_uevent_flipped_empty, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_uevent_errors, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_ocfs2_flipped, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_ocfs2_errors, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_coredump_file, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_coredump_pipe_flipped, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_coredump_pipe_errors, tree_setup, tree_teardown),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
