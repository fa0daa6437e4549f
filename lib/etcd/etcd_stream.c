/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decoding a range reply or a watch message from its text within a memory
 * bound proportional to it (DESIGN.md §7): the scanner (etcd_scan.c) checks
 * the whole text first; the members around the kvs (events) array, few and
 * small, become one small json-c object checked as before (etcd_json.c);
 * then the array's elements are decoded one at a time (in the gateway's
 * own form without json-c: etcd_fast.c), each handed to the caller and
 * freed before the next, so that peak memory is the reply's buffer plus
 * one element (a chunk of events for a watch message), whatever the reply
 * holds. A watch message's events are all checked before any is handed
 * on: a message that is not etcd's changes nothing; one that fits in a
 * chunk, nearly every message, is handed on from that check, not decoded
 * twice. The caller's cancel hook is asked between elements, so that a
 * stop never waits for a long reply to be decoded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"
#include "etcd_scan.h"

/* Values in the members beside the array (etcd's header and flags: about 10). */
#define SMALL_VALUES_MAX 256
/* Values in one kv or event (etcd's: at most 9). */
#define ELEM_VALUES_MAX 64
/* Events handed to the caller at a time; a chunk grows to hold a revision
 * whole (the mirror commits it as one), up to EVENTS_REVISION_MAX events
 * (etcd's transactions hold 128 operations unless configured otherwise). */
#define EVENTS_CHUNK 128
#define EVENTS_REVISION_MAX 4096
/* Elements decoded between two looks at the cancel hook. */
#define CANCEL_EVERY 256

/* The members of an object but @skip, as the text of a small object, and @skip's span. */
struct split {
	const char *skip;
	struct jspan arr; /* .p NULL: absent */
	char *text;
	size_t len, cap, values;
};

static int append(struct split *sp, const char *p, size_t n)
{
	if (sp->len + n + 2 > sp->cap) {
		size_t cap = sp->cap ? sp->cap : 256;
		char *t;

		while (cap < sp->len + n + 2)
			cap *= 2;
		t = realloc(sp->text, cap);
		if (!t)
			return -ENOMEM;
		sp->text = t;
		sp->cap = cap;
	}
	memcpy(sp->text + sp->len, p, n);
	sp->len += n;
	sp->text[sp->len] = '\0';
	return 0;
}

static int split_member(void *arg, const char *name, size_t name_len, struct jspan v)
{
	struct split *sp = arg;
	int err;

	if (strlen(sp->skip) == name_len && !memcmp(name, sp->skip, name_len)) {
		if (sp->arr.p)
			return -EBADMSG; /* twice: which one would json-c have kept? */
		sp->arr = v;
		return 0;
	}
	sp->values += jscan_count(v, SMALL_VALUES_MAX);
	if (sp->values > SMALL_VALUES_MAX)
		return -EBADMSG;
	err = append(sp, sp->len > 1 ? ",\"" : "\"", sp->len > 1 ? 2 : 1);
	if (!err)
		err = append(sp, name, name_len);
	if (!err)
		err = append(sp, "\":", 2);
	return err ? err : append(sp, v.p, v.len);
}

/*
 * A small text json-c may parse whole: NUL-terminated, depth-bounded. One
 * tokener (depth JSCAN_DEPTH_MAX) serves every parse of a reply or message,
 * reset before each: a new one per element cost an allocation of its stack.
 */
static json_object *parse_small(json_tokener *tok, const char *text, size_t len)
{
	json_object *o;

	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, text, (int)len + 1);
	if (o && json_tokener_get_parse_end(tok) < len) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/*
 * Split the object @v into @skip's span (sp->arr) and the rest, parsed
 * (*@out). Return: 0, -EBADMSG (not an object, @skip twice, too many
 * values beside it) or -ENOMEM.
 */
static int split_object(json_tokener *tok, struct jspan v, const char *skip, struct jspan *arr,
			json_object **out)
{
	struct split sp = { .skip = skip };
	int err = append(&sp, "{", 1);

	*out = NULL;
	if (!err)
		err = jscan_object(v, split_member, &sp);
	if (!err)
		err = append(&sp, "}", 1);
	if (!err && !(*out = parse_small(tok, sp.text, sp.len)))
		err = -EBADMSG; /* the scanner and json-c disagree: refuse it */
	*arr = sp.arr;
	free(sp.text);
	return err;
}

/* An array member: absent or null is empty; any other type is not etcd's. */
static int check_array(struct jspan *arr)
{
	if (arr->p && arr->len == 4 && !memcmp(arr->p, "null", 4))
		arr->p = NULL;
	return !arr->p || *arr->p == '[' ? 0 : -EBADMSG;
}

/* One element, small enough for json-c (NULL: not JSON json-c takes). */
static json_object *parse_elem(json_tokener *tok, struct jspan v)
{
	char *copy;
	json_object *o;

	/* json-c wants a NUL after a number; an element is small but for its strings. */
	copy = strndup(v.p, v.len);
	o = copy ? parse_small(tok, copy, v.len) : NULL;
	free(copy);
	return o;
}

/*
 * One kv (@ev NULL) or event of a reply: in the gateway's own form without
 * json-c (etcd_fast.c), else through json-c as etcd_json.c decides. Return:
 * 0, -ENOMEM, or another error (the element is not etcd's).
 */
static int decode_elem(json_tokener *tok, struct jspan v, struct etcd_kv *kv,
		       struct etcd_event *ev)
{
	json_object *o;
	int err;

	if (jscan_count(v, ELEM_VALUES_MAX) > ELEM_VALUES_MAX)
		return -EBADMSG; /* too big for an element of etcd's */
	err = ev ? etcd_event_fast(v, ev) : etcd_kv_fast(v, kv);
	if (err <= 0)
		return err;
	o = parse_elem(tok, v);
	err = !o ? -EBADMSG : ev ? etcd_parse_event(o, ev) : etcd_parse_kv(o, kv);
	json_object_put(o);
	return err;
}

static int cancelled(struct etcd_conn *c, size_t i)
{
	return c->cancel && i % CANCEL_EVERY == CANCEL_EVERY - 1 && c->cancel(c->cancel_arg);
}

struct range_walk {
	struct etcd_conn *c;
	json_tokener *tok;
	const char *prefix;
	size_t plen, i;
	etcd_kv_fn *fn;
	void *arg;
};

static int range_elem(void *arg, struct jspan v)
{
	struct range_walk *rw = arg;
	struct etcd_kv kv;
	int err;

	if (cancelled(rw->c, rw->i++))
		return -ECANCELED;
	err = decode_elem(rw->tok, v, &kv, NULL);
	if (err == -ENOMEM)
		return err;
	/* Keys outside the prefix asked for were not asked for. */
	if (err || kv.key_len < rw->plen || memcmp(kv.key, rw->prefix, rw->plen)) {
		if (!err)
			etcd_kv_free(&kv);
		rw->c->dropped++;
		return 0;
	}
	err = rw->fn(rw->arg, &kv);
	etcd_kv_free(&kv);
	return err;
}

int etcd_range_text(struct etcd_conn *c, const char *text, size_t len, const char *prefix,
		    int64_t *revision, etcd_kv_fn *fn, void *arg)
{
	json_tokener *tok = json_tokener_new_ex(JSCAN_DEPTH_MAX);
	struct range_walk rw = { c, tok, prefix, strlen(prefix), 0, fn, arg };
	struct etcd_kv *none;
	json_object *rest = NULL;
	struct jspan top, kvs;
	size_t n, dropped;
	int err = tok ? jscan_whole(text, len, &top, NULL) : -ENOMEM;

	c->dropped = 0;
	*revision = 0;
	if (!err)
		err = split_object(tok, top, "kvs", &kvs, &rest);
	if (!err && (err = etcd_reply_error(c, rest)) != 0)
		goto out;
	/* The header as before, with no kvs: those come one at a time. */
	if (!err)
		err = etcd_parse_range(rest, prefix, revision, &none, &n, &dropped);
	if (!err)
		etcd_kvs_free(none, n);
	if (!err)
		err = check_array(&kvs);
	if (err == -EBADMSG)
		snprintf(c->err, sizeof(c->err), "etcd gateway: a range reply that is not etcd's");
	if (!err && kvs.p)
		err = jscan_array(kvs, range_elem, &rw);
out:
	json_object_put(rest);
	if (tok)
		json_tokener_free(tok);
	return err;
}

struct watch_walk {
	struct etcd_conn *c;
	struct etcd_watch_msg m; /* the header's fields, and the events of a chunk */
	size_t cap;              /* of m.events */
	size_t i;
	etcd_watch_fn *fn;
	void *arg;
	json_tokener *tok;
	bool deliver;  /* false: the first pass, checking (and keeping, see kept_all) */
	bool kept_all; /* the first pass kept every event: they fit in a chunk */
};

static void watch_free_events(struct watch_walk *ww)
{
	for (size_t i = 0; i < ww->m.n_events; i++)
		etcd_kv_free(&ww->m.events[i].kv);
	ww->m.n_events = 0;
}

/*
 * Hand on the first @n events decoded so far (and, the first time, the
 * header's fields); the others move to the front.
 */
static int watch_flush_n(struct watch_walk *ww, size_t n)
{
	size_t left = ww->m.n_events - n;
	int ret;

	ww->m.n_events = n;
	ret = ww->fn(ww->arg, &ww->m);
	for (size_t i = 0; i < n; i++)
		etcd_kv_free(&ww->m.events[i].kv);
	memmove(ww->m.events, ww->m.events + n, left * sizeof(*ww->m.events));
	ww->m.n_events = left;
	ww->m.created = ww->m.canceled = false;
	ww->m.compact_revision = 0;
	return ret;
}

static int watch_flush(struct watch_walk *ww)
{
	return watch_flush_n(ww, ww->m.n_events);
}

/*
 * Room for one more event of revision @rev in a full chunk: hand on the
 * revisions before the last, which may go on in @rev; grow the chunk when
 * it holds one revision only; past EVENTS_REVISION_MAX, hand it on in parts.
 */
static int watch_make_room(struct watch_walk *ww, int64_t rev)
{
	struct etcd_event *ev = ww->m.events, *bigger;
	size_t first = ww->m.n_events;

	while (first && ev[first - 1].kv.mod_revision == rev)
		first--;
	if (first)
		return watch_flush_n(ww, first);
	if (ww->cap >= EVENTS_REVISION_MAX)
		return watch_flush(ww);
	bigger = realloc(ev, 2 * ww->cap * sizeof(*ev));
	if (!bigger)
		return watch_flush(ww);
	ww->m.events = bigger;
	ww->cap *= 2;
	return 0;
}

static int watch_elem(void *arg, struct jspan v)
{
	struct watch_walk *ww = arg;
	struct etcd_event ev;
	int err;

	if (cancelled(ww->c, ww->i++))
		return -ECANCELED;
	err = decode_elem(ww->tok, v, NULL, &ev);
	if (err)
		return err == -ENOMEM ? err : -EBADMSG;
	if (!ww->deliver) {
		/* A message that fits in a chunk (one event, nearly always) is
		 * decoded once: its events are kept and handed on as they are. */
		if (ww->kept_all && ww->m.n_events < ww->cap) {
			ww->m.events[ww->m.n_events++] = ev;
			return 0;
		}
		if (ww->kept_all)
			watch_free_events(ww); /* more than a chunk: the second pass decodes them */
		ww->kept_all = false;
		etcd_kv_free(&ev.kv);
		return 0;
	}
	err = ww->m.n_events == ww->cap ? watch_make_room(ww, ev.kv.mod_revision) : 0;
	if (err) {
		etcd_kv_free(&ev.kv);
		return err;
	}
	ww->m.events[ww->m.n_events++] = ev;
	return 0;
}

/* The "result" of a watch message: its fields, then its events in chunks. */
static int watch_result(struct watch_walk *ww, struct jspan res)
{
	json_object *rest;
	struct jspan events;
	int err = split_object(ww->tok, res, "events", &events, &rest);

	if (!err)
		err = etcd_parse_watch(rest, &ww->m); /* no events: they come next */
	json_object_put(rest);
	if (!err)
		err = check_array(&events);
	if (err)
		return err == -ENOMEM ? err : -EBADMSG;
	/* Every slot is written before it is read: no need to zero 8 KiB a message. */
	ww->m.events = malloc(EVENTS_CHUNK * sizeof(*ww->m.events));
	if (!ww->m.events)
		return -ENOMEM;
	ww->cap = EVENTS_CHUNK;
	ww->kept_all = true;
	if (events.p)
		err = jscan_array(events, watch_elem, ww); /* every event checked first */
	if (!err && !ww->kept_all) {
		ww->deliver = true;
		ww->i = 0;
		err = jscan_array(events, watch_elem, ww);
	}
	if (!err && (ww->m.n_events || !events.p || ww->i == 0))
		err = watch_flush(ww);
	watch_free_events(ww);
	free(ww->m.events);
	return err;
}

int etcd_watch_text(struct etcd_conn *c, const char *text, size_t len, etcd_watch_fn *fn,
		    void *arg)
{
	struct watch_walk ww = { .c = c, .fn = fn, .arg = arg };
	json_object *rest = NULL;
	struct jspan top, res;
	int err;

	ww.tok = json_tokener_new_ex(JSCAN_DEPTH_MAX);
	err = ww.tok ? jscan_whole(text, len, &top, NULL) : -ENOMEM;
	if (!err)
		err = split_object(ww.tok, top, "result", &res, &rest);
	if (err) {
		snprintf(c->err, sizeof(c->err), "watch: %s",
			 err == -ENOMEM ? "out of memory" : "a message that is not JSON");
		goto out;
	}
	err = etcd_reply_error(c, rest);
	if (!err && !res.p) {
		snprintf(c->err, sizeof(c->err), "watch: a message without a result");
		err = -EBADMSG;
	}
	if (!err) {
		err = watch_result(&ww, res);
		if (err == -EBADMSG || err == -ENOMEM)
			snprintf(c->err, sizeof(c->err), "watch: %s",
				 err == -ENOMEM ? "out of memory" : "a message that is not etcd's");
	}
out:
	json_object_put(rest);
	if (ww.tok)
		json_tokener_free(ww.tok);
	return err;
}
