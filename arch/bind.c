/*
 * bind.c -- the parameter tables applied to a merged config.
 *
 * For every section of params.c present in the map (for "x.*" sections: every
 * group under x), every parameter is looked up, parsed by its type and unit,
 * range-checked and stored at its offset in the section's struct; absent ones
 * take their default or are reported missing when required. Every leaf that
 * no parameter consumed is then an unknown key, reported with the closest
 * known path as a suggestion.
 */
#include "arch_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A group's name is written at the start of its struct (bind of x.*). */
_Static_assert(offsetof(struct arch_unit, name) == 0, "name first in struct arch_unit");
_Static_assert(offsetof(struct arch_link, name) == 0, "name first in struct arch_link");

/* Where a value of the section lives in the chip (idx-th group of x.*). */
static void *section_target(struct arch_chip *c, const struct arch_section *s, int idx)
{
	return (char *)c + s->chip_off + (size_t)idx * s->stride;
}

static void fmt_num(const struct arch_param *p, double v, char *buf, size_t len)
{
	if (p->type == P_QTY)
		units_format(v, p->unit, buf, len);
	else
		snprintf(buf, len, "%g", v);
}

int arch_parse_bool(const char *text)
{
	if (!strcmp(text, "true") || !strcmp(text, "yes") || !strcmp(text, "1"))
		return 1;
	if (!strcmp(text, "false") || !strcmp(text, "no") || !strcmp(text, "0"))
		return 0;
	return -1;
}

/* Parses text written on the command line or as a default. */
static int parse_text(const struct arch_param *p, const char *text, int quoted, double *num, const char **str,
                      char *why, size_t wl)
{
	char *end;
	*str = text;
	switch (p->type) {
	case P_STR: return 0;
	case P_ENUM: return 0; /* checked by the caller */
	case P_BOOL:
		if (arch_parse_bool(text) < 0) {
			snprintf(why, wl, "\"%s\" is not true or false", text);
			return -1;
		}
		*num = arch_parse_bool(text);
		return 0;
	case P_INT:
		if (quoted) {
			snprintf(why, wl, "\"%s\" is a string; expected an integer without quotes", text);
			return -1;
		}
		errno = 0;
		long long v = strtoll(text, &end, 10);
		if (end == text || *end || errno) {
			snprintf(why, wl, "\"%s\" is not an integer", text);
			return -1;
		}
		*num = (double)v;
		return 0;
	case P_FLOAT:
		if (quoted) {
			snprintf(why, wl, "\"%s\" is a string; expected a number without quotes", text);
			return -1;
		}
		return units_parse(text, UNIT_NONE, num, why, wl);
	case P_QTY: return units_parse(text, p->unit, num, why, wl);
	}
	return -1;
}

/* Parses a config leaf according to the parameter's type. */
static int parse_kv(const struct arch_param *p, const struct kv *v, double *num, const char **str, char *why, size_t wl)
{
	switch (v->type) {
	case KV_STR:
		if (v->quoted && (p->type == P_INT || p->type == P_FLOAT)) {
			snprintf(why, wl, "\"%s\" is a string; expected %s without quotes", v->s,
			         p->type == P_INT ? "an integer" : "a number");
			return -1;
		}
		return parse_text(p, v->s, v->quoted, num, str, why, wl);
	case KV_BOOL:
		if (p->type != P_BOOL)
			break;
		*num = v->b;
		return 0;
	case KV_INT:
	case KV_FLOAT:
		if (p->type == P_INT && v->type == KV_INT) {
			*num = (double)v->i;
			return 0;
		}
		if (p->type == P_FLOAT) {
			*num = v->f;
			return 0;
		}
		if (p->type == P_QTY) {
			snprintf(why, wl, "%g has no unit; expected a %s in quotes such as %s", v->f,
			         units_kind_name(p->unit), units_example(p->unit));
			return -1;
		}
		if (p->type == P_INT) {
			snprintf(why, wl, "%g is not an integer", v->f);
			return -1;
		}
		break;
	}
	switch (p->type) {
	case P_INT: snprintf(why, wl, "expected an integer"); break;
	case P_FLOAT: snprintf(why, wl, "expected a number"); break;
	case P_BOOL: snprintf(why, wl, "expected true or false"); break;
	case P_QTY:
		snprintf(why, wl, "expected a %s in quotes such as %s", units_kind_name(p->unit),
		         units_example(p->unit));
		break;
	default: snprintf(why, wl, "expected a string in quotes"); break;
	}
	return -1;
}

static int enum_ok(const char *choices, const char *s)
{
	size_t n = strlen(s);
	for (const char *c = choices; *c;) {
		const char *bar = strchr(c, '|');
		size_t len = bar ? (size_t)(bar - c) : strlen(c);
		if (len == n && !strncmp(c, s, n))
			return 1;
		if (!bar)
			break;
		c = bar + 1;
	}
	return 0;
}

/* Stores a parsed value at the parameter's offset, after checking it. */
static int store(const struct arch_param *p, void *base, double num, const char *str, const char *path,
                 const char *file, int line, struct arch_error *err)
{
	char *at = (char *)base + p->off;
	char a[48], b[48], c[48];
	switch (p->type) {
	case P_STR:
	case P_ENUM:
		if (p->type == P_ENUM && !enum_ok(p->choices, str)) {
			arch_errorf(err, file, line, SIM_EXIT_CONFIG, "%s: \"%s\" is not one of %s", path, str,
			            p->choices);
			return -1;
		}
		if (strlen(str) >= p->size) {
			arch_errorf(err, file, line, SIM_EXIT_CONFIG, "%s: text longer than %zu characters", path,
			            p->size - 1);
			return -1;
		}
		memcpy(at, str, strlen(str) + 1);
		return 0;
	default: break;
	}
	if (!(num >= p->lo && num <= p->hi)) {
		fmt_num(p, num, a, sizeof a);
		fmt_num(p, p->lo, b, sizeof b);
		fmt_num(p, p->hi, c, sizeof c);
		if (p->hi >= 1e29)
			arch_errorf(err, file, line, SIM_EXIT_CONFIG, "%s: %s is out of range; expected at least %s",
			            path, a, b);
		else
			arch_errorf(err, file, line, SIM_EXIT_CONFIG, "%s: %s is out of range; expected %s to %s", path,
			            a, b, c);
		return -1;
	}
	if (p->type == P_INT)
		*(long *)(void *)at = (long)num;
	else if (p->type == P_BOOL)
		*(int *)(void *)at = (int)num;
	else
		*(double *)(void *)at = num;
	return 0;
}

static int bind_group(struct kvmap *m, const struct arch_section *s, const char *group, void *base,
                      struct arch_error *err)
{
	char path[512], why[400];
	for (int i = 0; i < s->nparams; i++) {
		const struct arch_param *p = &s->params[i];
		double num = 0;
		const char *str = "";
		snprintf(path, sizeof path, "%s.%s", group, p->key);
		struct kv *v = kv_find(m, path);
		if (v) {
			v->used = 1;
			if (parse_kv(p, v, &num, &str, why, sizeof why)) {
				arch_errorf(err, v->file, v->line, SIM_EXIT_CONFIG, "%s: %s", path, why);
				return -1;
			}
			if (store(p, base, num, str, path, v->file, v->line, err))
				return -1;
		} else if (p->flags & PF_REQUIRED) {
			const char *file;
			int line;
			char ex[160];
			kv_where(m, path, &file, &line); /* path is absent: its group */
			if (p->type == P_QTY)
				snprintf(ex, sizeof ex, " (a %s such as %s)", units_kind_name(p->unit),
				         units_example(p->unit));
			else if (p->type == P_ENUM)
				snprintf(ex, sizeof ex, " (one of %s)", p->choices);
			else
				ex[0] = '\0';
			arch_errorf(err, file, line, SIM_EXIT_CONFIG, "%s: missing required key '%s'%s", group, p->key,
			            ex);
			return -1;
		} else if (p->def) {
			if (parse_text(p, p->def, 0, &num, &str, why, sizeof why) ||
			    store(p, base, num, str, path, "arch/params.c", 0, err)) {
				arch_errorf(err, "arch/params.c", 0, SIM_EXIT_INTERNAL, "bad default for %s", path);
				return -1;
			}
		}
	}
	return 0;
}

/* Names of the groups under "x." for a section "x.*", in order of appearance. */
static int list_groups(struct kvmap *m, const char *x, char names[][ARCH_NAME_MAX], int max, int *n,
                       struct arch_error *err)
{
	size_t xl = strlen(x);
	*n = 0;
	for (int i = 0; i < m->n; i++) {
		const char *p = m->v[i].path;
		if (strncmp(p, x, xl) || p[xl] != '.')
			continue;
		const char *g = p + xl + 1, *dot = strchr(g, '.');
		if (!dot)
			continue; /* a value directly under x: left unused, reported unknown */
		size_t gl = (size_t)(dot - g);
		int seen = 0;
		for (int k = 0; k < *n; k++)
			seen |= strlen(names[k]) == gl && !strncmp(names[k], g, gl);
		if (seen)
			continue;
		if (*n == max || gl >= ARCH_NAME_MAX) {
			arch_errorf(err, m->v[i].file, m->v[i].line, SIM_EXIT_CONFIG,
			            *n == max ? "%s: more than %d groups" : "%s: group name too long", x, max);
			return -1;
		}
		memcpy(names[*n], g, gl);
		names[(*n)++][gl] = '\0';
	}
	return 0;
}

static int has_group(struct kvmap *m, const char *prefix)
{
	return kv_first_in(m, prefix) != NULL;
}

/* Levenshtein distance, for "did you mean". */
int arch_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 255 || lb > 255)
		return 1000;
	int prev[256], cur[256];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			int del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof prev[0]);
	}
	return prev[lb];
}

static int near_enough(int d, const char *s)
{
	return d <= 3 || d * 4 <= (int)strlen(s);
}

int arch_nearest(const char *s, const char *const *cands, int n)
{
	int best = -1, bestd = 1 << 20;
	for (int i = 0; i < n; i++) {
		int d = arch_edit_distance(s, cands[i]);
		if (d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best >= 0 && bestd > 0 && (bestd <= 2 || bestd * 4 <= (int)strlen(s)) ? best : -1;
}

/* The known path closest to an unknown one, given the groups present. */
/* Keys an older sim read and this one does not, since no model used them
   (configs may still carry them): named as such rather than given a near
   miss. `*` stands for one path segment (a unit group's name). */
static const char *const removed_keys[] = {
    "compute.*.l1",       "memory.device.stacks",  "memory.l2.slices",
    "memory.llc.slices",  "memory.llc.bandwidth",  "memory.llc.bytes_per_clock",
    "memory.llc.clock",   "memory.llc.latency",    "system.switch_latency",
    "system.nic_latency", "system.fabric_latency", "system.fabric_tiers",
    "system.fabric",      "system.switches",
};

static int was_removed(const char *path)
{
	for (size_t k = 0; k < sizeof removed_keys / sizeof removed_keys[0]; k++) {
		const char *p = removed_keys[k], *q = path;
		while (*p && *q) {
			if (*p == '*') { /* one segment */
				p++;
				while (*q && *q != '.')
					q++;
				continue;
			}
			if (*p != *q)
				break;
			p++, q++;
		}
		if (!*p && !*q)
			return 1;
	}
	return 0;
}

static void suggest(struct kvmap *m, const char *path, char *best, size_t len)
{
	int bestd = 1 << 20;
	char cand[512], names[ARCH_MAX_LINKS][ARCH_NAME_MAX];
	struct arch_error ignore;
	best[0] = '\0';
	for (int s = 0; s < arch_nsections; s++) {
		const struct arch_section *sec = &arch_sections[s];
		int ng = 1;
		char prefix[128];
		snprintf(prefix, sizeof prefix, "%s", sec->prefix);
		if (sec->flags & SF_MULTI) {
			prefix[strlen(prefix) - 2] = '\0';
			if (list_groups(m, prefix, names, ARCH_MAX_LINKS, &ng, &ignore) || ng == 0)
				continue;
		}
		for (int g = 0; g < ng; g++) {
			for (int i = 0; i < sec->nparams; i++) {
				if (sec->flags & SF_MULTI)
					snprintf(cand, sizeof cand, "%.60s.%.60s.%.60s", prefix, names[g],
					         sec->params[i].key);
				else
					snprintf(cand, sizeof cand, "%.60s.%.60s", prefix, sec->params[i].key);
				int d = arch_edit_distance(path, cand);
				if (d < bestd) {
					bestd = d;
					snprintf(best, len, "%s", cand);
				}
			}
		}
	}
	if (!near_enough(bestd, path))
		best[0] = '\0';
}

int arch_bind(struct kvmap *m, struct arch_chip *c, struct arch_error *err)
{
	for (int s = 0; s < arch_nsections; s++) {
		const struct arch_section *sec = &arch_sections[s];
		if (sec->flags & SF_MULTI) {
			char x[128], names[ARCH_MAX_LINKS][ARCH_NAME_MAX], group[256];
			int max = !strcmp(sec->prefix, "compute.*") ? ARCH_MAX_UNITS : ARCH_MAX_LINKS, n;
			snprintf(x, sizeof x, "%.*s", (int)strlen(sec->prefix) - 2, sec->prefix);
			if (list_groups(m, x, names, max, &n, err))
				return -1;
			if (n == 0 && (sec->flags & SF_REQUIRED)) {
				arch_errorf(err, c->path, 1, SIM_EXIT_CONFIG,
				            "missing section '%s' (at least one group, e.g. %s.sm = { ... })", x, x);
				return -1;
			}
			for (int g = 0; g < n; g++) {
				void *base = section_target(c, sec, g);
				snprintf(group, sizeof group, "%.120s.%.63s", x, names[g]);
				if (bind_group(m, sec, group, base, err))
					return -1;
				snprintf((char *)base, ARCH_NAME_MAX, "%.63s", names[g]); /* name is the first field */
			}
			if (!strcmp(x, "compute"))
				c->nunits = n;
			else
				c->nlinks = n;
			continue;
		}
		if (!has_group(m, sec->prefix)) {
			if (sec->flags & SF_REQUIRED) {
				arch_errorf(err, c->path, 1, SIM_EXIT_CONFIG, "missing section '%s' (%s)", sec->prefix,
				            sec->desc);
				return -1;
			}
			/* absent sections with defaults: one die; the model's fitted constants */
			if ((!strcmp(sec->prefix, "dies") || !strcmp(sec->prefix, "model")) &&
			    bind_group(m, sec, sec->prefix, section_target(c, sec, 0), err))
				return -1;
			continue;
		}
		if (bind_group(m, sec, sec->prefix, section_target(c, sec, 0), err))
			return -1;
	}
	c->dram.present = 1;
	c->l2.present = has_group(m, "memory.l2");
	c->llc.present = has_group(m, "memory.llc");
	c->sys.present = has_group(m, "system");
	for (int i = 0; i < m->n; i++) {
		struct kv *v = &m->v[i];
		if (v->used)
			continue;
		if (was_removed(v->path)) {
			arch_errorf(err, v->file, v->line, SIM_EXIT_CONFIG,
			            "unknown key '%s': removed, as no model read it (see `sim help config`)", v->path);
			return -1;
		}
		char best[512];
		suggest(m, v->path, best, sizeof best);
		if (best[0])
			arch_errorf(err, v->file, v->line, SIM_EXIT_CONFIG, "unknown key '%s' (did you mean '%s'?)",
			            v->path, best);
		else
			arch_errorf(err, v->file, v->line, SIM_EXIT_CONFIG, "unknown key '%s' (see `sim help config`)",
			            v->path);
		return -1;
	}
	return 0;
}
