/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tunables file: one typed table (types[]) maps each keyword to the
 * library's handler kinds, and one set path (sysctl_set) applies default=,
 * so a default is checked exactly as a client's write would be.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysctl_conf.h"
#include "tunables.h"

/* One keyword of the file: the element type and unit of a handler kind. */
struct type {
	const char *name; /* as written in the file */
	const char *elem; /* struct sysctl_handler_info.type */
	const char *unit; /* struct sysctl_handler_info.unit */
};

static const struct type types[] = {
	{ "string", "string", "" },
	{ "int", "int", "" },
	{ "uint", "uint", "" },
	{ "u8", "u8", "" },
	{ "ulong", "ulong", "" },
	{ "bool", "bool", "" },
	{ "bitmap", "bitmap", "" },
	{ "jiffies", "int", "s" },
	{ "userhz_jiffies", "int", "1/100 s" },
	{ "ms_jiffies", "int", "ms" },
	{ "ulong_ms_jiffies", "ulong", "ms" },
};
#define TYPE_NAMES "string, int, uint, u8, ulong, bool, bitmap, jiffies, userhz_jiffies, ms_jiffies, " \
		   "ulong_ms_jiffies"
#define MAX_VECTOR 64

union bound {
	int i;
	unsigned int u;
	unsigned long ul;
};

struct tunable {
	struct ctl_table table;
	struct sysctl_table_header *header;
	const struct sysctl_handler_info *info;
	const struct type *type;
	/*
	 * Memory counts at scale (100 000 tunables): what only some kinds
	 * need is allocated for those alone, one value of up to a long lives
	 * here, not in an allocation of its own, and the storage of the three
	 * kinds shares one field (info->flags tells which).
	 */
	union {
		struct rcustring *str;  /* strings */
		unsigned long *bitmap;  /* bitmaps: table.data points here */
		void *data;             /* elements: &one, or allocated for a vector */
	};
	unsigned long one;      /* the value of a single-element kind */
	union bound min, max;
	unsigned count;         /* elements (1 unless TYPE[N]) */
	char *desc;             /* NULL: none */
	char *default_value;    /* NULL: none, or once applied */
	char *path;             /* '/' form with a leading '/', for sysctl_set */
	const char *name;       /* the last component, inside path */
	char *sig;              /* what must not change across a reload */
	unsigned line;
	struct tunable *next;
};

struct tunables {
	struct tunable *list;
};

/* Next whitespace-separated token; "..." quotes allow spaces. -EINVAL: a quote left open. */
static int next_token(char **cursor, char **tok)
{
	char *p = *cursor, *out;
	bool quoted = false;

	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	*tok = NULL;
	if (!*p)
		return 0;
	*tok = out = p;
	for (; *p && (quoted || (*p != ' ' && *p != '\t' && *p != '\r')); p++) {
		if (*p == '"')
			quoted = !quoted;
		else
			*out++ = *p;
	}
	if (quoted)
		return -EINVAL;
	if (*p)
		p++;
	*out = '\0';
	*cursor = p;
	return 0;
}

static int parse_number(const char *s, bool is_signed, unsigned long *out)
{
	char *end;

	errno = 0;
	if (is_signed) {
		long v = strtol(s, &end, 0);
		*out = (unsigned long)v;
	} else {
		if (strchr(s, '-'))
			return -EINVAL;
		*out = strtoul(s, &end, 0);
	}
	return errno || end == s || *end ? -EINVAL : 0;
}

static void tunable_free(struct tunable *t)
{
	if (t->header)
		sysctl_unregister_table(t->header);
	/* The union is set only once info is (parse_line), so NULL before. */
	if (t->info && (t->info->flags & SYSCTL_HF_STRING)) {
		if (t->str)
			rcustring_destroy(t->str);
		free(t->str);
	} else if (t->info && (t->info->flags & SYSCTL_HF_BITMAP)) {
		free(t->bitmap);
	} else if (t->data != &t->one) {
		free(t->data);
	}
	free(t->desc);
	free(t->default_value);
	free(t->path);
	free(t->sig);
	free(t);
}

void tunables_free(struct tunables *ts)
{
	if (!ts)
		return;
	while (ts->list) {
		struct tunable *t = ts->list;

		ts->list = t->next;
		tunable_free(t);
	}
	free(ts);
}

/*
 * The handler kind for @type: the minmax one when bounds are asked for (or
 * when the kind has no other, as ulong and u8), else the plain one; for
 * strings the RCU one, so readers never lock.
 */
static const struct sysctl_handler_info *pick_handler(const struct type *type, bool bounds)
{
	const struct sysctl_handler_info *plain = NULL, *minmax = NULL, *info;

	for (size_t i = 0; (info = sysctl_handler_info_at(i)); i++) {
		if (strcmp(info->type, type->elem) || strcmp(info->unit, type->unit))
			continue;
		if ((info->flags & SYSCTL_HF_STRING) && !(info->flags & SYSCTL_HF_RCU))
			continue;
		if (info->flags & SYSCTL_HF_MINMAX)
			minmax = minmax ? minmax : info;
		else
			plain = plain ? plain : info;
	}
	return bounds ? minmax : plain ? plain : minmax;
}

/* Parses a bound into the handler's bound type; ms bounds become jiffies as the handler stores them. */
static int parse_bound(const struct tunable *t, const char *s, union bound *b, long double *cmp)
{
	bool is_signed = t->info->flags & SYSCTL_HF_SIGNED;
	unsigned long v;

	if (parse_number(s, is_signed, &v))
		return -EINVAL;
	*cmp = is_signed ? (long double)(long)v : (long double)v;
	if (t->info->bound_size == sizeof(int) && is_signed) {
		if ((long)v < INT_MIN || (long)v > INT_MAX)
			return -ERANGE;
		b->i = (int)(long)v;
	} else if (t->info->bound_size == sizeof(unsigned int)) {
		if (v > (t->info->elem_size == 1 ? 255UL : UINT_MAX))
			return -ERANGE;
		b->u = (unsigned int)v;
	} else if (!strcmp(t->info->unit, "ms")) {
		if (v > ULONG_MAX / SYSCTL_HZ)
			return -ERANGE;
		b->ul = v * SYSCTL_HZ / 1000;
	} else {
		b->ul = v;
	}
	return 0;
}

#define FAIL(msg) return (*why = (msg)), -EINVAL

/* One declaration's words, as parse_line() splits them; NULL: not given. */
struct decl {
	char *path, *type, *bracket; /* bracket: the '[' of TYPE[N] */
	char *maxlen, *bits, *mode, *min, *max, *def, *desc, *exec;
	char *buf; /* where a message is written (size bufsize) */
	size_t bufsize;
};

#define FAIL_BUF(d, ...) \
	return snprintf((d)->buf, (d)->bufsize, __VA_ARGS__), (*why = (d)->buf), -EINVAL

/* PATH TYPE [key=value ...] into @d's words. */
static int decl_split(char *line, struct decl *d, const char **why)
{
	char *cursor = line, *tok;

	if (next_token(&cursor, &d->path) || next_token(&cursor, &d->type))
		FAIL("unterminated quote");
	if (!d->type)
		FAIL_BUF(d, "\"%.64s\": no type (expected PATH TYPE [key=value ...])", d->path);
	for (;;) {
		char *eq, **slot = NULL;

		if (next_token(&cursor, &tok))
			FAIL("unterminated quote");
		if (!tok)
			return 0;
		eq = strchr(tok, '=');
		if (eq) {
			*eq = '\0';
			slot = !strcmp(tok, "maxlen") ? &d->maxlen : !strcmp(tok, "bits") ? &d->bits :
			       !strcmp(tok, "mode") ? &d->mode : !strcmp(tok, "min") ? &d->min :
			       !strcmp(tok, "max") ? &d->max : !strcmp(tok, "default") ? &d->def :
			       !strcmp(tok, "desc") ? &d->desc : !strcmp(tok, "exec") ? &d->exec : NULL;
		}
		if (!slot)
			FAIL_BUF(d, "\"%.64s%s%.64s\": unknown field (expected one of maxlen=, "
				    "bits=, mode=, min=, max=, default=, desc=, exec=)", tok,
				 eq ? "=" : "", eq ? eq + 1 : "");
		*slot = eq + 1;
	}
}

/* The path (no empty component: "app..x", "app.", "a//b"), name, description, default. */
static int decl_path(struct decl *d, struct tunable *t, const char **why)
{
	char *path = d->path;

	sysctl_conf_normalize_key(path); /* '/' form */
	for (const char *p = *path == '/' ? path + 1 : path;; p++) {
		if (*p == '/' || *p == '\0')
			FAIL("empty path component");
		p = strchr(p, '/');
		if (!p)
			break;
	}
	if (asprintf(&t->path, "%s%s", *path == '/' ? "" : "/", path) < 0)
		return -ENOMEM;
	t->name = strrchr(t->path, '/') + 1;
	t->desc = d->desc && *d->desc ? strdup(d->desc) : NULL;
	t->default_value = d->def ? strdup(d->def) : NULL;
	if ((d->desc && *d->desc && !t->desc) || (d->def && !t->default_value))
		return -ENOMEM;
	return 0;
}

/* The type, TYPE or TYPE[N], and the handler it takes, with or without bounds. */
static int decl_type(struct decl *d, struct tunable *t, const char **why)
{
	unsigned long v;

	t->count = 1;
	d->bracket = strchr(d->type, '[');
	if (d->bracket) {
		char *close = strchr(d->bracket, ']');

		if (!close || close[1])
			FAIL("vector size: TYPE[N], N from 1 to 64");
		*close = '\0';
		if (parse_number(d->bracket + 1, false, &v) || v < 1 || v > MAX_VECTOR)
			FAIL("vector size: TYPE[N], N from 1 to 64");
		t->count = (unsigned)v;
		*d->bracket = '\0';
	}
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(types[i].name, d->type))
			t->type = &types[i];
	if (!t->type)
		FAIL_BUF(d, "type \"%.32s\" unknown (expected one of " TYPE_NAMES ")", d->type);
	t->info = pick_handler(t->type, d->min || d->max);
	if (!t->info)
		FAIL_BUF(d, "%s takes no min/max", t->type->name);
	if (d->bracket && (!t->info->elem_size || (t->info->flags & SYSCTL_HF_SINGLE)))
		FAIL_BUF(d, "%s cannot be a vector", t->type->name);
	if (d->maxlen && !(t->info->flags & SYSCTL_HF_STRING))
		FAIL("maxlen is for strings");
	if (d->bits && !(t->info->flags & SYSCTL_HF_BITMAP))
		FAIL("bits is for bitmaps");
	return 0;
}

/* The row's mode: read and write bits, and exec= (root alone writes what root runs). */
static int decl_mode(struct decl *d, struct tunable *t, const char **why)
{
	unsigned long v;

	t->table = (struct ctl_table){ .procname = t->name, .mode = 0644, .desc = t->desc,
				       .proc_handler = t->info->handler };
	if (d->mode) {
		/* The tree takes read and write bits only, as /proc/sys. */
		if (parse_number(d->mode, false, &v) || v > 0666 || (v & 0111))
			FAIL_BUF(d, "mode=%.32s: must be octal read/write bits, at most 0666", d->mode);
		t->table.mode = (mode_t)v;
	}
	if (d->exec && strcmp(d->exec, "yes") && strcmp(d->exec, "no"))
		FAIL("exec must be yes or no");
	/* Root runs what the value names: root alone writes it (--owner included). */
	if (d->exec && !strcmp(d->exec, "yes")) {
		if (t->table.mode & 0022) {
			snprintf(d->buf, d->bufsize,
				 "an entry root executes is written by root alone (mode %04o lets group or others write; at most 0644)",
				 (unsigned)t->table.mode);
			*why = d->buf;
			return -EPERM;
		}
		t->table.mode |= SYSCTL_MODE_EXEC;
	}
	return 0;
}

/* The value's storage, as the handler's descriptor says it looks. */
static int decl_data(struct decl *d, struct tunable *t, const char **why)
{
	unsigned long v;
	size_t size;

	if (t->info->flags & SYSCTL_HF_STRING) {
		if (!d->maxlen || parse_number(d->maxlen, false, &v) || v < 1 || v > 65536)
			FAIL("string needs maxlen=1..65536");
		t->str = malloc(sizeof(*t->str));
		if (!t->str || rcustring_init(t->str, v, "")) {
			free(t->str);
			t->str = NULL;
			return -ENOMEM;
		}
		t->table.data = t->str;
		t->table.maxlen = (int)v;
	} else if (t->info->flags & SYSCTL_HF_BITMAP) {
		if (!d->bits || parse_number(d->bits, false, &v) || v < 1 || v > 65536)
			FAIL("bitmap needs bits=1..65536");
		t->bitmap = calloc((v + 8 * sizeof(long) - 1) / (8 * sizeof(long)), sizeof(long));
		if (!t->bitmap)
			return -ENOMEM;
		t->table.data = &t->bitmap;
		t->table.maxlen = (int)v;
	} else {
		size = t->info->elem_size * t->count;
		t->data = size <= sizeof(t->one) ? &t->one : calloc(1, size);
		if (!t->data)
			return -ENOMEM;
		t->table.data = t->data;
		t->table.maxlen = (int)size;
	}
	return 0;
}

/* min= and max=, in the type's range and in order. */
static int decl_bounds(struct decl *d, struct tunable *t, const char **why)
{
	long double lo = 0, hi = 0;
	int err = 0;

	if ((d->min || d->max) && (t->info->flags & SYSCTL_HF_ONE_BOUND) && (!d->min || !d->max))
		FAIL("give both min= and max=");
	if (!d->min && !d->max) {
		if (t->info->flags & SYSCTL_HF_ONE_BOUND) {
			/* ulong has only a minmax handler: 0 is no bound at all. */
			t->min.ul = 0;
			t->table.extra1 = &t->min;
		}
		return 0;
	}
	if (d->min && (err = parse_bound(t, d->min, &t->min, &lo)))
		FAIL_BUF(d, "min=%s: %s", d->min,
			 err == -ERANGE ? "out of the type's range" : "not a number of this type");
	if (d->max && (err = parse_bound(t, d->max, &t->max, &hi)))
		FAIL_BUF(d, "max=%s: %s", d->max,
			 err == -ERANGE ? "out of the type's range" : "not a number of this type");
	if (d->min && d->max && lo > hi)
		FAIL_BUF(d, "min=%s is above max=%s: no value could be written", d->min, d->max);
	t->table.extra1 = d->min ? &t->min : NULL;
	t->table.extra2 = d->max ? &t->max : NULL;
	return 0;
}

/* The declaration as it would be written, without the default: what a reload compares. */
static int decl_sig(const struct decl *d, struct tunable *t)
{
	const char *size_key = d->maxlen ? " maxlen=" : d->bits ? " bits=" : "";
	const char *size_val = d->maxlen ? d->maxlen : d->bits ? d->bits : "";

	if (asprintf(&t->sig, "%s%s%.0u%s%s%s%s%s%s%s mode=%04o%s%s%s", t->type->name,
		     d->bracket ? "[" : "", d->bracket ? t->count : 0, d->bracket ? "]" : "",
		     size_key, size_val, d->min ? " min=" : "", d->min ? d->min : "",
		     d->max ? " max=" : "", d->max ? d->max : "", (unsigned)t->table.mode,
		     t->desc ? " desc=\"" : "", t->desc ? t->desc : "", t->desc ? "\"" : "") < 0) {
		t->sig = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * Parses one declaration into @t (not registered yet). @why points to a
 * static text or to @buf (size @bufsize).
 */
static int parse_line(char *line, struct tunable *t, const char **why, char *buf, size_t bufsize)
{
	struct decl d = { .buf = buf, .bufsize = bufsize };
	int err = decl_split(line, &d, why);

	if (!err)
		err = decl_path(&d, t, why);
	if (!err)
		err = decl_type(&d, t, why);
	if (!err)
		err = decl_mode(&d, t, why);
	if (!err)
		err = decl_data(&d, t, why);
	if (!err)
		err = decl_bounds(&d, t, why);
	return err ? err : decl_sig(&d, t);
}

/* A path's name is a directory of @tree, or one of its directories an entry? */
static const char *tree_conflict(struct sysctl_tree *tree, const struct tunable *t, char *buf,
				 size_t bufsize)
{
	struct sysctl_entry *e = sysctl_lookup(tree, t->path);
	char *prefix, name[2048];

	if (e) {
		bool dir = sysctl_entry_is_dir(e);

		sysctl_entry_put(e);
		snprintf(buf, bufsize, "%s: %s", sysctl_conf_dotted(t->path, name, sizeof(name)),
			 dir ? "a directory of the tree already has this name" :
			       "already registered (by rcusysd or another tunables file)");
		return buf;
	}
	prefix = strdup(t->path);
	if (!prefix)
		return "out of memory";
	for (char *s = strchr(prefix + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		e = sysctl_lookup(tree, prefix);
		if (e && !sysctl_entry_is_dir(e)) {
			snprintf(buf, bufsize, "%s is an entry, so it cannot be a directory too",
				 sysctl_entry_path(e));
			sysctl_entry_put(e);
			free(prefix);
			return buf;
		}
		if (e)
			sysctl_entry_put(e);
		*s = '/';
	}
	free(prefix);
	return NULL;
}

/* Registers @t and writes its default through the handler. */
static int tunable_register(struct sysctl_tree *tree, struct tunable *t, const char **why, char *buf,
			    size_t bufsize)
{
	const char *conflict = tree_conflict(tree, t, buf, bufsize);
	char *dir;
	int err;

	if (conflict)
		return (*why = conflict), -EEXIST;
	/* The directory is needed only here: not kept per tunable. */
	dir = strndup(t->path, (size_t)(t->name - 1 - t->path));
	if (!dir)
		return -ENOMEM;
	err = sysctl_register_table(tree, dir, &t->table, 1, &t->header);
	free(dir);
	if (err) {
		t->header = NULL;
		char name[2048];

		snprintf(buf, bufsize, "%s: %s", sysctl_conf_dotted(t->path, name, sizeof(name)),
			 err == -EEXIST ? "already registered" : "refused by the tree (see log)");
		*why = buf;
		return err;
	}
	if (t->default_value) {
		err = sysctl_set(tree, t->path, t->default_value, strlen(t->default_value), NULL);
		if (err) {
			struct sysctl_entry *e = sysctl_lookup(tree, t->path);
			char reason[160];

			if (!e || sysctl_entry_explain(e, err, reason, sizeof(reason)) < 0)
				snprintf(reason, sizeof(reason), "%s", strerror(-err));
			if (e)
				sysctl_entry_put(e);
			snprintf(buf, bufsize, "default=\"%s\": %s", t->default_value, reason);
			*why = buf;
			return err;
		}
		/* Applied: a reload keeps the live value, so the text is not needed again. */
		free(t->default_value);
		t->default_value = NULL;
	}
	return 0;
}

/* Parses every declaration of @text into @ts (backwards); stops at the first error. */
static int parse_all(const char *text, size_t len, struct tunables *ts, char *err, size_t errsize)
{
	unsigned lineno = 0;
	size_t pos = 0;
	int ret = 0;

	while (pos < len && ret == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = (nl ? (size_t)(nl - text) : len) - pos;
		char *line = strndup(text + pos, n), *p, buf[512];
		const char *why = "out of memory";
		struct tunable *t;

		lineno++;
		pos += n + 1;
		if (!line)
			return -ENOMEM;
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p && *p != '#' && *p != '\r') {
			t = calloc(1, sizeof(*t));
			ret = t ? parse_line(p, t, &why, buf, sizeof(buf)) : -ENOMEM;
			if (t && !ret) {
				t->line = lineno;
				t->next = ts->list;
				ts->list = t;
			} else if (t) {
				tunable_free(t);
			}
			if (ret)
				snprintf(err, errsize, "%u: %s", lineno, why);
		}
		free(line);
	}
	return ret;
}

/*
 * Path order with '/' below every other byte, so that the declarations
 * under "a/b/" come right after "a/b" (before "a/b-c" and "a/b.c"); ties
 * in file order.
 */
static int path_cmp(const void *pa, const void *pb)
{
	const struct tunable *a = *(const struct tunable *const *)pa, *b = *(const struct tunable *const *)pb;
	const unsigned char *x = (const unsigned char *)a->path, *y = (const unsigned char *)b->path;

	for (; *x && *x == *y; x++, y++)
		;
	if (*x != *y) {
		int kx = *x == '/' ? 1 : *x ? *x + 1 : 0, ky = *y == '/' ? 1 : *y ? *y + 1 : 0;

		return kx - ky;
	}
	return (a->line > b->line) - (a->line < b->line);
}

/* @in lies under the leaf @leaf ("a/b/c" under "a/b"). */
static bool is_below(const struct tunable *in, const struct tunable *leaf, size_t ll)
{
	return !strncmp(in->path, leaf->path, ll) && in->path[ll] == '/';
}

/*
 * Two declarations of one file naming the same path, or a leaf and a
 * directory; the one reported is the clash found at the earliest line.
 * Sorted by path_cmp(), a duplicate is the next declaration and whatever
 * lies under a leaf follows it in one run, so a file of n declarations
 * costs n log n, not n^2 (100 000 tunables took 53 s to start).
 */
static int check_overlap(const struct tunables *ts, char *err, size_t errsize)
{
	const struct tunable **v, *t, *first = NULL, *second = NULL;
	size_t n = 0, i, j, g;
	unsigned best = UINT_MAX;
	char name[4096];

	for (t = ts->list; t; t = t->next)
		n++;
	if (n < 2)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v) {
		snprintf(err, errsize, "out of memory checking %zu declarations", n);
		return -ENOMEM;
	}
	for (i = 0, t = ts->list; t; t = t->next)
		v[i++] = t;
	qsort(v, n, sizeof(*v), path_cmp);
	for (i = 0; i < n; i = g) {
		size_t ll = strlen(v[i]->path);

		/* A group of equal paths, in file order: its first is the earliest. */
		for (g = i + 1; g < n && !strcmp(v[g]->path, v[i]->path); g++)
			;
		if (g > i + 1 && v[i + 1]->line < best)
			best = v[i + 1]->line, first = v[i], second = v[i + 1];
		for (j = g; j < n && is_below(v[j], v[i], ll); j++) {
			unsigned later = v[i]->line > v[j]->line ? v[i]->line : v[j]->line;

			if (later < best)
				best = later, first = v[i], second = v[j];
		}
	}
	free(v);
	if (!first)
		return 0;
	if (!strcmp(first->path, second->path))
		snprintf(err, errsize, "%u: already declared on line %u", second->line, first->line);
	else
		snprintf(err, errsize, "%u: %s is a tunable (line %u) and a directory (line %u)", best,
			 sysctl_conf_dotted(first->path, name, sizeof(name)), first->line, second->line);
	return -EEXIST;
}

/* The list in file order (it was built backwards). */
static void reverse(struct tunables *ts)
{
	struct tunable *prev = NULL, *t = ts->list, *next;

	for (; t; t = next) {
		next = t->next;
		t->next = prev;
		prev = t;
	}
	ts->list = prev;
}

int tunables_load(struct sysctl_tree *tree, const char *text, size_t len, struct tunables **out,
		  char *err, size_t errsize)
{
	struct tunables *ts = calloc(1, sizeof(*ts));
	int ret;

	if (!ts)
		return -ENOMEM;
	ret = parse_all(text, len, ts, err, errsize);
	reverse(ts);
	if (!ret)
		ret = check_overlap(ts, err, errsize);
	for (struct tunable *t = ts->list; t && !ret; t = t->next) {
		const char *why = "out of memory";
		char buf[512];

		ret = tunable_register(tree, t, &why, buf, sizeof(buf));
		if (ret)
			snprintf(err, errsize, "%u: %s", t->line, why);
	}
	if (ret) {
		tunables_free(ts);
		return ret;
	}
	*out = ts;
	return 0;
}

static int by_path(const void *pa, const void *pb)
{
	return strcmp((*(const struct tunable *const *)pa)->path,
		      (*(const struct tunable *const *)pb)->path);
}

/*
 * For each declaration of @ts in order, the live tunable of @old with its
 * path, or NULL (an array of them; NULL when out of memory). Those found
 * leave @old's list. A sorted index, not a walk of @old per declaration:
 * a reload of 100 000 tunables would otherwise compare 10^10 paths.
 */
static struct tunable **take_live(struct tunables *ts, struct tunables *old)
{
	struct tunable **idx, **live, *t, **pp;
	size_t n_old = 0, n = 0, i;

	for (t = old ? old->list : NULL; t; t = t->next)
		n_old++;
	for (t = ts->list; t; t = t->next)
		n++;
	idx = malloc((n_old ? n_old : 1) * sizeof(*idx));
	live = calloc(n ? n : 1, sizeof(*live));
	if (!idx || !live) {
		free(idx);
		free(live);
		return NULL;
	}
	for (i = 0, t = old ? old->list : NULL; t; t = t->next)
		idx[i++] = t;
	qsort(idx, n_old, sizeof(*idx), by_path);
	for (i = 0, t = ts->list; t; t = t->next, i++) {
		struct tunable **hit = n_old ? bsearch(&t, idx, n_old, sizeof(*idx), by_path) : NULL;

		/* A path declared twice was refused by check_overlap(): one match at most. */
		if (hit) {
			live[i] = *hit;
			live[i]->line = 0; /* taken: marked for the pass below */
		}
	}
	free(idx);
	for (pp = old ? &old->list : NULL; pp && (t = *pp);) {
		if (t->line == 0)
			*pp = t->next;
		else
			pp = &t->next;
	}
	return live;
}

int tunables_reload(struct sysctl_tree *tree, struct tunables *old, const char *text, size_t len,
		    struct tunables **out, void (*report)(void *arg, unsigned line, const char *msg),
		    void *arg, char *err, size_t errsize)
{
	struct tunables *ts = calloc(1, sizeof(*ts));
	struct tunable **pp, *t, **live_of;
	char msg[512], name[4096];
	size_t i;
	int ret;

	if (!ts)
		return -ENOMEM;
	ret = parse_all(text, len, ts, err, errsize);
	reverse(ts);
	if (!ret)
		ret = check_overlap(ts, err, errsize);
	if (ret) {
		tunables_free(ts);
		return ret;
	}
	live_of = take_live(ts, old);
	if (!live_of) {
		tunables_free(ts);
		snprintf(err, errsize, "out of memory matching the declarations with the live ones");
		return -ENOMEM;
	}
	/* Unchanged or refused: the live entry (and its value) stays, taken over from @old. */
	for (pp = &ts->list, i = 0; (t = *pp); i++) {
		struct tunable *live = live_of[i];

		if (!live) {
			pp = &t->next;
			continue;
		}
		if (strcmp(live->sig, t->sig)) {
			snprintf(msg, sizeof(msg),
				 "%s: declared \"%s\", live as \"%s\": a live entry keeps its declaration "
				 "(restart to change it)",
				 sysctl_conf_dotted(t->path, name, sizeof(name)), t->sig, live->sig);
			report(arg, t->line, msg);
		}
		live->next = t->next;
		live->line = t->line;
		*pp = live;
		pp = &live->next;
		t->next = NULL;
		tunable_free(t);
	}
	free(live_of);
	/* Gone from the file: unregistered. */
	tunables_free(old);
	/* New: registered with their defaults; one that fails is reported and left out. */
	for (pp = &ts->list; (t = *pp);) {
		const char *why = "out of memory";
		char buf[512];

		if (t->header) {
			pp = &t->next;
			continue;
		}
		if (tunable_register(tree, t, &why, buf, sizeof(buf))) {
			report(arg, t->line, why);
			*pp = t->next;
			tunable_free(t);
			continue;
		}
		pp = &t->next;
	}
	*out = ts;
	return 0;
}
