/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rcustring/sysctl_budget.h>
#include <rcustring/umh.h>

#include "children.h"
#include "common/deadline.h"
#include "common/unix_listen.h"
#include "events.h"
#include "log.h"
#include "subsys.h"

#define LINE_MAX_BYTES 1024
#define MAX_ARGS 32
#define LINE_TIMEOUT_MS 5000
#define IDLE_TIMEOUT_MS 60000
#define SEND_TIMEOUT_MS 5000

extern char **environ;

struct events {
	int fd, core_dir;
	char *path;
	dev_t dev;
	ino_t ino;
	pthread_t tid;
	int stop_pipe[2];
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int busy;                       /* connection and supervisor threads still running */
	int conns[EVENTS_MAX_CLIENTS];  /* client fds (-1: free slot), shut down at stop */
	bool stopping;                  /* deaths from here on are our own SIGTERM/SIGKILL */
	bool allow_poweroff;            /* set before serving; read only afterwards */
	struct sysctl_budget *budget;   /* the daemon's handle budget: a connection is a handle */
};

struct supervised {
	struct events *ev;
	pid_t pid;
	char *path;
};

struct client {
	struct events *ev;
	int slot;
	uid_t uid; /* counted in ev->budget */
};

static void busy_add(struct events *ev, int n)
{
	pthread_mutex_lock(&ev->lock);
	ev->busy += n;
	if (ev->busy == 0)
		pthread_cond_broadcast(&ev->idle);
	pthread_mutex_unlock(&ev->lock);
}

static bool stopping(struct events *ev)
{
	bool ret;

	pthread_mutex_lock(&ev->lock);
	ret = ev->stopping;
	pthread_mutex_unlock(&ev->lock);
	return ret;
}

static void log_crash_record(const struct supervised *s, int sig, int err)
{
	char result[128];

	/* A pipe pattern gives the helper's wait status, not an error. */
	if (err < 0)
		snprintf(result, sizeof(result), "failed: %s", strerror(-err));
	else if (err == 0)
		snprintf(result, sizeof(result), "written");
	else if (WIFEXITED(err))
		snprintf(result, sizeof(result), "helper exited with status %d", WEXITSTATUS(err));
	else if (WIFSIGNALED(err))
		snprintf(result, sizeof(result), "helper killed by signal %d (%s)", WTERMSIG(err),
			 strsignal(WTERMSIG(err)));
	else
		snprintf(result, sizeof(result), "helper ended with wait status %#x", (unsigned)err);
	rlog(LOG_WARNING, "%s (pid %d) killed by signal %d: crash record %s", s->path, s->pid, sig,
		result);
}

/* Waits for a supervised program; a death by signal becomes a crash record. */
static void *supervise(void *arg)
{
	struct supervised *s = arg;
	char host[256] = "", record[512];
	int status, len;
	pid_t r;

	while ((r = waitpid(s->pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (r < 0) {
		/* ECHILD: someone else reaped it; there is no status to report. */
		rlog(LOG_ERR, "%s (pid %d): cannot wait for it: %s", s->path, s->pid,
			strerror(errno));
	} else if (WIFSIGNALED(status) && stopping(s->ev)) {
		rlog(LOG_NOTICE, "%s (pid %d) stopped at shutdown by signal %d", s->path, s->pid,
			WTERMSIG(status));
	} else if (WIFSIGNALED(status)) {
		const char *base = strrchr(s->path, '/');
		struct core_info ci = {
			.pid = s->pid, .global_pid = s->pid, .tid = s->pid, .global_tid = s->pid,
			.uid = getuid(), .gid = getgid(), .signal = WTERMSIG(status),
			.time = (int64_t)time(NULL), .dumpable = 1, .hostname = host,
			.comm = base ? base + 1 : s->path, .exe_path = s->path,
		};

		gethostname(host, sizeof(host) - 1);
		len = snprintf(record, sizeof(record), "crash: pid=%d exe=%s signal=%d (%s)\n", s->pid,
			       s->path, ci.signal, strsignal(ci.signal));
		log_crash_record(s, ci.signal,
				 coredump_record(&ci, s->ev->core_dir, record, (size_t)len));
	}
	free(s->path);
	busy_add(s->ev, -1);
	free(s);
	return NULL;
}

static int run_supervised(struct events *ev, char **argv, char *reply, size_t size)
{
	struct supervised *s;
	pthread_t tid;
	pid_t pid;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(argv[0]))) {
		free(s);
		return -ENOMEM;
	}
	s->ev = ev;
	/*
	 * The daemon's threads block SIGTERM/SIGINT/SIGHUP and it ignores
	 * SIGPIPE; a supervised program gets neither, nor the daemon's
	 * descriptors (libraries open some without O_CLOEXEC), as helpers do.
	 * It keeps the daemon's environment.
	 */
	s->pid = umh_spawn(argv[0], argv, environ);
	if (s->pid < 0) {
		err = s->pid;
		free(s->path);
		free(s);
		return err;
	}
	/* Once the thread runs, @s is its to free: the reply must not read it. */
	pid = s->pid;
	busy_add(ev, 1);
	if (pthread_create(&tid, NULL, supervise, s) != 0) {
		busy_add(ev, -1);
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		free(s->path);
		free(s);
		return -EAGAIN;
	}
	pthread_detach(tid);
	snprintf(reply, size, "%d", (int)pid);
	return 0;
}

#define EVENT_NAMES "MODULE, UEVENT, POWEROFF, OCFS2_LEAVE, RUN"

/*
 * Runs one request line; fills @reply with the result on success, or points
 * @why at a text saying what was wrong (NULL: strerror of the result).
 */
static int handle(struct events *ev, char *line, char *reply, size_t size, const char **why)
{
	char *argv[MAX_ARGS + 1], *save = NULL;
	int argc = 0, ret;

	for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (argc == MAX_ARGS)
			return -E2BIG;
		argv[argc++] = tok;
	}
	argv[argc] = NULL;
	*why = NULL;
	if (argc == 0)
		return (*why = "empty line: known events are " EVENT_NAMES), -EINVAL;
	if (!strcmp(argv[0], "POWEROFF") && !ev->allow_poweroff)
		return (*why = "POWEROFF is refused: rcusysd was started without --allow-poweroff"),
		       -EPERM;
	if (!strcmp(argv[0], "MODULE") && argc == 2)
		ret = request_module("%s", argv[1]);
	else if (!strcmp(argv[0], "UEVENT") && argc == 4)
		ret = uevent_helper_call(argv[1], argv[2], argv[3], (uint64_t)time(NULL));
	else if (!strcmp(argv[0], "POWEROFF") && argc <= 2)
		ret = orderly_poweroff(argc == 2 && !strcmp(argv[1], "force"));
	else if (!strcmp(argv[0], "OCFS2_LEAVE") && argc == 2)
		ret = ocfs2_leave_group(argv[1]);
	else if (!strcmp(argv[0], "RUN") && argc >= 2)
		return run_supervised(ev, argv + 1, reply, size);
	else if (!strcmp(argv[0], "MODULE"))
		return (*why = "usage: MODULE NAME"), -EINVAL;
	else if (!strcmp(argv[0], "UEVENT"))
		return (*why = "usage: UEVENT SUBSYSTEM ACTION DEVPATH"), -EINVAL;
	else if (!strcmp(argv[0], "POWEROFF"))
		return (*why = "usage: POWEROFF [force]"), -EINVAL;
	else if (!strcmp(argv[0], "OCFS2_LEAVE"))
		return (*why = "usage: OCFS2_LEAVE GROUP"), -EINVAL;
	else if (!strcmp(argv[0], "RUN"))
		return (*why = "usage: RUN ABSOLUTE-PATH [ARGS...]"), -EINVAL;
	else if (!strcmp(argv[0], "STATUS") || !strcmp(argv[0], "METRICS"))
		return (*why = "not an event: ask the control socket (rcusysctl --status, --metrics)"),
		       -EINVAL;
	else
		return (*why = "unknown event: known events are " EVENT_NAMES), -EINVAL;
	if (ret >= 0)
		snprintf(reply, size, "%d", ret);
	return ret < 0 ? ret : 0;
}

/*
 * Waits for input until @deadline; returns > 0 when readable (or closed),
 * 0 when the deadline passed.
 */
static int wait_input(int fd, long long deadline)
{
	for (;;) {
		long long left = deadline - rcs_now_ms();
		struct pollfd p = { fd, POLLIN, 0 };
		int n;

		if (left <= 0)
			return 0;
		n = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
		if (n > 0 || (n < 0 && errno != EINTR))
			return 1; /* let read() say what happened */
	}
}

static void *serve_client(void *arg)
{
	struct client *c = arg;
	struct events *ev = c->ev;
	int slot = c->slot, fd;
	uid_t uid = c->uid;
	char line[LINE_MAX_BYTES], reply[LINE_MAX_BYTES + 64], result[64] = "";
	long long deadline = rcs_now_ms() + IDLE_TIMEOUT_MS;
	size_t len = 0;
	ssize_t n;

	free(c);
	pthread_mutex_lock(&ev->lock);
	fd = ev->conns[slot];
	pthread_mutex_unlock(&ev->lock);
	for (;;) {
		char *nl = memchr(line, '\n', len);

		if (!nl) {
			if (len == sizeof(line))
				break; /* over-long request: drop the client */
			/* A slow or silent client must not hold a thread (or the shutdown). */
			if (!wait_input(fd, deadline))
				break;
			n = read(fd, line + len, sizeof(line) - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			if (len == 0)
				deadline = rcs_now_ms() + LINE_TIMEOUT_MS;
			len += (size_t)n;
			continue;
		}
		*nl = '\0';
		if (nl > line && nl[-1] == '\r')
			nl[-1] = '\0';
		const char *why = NULL;
		int err = handle(ev, line, result, sizeof(result), &why);

		if (err)
			snprintf(reply, sizeof(reply), "ERR %d %s\n", -err, why ? why : strerror(-err));
		else
			snprintf(reply, sizeof(reply), "OK %s\n", result);
		if (send(fd, reply, strlen(reply), MSG_NOSIGNAL) < 0)
			break;
		len -= (size_t)(nl + 1 - line);
		memmove(line, nl + 1, len);
		deadline = rcs_now_ms() + (len ? LINE_TIMEOUT_MS : IDLE_TIMEOUT_MS);
	}
	/* Under the lock: events_stop() must never shut down a reused fd. */
	pthread_mutex_lock(&ev->lock);
	ev->conns[slot] = -1;
	close(fd);
	pthread_mutex_unlock(&ev->lock);
	sysctl_budget_put(ev->budget, uid, SYSCTL_HANDLE_CONN, 1);
	busy_add(ev, -1);
	return NULL;
}

/* A free connection slot, or -1 (full, or stopping). Takes a busy count. */
static int take_slot(struct events *ev, int fd)
{
	int slot = -1;

	pthread_mutex_lock(&ev->lock);
	for (int i = 0; i < EVENTS_MAX_CLIENTS && !ev->stopping; i++) {
		if (ev->conns[i] < 0) {
			ev->conns[i] = fd;
			ev->busy++;
			slot = i;
			break;
		}
	}
	pthread_mutex_unlock(&ev->lock);
	return slot;
}

static void put_slot(struct events *ev, int slot)
{
	pthread_mutex_lock(&ev->lock);
	ev->conns[slot] = -1;
	pthread_mutex_unlock(&ev->lock);
	busy_add(ev, -1);
}

/* Tells a refused client why (when it can be told) and closes it. */
static void refuse(int fd, const char *msg)
{
	if (send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the client is told when it can be; it is closed either way */
	}
	close(fd);
}

/*
 * The peer's uid, counted as a handle of the daemon's budget (shared with
 * the tree's FUSE mount and the control socket): 0, or -errno.
 */
static int count_peer(struct events *ev, int fd, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return -errno;
	*uid = cred.uid;
	return ev->budget ? sysctl_budget_take(ev->budget, cred.uid, SYSCTL_HANDLE_CONN, 1) : 0;
}

static void accept_one(struct events *ev)
{
	static const char full[] = "ERR 11 Resource temporarily unavailable\n";
	struct timeval send_timeout = { SEND_TIMEOUT_MS / 1000, 0 };
	struct pollfd stop = { ev->stop_pipe[0], POLLIN, 0 };
	char msg[96];
	struct client *c;
	pthread_t tid;
	uid_t uid = 0;
	int fd, slot, err;

	fd = accept4(ev->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		/*
		 * Out of descriptors or memory: the connection stays queued and
		 * poll() reports it again at once. Back off instead of spinning,
		 * as the control socket does (a stop still wakes us).
		 */
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			poll(&stop, 1, 100);
		return;
	}
	err = count_peer(ev, fd, &uid);
	if (err) {
		snprintf(msg, sizeof(msg), "ERR %d uid %u: %s (the handle budget)\n", -err,
			 (unsigned)uid, strerror(-err));
		refuse(fd, msg);
		return;
	}
	slot = take_slot(ev, fd);
	if (slot < 0) {
		sysctl_budget_put(ev->budget, uid, SYSCTL_HANDLE_CONN, 1);
		refuse(fd, full);
		return;
	}
	/* A client that does not read its replies must not hold a thread either. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
	c = malloc(sizeof(*c));
	if (c)
		*c = (struct client){ ev, slot, uid };
	if (!c || pthread_create(&tid, NULL, serve_client, c) != 0) {
		free(c);
		put_slot(ev, slot);
		sysctl_budget_put(ev->budget, uid, SYSCTL_HANDLE_CONN, 1);
		close(fd);
		return;
	}
	pthread_detach(tid);
}

static void *accept_loop(void *arg)
{
	struct events *ev = arg;

	for (;;) {
		struct pollfd pfd[2] = { { ev->fd, POLLIN, 0 }, { ev->stop_pipe[0], POLLIN, 0 } };

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		if (pfd[0].revents & POLLIN)
			accept_one(ev);
	}
	return NULL;
}

int events_start(const char *path, int core_dirfd, bool allow_poweroff, struct sysctl_budget *budget,
		 struct events **out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	pthread_condattr_t cattr;
	struct events *ev;
	int err;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	strcpy(addr.sun_path, path);
	ev->allow_poweroff = allow_poweroff;
	ev->budget = budget;
	ev->stop_pipe[0] = ev->stop_pipe[1] = -1;
	for (int i = 0; i < EVENTS_MAX_CLIENTS; i++)
		ev->conns[i] = -1;
	ev->path = strdup(path);
	ev->fd = -1;
	ev->core_dir = fcntl(core_dirfd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	pthread_mutex_init(&ev->lock, NULL);
	/* The condition's clock is rcs_now_ms()'s: shutdown waits must not follow date changes. */
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&ev->idle, &cattr);
	pthread_condattr_destroy(&cattr);
	err = -ENOMEM;
	if (!ev->path)
		goto fail;
	err = ev->core_dir < 0 || pipe2(ev->stop_pipe, O_CLOEXEC) ? -errno : 0;
	if (err)
		goto fail;
	/* Events run programs: root only. */
	ev->fd = rcs_unix_listen(&addr, 0600, 16, &ev->dev, &ev->ino);
	if (ev->fd < 0) {
		err = ev->fd;
		goto fail;
	}
	err = -pthread_create(&ev->tid, NULL, accept_loop, ev);
	if (err) {
		rcs_unix_unlink_own(path, ev->dev, ev->ino);
		goto fail;
	}
	*out = ev;
	return 0;
fail:
	if (ev->fd >= 0)
		close(ev->fd);
	if (ev->core_dir >= 0)
		close(ev->core_dir);
	if (ev->stop_pipe[0] >= 0) {
		close(ev->stop_pipe[0]);
		close(ev->stop_pipe[1]);
	}
	pthread_cond_destroy(&ev->idle);
	pthread_mutex_destroy(&ev->lock);
	free(ev->path);
	free(ev);
	return err ? err : -EIO;
}

/* Waits until no request, supervisor or helper is left, or @ms passed. */
static bool wait_idle(struct events *ev, long long ms)
{
	long long deadline = rcs_now_ms() + ms;
	struct timespec ts;
	bool idle;

	pthread_mutex_lock(&ev->lock);
	for (;;) {
		/* Helpers nobody waits for (UMH_NO_WAIT) are counted by the library. */
		idle = ev->busy == 0 && umh_running() == 0;
		if (idle || rcs_now_ms() >= deadline)
			break;
		/* Short slices: umh_running() has nothing to wait on. */
		ts = rcs_deadline_after_ms(50);
		pthread_cond_timedwait(&ev->idle, &ev->lock, &ts);
	}
	pthread_mutex_unlock(&ev->lock);
	return idle;
}

int events_stop(struct events *ev, int grace_s, int *killed)
{
	long long grace_ms = (long long)grace_s * 1000;

	*killed = 0;
	if (!ev)
		return 0;
	if (write(ev->stop_pipe[1], "x", 1) < 0) {
		/* a pipe with room for one byte: cannot fail */
	}
	pthread_join(ev->tid, NULL);
	rcs_unix_unlink_own(ev->path, ev->dev, ev->ino);
	close(ev->fd);
	/* Wake every connection thread, idle or waiting for a slow client. */
	pthread_mutex_lock(&ev->lock);
	ev->stopping = true;
	for (int i = 0; i < EVENTS_MAX_CLIENTS; i++)
		if (ev->conns[i] >= 0)
			shutdown(ev->conns[i], SHUT_RDWR);
	pthread_mutex_unlock(&ev->lock);
	/*
	 * Helpers and supervised programs would keep us here as long as they
	 * like: ask them to stop, then stop them.
	 */
	children_signal(SIGTERM);
	if (!wait_idle(ev, grace_ms)) {
		long long deadline = rcs_now_ms() + (grace_ms > 1000 ? grace_ms : 1000);

		/* Again each slice: a request in flight may have spawned one since. */
		do {
			int n = children_signal(SIGKILL);

			if (n > 0)
				*killed += n;
		} while (!wait_idle(ev, 100) && rcs_now_ms() < deadline);
		if (!wait_idle(ev, 0))
			return -ETIMEDOUT;
	}
	close(ev->stop_pipe[0]);
	close(ev->stop_pipe[1]);
	close(ev->core_dir);
	pthread_cond_destroy(&ev->idle);
	pthread_mutex_destroy(&ev->lock);
	free(ev->path);
	free(ev);
	return 0;
}

int events_send(const char *path, const char *line)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char reply[LINE_MAX_BYTES + 64];
	size_t len = 0;
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return fprintf(stderr, "rcusysd: %s: path too long\n", path), 1;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		int e = errno;

		fprintf(stderr, "rcusysd: cannot connect to %s: %s%s\n", path, strerror(e),
			e == ENOENT || e == ECONNREFUSED ? " (no rcusysd serves this run directory; see -d)" :
			e == EACCES ? " (events are for the daemon's user only: the socket is 0600)" : "");
		return 1;
	}
	/* Even if the daemon hung up at once (too many clients), read what it said. */
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) < 0 || send(fd, "\n", 1, MSG_NOSIGNAL) < 0) {
		/* the reply, if any, is already queued */
	}
	while (len < sizeof(reply) - 1 && (n = read(fd, reply + len, sizeof(reply) - 1 - len)) > 0) {
		len += (size_t)n;
		if (memchr(reply, '\n', len))
			break;
	}
	close(fd);
	reply[len] = '\0';
	fputs(reply, stdout);
	return strncmp(reply, "OK", 2) != 0;
}
