// SPDX-License-Identifier: GPL-2.0
/*
 * Progress lines of racetest, for boot-test's watchdog on the host. Each
 * phase prints a start line, a progress line at most every PROGRESS_S
 * seconds while it works, and an end line with its counts:
 *
 *   racetest: phase N/T NAME start: WANT UNIT[, what]
 *   racetest: phase N/T NAME progress: DONE/WANT UNIT after S s
 *   racetest: phase N/T NAME end: DONE/WANT UNIT in S s
 *
 * boot-test kills a guest that prints no such line for its idle limit and
 * names the phase it hung in, so a slow guest that still moves is never
 * killed. Work is bounded by counts; time only spaces the lines.
 *
 * Two knobs, for testing that watchdog only (kernel command line):
 *   RT_HANG=NAME       phase NAME prints a progress line at its first
 *                      check and stops there for good (a hung guest);
 *   RT_SLOW=NAME:MS    phase NAME sleeps MS ms at every progress check
 *                      (slow, but still moving).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "racetest.h"

/* Seconds of guest time between two progress lines of one phase: short,
 * because under TCG on a loaded host the guest clock runs slow (10 s of it
 * took 106 s of the host's at load 35-40), and the host's idle limit is
 * in its own seconds. */
#define PROGRESS_S 5.0

static struct {
	char name[48];
	const char *unit;
	long want;
	double t0, last;
	bool hang;
	long slow_ms;
} ph;
static int phase_no, phase_total;

void phase_count(int total)
{
	phase_total = total;
}

/* Does the knob in environment variable @var name this phase? Its value is
 * NAME or NAME:ARG; *arg gets ARG (0 without). */
static bool knob(const char *var, const char *name, long *arg)
{
	const char *v = getenv(var);
	size_t len = strlen(name);

	if (!v || strncmp(v, name, len) || (v[len] && v[len] != ':'))
		return false;
	*arg = v[len] == ':' ? atol(v + len + 1) : 0;
	return true;
}

void phase_begin(const char *name, long want, const char *unit,
		 const char *what)
{
	long arg;

	memset(&ph, 0, sizeof(ph));
	snprintf(ph.name, sizeof(ph.name), "%s", name);
	ph.unit = unit;
	ph.want = want;
	ph.t0 = ph.last = now();
	ph.hang = knob("RT_HANG", name, &arg);
	if (knob("RT_SLOW", name, &arg))
		ph.slow_ms = arg > 0 ? arg : 1000;
	phase_no++;
	printf("racetest: phase %d/%d %s start: %ld %s%s%s\n", phase_no,
	       phase_total, name, want, unit, what ? ", " : "", what ? what : "");
	if (ph.hang || ph.slow_ms)
		printf("racetest: test knob: phase %s %s\n", name,
		       ph.hang ? "hangs at its first progress check" : "is slowed down");
}

void phase_progress(long done)
{
	double t = now();

	if (ph.slow_ms)
		usleep(ph.slow_ms * 1000);
	if (t - ph.last < PROGRESS_S && !ph.hang)
		return;
	ph.last = t;
	printf("racetest: phase %d/%d %s progress: %ld/%ld %s after %.0f s\n",
	       phase_no, phase_total, ph.name, done, ph.want, ph.unit, t - ph.t0);
	if (ph.hang)
		for (;;)
			pause();
}

void phase_end(long done)
{
	printf("racetest: phase %d/%d %s end: %ld/%ld %s in %.1f s\n", phase_no,
	       phase_total, ph.name, done, ph.want, ph.unit, now() - ph.t0);
}
