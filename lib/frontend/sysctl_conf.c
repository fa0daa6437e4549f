/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path_form.h"
#include "sysctl_conf.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static char *strip(char *s)
{
	char *end;

	while (is_blank(*s))
		s++;
	end = s + strlen(s);
	while (end > s && is_blank(end[-1]))
		*--end = '\0';
	return s;
}

void sysctl_conf_normalize_key(char *key)
{
	rcs_path_to_slash(key);
}

const char *sysctl_conf_dotted(const char *key, char *buf, size_t size)
{
	size_t first;

	key += strspn(key, "/");
	first = strcspn(key, "/");
	if (memchr(key, '.', first)) {
		snprintf(buf, size, "/%s", key);
		return buf;
	}
	snprintf(buf, size, "%s", key);
	rcs_path_swap_separators(buf);
	return buf;
}

/* Parses one NUL-terminated line (modified in place). */
static int parse_line(char *line, unsigned lineno, sysctl_conf_item_fn *on_item,
		      sysctl_conf_error_fn *on_error, void *arg, int *errors)
{
	struct sysctl_conf_item item = { .line = lineno };
	char *eq, *key;

	line = strip(line);
	if (*line == '\0' || *line == '#' || *line == ';')
		return 0;
	eq = strchr(line, '=');
	if (!eq) {
		char msg[128];

		(*errors)++;
		snprintf(msg, sizeof(msg), "\"%.64s%s\" is not an assignment (expected key = value)", line,
			 strlen(line) > 64 ? "..." : "");
		if (on_error)
			on_error(lineno, msg, arg);
		return 0;
	}
	*eq = '\0';
	key = strip(line);
	if (*key == '-') {
		item.ignore_failure = true;
		key = strip(key + 1);
	}
	if (*key == '\0') {
		(*errors)++;
		if (on_error)
			on_error(lineno, "empty key (expected key = value)", arg);
		return 0;
	}
	sysctl_conf_normalize_key(key);
	item.key = key;
	item.value = strip(eq + 1);
	item.glob = strpbrk(key, "*?[") != NULL;
	return on_item ? on_item(&item, arg) : 0;
}

int sysctl_conf_parse(const char *text, size_t len, sysctl_conf_item_fn *on_item,
		      sysctl_conf_error_fn *on_error, void *arg)
{
	char *line = malloc(SYSCTL_CONF_LINE_MAX + 1);
	unsigned lineno = 0;
	int errors = 0, ret = 0;
	size_t pos = 0;

	if (!line)
		return -ENOMEM;
	while (pos < len && ret == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = (nl ? (size_t)(nl - text) : len) - pos;

		lineno++;
		if (n > SYSCTL_CONF_LINE_MAX || memchr(text + pos, '\0', n)) {
			errors++;
			if (on_error)
				on_error(lineno, n > SYSCTL_CONF_LINE_MAX ? "line too long (at most 66560 bytes)" :
					 "NUL byte in line", arg);
		} else {
			memcpy(line, text + pos, n);
			line[n] = '\0';
			ret = parse_line(line, lineno, on_item, on_error, arg, &errors);
		}
		pos += n + 1;
	}
	free(line);
	return ret ? ret : errors;
}

/*
 * The merged set: items in merge order, and an index of their keys (open
 * addressing, each slot an item's index + 1, at most half full), so that
 * adding N lines and looking N keys up cost O(N), not O(N^2) (a scan per
 * line made a start with 40 000 settings take 18 s). A repeated key's
 * earlier item is only marked replaced (key NULL) and its slot moved to
 * the new one; sysctl_conf_set_add() packs the items once per file.
 * Globs are also listed apart, as a lookup tries every one of them.
 */
struct sysctl_conf_set {
	struct sysctl_conf_item *items; /* strings owned: key, value, file */
	size_t count, cap;              /* count includes the replaced */
	size_t replaced;                /* items whose key is NULL, until packed */
	uint32_t *slot;                 /* item index + 1; 0: empty */
	size_t mask;                    /* slots - 1; no slots while 0 */
	size_t *globs, nglobs;          /* indexes of the glob items, in order */
	unsigned long *probes;          /* test hook: keys compared (sysctl_conf_set_count_probes) */
	sysctl_conf_stop_fn *stop;      /* asked every SYSCTL_CONF_STOP_EVERY lines; NULL: never */
	void *stop_arg;
};

struct sysctl_conf_set *sysctl_conf_set_new(void)
{
	return calloc(1, sizeof(struct sysctl_conf_set));
}

static void item_free(struct sysctl_conf_item *it)
{
	free((char *)it->key);
	free((char *)it->value);
	free((char *)it->file);
}

void sysctl_conf_set_free(struct sysctl_conf_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++)
		item_free(&s->items[i]);
	free(s->items);
	free(s->slot);
	free(s->globs);
	free(s);
}

void sysctl_conf_set_count_probes(struct sysctl_conf_set *s, unsigned long *counter)
{
	s->probes = counter;
}

void sysctl_conf_set_stop(struct sysctl_conf_set *s, sysctl_conf_stop_fn *stop, void *arg)
{
	s->stop = stop;
	s->stop_arg = arg;
}

static size_t hash_key(const char *key)
{
	size_t h = 2166136261u; /* FNV-1a */

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return h;
}

/* The slot holding @key, or the empty slot where it would go (s->mask > 0). */
static uint32_t *key_slot(const struct sysctl_conf_set *s, const char *key)
{
	size_t i = hash_key(key) & s->mask;

	for (; s->slot[i]; i = (i + 1) & s->mask) {
		if (s->probes)
			*s->probes += 1;
		if (!strcmp(s->items[s->slot[i] - 1].key, key))
			break;
	}
	return &s->slot[i];
}

/*
 * Indexes the live items again in @slots slots (a power of two), the
 * table's own when it has as many: packing the items then cannot fail.
 */
static int reindex(struct sysctl_conf_set *s, size_t slots)
{
	if (slots == s->mask + 1) {
		memset(s->slot, 0, slots * sizeof(*s->slot));
	} else {
		uint32_t *slot = calloc(slots, sizeof(*slot));

		if (!slot)
			return -ENOMEM;
		free(s->slot);
		s->slot = slot;
		s->mask = slots - 1;
	}
	s->nglobs = 0;
	for (size_t i = 0; i < s->count; i++) {
		if (!s->items[i].key)
			continue;
		*key_slot(s, s->items[i].key) = (uint32_t)i + 1;
		if (s->items[i].glob)
			s->globs[s->nglobs++] = i;
	}
	return 0;
}

/* Room for one more item, its slot and its glob index. */
static int set_reserve(struct sysctl_conf_set *s)
{
	size_t slots = s->mask + 1;

	if (s->count + 1 >= UINT32_MAX)
		return -ENOMEM;
	if (s->count == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct sysctl_conf_item *items = realloc(s->items, cap * sizeof(*items));
		size_t *globs = items ? realloc(s->globs, cap * sizeof(*globs)) : NULL;

		if (items)
			s->items = items;
		if (!globs)
			return -ENOMEM;
		s->globs = globs;
		s->cap = cap;
	}
	if (!s->mask || 2 * (s->count + 1) > slots)
		return reindex(s, s->mask ? 2 * slots : 32);
	return 0;
}

/* Drops the replaced items, so that items[] is the merge order again. */
static void set_pack(struct sysctl_conf_set *s)
{
	size_t n = 0;

	if (!s->replaced)
		return;
	for (size_t i = 0; i < s->count; i++)
		if (s->items[i].key)
			s->items[n++] = s->items[i];
	s->count = n;
	s->replaced = 0;
	reindex(s, s->mask + 1); /* in place: cannot fail */
}

struct set_add {
	struct sysctl_conf_set *set;
	const char *file;
	sysctl_conf_error_fn *on_error;
	void *arg;
	unsigned next_stop; /* the line at which the stop is asked next */
};

static void set_error(unsigned line, const char *message, void *arg)
{
	struct set_add *a = arg;

	if (a->on_error)
		a->on_error(line, message, a->arg);
}

/* As systemd-sysctl: a repeated key leaves its old place and goes last. */
static int set_item(const struct sysctl_conf_item *it, void *arg)
{
	struct set_add *a = arg;
	struct sysctl_conf_set *s = a->set;
	struct sysctl_conf_item copy = *it;
	uint32_t *slot;

	/* By line, not by item: a file of comments is read quickly anyway. */
	if (s->stop && it->line >= a->next_stop) {
		a->next_stop = it->line + SYSCTL_CONF_STOP_EVERY;
		if (s->stop(s->stop_arg, a->file, it->line))
			return -EINTR;
	}
	copy.key = strdup(it->key + strspn(it->key, "/"));
	copy.value = strdup(it->value);
	copy.file = strdup(a->file);
	if (!copy.key || !copy.value || !copy.file || set_reserve(s)) {
		item_free(&copy);
		return -ENOMEM;
	}
	slot = key_slot(s, copy.key);
	if (*slot) {
		struct sysctl_conf_item *old = &s->items[*slot - 1];

		item_free(old);
		/* Skipped (its glob index too) until set_pack() drops it. */
		old->key = old->value = old->file = NULL;
		s->replaced++;
	}
	*slot = (uint32_t)s->count + 1;
	if (copy.glob)
		s->globs[s->nglobs++] = s->count;
	s->items[s->count++] = copy;
	return 0;
}

int sysctl_conf_set_add(struct sysctl_conf_set *s, const char *file, const char *text, size_t len,
			sysctl_conf_error_fn *on_error, void *arg)
{
	struct set_add a = { s, file, on_error, arg, SYSCTL_CONF_STOP_EVERY };
	int ret = sysctl_conf_parse(text, len, set_item, set_error, &a);

	set_pack(s);
	return ret;
}

size_t sysctl_conf_set_count(const struct sysctl_conf_set *s)
{
	return s ? s->count : 0;
}

const struct sysctl_conf_item *sysctl_conf_set_item(const struct sysctl_conf_set *s, size_t i)
{
	return s && i < s->count ? &s->items[i] : NULL;
}

const struct sysctl_conf_item *sysctl_conf_set_lookup(const struct sysctl_conf_set *s,
						       const char *key)
{
	const struct sysctl_conf_item *it;
	uint32_t i;

	key += strspn(key, "/");
	if (!s || !s->mask)
		return NULL;
	i = *key_slot(s, key);
	it = i ? &s->items[i - 1] : NULL;
	if (it && !it->glob)
		return it;
	/* The last glob that matches: the one a merge keeps. */
	for (size_t g = s->nglobs; g-- > 0;) {
		it = &s->items[s->globs[g]];
		if (s->probes)
			*s->probes += 1;
		if (it->key && fnmatch(it->key, key, FNM_PATHNAME) == 0)
			return it;
	}
	return NULL;
}

static int conf_only(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".conf") == 0;
}

static int by_name(const void *a, const void *b)
{
	const char *x = strrchr(*(char *const *)a, '/'), *y = strrchr(*(char *const *)b, '/');

	return strcmp(x, y);
}

/* Adds DIR/NAME unless a file of that name came from an earlier directory. */
static int add_path(char ***paths, size_t *count, const char *dir, const char *name)
{
	char **bigger, *path;

	for (size_t j = 0; j < *count; j++)
		if (!strcmp(strrchr((*paths)[j], '/') + 1, name))
			return 0;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	bigger = realloc(*paths, (*count + 1) * sizeof(*bigger));
	if (!bigger) {
		free(path);
		return -ENOMEM;
	}
	*paths = bigger;
	(*paths)[(*count)++] = path;
	return 0;
}

ssize_t sysctl_conf_list_dirs(const char *dirs, char ***out)
{
	char *copy = strdup(dirs ? dirs : ""), *save = NULL, **paths = NULL;
	size_t count = 0;
	int err = copy ? 0 : -ENOMEM;

	for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !err;
	     dir = strtok_r(NULL, ":", &save)) {
		struct dirent **ents;
		int n = scandir(dir, &ents, conf_only, alphasort);

		for (int i = 0; i < n; i++) {
			if (!err)
				err = add_path(&paths, &count, dir, ents[i]->d_name);
			free(ents[i]);
		}
		if (n >= 0)
			free(ents);
	}
	free(copy);
	if (err) {
		sysctl_conf_free_paths(paths, count);
		return err;
	}
	if (count)
		qsort(paths, count, sizeof(*paths), by_name);
	*out = paths;
	return (ssize_t)count;
}

void sysctl_conf_free_paths(char **paths, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(paths[i]);
	free(paths);
}
