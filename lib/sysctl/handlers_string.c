/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * String sysctl handlers: proc_dostring (a char array) and proc_rcu_string
 * (a struct rcustring).
 *
 * Reads and writes follow the Linux kernel's _proc_do_string with
 * sysctl_writes_strict == SYSCTL_WRITES_STRICT:
 *  - a write at *ppos continues the value from that position (the value is
 *    cut there, then the new bytes are appended); a write at a position past
 *    the current length is ignored (return 0, nothing changes);
 *  - a write stops at the first NUL or '\n' within *lenp bytes; all *lenp
 *    bytes count as consumed and *ppos advances by *lenp;
 *  - a read returns the value from *ppos plus a '\n' when it fits, and 0
 *    bytes once *ppos is past the newline.
 * Where we differ on purpose: a write whose result would not fit in
 * maxlen - 1 bytes is refused with -EMSGSIZE and changes nothing (the kernel
 * silently truncates); a negative *ppos or missing argument is -EINVAL.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "rcustring/sysctl.h"
#include "handlers.h"

/* Bytes of a write that become part of the value: up to NUL or '\n'. */
static size_t write_span(const char *buf, size_t len)
{
	size_t n;

	for (n = 0; n < len; n++)
		if (buf[n] == '\0' || buf[n] == '\n')
			break;
	return n;
}

/*
 * The write half of _proc_do_string on @value (capacity @maxlen, holding a
 * string). Checks the fit before touching @value, so a refused write leaves
 * it as it was. *@changed tells whether the bytes of the value changed.
 */
static int string_write(char *value, size_t maxlen, const char *buf, size_t *lenp, off_t *ppos,
			bool *changed)
{
	size_t len = strnlen(value, maxlen), n, pos;

	*changed = false;
	if (len > maxlen - 1)
		len = maxlen - 1;
	if ((size_t)*ppos > len)
		return 0; /* strict mode: only continue writes not past the end */
	pos = (size_t)*ppos;
	n = write_span(buf, *lenp);
	if (n > maxlen - 1 - pos)
		return -EMSGSIZE;
	*changed = pos + n != len || memcmp(value + pos, buf, n) != 0;
	memcpy(value + pos, buf, n);
	value[pos + n] = '\0';
	*ppos += (off_t)*lenp;
	return 0;
}

/* The read half of _proc_do_string: @value holds @len bytes (no NUL needed). */
static void string_read(const char *value, size_t len, char *buf, size_t *lenp, off_t *ppos)
{
	size_t pos = (size_t)*ppos;

	if (pos > len) {
		*lenp = 0;
		return;
	}
	len -= pos;
	if (len > *lenp)
		len = *lenp;
	memcpy(buf, value + pos, len);
	if (len < *lenp)
		buf[len++] = '\n';
	*lenp = len;
	*ppos += (off_t)len;
}

/**
 * proc_dostring - read or write a char[maxlen] string
 *
 * Kernel semantics (see the top of this file) except that an over-long
 * write is refused. The array is changed in place: concurrent readers of
 * data and concurrent writers need locking, as in the kernel. A sysctl
 * tree does it for the calls it makes (a per-entry rwlock); a program that
 * calls this or reads data directly locks itself. Use proc_rcu_string()
 * for lock-free readers.
 * Context: any thread; not concurrently with a write of the same data.
 * Return: 0, -EMSGSIZE (would not fit; nothing changed), -EINVAL.
 */
int proc_dostring(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
		  off_t *ppos)
{
	char *data;
	bool changed;
	int err;

	err = rcs_handler_check_args(table, buffer, lenp, ppos);
	if (err)
		return err;
	data = table->data;
	if (!data || table->maxlen <= 0 || !*lenp) {
		*lenp = 0;
		return 0;
	}
	if (write)
		return string_write(data, (size_t)table->maxlen, buffer, lenp, ppos, &changed);
	string_read(data, strnlen(data, (size_t)table->maxlen), buffer, lenp, ppos);
	return 0;
}

/**
 * proc_rcu_string - read or write a struct rcustring
 *
 * data is a struct rcustring * whose capacity equals maxlen. A write edits
 * a private copy (rcustring_edit_begin) and publishes it whole, so readers
 * see the old or the new value, never a mix; an ignored or unchanged write
 * publishes nothing. A read takes its bytes inside one read-side section
 * (no lock, no allocation), so it is one whole published value.
 * Any thread may call it; writers of one variable are serialized by it.
 * Must not be called inside a read-side section (a write may wait for a
 * grace period).
 * Return: 0, -EMSGSIZE (would not fit; old value kept), -ENOMEM (old value
 * kept), -EDEADLK (called inside a read-side section with the reclamation
 * backlog full; old value kept), -EINVAL (bad argument, maxlen differs from
 * the capacity).
 */
int proc_rcu_string(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
		    off_t *ppos)
{
	struct rcustring *s;
	struct rcustring_edit e;
	bool changed;
	int err;

	err = rcs_handler_check_args(table, buffer, lenp, ppos);
	if (err)
		return err;
	s = table->data;
	if (!s || table->maxlen <= 0 || !*lenp) {
		*lenp = 0;
		return 0;
	}
	if ((size_t)table->maxlen != rcustring_maxlen(s))
		return -EINVAL;

	if (!write) {
		const char *v;

		rcustring_read_lock();
		v = rcustring_dereference(s);
		string_read(v, strnlen(v, (size_t)table->maxlen), buffer, lenp, ppos);
		rcustring_read_unlock();
		return 0;
	}

	err = rcustring_edit_begin(s, &e);
	if (err)
		return err;
	err = string_write(e.buf, e.size, buffer, lenp, ppos, &changed);
	if (err || !changed) {
		rcustring_edit_abort(&e);
		return err;
	}
	return rcustring_edit_commit(&e);
}
