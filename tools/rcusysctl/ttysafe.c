/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The terminal filter (ttysafe.h): a stdio stream (fopencookie) in front
 * of the terminal, so every print of rcusysctl's, wherever it is made,
 * passes it; a UTF-8 character split between two writes is held, not
 * escaped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ttysafe.h"

struct filter {
	FILE *out;               /* the terminal, through a descriptor of its own */
	unsigned char held[4];   /* a UTF-8 character begun, not finished */
	int nheld, need;         /* bytes held; continuation bytes still due */
};

static FILE *filtered[2];

static void put_escaped(FILE *out, const unsigned char *b, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(out, "\\x%02x", b[i]);
}

/* Lead bytes of characters of 2, 3 and 4 bytes; others are no lead. */
static int continuations(unsigned char b)
{
	return b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : 0;
}

static void take(struct filter *f, unsigned char b)
{
	if (f->need) {
		if (b >= 0x80 && b <= 0xbf) {
			f->held[f->nheld++] = b;
			/* U+0080..U+009F: C1 controls (U+009B is CSI on some terminals). */
			if (f->held[0] == 0xc2 && b <= 0x9f) {
				put_escaped(f->out, f->held, f->nheld);
				f->nheld = f->need = 0;
			} else if (--f->need == 0) {
				fwrite(f->held, 1, (size_t)f->nheld, f->out);
				f->nheld = 0;
			}
			return;
		}
		/* Cut short: not a character; escaped, then @b on its own. */
		put_escaped(f->out, f->held, f->nheld);
		f->nheld = f->need = 0;
	}
	if ((b < 0x20 && b != '\n' && b != '\t') || b == 0x7f) {
		put_escaped(f->out, &b, 1);
	} else if (b < 0x80) {
		putc(b, f->out);
	} else if ((f->need = continuations(b)) != 0) {
		f->held[0] = b;
		f->nheld = 1;
	} else {
		put_escaped(f->out, &b, 1); /* a stray continuation or no UTF-8 at all */
	}
}

static ssize_t filter_write(void *cookie, const char *buf, size_t size)
{
	struct filter *f = cookie;

	for (size_t i = 0; i < size; i++)
		take(f, (unsigned char)buf[i]);
	/* Each write reaches the terminal now: stdout and stderr stay in order. */
	if (fflush(f->out) != 0)
		return -1;
	return (ssize_t)size;
}

static int filter_close(void *cookie)
{
	struct filter *f = cookie;
	int err;

	put_escaped(f->out, f->held, f->nheld);
	err = fclose(f->out);
	free(f);
	return err;
}

/* exit() flushes streams but closes none: a character cut at the end is escaped here. */
static void close_filters(void)
{
	for (int i = 0; i < 2; i++)
		if (filtered[i])
			fclose(filtered[i]);
}

/* A filter in front of @fd, or NULL with errno set. */
static FILE *open_filter(int fd)
{
	cookie_io_functions_t io = { .write = filter_write, .close = filter_close };
	struct filter *f = calloc(1, sizeof(*f));
	int copy = f ? dup(fd) : -1;
	FILE *s;

	if (copy < 0 || !(f->out = fdopen(copy, "w"))) {
		if (copy >= 0)
			close(copy);
		free(f);
		return NULL;
	}
	s = fopencookie(f, "w", io);
	if (!s) {
		fclose(f->out);
		free(f);
		return NULL;
	}
	setvbuf(s, NULL, _IOLBF, 0);
	return s;
}

int ttysafe_install(bool raw_stdout)
{
	bool out = !raw_stdout && isatty(STDOUT_FILENO), err = isatty(STDERR_FILENO);

	if (out && (filtered[0] = open_filter(STDOUT_FILENO)) == NULL)
		return -errno;
	if (err && (filtered[1] = open_filter(STDERR_FILENO)) == NULL)
		return -errno;
	if (out) {
		fflush(stdout);
		stdout = filtered[0];
	}
	if (err) {
		fflush(stderr);
		stderr = filtered[1];
	}
	if (out || err)
		atexit(close_filters);
	return 0;
}
