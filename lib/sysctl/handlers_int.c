/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Numeric sysctl handlers: proc_dointvec, proc_dointvec_minmax,
 * proc_douintvec, proc_douintvec_minmax, proc_doulongvec_minmax, proc_dobool,
 * proc_dou8vec_minmax, proc_dointvec_jiffies, proc_dointvec_userhz_jiffies,
 * proc_dointvec_ms_jiffies and proc_doulongvec_ms_jiffies_minmax. The
 * number text they share is number_text.c's, the jiffies conversions
 * jiffies.c's; proc_do_large_bitmap is in handlers_bitmap.c.
 *
 * The text format, the accepted input, *lenp and *ppos follow the Linux
 * kernel's kernel/sysctl.c of 6.12 (proc_get_long, proc_skip_spaces,
 * do_proc_dointvec and its conversion functions, do_proc_douintvec,
 * do_proc_doulongvec_minmax, proc_dobool, proc_dou8vec_minmax), with
 * sysctl_writes_strict == SYSCTL_WRITES_STRICT.
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

#include "rcustring/sysctl.h"
#include "handlers.h"
#include "jiffies.h"
#include "number_text.h"

/* Most numbers one write can hold: "0 0 0 ..." in PROC_PAGE_SIZE - 1 bytes. */
#define VEC_WRITE_MAX (PROC_PAGE_SIZE / 2)

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


static void plain_iconv_r(int v, bool *neg, unsigned long *lval)
{
	rcs_split_int(v, neg, lval);
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
static const struct vec_type jiffies_type = INT_TYPE(rcs_jiffies_iconv_w, rcs_jiffies_iconv_r);
static const struct vec_type userhz_type = INT_TYPE(rcs_userhz_iconv_w, rcs_userhz_iconv_r);
static const struct vec_type ms_type = INT_TYPE(rcs_ms_iconv_w, rcs_ms_iconv_r);
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

		rcs_proc_skip_spaces(&p, &left);
		if (!left)
			break;
		err = rcs_proc_get_long(&p, &left, &lval, &neg);
		if (err)
			break;
		if (ty->put(ty, min, max, tmp, i, neg, lval)) {
			err = -EINVAL;
			break;
		}
	}
	if (!err && left)
		rcs_proc_skip_spaces(&p, &left);
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
				rcs_proc_put_char(&out, &left, '\t');
			rcs_proc_put_long(&out, &left, lval, neg);
		}
		if (!first && left)
			rcs_proc_put_char(&out, &left, '\n');
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
