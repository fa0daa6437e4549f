/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl: read and write a sysctl tree with procps sysctl(8) conventions,
 * over rcusysd's control socket (default; --socket PATH) or on a tree
 * mounted as files (--root DIR: rcusysd's FUSE mount, or /proc/sys).
 * This file reads the command line and runs what it asks; the reads,
 * writes and loads themselves are settings.c's, watch and audit stream.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonout.h"
#ifdef HAVE_ETCD
#include "etcdcli.h"
#endif
#include "keys.h"
#include "kept_list.h"
#include "report.h"
#include "settings.h"
#include "ttysafe.h"
#include "socktree.h"
#include "stream.h"

#define DEFAULT_SOCKET "/run/rcusysd/control.sock"
#ifndef RCUSYSCTL_VERSION
#define RCUSYSCTL_VERSION "unknown"
#endif

static void usage(FILE *out, int code)
{
	fprintf(out,
		"Usage: rcusysctl [options] [name[=value] ...]\n"
		"       rcusysctl [-n|-N] [--json] watch name...\n"
		"       rcusysctl [--json] audit\n"
		"       rcusysctl [--json] --status\n"
		"       rcusysctl --metrics\n"
		"Read and write an rcustring sysctl tree (procps sysctl conventions).\n"
		"watch prints each change of the named entries (one line each) until the\n"
		"server closes; audit prints the audit ring (seq, time, uid, pid, name:\n"
		"old -> new; root only). Both need the control socket.\n"
		"--status prints rcusysd's state (version, uptime, reload, store, etcd, budget)\n"
		"as key: value lines; --metrics its counters in the Prometheus text format.\n\n"
		"  -a, -A, --all        display all entries\n"
		"  -n, --values         print only values\n"
		"  -N, --names          print only names\n"
		"  -w, --write          write name=value arguments\n"
		"  -p, --load[=FILE] [FILE..]  apply sysctl.d-format files (default\n"
		"                       /etc/sysctl.conf; - is stdin); an explicit key beats a glob;\n"
		"                       as root each FILE must pass rcusysd's file check (or is\n"
		"                       refused); another user's are that user's writes (as -w)\n"
		"      --system         apply sysctl.d directories (*.conf, by base name): over\n"
		"                       the socket rcusysd's /etc/rcusysd/sysctl.d,\n"
		"                       /run/rcusysd/sysctl.d, /usr/local/lib/rcusysd/sysctl.d,\n"
		"                       /usr/lib/rcusysd/sysctl.d; with --root the kernel's\n"
		"                       /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d,\n"
		"                       /usr/lib/sysctl.d, /lib/sysctl.d, then /etc/sysctl.conf;\n"
		"                       $RCUSYSCTL_SYSTEM_DIRS (DIR:DIR...) replaces them; files\n"
		"                       rcusysd's file check refuses are refused (skipped)\n"
		"      --reset NAME..   drop rcusysd's runtime value of each NAME (-a: of every\n"
		"                       entry), so its configuration files apply again (socket only)\n"
		"      --kept[=FILE]    list what rcusysd's store keeps (runtime writes): name =\n"
		"                       value, the origin and the time of the write (default\n"
		"                       /var/lib/rcusysd/state.conf; rcusysd -s FILE); -N: names\n"
		"      --dry-run        write nothing; print \"name: old -> new\" for each write\n"
		"                       that would change a value\n"
		"      --atomic         -w, -p or --system writes all their keys as one commit\n"
		"                       (at most 64): readers see all of the new values or none;\n"
		"                       if one key is refused, it is named and nothing changes\n"
		"                       (socket only)\n"
		"  -e, --ignore         ignore unknown names\n"
		"  -q, --quiet          do not echo written values\n"
		"  -r, --pattern REGEX  only names matching the extended regex\n"
		"  -b, --binary         print values alone, without newlines, raw (control bytes\n"
		"                       are otherwise escaped on a terminal)\n"
		"      --deprecated     list deprecated entries too (base_reachable_time,\n"
		"                       retrans_time)\n"
		"  -d, --describe       print descriptions instead of values (socket only)\n"
		"      --generation     print each entry's generation (its count of writes)\n"
		"                       instead of its value (socket only)\n"
		"      --if-generation N  write only while the entry's generation is N; a\n"
		"                       write that came first is refused (socket only)\n"
		"      --json           JSON output (json-c): reads, lists, writes, --etcd and\n"
		"                       audit one array of objects ({name, value}; with -d\n"
		"                       \"description\", with --generation \"generation\";\n"
		"                       --dry-run {name, old, new}), watch one object per line\n"
		"      --socket PATH    rcusysd's control socket (default $RCUSYSCTL_SOCKET or\n"
		"                       %s)\n"
		"      --root DIR       a tree mounted at DIR instead (rcusysd's FUSE mount, /proc/sys)\n"
		"      --etcd URL[,URL] the values a fleet mirrors, in etcd (rcustring-etcd(7)):\n"
		"                       -w puts (one transaction), -a lists them, hosts' status;\n"
		"                       user:password in $RCUSYSCTL_ETCD_CREDENTIALS, not the URL\n"
		"      --prefix P       with --etcd the mirrored prefix, e.g. /rcustring/web/;\n"
		"                       else -p and --system apply only keys at or below P\n"
		"                       (net.ipv4 or /proc/sys/net/ipv4), as systemd-sysctl's\n"
		"      --cat-config     print the files --system reads, in its order, each after\n"
		"                       \"# PATH\" (a masked one says so), as systemd-sysctl does\n"
		"      --cacert F, --cert F, --key F   TLS files for --etcd (passed to libcurl)\n"
		"  -o, -x               ignored, as procps ignores them (BSD compatibility)\n"
		"  -h, --help           this help\n"
		"  -V, --version        version\n\n"
		"Names print in procps' dotted form, or as /a.b/c when the first component\n"
		"holds a '.'; both read back as printed.\n\n"
		"Exit status: 0 on success, 1 if any name could not be read or written or a\n"
		"file line was malformed, 1 on a usage error (one line on stderr, naming the\n"
		"option), 255 for an empty name.\n",
		DEFAULT_SOCKET);
	exit(code);
}

/* A usage error in one line; getopt_long() has already named a bad option when @what is NULL. */
static int usage_error(const char *what)
{
	if (what)
		fprintf(stderr, "rcusysctl: %s\n", what);
	fprintf(stderr, "Try 'rcusysctl --help' for more information.\n");
	return 1;
}

/* --reset's names or -a, not both and not neither: NULL, or what is wrong. */
static const char *reset_misuse(bool all, int count)
{
	if (all && count)
		return "--reset: give names or -a, not both";
	if (!all && !count)
		return "--reset: name the entries to reset, or -a for every one";
	return NULL;
}

/*
 * Keep output and error lines in order when both go to one file or pipe
 * (line buffering); otherwise stdout is fully buffered, which saves a
 * write(2) per entry in a listing.
 */
static void keep_output_order(void)
{
	struct stat out, err;

	if (fstat(STDOUT_FILENO, &out) == 0 && fstat(STDERR_FILENO, &err) == 0 &&
	    out.st_dev == err.st_dev && out.st_ino == err.st_ino)
		setvbuf(stdout, NULL, _IOLBF, 0);
}

#ifdef ETCD_HELPER
/*
 * --etcd runs rcusysctl-etcd: this program again, linked with libcurl,
 * whose ~30 libraries cost ~20 ms at every start that no other use of
 * rcusysctl should pay. It is looked for next to this program first (the
 * build tree), then where it is installed.
 */
static int exec_etcd_helper(char **argv)
{
	char self[4096], path[4096 + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	fflush(stdout);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/rcusysctl-etcd", self);
			if (access(path, X_OK) == 0)
				execv(path, argv);
		}
	}
	execv(RCUSYSCTL_ETCD_HELPER, argv);
	fprintf(stderr, "rcusysctl: --etcd needs %s: %s\n", RCUSYSCTL_ETCD_HELPER, strerror(errno));
	return 1;
}
#endif

/* The command line's choices that only main's steps read (the rest are in o). */
struct cli {
	const char *etcd, *etcd_prefix, *cacert, *cert, *key;
	bool all, write, load, system_dirs, socket_given, reset, cat_config;
	const char *kept;     /* --kept's store; NULL: not asked */
	const char *load_now; /* -pFILE, --load=FILE: applied before the other FILE arguments */
	const char *sub;      /* "watch", "audit", "status" or "metrics" */
};

/* --if-generation N: -1 to go on, else the exit status. */
static int take_generation(const char *arg)
{
	char *end;

	errno = 0;
	opts.expected = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-') {
		fprintf(stderr, "rcusysctl: --if-generation \"%s\": expected a generation "
				"(a count of writes, 0 or more)\n", arg);
		return usage_error(NULL);
	}
	opts.if_generation = true;
	return -1;
}

/* One option of getopt_long(): -1 to go on, else the exit status. */
static int take_option(struct cli *c, int opt, char *arg)
{
	switch (opt) {
	case 'a': case 'A': case 'X': c->all = true; break;
	case 'n': opts.values_only = true; break;
	case 'N': opts.names_only = true; break;
	case 'w': c->write = true; break;
	case 'p': case 'f':
		if (c->load_now && arg)
			return usage_error("-p/--load: one FILE attached; give more as arguments");
		c->load = true;
		c->load_now = arg ? arg : c->load_now;
		break;
	case 'o': case 'x': break; /* procps: "does nothing, exists for BSD compatibility" */
	case 'Z': c->reset = true; break;
	case 'U': c->sub = "status"; break;
	case 'M': c->sub = "metrics"; break;
	case 'L': c->kept = arg ? arg : "/var/lib/rcusysd/state.conf"; break;
	case 'S': c->system_dirs = true; break;
	case 'k': c->cat_config = true; break;
	case 'e': opts.ignore_unknown = true; break;
	case 'q': opts.quiet = true; break;
	case 'b': opts.binary = true; break;
	case 'R': opts.root = arg; break;
	case 'O': opts.socket = arg; c->socket_given = true; break;
	case 'd': opts.describe = true; break;
	case 'E': c->etcd = arg; break;
	case 'P': c->etcd_prefix = arg; break;
	case 'C': c->cacert = arg; break;
	case 'T': c->cert = arg; break;
	case 'K': c->key = arg; break;
	case 'D': opts.deprecated = true; break;
	case 'J': opts.json = true; break;
	case 'Y': opts.dry_run = true; break;
	case 'W': opts.atomic = true; break;
	case 'G': opts.generation = true; break;
	case 'I': return take_generation(arg);
	case 'r':
		/* procps 4.0.2: a pattern that does not compile matches nothing. */
		if (opts.have_pattern)
			regfree(&opts.pattern);
		opts.have_pattern = regcomp(&opts.pattern, arg, REG_EXTENDED | REG_NOSUB) == 0;
		opts.pattern_invalid = !opts.have_pattern;
		break;
	case 'h': usage(stdout, 0); break;
	case 'V': printf("rcusysctl %s\n", RCUSYSCTL_VERSION); return 0;
	default: return usage_error(NULL); /* getopt_long() named the option */
	}
	return -1;
}

/* -1 to go on, else the exit status. */
static int parse_options(struct cli *c, int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "all", no_argument, NULL, 'a' },     { "values", no_argument, NULL, 'n' },
		{ "names", no_argument, NULL, 'N' },   { "write", no_argument, NULL, 'w' },
		{ "load", optional_argument, NULL, 'p' }, { "system", no_argument, NULL, 'S' },
		{ "reset", no_argument, NULL, 'Z' }, { "kept", optional_argument, NULL, 'L' },
		{ "ignore", no_argument, NULL, 'e' },  { "quiet", no_argument, NULL, 'q' },
		{ "pattern", required_argument, NULL, 'r' }, { "binary", no_argument, NULL, 'b' },
		{ "root", required_argument, NULL, 'R' }, { "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 'O' }, { "describe", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' }, { "deprecated", no_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'J' }, { "dry-run", no_argument, NULL, 'Y' },
		{ "generation", no_argument, NULL, 'G' }, { "status", no_argument, NULL, 'U' },
		{ "metrics", no_argument, NULL, 'M' },
		{ "if-generation", required_argument, NULL, 'I' },
		{ "etcd", required_argument, NULL, 'E' },
		{ "prefix", required_argument, NULL, 'P' }, { "cacert", required_argument, NULL, 'C' },
		{ "cert", required_argument, NULL, 'T' }, { "key", required_argument, NULL, 'K' },
		{ "cat-config", no_argument, NULL, 'k' }, { "atomic", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, code;

	while ((opt = getopt_long(argc, argv, "aAXnNwp::feqr:bdhVox", long_opts, NULL)) != -1)
		if ((code = take_option(c, opt, optarg)) >= 0)
			return code;
	return -1;
}

/* --etcd: the keys are etcd's, not a tree's. The exit status. */
static int run_etcd(const struct cli *c, int argc, char **argv)
{
#ifdef ETCD_HELPER
	(void)c, (void)argc;
	/* argv as getopt_long() permuted it: options first, same meaning. */
	return exec_etcd_helper(argv);
#elif defined(HAVE_ETCD)
	struct etcdcli_opts eo = { c->etcd, c->etcd_prefix, c->cacert, c->cert, c->key, c->all,
				   c->write, opts.quiet, opts.values_only, opts.json };

	if (optind < argc && !strcmp(argv[optind], "watch")) {
		fprintf(stderr, "rcusysctl: watch follows rcusysd's control socket, not etcd: "
				"drop --etcd, or run etcdctl watch --prefix %s\n",
			c->etcd_prefix ? c->etcd_prefix : "PREFIX");
		return 1;
	}
	if (!c->all && optind == argc)
		return usage_error("--etcd: name keys, or -a to list them");
	return etcdcli_main(&eo, argc - optind, argv + optind);
#else
	(void)c, (void)argc, (void)argv;
	fprintf(stderr, "rcusysctl: built without etcd support (libcurl and json-c)\n");
	return 1;
#endif
}

/*
 * --prefix without --etcd: what -p and --system apply, as systemd-sysctl
 * --prefix limits it ("net.ipv4", "/proc/sys/net/ipv4" or "net/ipv4").
 * -1 to go on, else the exit status.
 */
static int take_prefix(const struct cli *c)
{
	static char prefix[4096];
	const char *p = c->etcd_prefix;

	if (!c->load && !c->system_dirs)
		return usage_error("--prefix limits what -p and --system apply (or names the etcd "
				   "prefix, with --etcd); nothing else takes it");
	if (!strncmp(p, "/proc/sys/", 10))
		p += 10;
	snprintf(prefix, sizeof(prefix), "%s", p);
	rcusysctl_normalize_key(prefix);
	opts.prefix = prefix;
	return -1;
}

/* What a tree of files (--root) cannot do, and what goes with what: -1 or the exit status. */
static int check_modes(const struct cli *c, int argc)
{
	const char *sub = c->sub;

	if (c->reset && (opts.root || sub || c->load || c->system_dirs || c->write)) {
		return usage_error(opts.root ? "--reset needs the control socket; a tree of files (--root) "
					    "keeps no runtime values apart"
					  : "--reset takes names only (no -w, -p, --system, watch or audit)");
	}
	if (sub && opts.root) {
		fprintf(stderr, "rcusysctl: %s needs the control socket; a tree of files (--root) has none\n",
			sub);
		return 1;
	}
	if (sub && strcmp(sub, "watch") == 0 && optind == argc) {
		fprintf(stderr, "rcusysctl: watch: name at least one key\n");
		return 1;
	}
	if (opts.root && c->socket_given) {
		fprintf(stderr, "rcusysctl: --root and --socket exclude each other\n");
		return 1;
	}
	if (opts.root && (opts.generation || opts.if_generation)) {
		fprintf(stderr, "rcusysctl: generations need the control socket (--socket); "
				"a tree of files (--root) has none\n");
		return 1;
	}
	if (opts.atomic && (opts.root || sub || c->reset || opts.if_generation)) {
		fprintf(stderr, "rcusysctl: --atomic %s\n",
			opts.root ? "needs the control socket (--socket); a tree of files (--root) "
				    "has no commits"
			: opts.if_generation ? "and --if-generation exclude each other"
					     : "goes with -w, -p or --system only");
		return 1;
	}
	if (opts.root && opts.describe) {
		fprintf(stderr, "rcusysctl: descriptions need the control socket (--socket); "
				"a tree of files (--root) has none\n");
		return 1;
	}
	return -1;
}

/* The control socket, unless --root names a tree of files: 0 or 1. */
static int connect_tree(void)
{
	int err;

	if (opts.root)
		return 0;
	if (!opts.socket)
		opts.socket = getenv("RCUSYSCTL_SOCKET");
	if (!opts.socket || !*opts.socket)
		opts.socket = DEFAULT_SOCKET;
	err = socktree_open(opts.socket);
	if (err) {
		fprintf(stderr, "rcusysctl: cannot connect to %s: %s\n", opts.socket, strerror(-err));
		return 1;
	}
	return 0;
}

/* Reset, load or list, then each NAME or NAME=VALUE argument. The exit status. */
static int run_settings(const struct cli *c, int argc, char **argv)
{
	const char *misuse;
	int code = 0;

	/* Listings that print values take them with the names, in one reply. */
	if (!opts.root && !opts.describe && !opts.generation && !opts.names_only && !c->load &&
	    !c->system_dirs)
		socktree_values_in_walks(true);
	if (c->reset) {
		misuse = reset_misuse(c->all, argc - optind);
		if (misuse)
			code = usage_error(misuse);
		else
			settings_reset(c->all, argv + optind, argc - optind);
		optind = argc;
	} else if (c->system_dirs) {
		settings_load_system();
	} else if (c->load) {
		if (c->load_now)
			settings_load_file(c->load_now);
		else if (optind == argc)
			settings_load_file("/etc/sysctl.conf");
		while (optind < argc)
			settings_load_file(argv[optind++]);
	} else if (c->all) {
		settings_show_all();
	} else if (optind == argc) {
		return usage_error("name an entry, or -a to list every one");
	}
	for (; optind < argc; optind++) {
		if (c->write || strchr(argv[optind], '='))
			settings_write(argv[optind]);
		else if (opts.atomic)
			code = usage_error("--atomic: every name needs a value (name=value)");
		else
			settings_read(argv[optind]);
	}
	if (opts.atomic && !code)
		settings_commit();
	if (opts.json)
		json_list_print();
	return code ? code : settings_status();
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	int code;

	keep_output_order();
	code = parse_options(&c, argc, argv);
	if (code >= 0)
		return code;
	/* -b asks for the raw value; everything else printed to a terminal is escaped. */
	ttysafe_install(opts.binary);
	if (c.etcd)
		return run_etcd(&c, argc, argv);
	if (c.cat_config) /* files: no tree, no socket (--root: the kernel's directories) */
		return optind < argc ? usage_error("--cat-config takes no names") :
				       (settings_cat_config(), settings_status());
	if (c.etcd_prefix && (code = take_prefix(&c)) >= 0)
		return code;
	if (c.kept) /* a file: no tree, no socket */
		return optind < argc ? usage_error("--kept takes no names") :
				       kept_list(c.kept, opts.names_only);
	if (opts.json && !json_supported()) {
		fprintf(stderr, "rcusysctl: --json is unavailable: built without json-c\n");
		return 1;
	}
	if (!c.sub && optind < argc &&
	    (strcmp(argv[optind], "watch") == 0 || strcmp(argv[optind], "audit") == 0))
		c.sub = argv[optind++];
	code = check_modes(&c, argc);
	if (code >= 0)
		return code;
	if (connect_tree())
		return 1;
	if (c.sub && (strcmp(c.sub, "status") == 0 || strcmp(c.sub, "metrics") == 0)) {
		bool metrics = strcmp(c.sub, "metrics") == 0;

		code = optind < argc ? usage_error("--status and --metrics take no names")
		       : metrics && opts.json ? usage_error("--metrics prints the Prometheus text "
							   "format; no --json")
				     : report_print(strcmp(c.sub, "status") == 0 ? "STATUS" : "METRICS",
						    opts.json);
		socktree_close();
		return code;
	}
	if (c.sub) {
		struct stream_opts so = { opts.socket, opts.names_only, opts.values_only, opts.json };

		code = strcmp(c.sub, "watch") == 0 ? stream_watch(argv + optind, argc - optind, &so)
						   : stream_audit(&so);
		socktree_close();
		return code;
	}
	code = run_settings(&c, argc, argv);
	if (opts.have_pattern)
		regfree(&opts.pattern);
	if (!opts.root)
		socktree_close();
	return code;
}
