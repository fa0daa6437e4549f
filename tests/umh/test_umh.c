/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of call_usermodehelper*(): wait modes and statuses, exec errors,
 * exact argv/envp, stdin feeding, the cleanup contract, reaping, what the
 * helper inherits (fds, signals, session, cwd), umh_spawn(), the concurrency
 * limit, the log hook. Helpers are /bin/sh and the scripts in UMH_HELPERS_DIR.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/compat.h" /* the kernel names under test */
#include "rcustring/umh.h"
#include "../failmalloc.h"
#include "../umh_wait.h"

#define HELPER(name) UMH_HELPERS_DIR "/" name

static char tmpdir[] = "/tmp/umh-test-XXXXXX";
static atomic_int cleanups;

static char *tmp_path(const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

/* Wait for a file the helper renames into place, then read it whole. */
static size_t read_file(const char *path, char *buf, size_t size)
{
	double end = now_s() + 10;
	ssize_t n;
	int fd;

	while ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 && now_s() < end)
		sleep_ms(5);
	assert_true(fd >= 0);
	n = read(fd, buf, size - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	return (size_t)n;
}

static void count_cleanup(void *data)
{
	atomic_fetch_add(&cleanups, 1);
	if (data)
		argv_free(data);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static int sh(const char *script, int wait)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };

	return call_usermodehelper("/bin/sh", argv, NULL, wait);
}

static void test_wait_proc_status(void **state)
{
	int st;

	(void)state;
	assert_int_equal(sh("exit 0", UMH_WAIT_PROC), 0);
	assert_int_equal(sh("exit 3", UMH_WAIT_PROC), 3 << 8);
	assert_int_equal(sh("exit 255", UMH_WAIT_PROC), 255 << 8);
	st = sh("kill -TERM $$", UMH_WAIT_PROC);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(st, SIGTERM);
	/* Our SIGKILL-proof dispositions are not inherited: SIGUSR1 ignored here, default there. */
	signal(SIGUSR1, SIG_IGN);
	st = sh("kill -USR1 $$; exit 9", UMH_WAIT_PROC);
	signal(SIGUSR1, SIG_DFL);
	assert_int_equal(st, SIGUSR1);
	assert_int_equal(umh_running(), 0);
}

static void test_no_wait_returns_at_exec(void **state)
{
	char *argv[] = { "wait_for.sh", tmp_path("go-exec"), NULL };
	int modes[] = { UMH_WAIT_EXEC, UMH_NO_WAIT };
	double t0;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		t0 = now_s();
		assert_int_equal(call_usermodehelper(HELPER("wait_for.sh"), argv, NULL, modes[i]), 0);
		/* The helper exits after 10 s at the earliest: a call that waited for
		 * it takes that long; 8 s leaves room for a preempted spawn. */
		assert_true(now_s() - t0 < 8.0);
		assert_int_equal(umh_running(), i + 1);
	}
	/* Still blocked: only they know the go file. */
	sleep_ms(50);
	assert_int_equal(umh_running(), 2);
	assert_int_equal(close(open(argv[1], O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
	wait_all_reaped();
}

static void test_exec_errors(void **state)
{
	char *argv[] = { "x", NULL };
	char *noargv[] = { NULL };
	const char *plain = tmp_path("not-executable");
	const char *garbage = tmp_path("garbage");
	int modes[] = { UMH_WAIT_PROC, UMH_WAIT_EXEC, UMH_NO_WAIT };
	int fd, i;

	(void)state;
	fd = open(plain, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	fd = open(garbage, O_CREAT | O_WRONLY | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\x7f\x01\x02\x03garbage", 11), 11);
	close(fd);

	for (i = 0; i < 3; i++) {
		int w = modes[i];

		assert_int_equal(call_usermodehelper("/nonexistent/helper", argv, NULL, w), -ENOENT);
		assert_int_equal(call_usermodehelper(plain, argv, NULL, w), -EACCES);
		assert_int_equal(call_usermodehelper(garbage, argv, NULL, w), -ENOEXEC);
		assert_int_equal(call_usermodehelper("bin/true", argv, NULL, w), -EINVAL);
		assert_int_equal(call_usermodehelper(NULL, argv, NULL, w), -EINVAL);
		assert_int_equal(call_usermodehelper("/bin/true", NULL, NULL, w), -EINVAL);
		assert_int_equal(call_usermodehelper("/bin/true", noargv, NULL, w), -EINVAL);
		/* The kernel's "disabled": nothing runs, success. */
		assert_int_equal(call_usermodehelper("", argv, NULL, w), 0);
	}
	assert_int_equal(call_usermodehelper("/bin/true", argv, NULL, 3), -EINVAL);
	assert_int_equal(call_usermodehelper("/bin/true", argv, NULL, -1), -EINVAL);
	assert_int_equal(umh_running(), 0);
}

static void check_bytes(const char *path, const char *want, size_t want_len)
{
	char buf[512];
	size_t n = read_file(path, buf, sizeof(buf));

	assert_int_equal(n, want_len);
	assert_memory_equal(buf, want, want_len);
}

static void test_argv_envp_exact(void **state)
{
	char out_env[300];
	char *argv[] = { "custom-argv0", HELPER("dump_args.sh"), "a b", "", "x\ty", "--", NULL };
	char *envp[] = { out_env, "FOO=bar baz", "EMPTY=", "NOEQUALS", NULL };
	static const char want_argv_tail[] = "a b\0\0x\ty\0--";
	char want_argv[512], want_env[512];
	size_t n;

	(void)state;
	snprintf(out_env, sizeof(out_env), "OUT=%s", tmp_path("args"));
	assert_int_equal(call_usermodehelper("/bin/sh", argv, envp, UMH_WAIT_PROC), 0);

	/* argv[0] is ours, not the path; the empty word survives. */
	n = (size_t)snprintf(want_argv, sizeof(want_argv), "custom-argv0%c%s%c", 0, HELPER("dump_args.sh"), 0);
	memcpy(want_argv + n, want_argv_tail, sizeof(want_argv_tail));
	n += sizeof(want_argv_tail);
	check_bytes(tmp_path("args.argv"), want_argv, n);

	/* Exactly envp: nothing of the caller's environment leaks in. */
	setenv("UMH_TEST_SECRET", "leak", 1);
	n = (size_t)snprintf(want_env, sizeof(want_env), "%s%cFOO=bar baz%cEMPTY=%cNOEQUALS%c", out_env, 0, 0, 0, 0);
	check_bytes(tmp_path("args.env"), want_env, n);
	unsetenv("UMH_TEST_SECRET");
}

static void test_null_envp_is_empty(void **state)
{
	(void)state;
	setenv("UMH_TEST_SECRET", "leak", 1);
	/* The environment execve() gave the shell (dash adds PWD later) is empty. */
	assert_int_equal(sh("test -z \"$(tr -d '\\0' < /proc/$$/environ)\"", UMH_WAIT_PROC), 0);
	assert_int_equal(sh("test -n \"$UMH_TEST_SECRET\"", UMH_WAIT_PROC), 1 << 8);
	unsetenv("UMH_TEST_SECRET");
}

static void test_stdin(void **state)
{
	enum { LEN = 300000 }; /* several pipe buffers */
	char *data = malloc(LEN), *got = malloc(LEN + 1);
	char script[400];
	char *argv[] = { "sh", "-c", script, NULL };
	int modes[] = { UMH_WAIT_PROC, UMH_NO_WAIT };
	FILE *f;
	int i, m;

	(void)state;
	assert_non_null(data);
	assert_non_null(got);
	for (i = 0; i < LEN; i++)
		data[i] = (char)(i * 7 + i / 251);
	for (m = 0; m < 2; m++) {
		const char *out = tmp_path(m ? "stdin-nowait" : "stdin-proc");

		snprintf(script, sizeof(script), "cat > '%s.tmp' && mv '%s.tmp' '%s'", out, out, out);
		assert_int_equal(call_usermodehelper_stdin("/bin/sh", argv, NULL, data, LEN, modes[m]), 0);
		read_file(out, got, 2); /* waits for the rename */
		f = fopen(out, "rb");
		assert_non_null(f);
		assert_int_equal(fread(got, 1, LEN + 1, f), LEN);
		fclose(f);
		assert_memory_equal(got, data, LEN);
	}
	wait_all_reaped();

	/* A helper that reads nothing: no SIGPIPE for us, its status for the caller. */
	snprintf(script, sizeof(script), "exec 0<&-; exit 4");
	assert_int_equal(call_usermodehelper_stdin("/bin/sh", argv, NULL, data, LEN, UMH_WAIT_PROC), 4 << 8);
	assert_int_equal(call_usermodehelper_stdin("/bin/sh", argv, NULL, data, LEN, UMH_WAIT_EXEC), 0);
	/* Zero bytes: immediate end of file. */
	snprintf(script, sizeof(script), "test \"$(wc -c)\" -eq 0");
	assert_int_equal(call_usermodehelper_stdin("/bin/sh", argv, NULL, NULL, 0, UMH_WAIT_PROC), 0);
	assert_int_equal(call_usermodehelper_stdin("/bin/sh", argv, NULL, NULL, 1, UMH_WAIT_PROC), -EINVAL);
	/* A program with fd 0 closed: the pipe still lands on the helper's stdin. */
	{
		int saved = fcntl(0, F_DUPFD_CLOEXEC, 3);
		const char *out = tmp_path("stdin-closed0");

		assert_true(saved >= 3);
		close(0);
		snprintf(script, sizeof(script), "cat > '%s'", out);
		m = call_usermodehelper_stdin("/bin/sh", argv, NULL, "hello", 5, UMH_WAIT_PROC);
		assert_int_equal(dup2(saved, 0), 0);
		close(saved);
		assert_int_equal(m, 0);
		check_bytes(out, "hello", 5);
	}
	/* Without the stdin variant, stdin is /dev/null: read hits EOF at once. */
	assert_int_equal(sh("test \"$(wc -c)\" -eq 0", UMH_WAIT_PROC), 0);
	wait_all_reaped();
	free(data);
	free(got);
}

/*
 * cleanup(data) runs exactly once on every path, after the exec: the
 * callback frees argv itself, so ASan catches any later use of it.
 */
static void test_cleanup_every_path(void **state)
{
	static const struct {
		const char *path;
		const char *cmd;
		int wait;
		int want;
	} calls[] = {
		{ "/bin/sh", "sh -c true", UMH_WAIT_PROC, 0 },
		{ "/bin/sh", "sh -c false", UMH_WAIT_PROC, 1 << 8 },
		{ "/bin/sh", "sh -c true", UMH_WAIT_EXEC, 0 },
		{ "/bin/sh", "sh -c true", UMH_NO_WAIT, 0 },
		{ "/nonexistent", "x", UMH_WAIT_PROC, -ENOENT },
		{ "/nonexistent", "x", UMH_NO_WAIT, -ENOENT },
		{ "relative", "x", UMH_WAIT_EXEC, -EINVAL },
		{ NULL, "x", UMH_WAIT_EXEC, -EINVAL },
		{ "/bin/sh", "", UMH_WAIT_EXEC, -EINVAL }, /* argv[0] NULL */
		{ "/bin/sh", "sh", 7, -EINVAL },
		{ "", "x", UMH_WAIT_PROC, 0 },
	};
	size_t i;
	int before, ret;

	(void)state;
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		char **argv = argv_split(calls[i].cmd, NULL);

		assert_non_null(argv);
		before = atomic_load(&cleanups);
		ret = call_usermodehelper_cleanup(calls[i].path, argv, NULL, calls[i].wait, count_cleanup, argv);
		assert_int_equal(ret, calls[i].want);
		assert_int_equal(atomic_load(&cleanups), before + 1);
	}
	/* NULL argv with a data pointer that is not argv. */
	before = atomic_load(&cleanups);
	assert_int_equal(call_usermodehelper_cleanup("/bin/true", NULL, NULL, UMH_NO_WAIT, count_cleanup, NULL),
			 -EINVAL);
	assert_int_equal(atomic_load(&cleanups), before + 1);
	/* NULL cleanup is allowed. */
	assert_int_equal(call_usermodehelper_cleanup("", NULL, NULL, UMH_NO_WAIT, NULL, NULL), 0);

	/* Refused over the limit. */
	wait_all_reaped();
	assert_int_equal(umh_set_max_concurrent(1), UMH_MAX_CONCURRENT);
	{
		char *block[] = { "wait_for.sh", tmp_path("go-cleanup"), NULL };
		char **argv = argv_split("true", NULL);

		assert_int_equal(call_usermodehelper(HELPER("wait_for.sh"), block, NULL, UMH_NO_WAIT), 0);
		before = atomic_load(&cleanups);
		assert_int_equal(call_usermodehelper_cleanup("/bin/true", argv, NULL, UMH_WAIT_PROC, count_cleanup, argv),
				 -EAGAIN);
		assert_int_equal(atomic_load(&cleanups), before + 1);
		assert_int_equal(close(open(block[1], O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
		wait_all_reaped();
	}
	assert_int_equal(umh_set_max_concurrent(UMH_MAX_CONCURRENT), 1);
	wait_all_reaped();
}

/* Fail each allocation of the library in turn: -ENOMEM, cleanup once, no slot lost. */
static void test_cleanup_enomem(void **state)
{
	int modes[] = { UMH_NO_WAIT, UMH_WAIT_EXEC, UMH_WAIT_PROC };
	long nth, calls, failed = 0;
	int before, ret, m;

	(void)state;
	for (m = 0; m < 3; m++) {
		for (nth = 1;; nth++) {
			char **argv = argv_split("/bin/true", NULL);

			assert_non_null(argv);
			before = atomic_load(&cleanups);
			failmalloc_arm(nth);
			ret = call_usermodehelper_cleanup("/bin/true", argv, NULL, modes[m], count_cleanup, argv);
			calls = failmalloc_disarm();
			assert_int_equal(atomic_load(&cleanups), before + 1);
			if (ret == 0) {
				assert_true(calls < nth);
				break;
			}
			assert_int_equal(ret, -ENOMEM);
			failed++;
		}
		wait_all_reaped();
	}
	/* The no-wait modes allocate; the test failed those allocations. */
	assert_true(failed >= 2);
}

/* Children of ours (ppid == getpid()) that are zombies. */
/* Zombies whose parent is this process, other than @except. */
static int count_zombie_children(pid_t except)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int zombies = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], buf[512], *rp;
		char state;
		int ppid;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		rp = strrchr(buf, ')'); /* comm may hold spaces and parens */
		if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == getpid() && state == 'Z' &&
		    atoi(e->d_name) != except)
			zombies++;
	}
	closedir(d);
	return zombies;
}

static void test_no_zombies_no_stealing(void **state)
{
	char *mine_argv[] = { "sh", "-c", "sleep 0.2; exit 7", NULL };
	char *true_argv[] = { "true", NULL };
	pid_t mine;
	int i, st;

	(void)state;
	/* A child of the program's own: the library must not reap it. */
	assert_int_equal(posix_spawn(&mine, "/bin/sh", NULL, NULL, mine_argv, NULL), 0);
	for (i = 0; i < 40; i++)
		assert_int_equal(call_usermodehelper("/bin/true", true_argv, NULL, i % 2 ? UMH_NO_WAIT : UMH_WAIT_EXEC),
				 0);
	wait_all_reaped();
	sleep_ms(50);
	/* `mine` may be a zombie by now under load: it is ours to reap. */
	assert_int_equal(count_zombie_children(mine), 0);
	assert_int_equal(waitpid(mine, &st, 0), mine);
	assert_int_equal(st, 7 << 8);
}

/* What the helper inherits, in both spawning paths (caller thread, waiter thread). */
static void test_inheritance(void **state)
{
	int modes[] = { UMH_WAIT_PROC, UMH_NO_WAIT };
	int fds[4], pfd[2], m;
	sigset_t usr1, old;
	char fdarg[4][12];

	(void)state;
	/* Descriptors without O_CLOEXEC, one of them high. */
	fds[0] = open("/dev/null", O_RDONLY);
	assert_int_equal(pipe(pfd), 0);
	fds[1] = pfd[0];
	fds[2] = pfd[1];
	fds[3] = dup2(fds[0], 200);
	assert_int_equal(fds[3], 200);
	for (m = 0; m < 4; m++)
		snprintf(fdarg[m], sizeof(fdarg[m]), "%d", fds[m]);

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &old);
	signal(SIGUSR2, SIG_IGN);

	for (m = 0; m < 2; m++) {
		const char *out = tmp_path(m ? "inspect-nowait" : "inspect-proc");
		char *argv[] = { "inspect.sh", (char *)out, fdarg[0], fdarg[1], fdarg[2], fdarg[3], NULL };
		char buf[1024], want[64], *sig;
		unsigned long long blk, ign;
		int pid, pgrp, sid;

		assert_int_equal(call_usermodehelper(HELPER("inspect.sh"), argv, NULL, modes[m]), 0);
		read_file(out, buf, sizeof(buf));
		assert_non_null(strstr(buf, "open:\n"));         /* none of our fds */
		assert_non_null(strstr(buf, "stdin: /dev/null\n"));
		assert_non_null(strstr(buf, "cwd: /\n"));
		assert_int_equal(sscanf(strstr(buf, "ids: "), "ids: %d %d %d", &pid, &pgrp, &sid), 3);
		assert_int_equal(pgrp, pid);                       /* setsid: own group, */
		assert_int_equal(sid, pid);                        /* own session */
		assert_int_not_equal(sid, getsid(0));
		sig = strstr(buf, "sig: ");
		assert_non_null(sig);
		assert_int_equal(sscanf(sig, "sig: SigBlk: %llx SigIgn: %llx", &blk, &ign), 2);
		assert_int_equal(blk, 0);
		assert_int_equal(ign & (1ULL << (SIGUSR2 - 1)), 0);
		snprintf(want, sizeof(want), "open:");
		assert_memory_equal(buf, want, strlen(want));
	}
	wait_all_reaped();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	signal(SIGUSR2, SIG_DFL);
	for (m = 0; m < 4; m++)
		close(fds[m]);
}

/*
 * umh_spawn(): the helper's clean start, with the pid handed to the caller,
 * who reaps it; a caller's blocked and ignored signals and its fds without
 * O_CLOEXEC must not reach the program.
 */
static void test_umh_spawn(void **state)
{
	const char *out = tmp_path("inspect-spawn");
	char low[12], high[12], buf[1024], *sig;
	char *argv[] = { "inspect.sh", (char *)out, low, high, NULL };
	char *envp[] = { "UMH_SPAWN=yes", NULL };
	char *noargv[] = { NULL };
	unsigned long long blk, ign;
	int fd, st, ids, pgrp, sid;
	sigset_t block, old;
	pid_t pid;

	(void)state;
	fd = open("/dev/null", O_RDONLY);
	assert_true(fd > STDERR_FILENO);
	assert_int_equal(dup2(fd, 200), 200);
	snprintf(low, sizeof(low), "%d", fd);
	snprintf(high, sizeof(high), "%d", 200);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, SIG_IGN);

	pid = umh_spawn(HELPER("inspect.sh"), argv, envp);

	pthread_sigmask(SIG_SETMASK, &old, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	close(fd);
	close(200);
	assert_true(pid > 0);
	assert_int_equal(umh_running(), 0);         /* the caller's to reap, not counted */
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(st, 0);
	read_file(out, buf, sizeof(buf));
	assert_non_null(strstr(buf, "open:\n"));    /* neither fd */
	assert_non_null(strstr(buf, "stdin: /dev/null\n"));
	assert_non_null(strstr(buf, "cwd: /\n"));
	assert_non_null(strstr(buf, "env: UMH_SPAWN=yes \n"));
	assert_int_equal(sscanf(strstr(buf, "ids: "), "ids: %d %d %d", &ids, &pgrp, &sid), 3);
	assert_int_equal(ids, pid);                  /* the pid returned is the program's */
	assert_int_equal(sid, pid);                  /* own session */
	sig = strstr(buf, "sig: ");
	assert_non_null(sig);
	assert_int_equal(sscanf(sig, "sig: SigBlk: %llx SigIgn: %llx", &blk, &ign), 2);
	assert_int_equal(blk, 0);
	assert_int_equal(ign & (1ULL << (SIGPIPE - 1)), 0);
	assert_int_equal(ign & (1ULL << (SIGTERM - 1)), 0);

	assert_int_equal(umh_spawn("/nonexistent/helper", argv, NULL), -ENOENT);
	assert_int_equal(umh_spawn("bin/true", argv, NULL), -EINVAL);
	assert_int_equal(umh_spawn(NULL, argv, NULL), -EINVAL);
	assert_int_equal(umh_spawn("/bin/true", NULL, NULL), -EINVAL);
	assert_int_equal(umh_spawn("/bin/true", noargv, NULL), -EINVAL);
	assert_int_equal(umh_running(), 0);
}

static void test_concurrency_limit(void **state)
{
	char *block[] = { "wait_for.sh", tmp_path("go-limit"), NULL };
	char *true_argv[] = { "true", NULL };

	(void)state;
	assert_int_equal(umh_set_max_concurrent(0), -EINVAL);
	assert_int_equal(umh_set_max_concurrent(-3), -EINVAL);
	assert_int_equal(umh_set_max_concurrent(2), UMH_MAX_CONCURRENT);
	assert_int_equal(call_usermodehelper(HELPER("wait_for.sh"), block, NULL, UMH_NO_WAIT), 0);
	assert_int_equal(call_usermodehelper(HELPER("wait_for.sh"), block, NULL, UMH_WAIT_EXEC), 0);
	assert_int_equal(umh_running(), 2);
	/* Every mode and variant is refused while two run. */
	assert_int_equal(call_usermodehelper("/bin/true", true_argv, NULL, UMH_NO_WAIT), -EAGAIN);
	assert_int_equal(call_usermodehelper("/bin/true", true_argv, NULL, UMH_WAIT_PROC), -EAGAIN);
	assert_int_equal(call_usermodehelper_stdin("/bin/true", true_argv, NULL, "x", 1, UMH_WAIT_EXEC), -EAGAIN);
	assert_int_equal(umh_running(), 2);
	/* Raising the limit lets one more in. */
	assert_int_equal(umh_set_max_concurrent(3), 2);
	assert_int_equal(call_usermodehelper("/bin/true", true_argv, NULL, UMH_WAIT_PROC), 0);
	assert_int_equal(close(open(block[1], O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
	wait_all_reaped();
	assert_int_equal(umh_set_max_concurrent(2), 3);
	assert_int_equal(call_usermodehelper("/bin/true", true_argv, NULL, UMH_WAIT_PROC), 0);
	assert_int_equal(umh_set_max_concurrent(UMH_MAX_CONCURRENT), 2);
}

struct log_rec {
	int calls;
	char path[64];
	char argv1[64];
	int result;
};

static void log_hook(void *arg, const char *path, char *const argv[], int result)
{
	struct log_rec *r = arg;

	r->calls++;
	snprintf(r->path, sizeof(r->path), "%s", path ? path : "(null)");
	snprintf(r->argv1, sizeof(r->argv1), "%s", argv && argv[0] && argv[1] ? argv[1] : "(none)");
	r->result = result;
}

static void test_log_hook(void **state)
{
	struct log_rec r = { 0 };

	(void)state;
	umh_set_log(log_hook, &r);
	assert_int_equal(sh("exit 2", UMH_WAIT_PROC), 2 << 8);
	assert_int_equal(r.calls, 1);
	assert_string_equal(r.path, "/bin/sh");
	assert_string_equal(r.argv1, "-c");
	assert_int_equal(r.result, 2 << 8);
	assert_int_equal(call_usermodehelper("/nonexistent", (char *[]){ "a", "b", NULL }, NULL, UMH_NO_WAIT), -ENOENT);
	assert_int_equal(r.calls, 2);
	assert_string_equal(r.path, "/nonexistent");
	assert_string_equal(r.argv1, "b");
	assert_int_equal(r.result, -ENOENT);
	assert_int_equal(call_usermodehelper(NULL, NULL, NULL, UMH_NO_WAIT), -EINVAL);
	assert_int_equal(r.calls, 3);
	assert_string_equal(r.path, "(null)");
	assert_int_equal(r.result, -EINVAL);
	umh_set_log(NULL, NULL);
	assert_int_equal(sh("exit 0", UMH_WAIT_PROC), 0);
	assert_int_equal(r.calls, 3);
}

static void *caller_thread(void *arg)
{
	char *argv[] = { "sh", "-c", "exit 1", NULL };
	long i, bad = 0;

	(void)arg;
	for (i = 0; i < 10; i++) {
		if (call_usermodehelper("/bin/sh", argv, NULL, UMH_WAIT_PROC) != 1 << 8)
			bad++;
		if (call_usermodehelper("/bin/sh", argv, NULL, UMH_NO_WAIT) != 0)
			bad++;
	}
	return (void *)bad;
}

static void test_threads(void **state)
{
	pthread_t t[4];
	void *bad;
	int i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, caller_thread, NULL), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_null(bad);
	}
	wait_all_reaped();
	assert_int_equal(count_zombie_children(-1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_proc_status),
		cmocka_unit_test(test_no_wait_returns_at_exec),
		cmocka_unit_test(test_exec_errors),
		cmocka_unit_test(test_argv_envp_exact),
		cmocka_unit_test(test_null_envp_is_empty),
		cmocka_unit_test(test_stdin),
		cmocka_unit_test(test_cleanup_every_path),
		cmocka_unit_test(test_cleanup_enomem),
		cmocka_unit_test(test_no_zombies_no_stealing),
		cmocka_unit_test(test_inheritance),
		cmocka_unit_test(test_umh_spawn),
		cmocka_unit_test(test_concurrency_limit),
		cmocka_unit_test(test_log_hook),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
