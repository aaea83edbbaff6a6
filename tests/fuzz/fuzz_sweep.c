/*
 * fuzz_sweep.c -- libFuzzer target for the grid of `sim sweep`
 * (sim/cli/sweep_grid.c): the input is up to 8 lines, each a --set or --gen
 * text (a line starting with '+' is a --gen option). A parsed key must give
 * back its text (key = values joined by ','), values non-empty and without
 * ','; a refusal must say why, on one line; the grid's points must be a
 * bijection onto the value indices (the last key fastest).
 */
#include "sweep_grid.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct sw_key keys[8];
	int n = 0, refused = 0;
	char why[512];
	for (char *line = text, *next; line && n < 8 && !refused; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		int gen = line[0] == '+';
		const char *t = line + gen;
		why[0] = '\0';
		if (sw_key_parse(t, gen, &keys[n], why, sizeof why)) {
			if (!why[0] || strchr(why, '\n'))
				abort(); /* every refusal says why, on one line */
			sw_key_free(&keys[n]);
			refused = 1;
			break;
		}
		struct sw_key *k = &keys[n++];
		/* the key and its values give the text back */
		char back[8200];
		int w = snprintf(back, sizeof back, "%s", k->key + (gen ? 4 : 0));
		if (gen && strncmp(k->key, "gen.", 4))
			abort();
		for (int v = 0; v < k->nvals; v++) {
			if (!k->vals[v][0] || strchr(k->vals[v], ','))
				abort();
			w += snprintf(back + w, sizeof back - (size_t)w, "%c%s", v ? ',' : '=', k->vals[v]);
		}
		if (k->nvals < 1 || k->nvals > SW_MAX_VALS || strcmp(back, t))
			abort();
	}
	long points = refused ? 0 : sw_grid_points(keys, n);
	if (points > SW_MAX_POINTS)
		abort();
	/* every point decodes to value indices in range, and they encode back to the point */
	for (long i = 0; points > 0 && i < points && i < 4096; i += 1 + i / 7) {
		long back = 0;
		for (int k = 0; k < n; k++) {
			int v = sw_grid_value(keys, n, i, k);
			if (v < 0 || v >= keys[k].nvals)
				abort();
			back = back * keys[k].nvals + v;
		}
		if (back != i)
			abort();
	}
	for (int k = 0; k < n; k++)
		sw_key_free(&keys[k]);
	free(text);
	return 0;
}
