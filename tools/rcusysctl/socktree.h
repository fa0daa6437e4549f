/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sysctl tree seen through rcusysd's control socket (rcustring-socket(7)),
 * with the same calls as dirtree.h so that rcusysctl's options work over
 * both. Keys are '/'-separated (see sysctl_conf_normalize_key). One
 * connection per process.
 */
#ifndef RCUSYSCTL_SOCKTREE_H
#define RCUSYSCTL_SOCKTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Connects to the server at @path. Returns 0 or -errno. */
int socktree_open(const char *path);
void socktree_close(void);

/* The connection itself, for requests the calls below do not make (AUDIT). */
struct sock_client *socktree_client(void);

/*
 * A path as the server lists it (procps form, sysctl_entry_path(): each '/'
 * of the key shown as '.' and each '.' as '/') back to the '/' key, in place.
 */
void socktree_listed_key(char *path);

/* The server's message for the last error ("value longer than 127 bytes"), or "". */
const char *socktree_message(void);

/* The whole value of @key with a final '\n', as its file reads. Returns length or -errno. */
ssize_t socktree_read(const char *key, char *buf, size_t size);

/* Writes @value to @key. Returns 0 or -errno (-EINVAL for a value holding a newline). */
int socktree_write(const char *key, const char *value);
/* As socktree_write(), as a settings file's value (APPLY): rcusysd keeps no runtime write. */
int socktree_apply(const char *key, const char *value);

/*
 * Writes @value to @key only while the entry's generation (its change
 * counter) is @generation: -ESTALE when another write came first.
 */
int socktree_write_if(const char *key, const char *value, uint64_t generation);

/*
 * Writes @values[i] to @keys[i] as one commit (MSET; MAPPLY with @apply, as
 * socktree_apply()): all stored or none. On a refusal *@refused is the
 * index of the key the server named (@n when it named none) and
 * socktree_message() the server's words after the key. Returns 0 or -errno.
 */
int socktree_commit(const char *const *keys, const char *const *values, size_t n, bool apply,
		    size_t *refused);

/*
 * Drops the runtime value of @key ("": of every entry) at rcusysd, so that
 * its configuration files apply again. Returns 0 or -errno.
 */
int socktree_reset(const char *key);

/* The generation of @key (the count of its successful writes). Returns 0 or -errno. */
int socktree_generation(const char *key, uint64_t *out);

/* 0 for an entry, -EISDIR for a directory, -errno otherwise. */
int socktree_stat(const char *key);

/* The description of @key into @buf. Returns 0 or -errno. */
int socktree_describe(const char *key, char *buf, size_t size);

/* Calls @fn for every entry under @key ("" for all) in sorted order. */
int socktree_walk(const char *key, int (*fn)(const char *key, void *arg), void *arg);

/*
 * With @on, walks take every value in the one reply that lists the names
 * (DUMP), and socktree_read() of the key being walked costs no round trip.
 * Such walks leave out entries the caller may not read (as procps' -a
 * does), so this is for walks that read values, not for glob writes.
 */
void socktree_values_in_walks(bool on);

#endif
