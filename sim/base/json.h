/*
 * json.h -- a small streaming JSON writer for reports (stable key order,
 * deterministic number formatting, RFC 8259 string escaping).
 */
#ifndef SIM_JSON_H
#define SIM_JSON_H

#include <stdio.h>

struct json {
	FILE *f;
	int depth;
	int first[32]; /* no element written yet at this depth */
	int pretty;
};

void json_begin(struct json *j, FILE *f, int pretty);
/* s as a JSON string literal, quotes and escapes included (for writers that
   stream JSON of their own shape, as the timelines do). */
void json_put_string(FILE *f, const char *s);
void json_end(struct json *j);                  /* final newline */
void json_obj(struct json *j, const char *key); /* key NULL inside arrays / at top */
void json_obj_end(struct json *j);
void json_arr(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *v);
void json_num(struct json *j, const char *key, double v); /* NaN/inf -> null */
void json_int(struct json *j, const char *key, long long v);
void json_bool(struct json *j, const char *key, int v);
/* (json_nil, not json_null: jansson's json_null() links into the same programs, and a second definition of the
   name would take its calls) */
void json_nil(struct json *j, const char *key);
/* A number, or null when v <= 0 (absent figures). */
void json_num_or_null(struct json *j, const char *key, double v);

#endif
