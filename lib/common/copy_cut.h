/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one bounded copy of a text into a fixed field (an audit record, a
 * status message): what does not fit is cut, and the cut shows.
 */
#ifndef RCUSTRING_COMMON_COPY_CUT_H
#define RCUSTRING_COMMON_COPY_CUT_H

#include <string.h>

/*
 * @len bytes of @src into @dst[@size] (@size at least 4), NUL-terminated;
 * when they do not fit, the first @size - 4 bytes and "...", so that a
 * reader knows the text went on.
 */
static inline void rcs_copy_cut(char *dst, size_t size, const char *src, size_t len)
{
	if (len < size) {
		memcpy(dst, src, len);
		dst[len] = '\0';
		return;
	}
	memcpy(dst, src, size - 4);
	memcpy(dst + size - 4, "...", 4);
}

#endif
