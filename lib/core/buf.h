/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Value buffers: a string with a header in front, so the free path knows
 * what it frees without guessing from the address. Internal to the library.
 */
#ifndef RCUSTRING_LIB_BUF_H
#define RCUSTRING_LIB_BUF_H

#include <stddef.h>

/* Allocate a buffer of @capacity bytes; returns its string or NULL. */
char *rcs_buf_alloc(size_t capacity);

/* Free a buffer that no reader can have seen (never published). */
void rcs_buf_free_now(char *str);

/*
 * Free a published buffer after a grace period. When the library-wide
 * backlog is full, waits for a grace period and frees at once instead.
 * Must not be called inside a read-side section.
 */
void rcs_buf_free_deferred(char *str);

#endif
