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
 * Results can be memoized (struct dm) by (chip content, canonical op text).
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
	B_D2D,     /* die-to-die links of a chiplet design */
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
	double gap_s;     /* of time_s, the launch gaps before its kernels start (model.launch_gap; launch=graph: a
	                     graph_launch_gap): a profiler's kernel duration is time_s - gap_s */
	double flops;     /* useful work (op_flops) */
	double tflops;    /* flops / time / 1e12 */
	double peak_frac; /* achieved / the peak of the unit used */
	double peak_flops;
	enum dm_bound bound;
	/* bytes moved per level */
	double bytes_dram, bytes_l2, bytes_smem, bytes_link;
	double bytes_d2d; /* bytes that cross a die boundary (chiplets; 0 on one die) */
	/* time each resource alone would need (s), for the explanation */
	double t_res[B_COUNT];
	double clock_hz; /* clock the kernel runs at */
	int unit_group;  /* index into chip->units */
	int uses_matrix; /* 1: matrix units, 0: vector units */
	struct dm_kernel kern;
};

/*
 * Predicts the duration of op on chip c. explain, if not NULL, receives the
 * reasoning as text a student can follow. Returns 0, or -1 with a one-line
 * reason in why (e.g. "gemm: H100 has no matrix or vector unit for fp4").
 */
int dm_predict(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *explain, char *why,
               size_t whylen);

/*
 * A memo of predictions (the device model holds no state of its own: whoever
 * wants answers remembered owns one). Entries are keyed by the chip's content
 * (arch_chip_fingerprint) and the op's canonical text, so a chip may be freed,
 * reloaded or changed at any time.
 */
struct dm;
struct dm *dm_new(void); /* NULL if out of memory */
void dm_free(struct dm *m);
/* dm_predict through the memo m (NULL: not memoized); no explanation. */
int dm_predict_cached(struct dm *m, const struct arch_chip *c, const struct op *op, struct dm_result *r, char *why,
                      size_t whylen);
/* Lookups answered from the memo, and those that ran the model. */
void dm_stats(const struct dm *m, long *hits, long *misses);

/*
 * One main-loop iteration of the kernel the model picks for an op, on one
 * compute unit: what the warp-level stepper (sim/step/step.h) replays and is
 * checked against (tests/test_step.c). A CTA-iteration is one k-tile of a
 * GEMM CTA, one block of keys of a FlashAttention CTA, one vector load per
 * thread of an elementwise CTA. Cycles are the unit's (at clock_hz) per
 * CTA-iteration with ctas_per_unit CTAs resident: the unit finishes one
 * CTA-iteration every c_total cycles in steady state.
 */
struct dm_iter {
	enum op_kind kind;
	int unit_group;          /* index into chip->units */
	int matrix;              /* 1: matrix units, 0: vector lanes */
	int dtype;               /* of the operands */
	double clock_hz;         /* the clock the kernel runs at (power-limited for GEMMs) */
	double macs_clk;         /* MACs per clock of the pipe used, whole unit */
	int tile_m, tile_n;      /* GEMM: CTA tile; attention: query rows per CTA, keys per iteration */
	int tile_k;              /* GEMM: k per iteration; attention: head dimension */
	int stages;              /* pipeline stages of the loads */
	int warps;               /* warps of one CTA (as the model counts them) */
	int ctas_per_unit;       /* occupancy */
	long long ctas;          /* CTAs of the kernel */
	long long iters;         /* main-loop iterations of one CTA (GEMM, elem: every CTA; attention: the longest) */
	double bytes_it;         /* bytes one CTA loads per iteration (through L2) */
	double wbytes_it;        /* bytes one CTA stores per iteration (elem) */
	double hit;              /* share of the loaded bytes that hit in L2 */
	double lat_l2, lat_dram; /* loaded latencies, cycles */
	double l2_Bpc, dram_Bpc; /* the unit's share of reachable L2 and device-memory bandwidth, bytes/cycle */
	double write_cost;       /* device-memory bandwidth a written byte takes, in read bytes */
	double lane_item, sfu_item; /* attention: lane and SFU ops per score; elem: per element */
	double lane_row;            /* attention: lane ops per (query row x head dim) per iteration (rescale) */
	/* cycles per CTA-iteration of each resource alone, and the model's cost of the iteration */
	double c_matrix, c_smem, c_sfu, c_vector, c_l2, c_dram, c_latency, c_total;
};

/*
 * Fills *it for op on chip c: gemm, conv (its implicit GEMM), attn with
 * impl=flash2|flash3, elem. Returns 0, or -1 with a one-line reason in why
 * (another op kind, or the op's own error as dm_predict gives it).
 */
int dm_iteration(const struct arch_chip *c, const struct op *op, struct dm_iter *it, char *why, size_t whylen);

/* Bytes of one element of dtype dt (enum arch_dtype; 4 for an unknown one). */
double dt_bytes(int dt);
/* the energy of a MAC of dtype dt relative to a 16-bit one (common.c: Horowitz's table) */
double mac_energy_scale(int dt);

#endif
