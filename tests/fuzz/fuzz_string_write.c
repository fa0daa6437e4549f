/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: string handler writes never crash, return 0 or -EMSGSIZE,
 * keep the value NUL-terminated and shorter than maxlen, keep the old value
 * on error, produce what the kernel's strict continuation rule says
 * (prefix up to the position + the bytes up to NUL/'\n') and read back as
 * the value plus '\n'.
 *
 * Input: byte 0 picks the handler (bit 0) and the old value's length,
 * byte 1 the position, the rest is what is written.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl.h"

#define MAXLEN 16

static char arr[MAXLEN];
static struct rcustring rs = RCUSTRING_INITIALIZER(MAXLEN, "default");
static struct ctl_table tables[] = {
	{ "s", arr, MAXLEN, 0644, proc_dostring, NULL, NULL, NULL },
	{ "r", &rs, MAXLEN, 0644, proc_rcu_string, NULL, NULL, NULL },
};

static void value_of(const struct ctl_table *t, char *out)
{
	if (t->data == arr) {
		if (!memchr(arr, '\0', MAXLEN))
			abort(); /* not NUL-terminated within maxlen */
		strcpy(out, arr);
	} else if (rcustring_copy(&rs, out, MAXLEN) < 0) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char pattern[] = "0123456789abcdef";
	char old[MAXLEN], now[MAXLEN], want[MAXLEN + 1], text[MAXLEN + 8], *buf;
	const struct ctl_table *t;
	size_t len, lenp, oldlen, n;
	off_t pos, pos0;
	int ret;

	if (size < 2)
		return 0;
	t = &tables[data[0] & 1];
	oldlen = (data[0] >> 1) % MAXLEN;
	memcpy(old, pattern, oldlen);
	old[oldlen] = '\0';
	if (t->data == arr) {
		memset(arr, 'Z', MAXLEN);
		strcpy(arr, old);
	} else if (rcustring_set(&rs, old)) {
		abort();
	}
	pos0 = data[1] % (MAXLEN + 4);
	len = size - 2;
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 2, len);

	lenp = len;
	pos = pos0;
	ret = t->proc_handler(t, 1, buf, &lenp, &pos);
	value_of(t, now);

	/* The model: _proc_do_string strict write, refusing over-long values. */
	for (n = 0; n < len && buf[n] != '\0' && buf[n] != '\n'; n++)
		;
	free(buf);
	if (len == 0 || (size_t)pos0 > oldlen) {
		if (ret != 0 || strcmp(now, old))
			abort();
	} else if ((size_t)pos0 + n > MAXLEN - 1) {
		if (ret != -EMSGSIZE || strcmp(now, old) || lenp != len || pos != pos0)
			abort();
	} else {
		memcpy(want, old, (size_t)pos0);
		memcpy(want + pos0, data + 2, n);
		want[pos0 + n] = '\0';
		if (ret != 0 || strcmp(now, want) || lenp != len || pos != pos0 + (off_t)len)
			abort();
	}

	/* Reading back gives the value and its newline. */
	lenp = sizeof(text);
	pos = 0;
	if (t->proc_handler(t, 0, text, &lenp, &pos) != 0 || lenp != strlen(now) + 1 ||
	    memcmp(text, now, lenp - 1) || text[lenp - 1] != '\n')
		abort();
	return 0;
}
