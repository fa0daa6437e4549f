/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "children.h"

/*
 * The parent pid in /proc/PID/stat, or -1 (gone, unreadable, or a zombie:
 * dead already, only waiting for its waiter thread to reap it).
 */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *close_paren;
	ssize_t n;
	int fd, ppid;
	char state;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* comm may hold spaces and parentheses: the fields resume after the last ')'. */
	close_paren = strrchr(buf, ')');
	if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2 || state == 'Z')
		return -1;
	return (pid_t)ppid;
}

static int signal_child(pid_t self, pid_t pid, int sig)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int ret = 0;

	if (pidfd < 0) {
		if (errno != ENOSYS)
			return 0;
		/*
		 * No pidfds (kernels before 5.3): an unreaped child keeps its
		 * pid, so the only window is our own waiter reaping it now.
		 */
		return parent_of(pid) == self && kill(pid, sig) == 0;
	}
	/* The pidfd pins whatever holds the pid now: check that it is ours. */
	if (parent_of(pid) == self && syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0)
		ret = 1;
	close(pidfd);
	return ret;
}

int children_signal(int sig)
{
	pid_t self = getpid();
	struct dirent *de;
	int count = 0;
	DIR *proc = opendir("/proc");

	if (!proc)
		return -errno;
	while ((de = readdir(proc)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		if (parent_of((pid_t)pid) == self)
			count += signal_child(self, (pid_t)pid, sig);
	}
	closedir(proc);
	return count;
}
