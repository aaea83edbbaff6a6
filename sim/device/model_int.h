/*
 * model_int.h -- private to the device model (sim/device/model*.c): the helpers the
 * kernel families share and each family's entry point. sim/device/model.h is the
 * public API.
 *
 * Files, in three layers; a file calls only into the layers below it (and the
 * kernel families' files only downwards among themselves: attention's naive
 * kernels are GEMMs and elementwise ops), so the call graph between files has
 * no cycle (tests/run_layering.sh checks it on the objects):
 *
 *   model.c         dispatch: an op to its kernel family; dm_iteration; the memo (struct dm)
 *   model_attn.c    attention: the kernels by impl= name; decode and paged, naive, FlashAttention-1
 *   model_flash.c   FlashAttention-2/-3 and cuDNN's fused attention, FlashAttention-2's decode
 *   model_gemm.c    GEMM and conv: the kernel search, traffic, power limit
 *   model_stream.c  memory-bound kernels: elementwise, row ops, embedding, copies
 *   common.c        dtype sizes, the unit that runs a dtype, bound names, xp()
 *   memsys.c        struct memsys: the chip's memory (and chiplets) as kernels see it
 *   waves.c         CTAs dispatched in waves; the bound of a kernel; split counts by wave fill
 */
#ifndef SIM_MODEL_INT_H
#define SIM_MODEL_INT_H

#include "model.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>

/* A time, a byte count, a rate the model computes: finite and >= 0 (for assert()). */
static inline int dm_ok(double x)
{
	return isfinite(x) && x >= 0;
}
/* a <= b but for the rounding of a sum taken in another order (for assert()) */
static inline int dm_le(double a, double b)
{
	return a <= b * (1 + 1e-12) + 1e-300;
}

void xp(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline double dmax(double a, double b)
{
	return a > b ? a : b;
}
static inline double dmin(double a, double b)
{
	return a < b ? a : b;
}
static inline long long cdiv(long long a, long long b)
{
	return (a + b - 1) / b;
}

/* Memory of the chip, as the kernels see it. */
struct memsys {
	double dram_bw;  /* reachable device-memory bandwidth, B/s */
	double l2_bw;    /* reachable L2 bandwidth, B/s (0 = unknown: not a limit) */
	double lat_dram; /* loaded latency of a miss, s */
	double lat_l2;   /* loaded latency of an L2 hit, s */
	double cache;    /* bytes of on-chip cache a GEMM's panels can live in */
	/* chiplets (docs/architecture.md, "Chiplets"); dies = 1: all zero and nothing below applies */
	int dies;        /* compute dies a kernel's CTAs are spread over, round-robin */
	double l2_die;   /* L2 bytes of one die: it caches what that die's CTAs reuse */
	int dedup;       /* a die's miss on a line another die fetched is served on chip (coherent L2s, or a
	                    memory-side cache shared by all dies such as MI300X's Infinity Cache), not by memory */
	double remote;   /* share of device-memory bytes homed on another die: (n-1)/n, 0 if memory is local */
	double d2d_bw;   /* throughput of the die-to-die network under uniform traffic, B/s (0 = none) */
	double d2d_hops; /* average die boundaries a remote access crosses */
	double lat_d2d;  /* latency a remote access adds under load, averaged over all accesses, s */
};
void memsys_of(const struct arch_chip *c, struct memsys *m);
/* The memory of the same chip built as one die (the chiplet terms left out). */
void memsys_of_one(const struct arch_chip *c, struct memsys *m);

/* The unit group and pipe that run dtype dt (the best matrix unit, else the
   best vector unit); -1 if none. need_unit also writes the reason to why. */
int pick_unit(const struct arch_chip *c, int dt, int *matrix, double *macs_per_clk, double *clock);
int need_unit(const struct arch_chip *c, int dt, int *matrix, double *macs_per_clk, double *clock, char *why,
              size_t wl);
int pick_vector_unit(const struct arch_chip *c);
/* the share of the matrix rate mma.sync sustains in a kernel (common.c) */
double sync_rate_frac(const struct arch_chip *c, const struct arch_unit *u);
double unit_threads(const struct arch_unit *u);
/* integer lanes per clock of a unit: its int32 pipe (vector.int32), else its fp32 lanes */
double int_lanes(const struct arch_unit *u);

/* waves: CTAs of equal work dispatched onto units x occupancy slots */
struct wave_cost {
	double mma_s;   /* one CTA's pipe time when it has a unit to itself */
	double l2_B;    /* bytes one CTA loads through L2 */
	double dram_B;  /* device-memory bytes per CTA (average) */
	double fly_B;   /* bytes one CTA keeps in flight */
	double lat;     /* latency those bytes see */
	double fixed_s; /* prologue + epilogue of one CTA */
	double d2d_B;   /* bytes one CTA moves across dies (average; 0 on one die) */
};
double waves_time(long long ctas, long units, int occ, const struct wave_cost *k, const struct memsys *m, double *t,
                  enum dm_bound pipe);
/* the fewest splits s in 1..most (at most 128) of blocks whose waves of blocks x s CTAs on `slots` come within
   `within` of the best count's wave fill (strictly above it when strict); with n_blocks > 0, a count that leaves
   each split as many of the n_blocks as one split fewer is skipped (FlashAttention's num_splits heuristics) */
long long waves_split_count(long long blocks, long long slots, long long most, double within, int strict,
                            long long n_blocks);
enum dm_bound bound_of(const double *t, double launch, double total);

struct gemm_in {
	long long m, n, k, batch;
	int dt, acc;
	double a_bytes;     /* compulsory bytes of A (0 = m*k*elem); conv reads its input instead */
	double b_bytes;     /* compulsory bytes of B (0 = k*n*elem); conv's wgrad reads its input instead */
	int warm;           /* inputs already in L2 if they fit */
	int epi;            /* enum op_epilogue: the pointwise work on C before it is stored */
	long long ld[3];    /* leading dimensions of A, B and C in elements (0: aligned, as conv's implicit GEMM is) */
	long long units;    /* the kernel runs on this many units, chosen for them (0: all; op.h units=) */
	long long margin;   /* ... on all units but this many, chosen for them (op.h margin=) */
	long long busy;     /* this many units held by another kernel: the kernel chosen for all runs on the rest */
	int tile_m, tile_n; /* the kernel's tile of C (op.h tile=); 0: the search over every tile */
	long long promote;  /* K elements between promotions of fp8 partial sums on the vector lanes (op.h); 0: none */
	int grouped;        /* a pointer-array grouped GEMM: its setup kernel first (op.h grouped=) */
};
int gemm_time(const struct arch_chip *c, const struct gemm_in *g, struct dm_result *r, FILE *ex, char *why, size_t wl);
/* The same, and the main-loop iteration of the kernel it picks (it may be NULL). */
int gemm_time_it(const struct arch_chip *c, const struct gemm_in *g, struct dm_result *r, FILE *ex, char *why,
                 size_t wl, struct dm_iter *it);

struct stream_in {
	double rd, wr;   /* bytes read and written in device memory */
	double l2_extra; /* further bytes re-read through L2 (hits) */
	double vec_ops;  /* fp32 lane operations */
	double int_ops;  /* 32-bit integer operations (index arithmetic), on the int32 pipe where the unit has one */
	double sfu_ops;  /* special-function operations */
	double threads;  /* threads the kernel has (its parallelism) */
	double fly_per_thread;
	int warm; /* input is L2-resident if it fits */
};
void stream_time(const struct arch_chip *c, const struct stream_in *s, struct dm_result *r, FILE *ex);
void elem_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex);
/* elem_time, and the iteration of one 256-thread CTA (each thread one vector load per input stream) */
void elem_time_it(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, struct dm_iter *it);

/* attention: the kernel named by op->impl (model_attn.c's table) */
int attn_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl);
int attn_iteration(const struct arch_chip *c, const struct op *op, struct dm_iter *it, char *why, size_t wl);
int copy_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl);
void embed_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex);

#endif
