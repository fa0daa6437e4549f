/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd: the reference daemon. Hosts a sysctl tree with the seed's five
 * subsystems and operator-declared tunables, mounts it with FUSE and serves
 * the control socket under its run directory, takes events (module
 * requests, uevents, power-off, ocfs2, supervised programs) on an events
 * socket, loads sysctl.d-style files and its state file at start, persists
 * every write (persist.c), reloads its files on SIGHUP, and exits cleanly on
 * SIGTERM/SIGINT within a bound. It refuses a run directory anyone else
 * could change (rundir.c). Built with the etcd module, it can mirror an
 * etcd prefix into the tree (--etcd, rcustring-etcd(7)). The command line
 * is options.c's; this file starts the pieces in order and stops them.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rcustring/sysctl_fuse.h>
#include <rcustring/sysctl_socket.h>
#include <rcustring/umh.h>

#include "config.h"
#include "events.h"
#include "log.h"
#include "notify.h"
#include "options.h"
#include "persist.h"
#include "policy.h"
#include "report.h"
#include "rundir.h"
#include "subsys.h"
#ifdef HAVE_ETCD
#include "etcd_sync.h"
#endif

static void *fuse_thread(void *arg)
{
	int err = sysctl_fuse_loop(arg);

	if (err)
		rlog(LOG_ERR, "FUSE loop ended: %s", strerror(-err));
	return NULL;
}

/* Every helper call goes to the log, at debug level: a busy system makes many. */
static void log_helper(void *arg, const char *path, char *const argv[], int result)
{
	char line[1024];
	size_t len = 0;

	(void)arg;
	for (int i = 0; argv && argv[i] && len < sizeof(line) - 1; i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", i ? " " : "", argv[i]);
	line[len < sizeof(line) ? len : sizeof(line) - 1] = '\0';
	rlog(result < 0 ? LOG_WARNING : LOG_DEBUG, "helper %s [%s] -> %d", path, line, result);
}

/*
 * A FUSE mount left by a daemon killed with SIGKILL answers every stat
 * with ENOTCONN. Ours is recognised in mountinfo by its file system
 * ("fuse.sysctl", source "rcustring") at exactly @mountpoint; anything
 * else is left alone.
 */
static bool stale_mount_is_ours(const char *mountpoint)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], point[4096], fstype[256], source[256];
	bool ours = false;

	if (!f)
		return false;
	while (!ours && fgets(line, sizeof(line), f)) {
		char *dash = strstr(line, " - ");
		char *out = point;

		/* Field 5 is the mount point, with ' ', '\t', '\n', '\\' as octal escapes. */
		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
		    sscanf(dash + 3, "%255s %255s", fstype, source) != 2)
			continue;
		for (const char *in = point; *in; in++) {
			unsigned c;

			if (in[0] == '\\' && sscanf(in + 1, "%3o", &c) == 1) {
				*out++ = (char)c;
				in += 3;
			} else {
				*out++ = *in;
			}
		}
		*out = '\0';
		ours = !strcmp(point, mountpoint) && !strcmp(fstype, "fuse.sysctl") &&
		       !strcmp(source, "rcustring");
	}
	fclose(f);
	return ours;
}

/* Detaches a stale mount: umount2 as root, fusermount3 -uz for a user (FUSE's setuid helper). */
static int detach_stale(const char *mountpoint)
{
	int status;
	pid_t pid;

	if (umount2(mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
		return 0;
	if (errno != EPERM)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-uz", "--", mountpoint, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPERM;
}

/*
 * Why a mount failed, in the operator's terms: the library reports most
 * failures as ENODEV, whatever the cause, so /dev/fuse is probed again.
 */
static void fuse_why(int err, char *buf, size_t size)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		snprintf(buf, size, "%s", err == -ENOTCONN ? "a dead mount is in the way" : strerror(-err));
	} else if (errno == ENOENT) {
		snprintf(buf, size, "/dev/fuse is missing: no FUSE in this kernel or container");
	} else if (errno == EACCES || errno == EPERM) {
		snprintf(buf, size, "no permission to open /dev/fuse");
	} else {
		snprintf(buf, size, "cannot open /dev/fuse: %s", strerror(errno));
	}
}

/* Does a server accept connections at @path? */
static bool socket_answers(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	bool answers;
	int fd;

	if (strlen(path) >= sizeof(addr.sun_path))
		return false;
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	answers = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	close(fd);
	return answers;
}

#ifdef HAVE_ETCD
static struct etcd_sync *etcd;

/* A -c line does not overwrite a value etcd set: etcd wins, at start and at reload. */
static bool etcd_holds(const char *key)
{
	return etcd_sync_holds(etcd, key);
}

/* For the log line of an exec entry etcd sets (policy.h): the etcd revision being applied. */
static int64_t etcd_revision(void *arg)
{
	return etcd_sync_applying_revision(arg);
}

/* The sync's messages (never a value or a secret), as log lines like ours (policy.h). */
static void etcd_log(void *arg, const char *message)
{
	policy_log_mirror(arg, message);
}
#endif

/* RESET on the control socket (rcusysctl --reset): the configuration's layers decide. */
static int reset_hook(void *arg, const char *path, char *why, size_t size)
{
	return config_reset(arg, path, why, size);
}

/* The tree's registration messages, as log lines like ours. */
static void tree_log(void *arg, const char *message)
{
	(void)arg;
	rlog(LOG_ERR, "sysctl: %s", message);
}

/* What runs, in the order it starts; stopped in the reverse order. */
struct daemon {
	struct options o;
	struct sysctl_tree *tree;
	struct policy policy; /* who may write what: every write of the tree asks it */
	struct config *config;
	struct persist *persist;
#ifdef HAVE_ETCD
	struct sysctl_table_header *etcd_status;
#endif
	int dirfd;
	char canon[2048];
	char mountpoint[4096];
	struct sysctl_fuse *fs;
	pthread_t fuse_tid;
	struct sysctl_socket *sock;
	struct events *events;
	struct sysctl_budget *budget; /* every handle of every front end, per uid */
	struct report report; /* STATUS and METRICS (report.h) */
};

/*
 * What the parent left us must not decide how we behave: a closed stderr
 * pipe must not kill us with SIGPIPE (every write reports EPIPE instead),
 * and an ignored SIGCHLD would make the kernel reap our helpers before
 * waitpid() can tell how they ended. The stop signals are blocked in every
 * thread (each inherits the mask); the main thread takes them in @stop.
 */
static void take_signals(sigset_t *stop)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(stop);
	sigaddset(stop, SIGTERM);
	sigaddset(stop, SIGINT);
	sigaddset(stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, stop, NULL);
}

/* The state file (the layer above the files): 0, or 1 for a failed start. */
static int open_state(struct daemon *d)
{
	const char *state = d->o.state;
	char why[512];
	struct stat st;
	int err;

	/* A check reads what is there: a missing store is an empty one, as at start. */
	if (!state || (d->o.check && stat(state, &st) && errno == ENOENT))
		return 0;
	err = (d->o.check ? persist_open_check : persist_open)(d->tree, state, &d->persist, why,
								   sizeof(why));
	if (err) {
		rlog(LOG_ERR, "state file %s: %s", state, why);
		return 1;
	}
	err = persist_apply(d->persist);
	if (err) {
		/* Starting empty would write a journal of nothing over every kept value. */
		rlog(LOG_ERR, "cannot read the state file %s: %s (not starting: move it away to start "
		     "without its values)", state, strerror(-err));
		return 1;
	}
	if (d->o.check)
		return 0; /* no commit hook: the check writes nothing */
	err = persist_watch(d->persist);
	if (err) {
		rlog(LOG_ERR, "state file %s: cannot watch the entries: %s", state, strerror(-err));
		return 1;
	}
	return 0;
}

#ifdef HAVE_ETCD
/*
 * After the -c files and the state file, so etcd's values win over both.
 * It returns at once: the first read runs on the sync's thread, and the
 * daemon serves its own values while etcd is unreachable. etcd is the
 * source of truth for what it sets: its writes carry SYSCTL_ORIGIN_MIRROR,
 * and the state file lets their keys go. 0, or 1 for a failed start.
 */
static int start_etcd(struct daemon *d)
{
	struct etcd_sync_opts *eo = &d->o.eo;
	int err;

	if (!eo->endpoints)
		return 0;
	/* Before the sync's thread starts, which reads the policy. */
	d->policy.etcd_tls = policy_endpoints_tls(eo->endpoints);
	d->policy.etcd_allow_exec = d->o.etcd_allow_exec;
	if (d->o.etcd_allow_exec && !d->policy.etcd_tls)
		rlog(LOG_WARNING, "--etcd-allow-exec: ignored, an endpoint is not https");
	d->policy.etcd_revision = etcd_revision;
	eo->log_arg = &d->policy; /* its refusals' lines share the policy's rate limit */
	err = etcd_sync_new(d->tree, eo, &etcd);
	if (!err) {
		d->policy.etcd_arg = etcd;
		err = etcd_sync_run(etcd);
		if (err) {
			etcd_sync_stop(etcd);
			etcd = NULL;
		}
	}
	if (!err)
		err = etcd_sync_register_status(etcd, "rcusysd.etcd", &d->etcd_status);
	if (err) {
		rlog(LOG_ERR, "--etcd %s: %s", eo->endpoints,
		     err == -EINVAL ? "no endpoint or an empty prefix" : strerror(-err));
		return 1;
	}
	return 0;
}
#endif

/* The tree and its layers of values (config.h): 0, or 1 for a failed start. */
static int build_tree(struct daemon *d, struct sysctl_socket_options *sock_opts)
{
	bool (*holds)(const char *key) = NULL; /* layer 3 beside the state file */

	d->tree = sysctl_tree_new();
	if (!d->tree) {
		rlog(LOG_ERR, "out of memory");
		return 1;
	}
	sysctl_tree_set_log(d->tree, tree_log, NULL);
	policy_install(&d->policy, d->tree);
	if (d->o.owner) /* parse_owner refused -1 */
		sysctl_tree_set_owner(d->tree, d->o.owner_uid, d->o.owner_gid);
	umh_set_log(log_helper, NULL);
	if (subsys_register_all(d->tree) != 0) {
		rlog(LOG_ERR, "cannot register the subsystems");
		return 1;
	}
	/* Layers 1 and 2; a bad tunables file stops the start. */
	if (config_start(d->tree, &d->o.files, &d->config) || open_state(d))
		return 1;
	config_set_log_limit(d->config, &d->policy.log_limit);
	/* Writes a full disk refuses: one limit with the policy's refusals (persist.h). */
	persist_set_log_limit(d->persist, &d->policy.log_limit);
	if (d->o.check)
		return 0; /* etcd is not asked: its values are etcd's to check */
#ifdef HAVE_ETCD
	if (start_etcd(d))
		return 1;
	if (etcd)
		holds = etcd_holds;
#endif
	config_set_layers(d->config, d->persist, holds);
	sock_opts->reset_arg = d->config;
	return 0;
}

/* The checked run directory, with no other rcusysd serving it: 0 or 1. */
static int open_run_dir(struct daemon *d)
{
	char path[4096], why[512];

	d->dirfd = rundir_open(d->o.run_dir, d->canon, sizeof(d->canon), why, sizeof(why));
	if (d->dirfd < 0) {
		int e = d->dirfd;
		bool unsafe = e == -EPERM || e == -ELOOP || e == -ENOTDIR || e == -EAGAIN;

		rlog(LOG_ERR, "%s run directory %s: %s", unsafe ? "unsafe" : "cannot use",
		     d->o.run_dir, why);
		return 1;
	}
	d->o.run_dir = d->canon;
	snprintf(d->mountpoint, sizeof(d->mountpoint), "%s/sys", d->o.run_dir);
	/* Before mounting over a live daemon's tree: is one serving here? */
	snprintf(path, sizeof(path), "%s/control.sock", d->o.run_dir);
	if (socket_answers(path)) {
		rlog(LOG_ERR, "cannot serve %s: another rcusysd is serving this run directory", path);
		return 1;
	}
	return 0;
}

/*
 * The kernel may answer a plain stat from its attribute cache; a forced
 * sync asks the FUSE server, and a dead one gives ENOTCONN.
 */
static void clear_dead_mount(struct daemon *d)
{
	const char *mp = d->mountpoint;
	struct statx stx;
	int err;

	if (statx(d->dirfd, "sys", AT_SYMLINK_NOFOLLOW | AT_STATX_FORCE_SYNC, STATX_TYPE, &stx) == 0 ||
	    errno != ENOTCONN)
		return;
	if (!stale_mount_is_ours(mp))
		rlog(LOG_ERR, "%s: a dead FUSE mount that is not rcusysd's; not touching it", mp);
	else if ((err = detach_stale(mp)) != 0)
		rlog(LOG_ERR, "%s: cannot detach the dead mount of an earlier rcusysd: %s", mp,
		     strerror(-err));
	else
		rlog(LOG_NOTICE, "%s: detached the dead mount of an earlier rcusysd", mp);
}

/* The FUSE mount, where it can be had: 0, or 1 for an unsafe mount point. */
static int start_fuse(struct daemon *d)
{
	char why[512];
	int err;

	if (!d->o.use_fuse)
		return 0;
	clear_dead_mount(d);
	err = rundir_subdir(d->dirfd, "sys", why, sizeof(why));
	if (err == -ELOOP || err == -ENOTDIR || err == -EPERM) {
		/* Mounting there would cover whatever it points at. */
		rlog(LOG_ERR, "unsafe mount point %s: %s", d->mountpoint, why);
		return 1;
	}
	if (!err)
		err = sysctl_fuse_mount(d->tree, d->mountpoint, &d->fs);
	if (!err)
		err = sysctl_fuse_set_budget(d->fs, d->budget);
	if (!err && pthread_create(&d->fuse_tid, NULL, fuse_thread, d->fs) != 0)
		err = -EAGAIN;
	if (err) {
		fuse_why(err, why, sizeof(why));
		rlog(LOG_WARNING, "FUSE unavailable (%s): the tree is not mounted", why);
		if (d->fs)
			sysctl_fuse_unmount(d->fs);
		d->fs = NULL;
	} else {
		rlog(LOG_INFO, "tree mounted at %s", d->mountpoint);
	}
	return 0;
}

static void log_serve_error(const char *path, int err)
{
	rlog(LOG_ERR, "cannot serve %s: %s%s", path, strerror(-err),
	     err == -EADDRINUSE ? " (another rcusysd is serving this run directory)" :
	     err == -ENAMETOOLONG ?
		     " (a socket path is at most 107 bytes, and the run directory's at most about 80)" :
		     "");
}

/*
 * The control and events sockets: 0 or 1. Each socket gets its mode from
 * the umask as bind() creates it (under a temporary name: the file takes
 * its own name only once it listens, see common/unix_listen.h), so no
 * path-based chmod has to be trusted (the checked run directory keeps the
 * control socket's own chmod from being redirected). No helper runs yet, so
 * the umask is ours to change.
 */
static int start_sockets(struct daemon *d, const struct sysctl_socket_options *sock_opts)
{
	mode_t old_umask = umask(0111);
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/control.sock", d->o.run_dir);
	/* Anyone may connect: each request is checked against the entry's mode. */
	err = sysctl_socket_start_opts(d->tree, path, 0666, sock_opts, &d->sock);
	if (err) {
		log_serve_error(path, err);
		umask(old_umask);
		return 1;
	}
	/* Events run programs: root only. */
	umask(0177);
	snprintf(path, sizeof(path), "%s/events.sock", d->o.run_dir);
	err = events_start(path, d->dirfd, d->o.allow_poweroff, d->budget, &d->events);
	umask(old_umask);
	if (err) {
		log_serve_error(path, err);
		return 1;
	}
	/*
	 * The start freed what parsing and applying the files took (a copy of
	 * every line, each declaration before it was packed): hand those pages
	 * back, from the middle of the heap too, before serving.
	 */
	malloc_trim(0);
	rlog(LOG_INFO, "ready: control socket %s/control.sock, events %s", d->o.run_dir, path);
	return 0;
}

/* A reload ends early when SIGTERM or SIGINT waits (run() then takes it). */
static bool stop_pending(void *arg, const char *file, unsigned line)
{
	sigset_t pending;

	(void)arg;
	(void)file;
	(void)line;
	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

/* @state ("READY=1\n", or "") and sd_notify's STATUS=, which systemctl status shows. */
static void notify_status(struct daemon *d, const char *state)
{
	char line[512];
	size_t n = strlen(state);

	snprintf(line, sizeof(line), "%s", state);
	report_notify_line(&d->report, line + n, sizeof(line) - n);
	notify(line);
}

/*
 * Until SIGTERM or SIGINT; SIGHUP reloads the files. STATUS= is sent again
 * every NOTIFY_STATUS_S, so that etcd's state in it keeps in step.
 */
#define NOTIFY_STATUS_S 30
static void run(struct daemon *d, const sigset_t *stop)
{
	struct timespec every = { .tv_sec = NOTIFY_STATUS_S };
	int sig;

	report_reloaded(&d->report, config_failures(d->config), 0, 0);
	notify_status(d, "READY=1\n");
	while ((sig = sigtimedwait(stop, NULL, &every)) > 0 || errno == EAGAIN || errno == EINTR) {
		if (sig <= 0) {
			notify_status(d, "");
			policy_log_flush(&d->policy, false); /* refusal and reset lines' suppressed counts */
			continue;
		}
		if (sig != SIGHUP) {
			rlog(LOG_INFO, "%s: shutting down", strsignal(sig));
			break;
		}
		rlog(LOG_INFO, "%s: reloading", strsignal(sig));
		notify_reloading();
		if (config_reload(d->config, stop_pending, NULL)) {
			report_reloaded(&d->report, config_failures(d->config), 1, 1);
			continue; /* stopped for SIGTERM or SIGINT, which sigwait() returns now */
		}
		report_reloaded(&d->report, config_failures(d->config), 0, 1);
#ifdef HAVE_ETCD
		if (etcd)
			etcd_sync_rescan(etcd); /* values refused for want of an entry the reload declared */
#endif
		notify_status(d, "READY=1\n");
	}
	notify("STOPPING=1");
}

/* Bounded: helpers get SIGTERM, then SIGKILL after the grace period. */
static void stop_front_ends(struct daemon *d)
{
	int grace = d->o.grace, killed;

	if (events_stop(d->events, grace, &killed) != 0) {
		rlog(LOG_ERR, "requests still running %d s after SIGKILL: exiting without cleanup",
		     grace > 1 ? grace : 1);
		fflush(stderr);
		_exit(1);
	}
	if (killed)
		rlog(LOG_WARNING, "%d helper(s) outlived the %d s grace period: killed", killed, grace);
	if (d->sock)
		sysctl_socket_stop(d->sock);
	if (d->fs) {
		sysctl_fuse_exit(d->fs);
		pthread_join(d->fuse_tid, NULL);
		sysctl_fuse_unmount(d->fs);
	}
}

static void free_tree(struct daemon *d)
{
	if (d->dirfd >= 0)
		close(d->dirfd);
#ifdef HAVE_ETCD
	/* Before the entries it writes (and its own status entries) go away. */
	if (d->etcd_status)
		sysctl_unregister_table(d->etcd_status);
	etcd_sync_stop(etcd);
#endif
	persist_close(d->persist);
	config_free(d->config);
	subsys_unregister_all();
	sysctl_tree_free(d->tree);
	rcustring_barrier();
}

int main(int argc, char **argv)
{
	struct daemon d = {
		.o = { .run_dir = DEFAULT_RUN_DIR, .state = DEFAULT_STATE, .use_fuse = true,
		       .grace = DEFAULT_STOP_GRACE,
		       .files = { .sysctl_dirs = CONFIG_SYSCTL_DIRS,
				  .tunables_dirs = CONFIG_TUNABLES_DIRS },
#ifdef HAVE_ETCD
		       .eo = { .log = etcd_log },
#endif
		},
		.dirfd = -1,
	};
	struct sysctl_socket_options sock_opts = { .reset = reset_hook, .report = report_write,
						   .report_arg = &d.report };
	char path[4096];
	sigset_t stop;
	int status;

	log_init();
	/*
	 * A fixed mmap threshold (glibc's default, no longer raised when a
	 * large block is freed): a client's LIST or DUMP walks an array of
	 * every entry, 800 KB for 100 000; with the threshold raised those
	 * arrays land in per-thread arenas and stay after the reply.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	clock_gettime(CLOCK_MONOTONIC, &d.report.started);
	status = options_parse(argc, argv, &d.o);
	if (status >= 0)
		return status;
	if (d.o.event) {
		snprintf(path, sizeof(path), "%s/events.sock", d.o.run_dir);
		return events_send(path, d.o.event);
	}
	take_signals(&stop);
	/* One handle budget for the mount and both sockets (sysctl_budget.h). */
	status = sysctl_budget_new(NULL, &d.budget) ? 1 : 0;
	if (status)
		rlog(LOG_ERR, "out of memory");
	sock_opts.budget = d.budget;
	if (!status)
		status = build_tree(&d, &sock_opts);
	if (d.o.check) { /* the start up to serving, then its verdict: nothing served */
		status = status || log_problems();
		fprintf(stderr, "rcusysd: configuration %s (%u problem(s))\n",
			status ? "has problems" : "OK", log_problems());
		free_tree(&d);
		sysctl_budget_free(d.budget);
		return status;
	}
	if (!status)
		status = open_run_dir(&d);
	if (!status)
		status = start_fuse(&d);
	if (!status) {
		d.report = (struct report){ .tree = d.tree, .persist = d.persist, .store = d.o.state,
					    .fs = d.fs, .budget = d.budget, .policy = &d.policy,
					    .started = d.report.started };
#ifdef HAVE_ETCD
		d.report.etcd = etcd;
#endif
		status = start_sockets(&d, &sock_opts);
		if (!status)
			run(&d, &stop);
		stop_front_ends(&d);
	}
	free_tree(&d);
	/* Last: the etcd sync's stop may log too. A tree made: policy_install() ran. */
	if (d.tree)
		policy_log_flush(&d.policy, true);
	sysctl_budget_free(d.budget);
	return status;
}
