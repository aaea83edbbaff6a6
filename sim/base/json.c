/*
 * json.c -- streaming JSON writer (see json.h).
 */
#include "json.h"

#include <math.h>

static void indent(struct json *j)
{
	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

void json_put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void key(struct json *j, const char *k)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = 0;
	if (j->depth > 0)
		indent(j);
	if (k) {
		json_put_string(j->f, k);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

void json_begin(struct json *j, FILE *f, int pretty)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = 1;
	j->pretty = pretty;
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
}

static void open_(struct json *j, const char *k, char c)
{
	key(j, k);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = 1;
}

static void close_(struct json *j, char c)
{
	int empty = j->first[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (!empty)
		indent(j);
	fputc(c, j->f);
}

void json_obj(struct json *j, const char *k)
{
	open_(j, k, '{');
}
void json_obj_end(struct json *j)
{
	close_(j, '}');
}
void json_arr(struct json *j, const char *k)
{
	open_(j, k, '[');
}
void json_arr_end(struct json *j)
{
	close_(j, ']');
}

void json_str(struct json *j, const char *k, const char *v)
{
	key(j, k);
	json_put_string(j->f, v);
}

void json_num(struct json *j, const char *k, double v)
{
	key(j, k);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.10g", v);
}

void json_int(struct json *j, const char *k, long long v)
{
	key(j, k);
	fprintf(j->f, "%lld", v);
}

void json_bool(struct json *j, const char *k, int v)
{
	key(j, k);
	fputs(v ? "true" : "false", j->f);
}

void json_nil(struct json *j, const char *k)
{
	key(j, k);
	fputs("null", j->f);
}

void json_num_or_null(struct json *j, const char *k, double v)
{
	if (v > 0)
		json_num(j, k, v);
	else
		json_nil(j, k);
}
