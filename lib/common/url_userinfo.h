/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one reading of where an endpoint URL's "user:password@" is, for
 * every place that must take it out or hide it (rcusysd's --etcd, the etcd
 * connection's names in messages, rcusysctl --etcd). RFC 3986 (3.2.1)
 * lets a userinfo hold no raw '/', '?', '#' or '@': they must be written
 * %2F, %3F, %23, %40. A password that holds one raw anyway would be read
 * by a plain parser as ending the authority at the first of them, leaving
 * the rest of the password in the path or the host, where messages show
 * it. So the userinfo is taken to run to the LAST '@' of the URL, and one
 * that then holds any of those four bytes is reported as malformed, to be
 * refused by naming the rule, never the text. The price: an endpoint URL
 * holds no '@' in its path (etcd's gateway has none).
 */
#ifndef RCUSTRING_COMMON_URL_USERINFO_H
#define RCUSTRING_COMMON_URL_USERINFO_H

#include <errno.h>
#include <string.h>

/* What a refusal says; the caller adds the option or endpoint it came from. */
#define RCS_URL_USERINFO_RULE                                                                   \
	"a user:password@ holds a raw '/', '?', '#' or '@', which a URL's userinfo cannot "     \
	"(RFC 3986, 3.2.1): write them %2F, %3F, %23, %40"

/*
 * rcs_url_userinfo - the userinfo of @url (@len bytes, no NUL needed):
 * *@start is where it begins (after "scheme://", or 0), *@end the offset
 * of the '@' that ends it, the last '@' of @url.
 * Context: any thread.
 * Return: 1 when @url has one, 0 when not (*@start and *@end then both the
 * authority's start), -EINVAL when it holds a raw '/', '?', '#' or '@'
 * (*@start and *@end still bound it, so that it can be hidden).
 */
static inline int rcs_url_userinfo(const char *url, size_t len, size_t *start, size_t *end)
{
	const char *scheme = len >= 3 ? memmem(url, len, "://", 3) : NULL;
	size_t host = scheme ? (size_t)(scheme + 3 - url) : 0, at = len;

	*start = *end = host;
	while (at > host && url[at - 1] != '@')
		at--;
	if (at == host)
		return 0;
	*end = at - 1;
	for (size_t i = host; i < *end; i++)
		if (url[i] && strchr("/?#@", url[i]))
			return -EINVAL;
	return 1;
}

#endif
