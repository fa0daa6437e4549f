/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Numeric sysctl handlers: proc_dointvec, proc_dointvec_minmax,
 * proc_douintvec, proc_douintvec_minmax, proc_doulongvec_minmax, proc_dobool,
 * proc_dou8vec_minmax, proc_dointvec_jiffies, proc_dointvec_userhz_jiffies,
 * proc_dointvec_ms_jiffies, proc_doulongvec_ms_jiffies_minmax and
 * proc_do_large_bitmap.
 *
 * The text format, the accepted input, *lenp and *ppos follow the Linux
 * kernel's kernel/sysctl.c of 6.12 (proc_get_long, proc_skip_spaces,
 * do_proc_dointvec and its conversion functions, do_proc_douintvec,
 * do_proc_doulongvec_minmax, proc_dobool, proc_dou8vec_minmax,
 * proc_do_large_bitmap) and kernel/time/time.c, with HZ = SYSCTL_HZ,
 * USER_HZ = SYSCTL_USER_HZ and sysctl_writes_strict == SYSCTL_WRITES_STRICT.
 * As upstream, one framing (do_vec) serves every vector kind and a kind is
 * its conversion function (struct vec_type); what registration and error
 * texts need to know about a kind is its row in handler_info.c. Where we
 * differ on purpose:
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
 * when there is one within *size, must be one of @perm_tr (@perm_tr_len
 * bytes), and is stored in *@tr when @tr is not NULL (*@tr is left as it
 * was when the number ends the input, as upstream does).
 * On success *buf and *size move past the number.
 */
static int get_long_tr(const char **buf, size_t *size, unsigned long *val, bool *neg,
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
static int get_long(const char **buf, size_t *size, unsigned long *val, bool *neg)
{
	return get_long_tr(buf, size, val, neg, wspace_sep, sizeof(wspace_sep), NULL);
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
	unsigned int u;
	unsigned long ul;
};

/*
 * How one element type converts: the kernel's conversion-function pattern.
 * One framing (do_vec) serves every vector handler; a kind differs only in
 * its conversion (iconv for int elements, convmul / convdiv for unsigned
 * long ones, as upstream's do_proc_doulongvec_minmax).
 */
struct vec_type {
	size_t elem_size;
	/* Read the bound at @p (NULL: unchecked) into @b; return @b or NULL. */
	const union bound *(*bound)(const void *p, union bound *b);
	/* Write: convert, check element @i against the bounds, put it in @tmp. 0 or -EINVAL. */
	int (*put)(const struct vec_type *ty, const union bound *min, const union bound *max,
		   void *tmp, size_t i, bool neg, unsigned long lval);
	/* Store @n checked elements of @tmp into @data. */
	void (*store)(void *data, const void *tmp, size_t n);
	/* Read: element @i as sign and magnitude. */
	void (*get)(const struct vec_type *ty, const void *data, size_t i, bool *neg,
		    unsigned long *lval);
	/*
	 * int elements: the kernel's do_proc_dointvec*_conv. Write: text value
	 * to stored value, non-zero when it does not convert. Read: back.
	 */
	int (*iconv_w)(bool neg, unsigned long lval, int *v);
	void (*iconv_r)(int v, bool *neg, unsigned long *lval);
	/* unsigned long elements: stored = convmul * text / convdiv. */
	unsigned long convmul, convdiv;
	/*
	 * do_proc_douintvec: exactly one element ("Arrays are not supported,
	 * keep this simple" upstream, else -EINVAL), and a successful write
	 * leaves *lenp and *ppos as they were.
	 */
	bool single;
};

/* do_proc_dointvec_conv: -(INT_MAX + 1) .. INT_MAX */
static int plain_iconv_w(bool neg, unsigned long lval, int *v)
{
	if (neg) {
		if (lval > (unsigned long)INT_MAX + 1)
			return -EINVAL;
		*v = (int)-(long)lval;
	} else {
		if (lval > (unsigned long)INT_MAX)
			return -EINVAL;
		*v = (int)lval;
	}
	return 0;
}

/* Sign and magnitude of @v, as every int conversion reads it. */
static void split_int(int v, bool *neg, unsigned long *lval)
{
	*neg = v < 0;
	*lval = v < 0 ? -(unsigned long)v : (unsigned long)v;
}

static void plain_iconv_r(int v, bool *neg, unsigned long *lval)
{
	split_int(v, neg, lval);
}

/*
 * do_proc_dointvec_jiffies_conv: seconds in the text, jiffies stored. The
 * magnitude is checked against INT_MAX / HZ for both signs; a read
 * truncates toward zero (-1 jiffy reads "-0", as upstream prints it).
 */
static int jiffies_iconv_w(bool neg, unsigned long lval, int *v)
{
	if (lval > INT_MAX / SYSCTL_HZ)
		return 1;
	*v = neg ? (int)-(long)(lval * SYSCTL_HZ) : (int)(lval * SYSCTL_HZ);
	return 0;
}

static void jiffies_iconv_r(int v, bool *neg, unsigned long *lval)
{
	split_int(v, neg, lval);
	*lval /= SYSCTL_HZ;
}

/* The kernel's TICK_NSEC (include/vdso/jiffies.h). */
#define TICK_NSEC ((1000000000UL + SYSCTL_HZ / 2) / SYSCTL_HZ)

/* kernel/time/time.c clock_t_to_jiffies(), on 64-bit unsigned long. */
static unsigned long clock_t_to_jiffies(unsigned long x)
{
	if (SYSCTL_HZ % SYSCTL_USER_HZ == 0) {
		if (x >= ~0UL / (SYSCTL_HZ / SYSCTL_USER_HZ))
			return ~0UL;
		return x * (SYSCTL_HZ / SYSCTL_USER_HZ);
	}
	if (x >= ~0UL / SYSCTL_HZ * SYSCTL_USER_HZ)
		return ~0UL;
	return (unsigned long)((uint64_t)x * SYSCTL_HZ / SYSCTL_USER_HZ);
}

/* kernel/time/time.c jiffies_to_clock_t(). */
static unsigned long jiffies_to_clock_t(unsigned long x)
{
	if (TICK_NSEC % (1000000000UL / SYSCTL_USER_HZ) == 0) {
		if (SYSCTL_HZ < SYSCTL_USER_HZ)
			return x * (SYSCTL_USER_HZ / SYSCTL_HZ);
		return x / (SYSCTL_HZ / SYSCTL_USER_HZ);
	}
	return (unsigned long)((uint64_t)x * TICK_NSEC / (1000000000UL / SYSCTL_USER_HZ));
}

/*
 * do_proc_dointvec_userhz_jiffies_conv: 1/USER_HZ seconds in the text.
 * Upstream converts the signed value as an unsigned long and stores the
 * result cut to int without a further check: "-5" becomes ~0UL jiffies,
 * stored as -1, and a large value wraps. We keep that, bit for bit.
 */
static int userhz_iconv_w(bool neg, unsigned long lval, int *v)
{
	if (SYSCTL_USER_HZ < SYSCTL_HZ && lval > (LONG_MAX / SYSCTL_HZ) * SYSCTL_USER_HZ)
		return 1;
	*v = (int)clock_t_to_jiffies(neg ? -lval : lval);
	return 0;
}

static void userhz_iconv_r(int v, bool *neg, unsigned long *lval)
{
	split_int(v, neg, lval);
	*lval = jiffies_to_clock_t(*lval);
}

/* include/linux/jiffies.h: MAX_JIFFY_OFFSET, what msecs_to_jiffies gives for "infinite". */
#define MAX_JIFFY_OFFSET ((LONG_MAX >> 1) - 1)
_Static_assert(SYSCTL_HZ <= 1000 && 1000 % SYSCTL_HZ == 0,
	       "msecs conversions below are the kernel's HZ <= 1000, 1000 % HZ == 0 case");

/* msecs_to_jiffies(): note the unsigned int argument, which cuts the value. */
static unsigned long msecs_to_jiffies(unsigned int m)
{
	if ((int)m < 0)
		return MAX_JIFFY_OFFSET;
	return (m + (1000 / SYSCTL_HZ) - 1) / (1000 / SYSCTL_HZ);
}

/* jiffies_to_msecs() returns an unsigned int. */
static unsigned int jiffies_to_msecs(unsigned long j)
{
	return (unsigned int)((1000 / SYSCTL_HZ) * j);
}

/* do_proc_dointvec_ms_jiffies_conv: milliseconds in the text, rounded up to jiffies. */
static int ms_iconv_w(bool neg, unsigned long lval, int *v)
{
	unsigned long jif = msecs_to_jiffies((unsigned int)(neg ? -lval : lval));

	if (jif > INT_MAX)
		return 1;
	*v = (int)jif;
	return 0;
}

static void ms_iconv_r(int v, bool *neg, unsigned long *lval)
{
	split_int(v, neg, lval);
	*lval = jiffies_to_msecs(*lval);
}

static const union bound *int_bound(const void *p, union bound *b)
{
	if (!p)
		return NULL;
	b->i = __atomic_load_n((const int *)p, __ATOMIC_RELAXED);
	return b;
}

static int int_put(const struct vec_type *ty, const union bound *min, const union bound *max,
		   void *tmp, size_t i, bool neg, unsigned long lval)
{
	int v;

	if (ty->iconv_w(neg, lval, &v))
		return -EINVAL;
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

static void int_get(const struct vec_type *ty, const void *data, size_t i, bool *neg,
		    unsigned long *lval)
{
	ty->iconv_r(__atomic_load_n((const int *)data + i, __ATOMIC_RELAXED), neg, lval);
}

static const union bound *ulong_bound(const void *p, union bound *b)
{
	if (!p)
		return NULL;
	b->ul = __atomic_load_n((const unsigned long *)p, __ATOMIC_RELAXED);
	return b;
}

/* __do_proc_doulongvec_minmax: the product wraps, as upstream's does. */
static int ulong_put(const struct vec_type *ty, const union bound *min, const union bound *max,
		     void *tmp, size_t i, bool neg, unsigned long lval)
{
	if (neg)
		return -EINVAL;
	lval = ty->convmul * lval / ty->convdiv;
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

static void ulong_get(const struct vec_type *ty, const void *data, size_t i, bool *neg,
		      unsigned long *lval)
{
	*neg = false;
	*lval = ty->convdiv * __atomic_load_n((const unsigned long *)data + i, __ATOMIC_RELAXED) /
		ty->convmul;
}

static const union bound *uint_bound(const void *p, union bound *b)
{
	if (!p)
		return NULL;
	b->u = __atomic_load_n((const unsigned int *)p, __ATOMIC_RELAXED);
	return b;
}

/* do_proc_douintvec_conv and its minmax variant (whose -ERANGE the caller turns into -EINVAL). */
static int uint_put(const struct vec_type *ty, const union bound *min, const union bound *max,
		    void *tmp, size_t i, bool neg, unsigned long lval)
{
	(void)ty;
	if (neg || lval > UINT_MAX)
		return -EINVAL;
	if ((min && lval < min->u) || (max && lval > max->u))
		return -EINVAL;
	((unsigned int *)tmp)[i] = (unsigned int)lval;
	return 0;
}

static void uint_store(void *data, const void *tmp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		__atomic_store_n((unsigned int *)data + i, ((const unsigned int *)tmp)[i],
				 __ATOMIC_RELAXED);
}

static void uint_get(const struct vec_type *ty, const void *data, size_t i, bool *neg,
		     unsigned long *lval)
{
	(void)ty;
	*neg = false;
	*lval = __atomic_load_n((const unsigned int *)data + i, __ATOMIC_RELAXED);
}

#define INT_TYPE(w, r) { sizeof(int), int_bound, int_put, int_store, int_get, w, r, 1, 1, false }
#define ULONG_TYPE(mul, div) { sizeof(unsigned long), ulong_bound, ulong_put, ulong_store, \
			       ulong_get, NULL, NULL, mul, div, false }
static const struct vec_type int_type = INT_TYPE(plain_iconv_w, plain_iconv_r);
static const struct vec_type jiffies_type = INT_TYPE(jiffies_iconv_w, jiffies_iconv_r);
static const struct vec_type userhz_type = INT_TYPE(userhz_iconv_w, userhz_iconv_r);
static const struct vec_type ms_type = INT_TYPE(ms_iconv_w, ms_iconv_r);
static const struct vec_type ulong_type = ULONG_TYPE(1, 1);
static const struct vec_type ulong_ms_type = ULONG_TYPE(SYSCTL_HZ, 1000);
static const struct vec_type uint_type = { sizeof(unsigned int), uint_bound, uint_put, uint_store,
					   uint_get, NULL, NULL, 1, 1, true };

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
		if (ty->put(ty, min, max, tmp, i, neg, lval)) {
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
	if (ty->single && ((size_t)t->maxlen % ty->elem_size || vleft != 1)) {
		*lenp = 0;
		return -EINVAL;
	}

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
		if (ty->single)
			return err;
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

			ty->get(ty, data, i, &neg, &lval);
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
	return do_vec(table, table ? table->data : NULL, NULL, NULL, &uint_type, write, buffer, lenp,
		      ppos);
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
	if (!table)
		return -EINVAL;
	return do_vec(table, table->data, table->extra1, table->extra2, &uint_type, write, buffer,
		      lenp, ppos);
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

/**
 * proc_dou8vec_minmax - read or write one u8 with bounds
 *
 * data is a uint8_t and maxlen must be 1 (upstream: "Do not support arrays
 * yet"; any other maxlen is -EINVAL, read or write). extra1 / extra2 point
 * to *unsigned int* bounds, as upstream's SYSCTL_ZERO etc.; a NULL bound is
 * 0 or 255. Text as proc_douintvec(): no sign; a successful write leaves
 * *lenp and *ppos as they were.
 * Return: 0 or -EINVAL; nothing is stored on error.
 */
int proc_dou8vec_minmax(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
			off_t *ppos)
{
	unsigned int min = 0, max = 255U, val;
	struct ctl_table tmp;
	uint8_t *data;
	int err;

	if (!table || table->maxlen != sizeof(uint8_t))
		return -EINVAL;
	err = rcs_handler_check_args(table, buffer, lenp, ppos);
	if (err)
		return err;
	data = table->data;
	if (table->extra1)
		min = __atomic_load_n((const unsigned int *)table->extra1, __ATOMIC_RELAXED);
	if (table->extra2)
		max = __atomic_load_n((const unsigned int *)table->extra2, __ATOMIC_RELAXED);
	tmp = *table;
	tmp.maxlen = sizeof(val);
	tmp.data = data ? &val : NULL;
	val = data ? __atomic_load_n(data, __ATOMIC_RELAXED) : 0;
	/*
	 * Store only a write that was parsed (position 0, something to write):
	 * an ignored write must not store back a value read before it.
	 */
	bool at_start = write && *ppos == 0 && *lenp;

	err = do_vec(&tmp, tmp.data, &min, &max, &uint_type, write, buffer, lenp, ppos);
	if (err)
		return err;
	if (at_start && data)
		__atomic_store_n(data, (uint8_t)val, __ATOMIC_RELAXED);
	return 0;
}

/**
 * proc_dointvec_jiffies - int vector, seconds in the text, jiffies stored
 *
 * Stored = seconds * SYSCTL_HZ; a value above INT_MAX / SYSCTL_HZ seconds
 * (either sign) is -EINVAL. A read divides by SYSCTL_HZ, toward zero.
 * Return: as proc_dointvec().
 */
int proc_dointvec_jiffies(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
			  off_t *ppos)
{
	return do_vec(table, table ? table->data : NULL, NULL, NULL, &jiffies_type, write, buffer,
		      lenp, ppos);
}

/**
 * proc_dointvec_userhz_jiffies - int vector, 1/SYSCTL_USER_HZ seconds in the text
 *
 * Upstream's clock_t_to_jiffies / jiffies_to_clock_t, including their
 * edges: a value above (LONG_MAX / SYSCTL_HZ) * SYSCTL_USER_HZ is -EINVAL,
 * a negative one is stored as -1 and a large one wraps to int.
 * Return: as proc_dointvec().
 */
int proc_dointvec_userhz_jiffies(const struct ctl_table *table, int write, void *buffer,
				 size_t *lenp, off_t *ppos)
{
	return do_vec(table, table ? table->data : NULL, NULL, NULL, &userhz_type, write, buffer,
		      lenp, ppos);
}

/**
 * proc_dointvec_ms_jiffies - int vector, milliseconds in the text
 *
 * A write rounds up to whole jiffies (msecs_to_jiffies on the value cut to
 * 32 bits; a negative value is "infinite" and -EINVAL); a read gives
 * jiffies * (1000 / SYSCTL_HZ).
 * Return: as proc_dointvec().
 */
int proc_dointvec_ms_jiffies(const struct ctl_table *table, int write, void *buffer,
			     size_t *lenp, off_t *ppos)
{
	return do_vec(table, table ? table->data : NULL, NULL, NULL, &ms_type, write, buffer, lenp,
		      ppos);
}

/**
 * proc_doulongvec_ms_jiffies_minmax - unsigned long vector, milliseconds in the text
 *
 * Stored = SYSCTL_HZ * ms / 1000 (truncated; the product wraps as
 * upstream's does); read = 1000 * stored / SYSCTL_HZ. extra1 / extra2 point
 * to unsigned long bounds in *jiffies*, checked after the conversion;
 * either or both may be NULL.
 * Return: as proc_doulongvec_minmax().
 */
int proc_doulongvec_ms_jiffies_minmax(const struct ctl_table *table, int write, void *buffer,
				      size_t *lenp, off_t *ppos)
{
	if (!table)
		return -EINVAL;
	return do_vec(table, table->data, table->extra1, table->extra2, &ulong_ms_type, write,
		      buffer, lenp, ppos);
}

#define BITS_PER_ULONG (CHAR_BIT * sizeof(unsigned long))

static bool bit_test(const unsigned long *map, unsigned long bit)
{
	return (__atomic_load_n(&map[bit / BITS_PER_ULONG], __ATOMIC_RELAXED) >>
		(bit % BITS_PER_ULONG)) & 1;
}

/* find_next_bit (@set) / find_next_zero_bit (!@set) from @bit; @len if none. */
static unsigned long bit_find(const unsigned long *map, unsigned long len, unsigned long bit,
			      bool set)
{
	for (; bit < len; bit++)
		if (bit_test(map, bit) == set)
			return bit;
	return len;
}

/* bitmap_set(tmp, a, b - a + 1): @tmp is private, no atomics needed. */
static void bits_set(unsigned long *tmp, unsigned long a, unsigned long b)
{
	for (unsigned long bit = a; bit <= b; bit++)
		tmp[bit / BITS_PER_ULONG] |= 1UL << (bit % BITS_PER_ULONG);
}

/* proc_skip_char: skip every @v at the start. */
static void skip_char(const char **buf, size_t *size, char v)
{
	while (*size && **buf == v) {
		(*buf)++;
		(*size)--;
	}
}

/*
 * The write half of proc_do_large_bitmap into @tmp (zeroed). Returns the
 * error and, in *@left, what upstream's variable of that name holds at the
 * end: the bytes not consumed, including those past the first page.
 */
static int bitmap_parse(unsigned long *tmp, unsigned long bitmap_len, const char *buffer,
			size_t len, size_t *left_out)
{
	static const char tr_a[] = { '-', ',', '\n' }, tr_b[] = { ',', '\n', 0 };
	const char *p = buffer;
	size_t left = len, skipped = 0;
	char c = 0;
	int err = 0;

	if (left > PROC_PAGE_SIZE - 1) {
		left = PROC_PAGE_SIZE - 1;
		/* How much of the buffer this pass skips: a later write continues. */
		skipped = len - left;
	}
	skip_char(&p, &left, '\n');
	while (!err && left) {
		unsigned long val_a, val_b;
		size_t saved_left = left;
		bool neg;

		err = get_long_tr(&p, &left, &val_a, &neg, tr_a, sizeof(tr_a), &c);
		/*
		 * A cut input consumed whole, or one byte left (maybe a "-"):
		 * stop before this number, the caller writes the rest again.
		 */
		if (left <= 1 && skipped) {
			left = saved_left;
			break;
		}
		if (err)
			break;
		if (val_a >= bitmap_len || neg) {
			err = -EINVAL;
			break;
		}
		val_b = val_a;
		if (left) {
			p++;
			left--;
		}
		if (c == '-') {
			err = get_long_tr(&p, &left, &val_b, &neg, tr_b, sizeof(tr_b), &c);
			if (!left && skipped) {
				left = saved_left;
				break;
			}
			if (err)
				break;
			if (val_b >= bitmap_len || neg || val_a > val_b) {
				err = -EINVAL;
				break;
			}
			if (left) {
				p++;
				left--;
			}
		}
		bits_set(tmp, val_a, val_b);
		skip_char(&p, &left, '\n');
	}
	*left_out = left + skipped;
	return err;
}

/**
 * proc_do_large_bitmap - read or write a bitmap as ranges ("1-3,5")
 *
 * data is an unsigned long ** (a pointer to the bitmap's pointer) and
 * maxlen is the number of bits, as upstream. Read (position 0 only): the
 * set bits as comma-separated ranges and a '\n'. Write: ranges separated
 * by ',' or '\n'; at position 0 the bitmap is replaced, at a later
 * position (the rest of a long write, or a second write on the same open
 * file) the bits are added. Only the first 4095 bytes are parsed per call;
 * a number cut there is left for the next call, so *lenp may come back
 * smaller than given.
 * Return: 0, -EINVAL (bad range, bit >= maxlen, '-' sign, bad trailer),
 * -ENOMEM; nothing is stored on error.
 */
int proc_do_large_bitmap(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
			 off_t *ppos)
{
	unsigned long *bitmap, *tmp, bitmap_len;
	size_t left, words;
	int err;

	err = rcs_handler_check_args(table, buffer, lenp, ppos);
	if (err)
		return err;
	bitmap = table->data ? *(unsigned long **)table->data : NULL;
	bitmap_len = table->maxlen > 0 ? (unsigned long)table->maxlen : 0;
	left = *lenp;
	if (!bitmap || !bitmap_len || !left || (*ppos && !write)) {
		*lenp = 0;
		return 0;
	}
	words = (bitmap_len + BITS_PER_ULONG - 1) / BITS_PER_ULONG;

	if (!write) {
		unsigned long bit_a, bit_b = 0;
		char *out = buffer;
		bool first = true;

		while (left) {
			bit_a = bit_find(bitmap, bitmap_len, bit_b, true);
			if (bit_a >= bitmap_len)
				break;
			bit_b = bit_find(bitmap, bitmap_len, bit_a + 1, false) - 1;
			if (!first)
				put_char(&out, &left, ',');
			put_long(&out, &left, bit_a, false);
			if (bit_a != bit_b) {
				put_char(&out, &left, '-');
				put_long(&out, &left, bit_b, false);
			}
			first = false;
			bit_b++;
		}
		put_char(&out, &left, '\n');
		*lenp -= left;
		*ppos += (off_t)*lenp;
		return 0;
	}

	tmp = calloc(words, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	err = bitmap_parse(tmp, bitmap_len, buffer, *lenp, &left);
	if (!err) {
		/* bitmap_or at a later position, bitmap_copy at 0. */
		for (size_t w = 0; w < words; w++) {
			unsigned long v = tmp[w];

			if (*ppos)
				v |= __atomic_load_n(&bitmap[w], __ATOMIC_RELAXED);
			__atomic_store_n(&bitmap[w], v, __ATOMIC_RELAXED);
		}
		*lenp -= left;
		*ppos += (off_t)*lenp;
	}
	free(tmp);
	return err;
}
