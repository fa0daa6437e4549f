/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the control socket's clients hold, counted: a connection is a slot
 * of the server's own budget of threads and a handle of the program's
 * budget (sysctl_budget.h), a WATCH one more of each kind. socket_server.c
 * counts connections, socket_verbs.c watches.
 */
#include <errno.h>

#include "socket_conn.h"

/* The server's own budget of threads, from its options. */
int sock_slots_new(struct sysctl_socket *s)
{
	struct sysctl_budget_limits l = {
		.total = s->opt.max_clients,
		.root_reserve = s->opt.root_reserve,
		.per_uid = s->opt.max_per_uid,
	};

	l.kind_per_uid[SYSCTL_HANDLE_WATCH] = s->opt.max_watch_per_uid;
	return sysctl_budget_new(&l, &s->slots);
}

/*
 * Count a connection of @uid: a thread of the server's (root may take
 * every one; other uids share all but root_reserve, each at most
 * max_per_uid) and a handle of the program's budget. Return 0, -EMFILE
 * (the uid's own share is taken) or -ENFILE (every slot, or the users'
 * common share).
 */
int sock_conn_get(struct sysctl_socket *s, uid_t uid)
{
	int err = sysctl_budget_take(s->slots, uid, SYSCTL_HANDLE_CONN, 1);

	if (!err && s->budget) {
		err = sysctl_budget_take(s->budget, uid, SYSCTL_HANDLE_CONN, 1);
		if (err)
			sysctl_budget_put(s->slots, uid, SYSCTL_HANDLE_CONN, 1);
	}
	return err;
}

void sock_conn_put(struct sysctl_socket *s, uid_t uid)
{
	if (s->budget)
		sysctl_budget_put(s->budget, uid, SYSCTL_HANDLE_CONN, 1);
	sysctl_budget_put(s->slots, uid, SYSCTL_HANDLE_CONN, 1);
}

bool sock_watch_get(struct conn *c)
{
	struct sysctl_socket *s = c->server;
	uid_t uid = c->who.uid;
	int err = sysctl_budget_take(s->slots, uid, SYSCTL_HANDLE_WATCH, 0);

	if (!err && s->budget) {
		err = sysctl_budget_take(s->budget, uid, SYSCTL_HANDLE_WATCH, 1);
		if (err)
			sysctl_budget_put(s->slots, uid, SYSCTL_HANDLE_WATCH, 0);
	}
	c->watching = !err;
	return c->watching;
}

void sock_watch_put(struct conn *c)
{
	struct sysctl_socket *s = c->server;

	if (!c->watching)
		return;
	if (s->budget)
		sysctl_budget_put(s->budget, c->who.uid, SYSCTL_HANDLE_WATCH, 1);
	sysctl_budget_put(s->slots, c->who.uid, SYSCTL_HANDLE_WATCH, 0);
	c->watching = false;
}

