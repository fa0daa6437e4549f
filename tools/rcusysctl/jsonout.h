/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl's --json output, built with json-c (so every string is escaped
 * by the library). Without json-c at build time json_supported() is false
 * and the other calls do nothing.
 */
#ifndef RCUSYSCTL_JSONOUT_H
#define RCUSYSCTL_JSONOUT_H

#include <stdbool.h>
#include <stdint.h>

struct json_object;

bool json_supported(void);

/* A new object; NULL when out of memory (the setters then do nothing). */
struct json_object *json_obj_new(void);
/* @value NULL: the member is left out. */
void json_obj_str(struct json_object *o, const char *key, const char *value);
void json_obj_int(struct json_object *o, const char *key, int64_t value);

/* Appends @o (taking it) to the array that json_list_print() prints. */
void json_list_add(struct json_object *o);
/* Prints the array gathered so far (even empty) on one line and empties it. */
void json_list_print(void);

/* Prints @o on one line (JSON Lines, for streams) and frees it. */
void json_obj_print_line(struct json_object *o);

#endif
