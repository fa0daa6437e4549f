/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "jsonout.h"

#ifdef HAVE_JSON_C
#include <json-c/json.h>

static struct json_object *list;

bool json_supported(void)
{
	return true;
}

struct json_object *json_obj_new(void)
{
	return json_object_new_object();
}

void json_obj_str(struct json_object *o, const char *key, const char *value)
{
	if (o && value)
		json_object_object_add(o, key, json_object_new_string(value));
}

void json_obj_int(struct json_object *o, const char *key, int64_t value)
{
	if (o)
		json_object_object_add(o, key, json_object_new_int64(value));
}

void json_list_add(struct json_object *o)
{
	if (!o)
		return;
	if (!list)
		list = json_object_new_array();
	if (!list || json_object_array_add(list, o) != 0)
		json_object_put(o);
}

void json_list_print(void)
{
	if (!list)
		list = json_object_new_array();
	if (list)
		puts(json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(list);
	list = NULL;
}

void json_obj_print_line(struct json_object *o)
{
	if (!o)
		return;
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(o);
}

#else

bool json_supported(void)
{
	return false;
}

struct json_object *json_obj_new(void)
{
	return NULL;
}

void json_obj_str(struct json_object *o, const char *key, const char *value)
{
	(void)o, (void)key, (void)value;
}

void json_obj_int(struct json_object *o, const char *key, int64_t value)
{
	(void)o, (void)key, (void)value;
}

void json_list_add(struct json_object *o)
{
	(void)o;
}

void json_list_print(void)
{
}

void json_obj_print_line(struct json_object *o)
{
	(void)o;
}

#endif
