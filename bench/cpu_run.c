/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcustring-cpu-run: run a command with its output thrown away and print
 * "<wall ns> <its CPU ns> <server CPU ns>": the command's user + system
 * time (wait4), and the CPU time another process (-p PID, a server
 * answering the command: FUSE or the control socket) spent meanwhile, all
 * threads together (clock_getcpuclockid). On a shared machine CPU time
 * holds still where wall time does not: it leaves out the time spent
 * waiting for a core.
 *   rcustring-cpu-run [-p PID] [--] COMMAND [ARG...]
 * Exit status: the command's (1 when it could not be run or was killed).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static long long tv_ns(const struct timeval *t)
{
	return (long long)t->tv_sec * 1000000000LL + (long long)t->tv_usec * 1000LL;
}

int main(int argc, char **argv)
{
	struct timespec w0, w1, s0 = { 0, 0 }, s1 = { 0, 0 };
	struct rusage ru;
	clockid_t server_clock = 0;
	pid_t server = 0, child;
	int i = 1, status, err;

	if (argc > 2 && strcmp(argv[1], "-p") == 0) {
		server = (pid_t)atoi(argv[2]);
		i = 3;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-p PID] [--] COMMAND [ARG...]\n", argv[0]);
		return 1;
	}
	if (server) {
		err = clock_getcpuclockid(server, &server_clock);
		if (err) {
			fprintf(stderr, "rcustring-cpu-run: process %d: %s\n", (int)server, strerror(err));
			return 1;
		}
		clock_gettime(server_clock, &s0);
	}
	clock_gettime(CLOCK_MONOTONIC, &w0);
	child = fork();
	if (child < 0) {
		perror("rcustring-cpu-run: fork");
		return 1;
	}
	if (child == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp(argv[i], argv + i);
		_exit(127);
	}
	while (wait4(child, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("rcustring-cpu-run: wait4");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &w1);
	if (server)
		clock_gettime(server_clock, &s1);
	printf("%lld %lld %lld\n", ns(&w1) - ns(&w0), tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime),
	       ns(&s1) - ns(&s0));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
