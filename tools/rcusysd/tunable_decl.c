/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One line of the tunables file, PATH TYPE [key=value ...], parsed into a
 * struct tunable: one typed table (types[]) maps each keyword to the
 * library's handler kinds (sysctl_handler_info), and each field is checked
 * in its own step (decl_*), with a message that names the field.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysctl_conf.h"
#include "tunable_decl.h"

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
static int parse_bound(const struct sysctl_handler_info *info, const char *s, union bound *b,
		       long double *cmp)
{
	bool is_signed = info->flags & SYSCTL_HF_SIGNED;
	unsigned long v;

	if (parse_number(s, is_signed, &v))
		return -EINVAL;
	*cmp = is_signed ? (long double)(long)v : (long double)v;
	if (info->bound_size == sizeof(int) && is_signed) {
		if ((long)v < INT_MIN || (long)v > INT_MAX)
			return -ERANGE;
		b->i = (int)(long)v;
	} else if (info->bound_size == sizeof(unsigned int)) {
		if (v > (info->elem_size == 1 ? 255UL : UINT_MAX))
			return -ERANGE;
		b->u = (unsigned int)v;
	} else if (!strcmp(info->unit, "ms")) {
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
	const struct type *t_type; /* the type's row, once known (needed while parsing only) */
	const struct sysctl_handler_info *info; /* its handler's kind, once known */
	char **path_out, **sig_out; /* tunable_parse_line()'s @path and @sig */
	union bound *bounds;        /* and its @bounds: min, max */
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
	if (asprintf(d->path_out, "%s%s", *path == '/' ? "" : "/", path) < 0) {
		*d->path_out = NULL;
		return -ENOMEM;
	}
	t->table.procname = strrchr(*d->path_out, '/') + 1;
	t->table.desc = d->desc && *d->desc ? strdup(d->desc) : NULL;
	t->default_value = d->def ? strdup(d->def) : NULL;
	if ((d->desc && *d->desc && !t->table.desc) || (d->def && !t->default_value))
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
			d->t_type = &types[i];
	if (!d->t_type)
		FAIL_BUF(d, "type \"%.32s\" unknown (expected one of " TYPE_NAMES ")", d->type);
	d->info = pick_handler(d->t_type, d->min || d->max);
	if (!d->info)
		FAIL_BUF(d, "%s takes no min/max", d->t_type->name);
	if (d->bracket && (!d->info->elem_size || (d->info->flags & SYSCTL_HF_SINGLE)))
		FAIL_BUF(d, "%s cannot be a vector", d->t_type->name);
	if (d->maxlen && !(d->info->flags & SYSCTL_HF_STRING))
		FAIL("maxlen is for strings");
	if (d->bits && !(d->info->flags & SYSCTL_HF_BITMAP))
		FAIL("bits is for bitmaps");
	return 0;
}

/* The row's mode: read and write bits, and exec= (root alone writes what root runs). */
static int decl_mode(struct decl *d, struct tunable *t, const char **why)
{
	unsigned long v;

	/* procname and desc are decl_path()'s. */
	t->table.mode = 0644;
	t->table.proc_handler = d->info->handler;
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

	if (d->info->flags & SYSCTL_HF_STRING) {
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
	} else if (d->info->flags & SYSCTL_HF_BITMAP) {
		if (!d->bits || parse_number(d->bits, false, &v) || v < 1 || v > 65536)
			FAIL("bitmap needs bits=1..65536");
		t->bitmap = calloc((v + 8 * sizeof(long) - 1) / (8 * sizeof(long)), sizeof(long));
		if (!t->bitmap)
			return -ENOMEM;
		t->table.data = &t->bitmap;
		t->table.maxlen = (int)v;
	} else {
		size = d->info->elem_size * t->count;
		t->data = size <= sizeof(t->one) ? &t->one : calloc(1, size);
		if (!t->data)
			return -ENOMEM;
		t->table.data = t->data;
		t->table.maxlen = (int)size;
	}
	return 0;
}

/*
 * A bounded tunable declared without default= starts at min (each element
 * of a vector): its zero could be outside the bounds, where no write could
 * bring it back by text and a refused commit could not restore it. With
 * max= alone below 0 there is no value to start at: refused.
 */
static int bounded_default(struct decl *d, struct tunable *t, long double hi, const char **why)
{
	size_t len;

	if (t->default_value)
		return 0;
	if (!d->min) {
		if (hi < 0)
			FAIL_BUF(d, "max=%s is below 0, where a tunable without default= starts: give "
				 "default= or min=", d->max);
		return 0;
	}
	len = (strlen(d->min) + 1) * t->count;
	t->default_value = malloc(len);
	if (!t->default_value)
		return -ENOMEM;
	t->default_value[0] = '\0';
	for (unsigned i = 0; i < t->count; i++)
		snprintf(t->default_value + strlen(t->default_value), len - strlen(t->default_value),
			 "%s%s", i ? " " : "", d->min);
	return 0;
}

/* min= and max=, in the type's range and in order. */
static int decl_bounds(struct decl *d, struct tunable *t, const char **why)
{
	long double lo = 0, hi = 0;
	int err = 0;

	if ((d->min || d->max) && (d->info->flags & SYSCTL_HF_ONE_BOUND) && (!d->min || !d->max))
		FAIL("give both min= and max=");
	if (!d->min && !d->max) {
		if (d->info->flags & SYSCTL_HF_ONE_BOUND) {
			/* ulong has only a minmax handler: 0 is no bound at all. */
			d->bounds[0].ul = 0;
			t->table.extra1 = &d->bounds[0];
		}
		return 0;
	}
	if (d->min && (err = parse_bound(d->info, d->min, &d->bounds[0], &lo)))
		FAIL_BUF(d, "min=%s: %s", d->min,
			 err == -ERANGE ? "out of the type's range" : "not a number of this type");
	if (d->max && (err = parse_bound(d->info, d->max, &d->bounds[1], &hi)))
		FAIL_BUF(d, "max=%s: %s", d->max,
			 err == -ERANGE ? "out of the type's range" : "not a number of this type");
	if (d->min && d->max && lo > hi)
		FAIL_BUF(d, "min=%s is above max=%s: no value could be written", d->min, d->max);
	t->table.extra1 = d->min ? &d->bounds[0] : NULL;
	t->table.extra2 = d->max ? &d->bounds[1] : NULL;
	return bounded_default(d, t, hi, why);
}

/* The declaration as it would be written, without the default: what a reload compares. */
static int decl_sig(const struct decl *d, struct tunable *t)
{
	const char *size_key = d->maxlen ? " maxlen=" : d->bits ? " bits=" : "";
	const char *size_val = d->maxlen ? d->maxlen : d->bits ? d->bits : "";
	const char *desc = t->table.desc;

	if (asprintf(d->sig_out, "%s%s%.0u%s%s%s%s%s%s%s mode=%04o%s%s%s", d->t_type->name,
		     d->bracket ? "[" : "", d->bracket ? t->count : 0, d->bracket ? "]" : "",
		     size_key, size_val, d->min ? " min=" : "", d->min ? d->min : "",
		     d->max ? " max=" : "", d->max ? d->max : "", (unsigned)t->table.mode,
		     desc ? " desc=\"" : "", desc ? desc : "", desc ? "\"" : "") < 0) {
		*d->sig_out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* What tunable.h says. */
int tunable_parse_line(char *line, struct tunable *t, char **path, char **sig,
		       union bound bounds[2], const char **why, char *buf, size_t bufsize)
{
	struct decl d = { .buf = buf, .bufsize = bufsize, .path_out = path, .sig_out = sig,
			  .bounds = bounds };
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
