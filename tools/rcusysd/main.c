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
 * etcd prefix into the tree (--etcd, rcustring-etcd(7)).
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
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
#include "persist.h"
#include "rundir.h"
#include "subsys.h"
#ifdef HAVE_ETCD
#include "etcd_sync.h"
#endif

#define DEFAULT_RUN_DIR "/run/rcusysd"
#define DEFAULT_STATE "/var/lib/rcusysd/state.conf"
#define DEFAULT_STOP_GRACE 5

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

/* The sync's messages (never a value or a secret), as log lines like ours. */
static void etcd_log(void *arg, const char *message)
{
	(void)arg;
	rlog(LOG_NOTICE, "etcd: %s", message);
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

/* A number or a name, as chown(1) takes them; the group defaults to the user's. */
static int parse_owner(const char *spec, uid_t *uid, gid_t *gid, char *why, size_t size)
{
	char user[256], *group, *end;
	struct passwd *pw;
	struct group *gr;
	unsigned long n;

	if (snprintf(user, sizeof(user), "%s", spec) >= (int)sizeof(user) || !*user) {
		snprintf(why, size, "expected USER[:GROUP]");
		return -EINVAL;
	}
	group = strchr(user, ':');
	if (group)
		*group++ = '\0';
	pw = getpwnam(user);
	errno = 0;
	n = pw ? 0 : strtoul(user, &end, 10);
	if (!pw && (errno || !*user || *end || n >= (uid_t)-1)) {
		snprintf(why, size, "no such user \"%s\"", user);
		return -ENOENT;
	}
	*uid = pw ? pw->pw_uid : (uid_t)n;
	if (!group || !*group) {
		if (!pw) {
			snprintf(why, size, "uid %s has no passwd entry: name the group", user);
			return -ENOENT;
		}
		*gid = pw->pw_gid;
		return 0;
	}
	gr = getgrnam(group);
	errno = 0;
	n = gr ? 0 : strtoul(group, &end, 10);
	if (!gr && (errno || *end || n >= (gid_t)-1)) {
		snprintf(why, size, "no such group \"%s\"", group);
		return -ENOENT;
	}
	*gid = gr ? gr->gr_gid : (gid_t)n;
	return 0;
}

/*
 * A usage error in one line, naming the option and the value, as procps
 * does; the whole text is for --help. getopt_long() has already named an
 * unknown option or a missing argument when @option is NULL.
 */
static int usage_error(const char *option, const char *value, const char *expected)
{
	if (option && value)
		fprintf(stderr, "rcusysd: %s \"%s\": expected %s\n", option, value, expected);
	else if (value)
		fprintf(stderr, "rcusysd: \"%s\": %s\n", value, expected);
	fprintf(stderr, "Try 'rcusysd --help' for more information.\n");
	return 2;
}

static void usage(FILE *out, int code)
{
	fprintf(out,
		"Usage: rcusysd [options]\n"
		"Serve a sysctl tree of RCU-protected tunables.\n\n"
		"  -d, --run-dir DIR     run directory (default %s), ours and writable by nobody\n"
		"                        else (see rcusysd(8)); the tree is mounted at DIR/sys\n"
		"  -t, --tunables FILE   declare tunables (see rcusysd(8)); repeatable\n"
		"  -c, --config FILE     sysctl.d-style settings, after the directories; repeatable\n"
		"      --sysctl-dirs DIR[:DIR...]  sysctl.d directories, merged by file name, the\n"
		"                        first one winning (default /etc, /run, /usr/local/lib,\n"
		"                        /usr/lib, each /rcusysd/sysctl.d; \"\" for none)\n"
		"      --tunables-dirs DIR[:DIR...]  tunables.d directories, merged the same way\n"
		"                        (default the same four, each /rcusysd/tunables.d)\n"
		"  -s, --state FILE      persist every write there; its values win over the files\n"
		"                        until rcusysctl --reset (default DIR/state.conf with\n"
		"                        --run-dir, else %s); its directory is checked as DIR is\n"
		"      --no-persist      keep no state file\n"
		"      --no-fuse         do not mount the tree\n"
		"      --stop-grace SECS at shutdown, helpers and supervised programs get SIGTERM,\n"
		"                        then SIGKILL after SECS seconds (default %d)\n"
		"      --allow-poweroff  accept POWEROFF events (refused otherwise)\n"
		"      --owner USER[:GROUP]  entries' owner and group (owner and group bits of\n"
		"                        their modes, as root and group 0 have; root keeps its access),\n"
		"                        except entries root executes (helper paths, exec= tunables)\n"
		"      --log-level LEVEL err, warning, notice, info (default) or debug (helper calls)\n"
		"      --etcd URL[,URL]  mirror an etcd prefix into the tree after the -c files and\n"
		"                        the state file (rcustring-etcd(7)); needs --etcd-prefix\n"
		"      --etcd-prefix P   the prefix, e.g. /rcustring/web/\n"
		"      --etcd-cacert FILE, --etcd-cert FILE, --etcd-key FILE\n"
		"                        TLS files for the connection to etcd\n"
		"  -e, --event LINE      send one event to a running rcusysd and print the reply\n"
		"  -V, --version         print the version\n"
		"  -h, --help            this help\n",
		DEFAULT_RUN_DIR, DEFAULT_STATE, DEFAULT_STOP_GRACE);
	exit(code);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "run-dir", required_argument, NULL, 'd' }, { "tunables", required_argument, NULL, 't' },
		{ "config", required_argument, NULL, 'c' },  { "no-fuse", no_argument, NULL, 'F' },
		{ "event", required_argument, NULL, 'e' },   { "help", no_argument, NULL, 'h' },
		{ "stop-grace", required_argument, NULL, 'G' }, { "state", required_argument, NULL, 's' },
		{ "no-persist", no_argument, NULL, 'P' },    { "version", no_argument, NULL, 'V' },
		{ "allow-poweroff", no_argument, NULL, 'A' }, { "log-level", required_argument, NULL, 'L' },
		{ "etcd", required_argument, NULL, 'E' },    { "etcd-prefix", required_argument, NULL, 'X' },
		{ "etcd-cacert", required_argument, NULL, 'C' }, { "etcd-cert", required_argument, NULL, 'T' },
		{ "etcd-key", required_argument, NULL, 'K' }, { "owner", required_argument, NULL, 'O' },
		{ "sysctl-dirs", required_argument, NULL, 'D' },
		{ "tunables-dirs", required_argument, NULL, 'U' },
		{ NULL, 0, NULL, 0 },
	};
	const char *run_dir = DEFAULT_RUN_DIR, *state = DEFAULT_STATE, *owner = NULL;
	bool state_given = false, run_dir_given = false;
	char state_path[4096];
	uid_t owner_uid = 0;
	gid_t owner_gid = 0;
	int opt, status = 0, sig, grace = DEFAULT_STOP_GRACE, killed, dirfd = -1, level;
	struct config_files files = { .sysctl_dirs = CONFIG_SYSCTL_DIRS,
				      .tunables_dirs = CONFIG_TUNABLES_DIRS };
	struct config *config = NULL;
	struct sysctl_socket_options sock_opts = { .reset = reset_hook };
	bool (*etcd_holds_fn)(const char *key) = NULL; /* layer 3 beside the state file */
	struct sysctl_fuse *fs = NULL;
	struct sysctl_socket *sock = NULL;
	struct events *events = NULL;
	struct persist *persist = NULL;
	const char *event = NULL;
	char path[4096], canon[2048], why[512], *end;
	struct sysctl_tree *tree;
	char mountpoint[4096];
	pthread_t fuse_tid;
	bool use_fuse = true, allow_poweroff = false;
	mode_t old_umask;
	sigset_t stop;
	struct statx stx;
	int err;
#ifdef HAVE_ETCD
	struct etcd_sync_opts eo = { .log = etcd_log };
	struct sysctl_table_header *etcd_status = NULL;
#else
	const char *etcd_url = NULL;
#endif

	log_init();
	while ((opt = getopt_long(argc, argv, "d:t:c:e:s:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'e': event = optarg; break;
		case 'd': run_dir = optarg, run_dir_given = true; break;
		case 't':
			if (files.ntunables == CONFIG_MAX_FILES)
				return usage_error("-t", optarg, "at most 32 tunables files");
			files.tunables[files.ntunables++] = optarg;
			break;
		case 'c':
			if (files.nconfigs == CONFIG_MAX_FILES)
				return usage_error("-c", optarg, "at most 32 settings files");
			files.configs[files.nconfigs++] = optarg;
			break;
		case 'D': files.sysctl_dirs = optarg; break;
		case 'U': files.tunables_dirs = optarg; break;
		case 's': state = optarg, state_given = true; break;
		case 'P': state = NULL, state_given = true; break;
		case 'F': use_fuse = false; break;
		case 'A': allow_poweroff = true; break;
		case 'O': owner = optarg; break;
		case 'L':
			level = log_level_from_name(optarg);
			if (level < 0)
				return usage_error("--log-level", optarg,
						   "one of err, warning, notice, info, debug");
			log_set_level(level);
			break;
		case 'G':
			errno = 0;
			grace = (int)strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || grace < 0 || grace > 3600)
				return usage_error("--stop-grace", optarg, "seconds from 0 to 3600");
			break;
#ifdef HAVE_ETCD
		case 'E': eo.endpoints = optarg; break;
		case 'X': eo.prefix = optarg; break;
		case 'C': eo.cacert = optarg; break;
		case 'T': eo.cert = optarg; break;
		case 'K': eo.key = optarg; break;
#else
		case 'E': etcd_url = optarg; break;
		case 'X': case 'C': case 'T': case 'K': break;
#endif
		case 'V': printf("rcusysd %s\n", RCUSYSD_VERSION); return 0;
		case 'h': usage(stdout, 0); break;
		default: return usage_error(NULL, NULL, NULL); /* getopt named the option */
		}
	}
	if (optind != argc)
		return usage_error(NULL, argv[optind], "unexpected argument (rcusysd takes options only)");
#ifdef HAVE_ETCD
	if (!eo.endpoints != !eo.prefix) {
		rlog(LOG_ERR, "--etcd and --etcd-prefix go together");
		return 2;
	}
#else
	if (etcd_url) {
		rlog(LOG_ERR, "--etcd: built without etcd support (needs libcurl and json-c)");
		return 2;
	}
#endif
	if (owner && parse_owner(owner, &owner_uid, &owner_gid, why, sizeof(why))) {
		rlog(LOG_ERR, "--owner %s: %s", owner, why);
		return 2;
	}
	if (event) {
		snprintf(path, sizeof(path), "%s/events.sock", run_dir);
		return events_send(path, event);
	}
	/* Each instance its own state: another run directory is another instance. */
	if (run_dir_given && strcmp(run_dir, DEFAULT_RUN_DIR) && !state_given) {
		if ((size_t)snprintf(state_path, sizeof(state_path), "%s/state.conf", run_dir) >=
		    sizeof(state_path)) {
			rlog(LOG_ERR, "--run-dir %s: path too long", run_dir);
			return 2;
		}
		state = state_path;
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
		rlog(LOG_ERR, "out of memory");
		return 1;
	}
	sysctl_tree_set_log(tree, tree_log, NULL);
	if (owner)
		sysctl_tree_set_owner(tree, owner_uid, owner_gid); /* parse_owner refused -1 */
	umh_set_log(log_helper, NULL);
	if (subsys_register_all(tree) != 0) {
		rlog(LOG_ERR, "cannot register the subsystems");
		status = 1;
		goto out;
	}
	/* Layers 1 and 2 (config.h); a bad tunables file stops the start. */
	if (config_start(tree, &files, &config)) {
		status = 1;
		goto out;
	}
	if (state) {
		err = persist_open(tree, state, &persist, why, sizeof(why));
		if (err) {
			rlog(LOG_ERR, "state file %s: %s", state, why);
			status = 1;
			goto out;
		}
		err = persist_apply(persist);
		if (err)
			rlog(LOG_ERR, "cannot read the state file %s: %s (starting without it)", state,
			     strerror(-err));
		err = persist_watch(persist);
		if (err) {
			rlog(LOG_ERR, "state file %s: cannot watch the entries: %s", state, strerror(-err));
			status = 1;
			goto out;
		}
	}
#ifdef HAVE_ETCD
	/*
	 * After the -c files and the state file, so etcd's values win over
	 * both. It returns at once: the first read runs on the sync's thread,
	 * and the daemon serves its own values while etcd is unreachable.
	 * etcd is the source of truth for what it sets: its writes carry
	 * SYSCTL_ORIGIN_MIRROR, and the state file lets their keys go.
	 */
	if (eo.endpoints) {
		etcd_holds_fn = etcd_holds;
		err = etcd_sync_start(tree, &eo, &etcd);
		if (!err)
			err = etcd_sync_register_status(etcd, "rcusysd.etcd", &etcd_status);
		if (err) {
			rlog(LOG_ERR, "--etcd %s: %s", eo.endpoints,
			     err == -EINVAL ? "no endpoint or an empty prefix" : strerror(-err));
			status = 1;
			goto out;
		}
	}
#endif
	config_set_layers(config, persist, etcd_holds_fn);
	sock_opts.reset_arg = config;

	dirfd = rundir_open(run_dir, canon, sizeof(canon), why, sizeof(why));
	if (dirfd < 0) {
		bool unsafe = dirfd == -EPERM || dirfd == -ELOOP || dirfd == -ENOTDIR || dirfd == -EAGAIN;

		rlog(LOG_ERR, "%s run directory %s: %s", unsafe ? "unsafe" : "cannot use", run_dir, why);
		status = 1;
		goto out;
	}
	run_dir = canon;
	snprintf(mountpoint, sizeof(mountpoint), "%s/sys", run_dir);
	/* Before mounting over a live daemon's tree: is one serving here? */
	snprintf(path, sizeof(path), "%s/control.sock", run_dir);
	if (socket_answers(path)) {
		rlog(LOG_ERR, "cannot serve %s: another rcusysd is serving this run directory", path);
		status = 1;
		goto out;
	}
	if (use_fuse) {
		/*
		 * The kernel may answer a plain stat from its attribute cache;
		 * a forced sync asks the FUSE server, and a dead one gives ENOTCONN.
		 */
		if (statx(dirfd, "sys", AT_SYMLINK_NOFOLLOW | AT_STATX_FORCE_SYNC, STATX_TYPE, &stx) < 0 &&
		    errno == ENOTCONN) {
			if (!stale_mount_is_ours(mountpoint)) {
				rlog(LOG_ERR, "%s: a dead FUSE mount that is not rcusysd's; not touching it",
				     mountpoint);
			} else if ((err = detach_stale(mountpoint)) != 0) {
				rlog(LOG_ERR, "%s: cannot detach the dead mount of an earlier rcusysd: %s",
				     mountpoint, strerror(-err));
			} else {
				rlog(LOG_NOTICE, "%s: detached the dead mount of an earlier rcusysd",
				     mountpoint);
			}
		}
		err = rundir_subdir(dirfd, "sys", why, sizeof(why));

		if (err == -ELOOP || err == -ENOTDIR || err == -EPERM) {
			/* Mounting there would cover whatever it points at. */
			rlog(LOG_ERR, "unsafe mount point %s: %s", mountpoint, why);
			status = 1;
			goto out;
		}
		if (!err)
			err = sysctl_fuse_mount(tree, mountpoint, &fs);
		if (!err && pthread_create(&fuse_tid, NULL, fuse_thread, fs) != 0)
			err = -EAGAIN;
		if (err) {
			fuse_why(err, why, sizeof(why));
			rlog(LOG_WARNING, "FUSE unavailable (%s): the tree is not mounted", why);
			if (fs)
				sysctl_fuse_unmount(fs);
			fs = NULL;
		} else {
			rlog(LOG_INFO, "tree mounted at %s", mountpoint);
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
	err = sysctl_socket_start_opts(tree, path, 0666, &sock_opts, &sock);
	if (err) {
		rlog(LOG_ERR, "cannot serve %s: %s%s", path, strerror(-err),
		     err == -EADDRINUSE ? " (another rcusysd is serving this run directory)" :
		     err == -ENAMETOOLONG ? " (a socket path is at most 107 bytes)" : "");
		umask(old_umask);
		status = 1;
		goto stop;
	}
	/* Events run programs: root only. */
	umask(0177);
	snprintf(path, sizeof(path), "%s/events.sock", run_dir);
	err = events_start(path, dirfd, allow_poweroff, &events);
	umask(old_umask);
	if (err) {
		rlog(LOG_ERR, "cannot serve %s: %s%s", path, strerror(-err),
		     err == -EADDRINUSE ? " (another rcusysd is serving this run directory)" :
		     err == -ENAMETOOLONG ? " (a socket path is at most 107 bytes)" : "");
		status = 1;
		goto stop;
	}
	rlog(LOG_INFO, "ready: control socket %s/control.sock, events %s", run_dir, path);
	notify("READY=1");
	while (sigwait(&stop, &sig) == 0) {
		if (sig != SIGHUP) {
			rlog(LOG_INFO, "%s: shutting down", strsignal(sig));
			break;
		}
		rlog(LOG_INFO, "%s: reloading", strsignal(sig));
		notify_reloading();
		config_reload(config);
		notify("READY=1");
	}
	notify("STOPPING=1");
stop:
	/* Bounded: helpers get SIGTERM, then SIGKILL after the grace period. */
	if (events_stop(events, grace, &killed) != 0) {
		rlog(LOG_ERR, "requests still running %d s after SIGKILL: exiting without cleanup",
		     grace > 1 ? grace : 1);
		fflush(stderr);
		_exit(1);
	}
	if (killed)
		rlog(LOG_WARNING, "%d helper(s) outlived the %d s grace period: killed", killed, grace);
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
#ifdef HAVE_ETCD
	/* Before the entries it writes (and its own status entries) go away. */
	if (etcd_status)
		sysctl_unregister_table(etcd_status);
	etcd_sync_stop(etcd);
#endif
	persist_close(persist);
	config_free(config);
	subsys_unregister_all();
	sysctl_tree_free(tree);
	rcustring_barrier();
	return status;
}
