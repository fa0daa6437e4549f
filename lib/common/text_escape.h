/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one escaping of text from outside (an etcd error or cancel reason,
 * a key, a settings line, a file name) before a person reads it: rcusysd's
 * log, STATUS, the etcd mirror's last error (its tree entry and status
 * keys) and the error texts of a connection to etcd all go through it, so
 * that no such text can end its line and forge the next, drive the
 * terminal or journal viewer reading it, or reorder what it displays. The
 * output holds no byte it would escape, so escaping it again changes
 * nothing: a text escaped where it is stored and again where it is shown
 * reads the same.
 */
#ifndef RCUSTRING_COMMON_TEXT_ESCAPE_H
#define RCUSTRING_COMMON_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/*
 * A valid UTF-8 character that is still escaped: U+2028 and U+2029 (line
 * and paragraph separators, which some viewers break a line on) and every
 * Bidi_Control character (U+061C, U+200E, U+200F, U+202A..U+202E,
 * U+2066..U+2069), which reorder the text displayed after them.
 */
static inline bool rcs_text_hidden_control(const unsigned char *s, size_t n)
{
	if (n == 2)
		return s[0] == 0xd8 && s[1] == 0x9c;
	if (n != 3 || s[0] != 0xe2)
		return false;
	if (s[1] == 0x80)
		return s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xa8 && s[2] <= 0xae);
	return s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9;
}

/* Bytes of the valid UTF-8 sequence at @s (@len left), or 0: a lone or bad byte. */
static inline size_t rcs_text_utf8_seq(const unsigned char *s, size_t len)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* Overlong forms, UTF-16 surrogates and code points past U+10FFFF are invalid. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n > len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	/* U+0080..U+009F are the C1 controls (0x9b is a CSI to many terminals). */
	if (s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return rcs_text_hidden_control(s, n) ? 0 : n;
}

/*
 * rcs_text_escape - @src (@len bytes, NULs included) as one line of text
 * into @dst (@size bytes, NUL-terminated): every C0 control byte (tab,
 * newline, CR and ESC included), DEL, the C1 controls (U+0080..U+009F),
 * U+2028, U+2029, the bidi controls (rcs_text_hidden_control) and every
 * byte that is not part of valid UTF-8 become "\xNN" (lowercase hex, one
 * per byte: U+2028 is "\xe2\x80\xa8"); other valid UTF-8 text and '\\'
 * stay as they are. Invalid UTF-8 is escaped because the journal stores a
 * line holding it as binary data, which journalctl hides ("[blob data]").
 * Stops before an escape or a character that would not fit whole.
 * Context: any thread.
 * Return: the bytes written, the NUL not counted.
 */
static inline size_t rcs_text_escape(char *dst, size_t size, const char *src, size_t len)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0;

	if (!size)
		return 0;
	for (size_t i = 0; i < len;) {
		size_t n = s[i] >= 0x20 && s[i] < 0x7f ? 1 : rcs_text_utf8_seq(s + i, len - i);

		if (n) {
			if (o + n >= size)
				break;
			memcpy(dst + o, s + i, n);
			o += n;
			i += n;
			continue;
		}
		if (o + 4 >= size)
			break;
		snprintf(dst + o, 5, "\\x%02x", s[i++]);
		o += 4;
	}
	dst[o] = '\0';
	return o;
}

#endif
