/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state journal's records (journal.h): little-endian fields, a
 * CRC-32C (Castagnoli, the polynomial of iSCSI, ext4 and etcd's WAL) over
 * the length and the body, so a torn or flipped record never applies.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"

/* crc (4) + len (4); the body: op (1), origin (1), pad (2), key_len (4), time (8). */
#define HEAD 8u
#define BODY_FIXED 16u

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32c(const unsigned char *p, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint32_t c = 0xffffffffu;

	pthread_once(&once, crc_init);
	while (len--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int reserve(struct journal_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *d;

	if (b->len + more <= b->cap)
		return 0;
	while (cap < b->len + more)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d)
		return -ENOMEM;
	b->data = d;
	b->cap = cap;
	return 0;
}

int journal_put_magic(struct journal_buf *b)
{
	if (reserve(b, JOURNAL_MAGIC_LEN))
		return -ENOMEM;
	memcpy(b->data + b->len, JOURNAL_MAGIC, JOURNAL_MAGIC_LEN);
	b->len += JOURNAL_MAGIC_LEN;
	return 0;
}

int journal_put(struct journal_buf *b, const struct journal_rec *r)
{
	size_t body = BODY_FIXED + r->key_len + r->value_len;
	unsigned char *p;

	if (r->key_len > JOURNAL_KEY_MAX || body > JOURNAL_RECORD_MAX ||
	    !journal_key_ok(r->op, r->key, r->key_len))
		return -EINVAL;
	if (reserve(b, HEAD + body))
		return -ENOMEM;
	p = (unsigned char *)b->data + b->len;
	put_le(p + 4, body, 4);
	p[8] = (unsigned char)r->op;
	p[9] = (unsigned char)r->origin;
	p[10] = p[11] = 0;
	put_le(p + 12, r->key_len, 4);
	put_le(p + 16, (uint64_t)r->time, 8);
	if (r->key_len)
		memcpy(p + 24, r->key, r->key_len);
	if (r->value_len)
		memcpy(p + 24 + r->key_len, r->value, r->value_len);
	put_le(p, crc32c(p + 4, 4 + body), 4);
	b->len += HEAD + body;
	return 0;
}

bool journal_key_ok(enum journal_op op, const char *key, size_t key_len)
{
	if (op != JOURNAL_SET && op != JOURNAL_DROP)
		return true;
	return key_len && key_len <= JOURNAL_KEY_MAX && !memchr(key, '\0', key_len);
}

bool journal_is(const char *data, size_t len)
{
	return len >= JOURNAL_MAGIC_LEN && !memcmp(data, JOURNAL_MAGIC, JOURNAL_MAGIC_LEN);
}

/* A commit's items: count (4), then each op (1), origin (1), pad (2), key_len (4), value_len (4). */
#define ITEM_FIXED 12u

/*
 * Walks the items of a commit record's value; @fn NULL: only checks them.
 * Return: 0, -EBADMSG (they do not parse to its end), or @fn's return.
 */
static int walk_items(const struct journal_rec *c, journal_rec_fn *fn, void *arg)
{
	const unsigned char *p = (const unsigned char *)c->value, *end = p + c->value_len;
	uint64_t n;
	int err = 0;

	if (c->value_len < 4 || !(n = get_le(p, 4)))
		return -EBADMSG;
	for (p += 4; n && !err; n--) {
		struct journal_rec r = { .origin = p[1], .time = c->time };

		if ((size_t)(end - p) < ITEM_FIXED)
			return -EBADMSG;
		r.op = (enum journal_op)p[0];
		r.key_len = get_le(p + 4, 4);
		r.value_len = get_le(p + 8, 4);
		if ((r.op != JOURNAL_SET && r.op != JOURNAL_DROP) || p[2] || p[3] ||
		    r.key_len > JOURNAL_KEY_MAX ||
		    r.key_len + r.value_len > (size_t)(end - p) - ITEM_FIXED)
			return -EBADMSG;
		r.key = (const char *)p + ITEM_FIXED;
		r.value = r.key + r.key_len;
		if (!journal_key_ok(r.op, r.key, r.key_len))
			return -EBADMSG;
		p += ITEM_FIXED + r.key_len + r.value_len;
		if (fn)
			err = fn(&r, arg);
	}
	return err ? err : p == end ? 0 : -EBADMSG;
}

/*
 * The record at @p (@left bytes there): its total size, or 0 when it does
 * not check; then *@damaged tells a record whose checksum holds but that
 * does not parse (no crash makes one) from one cut or torn.
 */
static size_t decode(const unsigned char *p, size_t left, struct journal_rec *r, bool *damaged)
{
	size_t body, key_len;

	*damaged = false;
	if (left < HEAD + BODY_FIXED)
		return 0;
	body = get_le(p + 4, 4);
	if (body < BODY_FIXED || body > JOURNAL_RECORD_MAX || body > left - HEAD)
		return 0;
	if (get_le(p, 4) != crc32c(p + 4, 4 + body))
		return 0;
	*damaged = true;
	key_len = get_le(p + 12, 4);
	if (key_len > body - BODY_FIXED || p[8] < JOURNAL_SET || p[8] > JOURNAL_COMMIT)
		return 0;
	r->op = (enum journal_op)p[8];
	r->origin = p[9];
	r->time = (int64_t)get_le(p + 16, 8);
	r->key = (const char *)p + 24;
	r->key_len = key_len;
	r->value = r->key + key_len;
	r->value_len = body - BODY_FIXED - key_len;
	if (!journal_key_ok(r->op, r->key, key_len))
		return 0;
	if (r->op == JOURNAL_COMMIT && (key_len || walk_items(r, NULL, NULL)))
		return 0;
	*damaged = false;
	return HEAD + body;
}

int journal_parse(const char *data, size_t len, journal_rec_fn *fn, void *arg, size_t *good)
{
	const unsigned char *p = (const unsigned char *)data;
	size_t off = 0;
	int err = 0;

	while (off < len && !err) {
		struct journal_rec r;
		bool damaged;
		size_t n = decode(p + off, len - off, &r, &damaged);

		if (!n)
			break;
		err = fn(&r, arg);
		if (!err)
			off += n;
	}
	*good = off;
	return err;
}

uint64_t journal_epoch(const struct journal_rec *r)
{
	return r->value_len == 8 ? get_le((const unsigned char *)r->value, 8) : 0;
}

void journal_epoch_bytes(uint64_t epoch, char out[8])
{
	put_le((unsigned char *)out, epoch, 8);
}

void journal_buf_free(struct journal_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int journal_commit_payload(struct journal_buf *b, const struct journal_rec *items, size_t n)
{
	size_t total = BODY_FIXED + 4;
	unsigned char *p;

	if (!n || n > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if ((items[i].op != JOURNAL_SET && items[i].op != JOURNAL_DROP) ||
		    !journal_key_ok(items[i].op, items[i].key, items[i].key_len))
			return -EINVAL;
		/* Each term is at most 16 MiB + 64 KiB here: the sum cannot wrap before the check. */
		if (items[i].value_len > JOURNAL_RECORD_MAX)
			return -EFBIG;
		total += ITEM_FIXED + items[i].key_len + items[i].value_len;
		if (total > JOURNAL_RECORD_MAX)
			return -EFBIG;
	}
	if (reserve(b, total - BODY_FIXED))
		return -ENOMEM;
	p = (unsigned char *)b->data + b->len;
	put_le(p, n, 4);
	p += 4;
	for (size_t i = 0; i < n; i++) {
		const struct journal_rec *r = &items[i];

		p[0] = (unsigned char)r->op;
		p[1] = (unsigned char)r->origin;
		p[2] = p[3] = 0;
		put_le(p + 4, r->key_len, 4);
		put_le(p + 8, r->value_len, 4);
		if (r->key_len)
			memcpy(p + ITEM_FIXED, r->key, r->key_len);
		if (r->value_len)
			memcpy(p + ITEM_FIXED + r->key_len, r->value, r->value_len);
		p += ITEM_FIXED + r->key_len + r->value_len;
	}
	b->len += total - BODY_FIXED;
	return 0;
}

int journal_commit_items(const struct journal_rec *r, journal_rec_fn *fn, void *arg)
{
	return r->op == JOURNAL_COMMIT ? walk_items(r, fn, arg) : -EINVAL;
}

/*
 * Is a 512-byte sector that the record at @p (@extent bytes, file offset
 * @at, @left bytes to the end of the file) reaches into all zeros from the
 * record on, to the sector's end or the file's? A write the disk never
 * made reads so; a few zero bytes of a record's own do not.
 */
static bool zero_sector(const unsigned char *p, size_t extent, size_t left, size_t at)
{
	for (size_t off = 0; off < extent; off += 512 - (at + off) % 512) {
		size_t end = off + 512 - (at + off) % 512, i;

		if (end > left)
			end = left;
		for (i = off; i < end && !p[i]; i++)
			;
		if (i == end)
			return true;
	}
	return false;
}

/*
 * Does a whole record start anywhere after the one at @p (@left bytes to
 * the end)? After a cut last append none can: then a length that runs past
 * the end was damaged, not cut. The checksums it may compute are bounded;
 * past that it cannot tell, and says so (damage: the start stops, the
 * operator decides).
 */
static bool record_follows(const unsigned char *p, size_t left)
{
	size_t budget = 4 * (size_t)JOURNAL_RECORD_MAX;

	for (size_t off = 1; off + HEAD + BODY_FIXED <= left; off++) {
		size_t body = get_le(p + off + 4, 4);
		struct journal_rec r;
		bool damaged;

		if (body < BODY_FIXED || body > left - off - HEAD)
			continue; /* no checksum to compute */
		if (body > budget)
			return true;
		budget -= body;
		if (decode(p + off, left - off, &r, &damaged) || damaged)
			return true;
	}
	return false;
}

int journal_tail(const char *data, size_t len, size_t good, size_t base)
{
	const unsigned char *p = (const unsigned char *)data + good;
	size_t left = len - good, extent;
	struct journal_rec r;
	bool damaged;

	if (good >= len)
		return 0;
	if (decode(p, left, &r, &damaged) || damaged)
		return -EBADMSG; /* it checks (journal_parse()'s callback stopped), or no crash made it */
	if (left < HEAD + BODY_FIXED)
		return 0; /* the file ends inside its header */
	extent = HEAD + get_le(p + 4, 4);
	if (extent >= left) /* it reaches the end of the file: the last append, cut? */
		return record_follows(p, left) ? -EBADMSG : 0;
	if (extent < HEAD + BODY_FIXED)
		extent = HEAD; /* a length that cannot be: its header's sector tells */
	return zero_sector(p, extent, left, base + good) ? 0 : -EBADMSG;
}
