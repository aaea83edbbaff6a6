/*
 * op_predict.c -- how long the device model takes per prediction: a GEMM
 * with the full kernel search the first time its shape is seen (cold), and
 * again through the memo (memoized). Prints figures; never fails on time.
 * usage: op_predict CONFIG [SHAPES]
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: op_predict CONFIG [SHAPES]\n");
		return 2;
	}
	int shapes = argc > 2 ? atoi(argv[2]) : 2000;
	if (shapes < 1)
		shapes = 1;
	struct arch_error err;
	struct arch_chip *c = arch_load(argv[1], NULL, 0, &err);
	if (!c) {
		arch_error_print(&err, stderr);
		return 78;
	}
	struct op *ops = calloc((size_t)shapes, sizeof *ops);
	if (!ops)
		return 70;
	char line[160], why[256];
	for (int i = 0; i < shapes; i++) { /* distinct shapes: decode, skinny and square GEMMs */
		snprintf(line, sizeof line, "gemm m=%d n=%d k=%d dtype=bf16", 1 + (i * 37) % 16384,
		         128 + (i % 97) * 128, 256 + (i % 61) * 256);
		if (op_parse(line, NULL, &ops[i], why, sizeof why)) {
			fprintf(stderr, "%s\n", why);
			return 70;
		}
	}
	struct dm *memo = dm_new();
	if (!memo)
		return 70;
	struct dm_result r;
	double sink = 0, t0 = now();
	for (int i = 0; i < shapes; i++) {
		dm_predict_cached(memo, c, &ops[i], &r, why, sizeof why);
		sink += r.time_s;
	}
	double cold = (now() - t0) / shapes;
	int reps = 200;
	t0 = now();
	for (int k = 0; k < reps; k++)
		for (int i = 0; i < shapes; i++) {
			dm_predict_cached(memo, c, &ops[i], &r, why, sizeof why);
			sink += r.time_s;
		}
	double warm = (now() - t0) / ((double)reps * shapes);
	printf("%s: %d distinct GEMM shapes\n", c->name, shapes);
	printf("cold (kernel search): %.3f ms per prediction (target <= 5 ms)\n", cold * 1e3);
	printf("memoized:             %.3f us per prediction (target <= 1 us)\n", warm * 1e6);
	fprintf(stderr, "(checksum %.6g)\n", sink);
	dm_free(memo);
	free(ops);
	arch_free(c);
	return 0;
}
