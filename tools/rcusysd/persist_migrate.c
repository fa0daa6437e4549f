/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A state file of rcusysd 0.1 (sysctl.d text, "path = value" lines)
 * migrated once to the journal (persist.h). Only a file that is wholly
 * such text is: a journal whose magic a bad sector or a stray write
 * flipped reads as text too (its records hold NUL bytes and lines that
 * are not assignments), and migrating it would apply nothing and write an
 * empty journal over every value it keeps. Anything else that is not a
 * journal is damage, and the start stops as for damage inside a journal.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "persist_int.h"
#include "sysctl_conf.h"

static int migrate_item(const struct sysctl_conf_item *it, void *arg)
{
	struct persist *p = arg;
	struct sysctl_entry *e;
	char *value, why[192];
	size_t len;
	int err;

	if (it->glob)
		return 0;
	err = sysctl_set_from(p->tree, it->key, *it->value ? it->value : "\n",
			      *it->value ? strlen(it->value) : 1, NULL, SYSCTL_ORIGIN_STATE);
	if (err) {
		persist_explain(p, it->key, err, why, sizeof(why));
		rlog(LOG_WARNING, "%s:%u: %s: %s (not restored; not migrated)", p->path, it->line,
		     it->key, why);
		return 0;
	}
	e = sysctl_lookup(p->tree, it->key);
	if (!e)
		return 0;
	err = persist_read_value(e, &value, &len);
	if (!err) {
		const char *key = sysctl_entry_path(e);

		err = kept_set(&p->map, key, strlen(key), value, len, SYSCTL_ORIGIN_STATE, time(NULL));
		free(value);
	}
	if (err) {
		persist_explain(p, it->key, err, why, sizeof(why));
		rlog(LOG_WARNING, "%s:%u: %s: %s (restored, not kept)", p->path, it->line, it->key,
		     why);
	}
	sysctl_entry_put(e);
	return 0;
}

static void migrate_error(unsigned line, const char *message, void *arg)
{
	struct persist *p = arg;

	rlog(LOG_WARNING, "%s:%u: %s (not restored)", p->path, line, message);
}

/* The first line that is not "key = value", a comment or blank. */
struct text_check {
	unsigned line;
	char why[128];
};

static int any_item(const struct sysctl_conf_item *it, void *arg)
{
	(void)it, (void)arg;
	return 0;
}

static void first_bad(unsigned line, const char *message, void *arg)
{
	struct text_check *tc = arg;

	if (!tc->line) {
		tc->line = line;
		snprintf(tc->why, sizeof(tc->why), "%s", message);
	}
}

/* The byte where line @line (1-based) of @text starts. */
static size_t line_start(const char *text, size_t len, unsigned line)
{
	size_t off = 0;

	while (--line && off < len) {
		const char *nl = memchr(text + off, '\n', len - off);

		if (!nl)
			return len;
		off = (size_t)(nl - text) + 1;
	}
	return off;
}

static int count_rec(const struct journal_rec *r, void *arg)
{
	(void)r;
	++*(size_t *)arg;
	return 0;
}

/*
 * 0 when @text is wholly a text state file; else -EBADMSG, logged with the
 * byte and the reason, and whether the rest reads as a journal (then only
 * its magic is damaged, and the operator can repair the first 8 bytes).
 */
static int check_text(struct persist *p, const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);
	struct text_check tc = { 0 };
	size_t at, records = 0, good = 0;
	char hint[160] = "";
	int err;

	if (nul) {
		at = (size_t)(nul - text);
		snprintf(tc.why, sizeof(tc.why), "a NUL byte");
	} else {
		err = sysctl_conf_parse(text, len, any_item, first_bad, &tc);
		if (err < 0)
			return err;
		if (!err)
			return 0;
		at = line_start(text, len, tc.line);
	}
	if (len > JOURNAL_MAGIC_LEN)
		journal_parse(text + JOURNAL_MAGIC_LEN, len - JOURNAL_MAGIC_LEN, count_rec, &records,
			      &good);
	if (records)
		snprintf(hint, sizeof(hint), "; from byte %u on it reads as a journal of %zu records "
			 "(%zu bytes): its first %u bytes, the magic, are damaged", JOURNAL_MAGIC_LEN,
			 records, good, JOURNAL_MAGIC_LEN);
	rlog(LOG_ERR, "%s: damaged: neither a journal (its first %u bytes are not \"%s\") nor a text "
	     "state file (byte %zu: %s)%s; not migrated, the file is left as it is", p->path,
	     JOURNAL_MAGIC_LEN, JOURNAL_MAGIC, at, tc.why, hint);
	return -EBADMSG;
}

int persist_migrate(struct persist *p, const char *text, size_t len)
{
	char old[NAME_MAX + 48];
	int tries = 0, rc = check_text(p, text, len);

	if (rc)
		return rc;
	if (p->check) { /* its lines are checked, the file left as it is */
		sysctl_conf_parse(text, len, migrate_item, migrate_error, p);
		return 0;
	}
	/* A second migration in the same second (a copied-in text file) gets ".N". */
	do {
		int n = snprintf(old, sizeof(old), "%s.migrated-%lld", p->name, (long long)time(NULL));

		if (tries)
			snprintf(old + n, sizeof(old) - (size_t)n, ".%d", tries);
		rc = linkat(p->dirfd, p->name, p->dirfd, old, 0);
	} while (rc != 0 && errno == EEXIST && ++tries < 100);
	if (rc != 0) {
		int err = -errno;

		rlog(LOG_ERR, "%s: cannot keep the text state file as %s: %s (not migrated)", p->path,
		     old, strerror(-err));
		return err;
	}
	sysctl_conf_parse(text, len, migrate_item, migrate_error, p);
	rlog(LOG_NOTICE, "%s: migrated %zu values of a text state file to the journal (the old file is %s)",
	     p->path, p->map.n, old);
	return 0;
}
