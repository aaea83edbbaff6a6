/*
 * sweep_grid.c -- the grid of `sim sweep` (sweep_grid.h).
 */
#include "sweep_grid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sw_key_parse(const char *text, int gen, struct sw_key *k, char *why, size_t whylen)
{
	const char *opt = gen ? "--gen" : "--set";
	const char *eq = strchr(text, '=');
	memset(k, 0, sizeof *k);
	if (!eq || eq == text) {
		snprintf(why, whylen, "%s '%s': expected %s=v1,v2,...", opt, text, gen ? "option" : "key");
		return -1;
	}
	if (!eq[1]) {
		snprintf(why, whylen, "%s '%s': no values", opt, text);
		return -1;
	}
	size_t pre = gen ? 4 : 0;
	if (!(k->buf = malloc(strlen(text) + pre + 1))) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	snprintf(k->buf, strlen(text) + pre + 1, "%s%s", gen ? "gen." : "", text);
	k->gen = gen;
	char *v = k->buf + pre + (eq - text);
	*v++ = '\0';
	k->key = k->buf;
	int n = 1;
	for (const char *s = v; *s; s++)
		if (*s == ',' && ++n > SW_MAX_VALS) {
			snprintf(why, whylen, "%s %s: more than %d values", opt, k->key, SW_MAX_VALS);
			return -1;
		}
	if (!(k->vals = calloc((size_t)n, sizeof *k->vals))) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (char *s = v;; s++) {
		char *e = strchr(s, ',');
		if (e)
			*e = '\0';
		if (!*s) {
			snprintf(why, whylen, "%s %s: malformed value list '%s' (an empty value)", opt, k->key, eq + 1);
			return -1;
		}
		k->vals[k->nvals++] = s;
		if (!e)
			break;
		s = e;
	}
	return 0;
}

void sw_key_free(struct sw_key *k)
{
	free(k->vals);
	free(k->buf);
	memset(k, 0, sizeof *k);
}

long sw_grid_points(const struct sw_key *keys, int n)
{
	long points = 1;
	for (int k = 0; k < n; k++) {
		points *= keys[k].nvals; /* at most SW_MAX_POINTS x SW_MAX_VALS: no overflow */
		if (points > SW_MAX_POINTS)
			return -1;
	}
	return points;
}

int sw_grid_value(const struct sw_key *keys, int n, long i, int k)
{
	for (int m = n - 1; m > k; m--)
		i /= keys[m].nvals;
	return (int)(i % keys[k].nvals);
}
