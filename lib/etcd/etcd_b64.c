/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Base64 (standard alphabet, padded), as etcd's JSON gateway carries keys
 * and values: encoded by the client (etcd_http.c), decoded from replies
 * (etcd_json.c). A file of its own so that neither reaches into the other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int etcd_b64_encode(const void *data, size_t len, char **out)
{
	const unsigned char *s = data;
	char *o = malloc((len + 2) / 3 * 4 + 1), *p = o;
	size_t i;

	if (!o)
		return -ENOMEM;
	for (i = 0; i + 2 < len; i += 3) {
		*p++ = b64[s[i] >> 2];
		*p++ = b64[(s[i] & 3) << 4 | s[i + 1] >> 4];
		*p++ = b64[(s[i + 1] & 15) << 2 | s[i + 2] >> 6];
		*p++ = b64[s[i + 2] & 63];
	}
	if (i < len) {
		*p++ = b64[s[i] >> 2];
		if (i + 1 < len) {
			*p++ = b64[(s[i] & 3) << 4 | s[i + 1] >> 4];
			*p++ = b64[(s[i + 1] & 15) << 2];
		} else {
			*p++ = b64[(s[i] & 3) << 4];
			*p++ = '=';
		}
		*p++ = '=';
	}
	*p = '\0';
	*out = o;
	return 0;
}

static int b64_val(char ch)
{
	const char *p = ch ? strchr(b64, ch) : NULL;

	return p ? (int)(p - b64) : -1;
}

int etcd_b64_decode(const char *text, char **out, size_t *len)
{
	return etcd_b64_decode_n(text, strlen(text), out, len);
}

int etcd_b64_decode_n(const char *text, size_t n, char **out, size_t *len)
{
	size_t k = 0;
	unsigned acc = 0;
	int bits = 0;
	char *o;

	*out = NULL;
	*len = 0;
	while (n && text[n - 1] == '=')
		n--;
	o = malloc(n * 3 / 4 + 1);
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int v = b64_val(text[i]);

		if (v < 0) {
			free(o);
			return -EBADMSG;
		}
		acc = acc << 6 | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[k++] = (char)(acc >> bits & 0xff);
		}
	}
	o[k] = '\0';
	*out = o;
	*len = k;
	return 0;
}
