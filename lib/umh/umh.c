// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Usermode helpers on posix_spawn(). See include/rcustring/umh.h for the
 * contract; this file keeps the why.
 *
 * posix_spawn() in glibc clones with CLONE_VM|CLONE_VFORK and returns only
 * when the child has exec'd or failed to (the exec errno comes back through
 * the shared memory, as musl sends it back over a close-on-exec pipe), so
 * every wait mode can report exec errors.
 *
 * Helpers nobody waits for are spawned by a detached library thread that
 * then blocks in waitpid() on exactly that pid: no SIGCHLD handler, no
 * waitpid(-1), so the program's own children are left alone. The thread is
 * started before the spawn, so failing to start it leaves no child behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rcustring/umh.h"

/* Process-wide, like the kernel's kmod_concurrent: the limit bounds the process. */
static atomic_int umh_max = UMH_MAX_CONCURRENT;
static atomic_int umh_count;
static atomic_llong umh_last_warn;

static pthread_mutex_t umh_log_lock = PTHREAD_MUTEX_INITIALIZER;
static umh_log_fn umh_log;
static void *umh_log_arg;

/* A spawn request shared by the caller and the waiter thread; last put frees. */
struct umh_req {
	atomic_int refs;
	const char *path;
	char **argv;
	char **envp;
	int stdin_fd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int ret;
};

static int slot_get(const char *path)
{
	int n = atomic_load(&umh_count);
	long long now, prev;

	do {
		if (n >= atomic_load(&umh_max))
			goto refuse;
	} while (!atomic_compare_exchange_weak(&umh_count, &n, n + 1));
	return 0;

refuse:
	/* One line a second at most: a runaway loop must not flood the log. */
	now = (long long)time(NULL);
	prev = atomic_load(&umh_last_warn);
	if (now != prev && atomic_compare_exchange_strong(&umh_last_warn, &prev, now))
		fprintf(stderr, "call_usermodehelper: %d helpers running (limit %d), refusing %s: runaway loop?\n",
			n, atomic_load(&umh_max), path);
	return -EAGAIN;
}

static void slot_put(void)
{
	atomic_fetch_sub(&umh_count, 1);
}

/* The helper's environment (see umh.h); @stdin_fd < 0: /dev/null. */
static int spawn_helper(const char *path, char **argv, char **envp, int stdin_fd, pid_t *pidp)
{
	static char *empty_env[] = { NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t set;
	int err;

	err = posix_spawn_file_actions_init(&fa);
	if (err)
		return -err;
	err = posix_spawnattr_init(&attr);
	if (err)
		goto out_fa;

	if (stdin_fd >= 0)
		err = posix_spawn_file_actions_adddup2(&fa, stdin_fd, STDIN_FILENO);
	else
		err = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	/* Kernel helpers run in "/"; do not pin the caller's cwd either. */
	if (!err)
		err = posix_spawn_file_actions_addchdir_np(&fa, "/");
	/* Also the fds the program opened without O_CLOEXEC. */
	if (!err)
		err = posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
	sigemptyset(&set);
	if (!err)
		err = posix_spawnattr_setsigmask(&attr, &set);
	sigfillset(&set);
	if (!err)
		err = posix_spawnattr_setsigdefault(&attr, &set);
	if (!err)
		err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
						      POSIX_SPAWN_SETSID);
	if (!err)
		err = posix_spawn(pidp, path, &fa, &attr, argv, envp ? envp : empty_env);

	posix_spawnattr_destroy(&attr);
out_fa:
	posix_spawn_file_actions_destroy(&fa);
	return -err;
}

static int wait_status(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return status;
}

static void req_put(struct umh_req *req)
{
	if (atomic_fetch_sub(&req->refs, 1) == 1) {
		pthread_cond_destroy(&req->cond);
		pthread_mutex_destroy(&req->lock);
		free(req);
	}
}

/* Owns one concurrency slot: spawns, hands the result back, reaps. */
static void *umh_waiter(void *arg)
{
	struct umh_req *req = arg;
	pid_t pid = -1;
	int ret;

	ret = spawn_helper(req->path, req->argv, req->envp, req->stdin_fd, &pid);
	/* A failed call holds no slot by the time it returns. */
	if (ret)
		slot_put();
	pthread_mutex_lock(&req->lock);
	req->ret = ret;
	req->done = true;
	pthread_cond_signal(&req->cond);
	pthread_mutex_unlock(&req->lock);
	req_put(req); /* the caller may return and free argv from here on */

	if (ret == 0) {
		wait_status(pid);
		slot_put();
	}
	return NULL;
}

/*
 * Spawn in a waiter thread and return once the exec result is known. Takes
 * over the caller's concurrency slot: the thread releases it after reaping,
 * or this function does if no thread could be started.
 */
static int umh_spawn_detached(const char *path, char **argv, char **envp, int stdin_fd)
{
	pthread_attr_t attr;
	struct umh_req *req;
	pthread_t thread;
	sigset_t all;
	int err, ret;

	req = malloc(sizeof(*req));
	if (!req) {
		slot_put();
		return -ENOMEM;
	}
	atomic_init(&req->refs, 2);
	req->path = path;
	req->argv = argv;
	req->envp = envp;
	req->stdin_fd = stdin_fd;
	req->done = false;
	req->ret = 0;
	pthread_mutex_init(&req->lock, NULL);
	pthread_cond_init(&req->cond, NULL);

	err = pthread_attr_init(&attr);
	if (err)
		goto fail;
	/* A library thread must not take the program's signals. */
	sigfillset(&all);
	err = pthread_attr_setsigmask_np(&attr, &all);
	if (!err)
		err = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!err)
		err = pthread_create(&thread, &attr, umh_waiter, req);
	pthread_attr_destroy(&attr);
	if (err)
		goto fail;

	pthread_mutex_lock(&req->lock);
	while (!req->done)
		pthread_cond_wait(&req->cond, &req->lock);
	ret = req->ret;
	pthread_mutex_unlock(&req->lock);
	req_put(req);
	return ret;

fail:
	/* No thread: nobody else holds req or the slot. */
	pthread_cond_destroy(&req->cond);
	pthread_mutex_destroy(&req->lock);
	free(req);
	slot_put();
	return -ENOMEM;
}

/*
 * Write everything or stop at EPIPE (the helper stopped reading), without
 * letting SIGPIPE reach the program: block it in this thread and consume the
 * one our write raised, unless one was already pending for someone else.
 */
static void feed(int fd, const void *data, size_t len)
{
	const char *p = data;
	sigset_t pipe_set, old, pending;
	bool was_pending, got_epipe = false;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			got_epipe = errno == EPIPE;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (got_epipe && !was_pending) {
		struct timespec zero = { 0, 0 };

		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * A close-on-exec pipe with both ends >= 3: in a program that closed one of
 * its standard fds, pipe2() may hand out 0..2, and the write end would then
 * sit where the helper expects stdout, or dup2(fd, 0) would be a no-op that
 * keeps O_CLOEXEC.
 */
static int make_pipe(int pipefd[2])
{
	int i, fd;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	for (i = 0; i < 2; i++) {
		if (pipefd[i] > STDERR_FILENO)
			continue;
		fd = fcntl(pipefd[i], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
		if (fd < 0) {
			fd = -errno;
			close(pipefd[0]);
			close(pipefd[1]);
			pipefd[0] = pipefd[1] = -1;
			return fd;
		}
		close(pipefd[i]);
		pipefd[i] = fd;
	}
	return 0;
}

static int umh_run(const char *path, char **argv, char **envp, int wait, bool with_stdin,
		    const void *data, size_t len, void (*cleanup)(void *), void *cdata)
{
	int pipefd[2] = { -1, -1 };
	pid_t pid;
	int ret;

	ret = -EINVAL;
	if (wait < UMH_NO_WAIT || wait > UMH_WAIT_PROC || !path)
		goto out;
	if (!path[0]) {
		ret = 0; /* the kernel's "helper disabled" */
		goto out;
	}
	if (path[0] != '/' || !argv || !argv[0] || (with_stdin && !data && len))
		goto out;

	ret = slot_get(path);
	if (ret)
		goto out;

	if (with_stdin) {
		ret = make_pipe(pipefd);
		if (ret) {
			slot_put();
			goto out;
		}
	}

	if (wait == UMH_WAIT_PROC) {
		ret = spawn_helper(path, argv, envp, pipefd[0], &pid);
		if (ret == 0 && with_stdin) {
			close(pipefd[0]);
			pipefd[0] = -1;
			feed(pipefd[1], data, len);
			close(pipefd[1]);
			pipefd[1] = -1;
		}
		if (ret == 0)
			ret = wait_status(pid);
		slot_put();
	} else {
		ret = umh_spawn_detached(path, argv, envp, pipefd[0]);
		if (ret == 0 && with_stdin) {
			close(pipefd[0]);
			pipefd[0] = -1;
			feed(pipefd[1], data, len);
		}
	}

out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	{
		umh_log_fn fn;
		void *arg;

		pthread_mutex_lock(&umh_log_lock);
		fn = umh_log;
		arg = umh_log_arg;
		pthread_mutex_unlock(&umh_log_lock);
		if (fn)
			fn(arg, path, argv, ret);
	}
	if (cleanup)
		cleanup(cdata);
	return ret;
}

RCUSTRING_API int umh_call(const char *path, char **argv, char **envp, int wait)
{
	return umh_run(path, argv, envp, wait, false, NULL, 0, NULL, NULL);
}

RCUSTRING_API int umh_call_cleanup(const char *path, char **argv, char **envp, int wait,
					      void (*cleanup)(void *data), void *data)
{
	return umh_run(path, argv, envp, wait, false, NULL, 0, cleanup, data);
}

RCUSTRING_API int umh_call_stdin(const char *path, char **argv, char **envp,
					    const void *data, size_t len, int wait)
{
	return umh_run(path, argv, envp, wait, true, data, len, NULL, NULL);
}

RCUSTRING_API pid_t umh_spawn(const char *path, char **argv, char **envp)
{
	pid_t pid;
	int ret;

	if (!path || path[0] != '/' || !argv || !argv[0])
		return -EINVAL;
	ret = spawn_helper(path, argv, envp, -1, &pid);
	return ret ? ret : pid;
}

RCUSTRING_API int umh_set_max_concurrent(int n)
{
	if (n < 1)
		return -EINVAL;
	return atomic_exchange(&umh_max, n);
}

RCUSTRING_API int umh_running(void)
{
	return atomic_load(&umh_count);
}

RCUSTRING_API void umh_set_log(umh_log_fn fn, void *arg)
{
	pthread_mutex_lock(&umh_log_lock);
	umh_log = fn;
	umh_log_arg = arg;
	pthread_mutex_unlock(&umh_log_lock);
}
