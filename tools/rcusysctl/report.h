/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl --status and --metrics: the control socket's STATUS and
 * METRICS replies, printed as "key: value" lines (or one JSON object) and
 * as the Prometheus text exposition the server wrote.
 */
#ifndef RCUSYSCTL_REPORT_H
#define RCUSYSCTL_REPORT_H

#include <stdbool.h>

/* @verb "STATUS" or "METRICS", over the open control socket; the exit status. */
int report_print(const char *verb, bool json);

#endif
