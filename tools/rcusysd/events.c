#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
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

#include "events.h"
#include "subsys.h"

#define LINE_MAX_BYTES 1024
#define MAX_ARGS 32

extern char **environ;

struct events {
	int fd, core_dir;
	char *path;
	pthread_t tid;
	int stop_pipe[2];
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int busy; /* connection and supervisor threads still running */
};

struct supervised {
	struct events *ev;
	pid_t pid;
	char *path;
};

static void busy_add(struct events *ev, int n)
{
	pthread_mutex_lock(&ev->lock);
	ev->busy += n;
	if (ev->busy == 0)
		pthread_cond_broadcast(&ev->idle);
	pthread_mutex_unlock(&ev->lock);
}

/* Waits for a supervised program; a death by signal becomes a crash record. */
static void *supervise(void *arg)
{
	struct supervised *s = arg;
	char host[256] = "", record[512];
	int status, len, err;

	while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
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
		err = coredump_record(&ci, s->ev->core_dir, record, (size_t)len);
		fprintf(stderr, "rcusysd: %s (pid %d) killed by signal %d: crash record %s%s\n", s->path,
			s->pid, ci.signal, err < 0 ? "failed: " : "written",
			err < 0 ? strerror(-err) : "");
	}
	free(s->path);
	busy_add(s->ev, -1);
	free(s);
	return NULL;
}

static int run_supervised(struct events *ev, char **argv, char *reply, size_t size)
{
	struct supervised *s = calloc(1, sizeof(*s));
	pthread_t tid;
	int err;

	if (!s || !(s->path = strdup(argv[0]))) {
		free(s);
		return -ENOMEM;
	}
	s->ev = ev;
	err = posix_spawn(&s->pid, argv[0], NULL, NULL, argv, environ);
	if (err) {
		free(s->path);
		free(s);
		return -err;
	}
	busy_add(ev, 1);
	if (pthread_create(&tid, NULL, supervise, s) != 0) {
		busy_add(ev, -1);
		waitpid(s->pid, NULL, 0);
		free(s->path);
		free(s);
		return -EAGAIN;
	}
	pthread_detach(tid);
	snprintf(reply, size, "%d", s->pid);
	return 0;
}

/* Runs one request line; fills @reply with the result on success. */
static int handle(struct events *ev, char *line, char *reply, size_t size)
{
	char *argv[MAX_ARGS + 1], *save = NULL;
	int argc = 0, ret;

	for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (argc == MAX_ARGS)
			return -E2BIG;
		argv[argc++] = tok;
	}
	argv[argc] = NULL;
	if (argc == 0)
		return -EINVAL;
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
	else
		return -EINVAL;
	if (ret >= 0)
		snprintf(reply, size, "%d", ret);
	return ret < 0 ? ret : 0;
}

static void *serve_client(void *arg)
{
	struct events *ev = ((void **)arg)[0];
	int fd = (int)(long)((void **)arg)[1];
	char line[LINE_MAX_BYTES], reply[LINE_MAX_BYTES + 64], result[64] = "";
	size_t len = 0;
	ssize_t n;

	free(arg);
	for (;;) {
		char *nl = memchr(line, '\n', len);

		if (!nl) {
			if (len == sizeof(line))
				break; /* over-long request: drop the client */
			n = read(fd, line + len, sizeof(line) - len);
			if (n <= 0)
				break;
			len += (size_t)n;
			continue;
		}
		*nl = '\0';
		if (nl > line && nl[-1] == '\r')
			nl[-1] = '\0';
		int err = handle(ev, line, result, sizeof(result));

		if (err)
			snprintf(reply, sizeof(reply), "ERR %d %s\n", -err, strerror(-err));
		else
			snprintf(reply, sizeof(reply), "OK %s\n", result);
		if (send(fd, reply, strlen(reply), MSG_NOSIGNAL) < 0)
			break;
		len -= (size_t)(nl + 1 - line);
		memmove(line, nl + 1, len);
	}
	close(fd);
	busy_add(ev, -1);
	return NULL;
}

static void *accept_loop(void *arg)
{
	struct events *ev = arg;
	struct pollfd pfd[2] = { { ev->fd, POLLIN, 0 }, { ev->stop_pipe[0], POLLIN, 0 } };

	while (poll(pfd, 2, -1) >= 0 || errno == EINTR) {
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		int fd = accept4(ev->fd, NULL, NULL, SOCK_CLOEXEC);
		void **args = fd >= 0 ? malloc(2 * sizeof(void *)) : NULL;
		pthread_t tid;

		if (!args) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		args[0] = ev;
		args[1] = (void *)(long)fd;
		busy_add(ev, 1);
		if (pthread_create(&tid, NULL, serve_client, args) != 0) {
			busy_add(ev, -1);
			close(fd);
			free(args);
			continue;
		}
		pthread_detach(tid);
	}
	return NULL;
}

int events_start(const char *path, const char *core_dir, struct events **out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct events *ev;
	int err;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	strcpy(addr.sun_path, path);
	ev->path = strdup(path);
	ev->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ev->core_dir = open(core_dir, O_DIRECTORY | O_CLOEXEC);
	pthread_mutex_init(&ev->lock, NULL);
	pthread_cond_init(&ev->idle, NULL);
	unlink(path);
	if (!ev->path || ev->fd < 0 || ev->core_dir < 0 || pipe2(ev->stop_pipe, O_CLOEXEC) ||
	    bind(ev->fd, (struct sockaddr *)&addr, sizeof(addr)) || chmod(path, 0600) ||
	    listen(ev->fd, 16)) {
		err = -errno;
		goto fail;
	}
	err = -pthread_create(&ev->tid, NULL, accept_loop, ev);
	if (err)
		goto fail;
	*out = ev;
	return 0;
fail:
	if (ev->fd >= 0)
		close(ev->fd);
	if (ev->core_dir >= 0)
		close(ev->core_dir);
	free(ev->path);
	free(ev);
	return err ? err : -EIO;
}

void events_stop(struct events *ev)
{
	if (!ev)
		return;
	write(ev->stop_pipe[1], "x", 1);
	pthread_join(ev->tid, NULL);
	close(ev->fd);
	unlink(ev->path);
	/* Connections end when their clients close; supervised programs when they exit. */
	pthread_mutex_lock(&ev->lock);
	while (ev->busy)
		pthread_cond_wait(&ev->idle, &ev->lock);
	pthread_mutex_unlock(&ev->lock);
	close(ev->stop_pipe[0]);
	close(ev->stop_pipe[1]);
	close(ev->core_dir);
	free(ev->path);
	free(ev);
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
		fprintf(stderr, "rcusysd: cannot connect to %s: %s\n", path, strerror(errno));
		return 1;
	}
	dprintf(fd, "%s\n", line);
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
