/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Numeric sysctl handlers: proc_dointvec, proc_dointvec_minmax,
 * proc_douintvec, proc_douintvec_minmax, proc_doulongvec_minmax, proc_dobool.
 *
 * The text format, the accepted input, *lenp and *ppos follow the Linux
 * kernel's kernel/sysctl.c (proc_get_long, proc_skip_spaces, do_proc_dointvec,
 * do_proc_douintvec, do_proc_doulongvec_minmax, proc_dobool) with
 * sysctl_writes_strict == SYSCTL_WRITES_STRICT. Where we differ on purpose:
 *
 *  - A refused vector write stores nothing. The kernel stores the elements
 *    before the bad one; we parse and check the whole input into a temporary
 *    array, then store it in one step that cannot fail. The bounds are read
 *    once per write: they may point to other live tunables, and a bound that
 *    changed half way must not leave half a vector stored behind a success.
 *  - Elements are loaded and stored with __atomic builtins, so a reader
 *    outside the tree never sees a torn element (the vector as a whole is not
 *    atomic for such readers, as in the kernel; the tree serializes its own
 *    readers of these handlers with its writers).
 *  - A NULL extra1 or extra2 of a minmax handler leaves that side unchecked.
 *  - A negative *ppos, a NULL table, lenp or ppos, or a NULL buffer with
 *    *lenp > 0 is refused with -EINVAL (the kernel's VFS never passes them).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rcustring/sysctl.h"
#include "handlers.h"

/* The kernel caps one numeric write at PAGE_SIZE - 1 bytes. */
#define PROC_PAGE_SIZE 4096
/* Most numbers one write can hold: "0 0 0 ..." in PROC_PAGE_SIZE - 1 bytes. */
#define VEC_WRITE_MAX (PROC_PAGE_SIZE / 2)
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
static void skip_spaces(const char **buf, size_t *size)
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
 * when there is one within *size, must be a space, tab or newline.
 * On success *buf and *size move past the number.
 */
static int get_long(const char **buf, size_t *size, unsigned long *val, bool *neg)
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
	if (len < *size && !memchr(wspace_sep, *p, sizeof(wspace_sep)))
		return -EINVAL;
	*buf += len;
	*size -= len;
	return 0;
}

/* proc_put_long: decimal text, cut to what fits in *size. */
static void put_long(char **buf, size_t *size, unsigned long val, bool neg)
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

static void put_char(char **buf, size_t *size, char c)
{
	if (*size) {
		**buf = c;
		(*buf)++;
		(*size)--;
	}
}

/* A bound read once per write, in the element's type. */
union bound {
	int i;
	unsigned long ul;
};

/* How one element type converts. */
struct vec_type {
	size_t elem_size;
	/* Read the bound at @p (NULL: unchecked) into @b; return @b or NULL. */
	const union bound *(*bound)(const void *p, union bound *b);
	/* Write: check element @i against the bounds and put it in @tmp. 0 or -EINVAL. */
	int (*put)(const union bound *min, const union bound *max, void *tmp, size_t i, bool neg,
		   unsigned long lval);
	/* Store @n checked elements of @tmp into @data. */
	void (*store)(void *data, const void *tmp, size_t n);
	/* Read: element @i as sign and magnitude. */
	void (*get)(const void *data, size_t i, bool *neg, unsigned long *lval);
};

static const union bound *int_bound(const void *p, union bound *b)
{
	if (!p)
		return NULL;
	b->i = __atomic_load_n((const int *)p, __ATOMIC_RELAXED);
	return b;
}

static int int_put(const union bound *min, const union bound *max, void *tmp, size_t i,
		   bool neg, unsigned long lval)
{
	int v;

	/* do_proc_dointvec_conv: -(INT_MAX + 1) .. INT_MAX */
	if (neg) {
		if (lval > (unsigned long)INT_MAX + 1)
			return -EINVAL;
		v = (int)-(long)lval;
	} else {
		if (lval > (unsigned long)INT_MAX)
			return -EINVAL;
		v = (int)lval;
	}
	if ((min && min->i > v) || (max && max->i < v))
		return -EINVAL;
	((int *)tmp)[i] = v;
	return 0;
}

static void int_store(void *data, const void *tmp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		__atomic_store_n((int *)data + i, ((const int *)tmp)[i], __ATOMIC_RELAXED);
}

static void int_get(const void *data, size_t i, bool *neg, unsigned long *lval)
{
	int v = __atomic_load_n((const int *)data + i, __ATOMIC_RELAXED);

	*neg = v < 0;
	*lval = v < 0 ? -(unsigned long)v : (unsigned long)v;
}

static const union bound *ulong_bound(const void *p, union bound *b)
{
	if (!p)
		return NULL;
	b->ul = __atomic_load_n((const unsigned long *)p, __ATOMIC_RELAXED);
	return b;
}

static int ulong_put(const union bound *min, const union bound *max, void *tmp, size_t i,
		     bool neg, unsigned long lval)
{
	if (neg)
		return -EINVAL;
	if ((min && lval < min->ul) || (max && lval > max->ul))
		return -EINVAL;
	((unsigned long *)tmp)[i] = lval;
	return 0;
}

static void ulong_store(void *data, const void *tmp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		__atomic_store_n((unsigned long *)data + i, ((const unsigned long *)tmp)[i],
				 __ATOMIC_RELAXED);
}

static void ulong_get(const void *data, size_t i, bool *neg, unsigned long *lval)
{
	*neg = false;
	*lval = __atomic_load_n((const unsigned long *)data + i, __ATOMIC_RELAXED);
}

static const struct vec_type int_type = { sizeof(int), int_bound, int_put, int_store, int_get };
static const struct vec_type ulong_type = { sizeof(unsigned long), ulong_bound, ulong_put,
					    ulong_store, ulong_get };

/*
 * do_proc_dointvec's write loop over @buf, into @tmp (room for @vleft
 * elements) instead of the live data. Returns the error, the elements
 * taken (*n) and the bytes left unconsumed.
 */
static int vec_parse(const union bound *min, const union bound *max, void *tmp, size_t vleft,
		     const struct vec_type *ty, const char *buf, size_t len, size_t *n,
		     size_t *left_out)
{
	const char *p = buf;
	size_t left = len, i = 0;
	int err = 0;

	for (; left && i < vleft; i++) {
		unsigned long lval;
		bool neg;

		skip_spaces(&p, &left);
		if (!left)
			break;
		err = get_long(&p, &left, &lval, &neg);
		if (err)
			break;
		if (ty->put(min, max, tmp, i, neg, lval)) {
			err = -EINVAL;
			break;
		}
	}
	if (!err && left)
		skip_spaces(&p, &left);
	*n = i;
	*left_out = left;
	return err;
}

/*
 * The vector handlers. @min / @max: bounds (minmax handlers) or NULL.
 */
static int do_vec(const struct ctl_table *t, void *data, const void *min, const void *max,
		  const struct vec_type *ty, int write, void *buffer, size_t *lenp, off_t *ppos)
{
	size_t vleft, left;
	bool first;
	int err;

	err = rcs_handler_check_args(t, buffer, lenp, ppos);
	if (err)
		return err;
	/* Nothing to do, or a read past the start: end of file. */
	if (!data || t->maxlen <= 0 || !*lenp || (*ppos && !write)) {
		*lenp = 0;
		return 0;
	}
	vleft = (size_t)t->maxlen / ty->elem_size;

	if (write) {
		/* Strict mode: a numeric write not at position 0 is ignored. */
		if (*ppos) {
			*ppos += (off_t)*lenp;
			return 0;
		}
		/* Room for every number a page of text can hold. */
		unsigned long tmp[VEC_WRITE_MAX];
		union bound minb, maxb;
		const union bound *minp = ty->bound(min, &minb), *maxp = ty->bound(max, &maxb);
		size_t len = *lenp, n;

		if (len > PROC_PAGE_SIZE - 1)
			len = PROC_PAGE_SIZE - 1;
		if (vleft > sizeof(tmp) / ty->elem_size)
			vleft = sizeof(tmp) / ty->elem_size;
		/* Parse and check everything first; store only when all of it is good. */
		err = vec_parse(minp, maxp, tmp, vleft, ty, buffer, len, &n, &left);
		if (!n)
			return err ? err : -EINVAL;
		if (!err)
			ty->store(data, tmp, n);
		*lenp -= left;
		*ppos += (off_t)*lenp;
		return err;
	}

	/* Read: tab-separated, newline after the last element if it fits. */
	{
		char *out = buffer;
		size_t i;

		left = *lenp;
		first = true;
		for (i = 0; left && i < vleft; i++, first = false) {
			unsigned long lval;
			bool neg;

			ty->get(data, i, &neg, &lval);
			if (!first)
				put_char(&out, &left, '\t');
			put_long(&out, &left, lval, neg);
		}
		if (!first && left)
			put_char(&out, &left, '\n');
		*lenp -= left;
		*ppos += (off_t)*lenp;
	}
	return 0;
}

/**
 * proc_dointvec - read or write a vector of int
 *
 * data is int[maxlen / sizeof(int)]. Write: whitespace-separated numbers
 * (decimal, 0x hex, 0 octal, '-' allowed) at position 0; extra numbers past
 * the vector's end are left unconsumed. Read: tab-separated with "\n".
 * Any thread may call it; elements are stored atomically one by one.
 * Return: 0 or -EINVAL (bad number, out of int range, no number at all);
 * nothing is stored on error.
 */
int proc_dointvec(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
		  off_t *ppos)
{
	return do_vec(table, table ? table->data : NULL, NULL, NULL, &int_type, write, buffer,
		      lenp, ppos);
}

/**
 * proc_dointvec_minmax - proc_dointvec() with bounds
 *
 * extra1 / extra2 point to the int minimum / maximum (either may be NULL).
 * Return: as proc_dointvec(); a value outside the bounds is -EINVAL.
 */
int proc_dointvec_minmax(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
			 off_t *ppos)
{
	if (!table)
		return -EINVAL;
	return do_vec(table, table->data, table->extra1, table->extra2, &int_type, write, buffer,
		      lenp, ppos);
}

/**
 * proc_doulongvec_minmax - read or write a vector of unsigned long with bounds
 *
 * data is unsigned long[maxlen / sizeof(unsigned long)]; extra1 / extra2
 * point to the unsigned long minimum / maximum (either may be NULL).
 * Return: 0 or -EINVAL (bad number, negative, overflow, out of bounds);
 * nothing is stored on error.
 */
int proc_doulongvec_minmax(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
			   off_t *ppos)
{
	if (!table)
		return -EINVAL;
	return do_vec(table, table->data, table->extra1, table->extra2, &ulong_type, write, buffer,
		      lenp, ppos);
}

/*
 * do_proc_douintvec: one element only ("Arrays are not supported, keep this
 * simple" upstream). A successful write leaves *lenp (all consumed) and
 * *ppos as they were, and ignores anything after the number and its
 * trailing spaces, exactly as upstream's do_proc_douintvec_w does.
 */
static int do_uint(const struct ctl_table *t, bool minmax, int write, void *buffer,
		   size_t *lenp, off_t *ppos)
{
	const unsigned int *min, *max;
	unsigned int *data;
	unsigned long lval;
	const char *p;
	size_t left;
	bool neg;
	int err;

	err = rcs_handler_check_args(t, buffer, lenp, ppos);
	if (err)
		return err;
	data = t->data;
	min = minmax ? t->extra1 : NULL;
	max = minmax ? t->extra2 : NULL;
	if (!data || t->maxlen <= 0 || !*lenp || (*ppos && !write)) {
		*lenp = 0;
		return 0;
	}
	if ((size_t)t->maxlen / sizeof(unsigned int) != 1) {
		*lenp = 0;
		return -EINVAL;
	}
	if (!write) {
		char *out = buffer;

		left = *lenp;
		put_long(&out, &left, __atomic_load_n(data, __ATOMIC_RELAXED), false);
		if (left)
			put_char(&out, &left, '\n');
		*lenp -= left;
		*ppos += (off_t)*lenp;
		return 0;
	}
	if (*ppos) {
		*ppos += (off_t)*lenp;
		return 0;
	}
	left = *lenp;
	if (left > PROC_PAGE_SIZE - 1)
		left = PROC_PAGE_SIZE - 1;
	p = buffer;
	skip_spaces(&p, &left);
	if (!left)
		return -EINVAL;
	if (get_long(&p, &left, &lval, &neg) || neg)
		return -EINVAL;
	/* Upstream's minmax conv says -ERANGE, but its caller turns it into -EINVAL. */
	if (lval > UINT_MAX || (min && lval < *min) || (max && lval > *max))
		return -EINVAL;
	__atomic_store_n(data, (unsigned int)lval, __ATOMIC_RELAXED);
	return 0;
}

/**
 * proc_douintvec - read or write one unsigned int
 *
 * data is an unsigned int and maxlen must be sizeof(unsigned int) (the
 * kernel refuses arrays here). A '-' sign is refused.
 * Return: 0 or -EINVAL (bad number, negative, above UINT_MAX, maxlen not one
 * element); nothing is stored on error.
 */
int proc_douintvec(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
		   off_t *ppos)
{
	return do_uint(table, false, write, buffer, lenp, ppos);
}

/**
 * proc_douintvec_minmax - proc_douintvec() with bounds
 *
 * extra1 / extra2 point to the unsigned int minimum / maximum (may be NULL).
 * Return: as proc_douintvec(); out of bounds is -EINVAL (what the kernel
 * returns to user space).
 */
int proc_douintvec_minmax(const struct ctl_table *table, int write, void *buffer,
			  size_t *lenp, off_t *ppos)
{
	return do_uint(table, true, write, buffer, lenp, ppos);
}

/**
 * proc_dobool - read or write one bool
 *
 * data is a bool and maxlen must be sizeof(bool). Write: any int
 * (as proc_dointvec()), stored as value != 0. Read: "0\n" or "1\n".
 * Return: 0 or -EINVAL (maxlen not sizeof(bool), bad number).
 */
int proc_dobool(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
		off_t *ppos)
{
	struct ctl_table tmp;
	bool *data, at_start;
	int val, err;

	if (!table || table->maxlen != sizeof(bool))
		return -EINVAL;
	data = table->data;
	tmp = *table;
	tmp.maxlen = sizeof(val);
	tmp.data = &val;
	at_start = ppos && *ppos == 0 && lenp && *lenp;
	val = data ? __atomic_load_n(data, __ATOMIC_RELAXED) : 0;
	err = do_vec(&tmp, data ? &val : NULL, NULL, NULL, &int_type, write, buffer, lenp, ppos);
	if (err)
		return err;
	/*
	 * do_vec stores into val only when a whole write at position 0 was
	 * accepted; an ignored write must not store back a stale value.
	 */
	if (write && data && at_start)
		__atomic_store_n(data, val != 0, __ATOMIC_RELAXED);
	return 0;
}
