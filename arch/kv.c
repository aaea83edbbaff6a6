/*
 * kv.c -- the map of flattened settings, and load errors that point into it.
 *
 * A leaf of the map of load.c keeps the file and line that set it; kv_where
 * finds that place for a key (or for its nearest enclosing group) so that an
 * error of bind.c or derive.c names where to look. A leaf of the arch/ call
 * graph: load.c, bind.c and derive.c call it, it calls none of them.
 */
#include "arch_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void arch_errorf(struct arch_error *e, const char *file, int line, int code, const char *fmt, ...)
{
	va_list ap;
	snprintf(e->file, sizeof e->file, "%s", file ? file : "");
	e->line = line;
	e->exit_code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
}

void arch_error_print(const struct arch_error *e, FILE *f)
{
	if (e->line > 0)
		fprintf(f, "%s:%d: %s\n", e->file, e->line, e->msg);
	else
		fprintf(f, "%s: %s\n", e->file, e->msg);
}

void kv_clear(struct kv *v)
{
	free(v->path);
	free(v->s);
	free(v->file);
}

void kv_free(struct kvmap *m)
{
	for (int i = 0; i < m->n; i++)
		kv_clear(&m->v[i]);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

struct kv *kv_find(struct kvmap *m, const char *path)
{
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->v[i].path, path) == 0)
			return &m->v[i];
	return NULL;
}

struct kv *kv_first_in(struct kvmap *m, const char *group)
{
	size_t n = strlen(group);
	for (int i = 0; i < m->n; i++)
		if (!strncmp(m->v[i].path, group, n) && m->v[i].path[n] == '.')
			return &m->v[i];
	return NULL;
}

void kv_where(struct kvmap *m, const char *path, const char **file, int *line)
{
	struct kv *v = kv_find(m, path);
	char group[256];
	snprintf(group, sizeof group, "%s", path);
	for (char *dot; !v && (dot = strrchr(group, '.'));) {
		*dot = '\0';
		v = kv_first_in(m, group);
	}
	if (v) {
		*file = v->file;
		*line = v->line;
		return;
	}
	*file = m->n ? m->v[0].file : "config";
	*line = 0;
}
