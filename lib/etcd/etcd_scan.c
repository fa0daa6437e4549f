/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON scanner (etcd_scan.h): RFC 8259's grammar, checked in one pass
 * with no allocation and a bounded depth of recursion, and walks over the
 * members or elements of a span it has checked.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "etcd_scan.h"

struct scanner {
	const char *p, *end;
	size_t values, limit; /* more values than @limit: -E2BIG (jscan_count) */
	int depth;
};

static void ws(struct scanner *sc)
{
	while (sc->p < sc->end &&
	       (*sc->p == ' ' || *sc->p == '\t' || *sc->p == '\n' || *sc->p == '\r'))
		sc->p++;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* At '"': past the closing quote. A base64 value is one long run of plain bytes. */
static int scan_string(struct scanner *sc)
{
	const char *p = sc->p + 1, *end = sc->end;

	while (p < end) {
		unsigned char c = (unsigned char)*p;

		if (c == '"') {
			sc->p = p + 1;
			return 0;
		}
		if (c < 0x20)
			return -EBADMSG;
		if (c != '\\') {
			p++;
			continue;
		}
		if (++p >= end)
			return -EBADMSG;
		if (*p == 'u') {
			if (end - p < 5 || !is_hex(p[1]) || !is_hex(p[2]) || !is_hex(p[3]) ||
			    !is_hex(p[4]))
				return -EBADMSG;
			p += 5;
		} else if (strchr("\"\\/bfnrt", *p) && *p) {
			p++;
		} else {
			return -EBADMSG;
		}
	}
	return -EBADMSG;
}

static size_t digits(struct scanner *sc)
{
	const char *start = sc->p;

	while (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9')
		sc->p++;
	return (size_t)(sc->p - start);
}

static int scan_number(struct scanner *sc)
{
	if (*sc->p == '-')
		sc->p++;
	if (sc->p < sc->end && *sc->p == '0')
		sc->p++;
	else if (!digits(sc))
		return -EBADMSG;
	if (sc->p < sc->end && *sc->p == '.') {
		sc->p++;
		if (!digits(sc))
			return -EBADMSG;
	}
	if (sc->p < sc->end && (*sc->p == 'e' || *sc->p == 'E')) {
		sc->p++;
		if (sc->p < sc->end && (*sc->p == '+' || *sc->p == '-'))
			sc->p++;
		if (!digits(sc))
			return -EBADMSG;
	}
	return 0;
}

static int scan_literal(struct scanner *sc, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, word, n))
		return -EBADMSG;
	sc->p += n;
	return 0;
}

static int scan_value(struct scanner *sc);

/* At '{' or '[': the members or elements, then the closing bracket. */
static int scan_container(struct scanner *sc)
{
	bool object = *sc->p == '{';
	char close = object ? '}' : ']';
	int err;

	if (++sc->depth > JSCAN_DEPTH_MAX)
		return -EBADMSG;
	sc->p++;
	ws(sc);
	if (sc->p < sc->end && *sc->p == close) {
		sc->p++;
		sc->depth--;
		return 0;
	}
	for (;;) {
		if (object) {
			ws(sc);
			if (sc->p >= sc->end || *sc->p != '"' || (err = scan_string(sc)))
				return -EBADMSG;
			ws(sc);
			if (sc->p >= sc->end || *sc->p++ != ':')
				return -EBADMSG;
		}
		err = scan_value(sc);
		if (err)
			return err;
		ws(sc);
		if (sc->p >= sc->end)
			return -EBADMSG;
		if (*sc->p == close)
			break;
		if (*sc->p++ != ',')
			return -EBADMSG;
	}
	sc->p++;
	sc->depth--;
	return 0;
}

static int scan_value(struct scanner *sc)
{
	ws(sc);
	if (sc->p >= sc->end)
		return -EBADMSG;
	if (++sc->values > sc->limit)
		return -E2BIG;
	switch (*sc->p) {
	case '{':
	case '[':
		return scan_container(sc);
	case '"':
		return scan_string(sc);
	case 't':
		return scan_literal(sc, "true");
	case 'f':
		return scan_literal(sc, "false");
	case 'n':
		return scan_literal(sc, "null");
	default:
		if (*sc->p == '-' || (*sc->p >= '0' && *sc->p <= '9'))
			return scan_number(sc);
		return -EBADMSG;
	}
}

int jscan_whole(const char *text, size_t len, struct jspan *out, size_t *values)
{
	struct scanner sc = { .p = text, .end = text + len, .limit = (size_t)-1 };
	const char *start;
	int err;

	ws(&sc);
	start = sc.p;
	err = scan_value(&sc);
	if (err)
		return -EBADMSG;
	out->p = start;
	out->len = (size_t)(sc.p - start);
	ws(&sc);
	if (values)
		*values = sc.values;
	return sc.p == sc.end ? 0 : -EBADMSG;
}

size_t jscan_count(struct jspan v, size_t max)
{
	struct scanner sc = { .p = v.p, .end = v.p + v.len, .limit = max };

	return scan_value(&sc) == -E2BIG ? max + 1 : sc.values;
}

/* Walk the members or elements of the checked span @v (opening bracket @open). */
static int walk(struct jspan v, char open, jscan_member_fn *mfn, jscan_elem_fn *efn, void *arg)
{
	struct scanner sc = { .p = v.p, .end = v.p + v.len, .limit = (size_t)-1 };
	const char *name = NULL;
	size_t name_len = 0;
	int err;

	if (!v.len || *v.p != open)
		return -EBADMSG;
	sc.p++;
	for (;;) {
		struct jspan val;

		ws(&sc);
		if (sc.p >= sc.end || *sc.p == '}' || *sc.p == ']')
			return 0;
		if (*sc.p == ',')
			sc.p++, ws(&sc);
		if (mfn) {
			name = sc.p + 1;
			if (scan_string(&sc))
				return -EBADMSG;
			name_len = (size_t)(sc.p - 1 - name);
			if (memchr(name, '\\', name_len))
				return -EBADMSG;
			ws(&sc);
			sc.p++; /* ':' (checked) */
		}
		ws(&sc);
		val.p = sc.p;
		if (scan_value(&sc))
			return -EBADMSG;
		val.len = (size_t)(sc.p - val.p);
		err = mfn ? mfn(arg, name, name_len, val) : efn(arg, val);
		if (err)
			return err;
	}
}

int jscan_object(struct jspan v, jscan_member_fn *fn, void *arg)
{
	return walk(v, '{', fn, NULL, arg);
}

int jscan_array(struct jspan v, jscan_elem_fn *fn, void *arg)
{
	return walk(v, '[', NULL, fn, arg);
}
