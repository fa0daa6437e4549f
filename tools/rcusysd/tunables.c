#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tunables.h"

struct tunable {
	struct ctl_table table;
	struct sysctl_table_header *header;
	struct rcustring str;
	bool is_string;
	union {
		int i;
		unsigned int u;
		unsigned long ul;
		bool b;
	} value, min, max;
	char *name, *desc, *default_value;
	struct tunable *next;
};

struct tunables {
	struct tunable *list;
};

/* Next whitespace-separated token; "..." quotes allow spaces. */
static char *next_token(char **cursor)
{
	char *p = *cursor, *tok, *out;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return NULL;
	tok = out = p;
	for (bool quoted = false; *p && (quoted || (*p != ' ' && *p != '\t')); p++) {
		if (*p == '"')
			quoted = !quoted;
		else
			*out++ = *p;
	}
	if (*p)
		p++;
	*out = '\0';
	*cursor = p;
	return tok;
}

/*
 * Rewrites @path in place into '/' form: when its first separator is '.',
 * dots separate and a '/' stands for a '.' inside a name
 * ("net.ipv4.conf.eth0/200.forwarding"); when it is '/', it already is.
 */
static void slash_form(char *path)
{
	char *first = strpbrk(path, "./");

	if (!first || *first == '/')
		return;
	for (char *p = path; *p; p++)
		*p = *p == '.' ? '/' : *p == '/' ? '.' : *p;
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
	if (t->is_string)
		rcustring_destroy(&t->str);
	free(t->name);
	free(t->desc);
	free(t->default_value);
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

/* Stores a number in the tunable's slot for its type. Returns -ERANGE if it cannot fit. */
static int store(const char *type, unsigned long v, void *slot)
{
	long sv = (long)v;

	if (strcmp(type, "int") == 0) {
		if (sv < INT_MIN || sv > INT_MAX)
			return -ERANGE;
		*(int *)slot = (int)sv;
	} else if (strcmp(type, "uint") == 0) {
		if (v > UINT_MAX)
			return -ERANGE;
		*(unsigned int *)slot = (unsigned int)v;
	} else if (strcmp(type, "bool") == 0) {
		*(bool *)slot = v != 0;
	} else {
		*(unsigned long *)slot = v;
	}
	return 0;
}

static int parse_line(struct sysctl_tree *tree, char *line, struct tunable **out, const char **why)
{
	char *cursor = line, *path = next_token(&cursor), *type = next_token(&cursor), *tok, *dot, *dir = NULL;
	char *maxlen_s = NULL, *mode_s = NULL, *min_s = NULL, *max_s = NULL, *def_s = NULL, *desc_s = NULL;
	struct tunable *t;
	unsigned long v;
	bool is_signed;
	int err = 0;

	if (!type)
		return (*why = "expected: PATH TYPE [key=value ...]"), -EINVAL;
	while ((tok = next_token(&cursor))) {
		char *eq = strchr(tok, '=');
		char **slot = NULL;

		if (eq) {
			*eq = '\0';
			slot = !strcmp(tok, "maxlen") ? &maxlen_s : !strcmp(tok, "mode") ? &mode_s :
			       !strcmp(tok, "min") ? &min_s : !strcmp(tok, "max") ? &max_s :
			       !strcmp(tok, "default") ? &def_s : !strcmp(tok, "desc") ? &desc_s : NULL;
		}
		if (!slot)
			return (*why = "unknown field (maxlen, mode, min, max, default, desc)"), -EINVAL;
		*slot = eq + 1;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*out = t;
	/*
	 * The tree's (systemd's) rule: the first separator decides the form.
	 * Split in '/' form; a directory whose first separator is a dot goes
	 * to the tree with a leading '/', so "eth0.200" stays one level.
	 */
	slash_form(path);
	dot = strrchr(path, '/');
	t->name = strdup(dot ? dot + 1 : path);
	t->desc = strdup(desc_s ? desc_s : "");
	if (!t->name || !t->desc)
		return -ENOMEM;
	t->table = (struct ctl_table){ .procname = t->name, .mode = 0644, .desc = t->desc };
	if (mode_s) {
		if (parse_number(mode_s, false, &v) || v > 0777)
			return (*why = "mode must be octal, at most 0777"), -EINVAL;
		t->table.mode = (mode_t)v;
	}
	if (strcmp(type, "string") == 0) {
		if (!maxlen_s || parse_number(maxlen_s, false, &v) || v < 1 || v > 65536)
			return (*why = "string needs maxlen=1..65536"), -EINVAL;
		if (min_s || max_s)
			return (*why = "min/max are for numbers"), -EINVAL;
		t->default_value = strdup(def_s ? def_s : "");
		if (!t->default_value)
			return -ENOMEM;
		err = rcustring_init(&t->str, v, t->default_value);
		if (err)
			return (*why = "default longer than maxlen - 1"), err;
		t->is_string = true;
		t->table.data = &t->str;
		t->table.maxlen = (int)v;
		t->table.proc_handler = proc_rcu_string;
	} else if (!strcmp(type, "int") || !strcmp(type, "uint") || !strcmp(type, "ulong") ||
		   !strcmp(type, "bool")) {
		bool minmax = min_s || max_s;

		if (maxlen_s)
			return (*why = "maxlen is for strings"), -EINVAL;
		is_signed = strcmp(type, "int") == 0;
		if (minmax && strcmp(type, "bool") == 0)
			return (*why = "bool takes no min/max"), -EINVAL;
		if ((def_s && (parse_number(def_s, is_signed, &v) || store(type, v, &t->value))) ||
		    (min_s && (parse_number(min_s, is_signed, &v) || store(type, v, &t->min))) ||
		    (max_s && (parse_number(max_s, is_signed, &v) || store(type, v, &t->max))))
			return (*why = "bad number for this type"), -EINVAL;
		if (minmax && (!min_s || !max_s))
			return (*why = "give both min= and max="), -EINVAL;
		t->table.data = &t->value;
		t->table.extra1 = minmax ? &t->min : NULL;
		t->table.extra2 = minmax ? &t->max : NULL;
		if (!strcmp(type, "int")) {
			t->table.maxlen = sizeof(int);
			t->table.proc_handler = minmax ? proc_dointvec_minmax : proc_dointvec;
		} else if (!strcmp(type, "uint")) {
			t->table.maxlen = sizeof(unsigned int);
			t->table.proc_handler = minmax ? proc_douintvec_minmax : proc_douintvec;
		} else if (!strcmp(type, "ulong")) {
			t->table.maxlen = sizeof(unsigned long);
			if (!minmax) { /* the ulong handler always checks bounds */
				t->max.ul = ~0UL;
				t->table.extra1 = &t->min;
				t->table.extra2 = &t->max;
			}
			t->table.proc_handler = proc_doulongvec_minmax;
		} else {
			t->table.maxlen = sizeof(bool);
			t->table.proc_handler = proc_dobool;
		}
	} else {
		return (*why = "type must be string, int, uint, ulong or bool"), -EINVAL;
	}
	if (dot && dot != path) {
		const char *first;

		*dot = '\0';
		first = strpbrk(path, "./");
		if (first && *first == '.' && asprintf(&dir, "/%s", path) < 0)
			return -ENOMEM;
	}
	err = sysctl_register_table(tree, dir ? dir : dot && dot != path ? path : "", &t->table, 1,
				    &t->header);
	free(dir);
	if (err)
		*why = err == -EEXIST ? "already registered" : "refused by the tree (see log)";
	return err;
}

int tunables_load(struct sysctl_tree *tree, const char *text, size_t len, struct tunables **out,
		  char *err, size_t errsize)
{
	struct tunables *ts = calloc(1, sizeof(*ts));
	unsigned lineno = 0;
	size_t pos = 0;
	int ret = 0;

	if (!ts)
		return -ENOMEM;
	while (pos < len && ret == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = (nl ? (size_t)(nl - text) : len) - pos;
		char *line = strndup(text + pos, n), *p;
		const char *why = "out of memory";
		struct tunable *t = NULL;

		lineno++;
		pos += n + 1;
		if (!line) {
			ret = -ENOMEM;
			break;
		}
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		if (*p && *p != '#' && *p != '\r') {
			ret = parse_line(tree, p, &t, &why);
			if (t && ret) {
				tunable_free(t);
			} else if (t) {
				t->next = ts->list;
				ts->list = t;
			}
			if (ret)
				snprintf(err, errsize, "%u: %s", lineno, why);
		}
		free(line);
	}
	if (ret) {
		tunables_free(ts);
		return ret;
	}
	*out = ts;
	return 0;
}
