/*
 * model.h -- the device model: the duration of one op on one chip, and why.
 *
 * Levels (docs/architecture.md, "The device model"):
 *  - kernel selection: candidate kernels (CTA tile, pipeline stages, split-K)
 *    are each timed and the fastest wins, as cuBLAS's heuristics do;
 *  - CTA level: occupancy from shared memory, registers and warps; CTAs are
 *    dispatched to free slots on the compute units (waves and tails); each
 *    running CTA progresses at the rate its compute pipes and its share of
 *    L2 and device-memory bandwidth allow, with latency hidden only as far
 *    as the bytes in flight allow (Little's law);
 *  - fixed costs: launch, prologue, epilogue.
 * Results are memoized by (chip, canonical op text).
 */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include "arch.h"
#include "op.h"

#include <stdio.h>

enum dm_bound {
	B_MATRIX,  /* tensor / matrix units */
	B_VECTOR,  /* vector (CUDA core) lanes */
	B_SFU,     /* special-function units (exp, rsqrt) */
	B_DRAM,    /* device memory bandwidth */
	B_L2,      /* L2 bandwidth */
	B_LATENCY, /* too few bytes in flight to cover the memory latency */
	B_LAUNCH,  /* launch and fixed per-kernel costs */
	B_LINK,    /* host link (PCIe) */
	B_COUNT
};
const char *dm_bound_name(enum dm_bound b);

struct dm_kernel {
	char name[64]; /* "gemm_128x256x64_s4_k1" */
	int tile_m, tile_n, tile_k;
	int stages;
	int splitk;
	long long ctas;
	int ctas_per_unit; /* occupancy */
	double waves;      /* ctas / (units x occupancy), fractional */
	int kernels;       /* kernels launched for this op */
};

struct dm_result {
	double time_s;
	double flops;     /* useful work (op_flops) */
	double tflops;    /* flops / time / 1e12 */
	double peak_frac; /* achieved / the peak of the unit used */
	double peak_flops;
	enum dm_bound bound;
	/* bytes moved per level */
	double bytes_dram, bytes_l2, bytes_smem, bytes_link;
	/* time each resource alone would need (s), for the explanation */
	double t_res[B_COUNT];
	double clock_hz;  /* clock the kernel runs at */
	int unit_group;   /* index into chip->units */
	int uses_matrix;  /* 1: matrix units, 0: vector units */
	struct dm_kernel kern;
};

/*
 * Predicts the duration of op on chip c. explain, if not NULL, receives the
 * reasoning as text a student can follow. Returns 0, or -1 with a one-line
 * reason in why (e.g. "gemm: H100 has no matrix or vector unit for fp4").
 */
int dm_predict(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *explain, char *why,
               size_t whylen);

/* The same, memoized by (c, canonical op text); no explanation. */
int dm_predict_cached(const struct arch_chip *c, const struct op *op, struct dm_result *r, char *why,
                      size_t whylen);
/* Drops all memoized results (e.g. before freeing a chip). */
void dm_cache_clear(void);

#endif
