/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state journal's format: an 8-byte magic, then records, each a
 * CRC-32C, a length and a body (operation, origin, time, key, value). A
 * record is appended whole or, when the daemon or the machine died in its
 * middle, is a torn tail that fails its length or checksum: a reader
 * stops at the first record that does not check and reports how many
 * bytes were good; journal_tail() then tells a torn tail (cut it) from a
 * damaged journal (refuse it). A commit of several entries is one
 * JOURNAL_COMMIT record whose value lists its (op, key, value) items, so
 * one checksum covers them all: after a crash all of them are there or
 * none. Values are bytes, stored as the entry read them, so they come back
 * exactly. Pure encoding and decoding: rcusysd's store (persist.c) and
 * rcusysctl --kept share it.
 */
#ifndef RCUSYSD_JOURNAL_H
#define RCUSYSD_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JOURNAL_MAGIC "RCSJRNL1"
#define JOURNAL_MAGIC_LEN 8
/* A key longer than this, or a record longer than JOURNAL_RECORD_MAX, does not check. */
#define JOURNAL_KEY_MAX 65536u
#define JOURNAL_RECORD_MAX (64u << 20)

enum journal_op {
	JOURNAL_SET = 1,   /* @key holds @value */
	JOURNAL_DROP = 2,  /* @key is no longer kept */
	JOURNAL_EPOCH = 3, /* the store's epoch: @value is 8 bytes, little-endian */
	JOURNAL_COMMIT = 4, /* @value holds items (journal_commit_items()); no key */
};

/* One record; @key and @value point into the parsed data (not NUL-terminated). */
struct journal_rec {
	enum journal_op op;
	unsigned int origin; /* enum sysctl_origin of the write that made it */
	int64_t time;        /* seconds since 1970 (CLOCK_REALTIME) */
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
};

/* A growing buffer of encoded records. */
struct journal_buf {
	char *data;
	size_t len, cap;
};

/*
 * Appends @r, encoded, to @b. Context: any thread, @b its own.
 * Return: 0, -EINVAL (key or record too long, a key journal_key_ok()
 * refuses), -ENOMEM.
 */
int journal_put(struct journal_buf *b, const struct journal_rec *r);

/* Appends the magic to @b: the start of a whole file. Return: 0 or -ENOMEM. */
int journal_put_magic(struct journal_buf *b);

/*
 * Is @key (@key_len bytes) one a record of @op may name? A SET's or a
 * DROP's key is an entry's path: not empty, at most JOURNAL_KEY_MAX bytes
 * and without a NUL byte (no entry's path holds one: the tree's names are C
 * strings). A record or a commit item that names another, even under a
 * checksum that holds, is damage: it never reaches the kept map, which
 * keys by C string. Other ops carry no key to check.
 * Context: any thread.
 */
bool journal_key_ok(enum journal_op op, const char *key, size_t key_len);

/* Does @data (@len bytes) start as a journal? */
bool journal_is(const char *data, size_t len);

typedef int journal_rec_fn(const struct journal_rec *r, void *arg);

/*
 * Calls @fn for each record in @data (@len bytes, records only, no
 * magic) until one does not check or @fn returns non-zero; *@good gets the
 * bytes of the records that checked. Return: 0 or @fn's return.
 */
int journal_parse(const char *data, size_t len, journal_rec_fn *fn, void *arg, size_t *good);

/* The epoch a JOURNAL_EPOCH record holds (0 for a malformed one). */
uint64_t journal_epoch(const struct journal_rec *r);

/* @epoch as a JOURNAL_EPOCH record's value (8 bytes at @out). */
void journal_epoch_bytes(uint64_t epoch, char out[8]);

void journal_buf_free(struct journal_buf *b);

/*
 * The value of a JOURNAL_COMMIT record holding @items (@n of them, each a
 * JOURNAL_SET or JOURNAL_DROP with its key, value and origin; their time is
 * the record's), appended to @b (empty). The size is checked before
 * anything is copied. Context: any thread, @b its own.
 * Return: 0, -EINVAL (a key journal_key_ok() refuses, another op, no
 * item), -EFBIG (the record would be longer than JOURNAL_RECORD_MAX),
 * -ENOMEM.
 */
int journal_commit_payload(struct journal_buf *b, const struct journal_rec *items, size_t n);

/*
 * Calls @fn for each item of the JOURNAL_COMMIT record @r (their time is
 * @r's), in order, until @fn returns non-zero. Records journal_parse()
 * gives were checked whole already. Context: any thread.
 * Return: 0 or @fn's return.
 */
int journal_commit_items(const struct journal_rec *r, journal_rec_fn *fn, void *arg);

/*
 * The bytes of @data (@len, records only) from @good on, where
 * journal_parse() stopped: a torn tail, which a crash during an append
 * leaves (a record cut short by the end of the file, reaching to it with
 * no whole record after its start, or
 * holding a zero-filled 512-byte sector the disk never wrote, as etcd's
 * WAL tells them), or damage (a record in the middle that fails its
 * checksum, or one whose checksum holds but that does not parse: a newer
 * format, a bug). @base: the file offset of @data, for the sectors.
 * Context: any thread. Return: 0 (nothing left or a torn tail), -EBADMSG.
 */
int journal_tail(const char *data, size_t len, size_t good, size_t base);

#endif
