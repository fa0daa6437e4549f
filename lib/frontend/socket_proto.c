/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Control socket protocol: parsing and escaping, no I/O (rcustring-socket(7)).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rcustring/sysctl_commit.h"
#include "rcustring/sysctl_socket.h"
#include "socket_proto.h"

static const struct {
	const char *name;
	enum sock_verb verb;
	int args; /* 0: none, 1: optional, 2: required path, 3: path and value,
		     4: path, number and value, 5: a count of item lines, 6: paths */
} verbs[] = {
	{ "GET", SOCK_GET, 2 },	    { "SET", SOCK_SET, 3 },	  { "LIST", SOCK_LIST, 1 },
	{ "DESCRIBE", SOCK_DESCRIBE, 2 }, { "WATCH", SOCK_WATCH, 2 }, { "AUDIT", SOCK_AUDIT, 1 },
	{ "DUMP", SOCK_DUMP, 1 }, { "GENERATION", SOCK_GENERATION, 2 }, { "SETIF", SOCK_SETIF, 4 },
	{ "RESET", SOCK_RESET, 1 }, { "APPLY", SOCK_APPLY, 3 }, { "STATUS", SOCK_STATUS, 0 },
	{ "METRICS", SOCK_METRICS, 0 }, { "MSET", SOCK_MSET, 5 }, { "MAPPLY", SOCK_MAPPLY, 5 },
	{ "MGET", SOCK_MGET, 6 }, { "MWATCH", SOCK_MWATCH, 6 },
};

const char *sock_verb_name(enum sock_verb verb)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (verbs[i].verb == verb)
			return verbs[i].name;
	return "?";
}

/* A decimal uint64_t of @len bytes (at least one); -EINVAL otherwise. */
static int parse_u64(const char *p, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9' || v > (UINT64_MAX - (uint64_t)(p[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	*out = v;
	return 0;
}

/* A path token: no space, no control byte, no DEL. */
static size_t path_token(const char *p, size_t len, bool *bad)
{
	size_t i;

	*bad = false;
	for (i = 0; i < len && p[i] != ' '; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			*bad = true;
	return i;
}

/* The verb of @line's first @vlen bytes into @req: its argument kind (verbs[]), or -1. */
static int find_verb(const char *line, size_t vlen, struct sock_request *req)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strlen(verbs[i].name) == vlen && memcmp(verbs[i].name, line, vlen) == 0) {
			req->verb = verbs[i].verb;
			return verbs[i].args;
		}
	}
	return -1;
}

/* "AUDIT [<seq>]": @arg is what follows the space (@has_space), @alen bytes. */
static int parse_audit(const char *arg, size_t alen, bool has_space, struct sock_request *req,
		       const char **why)
{
	uint64_t v = 0;

	if (has_space && alen == 0) {
		*why = "missing sequence number after space";
		return -EINVAL;
	}
	for (size_t i = 0; i < alen; i++) {
		if (arg[i] < '0' || arg[i] > '9' || v > (UINT64_MAX - 9) / 10) {
			*why = "bad sequence number";
			return -EINVAL;
		}
		v = v * 10 + (uint64_t)(arg[i] - '0');
	}
	req->after_seq = v;
	return 0;
}

/* "SETIF <path> <generation> <value>" after the path (@plen of @alen bytes): the value may be empty. */
static int parse_setif(const char *arg, size_t alen, size_t plen, struct sock_request *req,
		       const char **why)
{
	const char *num = arg + plen + 1, *end;
	size_t rest = plen < alen ? alen - plen - 1 : 0;

	end = plen < alen ? memchr(num, ' ', rest) : NULL;
	if (!end) {
		*why = "missing generation or value (SETIF <path> <generation> <value>)";
		return -EINVAL;
	}
	if (parse_u64(num, (size_t)(end - num), &req->expected)) {
		*why = "bad generation";
		return -EINVAL;
	}
	req->value = end + 1;
	req->value_len = rest - (size_t)(end - num) - 1;
	return 0;
}

/* "MSET <count>": the number of item lines that follow, 1..SYSCTL_COMMIT_MAX. */
static int parse_count(const char *arg, size_t alen, struct sock_request *req, const char **why)
{
	uint64_t n;

	if (parse_u64(arg, alen, &n)) {
		*why = "bad count of items";
		return -EINVAL;
	}
	if (n == 0 || n > SYSCTL_COMMIT_MAX) {
		*why = "count of items not in 1..64 (SYSCTL_COMMIT_MAX)";
		return -EINVAL;
	}
	req->count = (size_t)n;
	return 0;
}

/* "MGET <path> [<path>...]": 1..SYSCTL_COMMIT_MAX paths, one space between two. */
static int parse_list(const char *arg, size_t alen, struct sock_request *req, const char **why)
{
	size_t n = 0, i = 0;

	while (i <= alen) {
		bool bad;
		size_t plen = path_token(arg + i, alen - i, &bad);

		if (plen == 0) {
			*why = "missing path (one space between two paths)";
			return -EINVAL;
		}
		if (bad) {
			*why = "control or NUL byte in path";
			return -EINVAL;
		}
		if (++n > SYSCTL_COMMIT_MAX) {
			*why = "more than 64 paths (SYSCTL_COMMIT_MAX)";
			return -EINVAL;
		}
		i += plen + 1;
	}
	req->list = arg;
	req->list_len = alen;
	req->count = n;
	return 0;
}

bool sock_next_path(const char **list, size_t *left, const char **path, size_t *path_len)
{
	const char *sp;

	if (!*left)
		return false;
	sp = memchr(*list, ' ', *left);
	*path = *list;
	*path_len = sp ? (size_t)(sp - *list) : *left;
	*list += *path_len + (sp ? 1 : 0);
	*left -= *path_len + (sp ? 1 : 0);
	return true;
}

/* The path and what follows it, by the verb's argument kind @args (verbs[]). */
static int parse_path_args(const char *arg, size_t alen, int args, struct sock_request *req,
			   const char **why)
{
	bool bad;
	size_t plen = path_token(arg, alen, &bad);

	if (plen == 0) {
		*why = "missing path";
		return -EINVAL;
	}
	if (bad) {
		*why = "control or NUL byte in path";
		return -EINVAL;
	}
	req->path = arg;
	req->path_len = plen;
	if (args == 4)
		return parse_setif(arg, alen, plen, req, why);
	if (args == 3) {
		if (plen == alen) {
			*why = "missing value (SET <path> <value>)";
			return -EINVAL;
		}
		req->value = arg + plen + 1;
		req->value_len = alen - plen - 1;
		return 0;
	}
	if (plen != alen) {
		*why = "unexpected text after path";
		return -EINVAL;
	}
	return 0;
}

int sock_parse_request(const char *line, size_t len, struct sock_request *req, const char **why)
{
	const char *sp, *arg;
	size_t vlen, alen;
	int args;

	memset(req, 0, sizeof(*req));
	*why = NULL;
	if (len + 1 > SYSCTL_SOCKET_LINE_MAX) {
		*why = "request line too long";
		return -E2BIG;
	}
	if (len == 0) {
		*why = "empty request";
		return -EINVAL;
	}
	sp = memchr(line, ' ', len);
	vlen = sp ? (size_t)(sp - line) : len;
	args = find_verb(line, vlen, req);
	if (args < 0) {
		*why = "unknown request (GET SET SETIF APPLY GENERATION LIST DUMP DESCRIBE WATCH AUDIT RESET "
		       "STATUS METRICS MSET MAPPLY MGET MWATCH)";
		return -EINVAL;
	}
	arg = sp ? sp + 1 : line + len;
	alen = sp ? len - vlen - 1 : 0;
	if (!sp && args >= 2) {
		*why = args == 4 ? "missing path, generation and value" :
		       args == 3 ? "missing path and value" :
		       args == 5 ? "missing count of items" : "missing path";
		return -EINVAL;
	}
	if (args == 0 && sp) {
		*why = "unexpected text after the request";
		return -EINVAL;
	}
	if (req->verb == SOCK_AUDIT)
		return parse_audit(arg, alen, sp != NULL, req, why);
	if (!sp) /* LIST or DUMP without a prefix, RESET of everything */
		return 0;
	if (args == 5)
		return parse_count(arg, alen, req, why);
	if (args == 6)
		return parse_list(arg, alen, req, why);
	return parse_path_args(arg, alen, args, req, why);
}

int sock_parse_item(const char *line, size_t len, struct sock_item *it, const char **why)
{
	struct sock_request req;
	int err;

	memset(it, 0, sizeof(*it));
	*why = NULL;
	if (len + 1 > SYSCTL_SOCKET_LINE_MAX) {
		*why = "item line too long";
		return -E2BIG;
	}
	memset(&req, 0, sizeof(req));
	/* SET's arguments exactly: the same path rule, the value the rest of the line. */
	err = parse_path_args(line, len, 3, &req, why);
	if (err)
		return err;
	it->path = req.path;
	it->path_len = req.path_len;
	it->value = req.value;
	it->value_len = req.value_len;
	return 0;
}

/* The text of byte @c escaped into @tmp; its length (1, 2 or 4). */
static size_t escape_byte(unsigned char c, char tmp[4], bool spaces)
{
	static const char hex[] = "0123456789abcdef";

	if (c == '\\') {
		tmp[0] = '\\', tmp[1] = '\\';
		return 2;
	}
	if (c == '\n' || c == '\t') {
		tmp[0] = '\\', tmp[1] = c == '\n' ? 'n' : 't';
		return 2;
	}
	if (c < 0x20 || c == 0x7f || (spaces && c == ' ')) {
		tmp[0] = '\\', tmp[1] = 'x', tmp[2] = hex[c >> 4], tmp[3] = hex[c & 15];
		return 4;
	}
	tmp[0] = (char)c;
	return 1;
}

size_t sock_escape(const char *in, size_t len, char *out, size_t size, bool spaces)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		char tmp[4];
		size_t k = escape_byte((unsigned char)in[i], tmp, spaces);

		for (size_t j = 0; j < k; j++, n++)
			if (n + 1 < size)
				out[n] = tmp[j];
	}
	if (size)
		out[n < size ? n : size - 1] = '\0';
	return n;
}

size_t sock_escape_fit(const char *in, size_t len, char *out, size_t room, bool spaces, size_t *used)
{
	size_t n = 0, i;

	for (i = 0; i < len; i++) {
		char tmp[4];
		size_t k = escape_byte((unsigned char)in[i], tmp, spaces);

		if (n + k > room)
			break;
		memcpy(out + n, tmp, k);
		n += k;
	}
	*used = i;
	return n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long sock_unescape(const char *in, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (in[i] != '\\') {
			out[n++] = in[i];
			continue;
		}
		if (++i == len)
			return -EINVAL;
		switch (in[i]) {
		case '\\': out[n++] = '\\'; break;
		case 'n': out[n++] = '\n'; break;
		case 't': out[n++] = '\t'; break;
		case 'x': {
			int hi = i + 2 < len ? hexval(in[i + 1]) : -1;
			int lo = hi >= 0 ? hexval(in[i + 2]) : -1;

			if (lo < 0)
				return -EINVAL;
			out[n++] = (char)(hi << 4 | lo);
			i += 2;
			break;
		}
		default:
			return -EINVAL;
		}
	}
	out[n] = '\0';
	return (long)n;
}

int sock_parse_reply(const char *line, size_t len, struct sock_reply *r)
{
	memset(r, 0, sizeof(*r));
	if (len >= 2 && memcmp(line, "OK", 2) == 0 && (len == 2 || line[2] == ' ')) {
		r->kind = SOCK_REPLY_OK;
		r->text = line + (len > 2 ? 3 : 2);
		r->text_len = len > 2 ? len - 3 : 0;
		return 0;
	}
	if (len >= 4 && memcmp(line, "ERR ", 4) == 0) {
		size_t i = 4;
		int e = 0;

		r->kind = SOCK_REPLY_ERR;
		while (i < len && line[i] >= '0' && line[i] <= '9' && e < 100000)
			e = e * 10 + (line[i++] - '0');
		if (i == 4 || e == 0)
			return -EINVAL;
		r->err = -e;
		/* Skip " ERRNAME " to the message. */
		if (i < len && line[i] == ' ')
			i++;
		while (i < len && line[i] != ' ')
			i++;
		if (i < len)
			i++;
		r->text = line + i;
		r->text_len = len - i;
		return 0;
	}
	r->kind = SOCK_REPLY_DATA;
	r->text = line;
	r->text_len = len;
	return 0;
}

const char *sock_errname(int err, char *buf, size_t size)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ EPERM, "EPERM" },	{ ENOENT, "ENOENT" },	  { EINTR, "EINTR" },
		{ EIO, "EIO" },		{ E2BIG, "E2BIG" },	  { EAGAIN, "EAGAIN" },
		{ ENOMEM, "ENOMEM" },	{ EACCES, "EACCES" },	  { EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" },	{ ENOTDIR, "ENOTDIR" },	  { EISDIR, "EISDIR" },
		{ EINVAL, "EINVAL" },	{ ENOSPC, "ENOSPC" },	  { ERANGE, "ERANGE" },
		{ EMSGSIZE, "EMSGSIZE" }, { ETIMEDOUT, "ETIMEDOUT" }, { ENAMETOOLONG, "ENAMETOOLONG" },
		{ EOVERFLOW, "EOVERFLOW" }, { EOPNOTSUPP, "EOPNOTSUPP" }, { EFAULT, "EFAULT" },
		{ ESTALE, "ESTALE" }, { EFBIG, "EFBIG" }, { ENOTRECOVERABLE, "ENOTRECOVERABLE" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	snprintf(buf, size, "E%d", err);
	return buf;
}
