/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A table's rows by their address, for sysctl_unregister_row(): rcusysd
 * keeps a directory's tunables in one table, so a reload that drops 100 000
 * of them removes 100 000 rows of one table one by one, and a search of
 * h->entries for each was quadratic (6 s at 40 000). The row after the
 * last one removed is tried first; else the map, built on the first miss
 * for a table past a few rows and kept as long as the header: open
 * addressing, each slot a row's index + 1, at most half full, never
 * inserted into after it is built (a removed row's slot stays, its
 * entries[] slot being NULL, so probes go past it). Out of memory, the
 * search falls back to the scan. Internal to the library; every call with
 * the tree lock held.
 */
#include <stdint.h>
#include <stdlib.h>

#include "entry.h"
#include "tree.h"

/* Up to this many rows a scan costs less than the map's allocation. */
#define ROW_SCAN_MAX 8

struct rcs_row_map {
	size_t mask;      /* slots - 1 (a power of two) */
	uint32_t slot[];  /* row index + 1; 0: empty */
};

static size_t row_hash(const struct ctl_table *row)
{
	uint64_t x = (uint64_t)(uintptr_t)row;

	/* Rows are allocated in order: mix the bits (murmur3's finalizer). */
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static struct rcs_row_map *row_map_build(const struct sysctl_table_header *h)
{
	size_t slots = 16;
	struct rcs_row_map *m;

	while (slots < 2 * (size_t)h->count)
		slots *= 2;
	m = calloc(1, sizeof(*m) + slots * sizeof(m->slot[0]));
	if (!m)
		return NULL;
	m->mask = slots - 1;
	for (uint32_t k = 0; k < h->count; k++) {
		size_t i;

		if (!h->entries[k])
			continue;
		for (i = row_hash(h->entries[k]->table) & m->mask; m->slot[i]; i = (i + 1) & m->mask)
			;
		m->slot[i] = k + 1;
	}
	return m;
}

static long row_scan(const struct sysctl_table_header *h, const struct ctl_table *row,
		     unsigned long *probes)
{
	for (uint32_t k = 0; k < h->count; k++) {
		*probes += 1;
		if (h->entries[k] && h->entries[k]->table == row)
			return k;
	}
	return -1;
}

static long row_map_find(struct sysctl_table_header *h, const struct ctl_table *row,
			 unsigned long *probes)
{
	struct rcs_row_map *m;

	if (!h->row_map)
		h->row_map = row_map_build(h);
	m = h->row_map;
	if (!m)
		return row_scan(h, row, probes);
	for (size_t i = row_hash(row) & m->mask; m->slot[i]; i = (i + 1) & m->mask) {
		uint32_t k = m->slot[i] - 1;

		*probes += 1;
		if (h->entries[k] && h->entries[k]->table == row)
			return k;
	}
	return -1;
}

long rcs_row_find(struct sysctl_table_header *h, const struct ctl_table *row,
		  unsigned long *probes)
{
	uint32_t next = h->row_next;
	long k;

	/*
	 * Rows leave in the order they came more often than not (rcusysd
	 * frees a file's tunables in file order): try the row after the last
	 * one removed first, which needs no map and walks entries[] in order.
	 */
	if (next < h->count && h->entries[next] && h->entries[next]->table == row) {
		*probes += 1;
		k = next;
	} else {
		k = h->count <= ROW_SCAN_MAX ? row_scan(h, row, probes) : row_map_find(h, row, probes);
	}
	if (k >= 0)
		h->row_next = (uint32_t)k + 1;
	return k;
}

void rcs_row_map_free(struct sysctl_table_header *h)
{
	free(h->row_map);
	h->row_map = NULL;
}
