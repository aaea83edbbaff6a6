/*
 * model.c -- the device model: kernel timing from the microarchitecture.
 *
 * Every op is lowered to one or more kernels. A kernel is a grid of CTAs;
 * the model picks its shape (for GEMMs: the fastest of many candidates, as
 * cuBLAS's heuristics do), computes the occupancy (CTAs per compute unit
 * from shared memory, registers and warps), dispatches the CTAs in waves
 * onto the units and times each wave by the slowest of its resources:
 *
 *   matrix / vector / special-function pipes of the units that are busy,
 *   L2 and device-memory bandwidth shared by the CTAs running in that wave,
 *   Little's law: a unit cannot stream faster than bytes-in-flight / latency,
 *   and on a chip of several dies the die-to-die links the wave's remote
 *   bytes cross (memsys.c; docs/architecture.md, "Chiplets").
 *
 * plus the fixed costs of a kernel (launch gap, pipeline prologue, epilogue).
 * Nothing here is specific to a chip: everything comes from struct
 * arch_chip, including the fitted constants of its `model` section.
 *
 * This file is the dispatch (an op to its kernel family), dm_iteration and
 * the memo (struct dm); model_int.h has the map of the other files.
 *
 * Invariants (asserted in Debug builds):
 *  1. every prediction's time is finite and > 0; its resource times, bytes
 *     and rates are finite and >= 0; it launches at least one kernel
 *     (check_result);
 *  2. its time is at least each resource's time alone (but FlashAttention on
 *     vector lanes: see check_result);
 *  3. the memo is at most half full, and an entry holds what dm_predict
 *     returned for its (chip fingerprint, canonical op text).
 */
#include "model_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */

/* The GEMM a gemm op is, or one pass of a conv as the implicit GEMM cuDNN runs (input read once, not an im2col
   copy; p x q the output image; tensors NHWC and filters KRSC, so a pixel's channels are contiguous and a
   channel count of a multiple of 8 16-bit elements is what lets the kernels load 16-byte vectors: the leading
   dimensions are the channel counts):
     fwd   Y = X * W:    M = n p q, N = k, K = c r s, A the input X (n c h w elements);
     dgrad dX = dY * W': M = n h w, N = c, K = k r s / stride^2 (the filter taps that reach an input pixel), A
                         the output's gradient (n p q k), B the filter (k c r s);
     wgrad dW = dY' * X: M = k, N = c r s, K = n p q, A the output's gradient, B the input X (n c h w).
   dir=bwd is dgrad then wgrad (model.c's predict sums them). */
static struct gemm_in gemm_in_of(const struct op *op, enum op_dir pass)
{
	if (op->kind == OP_GEMM) {
		/* op.h: row-major, 'n' stored as written: A [m,k] or 't' [k,m], B [k,n] or 't' [n,k], C [m,n] */
		int ta = op->trans == TR_TN || op->trans == TR_TT, tb = op->trans == TR_NT || op->trans == TR_TT;
		struct gemm_in g = {.m = op->m,
		                    .n = op->n,
		                    .k = op->k,
		                    .batch = op->batch,
		                    .dt = op->dtype,
		                    .acc = op->acc_dtype,
		                    .warm = op->warm,
		                    .epi = op->epilogue,
		                    .ld = {ta ? op->m : op->k, tb ? op->k : op->n, op->n},
		                    .units = op->units,
		                    .margin = op->margin,
		                    .busy = op->busy,
		                    .tile_m = op->tile_m,
		                    .tile_n = op->tile_n,
		                    .promote = op->promote,
		                    .grouped = op->grouped};
		return g;
	}
	long long p = (op->ih + 2 * op->pad - op->r) / op->stride + 1;
	long long q = (op->iw + 2 * op->pad - op->s) / op->stride + 1;
	double e = dt_bytes(op->dtype);
	double x_B = (double)op->batch * op->cin * op->ih * op->iw * e, dy_B = (double)op->batch * p * q * op->cout * e;
	struct gemm_in g = {.m = op->batch * p * q,
	                    .n = op->cout,
	                    .k = op->cin * op->r * op->s,
	                    .batch = 1,
	                    .dt = op->dtype,
	                    .acc = op->acc_dtype,
	                    .a_bytes = x_B,
	                    .warm = op->warm,
	                    .epi = EPI_NONE,
	                    .ld = {op->cin, op->cin, op->cout},
	                    .units = op->units,
	                    .margin = op->margin,
	                    .busy = op->busy};
	if (pass == DIR_DGRAD) {
		g.m = op->batch * op->ih * op->iw, g.n = op->cin;
		g.k = cdiv(op->cout * op->r * op->s, op->stride * op->stride);
		g.a_bytes = dy_B, g.b_bytes = (double)op->cout * op->cin * op->r * op->s * e;
		g.ld[0] = op->cout, g.ld[2] = op->cin;
	} else if (pass == DIR_WGRAD) {
		g.m = op->cout, g.n = op->cin * op->r * op->s, g.k = op->batch * p * q;
		g.a_bytes = dy_B, g.b_bytes = x_B;
		g.ld[0] = op->cout;
	}
	return g;
}

/* A conv's backward, dgrad then wgrad: two kernels, their times, bytes and resources added (the bound is the
   larger pass's) */
static int conv_bwd_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                         size_t wl)
{
	struct dm_result d;
	memset(&d, 0, sizeof d);
	struct gemm_in gd = gemm_in_of(op, DIR_DGRAD), gw = gemm_in_of(op, DIR_WGRAD);
	xp(ex, "dgrad, implicit GEMM: M = n*h*w = %lld, N = c = %lld, K = k*r*s/stride^2 = %lld\n", gd.m, gd.n, gd.k);
	if (gemm_time(c, &gd, &d, ex, why, wl))
		return -1;
	xp(ex, "wgrad, implicit GEMM: M = k = %lld, N = c*r*s = %lld, K = n*p*q = %lld\n", gw.m, gw.n, gw.k);
	if (gemm_time(c, &gw, r, ex, why, wl))
		return -1;
	int bound = d.time_s > r->time_s ? d.bound : r->bound;
	r->time_s += d.time_s;
	for (int i = 0; i < B_COUNT; i++)
		r->t_res[i] += d.t_res[i];
	r->bytes_dram += d.bytes_dram, r->bytes_l2 += d.bytes_l2, r->bytes_smem += d.bytes_smem;
	r->bytes_d2d += d.bytes_d2d;
	r->clock_hz = dmin(r->clock_hz, d.clock_hz);
	r->kern.kernels += d.kern.kernels;
	r->bound = bound;
	return 0;
}

/* What every prediction satisfies: times, bytes and rates finite and >= 0; the kernel takes at least what each
   resource alone would need; at least one kernel.
   Not (yet) FlashAttention on vector lanes (a chip with no matrix unit for the dtype): its vector time adds the
   products, the softmax's lane ops and the dropout's integer ops, while the inner step overlaps them as if they
   were separate pipes, so the kernel can take less than its vector time alone (docs/validation.md has no such
   row; a known inconsistency of the model, left as it is: changing it changes predictions). */
static void check_result(const struct op *op, const struct dm_result *r)
{
	(void)op, (void)r; /* used by assert() only */
	assert(dm_ok(r->time_s) && r->time_s > 0);
	for (int i = 0; i < B_COUNT; i++)
		assert(dm_ok(r->t_res[i]) &&
		       (dm_le(r->t_res[i], r->time_s) || (op->kind == OP_ATTN && !r->uses_matrix && i == B_VECTOR)));
	assert(dm_ok(r->bytes_dram) && dm_ok(r->bytes_l2) && dm_ok(r->bytes_smem) && dm_ok(r->bytes_link) &&
	       dm_ok(r->bytes_d2d));
	assert(dm_ok(r->flops) && dm_ok(r->tflops) && dm_ok(r->peak_frac) && dm_ok(r->peak_flops));
	assert(r->kern.kernels >= 1 && r->bound < B_COUNT);
}

static int predict(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	memset(r, 0, sizeof *r);
	int rc = 0;
	switch (op->kind) {
	case OP_GEMM: {
		struct gemm_in g = gemm_in_of(op, DIR_FWD);
		rc = gemm_time(c, &g, r, ex, why, wl);
		break;
	}
	case OP_CONV: {
		if (op->dir == DIR_BWD) {
			rc = conv_bwd_time(c, op, r, ex, why, wl);
			break;
		}
		struct gemm_in g = gemm_in_of(op, op->dir);
		if (op->dir == DIR_FWD)
			xp(ex,
			   "implicit GEMM: M = n*p*q = %lld, N = k = %lld, K = c*r*s = %lld (input read once, not "
			   "im2col)\n",
			   g.m, g.n, g.k);
		else
			xp(ex, "%s, implicit GEMM: M = %lld, N = %lld, K = %lld (operands read once, not im2col)\n",
			   op->dir == DIR_DGRAD ? "dgrad" : "wgrad", g.m, g.n, g.k);
		rc = gemm_time(c, &g, r, ex, why, wl);
		break;
	}
	case OP_ATTN: rc = attn_time(c, op, r, ex, why, wl); break;
	case OP_ELEM: elem_time(c, op, r, ex); break;
	case OP_EMBED: embed_time(c, op, r, ex); break;
	case OP_COPY: rc = copy_time(c, op, r, ex, why, wl); break;
	case OP_KIND_COUNT: snprintf(why, wl, "unknown op kind"); return -1;
	}
	if (rc)
		return rc;
	/* Of each launch's model.launch_overhead, model.launch_gap is the idle gap a profiler shows before the kernel
	   (the rest, the ramp-up and drain, falls inside its span). A kernel launched from a CUDA graph waits
	   model.graph_launch_gap instead: the op is shorter by the difference. */
	double launches = c->model.launch_s > 0 ? r->t_res[B_LAUNCH] / c->model.launch_s : 0;
	double gap_s = dmin(c->model.launch_gap_s, c->model.launch_s);
	if (op->launch == LAUNCH_GRAPH && c->model.graph_gap_s < gap_s) {
		double cut_s = launches * (gap_s - c->model.graph_gap_s);
		r->time_s -= cut_s, r->t_res[B_LAUNCH] -= cut_s;
		gap_s = c->model.graph_gap_s;
	}
	r->gap_s = launches * gap_s;
	assert(r->gap_s >= 0 && r->gap_s <= r->time_s * (1 + 1e-12));
	r->flops = op_flops(op);
	r->tflops = r->time_s > 0 ? r->flops / r->time_s / 1e12 : 0;
	r->peak_frac = r->peak_flops > 0 && r->flops > 0 ? r->flops / r->time_s / r->peak_flops : 0;
	check_result(op, r);
	return 0;
}

int dm_predict(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *explain, char *why,
               size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	return predict(c, op, r, explain, why, whylen);
}

int dm_iteration(const struct arch_chip *c, const struct op *op, struct dm_iter *it, char *why, size_t whylen)
{
	struct dm_result r;
	memset(&r, 0, sizeof r);
	memset(it, 0, sizeof *it);
	if (why && whylen)
		why[0] = '\0';
	switch (op->kind) {
	case OP_GEMM:
	case OP_CONV: {
		/* a conv's backward: its dgrad pass (the first of its two kernels) */
		struct gemm_in g = gemm_in_of(op, op->kind == OP_CONV && op->dir == DIR_BWD ? DIR_DGRAD : op->dir);
		return gemm_time_it(c, &g, &r, NULL, why, whylen, it);
	}
	case OP_ATTN: return attn_iteration(c, op, it, why, whylen);
	case OP_ELEM: elem_time_it(c, op, &r, NULL, it); return 0;
	default:
		snprintf(why, whylen, "%s has no main loop to step (gemm, conv, attn and elem do)",
		         op_kind_name(op->kind));
		return -1;
	}
}

/* ------------------------------------------------------------------ */
/* memo: open addressing on (chip fingerprint, canonical op text)       */

/* A chip is known by its content (arch_chip_fingerprint), not its address: two loads of one file share
   entries, a chip changed by --set (or by the validation suite's fit) does not, and freeing a chip needs no
   call here. */
struct memo {
	uint64_t chip; /* arch_chip_fingerprint */
	uint64_t h;    /* of the op text, mixed with chip */
	char *key;     /* canonical op text (op_format); NULL: a free slot */
	struct dm_result r;
};

struct dm {
	struct memo *tab; /* cap slots, cap a power of two (or 0) */
	size_t cap, n;    /* n used: n * 2 <= cap */
	long hits, misses;
	/* the last chip fingerprinted, byte for byte, and its fingerprint: comparing the bytes costs less than
	   hashing the fields again, and equal bytes are equal content wherever the chip lives */
	int have_last;
	uint64_t last_fp;
	struct arch_chip last;
};

static uint64_t chip_fp(struct dm *m, const struct arch_chip *c)
{
	if (!m->have_last || memcmp(&m->last, c, sizeof *c)) {
		memcpy(&m->last, c, sizeof *c);
		m->last_fp = arch_chip_fingerprint(c);
		m->have_last = 1;
	}
	return m->last_fp;
}

struct dm *dm_new(void)
{
	return calloc(1, sizeof(struct dm));
}

void dm_free(struct dm *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->tab[i].key);
	free(m->tab);
	free(m);
}

void dm_stats(const struct dm *m, long *hits, long *misses)
{
	*hits = m ? m->hits : 0;
	*misses = m ? m->misses : 0;
}

static uint64_t fnv(const char *s, uint64_t chip)
{
	uint64_t h = 1469598103934665603ull ^ chip;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int memo_grow(struct dm *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	struct memo *t = calloc(cap, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->tab[i].key) {
			size_t j = m->tab[i].h & (cap - 1);
			while (t[j].key)
				j = (j + 1) & (cap - 1);
			t[j] = m->tab[i];
		}
	free(m->tab);
	m->tab = t, m->cap = cap;
	return 0;
}

int dm_predict_cached(struct dm *m, const struct arch_chip *c, const struct op *op, struct dm_result *r, char *why,
                      size_t whylen)
{
	if (!m)
		return dm_predict(c, op, r, NULL, why, whylen);
	char key[512];
	op_format(op, key, sizeof key);
	uint64_t chip = chip_fp(m, c);
	uint64_t h = fnv(key, chip);
	if (m->cap) {
		for (size_t j = h & (m->cap - 1); m->tab[j].key; j = (j + 1) & (m->cap - 1))
			if (m->tab[j].h == h && m->tab[j].chip == chip && !strcmp(m->tab[j].key, key)) {
				*r = m->tab[j].r;
				m->hits++;
				return 0;
			}
	}
	m->misses++;
	if (dm_predict(c, op, r, NULL, why, whylen))
		return -1;
	if ((m->n + 1) * 2 > m->cap && memo_grow(m))
		return 0; /* no room to remember: still a valid answer */
	assert((m->n + 1) * 2 <= m->cap);
	size_t j = h & (m->cap - 1);
	while (m->tab[j].key)
		j = (j + 1) & (m->cap - 1);
	m->tab[j].key = strdup(key);
	if (!m->tab[j].key)
		return 0;
	m->tab[j].chip = chip, m->tab[j].h = h, m->tab[j].r = *r;
	m->n++;
	return 0;
}
