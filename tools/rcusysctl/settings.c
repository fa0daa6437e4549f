/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What rcusysctl does with names and values, once main.c has read the
 * command line into opts: read and print entries, write them, apply
 * sysctl.d files, reset runtime values; over the control socket or on a
 * tree of files (--root), the two transports behind one set of calls.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic.h"
#include "dirtree.h"
#include "jsonout.h"
#include "keys.h"
#include "settings.h"
#include "socktree.h"
#include "sysctl_conf.h"
#include "trusted_file.h"

#define VALUE_MAX 65536
/* --system: the kernel's sysctl.d directories for a tree of files (--root)... */
#define SYSTEM_DIRS "/etc/sysctl.d:/run/sysctl.d:/usr/local/lib/sysctl.d:/usr/lib/sysctl.d:/lib/sysctl.d"
/* ...and rcusysd's own over its control socket, which the kernel's do not concern. */
#define RCUSYSD_DIRS                                                                               \
	"/etc/rcusysd/sysctl.d:/run/rcusysd/sysctl.d:/usr/local/lib/rcusysd/sysctl.d:"             \
	"/usr/lib/rcusysd/sysctl.d"

struct settings_opts opts;
static int exit_code;

/* ---- the two transports behind one set of calls ---- */

static int t_stat(const char *key)
{
	return opts.root ? dirtree_stat(opts.root, key) : socktree_stat(key);
}

static ssize_t t_read(const char *key, char *buf, size_t size)
{
	return opts.root ? dirtree_read(opts.root, key, buf, size) : socktree_read(key, buf, size);
}

/*
 * -p and --system run by root apply root's settings: rcusysd takes them as
 * a settings file's (APPLY), which may set the entries root executes, so
 * their files passed the one file check first (read_settings()). Anyone
 * else's are that user's own writes, sent as -w sends them: rcusysd holds
 * them to the user's rights and keeps them as it keeps any client write.
 */
static bool applying_settings;

static int t_write(const char *key, const char *value)
{
	if (opts.if_generation)
		return socktree_write_if(key, value, opts.expected);
	if (opts.root)
		return dirtree_write(opts.root, key, value);
	return applying_settings ? socktree_apply(key, value) : socktree_write(key, value);
}

static int t_walk(const char *key, int (*fn)(const char *key, void *arg), void *arg)
{
	return opts.root ? dirtree_walk(opts.root, key, fn, arg) : socktree_walk(key, fn, arg);
}

/* What "cannot stat" names: the file under --root, the key on the socket. */
static const char *where(const char *key)
{
	static char buf[8192];

	if (opts.root)
		snprintf(buf, sizeof(buf), "%s/%s", opts.root, key);
	else
		rcusysctl_display_name(key, buf, sizeof(buf));
	return buf;
}

/* The server's own words when it gave some (they name limits), else strerror. */
static const char *why(int err)
{
	if (!opts.root && *socktree_message())
		return socktree_message();
	return strerror(-err);
}

static void fail(void)
{
	exit_code = 1;
}

int settings_status(void)
{
	return exit_code;
}

static void print_value(const char *name, char *value)
{
	size_t len = strlen(value);

	if (opts.json) {
		struct json_object *j = json_obj_new();

		if (len && value[len - 1] == '\n')
			value[--len] = '\0';
		json_obj_str(j, "name", opts.values_only ? NULL : name);
		/* What the member holds, by its name: a description or a count is no value. */
		if (opts.generation && !opts.names_only)
			json_obj_int(j, "generation", strtoll(value, NULL, 10));
		else
			json_obj_str(j, opts.describe ? "description" : "value",
				     opts.names_only ? NULL : value);
		json_list_add(j);
		return;
	}
	if (opts.names_only) {
		printf("%s\n", name);
		return;
	}
	if (opts.binary) {
		/* procps -b: the value alone, each line without its newline. */
		for (const char *p = value; *p; p++)
			if (*p != '\n')
				putchar(*p);
		return;
	}
	if (len && value[len - 1] == '\n')
		value[--len] = '\0';
	if (opts.values_only) {
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
	if (opts.pattern_invalid || (opts.have_pattern && regexec(&opts.pattern, name, 0, NULL, 0) != 0))
		return 0;
	if (listing && !opts.deprecated && is_deprecated(key))
		return 0;
	if (opts.names_only && listing) {
		char none[1] = "";

		print_value(name, none);
		return 0;
	}
	if (opts.describe) {
		n = socktree_describe(key, value_buf, sizeof(value_buf));
	} else if (opts.generation) {
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
		if (n == -ENOENT && opts.ignore_unknown)
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

void settings_read(const char *arg)
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
		if (!(err == -ENOENT && opts.ignore_unknown)) {
			fprintf(stderr, "rcusysctl: cannot stat %s: %s\n", where(key), strerror(-err));
			fail();
		}
		return;
	}
	show_key(key, false);
}

/* -a: every entry (and with --root, every file) that can be read. */
void settings_show_all(void)
{
	int err = t_walk("", show_walked, NULL);

	if (err < 0) {
		fprintf(stderr, "rcusysctl: cannot read %s: %s\n", opts.root ? opts.root : opts.socket,
			why(err));
		fail();
	}
}

/* --dry-run: says what writing @value to @key would change; writes nothing. */
static int dry_run_write(const char *key, const char *name, const char *value)
{
	ssize_t n = t_read(key, value_buf, sizeof(value_buf));

	struct json_object *j;

	if (n > 0 && value_buf[n - 1] == '\n')
		value_buf[--n] = '\0';
	if (n >= 0 && strcmp(value_buf, value) == 0)
		return 0;
	if (opts.json) { /* {name, old, new}; "old" left out, "error" said, for a write-only entry */
		j = json_obj_new();
		json_obj_str(j, "name", name);
		json_obj_str(j, "old", n >= 0 ? value_buf : NULL);
		json_obj_str(j, "new", value);
		json_obj_str(j, "error", n < 0 ? why((int)n) : NULL);
		json_list_add(j);
	} else if (n < 0) {
		/* Write-only entries: the change cannot be shown, only announced. */
		printf("%s: (unreadable: %s) -> %s\n", name, why((int)n), value);
	} else {
		printf("%s: %s -> %s\n", name, value_buf, value);
	}
	return 0;
}

/* "name = value" for a write done, as procps echoes it (not with -q). */
static void echo_write(const char *name, const char *value)
{
	if (opts.quiet)
		return;
	if (opts.json) {
		char copy[VALUE_MAX];

		snprintf(copy, sizeof(copy), "%s", value);
		print_value(name, copy);
	} else if (opts.binary) {
		fputs(value, stdout);
	} else if (opts.values_only) {
		printf("%s\n", value);
	} else if (!opts.names_only) {
		printf("%s = %s\n", name, value);
	}
}

static bool commit_of_settings; /* --atomic: what settings_commit() sends */

/* --atomic: one more write for the commit, unless one failed already. */
static int collect(const char *key, const char *name, const char *value)
{
	int err = settings_status() ? 0 : atomic_add(key, name, value);

	commit_of_settings |= applying_settings;
	if (err)
		fail();
	return err;
}

void settings_commit(void)
{
	/* One refused key (unknown, say) before the commit: nothing is sent. */
	if (settings_status()) {
		fprintf(stderr, "rcusysctl: --atomic: nothing was changed\n");
		return;
	}
	if (atomic_commit(commit_of_settings, echo_write))
		fail();
}

/* Writes @value to @key (already in '/' form); returns 0 or -errno. */
static int write_key(const char *key, const char *value, bool ignore_failure)
{
	char name[4096];
	int err = t_stat(key);

	rcusysctl_display_name(key, name, sizeof(name));
	if (err == 0 && opts.dry_run)
		return dry_run_write(key, name, value);
	if (err == 0 && opts.atomic)
		return collect(key, name, value);
	if (err == 0)
		err = t_write(key, value);
	if (err) {
		if (ignore_failure || (err == -ENOENT && opts.ignore_unknown))
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
	echo_write(name, value);
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

void settings_write(const char *arg)
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

/* --prefix without --etcd: only keys at or below it apply, as systemd-sysctl --prefix. */
static bool under_prefix(const char *key)
{
	size_t n = opts.prefix ? strlen(opts.prefix) : 0;

	return !n || (!strncmp(key, opts.prefix, n) && (key[n] == '\0' || key[n] == '/'));
}

static int write_if_match(const char *key, void *arg)
{
	struct glob_write *g = arg;

	if (under_prefix(key) && sysctl_conf_set_lookup(g->set, key) == g->item)
		write_key(key, g->item->value, g->item->ignore_failure);
	return 0;
}

static void apply_set(const struct sysctl_conf_set *set)
{
	applying_settings = geteuid() == 0;
	for (size_t i = 0; i < sysctl_conf_set_count(set); i++) {
		const struct sysctl_conf_item *it = sysctl_conf_set_item(set, i);

		if (it->glob) {
			struct glob_write g = { set, it };

			t_walk("", write_if_match, &g);
		} else if (under_prefix(it->key)) {
			write_key(it->key, it->value, it->ignore_failure);
		}
	}
	applying_settings = false;
}

static const char *current_file;

static void conf_error(unsigned line, const char *message, void *arg)
{
	(void)arg;
	fprintf(stderr, "rcusysctl: %s:%u: invalid syntax: %s, continuing...\n", current_file, line,
		message);
	fail();
}

/*
 * Reads @path ("-": stdin, which its invoker chose); a refusal is printed
 * as rcusysd logs its own ("PATH: refused: WHY (skipped)"), so the two
 * tools refuse a file in the same words. @trusted: through the one file
 * check (trusted_file.h), for
 * files applied as root's settings and for --system's, which are the
 * files rcusysd itself would apply; else only a regular file, which a
 * FIFO or a device is not, so nothing blocks.
 * Return: 0 with *@text (malloc'd) and *@len, 1 with "" for a masked file
 * (a link to /dev/null), or a negative errno, the refusal printed.
 */
static int read_settings(const char *path, bool trusted, char **text, size_t *len)
{
	char why[512];
	int err;

	if (strcmp(path, "-") == 0)
		err = trusted_file_read_fd(STDIN_FILENO, TRUSTED_FILE_MAX, text, len, why, sizeof(why));
	else if (trusted)
		err = trusted_file_read(path, TRUSTED_FILE_MAX, text, len, why, sizeof(why));
	else
		err = trusted_file_read_plain(path, TRUSTED_FILE_MAX, text, len, why, sizeof(why));
	if (err < 0) {
		fprintf(stderr, "rcusysctl: %s: %s: %s (skipped)\n", path, trusted_file_verdict(err), why);
		fail();
	}
	return err;
}

/* Adds @path's settings to @set (read_settings() says how it is read). */
static void add_file(struct sysctl_conf_set *set, const char *path, bool trusted)
{
	size_t len = 0;
	char *text = NULL;
	int ret = read_settings(path, trusted, &text, &len);

	if (ret < 0)
		return;
	current_file = path;
	ret = sysctl_conf_set_add(set, path, text, len, conf_error, NULL);
	if (ret < 0) {
		fprintf(stderr, "rcusysctl: %s: %s\n", path, strerror(-ret));
		fail();
	}
	free(text);
}

/* -p FILE: one file, applied as procps applies it. */
void settings_load_file(const char *path)
{
	struct sysctl_conf_set *set = sysctl_conf_set_new();

	if (!set) {
		fprintf(stderr, "rcusysctl: %s: out of memory\n", path);
		fail();
		return;
	}
	/* Root's -p is root's settings; another user's, that user's writes. */
	add_file(set, path, geteuid() == 0);
	apply_set(set);
	sysctl_conf_set_free(set);
}

/*
 * --system's files in the order they apply: *.conf from each directory,
 * the first directory holding a name winning (sysctl_conf_list_dirs()),
 * then, for the kernel's tree, /etc/sysctl.conf as procps reads it last.
 * The count, or -ENOMEM (printed); free with sysctl_conf_free_paths().
 */
static ssize_t system_files(const char *what, char ***out)
{
	const char *env = getenv("RCUSYSCTL_SYSTEM_DIRS");
	char **paths = NULL, **more, *conf;
	ssize_t count = sysctl_conf_list_dirs(env ? env : opts.root ? SYSTEM_DIRS : RCUSYSD_DIRS,
					      &paths);

	if (count >= 0 && !env && opts.root && access("/etc/sysctl.conf", R_OK) == 0) {
		more = realloc(paths, ((size_t)count + 1) * sizeof(*paths));
		conf = strdup("/etc/sysctl.conf");
		if (more)
			paths = more;
		if (more && conf) {
			paths[count++] = conf;
		} else {
			free(conf);
			sysctl_conf_free_paths(paths, (size_t)count);
			count = -ENOMEM;
		}
	}
	if (count < 0) {
		fprintf(stderr, "rcusysctl: %s: %s\n", what, strerror((int)-count));
		fail();
		return count;
	}
	*out = paths;
	return count;
}

/*
 * Debian's /etc/sysctl.d/99-sysctl.conf is a link to ../sysctl.conf. The
 * file check follows no link, and this one need not be followed: with
 * --root, --system reads /etc/sysctl.conf itself, last (system_files()).
 */
static bool links_to_last(char **paths, ssize_t i, ssize_t count)
{
	char real[PATH_MAX];
	struct stat st;

	return i < count - 1 && !strcmp(paths[count - 1], "/etc/sysctl.conf") &&
	       lstat(paths[i], &st) == 0 && S_ISLNK(st.st_mode) && realpath(paths[i], real) &&
	       !strcmp(real, paths[count - 1]);
}

/*
 * --system: the files merged into one set as systemd-sysctl merges them
 * (and as rcusysd does at start and at reload), then applied.
 */
void settings_load_system(void)
{
	struct sysctl_conf_set *set = sysctl_conf_set_new();
	char **paths = NULL;
	ssize_t count = set ? system_files("--system", &paths) : -ENOMEM;

	if (count < 0) {
		if (!set)
			fprintf(stderr, "rcusysctl: --system: %s\n", strerror(ENOMEM)), fail();
		sysctl_conf_set_free(set);
		return;
	}
	for (ssize_t i = 0; i < count; i++) {
		bool link = links_to_last(paths, i, count);

		if (!opts.quiet && !opts.json)
			printf(link ? "* Skipping %s: a link to %s, applied last ...\n" :
				      "* Applying %s ...\n", paths[i], paths[count - 1]);
		if (!link)
			add_file(set, paths[i], true);
	}
	apply_set(set);
	sysctl_conf_set_free(set);
	sysctl_conf_free_paths(paths, (size_t)count);
}

/*
 * --cat-config: the files --system reads, in its order, each after a
 * "# PATH" line and separated by an empty line, as systemd-sysctl
 * --cat-config prints them; a masked file says so instead of its text,
 * and a file --system would refuse is refused here too.
 */
void settings_cat_config(void)
{
	char **paths = NULL;
	ssize_t count = system_files("--cat-config", &paths);

	for (ssize_t i = 0; i < count; i++) {
		size_t len = 0;
		char *text = NULL;
		int ret;

		printf("%s# %s\n", i ? "\n" : "", paths[i]);
		if (links_to_last(paths, i, count)) {
			printf("# a link to %s, shown last\n", paths[count - 1]);
			continue;
		}
		fflush(stdout); /* before read_settings()' refusal on stderr */
		ret = read_settings(paths[i], true, &text, &len);
		if (ret < 0)
			continue;
		if (ret == 1)
			printf("# masked: a link to /dev/null hides the files of its name\n");
		fwrite(text, 1, len, stdout);
		if (len && text[len - 1] != '\n') /* the next "# PATH" on a line of its own */
			putchar('\n');
		free(text);
	}
	if (count > 0)
		sysctl_conf_free_paths(paths, (size_t)count);
}

/* --reset NAME...: each runtime value dropped; @all: every one. */
void settings_reset(bool all, char **names, int count)
{
	char key[4096], name[4096];
	int err;

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
