/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl: read and write a sysctl tree with procps sysctl(8) conventions,
 * over rcusysd's control socket (default; --socket PATH) or on a tree
 * mounted as files (--root DIR: rcusysd's FUSE mount, or /proc/sys).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <fnmatch.h>
#include <getopt.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirtree.h"
#include "jsonout.h"
#ifdef HAVE_ETCD
#include "etcdcli.h"
#endif
#include "socktree.h"
#include "stream.h"
#include "sysctl_conf.h"

#define DEFAULT_SOCKET "/run/rcusysd/control.sock"
#define VALUE_MAX 65536
/* --system: the kernel's sysctl.d directories for a tree of files (--root)... */
#define SYSTEM_DIRS "/etc/sysctl.d:/run/sysctl.d:/usr/local/lib/sysctl.d:/usr/lib/sysctl.d:/lib/sysctl.d"
/* ...and rcusysd's own over its control socket, which the kernel's do not concern. */
#define RCUSYSD_DIRS                                                                               \
	"/etc/rcusysd/sysctl.d:/run/rcusysd/sysctl.d:/usr/local/lib/rcusysd/sysctl.d:"             \
	"/usr/lib/rcusysd/sysctl.d"
#ifndef RCUSYSCTL_VERSION
#define RCUSYSCTL_VERSION "unknown"
#endif

struct opts {
	const char *root;   /* --root DIR: files; NULL: the socket */
	const char *socket; /* --socket PATH, $RCUSYSCTL_SOCKET, or the default */
	bool names_only, values_only, ignore_unknown, quiet, binary, describe;
	bool deprecated;      /* --deprecated: list deprecated entries too */
	bool json;            /* --json: one JSON array of {name, value} on stdout */
	bool dry_run;         /* --dry-run: writes print "name: old -> new" and write nothing */
	bool generation;      /* --generation: print generations instead of values */
	bool if_generation;   /* --if-generation N: writes only while the generation is N */
	uint64_t expected;
	bool have_pattern;
	bool pattern_invalid; /* -r REGEX that does not compile: matches nothing, as in procps */
	regex_t pattern;
};

static struct opts o;
static int exit_code;

/* ---- the two transports behind one set of calls ---- */

static int t_stat(const char *key)
{
	return o.root ? dirtree_stat(o.root, key) : socktree_stat(key);
}

static ssize_t t_read(const char *key, char *buf, size_t size)
{
	return o.root ? dirtree_read(o.root, key, buf, size) : socktree_read(key, buf, size);
}

static int t_write(const char *key, const char *value)
{
	if (o.if_generation)
		return socktree_write_if(key, value, o.expected);
	return o.root ? dirtree_write(o.root, key, value) : socktree_write(key, value);
}

static int t_walk(const char *key, int (*fn)(const char *key, void *arg), void *arg)
{
	return o.root ? dirtree_walk(o.root, key, fn, arg) : socktree_walk(key, fn, arg);
}

/* The name printed for @key ('/'-separated): sysctl_conf_dotted(), cut to @size. */
void rcusysctl_display_name(const char *key, char *out, size_t size)
{
	sysctl_conf_dotted(key, out, size);
}

/* A name as given (dotted or slash form, see display_name) to a '/' key. */
void rcusysctl_normalize_key(char *key)
{
	size_t lead;

	sysctl_conf_normalize_key(key);
	lead = strspn(key, "/");
	memmove(key, key + lead, strlen(key + lead) + 1);
}

/* What "cannot stat" names: the file under --root, the key on the socket. */
static const char *where(const char *key)
{
	static char buf[8192];

	if (o.root)
		snprintf(buf, sizeof(buf), "%s/%s", o.root, key);
	else
		rcusysctl_display_name(key, buf, sizeof(buf));
	return buf;
}

/* The server's own words when it gave some (they name limits), else strerror. */
static const char *why(int err)
{
	if (!o.root && *socktree_message())
		return socktree_message();
	return strerror(-err);
}

static void fail(void)
{
	exit_code = 1;
}

static void print_value(const char *name, char *value)
{
	size_t len = strlen(value);

	if (o.json) {
		struct json_object *j = json_obj_new();

		if (len && value[len - 1] == '\n')
			value[--len] = '\0';
		json_obj_str(j, "name", o.values_only ? NULL : name);
		json_obj_str(j, "value", o.names_only ? NULL : value);
		json_list_add(j);
		return;
	}
	if (o.names_only) {
		printf("%s\n", name);
		return;
	}
	if (o.binary) {
		/* procps -b: the value alone, each line without its newline. */
		for (const char *p = value; *p; p++)
			if (*p != '\n')
				putchar(*p);
		return;
	}
	if (len && value[len - 1] == '\n')
		value[--len] = '\0';
	if (o.values_only) {
		fputs(value, stdout);
		putchar('\n');
		return;
	}
	/* Multi-line values: one "name = line" per line, as procps does. */
	for (char *line = value, *nl;; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		printf("%s = %s\n", name, line);
		if (!nl)
			break;
	}
}

static char value_buf[VALUE_MAX];

/* Entries procps' listings leave out unless --deprecated (by base name). */
static bool is_deprecated(const char *key)
{
	static const char *const names[] = { "base_reachable_time", "retrans_time" };
	const char *base = strrchr(key, '/');

	base = base ? base + 1 : key;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(base, names[i]) == 0)
			return true;
	return false;
}

/* Reads and prints @key; quiet about unreadable entries when @listing. */
static int show_key(const char *key, bool listing)
{
	char name[4096];
	ssize_t n;

	rcusysctl_display_name(key, name, sizeof(name));
	if (o.pattern_invalid || (o.have_pattern && regexec(&o.pattern, name, 0, NULL, 0) != 0))
		return 0;
	if (listing && !o.deprecated && is_deprecated(key))
		return 0;
	if (o.names_only && listing) {
		char none[1] = "";

		print_value(name, none);
		return 0;
	}
	if (o.describe) {
		n = socktree_describe(key, value_buf, sizeof(value_buf));
	} else if (o.generation) {
		uint64_t g;

		n = socktree_generation(key, &g);
		if (n == 0)
			snprintf(value_buf, sizeof(value_buf), "%" PRIu64, g);
	} else {
		n = t_read(key, value_buf, sizeof(value_buf));
	}
	if (n < 0) {
		if (listing && (n == -EACCES || n == -EPERM || n == -EIO))
			return 0; /* write-only entries are skipped by -a */
		if (n == -ENOENT && o.ignore_unknown)
			return 0;
		if (n == -EACCES || n == -EPERM)
			fprintf(stderr, "rcusysctl: permission denied on key '%s'\n", name);
		else
			fprintf(stderr, "rcusysctl: reading key \"%s\": %s\n", name, why((int)n));
		fail();
		return 0;
	}
	print_value(name, value_buf);
	return 0;
}

static int show_walked(const char *key, void *arg)
{
	(void)arg;
	return show_key(key, true);
}

static void read_setting(const char *arg)
{
	char key[4096];
	int err;

	/* procps: an empty name is an error even with -e, and exits 255. */
	if (!*arg) {
		fprintf(stderr, "rcusysctl: \"\" is an unknown key\n");
		exit_code = 255;
		return;
	}
	snprintf(key, sizeof(key), "%s", arg);
	rcusysctl_normalize_key(key);
	err = t_stat(key);
	if (err == -EISDIR) {
		t_walk(key, show_walked, NULL);
		return;
	}
	if (err) {
		if (!(err == -ENOENT && o.ignore_unknown)) {
			fprintf(stderr, "rcusysctl: cannot stat %s: %s\n", where(key), strerror(-err));
			fail();
		}
		return;
	}
	show_key(key, false);
}

/* --dry-run: says what writing @value to @key would change; writes nothing. */
static int dry_run_write(const char *key, const char *name, const char *value)
{
	ssize_t n = t_read(key, value_buf, sizeof(value_buf));

	if (n < 0) {
		/* Write-only entries: the change cannot be shown, only announced. */
		printf("%s: (unreadable: %s) -> %s\n", name, why((int)n), value);
		return 0;
	}
	if (n > 0 && value_buf[n - 1] == '\n')
		value_buf[--n] = '\0';
	if (strcmp(value_buf, value) != 0)
		printf("%s: %s -> %s\n", name, value_buf, value);
	return 0;
}

/* Writes @value to @key (already in '/' form); returns 0 or -errno. */
static int write_key(const char *key, const char *value, bool ignore_failure)
{
	char name[4096];
	int err = t_stat(key);

	rcusysctl_display_name(key, name, sizeof(name));
	if (err == 0 && o.dry_run)
		return dry_run_write(key, name, value);
	if (err == 0)
		err = t_write(key, value);
	if (err) {
		if (ignore_failure || (err == -ENOENT && o.ignore_unknown))
			return 0;
		if (err == -ENOENT || err == -EISDIR)
			fprintf(stderr, "rcusysctl: cannot stat %s: %s\n", where(key), strerror(-err));
		else if (err == -EACCES || err == -EPERM)
			fprintf(stderr, "rcusysctl: permission denied on key '%s'\n", name);
		else
			fprintf(stderr, "rcusysctl: setting key \"%s\": %s\n", name, why(err));
		fail();
		return err;
	}
	if (!o.quiet) {
		if (o.json) {
			char copy[VALUE_MAX];

			snprintf(copy, sizeof(copy), "%s", value);
			print_value(name, copy);
		} else if (o.binary)
			fputs(value, stdout);
		else if (o.values_only)
			printf("%s\n", value);
		else if (!o.names_only)
			printf("%s = %s\n", name, value);
	}
	return 0;
}

/* @s without leading and trailing white space (in place). */
static char *strip(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

static void write_setting(const char *arg)
{
	char copy[8192], *key, *value, *eq;

	if (snprintf(copy, sizeof(copy), "%s", arg) >= (int)sizeof(copy)) {
		fprintf(stderr, "rcusysctl: \"%.64s...\": %s\n", arg, strerror(ENAMETOOLONG));
		fail();
		return;
	}
	eq = strchr(copy, '=');
	if (!eq || eq == copy) {
		fprintf(stderr, "rcusysctl: \"%s\" must be of the form name=value\n", arg);
		fail();
		return;
	}
	/* "name = value" as procps takes it: white space around both trimmed. */
	*eq = '\0';
	key = strip(copy);
	value = strip(eq + 1);
	rcusysctl_normalize_key(key);
	write_key(key, value, false);
}

/*
 * A set of files applied as systemd-sysctl applies them: each assignment in
 * the set's order; a glob writes the entries it matches that no explicit
 * key names and no later glob matches (sysctl_conf_set_lookup decides).
 */
struct glob_write {
	const struct sysctl_conf_set *set;
	const struct sysctl_conf_item *item;
};

static int write_if_match(const char *key, void *arg)
{
	struct glob_write *g = arg;

	if (sysctl_conf_set_lookup(g->set, key) == g->item)
		write_key(key, g->item->value, g->item->ignore_failure);
	return 0;
}

static void apply_set(const struct sysctl_conf_set *set)
{
	for (size_t i = 0; i < sysctl_conf_set_count(set); i++) {
		const struct sysctl_conf_item *it = sysctl_conf_set_item(set, i);

		if (it->glob) {
			struct glob_write g = { set, it };

			t_walk("", write_if_match, &g);
		} else {
			write_key(it->key, it->value, it->ignore_failure);
		}
	}
}

static const char *current_file;

static void conf_error(unsigned line, const char *message, void *arg)
{
	(void)arg;
	fprintf(stderr, "rcusysctl: %s:%u: invalid syntax: %s, continuing...\n", current_file, line,
		message);
	fail();
}

/* Adds @path ("-": stdin) to @set; a file that cannot be read is reported. */
static void add_file(struct sysctl_conf_set *set, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	char *text = NULL;
	size_t cap = 0, len = 0, n;
	int ret;

	if (!f) {
		fprintf(stderr, "rcusysctl: cannot open \"%s\": %s\n", path, strerror(errno));
		fail();
		return;
	}
	do {
		if (len == cap) {
			char *bigger = realloc(text, cap ? cap * 2 : 8192);

			if (!bigger) {
				fprintf(stderr, "rcusysctl: %s: out of memory\n", path);
				fail();
				goto out;
			}
			text = bigger;
			cap = cap ? cap * 2 : 8192;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	current_file = path;
	ret = sysctl_conf_set_add(set, path, text, len, conf_error, NULL);
	if (ret < 0) {
		fprintf(stderr, "rcusysctl: %s: %s\n", path, strerror(-ret));
		fail();
	}
out:
	free(text);
	if (f != stdin)
		fclose(f);
}

/* -p FILE: one file, applied as procps applies it. */
static void load_file(const char *path)
{
	struct sysctl_conf_set *set = sysctl_conf_set_new();

	if (!set) {
		fprintf(stderr, "rcusysctl: %s: out of memory\n", path);
		fail();
		return;
	}
	add_file(set, path);
	apply_set(set);
	sysctl_conf_set_free(set);
}

/*
 * --system: *.conf from each directory, the first directory holding a name
 * winning, merged into one set as systemd-sysctl merges them (and as
 * rcusysd does at start and at reload).
 */
static void load_system(void)
{
	const char *env = getenv("RCUSYSCTL_SYSTEM_DIRS");
	struct sysctl_conf_set *set = sysctl_conf_set_new();
	char **paths = NULL;
	ssize_t count = set ? sysctl_conf_list_dirs(env ? env : o.root ? SYSTEM_DIRS : RCUSYSD_DIRS,
						    &paths) : -ENOMEM;

	if (count < 0) {
		fprintf(stderr, "rcusysctl: --system: %s\n", strerror((int)-count));
		sysctl_conf_set_free(set);
		fail();
		return;
	}
	for (ssize_t i = 0; i < count; i++) {
		if (!o.quiet)
			printf("* Applying %s ...\n", paths[i]);
		add_file(set, paths[i]);
	}
	if (!env && o.root && access("/etc/sysctl.conf", R_OK) == 0) {
		if (!o.quiet)
			printf("* Applying /etc/sysctl.conf ...\n");
		add_file(set, "/etc/sysctl.conf");
	}
	apply_set(set);
	sysctl_conf_set_free(set);
	sysctl_conf_free_paths(paths, (size_t)count);
}

static void usage(FILE *out, int code)
{
	fprintf(out,
		"Usage: rcusysctl [options] [name[=value] ...]\n"
		"       rcusysctl [-n|-N] [--json] watch name...\n"
		"       rcusysctl [--json] audit\n"
		"Read and write an rcustring sysctl tree (procps sysctl conventions).\n"
		"watch prints each change of the named entries (one line each) until the\n"
		"server closes; audit prints the audit ring (seq, time, uid, pid, name:\n"
		"old -> new; root only). Both need the control socket.\n\n"
		"  -a, -A, --all        display all entries\n"
		"  -n, --values         print only values\n"
		"  -N, --names          print only names\n"
		"  -w, --write          write name=value arguments\n"
		"  -p, --load[=FILE] [FILE..]  apply sysctl.d-format files (default\n"
		"                       /etc/sysctl.conf; - is stdin); an explicit key beats a glob\n"
		"      --system         apply sysctl.d directories (*.conf, by base name): over\n"
		"                       the socket rcusysd's /etc/rcusysd/sysctl.d,\n"
		"                       /run/rcusysd/sysctl.d, /usr/local/lib/rcusysd/sysctl.d,\n"
		"                       /usr/lib/rcusysd/sysctl.d; with --root the kernel's\n"
		"                       /etc/sysctl.d, /run/sysctl.d, /usr/local/lib/sysctl.d,\n"
		"                       /usr/lib/sysctl.d, /lib/sysctl.d, then /etc/sysctl.conf;\n"
		"                       $RCUSYSCTL_SYSTEM_DIRS (DIR:DIR...) replaces them\n"
		"      --reset NAME..   drop rcusysd's runtime value of each NAME (-a: of every\n"
		"                       entry), so its configuration files apply again (socket only)\n"
		"      --dry-run        write nothing; print \"name: old -> new\" for each write\n"
		"                       that would change a value\n"
		"  -e, --ignore         ignore unknown names\n"
		"  -q, --quiet          do not echo written values\n"
		"  -r, --pattern REGEX  only names matching the extended regex\n"
		"  -b, --binary         print values alone, without newlines\n"
		"      --deprecated     list deprecated entries too (base_reachable_time,\n"
		"                       retrans_time)\n"
		"  -d, --describe       print descriptions instead of values (socket only)\n"
		"      --generation     print each entry's generation (its count of writes)\n"
		"                       instead of its value (socket only)\n"
		"      --if-generation N  write only while the entry's generation is N; a\n"
		"                       write that came first is refused (socket only)\n"
		"      --json           JSON output (json-c): reads, lists and audit one array\n"
		"                       of objects, watch one object per line\n"
		"      --socket PATH    rcusysd's control socket (default $RCUSYSCTL_SOCKET or\n"
		"                       %s)\n"
		"      --root DIR       a tree mounted at DIR instead (rcusysd's FUSE mount, /proc/sys)\n"
		"      --etcd URL[,URL] the values a fleet mirrors, in etcd (rcustring-etcd(7)):\n"
		"                       -w puts, -a lists them and the hosts' status keys\n"
		"      --prefix P       the mirrored prefix (with --etcd), e.g. /rcustring/web/\n"
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

/* --reset NAME...: each runtime value dropped; @all: every one. */
static void reset_keys(bool all, char **names, int count)
{
	char key[4096], name[4096];
	int err;

	if (all && count) {
		exit_code = usage_error("--reset: give names or -a, not both");
		return;
	}
	if (!all && !count) {
		exit_code = usage_error("--reset: name the entries to reset, or -a for every one");
		return;
	}
	if (all && (err = socktree_reset("")) != 0) {
		fprintf(stderr, "rcusysctl: resetting every entry: %s\n", why(err));
		fail();
	}
	for (int i = 0; i < count; i++) {
		snprintf(key, sizeof(key), "%s", names[i]);
		rcusysctl_normalize_key(key);
		err = socktree_reset(key);
		if (err) {
			rcusysctl_display_name(key, name, sizeof(name));
			fprintf(stderr, "rcusysctl: resetting key \"%s\": %s\n", name, why(err));
			fail();
		}
	}
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
	bool all, write, load, system_dirs, socket_given, reset;
	const char *load_now; /* -pFILE, --load=FILE: applied before the other FILE arguments */
	const char *sub;      /* "watch" or "audit" */
};

/* --if-generation N: -1 to go on, else the exit status. */
static int take_generation(const char *arg)
{
	char *end;

	errno = 0;
	o.expected = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-') {
		fprintf(stderr, "rcusysctl: --if-generation \"%s\": expected a generation "
				"(a count of writes, 0 or more)\n", arg);
		return usage_error(NULL);
	}
	o.if_generation = true;
	return -1;
}

/* One option of getopt_long(): -1 to go on, else the exit status. */
static int take_option(struct cli *c, int opt, char *arg)
{
	switch (opt) {
	case 'a': case 'A': case 'X': c->all = true; break;
	case 'n': o.values_only = true; break;
	case 'N': o.names_only = true; break;
	case 'w': c->write = true; break;
	case 'p': case 'f':
		if (c->load_now && arg)
			return usage_error("-p/--load: one FILE attached; give more as arguments");
		c->load = true;
		c->load_now = arg ? arg : c->load_now;
		break;
	case 'o': case 'x': break; /* procps: "does nothing, exists for BSD compatibility" */
	case 'Z': c->reset = true; break;
	case 'S': c->system_dirs = true; break;
	case 'e': o.ignore_unknown = true; break;
	case 'q': o.quiet = true; break;
	case 'b': o.binary = true; break;
	case 'R': o.root = arg; break;
	case 'O': o.socket = arg; c->socket_given = true; break;
	case 'd': o.describe = true; break;
	case 'E': c->etcd = arg; break;
	case 'P': c->etcd_prefix = arg; break;
	case 'C': c->cacert = arg; break;
	case 'T': c->cert = arg; break;
	case 'K': c->key = arg; break;
	case 'D': o.deprecated = true; break;
	case 'J': o.json = true; break;
	case 'Y': o.dry_run = true; break;
	case 'G': o.generation = true; break;
	case 'I': return take_generation(arg);
	case 'r':
		/* procps 4.0.2: a pattern that does not compile matches nothing. */
		if (o.have_pattern)
			regfree(&o.pattern);
		o.have_pattern = regcomp(&o.pattern, arg, REG_EXTENDED | REG_NOSUB) == 0;
		o.pattern_invalid = !o.have_pattern;
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
		{ "reset", no_argument, NULL, 'Z' },
		{ "ignore", no_argument, NULL, 'e' },  { "quiet", no_argument, NULL, 'q' },
		{ "pattern", required_argument, NULL, 'r' }, { "binary", no_argument, NULL, 'b' },
		{ "root", required_argument, NULL, 'R' }, { "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 'O' }, { "describe", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' }, { "deprecated", no_argument, NULL, 'D' },
		{ "json", no_argument, NULL, 'J' }, { "dry-run", no_argument, NULL, 'Y' },
		{ "generation", no_argument, NULL, 'G' },
		{ "if-generation", required_argument, NULL, 'I' },
		{ "etcd", required_argument, NULL, 'E' },
		{ "prefix", required_argument, NULL, 'P' }, { "cacert", required_argument, NULL, 'C' },
		{ "cert", required_argument, NULL, 'T' }, { "key", required_argument, NULL, 'K' },
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
				   c->write, o.quiet, o.values_only };

	if (!c->all && optind == argc)
		return usage_error("--etcd: name keys, or -a to list them");
	return etcdcli_main(&eo, argc - optind, argv + optind);
#else
	(void)c, (void)argc, (void)argv;
	fprintf(stderr, "rcusysctl: built without etcd support (libcurl and json-c)\n");
	return 1;
#endif
}

/* What a tree of files (--root) cannot do, and what goes with what: -1 or the exit status. */
static int check_modes(const struct cli *c, int argc)
{
	const char *sub = c->sub;

	if (c->reset && (o.root || sub || c->load || c->system_dirs || c->write)) {
		return usage_error(o.root ? "--reset needs the control socket; a tree of files (--root) "
					    "keeps no runtime values apart"
					  : "--reset takes names only (no -w, -p, --system, watch or audit)");
	}
	if (sub && o.root) {
		fprintf(stderr, "rcusysctl: %s needs the control socket; a tree of files (--root) has none\n",
			sub);
		return 1;
	}
	if (sub && strcmp(sub, "watch") == 0 && optind == argc) {
		fprintf(stderr, "rcusysctl: watch: name at least one key\n");
		return 1;
	}
	if (o.root && c->socket_given) {
		fprintf(stderr, "rcusysctl: --root and --socket exclude each other\n");
		return 1;
	}
	if (o.root && (o.generation || o.if_generation)) {
		fprintf(stderr, "rcusysctl: generations need the control socket (--socket); "
				"a tree of files (--root) has none\n");
		return 1;
	}
	if (o.root && o.describe) {
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

	if (o.root)
		return 0;
	if (!o.socket)
		o.socket = getenv("RCUSYSCTL_SOCKET");
	if (!o.socket || !*o.socket)
		o.socket = DEFAULT_SOCKET;
	err = socktree_open(o.socket);
	if (err) {
		fprintf(stderr, "rcusysctl: cannot connect to %s: %s\n", o.socket, strerror(-err));
		return 1;
	}
	return 0;
}

/* Reset, load or list, then each NAME or NAME=VALUE argument. The exit status. */
static int run_settings(const struct cli *c, int argc, char **argv)
{
	int err;

	/* Listings that print values take them with the names, in one reply. */
	if (!o.root && !o.describe && !o.generation && !o.names_only && !c->load && !c->system_dirs)
		socktree_values_in_walks(true);
	if (c->reset) {
		reset_keys(c->all, argv + optind, argc - optind);
		optind = argc;
	} else if (c->system_dirs) {
		load_system();
	} else if (c->load) {
		if (c->load_now)
			load_file(c->load_now);
		else if (optind == argc)
			load_file("/etc/sysctl.conf");
		while (optind < argc)
			load_file(argv[optind++]);
	} else if (c->all) {
		err = t_walk("", show_walked, NULL);
		if (err < 0) {
			fprintf(stderr, "rcusysctl: cannot read %s: %s\n", o.root ? o.root : o.socket,
				why(err));
			fail();
		}
	} else if (optind == argc) {
		return usage_error("name an entry, or -a to list every one");
	}
	for (; optind < argc; optind++) {
		if (c->write || strchr(argv[optind], '='))
			write_setting(argv[optind]);
		else
			read_setting(argv[optind]);
	}
	if (o.json)
		json_list_print();
	return exit_code;
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	int code;

	keep_output_order();
	code = parse_options(&c, argc, argv);
	if (code >= 0)
		return code;
	if (c.etcd)
		return run_etcd(&c, argc, argv);
	if (o.json && !json_supported()) {
		fprintf(stderr, "rcusysctl: --json is unavailable: built without json-c\n");
		return 1;
	}
	if (optind < argc && (strcmp(argv[optind], "watch") == 0 || strcmp(argv[optind], "audit") == 0))
		c.sub = argv[optind++];
	code = check_modes(&c, argc);
	if (code >= 0)
		return code;
	if (connect_tree())
		return 1;
	if (c.sub) {
		struct stream_opts so = { o.socket, o.names_only, o.values_only, o.json };

		code = strcmp(c.sub, "watch") == 0 ? stream_watch(argv + optind, argc - optind, &so)
						   : stream_audit(&so);
		socktree_close();
		return code;
	}
	code = run_settings(&c, argc, argv);
	if (o.have_pattern)
		regfree(&o.pattern);
	if (!o.root)
		socktree_close();
	return code;
}
