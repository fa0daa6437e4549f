/*
 * rcusysd: the reference daemon. Hosts a sysctl tree with the seed's five
 * subsystems and operator-declared tunables, mounts it with FUSE and serves
 * the control socket under its run directory, takes events (module
 * requests, uevents, power-off, ocfs2, supervised programs) on an events
 * socket, loads sysctl.d-style files at start, and exits cleanly on
 * SIGTERM/SIGINT/SIGHUP within a bound. It refuses a run directory anyone
 * else could change (rundir.c).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rcustring/sysctl_fuse.h>
#include <rcustring/sysctl_socket.h>
#include <rcustring/umh.h>

#include "events.h"
#include "rundir.h"
#include "subsys.h"
#include "sysctl_conf.h"
#include "tunables.h"

#define DEFAULT_RUN_DIR "/run/rcusysd"
#define DEFAULT_STOP_GRACE 5
#define MAX_FILES 32

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rcusysd: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)size + 1)) != NULL) {
		*len = fread(buf, 1, (size_t)size, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

struct conf_ctx {
	struct sysctl_tree *tree;
	const char *file;
	int failures;
};

static int apply_setting(const struct sysctl_conf_item *it, void *arg)
{
	struct conf_ctx *c = arg;
	int err;

	if (it->glob) {
		say("%s:%u: globs are not supported at start-up, ignoring %s", c->file, it->line, it->key);
		return 0;
	}
	err = sysctl_set(c->tree, it->key, it->value, strlen(it->value), NULL);
	if (err && !it->ignore_failure) {
		say("%s:%u: setting %s: %s", c->file, it->line, it->key, strerror(-err));
		c->failures++;
	}
	return 0;
}

static void conf_error(unsigned line, const char *message, void *arg)
{
	struct conf_ctx *c = arg;

	say("%s:%u: %s", c->file, line, message);
	c->failures++;
}

/* sysctl.d-style settings applied through the tree at start. */
static int load_settings(struct sysctl_tree *tree, const char *path)
{
	struct conf_ctx c = { tree, path, 0 };
	size_t len;
	char *text = read_file(path, &len);

	if (!text) {
		say("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	sysctl_conf_parse(text, len, apply_setting, conf_error, &c);
	free(text);
	return c.failures ? -1 : 0;
}

static void *fuse_thread(void *arg)
{
	int err = sysctl_fuse_loop(arg);

	if (err)
		say("FUSE loop ended: %s", strerror(-err));
	return NULL;
}

/* Every helper call goes to the log. */
static void log_helper(void *arg, const char *path, char *const argv[], int result)
{
	char line[1024];
	size_t len = 0;

	(void)arg;
	for (int i = 0; argv && argv[i] && len < sizeof(line) - 1; i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", i ? " " : "", argv[i]);
	line[len < sizeof(line) ? len : sizeof(line) - 1] = '\0';
	say("helper %s [%s] -> %d", path, line, result);
}

static void usage(FILE *out, int code)
{
	fprintf(out,
		"Usage: rcusysd [options]\n"
		"Serve a sysctl tree of RCU-protected tunables.\n\n"
		"  -d, --run-dir DIR     run directory (default %s), ours and writable by nobody\n"
		"                        else (see rcusysd(8)); the tree is mounted at DIR/sys\n"
		"  -t, --tunables FILE   declare tunables (see rcusysd(8)); repeatable\n"
		"  -c, --config FILE     apply sysctl.d-style settings at start; repeatable\n"
		"      --no-fuse         do not mount the tree\n"
		"      --stop-grace SECS at shutdown, helpers and supervised programs get SIGTERM,\n"
		"                        then SIGKILL after SECS seconds (default %d)\n"
		"  -e, --event LINE      send one event to a running rcusysd and print the reply\n"
		"  -h, --help            this help\n",
		DEFAULT_RUN_DIR, DEFAULT_STOP_GRACE);
	exit(code);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "run-dir", required_argument, NULL, 'd' }, { "tunables", required_argument, NULL, 't' },
		{ "config", required_argument, NULL, 'c' },  { "no-fuse", no_argument, NULL, 'F' },
		{ "event", required_argument, NULL, 'e' },   { "help", no_argument, NULL, 'h' },
		{ "stop-grace", required_argument, NULL, 'G' }, { NULL, 0, NULL, 0 },
	};
	const char *run_dir = DEFAULT_RUN_DIR, *tunable_files[MAX_FILES], *config_files[MAX_FILES];
	int ntunables = 0, nconfigs = 0, opt, status = 0, sig, grace = DEFAULT_STOP_GRACE, killed, dirfd = -1;
	struct tunables *declared[MAX_FILES] = { 0 };
	struct sysctl_fuse *fs = NULL;
	struct sysctl_socket *sock = NULL;
	struct events *events = NULL;
	const char *event = NULL;
	char path[4096], canon[2048], why[512], *end;
	struct sysctl_tree *tree;
	char mountpoint[4096];
	pthread_t fuse_tid;
	bool use_fuse = true;
	mode_t old_umask;
	sigset_t stop;
	int err;

	while ((opt = getopt_long(argc, argv, "d:t:c:e:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'e': event = optarg; break;
		case 'd': run_dir = optarg; break;
		case 't':
			if (ntunables == MAX_FILES)
				usage(stderr, 2);
			tunable_files[ntunables++] = optarg;
			break;
		case 'c':
			if (nconfigs == MAX_FILES)
				usage(stderr, 2);
			config_files[nconfigs++] = optarg;
			break;
		case 'F': use_fuse = false; break;
		case 'G':
			errno = 0;
			grace = (int)strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || grace < 0 || grace > 3600)
				usage(stderr, 2);
			break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc)
		usage(stderr, 2);
	if (event) {
		snprintf(path, sizeof(path), "%s/events.sock", run_dir);
		return events_send(path, event);
	}

	/*
	 * What the parent left us must not decide how we behave: a closed
	 * stderr pipe must not kill us with SIGPIPE (every write reports EPIPE
	 * instead), and an ignored SIGCHLD would make the kernel reap our
	 * helpers before waitpid() can tell how they ended.
	 */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);

	/* Every thread inherits this mask; the main thread takes the signals. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);

	tree = sysctl_tree_new();
	if (!tree) {
		say("out of memory");
		return 1;
	}
	umh_set_log(log_helper, NULL);
	if (subsys_register_all(tree) != 0) {
		say("cannot register the subsystems");
		status = 1;
		goto out;
	}
	for (int i = 0; i < ntunables; i++) {
		char err[256] = "";
		size_t len;
		char *text = read_file(tunable_files[i], &len);
		int ret = text ? tunables_load(tree, text, len, &declared[i], err, sizeof(err)) : -errno;

		free(text);
		if (ret) {
			say("%s:%s", tunable_files[i], *err ? err : strerror(-ret));
			status = 1;
			goto out;
		}
	}
	for (int i = 0; i < nconfigs; i++)
		if (load_settings(tree, config_files[i]))
			status = 1; /* reported; keep serving what did apply */

	dirfd = rundir_open(run_dir, canon, sizeof(canon), why, sizeof(why));
	if (dirfd < 0) {
		bool unsafe = dirfd == -EPERM || dirfd == -ELOOP || dirfd == -ENOTDIR || dirfd == -EAGAIN;

		say("%s run directory %s: %s", unsafe ? "unsafe" : "cannot use", run_dir, why);
		status = 1;
		goto out;
	}
	run_dir = canon;
	snprintf(mountpoint, sizeof(mountpoint), "%s/sys", run_dir);
	if (use_fuse) {
		err = rundir_subdir(dirfd, "sys", why, sizeof(why));

		if (err == -ELOOP || err == -ENOTDIR || err == -EPERM) {
			/* Mounting there would cover whatever it points at. */
			say("unsafe mount point %s: %s", mountpoint, why);
			status = 1;
			goto out;
		}
		if (!err)
			err = sysctl_fuse_mount(tree, mountpoint, &fs);
		if (!err && pthread_create(&fuse_tid, NULL, fuse_thread, fs) != 0)
			err = -EAGAIN;
		if (err) {
			say("FUSE unavailable (%s): the tree is not mounted", strerror(-err));
			if (fs)
				sysctl_fuse_unmount(fs);
			fs = NULL;
		} else {
			say("tree mounted at %s", mountpoint);
		}
	}
	/*
	 * Each socket gets its mode from the umask as bind() creates it, so no
	 * path-based chmod has to be trusted (the checked run directory keeps
	 * the control socket's own chmod from being redirected). No helper runs
	 * yet, so the umask is ours to change.
	 */
	old_umask = umask(0111);
	snprintf(path, sizeof(path), "%s/control.sock", run_dir);
	/* Anyone may connect: each request is checked against the entry's mode. */
	err = sysctl_socket_start(tree, path, 0666, &sock);
	if (err) {
		say("cannot serve %s: %s", path, strerror(-err));
		umask(old_umask);
		status = 1;
		goto stop;
	}
	/* Events run programs: root only. */
	umask(0177);
	snprintf(path, sizeof(path), "%s/events.sock", run_dir);
	err = events_start(path, dirfd, &events);
	umask(old_umask);
	if (err) {
		say("cannot serve %s: %s", path, strerror(-err));
		status = 1;
		goto stop;
	}
	say("ready: control socket %s/control.sock, events %s", run_dir, path);
	if (sigwait(&stop, &sig) == 0)
		say("%s: shutting down", strsignal(sig));
stop:
	/* Bounded: helpers get SIGTERM, then SIGKILL after the grace period. */
	if (events_stop(events, grace, &killed) != 0) {
		say("requests still running %d s after SIGKILL: exiting without cleanup", grace > 1 ? grace : 1);
		fflush(stderr);
		_exit(1);
	}
	if (killed)
		say("%d helper(s) outlived the %d s grace period: killed", killed, grace);
	if (sock)
		sysctl_socket_stop(sock);
	if (fs) {
		sysctl_fuse_exit(fs);
		pthread_join(fuse_tid, NULL);
		sysctl_fuse_unmount(fs);
	}
out:
	if (dirfd >= 0)
		close(dirfd);
	for (int i = 0; i < ntunables; i++)
		tunables_free(declared[i]);
	subsys_unregister_all();
	sysctl_tree_free(tree);
	rcustring_barrier();
	return status;
}
