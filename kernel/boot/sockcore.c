// SPDX-License-Identifier: GPL-2.0
/*
 * The socket form of core_pattern (Linux 7.x): with "@/path" the kernel
 * connects the crashing task to the AF_UNIX socket listening at /path and
 * sends the core there. Two lines of racetest:
 *
 *   core_pattern socket   a writer flips core_pattern between "@/run/aaa…"
 *                         and "@/run/bbb…" while children crash; a
 *                         listener on each path accepts. A crash is whole
 *                         when exactly one listener took a connection whose
 *                         peer (SO_PEERCRED) is that child.
 *   core_pattern refused  a writer in a mount namespace of its own
 *                         alternates the file pattern "/c/vvv….%p" with
 *                         "@/run/rrr…", which the kernel refuses from there
 *                         (check_coredump_socket: the socket must be in the
 *                         initial mount namespace; every refused write must
 *                         fail with EINVAL). A crash is whole when its core
 *                         went to /c/vvv….PID. A listener on /run/rrr…
 *                         counts the crashes that used the refused pattern
 *                         (note … used_refused=N): stock 7.2 writes the
 *                         candidate in place, checks it, and copies the old
 *                         value back, so it is live in between.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "racetest.h"

#define CORE_PATTERN "/proc/sys/kernel/core_pattern"
#define NLISTEN 2
/* No connection for this long after the last crash: the listeners are done. */
#define LISTEN_IDLE_S 3.0

struct conn {
	pid_t pid;
	int which;	/* index of the listening socket */
};

struct listener {
	int fd[NLISTEN];	/* -1 where unused */
	atomic_bool stop;
	atomic_long n;		/* connections recorded in conn[] */
	long cap;
	struct conn *conn;
	pthread_t thread;
};

/* Listen on /run/NAME (path is "/run/NAME"); the socket file is made anew. */
static int listen_at(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket");
	unlink(path);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 512))
		die(path);
	return fd;
}

/* Take one connection: its peer's pid, then the core to its end. */
static void take(struct listener *l, int which)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timeval tv = { .tv_sec = 10 };
	char buf[8192];
	int c = accept4(l->fd[which], NULL, NULL, SOCK_CLOEXEC);
	long n;

	if (c < 0)
		return;
	/* A stuck sender slows the line, never hangs it. */
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		cred.pid = -1;
	n = atomic_load(&l->n);
	if (n < l->cap) {
		l->conn[n].pid = cred.pid;
		l->conn[n].which = which;
		atomic_store(&l->n, n + 1);
	}
	while (read(c, buf, sizeof(buf)) > 0)
		;
	close(c);
}

static void *listener_main(void *arg)
{
	struct listener *l = arg;
	struct pollfd p[NLISTEN];
	int i, ready;

	for (;;) {
		for (i = 0; i < NLISTEN; i++) {
			p[i].fd = l->fd[i];
			p[i].events = POLLIN;
		}
		ready = poll(p, NLISTEN, 100);
		if (ready <= 0) {
			if (atomic_load(&l->stop))
				return NULL;
			continue;
		}
		for (i = 0; i < NLISTEN; i++)
			if (p[i].revents & POLLIN)
				take(l, i);
	}
}

static void listener_start(struct listener *l, const char *path0,
			   const char *path1)
{
	memset(l, 0, sizeof(*l));
	l->cap = 2 * want_calls + 16;
	l->conn = calloc(l->cap, sizeof(*l->conn));
	if (!l->conn)
		die("calloc");
	l->fd[0] = listen_at(path0);
	l->fd[1] = path1 ? listen_at(path1) : -1;
	atomic_init(&l->stop, false);
	atomic_init(&l->n, 0);
	errno = pthread_create(&l->thread, NULL, listener_main, l);
	if (errno)
		die("pthread_create");
}

/* Wait until @want connections arrived or none did for LISTEN_IDLE_S,
 * then stop the listener. */
static void listener_stop(struct listener *l, long want)
{
	long last = -1, n;
	double idle_since = now();

	while ((n = atomic_load(&l->n)) < want) {
		if (n != last) {
			last = n;
			idle_since = now();
		} else if (now() - idle_since > LISTEN_IDLE_S) {
			break;
		}
		usleep(10000);
	}
	atomic_store(&l->stop, true);
	pthread_join(l->thread, NULL);
	close(l->fd[0]);
	if (l->fd[1] >= 0)
		close(l->fd[1]);
}

/* Connections from @pid on listening socket @which (-1: any). */
static long conns_of(const struct listener *l, pid_t pid, int which)
{
	long i, n = atomic_load(&l->n), k = 0;

	for (i = 0; i < n; i++)
		if (l->conn[i].pid == pid && (which < 0 || l->conn[i].which == which))
			k++;
	return k;
}

static pid_t *crash_all(long *dumped)
{
	pid_t *pids = calloc(want_calls, sizeof(*pids));
	long i;

	if (!pids)
		die("calloc");
	*dumped = 0;
	pin(1);
	for (i = 0; i < want_calls; i++) {
		bool d;

		pids[i] = crash_one(&d);
		*dumped += d;
		phase_progress(i + 1);
	}
	return pids;
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
}

/* Two socket names that differ in every byte after "/run/". */
static void socket_names(char *a, char *b, size_t size)
{
	char na[21], nb[61];

	memset(na, 'a', sizeof(na) - 1);
	na[sizeof(na) - 1] = '\0';
	memset(nb, 'b', sizeof(nb) - 1);
	nb[sizeof(nb) - 1] = '\0';
	snprintf(a, size, "/run/%s", na);
	snprintf(b, size, "/run/%s", nb);
}

void consume_core_socket(void)
{
	char sa[80], sb[80], pa[82], pb[82];
	struct listener l;
	struct writer w;
	long i, whole = 0, dumped, n;
	pid_t *pids;

	phase_begin("core_pattern-socket", want_calls, "crashes", "two listeners");
	make_dir("/run");
	socket_names(sa, sb, sizeof(sa));
	snprintf(pa, sizeof(pa), "@%s", sa);
	snprintf(pb, sizeof(pb), "@%s", sb);
	listener_start(&l, sa, sb);
	writer_start(&w, CORE_PATTERN, pa, pb);
	pids = crash_all(&dumped);
	writer_stop(&w, "core_pattern");
	listener_stop(&l, want_calls);
	for (i = 0; i < want_calls; i++)
		whole += conns_of(&l, pids[i], -1) == 1;
	n = atomic_load(&l.n);
	printf("race %s core_pattern socket reads=%ld torn=%ld\n", kname,
	       want_calls, want_calls - whole);
	printf("note %s core_pattern socket calls=%ld connections=%ld whole=%ld dumped=%ld writes=%ld\n",
	       kname, want_calls, n, whole, dumped, w.writes);
	phase_end(want_calls);
	free(pids);
	free(l.conn);
	unlink(sa);
	unlink(sb);
}

/* Remove every file in /c. */
static void clear_cores(void)
{
	DIR *d = opendir("/c");
	struct dirent *e;
	char path[300];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/c/%s", e->d_name);
		unlink(path);
	}
	closedir(d);
}

void consume_core_refused(void)
{
	char vname[41], valid[64], refused[84], rpath[80], core[96];
	struct listener l;
	struct writer w;
	long i, whole = 0, used = 0, dumped;
	pid_t *pids;
	struct stat st;

	phase_begin("core_pattern-refused", want_calls, "crashes",
		    "writer in its own mount namespace");
	make_dir("/run");
	make_dir("/c");
	clear_cores();
	memset(vname, 'v', sizeof(vname) - 1);
	vname[sizeof(vname) - 1] = '\0';
	snprintf(valid, sizeof(valid), "/c/%s.%%p", vname);
	memset(rpath, 0, sizeof(rpath));
	strcpy(rpath, "/run/");
	memset(rpath + 5, 'r', 30);
	snprintf(refused, sizeof(refused), "@%s", rpath);
	listener_start(&l, rpath, NULL);
	writer_start_opts(&w, CORE_PATTERN, valid, refused, true, true);
	pids = crash_all(&dumped);
	writer_stop(&w, "core_pattern");
	/* Only crashes that used the refused pattern connect: few or none. */
	listener_stop(&l, 0);
	for (i = 0; i < want_calls; i++) {
		snprintf(core, sizeof(core), "/c/%s.%d", vname, (int)pids[i]);
		whole += !stat(core, &st);
		used += conns_of(&l, pids[i], 0) > 0;
	}
	printf("race %s core_pattern refused reads=%ld torn=%ld\n", kname,
	       want_calls, want_calls - whole);
	printf("note %s core_pattern refused calls=%ld whole=%ld used_refused=%ld dumped=%ld writes=%ld refused=%ld accepted=%ld\n",
	       kname, want_calls, whole, used, dumped, w.writes, w.refused, w.accepted);
	phase_end(want_calls);
	clear_cores();
	free(pids);
	free(l.conn);
	unlink(rpath);
}
