/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The etcd mirror's user name and password (rcusysd(8), ETCD; the 4th
 * attack campaign's finding 5). A "user:password@" in an --etcd URL is
 * readable by every local user for as long as rcusysd runs
 * (/proc/PID/cmdline, ps), so the secret has a way in that no other user
 * can read: --etcd-credentials FILE, one "user:password" line in a file that
 * passes the one file check (trusted_file.h) and that neither group nor
 * others may read. A URL that still holds credentials is accepted, with a
 * warning naming the risk: they are taken out of the endpoints (so no
 * message, STATUS or METRICS line built from an endpoint can hold them),
 * used as the file's would be, and the password is overwritten in the
 * command line, which shortens its exposure to the start. Both forms at
 * once are refused, as are a repeated --etcd and a userinfo RFC 3986 does
 * not allow (common/url_userinfo.h). The secret itself is never logged.
 */
#ifndef RCUSYSD_ETCD_CREDS_H
#define RCUSYSD_ETCD_CREDS_H

#include <stddef.h>

/* The longest "user:password" taken. */
#define ETCD_CREDS_MAX 1023

struct etcd_creds {
	char userpwd[ETCD_CREDS_MAX + 1];   /* "" when none */
	char endpoints[4096];               /* the --etcd list with no user:password@ */
};

/*
 * etcd_creds_take - the credentials of --etcd @endpoints and of
 * --etcd-credentials @file (NULL: none), into @c
 *
 * @endpoints is the command line's own string: the password in it is
 * overwritten with '*'. @c->endpoints gets the list to use.
 * Context: the main thread, at start, before any thread.
 * Return: 0, or a negative errno with the reason logged (naming the file
 * or the option, never the secret): the file refused or not one
 * "user:password" line, both forms given, endpoints with different
 * credentials, a userinfo with a raw '/', '?', '#' or '@', a list too long.
 */
int etcd_creds_take(struct etcd_creds *c, char *endpoints, const char *file);

/* etcd_creds_wipe - overwrite the secret in @c. Context: the main thread, at exit. */
void etcd_creds_wipe(struct etcd_creds *c);

#endif
