/*
 * rcusysctl: read and write a sysctl tree with procps sysctl(8) conventions,
 * over rcusysd's control socket (default; --socket PATH) or on a tree
 * mounted as files (--root DIR: rcusysd's FUSE mount, or /proc/sys).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirtree.h"
#ifdef HAVE_ETCD
#include "etcdcli.h"
#endif
#include "socktree.h"
#include "sysctl_conf.h"

#define DEFAULT_SOCKET "/run/rcusysd/control.sock"
#define VALUE_MAX 65536
#define SYSTEM_DIRS "/etc/sysctl.d:/run/sysctl.d:/usr/local/lib/sysctl.d:/usr/lib/sysctl.d:/lib/sysctl.d"

struct opts {
	const char *root;   /* --root DIR: files; NULL: the socket */
	const char *socket; /* --socket PATH, $RCUSYSCTL_SOCKET, or the default */
	bool names_only, values_only, ignore_unknown, quiet, binary, describe;
	bool have_pattern;
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
	return o.root ? dirtree_write(o.root, key, value) : socktree_write(key, value);
}

static int t_walk(const char *key, int (*fn)(const char *key, void *arg), void *arg)
{
	return o.root ? dirtree_walk(o.root, key, fn, arg) : socktree_walk(key, fn, arg);
}

/* What "cannot stat" names: the file under --root, the key on the socket. */
static const char *where(const char *key)
{
	static char buf[8192];

	if (o.root)
		snprintf(buf, sizeof(buf), "%s/%s", o.root, key);
	else
		dirtree_display_name(key, buf, sizeof(buf));
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

	if (o.names_only) {
		printf("%s\n", name);
		return;
	}
	if (len && value[len - 1] == '\n' && !o.binary)
		value[--len] = '\0';
	if (o.values_only) {
		fputs(value, stdout);
		if (!o.binary)
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

/* Reads and prints @key; quiet about unreadable entries when @listing. */
static int show_key(const char *key, bool listing)
{
	char name[4096];
	ssize_t n;

	dirtree_display_name(key, name, sizeof(name));
	if (o.have_pattern && regexec(&o.pattern, name, 0, NULL, 0) != 0)
		return 0;
	if (o.names_only && listing) {
		printf("%s\n", name);
		return 0;
	}
	if (o.describe)
		n = socktree_describe(key, value_buf, sizeof(value_buf));
	else
		n = t_read(key, value_buf, sizeof(value_buf));
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

	snprintf(key, sizeof(key), "%s", arg);
	sysctl_conf_normalize_key(key);
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

/* Writes @value to @key (already in '/' form); returns 0 or -errno. */
static int write_key(const char *key, const char *value, bool ignore_failure)
{
	char name[4096];
	int err = t_stat(key);

	dirtree_display_name(key, name, sizeof(name));
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
		if (o.values_only)
			printf("%s\n", value);
		else if (!o.names_only)
			printf("%s = %s\n", name, value);
	}
	return 0;
}

static void write_setting(const char *arg)
{
	char key[4096];
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg) {
		fprintf(stderr, "rcusysctl: \"%s\" must be of the form name=value\n", arg);
		fail();
		return;
	}
	snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
	sysctl_conf_normalize_key(key);
	write_key(key, eq + 1, false);
}

struct glob_write {
	const char *pattern, *value;
	bool ignore_failure;
};

static int write_if_match(const char *key, void *arg)
{
	struct glob_write *g = arg;

	if (fnmatch(g->pattern, key, FNM_PATHNAME) == 0)
		write_key(key, g->value, g->ignore_failure);
	return 0;
}

static int apply_item(const struct sysctl_conf_item *it, void *arg)
{
	(void)arg;
	if (it->glob) {
		struct glob_write g = { it->key, it->value, it->ignore_failure };

		t_walk("", write_if_match, &g);
		return 0;
	}
	write_key(it->key, it->value, it->ignore_failure);
	return 0;
}

static const char *current_file;

static void conf_error(unsigned line, const char *message, void *arg)
{
	(void)arg;
	fprintf(stderr, "rcusysctl: %s(%u): invalid syntax (%s), continuing...\n", current_file, line,
		message);
	fail();
}

static void load_file(const char *path)
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
	ret = sysctl_conf_parse(text, len, apply_item, conf_error, NULL);
	if (ret < 0) {
		fprintf(stderr, "rcusysctl: %s: %s\n", path, strerror(-ret));
		fail();
	}
out:
	free(text);
	if (f != stdin)
		fclose(f);
}

static int conf_only(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

/* sysctl.d: *.conf from each directory; the first directory holding a basename wins. */
static void load_system(void)
{
	const char *env = getenv("RCUSYSCTL_SYSTEM_DIRS");
	char *dirs = strdup(env ? env : SYSTEM_DIRS), *save = NULL;
	char **paths = NULL, **names = NULL;
	size_t count = 0;

	if (!dirs)
		return;
	for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		struct dirent **ents;
		int n = scandir(dir, &ents, conf_only, alphasort);

		for (int i = 0; i < n; i++) {
			bool seen = false;

			for (size_t j = 0; j < count; j++)
				seen = seen || strcmp(names[j], ents[i]->d_name) == 0;
			if (!seen) {
				char **np = realloc(names, (count + 1) * sizeof(*np));
				char **pp = np ? realloc(paths, (count + 1) * sizeof(*pp)) : NULL;

				if (np)
					names = np;
				if (pp)
					paths = pp;
				if (np && pp && asprintf(&paths[count], "%s/%s", dir, ents[i]->d_name) >= 0)
					names[count++] = strdup(ents[i]->d_name);
			}
			free(ents[i]);
		}
		if (n >= 0)
			free(ents);
	}
	/* Sorted by basename across directories. */
	for (size_t i = 0; i < count; i++)
		for (size_t j = i + 1; j < count; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char *t = names[i]; names[i] = names[j]; names[j] = t;
				t = paths[i]; paths[i] = paths[j]; paths[j] = t;
			}
	for (size_t i = 0; i < count; i++) {
		if (!o.quiet)
			printf("* Applying %s ...\n", paths[i]);
		load_file(paths[i]);
		free(paths[i]);
		free(names[i]);
	}
	if (!env && access("/etc/sysctl.conf", R_OK) == 0) {
		if (!o.quiet)
			printf("* Applying /etc/sysctl.conf ...\n");
		load_file("/etc/sysctl.conf");
	}
	free(paths);
	free(names);
	free(dirs);
}

static void usage(FILE *out, int code)
{
	fprintf(out,
		"Usage: rcusysctl [options] [name[=value] ...]\n"
		"Read and write an rcustring sysctl tree (procps sysctl conventions).\n\n"
		"  -a, -A, --all        display all entries\n"
		"  -n, --values         print only values\n"
		"  -N, --names          print only names\n"
		"  -w, --write          write name=value arguments\n"
		"  -p, --load [FILE..]  apply sysctl.d-format files (default /etc/sysctl.conf; - is stdin)\n"
		"      --system         apply the system sysctl.d directories\n"
		"  -e, --ignore         ignore unknown names\n"
		"  -q, --quiet          do not echo written values\n"
		"  -r, --pattern REGEX  only names matching the extended regex\n"
		"  -b, --binary         print values without a newline\n"
		"  -d, --describe       print descriptions instead of values (socket only)\n"
		"      --socket PATH    rcusysd's control socket (default $RCUSYSCTL_SOCKET or\n"
		"                       %s)\n"
		"      --root DIR       a tree mounted at DIR instead (rcusysd's FUSE mount, /proc/sys)\n"
		"      --etcd URL[,URL] the values a fleet mirrors, in etcd (rcustring-etcd(7)):\n"
		"                       -w puts, -a lists them and the hosts' status keys\n"
		"      --prefix P       the mirrored prefix (with --etcd), e.g. /rcustring/web/\n"
		"      --cacert F, --cert F, --key F   TLS files for --etcd (passed to libcurl)\n"
		"  -h, --help           this help\n"
		"  -V, --version        version\n\n"
		"Exit status: 0 on success, 1 if any name could not be read or written or a\n"
		"file line was malformed, 1 on a usage error.\n",
		DEFAULT_SOCKET);
	exit(code);
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "all", no_argument, NULL, 'a' },     { "values", no_argument, NULL, 'n' },
		{ "names", no_argument, NULL, 'N' },   { "write", no_argument, NULL, 'w' },
		{ "load", no_argument, NULL, 'p' },    { "system", no_argument, NULL, 'S' },
		{ "ignore", no_argument, NULL, 'e' },  { "quiet", no_argument, NULL, 'q' },
		{ "pattern", required_argument, NULL, 'r' }, { "binary", no_argument, NULL, 'b' },
		{ "root", required_argument, NULL, 'R' }, { "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 'O' }, { "describe", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' }, { "etcd", required_argument, NULL, 'E' },
		{ "prefix", required_argument, NULL, 'P' }, { "cacert", required_argument, NULL, 'C' },
		{ "cert", required_argument, NULL, 'T' }, { "key", required_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	const char *etcd = NULL, *etcd_prefix = NULL, *cacert = NULL, *cert = NULL, *key = NULL;
	bool all = false, write = false, load = false, system_dirs = false, socket_given = false;
	int opt, err;

	/* Keep output and error lines in order when both go to one pipe. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt_long(argc, argv, "aAXnNwpfeqr:bdhV", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'a': case 'A': case 'X': all = true; break;
		case 'n': o.values_only = true; break;
		case 'N': o.names_only = true; break;
		case 'w': write = true; break;
		case 'p': case 'f': load = true; break;
		case 'S': system_dirs = true; break;
		case 'e': o.ignore_unknown = true; break;
		case 'q': o.quiet = true; break;
		case 'b': o.binary = true; break;
		case 'R': o.root = optarg; break;
		case 'O': o.socket = optarg; socket_given = true; break;
		case 'd': o.describe = true; break;
		case 'E': etcd = optarg; break;
		case 'P': etcd_prefix = optarg; break;
		case 'C': cacert = optarg; break;
		case 'T': cert = optarg; break;
		case 'K': key = optarg; break;
		case 'r':
			if (regcomp(&o.pattern, optarg, REG_EXTENDED | REG_NOSUB) != 0) {
				fprintf(stderr, "rcusysctl: bad pattern \"%s\"\n", optarg);
				return 1;
			}
			o.have_pattern = true;
			break;
		case 'h': usage(stdout, 0); break;
		case 'V': printf("rcusysctl 0.1.0\n"); return 0;
		default: usage(stderr, 1);
		}
	}
	if (etcd) {
#ifdef HAVE_ETCD
		struct etcdcli_opts eo = { etcd, etcd_prefix, cacert, cert, key, all, write, o.quiet,
					   o.values_only };

		if (!all && optind == argc)
			usage(stderr, 1);
		return etcdcli_main(&eo, argc - optind, argv + optind);
#else
		(void)etcd_prefix, (void)cacert, (void)cert, (void)key;
		fprintf(stderr, "rcusysctl: built without etcd support (libcurl and json-c)\n");
		return 1;
#endif
	}
	if (o.root && socket_given) {
		fprintf(stderr, "rcusysctl: --root and --socket exclude each other\n");
		return 1;
	}
	if (o.root && o.describe) {
		fprintf(stderr, "rcusysctl: descriptions need the control socket (--socket); "
				"a tree of files (--root) has none\n");
		return 1;
	}
	if (!o.root) {
		if (!o.socket)
			o.socket = getenv("RCUSYSCTL_SOCKET");
		if (!o.socket || !*o.socket)
			o.socket = DEFAULT_SOCKET;
		err = socktree_open(o.socket);
		if (err) {
			fprintf(stderr, "rcusysctl: cannot connect to %s: %s\n", o.socket, strerror(-err));
			return 1;
		}
	}
	if (system_dirs) {
		load_system();
	} else if (load) {
		if (optind == argc)
			load_file("/etc/sysctl.conf");
		while (optind < argc)
			load_file(argv[optind++]);
	} else if (all) {
		err = t_walk("", show_walked, NULL);
		if (err < 0) {
			fprintf(stderr, "rcusysctl: cannot read %s: %s\n", o.root ? o.root : o.socket,
				why(err));
			fail();
		}
	} else if (optind == argc) {
		usage(stderr, 1);
	}
	for (; optind < argc; optind++) {
		if (write || strchr(argv[optind], '='))
			write_setting(argv[optind]);
		else
			read_setting(argv[optind]);
	}
	if (o.have_pattern)
		regfree(&o.pattern);
	if (!o.root)
		socktree_close();
	return exit_code;
}
