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
	free(m->leaves);
	free(m->groups);
	*m = (struct kvmap){0};
}

/* FNV-1a of the first len bytes of s. */
static unsigned long hash_n(const char *s, size_t len)
{
	unsigned long h = 1469598103934665603ul;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ul;
	return h;
}

/* The slot of key (path, len) in table t of cap slots: its own, or the
   empty one where it would go. */
static struct kvslot *slot(const struct kvmap *m, struct kvslot *t, int cap, const char *path, size_t len, int group)
{
	for (unsigned long i = hash_n(path, len) & (unsigned long)(cap - 1);; i = (i + 1) & (unsigned long)(cap - 1)) {
		struct kvslot *e = &t[i];
		if (!e->leaf)
			return e;
		const char *p = m->v[e->leaf - 1].path;
		if (group ? (size_t)e->len == len && !strncmp(p, path, len)
		          : strlen(p) == len && !strncmp(p, path, len))
			return e;
	}
}

/* Grows table *t (cap *cap, n used after one more) to keep it at most half full. */
static int grow(const struct kvmap *m, struct kvslot **t, int *cap, int n, int group)
{
	if (2 * n <= *cap)
		return 0;
	int nc = *cap ? 2 * *cap : 64;
	struct kvslot *nt = calloc((size_t)nc, sizeof *nt);
	if (!nt)
		return -1;
	for (int i = 0; i < *cap; i++)
		if ((*t)[i].leaf) {
			const char *p = m->v[(*t)[i].leaf - 1].path;
			*slot(m, nt, nc, p, group ? (size_t)(*t)[i].len : strlen(p), group) = (*t)[i];
		}
	free(*t);
	*t = nt;
	*cap = nc;
	return 0;
}

int kv_leaf_at(struct kvmap *m, const char *path, size_t len)
{
	return m->nleaves_cap ? slot(m, m->leaves, m->nleaves_cap, path, len, 0)->leaf - 1 : -1;
}

int kv_group_at(struct kvmap *m, const char *path, size_t len)
{
	return m->groups_cap ? slot(m, m->groups, m->groups_cap, path, len, 1)->leaf - 1 : -1;
}

int kv_append(struct kvmap *m, const struct kv *v)
{
	if (m->n == m->cap) {
		int cap = m->cap ? 2 * m->cap : 64;
		struct kv *nv = realloc(m->v, (size_t)cap * sizeof *nv);
		if (!nv)
			return -1;
		m->v = nv;
		m->cap = cap;
	}
	if (grow(m, &m->leaves, &m->nleaves_cap, m->n + 1, 0))
		return -1;
	m->v[m->n++] = *v;
	const char *p = v->path;
	*slot(m, m->leaves, m->nleaves_cap, p, strlen(p), 0) = (struct kvslot){m->n, 0};
	for (const char *dot = strchr(p, '.'); dot; dot = strchr(dot + 1, '.')) {
		size_t len = (size_t)(dot - p);
		if (kv_group_at(m, p, len) >= 0)
			continue; /* an earlier leaf made it a group */
		if (grow(m, &m->groups, &m->groups_cap, m->ngroups + 1, 1))
			return -1;
		*slot(m, m->groups, m->groups_cap, p, len, 1) = (struct kvslot){m->n, (int)len};
		m->ngroups++;
	}
	return 0;
}

struct kv *kv_find(struct kvmap *m, const char *path)
{
	int i = kv_leaf_at(m, path, strlen(path));
	return i >= 0 ? &m->v[i] : NULL;
}

struct kv *kv_first_in(struct kvmap *m, const char *group)
{
	int i = kv_group_at(m, group, strlen(group));
	return i >= 0 ? &m->v[i] : NULL;
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
