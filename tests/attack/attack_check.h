/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The C attack tests' verdict line, as attack_lib.sh prints it: "held: NAME"
 * when the defence worked, else "failed: NAME (why)"; nfailed counts the
 * failures for main()'s exit status.
 */
#ifndef RCUSTRING_TESTS_ATTACK_CHECK_H
#define RCUSTRING_TESTS_ATTACK_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int nfailed;

static void check(const char *name, int ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s", ok ? "held" : "failed", name);
	if (!ok) {
		printf(" (");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf(")");
	}
	printf("\n");
	nfailed += !ok;
}

#endif
