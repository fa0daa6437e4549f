/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small blocking client of the control socket (rcustring-socket(7)), for
 * rcusysctl, the tests and the benchmark. Internal to the project (linked
 * from the static library). One client per thread.
 */
#ifndef RCUSTRING_LIB_SOCKET_CLIENT_H
#define RCUSTRING_LIB_SOCKET_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "socket_proto.h"

struct sock_client;

/**
 * sock_client_connect - connect to the server at @path
 * Return: 0 or -errno (-ENOENT: no socket file, -ECONNREFUSED: nobody
 * serves it, -ENAMETOOLONG, -ENOMEM).
 */
int sock_client_connect(const char *path, struct sock_client **out);

/** sock_client_close - close and free (NULL is a no-op) */
void sock_client_close(struct sock_client *c);

/** sock_client_fd - the socket, for tests that misbehave on purpose */
int sock_client_fd(const struct sock_client *c);

/**
 * sock_client_send - send "@verb[ @path[ @value]]\n" (@value: @value_len
 * bytes, sent raw)
 * Return: 0, -EINVAL (a newline in an argument), -E2BIG (line over
 * SYSCTL_SOCKET_LINE_MAX), or the send errno.
 */
int sock_client_send(struct sock_client *c, const char *verb, const char *path,
		     const char *value, size_t value_len);

/**
 * sock_client_reply - read the next reply line and classify it
 * @r: its text points into the client's buffer, valid until the next call
 * Return: 0, -ECONNRESET (the server closed), -ENOMEM, -EPROTO (malformed
 * ERR line), or the recv errno.
 */
int sock_client_reply(struct sock_client *c, struct sock_reply *r);

/**
 * sock_client_call - send one request and read a one-line reply
 * @value_out: for an OK reply, the unescaped text (malloc'ed; may be NULL
 *             to ignore); for an ERR reply, the server's message
 *             (unescaped, malloc'ed)
 * Return: 0 (OK), the server's negative errno (ERR), or a transport error
 * as sock_client_send()/sock_client_reply() give (with *@value_out NULL).
 */
int sock_client_call(struct sock_client *c, const char *verb, const char *path,
		     const char *value, size_t value_len, char **value_out);

/**
 * sock_client_mset - set @n entries as one commit (MSET, or MAPPLY with
 * @apply: a settings file's values) and read the one-line reply
 * @paths, @values: the items (a value may be empty, never hold a newline)
 * @msg_out: for an ERR reply the server's message, which names the refused
 *           item (unescaped, malloc'ed); NULL otherwise (may be NULL to ignore)
 * Return: 0 (every value stored), the server's negative errno (nothing
 * stored), -EINVAL (a newline or space in a path, a newline in a value),
 * -E2BIG (@n not in 1..SYSCTL_COMMIT_MAX, or a line too long), or a
 * transport error.
 * Context: the client's one thread, with no reply of an earlier request unread.
 */
int sock_client_mset(struct sock_client *c, bool apply, const char *const *paths,
		     const char *const *values, size_t n, char **msg_out);

#endif
