/*
 * rcusysd's events socket (RUN_DIR/events.sock, root only): one request per
 * line, one reply line ("OK <result>" or "ERR <errno> <message>"):
 *
 *   MODULE <name>                       request_module(name)
 *   UEVENT <subsystem> <action> <devpath>  uevent_helper_call(...)
 *   POWEROFF [force]                    orderly_poweroff()
 *   OCFS2_LEAVE <group>                 ocfs2_leave_group(group)
 *   RUN <path> [args...]                run and supervise a program: when it
 *                                       dies from a signal, a crash record goes
 *                                       where kernel.core_pattern says
 */
#ifndef RCUSYSD_EVENTS_H
#define RCUSYSD_EVENTS_H

struct events;

/* Listens on @path; crash records with relative names go under @core_dir. */
int events_start(const char *path, const char *core_dir, struct events **out);
/* Stops listening and waits for every connection and supervised program. */
void events_stop(struct events *ev);

/* Client side: sends @line, prints the reply; returns 0 for OK, 1 otherwise. */
int events_send(const char *path, const char *line);

#endif
