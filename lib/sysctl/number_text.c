/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Numbers as the kernel's sysctl handlers read and write them
 * (kernel/sysctl.c: proc_skip_spaces, proc_skip_char, proc_get_long,
 * proc_put_long, proc_put_char), shared by the vector handlers
 * (handlers_int.c) and the bitmap handler (handlers_bitmap.c). Bounded by
 * *size throughout: the input need not be a C string. Independent of the
 * process locale.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "number_text.h"

/* Longest number text the kernel parses, NUL included (proc_get_long). */
#define TMPBUFLEN 22

/* Bytes allowed right after a number: the kernel's proc_wspace_sep. */
static const char wspace_sep[] = { ' ', '\t', '\n' };

/*
 * The kernel's isspace() (lib/ctype.c): the C-locale spaces and also 0xA0
 * (Latin-1 no-break space). Ours must not depend on the process locale.
 */
static bool k_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static bool k_isdigit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int k_digit_value(unsigned char c)
{
	if (k_isdigit(c))
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return 99;
}

/* proc_skip_spaces: bounded by *size, so the input need not be a C string. */
void rcs_proc_skip_spaces(const char **buf, size_t *size)
{
	while (*size && k_isspace((unsigned char)**buf)) {
		(*buf)++;
		(*size)--;
	}
}

/*
 * strtoul_lenient with base 0 (kstrtoul rules): "0x" followed by a hex digit
 * selects base 16, a leading '0' base 8, anything else base 10. Parsing stops
 * at the first byte that is not a digit of the base; the caller judges it.
 * Return: 0, or -ERANGE when the value does not fit an unsigned long.
 */
static int parse_ulong(const char *s, const char **endp, unsigned long *res)
{
	unsigned long long v = 0;
	unsigned int base = 10;
	bool overflow = false;
	int d;

	if (s[0] == '0') {
		if ((s[1] | 0x20) == 'x' && k_digit_value((unsigned char)s[2]) < 16) {
			base = 16;
			s += 2;
		} else {
			base = 8;
		}
	}
	for (; (d = k_digit_value((unsigned char)*s)) < (int)base; s++) {
		if (v > (ULLONG_MAX - (unsigned int)d) / base)
			overflow = true; /* keep consuming digits, as the kernel does */
		v = v * base + (unsigned int)d;
	}
	if (overflow || v != (unsigned long)v)
		return -ERANGE;
	*endp = s;
	*res = (unsigned long)v;
	return 0;
}

/*
 * proc_get_long: one optionally negative number at *buf. Only the first
 * TMPBUFLEN - 1 bytes are looked at; a number that fills all of them is
 * refused because what follows it is unknown. The byte after the number,
 * when there is one within *size, must be one of @perm_tr (@perm_tr_len
 * bytes), and is stored in *@tr when @tr is not NULL (*@tr is left as it
 * was when the number ends the input, as upstream does).
 * On success *buf and *size move past the number.
 */
int rcs_proc_get_long_tr(const char **buf, size_t *size, unsigned long *val, bool *neg,
			 const char *perm_tr, size_t perm_tr_len, char *tr)
{
	char tmp[TMPBUFLEN];
	const char *p;
	size_t len = *size;

	if (!len)
		return -EINVAL;
	if (len > TMPBUFLEN - 1)
		len = TMPBUFLEN - 1;
	memcpy(tmp, *buf, len);
	tmp[len] = '\0';
	p = tmp;
	*neg = false;
	if (*p == '-' && *size > 1) {
		*neg = true;
		p++;
	}
	if (!k_isdigit((unsigned char)*p))
		return -EINVAL;
	if (parse_ulong(p, &p, val))
		return -EINVAL;
	len = (size_t)(p - tmp);
	if (len == TMPBUFLEN - 1)
		return -EINVAL;
	if (len < *size && perm_tr_len && !memchr(perm_tr, *p, perm_tr_len))
		return -EINVAL;
	if (tr && len < *size)
		*tr = *p;
	*buf += len;
	*size -= len;
	return 0;
}

/* proc_get_long with proc_wspace_sep, what the vector handlers use. */
int rcs_proc_get_long(const char **buf, size_t *size, unsigned long *val, bool *neg)
{
	return rcs_proc_get_long_tr(buf, size, val, neg, wspace_sep, sizeof(wspace_sep), NULL);
}

/* proc_put_long: decimal text, cut to what fits in *size. */
void rcs_proc_put_long(char **buf, size_t *size, unsigned long val, bool neg)
{
	char tmp[TMPBUFLEN];
	size_t len;

	snprintf(tmp, sizeof(tmp), "%s%lu", neg ? "-" : "", val);
	len = strlen(tmp);
	if (len > *size)
		len = *size;
	memcpy(*buf, tmp, len);
	*buf += len;
	*size -= len;
}

void rcs_proc_put_char(char **buf, size_t *size, char c)
{
	if (*size) {
		**buf = c;
		(*buf)++;
		(*size)--;
	}
}

/* proc_skip_char: skip every @v at the start. */
void rcs_proc_skip_char(const char **buf, size_t *size, char v)
{
	while (*size && **buf == v) {
		(*buf)++;
		(*size)--;
	}
}
