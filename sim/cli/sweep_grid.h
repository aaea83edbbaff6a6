/*
 * sweep_grid.h -- the grid of `sim sweep`: each --set key=v1,v2,... or --gen
 * option=v1,v2,... is a key with its values; the points are every
 * combination, the last key varying fastest. Parsing only (no config, no
 * I/O), so that tests/fuzz/fuzz_sweep.c reaches all of it.
 */
#ifndef SIM_SWEEP_GRID_H
#define SIM_SWEEP_GRID_H

#include <stddef.h>

#define SW_MAX_VALS   1000   /* values of one key */
#define SW_MAX_POINTS 100000 /* points of a sweep */

struct sw_key {
	char *key;   /* "compute.sm.count", a --gen option's "gen.tp" (points into buf) */
	char **vals; /* its values, in order (point into buf) */
	int nvals;
	char *buf; /* a copy of the text, cut at '=' and ',' */
	int gen;   /* a --gen option (key "gen." + the option's name), else a config key */
};

/* "key=v1,v2" into *k (gen: a --gen option). 0, or -1 with one line in why (what was expected, naming the
   option); on -1, *k holds what must still be freed with sw_key_free. */
int sw_key_parse(const char *text, int gen, struct sw_key *k, char *why, size_t whylen);
void sw_key_free(struct sw_key *k);

/* The number of points of n keys, or -1 past SW_MAX_POINTS. */
long sw_grid_points(const struct sw_key *keys, int n);

/* Point i's value index for key k (the last key varies fastest). */
int sw_grid_value(const struct sw_key *keys, int n, long i, int k);

#endif
