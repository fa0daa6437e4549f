/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's line protocol as pure functions: the request parser,
 * reply-line classification, value escaping. Shared by the server, the
 * client (rcusysctl), the tests and the fuzz target. Internal to the
 * project (linked from the static library).
 */
#ifndef RCUSTRING_LIB_SOCKET_PROTO_H
#define RCUSTRING_LIB_SOCKET_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sock_verb {
	SOCK_GET, SOCK_SET, SOCK_LIST, SOCK_DESCRIBE, SOCK_WATCH, SOCK_AUDIT, SOCK_DUMP,
	SOCK_GENERATION, SOCK_SETIF, SOCK_RESET, SOCK_APPLY, SOCK_STATUS, SOCK_METRICS,
	SOCK_MSET, SOCK_MAPPLY, SOCK_MGET, SOCK_MWATCH,
};
#define SOCK_VERB_COUNT (SOCK_MWATCH + 1)

/* The verb's name ("GET"), for counts by verb. */
const char *sock_verb_name(enum sock_verb verb);

struct sock_request {
	enum sock_verb verb;
	const char *path; /* points into the line; not NUL-terminated */
	size_t path_len;  /* 0 for LIST, DUMP and RESET without a path */
	const char *value; /* SET, SETIF: the rest of the line, raw (may be empty) */
	size_t value_len;
	uint64_t after_seq; /* AUDIT */
	uint64_t expected;  /* SETIF: the generation (change counter) the entry must have */
	/*
	 * MSET, MAPPLY: the item lines that follow (1..SYSCTL_COMMIT_MAX);
	 * MGET, MWATCH: the paths in @list (sock_next_path()).
	 */
	size_t count;
	const char *list; /* MGET, MWATCH: the paths, one space between two */
	size_t list_len;
};

/**
 * sock_parse_request - parse one request line
 * @line: the line without its '\n'; may hold any bytes
 * @len: its length
 * @why: receives a static message on error
 *
 * Verbs are upper case and separated from their arguments by one space.
 * Paths are 1 or more bytes with no space and no control byte.
 * Return: 0, -E2BIG (@len + 1 > SYSCTL_SOCKET_LINE_MAX), -EINVAL (empty,
 * unknown verb, missing or extra argument, NUL or control byte in a path,
 * bad number).
 */
int sock_parse_request(const char *line, size_t len, struct sock_request *req, const char **why);

/* One item line of MSET and MAPPLY: "<path> <value>", as SET's arguments. */
struct sock_item {
	const char *path; /* points into the line; not NUL-terminated */
	size_t path_len;
	const char *value; /* the rest of the line, raw (may be empty) */
	size_t value_len;
};

/**
 * sock_parse_item - parse one item line of a multi-set
 * @line: the line without its '\n'; may hold any bytes
 * Return: 0, -E2BIG (as sock_parse_request()), -EINVAL (no path, a control
 * byte in it, no value).
 */
int sock_parse_item(const char *line, size_t len, struct sock_item *it, const char **why);

/**
 * sock_next_path - the next path of an MGET or MWATCH list
 * @list: in: where the rest of the list starts; out: past the path
 * @left: the bytes left in it (updated)
 * Return: true with @path, @path_len set, or false at the end.
 */
bool sock_next_path(const char **list, size_t *left, const char **path, size_t *path_len);

/**
 * sock_escape - escape @len bytes of @in into @out (NUL-terminated when
 * @size > 0)
 * @spaces: escape ' ' too (AUDIT fields)
 * Return: the escaped length, which may exceed @size - 1 (then @out is cut).
 */
size_t sock_escape(const char *in, size_t len, char *out, size_t size, bool spaces);

/**
 * sock_escape_fit - escape the longest head of @in (@len bytes) whose text
 * fits in @room bytes of @out (no NUL written), for a value sent in pieces:
 * escaping goes byte by byte, so the pieces join into sock_escape()'s text.
 * @used: the input bytes taken
 * Return: the bytes written.
 */
size_t sock_escape_fit(const char *in, size_t len, char *out, size_t room, bool spaces,
		       size_t *used);

/**
 * sock_unescape - undo sock_escape() into @out (room for @len + 1 bytes
 * always suffices; NUL-terminated)
 * Return: the length, or -EINVAL for a bad escape sequence.
 */
long sock_unescape(const char *in, size_t len, char *out);

enum sock_reply_kind { SOCK_REPLY_OK, SOCK_REPLY_ERR, SOCK_REPLY_DATA };

struct sock_reply {
	enum sock_reply_kind kind;
	int err;          /* ERR: the negative errno */
	const char *text; /* OK: after "OK "; ERR: the message; DATA: the whole line */
	size_t text_len;
};

/**
 * sock_parse_reply - classify one reply line (without its '\n')
 * Return: 0, or -EINVAL for an ERR line without a number.
 */
int sock_parse_reply(const char *line, size_t len, struct sock_reply *r);

/** sock_errname - "ENOENT" for ENOENT (positive), "E<n>" style fallback in @buf */
const char *sock_errname(int err, char *buf, size_t size);

#endif
