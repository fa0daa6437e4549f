/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Text from outside (an etcd key or cancel reason, a settings line that is
 * not an assignment) must not forge a line of rcusysd's log or drive the
 * terminal or journal viewer reading it (the 4th attack campaign's finding
 * 6: "refused /rcustring/web/open/val^[[2J^[[H^M2026-...Z notice rcusysd:
 * FORGED LINE"). rcusysd's one log writer (tools/rcusysd/log.c) logs such
 * a value, holding every C0 byte 0x01-0x1f, DEL, a C1 CSI, invalid UTF-8,
 * U+2028, U+2029, U+202E and valid UTF-8, in each of its formats (a
 * terminal's timestamps, the journal's "<N>" prefix, --check-config's bare
 * lines) into a file; each must be one line with no control byte but its
 * end, every bad byte as "\xNN" and the valid text as it was. Then
 * rcs_text_escape() alone: a full line of escapes is whole, a small buffer
 * ends at a whole escape, and U+2028, U+2029 and each bidi control are
 * escaped, their neighbours not.
 * Prints "held: ..." or "failed: ..." per check, as the shell attacks do.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/common/text_escape.h"
#include "sysctl_conf.h"

#include "log.h"
#include "attack_check.h"


/* The file's bytes, NUL-terminated; *len without the NUL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	*len = f && buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

/* @buf escaped, to show a failure without driving the terminal reading it. */
static const char *shown(const char *buf)
{
	static char out[4 * (1 << 16) + 1];

	rcs_text_escape(out, sizeof(out), buf, strlen(buf));
	return out;
}

/* Control bytes other than line ends, DEL and raw C1 bytes in @buf; its line count in *lines. */
static unsigned bad_bytes(const char *buf, size_t len, unsigned *lines)
{
	unsigned bad = 0;

	*lines = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		*lines += c == '\n';
		bad += (c < 0x20 && c != '\n') || c == 0x7f || (c >= 0x80 && c < 0xa0 && i &&
								   (unsigned char)buf[i - 1] == 0xc2);
	}
	return bad;
}

/* The hostile value: the campaign's forged line, every C0 byte but NUL, DEL, C1, bad and good UTF-8. */
static void hostile(char *v, size_t size)
{
	size_t n = (size_t)snprintf(v, size, "%s", "/rcustring/web/open/val\x1b[2J\x1b[H\r"
				    "2026-12-07T06:00:00.000Z notice rcusysd: FORGED LINE|");

	for (int c = 1; c < 0x20; c++)
		v[n++] = (char)c;
	snprintf(v + n, size - n, "%s", "\x7f|\xc2\x9b" "31m|\xff\xc3(|\xe0\x80\xaf|caf\xc3\xa9 \xe2\x82\xac"
		 "|LS\xe2\x80\xa8PS\xe2\x80\xa9RLO\xe2\x80\xae" "evil|");
}

static const char *const expect_escaped =
	"/rcustring/web/open/val\\x1b[2J\\x1b[H\\x0d2026-12-07T06:00:00.000Z notice rcusysd: FORGED LINE|"
	"\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x09\\x0a\\x0b\\x0c\\x0d\\x0e\\x0f"
	"\\x10\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18\\x19\\x1a\\x1b\\x1c\\x1d\\x1e\\x1f"
	"\\x7f|\\xc2\\x9b31m|\\xff\\xc3(|\\xe0\\x80\\xaf|caf\xc3\xa9 \xe2\x82\xac"
	"|LS\\xe2\\x80\\xa8PS\\xe2\\x80\\xa9RLO\\xe2\\x80\\xae" "evil|";

static void on_conf_error(unsigned line, const char *msg, void *arg)
{
	rlog(LOG_ERR, "%s:%u: %s", (const char *)arg, line, msg);
}

/* Log the value (and a settings line) in the current format into @path, then check the file. */
static void one_format(const char *fmt_name, const char *path, const char *value)
{
	static const char conf[] = "\x1b[31mkernel.modprobe\r\x1b[2K\x07\n";
	char name[128], *buf;
	size_t len;
	unsigned lines, bad;

	if (!freopen(path, "w", stderr))
		exit(2);
	rlog(LOG_NOTICE, "refused %s at revision 5", value);
	sysctl_conf_parse(conf, sizeof(conf) - 1, NULL, on_conf_error, "/etc/rcusysd/sysctl.d/x.conf");
	fflush(stderr);
	buf = slurp(path, &len);
	bad = bad_bytes(buf, len, &lines);
	snprintf(name, sizeof(name), "%s: a hostile value and settings line are two lines", fmt_name);
	check(name, lines == 2, "%u lines: %s", lines, shown(buf));
	snprintf(name, sizeof(name), "%s: no control byte but the line ends", fmt_name);
	check(name, bad == 0, "%u bad bytes: %s", bad, shown(buf));
	snprintf(name, sizeof(name), "%s: each bad byte as \\xNN, the UTF-8 text kept", fmt_name);
	check(name, strstr(buf, expect_escaped) != NULL, "log: %s", shown(buf));
	snprintf(name, sizeof(name), "%s: the settings line is escaped", fmt_name);
	check(name, strstr(buf, "\"\\x1b[31mkernel.modprobe\\x0d\\x1b[2K\\x07\" is not an assignment") != NULL,
	      "log: %s", shown(buf));
	free(buf);
}

/* log_escape alone: whole escapes, a full line of them, and the bound. */
static void escape_bounds(void)
{
	char src[2047], dst[4 * sizeof(src) + 1], small[10];
	size_t n;

	memset(src, 0x1b, sizeof(src));
	n = rcs_text_escape(dst, sizeof(dst), src, sizeof(src));
	check("a message of 2047 ESC bytes is escaped whole", n == 4 * sizeof(src) &&
	      !strncmp(dst + n - 8, "\\x1b\\x1b", 8), "%zu bytes", n);
	n = rcs_text_escape(small, sizeof(small), "ab\x1b\x1b", 4);
	check("a small buffer ends at a whole escape", n == 6 && !strcmp(small, "ab\\x1b"),
	      "%zu bytes: %s", n, small);
	n = rcs_text_escape(small, sizeof(small), "abcdefg\xe2\x82\xac", 10);
	check("a small buffer ends at a whole character", n == 7 && !strcmp(small, "abcdefg"),
	      "%zu bytes: %s", n, small);
	n = rcs_text_escape(small, sizeof(small), "a\0b", 3);
	check("a NUL is escaped, not the end", n == 6 && !strcmp(small, "a\\x00b"), "%s", small);
}

/*
 * Characters that are valid UTF-8 but break or reorder what a viewer
 * shows: U+2028, U+2029 and every bidi control, each escaped byte by byte;
 * their neighbours (U+200D, U+2027, U+202F, U+2065, U+206A, U+061B) kept.
 */
static void hidden_controls(void)
{
	static const unsigned cps[] = { 0x2028, 0x2029, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c,
					0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x061c };
	static const unsigned kept[] = { 0x200d, 0x2027, 0x202f, 0x2065, 0x206a, 0x061b };
	char src[8], dst[32], want[32], name[64];
	size_t n;

	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]) + sizeof(kept) / sizeof(kept[0]); i++) {
		bool esc = i < sizeof(cps) / sizeof(cps[0]);
		unsigned cp = esc ? cps[i] : kept[i - sizeof(cps) / sizeof(cps[0])];

		if (cp < 0x800)
			n = (size_t)snprintf(src, sizeof(src), "%c%c", 0xc0 | cp >> 6, 0x80 | (cp & 0x3f));
		else
			n = (size_t)snprintf(src, sizeof(src), "%c%c%c", 0xe0 | cp >> 12,
					     0x80 | (cp >> 6 & 0x3f), 0x80 | (cp & 0x3f));
		if (!esc)
			memcpy(want, src, n + 1);
		else if (n == 2)
			snprintf(want, sizeof(want), "\\x%02x\\x%02x", (unsigned char)src[0],
				 (unsigned char)src[1]);
		else
			snprintf(want, sizeof(want), "\\x%02x\\x%02x\\x%02x", (unsigned char)src[0],
				 (unsigned char)src[1], (unsigned char)src[2]);
		rcs_text_escape(dst, sizeof(dst), src, n);
		snprintf(name, sizeof(name), "U+%04X %s", cp, esc ? "escaped" : "kept as it is");
		check(name, !strcmp(dst, want), "got %s", shown(dst));
	}
}

int main(void)
{
	char dir[] = "/tmp/rcs-loginject-XXXXXX", path[64], value[512];

	if (!mkdtemp(dir))
		return 2;
	snprintf(path, sizeof(path), "%s/log", dir);
	hostile(value, sizeof(value));
	unsetenv("JOURNAL_STREAM");
	log_init();
	one_format("terminal", path, value);
	setenv("JOURNAL_STREAM", "8:12345", 1);
	log_init();
	one_format("journal", path, value);
	log_set_check();
	one_format("--check-config", path, value);
	unlink(path);
	rmdir(dir);
	escape_bounds();
	hidden_controls();
	return nfailed ? 1 : 0;
}
