/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl --kept (kept_list.h): replays the journal (tools/rcusysd
 * journal.c, shared with the daemon) into a table and prints it. Reading
 * while rcusysd appends is safe: a record being written fails its
 * checksum and ends the listing there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../rcusysd/journal.h"
#include "../rcusysd/kept.h"
#include "kept_list.h"

static const char *const origins[] = { "client", "program", "settings file", "state file",
				       "mirror" };

static int replay(const struct journal_rec *r, void *arg)
{
	struct kept_map *m = arg;

	if (r->op == JOURNAL_SET)
		return kept_set(m, r->key, r->key_len, r->value, r->value_len, r->origin, r->time);
	if (r->op == JOURNAL_DROP)
		kept_drop(m, r->key, r->key_len);
	if (r->op == JOURNAL_COMMIT) /* several entries set as one: each is kept */
		return journal_commit_items(r, replay, m);
	return 0;
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(struct kept *const *)a)->key, (*(struct kept *const *)b)->key);
}

static void print_value(const char *v, size_t len)
{
	if (len && v[len - 1] == '\n')
		len--;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c == '\\')
			fputs("\\\\", stdout);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static void print_all(struct kept_map *m, bool names_only)
{
	qsort(m->all, m->n, sizeof(*m->all), by_key);
	for (size_t i = 0; i < m->n; i++) {
		const struct kept *k = m->all[i];
		time_t t = (time_t)k->time;
		char when[32] = "?";
		struct tm tm;

		if (names_only) {
			printf("%s\n", k->key);
			continue;
		}
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		printf("%s = ", k->key);
		print_value(k->value, k->len);
		printf("\t# %s, %s\n",
		       k->origin < sizeof(origins) / sizeof(*origins) ? origins[k->origin] : "?", when);
	}
}

static int read_file(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	char *buf;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return -EINVAL;
	}
	*len = 0;
	while ((n = read(fd, buf + *len, (size_t)st.st_size - *len)) > 0)
		*len += (size_t)n;
	close(fd);
	*out = buf;
	return n < 0 ? (free(buf), -errno) : 0;
}

int kept_list(const char *path, bool names_only)
{
	struct kept_map m = { 0 };
	char *text = NULL;
	size_t len = 0, good;
	int err = read_file(path, &text, &len);

	if (err == -ENOENT) {
		fprintf(stderr, "rcusysctl: %s: no store there (rcusysd has kept nothing yet)\n", path);
		return 1;
	}
	if (!err && !journal_is(text, len))
		err = -EPROTO;
	if (!err)
		err = journal_parse(text + JOURNAL_MAGIC_LEN, len - JOURNAL_MAGIC_LEN, replay, &m, &good);
	free(text);
	if (err) {
		fprintf(stderr, "rcusysctl: %s: %s\n", path,
			err == -EPROTO ? "not a journal (a text state file not migrated yet? rcusysd migrates it at start)" :
			err == -EINVAL ? "not a regular file" : strerror(-err));
		kept_free(&m);
		return 1;
	}
	print_all(&m, names_only);
	kept_free(&m);
	return 0;
}
