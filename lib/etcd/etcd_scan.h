/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A JSON scanner that builds nothing: it checks the syntax of a reply and
 * finds the spans of the members and elements the decoder wants, so that a
 * reply of many small objects is never held as one tree of json-c objects
 * (about 180 times its size: a 4 MiB range reply took a daemon to 538 MB).
 * The decoder (etcd_stream.c) hands json-c one small span at a time, after
 * the scanner has bounded its depth and its count of values. Internal to
 * the module.
 */
#ifndef RCUSTRING_ETCD_SCAN_H
#define RCUSTRING_ETCD_SCAN_H

#include <stddef.h>

/* Nesting deeper than this is not etcd's (a watch message is 5 deep). */
#define JSCAN_DEPTH_MAX 16

struct jspan {
	const char *p; /* the value's first byte, no whitespace around it */
	size_t len;
};

/* One member of an object: its raw name (no escape in it) and its value. */
typedef int jscan_member_fn(void *arg, const char *name, size_t name_len, struct jspan value);
/* One element of an array. */
typedef int jscan_elem_fn(void *arg, struct jspan value);

/*
 * jscan_whole - @text (@len bytes) is exactly one JSON value with
 * whitespace around it and at most JSCAN_DEPTH_MAX levels of nesting;
 * *@out gets its span, *@values (may be NULL) how many values it holds.
 * Return: 0 or -EBADMSG.
 */
int jscan_whole(const char *text, size_t len, struct jspan *out, size_t *values);

/*
 * jscan_count - the values of the checked span @v (1 for a scalar), up to
 * @max (more: @max + 1), so that json-c is handed only small objects.
 */
size_t jscan_count(struct jspan v, size_t max);

/*
 * jscan_object, jscan_array - call @fn for each member (element) of the
 * checked span @v, in order, stopping at the first non-zero return, which
 * is returned. -EBADMSG: @v is not an object (array), or a member's name
 * holds an escape (etcd's gateway writes none; a decoder comparing raw
 * names must not be told "k\u0076s" is not "kvs").
 */
int jscan_object(struct jspan v, jscan_member_fn *fn, void *arg);
int jscan_array(struct jspan v, jscan_elem_fn *fn, void *arg);

struct etcd_kv;
struct etcd_event;
/*
 * etcd_kv_fast, etcd_event_fast - decode the checked span @v if it is in the
 * form etcd's gateway writes (etcd_fast.c), as etcd_parse_kv() and
 * etcd_parse_event() would, without json-c. Return: 0 (decoded: free with
 * etcd_kv_free()), 1 (not that form: nothing held, decode it with json-c)
 * or -ENOMEM.
 */
int etcd_kv_fast(struct jspan v, struct etcd_kv *kv);
int etcd_event_fast(struct jspan v, struct etcd_event *ev);

#endif /* RCUSTRING_ETCD_SCAN_H */
