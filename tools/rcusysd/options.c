/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's command line: each option read and checked, with a usage error
 * that names the option and the value (as procps does), and the options
 * that go together checked together.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "options.h"

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
		"                        /usr/lib, each /rcusysd/sysctl.d, or $RCUSYSD_SYSCTL_DIRS;\n"
		"                        \"\" for none)\n"
		"      --tunables-dirs DIR[:DIR...]  tunables.d directories, merged the same way\n"
		"                        (default the same four, each /rcusysd/tunables.d, or\n"
		"                        $RCUSYSD_TUNABLES_DIRS)\n"
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
		"      --etcd-host NAME  this host's name in its status keys (default: the host name)\n"
		"      --etcd-user USER[:GROUP]  whose rights etcd's values are written with:\n"
		"                        that user's bits of each entry's mode (default: the owner\n"
		"                        bits, as --owner has them); never an entry root executes\n"
		"      --etcd-allow-exec let etcd set entries root executes (helper paths, exec=\n"
		"                        tunables); only with https:// endpoints; each is logged\n"
		"      --etcd-cacert FILE, --etcd-cert FILE, --etcd-key FILE\n"
		"                        TLS files for the connection to etcd\n"
		"      --etcd-credentials FILE  etcd's user:password (HTTP basic), one line in a\n"
		"                        file of root's that group and others cannot read; not\n"
		"                        in the --etcd URL, which every local user can read\n"
		"      --check-config    read the tunables, the settings and the state file as a\n"
		"                        start would, print each problem as FILE:LINE: message,\n"
		"                        and exit 0 (none) or 1 without serving\n"
		"  -e, --event LINE      send one event to a running rcusysd and print the reply\n"
		"  -V, --version         print the version\n"
		"  -h, --help            this help\n",
		DEFAULT_RUN_DIR, DEFAULT_STATE, DEFAULT_STOP_GRACE);
	exit(code);
}

/* One option of getopt_long(): -1 to go on, else the exit status. */
static int take_option(struct options *o, int opt, char *arg)
{
	char *end;
	int level;

	switch (opt) {
	case 'e': o->event = arg; break;
	case 'd': o->run_dir = arg, o->run_dir_given = true; break;
	case 't':
		if (o->files.ntunables == CONFIG_MAX_FILES)
			return usage_error("-t", arg, "at most 32 tunables files");
		o->files.tunables[o->files.ntunables++] = arg;
		break;
	case 'c':
		if (o->files.nconfigs == CONFIG_MAX_FILES)
			return usage_error("-c", arg, "at most 32 settings files");
		o->files.configs[o->files.nconfigs++] = arg;
		break;
	case 'D': o->files.sysctl_dirs = arg; break;
	case 'U': o->files.tunables_dirs = arg; break;
	case 's': o->state = arg, o->state_given = true; break;
	case 'P': o->state = NULL, o->state_given = true; break;
	case 'F': o->use_fuse = false; break;
	case 'k': /* problems only, as bare lines; a later --log-level still wins */
		o->check = o->files.check = true;
		log_set_check();
		log_set_level(LOG_WARNING);
		break;
	case 'A': o->allow_poweroff = true; break;
	case 'O': o->owner = arg; break;
	case 'L':
		level = log_level_from_name(arg);
		if (level < 0)
			return usage_error("--log-level", arg, "one of err, warning, notice, info, debug");
		log_set_level(level);
		break;
	case 'G':
		errno = 0;
		o->grace = (int)strtol(arg, &end, 10);
		if (errno || end == arg || *end || o->grace < 0 || o->grace > 3600)
			return usage_error("--stop-grace", arg, "seconds from 0 to 3600");
		break;
#ifdef HAVE_ETCD
	case 'E':
		/* A second would leave the first's password unstarred in ps: say it once. */
		if (o->etcd_arg) {
			fprintf(stderr, "rcusysd: --etcd given twice: give every endpoint in one "
					"--etcd URL,URL\n");
			return 2;
		}
		o->eo.endpoints = o->etcd_arg = arg;
		break;
	case 'Z': o->etcd_credentials = arg; break;
	case 'X': o->eo.prefix = arg; break;
	case 'C': o->eo.cacert = arg; break;
	case 'T': o->eo.cert = arg; break;
	case 'K': o->eo.key = arg; break;
	case 'H':
		if (!*arg || strchr(arg, '/'))
			return usage_error("--etcd-host", arg, "a host name, without '/'");
		o->eo.host = arg;
		break;
#else
	case 'E': o->etcd_url = arg; break;
	case 'X': case 'C': case 'T': case 'K': case 'H': case 'Z': break;
#endif
	case 'W': o->etcd_user = arg; break;
	case 'x': o->etcd_allow_exec = true; break;
	case 'V': printf("rcusysd %s\n", RCUSYSD_VERSION); return 0;
	case 'h': usage(stdout, 0); break;
	default: return usage_error(NULL, NULL, NULL); /* getopt named the option */
	}
	return -1;
}

/* --etcd-user and --etcd-allow-exec: what the mirror may write (policy.h). 0 or 1. */
static int check_etcd_principal(struct options *o)
{
#ifdef HAVE_ETCD
	struct sysctl_caller *c = &o->etcd_caller;
	char why[512];

	if ((o->etcd_user || o->etcd_allow_exec) && !o->eo.endpoints) {
		rlog(LOG_ERR, "--etcd-user and --etcd-allow-exec need --etcd");
		return 1;
	}
	if (!o->etcd_user)
		return 0;
	if (parse_owner(o->etcd_user, &c->uid, &c->gid, why, sizeof(why))) {
		rlog(LOG_ERR, "--etcd-user %s: %s", o->etcd_user, why);
		return 1;
	}
	c->pid = getpid();
	o->eo.caller = c;
	return 0;
#else
	if (o->etcd_user || o->etcd_allow_exec) {
		rlog(LOG_ERR, "--etcd-user, --etcd-allow-exec: built without etcd support");
		return 1;
	}
	return 0;
#endif
}

/* The options that go together, the owner, the state file's default. -1 or the exit status. */
static int check_options(struct options *o)
{
	char why[512];

#ifdef HAVE_ETCD
	if (!o->eo.endpoints != !o->eo.prefix) {
		rlog(LOG_ERR, "--etcd and --etcd-prefix go together");
		return 2;
	}
	if (o->etcd_credentials && !o->eo.endpoints) {
		rlog(LOG_ERR, "--etcd-credentials needs --etcd");
		return 2;
	}
	/* From here on no endpoint holds a password: nothing built from one shows it. */
	if (o->eo.endpoints) {
		if (etcd_creds_take(&o->creds, o->etcd_arg, o->etcd_credentials))
			return 2;
		o->eo.endpoints = o->creds.endpoints;
		o->eo.userpwd = *o->creds.userpwd ? o->creds.userpwd : NULL;
	}
#else
	if (o->etcd_url) {
		rlog(LOG_ERR, "--etcd: built without etcd support (needs libcurl and json-c)");
		return 2;
	}
#endif
	if (o->owner && parse_owner(o->owner, &o->owner_uid, &o->owner_gid, why, sizeof(why))) {
		rlog(LOG_ERR, "--owner %s: %s", o->owner, why);
		return 2;
	}
	if (check_etcd_principal(o))
		return 2;
	/* Each instance its own state: another run directory is another instance. */
	if (!o->event && o->run_dir_given && strcmp(o->run_dir, DEFAULT_RUN_DIR) &&
	    !o->state_given) {
		if ((size_t)snprintf(o->state_path, sizeof(o->state_path), "%s/state.conf",
				     o->run_dir) >= sizeof(o->state_path)) {
			rlog(LOG_ERR, "--run-dir %s: path too long", o->run_dir);
			return 2;
		}
		o->state = o->state_path;
	}
	return -1;
}

/*
 * The environment may replace the directories' defaults, as systemd's
 * $SYSTEMD_UNIT_PATH does its units': so a test suite keeps every rcusysd
 * it starts off the host's /etc/rcusysd ("" reads none). The options still
 * win.
 */
static void dirs_from_env(struct options *o)
{
	const char *sysctl_dirs = getenv("RCUSYSD_SYSCTL_DIRS");
	const char *tunables_dirs = getenv("RCUSYSD_TUNABLES_DIRS");

	if (sysctl_dirs)
		o->files.sysctl_dirs = sysctl_dirs;
	if (tunables_dirs)
		o->files.tunables_dirs = tunables_dirs;
}

/* What options.h says. */
int options_parse(int argc, char **argv, struct options *o)
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
		{ "etcd-host", required_argument, NULL, 'H' },
		{ "etcd-user", required_argument, NULL, 'W' },
		{ "etcd-allow-exec", no_argument, NULL, 'x' },
		{ "etcd-credentials", required_argument, NULL, 'Z' },
		{ "sysctl-dirs", required_argument, NULL, 'D' },
		{ "tunables-dirs", required_argument, NULL, 'U' },
		{ "check-config", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, code;

	dirs_from_env(o);
	while ((opt = getopt_long(argc, argv, "d:t:c:e:s:hV", opts, NULL)) != -1)
		if ((code = take_option(o, opt, optarg)) >= 0)
			return code;
	if (optind != argc)
		return usage_error(NULL, argv[optind], "unexpected argument (rcusysd takes options only)");
	return check_options(o);
}
