/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Numbers in the kernel's sysctl text (number_text.c). Internal to the
 * library. Each function moves *buf and *size past what it consumed or
 * wrote, and never reads or writes past *size bytes.
 */
#ifndef RCUSTRING_LIB_SYSCTL_NUMBER_TEXT_H
#define RCUSTRING_LIB_SYSCTL_NUMBER_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The kernel caps one numeric write at PAGE_SIZE - 1 bytes. */
#define PROC_PAGE_SIZE 4096

/* proc_skip_spaces: the kernel's isspace(), 0xA0 included. */
void rcs_proc_skip_spaces(const char **buf, size_t *size);
/* proc_skip_char: every @v at the start. */
void rcs_proc_skip_char(const char **buf, size_t *size, char v);
/*
 * proc_get_long: one optionally negative number (kstrtoul's bases); the
 * byte after it, if any, must be one of @perm_tr and is stored in *@tr.
 * Return: 0 or -EINVAL.
 */
int rcs_proc_get_long_tr(const char **buf, size_t *size, unsigned long *val, bool *neg,
			 const char *perm_tr, size_t perm_tr_len, char *tr);
/* rcs_proc_get_long_tr() followed by a space, tab or newline (the vector handlers'). */
int rcs_proc_get_long(const char **buf, size_t *size, unsigned long *val, bool *neg);
/* proc_put_long: decimal, cut to what fits. */
void rcs_proc_put_long(char **buf, size_t *size, unsigned long val, bool neg);
/* proc_put_char: @c if there is room. */
void rcs_proc_put_char(char **buf, size_t *size, char c);

/* Sign and magnitude of @v, as every int conversion reads it. */
static inline void rcs_split_int(int v, bool *neg, unsigned long *lval)
{
	*neg = v < 0;
	*lval = v < 0 ? -(unsigned long)v : (unsigned long)v;
}

#endif
