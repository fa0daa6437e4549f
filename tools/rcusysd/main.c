/*
 * rcusysd: the reference daemon. Hosts a sysctl tree with the seed's five
 * subsystems and operator-declared tunables, mounts it with FUSE and serves
 * the control socket under its run directory, takes events (module
 * requests, uevents, power-off, ocfs2, supervised programs) on an events
 * socket, loads sysctl.d-style files at start, and exits cleanly on
 * SIGTERM/SIGINT.
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
#include "subsys.h"
#include "sysctl_conf.h"
#include "tunables.h"

#define DEFAULT_RUN_DIR "/run/rcusysd"
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
		"  -d, --run-dir DIR     run directory (default %s); the tree is mounted at DIR/sys\n"
		"  -t, --tunables FILE   declare tunables (see rcusysd(8)); repeatable\n"
		"  -c, --config FILE     apply sysctl.d-style settings at start; repeatable\n"
		"      --no-fuse         do not mount the tree\n"
		"  -e, --event LINE      send one event to a running rcusysd and print the reply\n"
		"  -h, --help            this help\n",
		DEFAULT_RUN_DIR);
	exit(code);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "run-dir", required_argument, NULL, 'd' }, { "tunables", required_argument, NULL, 't' },
		{ "config", required_argument, NULL, 'c' },  { "no-fuse", no_argument, NULL, 'F' },
		{ "event", required_argument, NULL, 'e' },   { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *run_dir = DEFAULT_RUN_DIR, *tunable_files[MAX_FILES], *config_files[MAX_FILES];
	int ntunables = 0, nconfigs = 0, opt, status = 0, sig;
	struct tunables *declared[MAX_FILES] = { 0 };
	struct sysctl_fuse *fs = NULL;
	struct sysctl_socket *sock = NULL;
	struct events *events = NULL;
	const char *event = NULL;
	char path[4096];
	struct sysctl_tree *tree;
	char mountpoint[4096];
	pthread_t fuse_tid;
	bool use_fuse = true;
	sigset_t stop;

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

	if (mkdir(run_dir, 0755) != 0 && errno != EEXIST) {
		say("cannot create %s: %s", run_dir, strerror(errno));
		status = 1;
		goto out;
	}
	snprintf(mountpoint, sizeof(mountpoint), "%s/sys", run_dir);
	if (use_fuse) {
		int err = mkdir(mountpoint, 0755) != 0 && errno != EEXIST ? -errno : 0;

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
	snprintf(path, sizeof(path), "%s/control.sock", run_dir);
	/* Anyone may connect: each request is checked against the entry's mode. */
	if (sysctl_socket_start(tree, path, 0666, &sock) != 0) {
		say("cannot serve %s", path);
		status = 1;
		goto stop;
	}
	snprintf(path, sizeof(path), "%s/events.sock", run_dir);
	if (events_start(path, run_dir, &events) != 0) {
		say("cannot serve %s", path);
		status = 1;
		goto stop;
	}
	say("ready: control socket %s/control.sock, events %s", run_dir, path);
	if (sigwait(&stop, &sig) == 0)
		say("%s: shutting down", strsignal(sig));
stop:
	events_stop(events);
	if (sock)
		sysctl_socket_stop(sock);
	if (fs) {
		sysctl_fuse_exit(fs);
		pthread_join(fuse_tid, NULL);
		sysctl_fuse_unmount(fs);
	}
out:
	for (int i = 0; i < ntunables; i++)
		tunables_free(declared[i]);
	subsys_unregister_all();
	sysctl_tree_free(tree);
	rcustring_barrier();
	return status;
}
