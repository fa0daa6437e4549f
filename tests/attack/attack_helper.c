/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small tools the attack suite needs and the shell lacks:
 *
 *   hold SOCKET N [BYTES]   open N connections (print "connected K"), send
 *                           BYTES on each if given, keep them until stdin ends
 *   flood SOCKET N LINE     send LINE N times on one connection, one reply
 *                           each ("OK" or "OK n", n > 0, is ok); print
 *                           "ok K of N" and the first bad reply
 *   exec [-i SIG|-b SIG]... -- PROG ARGS
 *                           run PROG with SIG ignored (-i) or blocked (-b)
 *   show OUT                write this process's SigBlk, SigIgn and open
 *                           descriptors above 2 to OUT
 *   stubborn PIDFILE        ignore SIGTERM, write our pid, sleep for ever
 *   opens FILE N            open FILE N times and read one byte from each;
 *                           print "opened K of N" and the first error, then
 *                           keep them open until stdin ends
 *   opendirs DIR N          the same for a directory: open it N times and
 *                           read one batch of names (getdents64) from each
 *   polls FILE N            opens, and poll each file once (a poller)
 *   conns SOCKET N LINE     open N connections, send LINE on each and read
 *                           one reply line; print "served K of N" (replies
 *                           starting "OK") and the first other reply, then
 *                           keep them until stdin ends
 *   pollwait FILE SECONDS   read FILE, then poll it for a change; print
 *                           "woke" or "timeout"
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -1;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int hold(const char *path, int n, const char *bytes)
{
	int connected = 0;
	char c;

	for (int i = 0; i < n; i++) {
		int fd = connect_to(path);

		if (fd < 0)
			continue;
		connected++;
		if (bytes && send(fd, bytes, strlen(bytes), MSG_NOSIGNAL) < 0)
			perror("send");
	}
	printf("connected %d\n", connected);
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	return 0;
}

static int flood(const char *path, int n, const char *line)
{
	char reply[256], bad[256] = "";
	int fd = connect_to(path), ok = 0;
	FILE *in;

	if (fd < 0) {
		perror(path);
		return 1;
	}
	in = fdopen(dup(fd), "r");
	for (int i = 0; i < n && in; i++) {
		if (dprintf(fd, "%s\n", line) < 0 || !fgets(reply, sizeof(reply), in))
			break;
		if (!strcmp(reply, "OK\n") || (!strncmp(reply, "OK ", 3) && atoi(reply + 3) > 0))
			ok++;
		else if (!*bad)
			snprintf(bad, sizeof(bad), "%s", reply);
	}
	printf("ok %d of %d%s%s", ok, n, *bad ? "; first bad reply: " : "\n", bad);
	return ok == n ? 0 : 1;
}

static int exec_with(int argc, char **argv)
{
	sigset_t block;
	int i;

	sigemptyset(&block);
	for (i = 0; i + 1 < argc && strcmp(argv[i], "--"); i += 2) {
		int sig = atoi(argv[i + 1]);

		if (!strcmp(argv[i], "-i"))
			signal(sig, SIG_IGN);
		else
			sigaddset(&block, sig);
	}
	if (i >= argc || strcmp(argv[i], "--") || i + 1 >= argc)
		return 2;
	sigprocmask(SIG_BLOCK, &block, NULL);
	execv(argv[i + 1], argv + i + 1);
	perror(argv[i + 1]);
	return 127;
}

static int show(const char *out)
{
	FILE *f = fopen(out, "w"), *st = fopen("/proc/self/status", "r");
	char line[256];
	DIR *d;
	struct dirent *de;

	if (!f || !st)
		return 1;
	while (fgets(line, sizeof(line), st))
		if (!strncmp(line, "SigBlk:", 7) || !strncmp(line, "SigIgn:", 7))
			fputs(line, f);
	fclose(st);
	fputs("fds:", f);
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d)) != NULL) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] != '.' && fd > 2 && fd != dirfd(d) && fd != fileno(f))
			fprintf(f, " %d", fd);
	}
	if (d)
		closedir(d);
	fputc('\n', f);
	return fclose(f) != 0;
}

static int stubborn(const char *pidfile)
{
	FILE *f;

	signal(SIGTERM, SIG_IGN);
	f = fopen(pidfile, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		pause();
}

/* One open of @file, and one read: a byte of a file, a batch of names of a directory. */
static int open_one(const char *file, int dir, int polled)
{
	char buf[4096];
	int fd = open(file, O_RDONLY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
	long n;

	if (fd < 0)
		return -1;
	n = dir ? syscall(SYS_getdents64, fd, buf, sizeof(buf)) : read(fd, buf, 1);
	if (n > 0 && polled) {
		struct pollfd p = { .fd = fd, .events = POLLPRI };

		poll(&p, 1, 0);
	}
	if (n <= 0) {
		int e = n == 0 ? EIO : errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int opens(const char *file, int n, int dir, int polled)
{
	int opened = 0, first = 0;
	char c, *why = "";

	for (int i = 0; i < n; i++) {
		if (open_one(file, dir, polled) < 0) {
			if (!first) {
				first = errno;
				why = strerror(errno);
			}
			continue;
		}
		opened++;
	}
	printf("opened %d of %d%s%s\n", opened, n, first ? "; first error: " : "", why);
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	return 0;
}

/* One reply line of @fd into @line (size @size); 0, or -1 at EOF or error. */
static int reply_line(int fd, char *line, size_t size)
{
	size_t len = 0;

	while (len + 1 < size) {
		ssize_t n = read(fd, line + len, 1);

		if (n <= 0)
			return -1;
		if (line[len] == '\n')
			break;
		len++;
	}
	line[len] = '\0';
	return 0;
}

static int conns(const char *path, int n, const char *line)
{
	char reply[256], other[256] = "", c;
	int served = 0;

	/* A refused client is closed at once: its send may fail, its reply still waits. */
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < n; i++) {
		int fd = connect_to(path);

		if (fd >= 0 && dprintf(fd, "%s\n", line) < 0) {
			/* read what the server said before it closed */
		}
		if (fd < 0 || reply_line(fd, reply, sizeof(reply))) {
			if (!*other)
				snprintf(other, sizeof(other), "closed: %s", strerror(errno));
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (!strncmp(reply, "OK", 2)) {
			served++;
			continue; /* kept open */
		}
		if (!*other)
			snprintf(other, sizeof(other), "%s", reply);
		close(fd);
	}
	printf("served %d of %d%s%s\n", served, n, *other ? "; first refusal: " : "", other);
	fflush(stdout);
	while (read(STDIN_FILENO, &c, 1) > 0)
		;
	return 0;
}

static int pollwait(const char *file, int seconds)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct pollfd p = { .fd = fd, .events = POLLPRI | POLLERR };
	char buf[256];
	int n;

	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0) {
		perror(file);
		return 1;
	}
	printf("polling\n");
	fflush(stdout);
	n = poll(&p, 1, seconds * 1000);
	printf("%s\n", n > 0 ? "woke" : n == 0 ? "timeout" : strerror(errno));
	return n > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "opens"))
		return opens(argv[2], atoi(argv[3]), 0, 0);
	if (argc == 4 && !strcmp(argv[1], "opendirs"))
		return opens(argv[2], atoi(argv[3]), 1, 0);
	if (argc == 4 && !strcmp(argv[1], "polls"))
		return opens(argv[2], atoi(argv[3]), 0, 1);
	if (argc == 5 && !strcmp(argv[1], "conns"))
		return conns(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 4 && !strcmp(argv[1], "pollwait"))
		return pollwait(argv[2], atoi(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "hold"))
		return hold(argv[2], atoi(argv[3]), argc > 4 ? argv[4] : NULL);
	if (argc == 5 && !strcmp(argv[1], "flood"))
		return flood(argv[2], atoi(argv[3]), argv[4]);
	if (argc >= 4 && !strcmp(argv[1], "exec"))
		return exec_with(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "show"))
		return show(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "stubborn"))
		return stubborn(argv[2]);
	fprintf(stderr, "usage: see the top of attack_helper.c\n");
	return 2;
}
