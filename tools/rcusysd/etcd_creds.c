/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The etcd mirror's credentials (etcd_creds.h): read from a file only root
 * can read, or taken out of the --etcd URLs with a warning.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/common/url_userinfo.h"

#include "etcd_creds.h"
#include "log.h"
#include "trusted_file.h"

/* The longest credentials file read (one line; a bigger file is no credentials file). */
#define CREDS_FILE_MAX ((size_t)1 << 20)

/* "user:password" as libcurl takes it: a user, a ':', no line break, no NUL. */
static bool well_formed(const char *s, size_t len)
{
	return len && len <= ETCD_CREDS_MAX && s[0] != ':' && memchr(s, ':', len) &&
	       !memchr(s, '\0', len) && !memchr(s, '\n', len) && !memchr(s, '\r', len);
}

/* --etcd-credentials FILE: its one line into @c->userpwd. */
static int from_file(struct etcd_creds *c, const char *file)
{
	char why[512], *text = NULL;
	size_t len = 0;
	int err = trusted_file_read_secret(file, CREDS_FILE_MAX, &text, &len, why, sizeof(why));

	if (err < 0) {
		rlog(LOG_ERR, "--etcd-credentials %s: %s: %s", file, trusted_file_verdict(err), why);
		return err;
	}
	if (len && text[len - 1] == '\n')
		len--;
	if (well_formed(text, len)) {
		memcpy(c->userpwd, text, len);
		c->userpwd[len] = '\0';
	} else {
		rlog(LOG_ERR, "--etcd-credentials %s: expected one line user:password (at most %d "
			      "bytes, a user before the ':')", file, ETCD_CREDS_MAX);
		err = -EINVAL;
	}
	explicit_bzero(text, len);
	free(text);
	return err;
}

static int hex(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
	       ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* @len bytes of URL userinfo, %XX decoded, into @out (ETCD_CREDS_MAX + 1). */
static bool decode(const char *in, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		int hi = i + 2 < len && in[i] == '%' ? hex(in[i + 1]) : -1;
		int lo = hi >= 0 ? hex(in[i + 2]) : -1;

		if (n == ETCD_CREDS_MAX)
			return false;
		if (in[i] == '%' && hi >= 0 && lo >= 0) {
			out[n++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			out[n++] = in[i];
		}
	}
	out[n] = '\0';
	return well_formed(out, n);
}

/*
 * One endpoint @url (@len bytes): copied to @c->endpoints without its
 * userinfo (common/url_userinfo.h), which goes to @taken (decoded) and is
 * starred out in @url. 1 when it had one, 0 when not, -EINVAL for one not
 * user:password, -EBADMSG for one RFC 3986 does not allow (starred too).
 */
static int take_one(struct etcd_creds *c, size_t *at, char *url, size_t len, char *taken)
{
	size_t host, end;
	int has = rcs_url_userinfo(url, len, &host, &end), err = 0;

	if (has > 0 && !decode(url + host, end - host, taken))
		err = -EINVAL;
	/* ps and /proc/PID/cmdline show the user, no longer the password. */
	for (char *p = has ? memchr(url + host, ':', end - host) : NULL; p && ++p < url + end;)
		*p = '*';
	if (has < 0 || err)
		return has < 0 ? -EBADMSG : err;
	if (*at + len + 2 > sizeof(c->endpoints))
		return -ENAMETOOLONG;
	memcpy(c->endpoints + *at, url, host);
	memcpy(c->endpoints + *at + host, url + (has ? end + 1 : host), len - (has ? end + 1 : host));
	*at += len - (has ? end + 1 - host : 0);
	c->endpoints[*at] = '\0';
	return has;
}

/* The userinfo of every endpoint of @list into @c; the same in each, or -EINVAL. */
static int from_urls(struct etcd_creds *c, char *list)
{
	char taken[ETCD_CREDS_MAX + 1];
	size_t at = 0;
	int err = 0, found = 0;

	for (char *p = list; *p && err >= 0;) {
		size_t len = strcspn(p, ",");

		err = take_one(c, &at, p, len, taken);
		if (err > 0 && found && strcmp(taken, c->userpwd))
			err = -EINVAL; /* one mirror, one principal */
		else if (err > 0 && !found++)
			memcpy(c->userpwd, taken, sizeof(taken));
		p += len;
		if (*p == ',') {
			p++;
			if (at + 1 < sizeof(c->endpoints))
				c->endpoints[at++] = ',', c->endpoints[at] = '\0';
		}
	}
	explicit_bzero(taken, sizeof(taken));
	if (err == -ENAMETOOLONG)
		rlog(LOG_ERR, "--etcd: the endpoint list is longer than %zu bytes",
		     sizeof(c->endpoints) - 2);
	else if (err == -EBADMSG)
		rlog(LOG_ERR, "--etcd: an endpoint's %s (better: --etcd-credentials FILE)",
		     RCS_URL_USERINFO_RULE);
	else if (err < 0)
		rlog(LOG_ERR, "--etcd: the endpoints' credentials are not one user:password (each "
			      "endpoint the same; better: --etcd-credentials FILE)");
	return err < 0 ? err : found;
}

int etcd_creds_take(struct etcd_creds *c, char *endpoints, const char *file)
{
	int found;

	memset(c, 0, sizeof(*c));
	found = from_urls(c, endpoints);
	if (found < 0)
		return found;
	if (found && file) {
		rlog(LOG_ERR, "--etcd-credentials and a user:password@ in --etcd: give them once, in "
			      "the file");
		etcd_creds_wipe(c);
		return -EINVAL;
	}
	if (found)
		rlog(LOG_WARNING, "--etcd: an endpoint holds user:password@, which every local user "
				  "could read in rcusysd's command line (ps, /proc/PID/cmdline) until "
				  "now; use --etcd-credentials FILE (rcusysd(8), ETCD)");
	return file ? from_file(c, file) : 0;
}

void etcd_creds_wipe(struct etcd_creds *c)
{
	explicit_bzero(c->userpwd, sizeof(c->userpwd));
}
