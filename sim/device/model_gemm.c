/*
 * model_gemm.c -- GEMM (and conv lowered to it): the kernel search over tiles,
 * stages and split-K, occupancy, traffic per level, waves, and the power limit
 * on the clock. model_int.h has the map of the device model.
 *
 * Invariants (asserted in Debug builds):
 *  1. a candidate that fits has at least one CTA per unit and one warp;
 *  2. device memory delivers at most the bytes the CTAs load through L2
 *     (A and B; C is stored, not loaded): 0 <= hit <= 1;
 *  3. the matrix units' duty cycle is <= 1, so the power-limited clock is at
 *     most the boost clock;
 *  4. waves x slots >= CTAs, and a candidate's time is at least each
 *     resource's time alone (waves.c).
 */
#include "model_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* GEMM                                                                 */

struct gemm_cand {
	int bm, bn, bk, stages, split, occ, warps;
	double time, t[B_COUNT];
	double l2_B, dram_B, smem_B;
	double d2d_B;    /* bytes across dies (chiplets) */
	double work;     /* MACs including padding */
	double narrow_B; /* bytes a thread loads in the fallback kernel (gemm_narrow_B); 0: 16-byte vectors */
	long long ctas;
	/* one CTA's main loop, for dm_iteration: iterations, pipe and shared-memory seconds of the whole
	   loop, bytes per CTA through L2 and from device memory, the latency its loads see, L2 hit share */
	long long kit;
	double mma_s, smem_s, l2_cta, dram_cta, lat, hit;
};

static const int tiles_mn[][2] = {{256, 128}, {128, 256}, {128, 128}, {256, 64}, {64, 256}, {128, 64},
                                  {64, 128},  {64, 64},   {128, 32},  {32, 128}, {64, 32},  {32, 64},
                                  {16, 128},  {16, 256},  {16, 64},   {32, 256}, {32, 32},  {16, 32}};
/* the further tiles of the kernels for asynchronous matrix units (wgmma's M of 64 a warpgroup, N in steps of 8 up
   to 256): the large ones cuBLAS's sm90 kernels ran in this project's measurements (tests/validation/kernels.c:
   320x128, 192x192, 160x256, 128x192), either way round. Its narrower ones (96 wide) are left out: with them the
   search streams skinny GEMMs at the full HBM rate that cuBLAS's kernels do not reach on an H200 (the ratio
   G047/G042 of docs/validation.md goes from +13% to +26%) */
static const int tiles_async_mn[][2] = {{320, 128}, {128, 320}, {192, 192}, {256, 160},
                                        {160, 256}, {192, 128}, {128, 192}};
static const int splits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};

static double out_bytes(int dt, int acc)
{
	if (dt == DT_INT8 || dt == DT_INT4)
		return 4;
	if (acc == DT_FP16 || acc == DT_BF16)
		return 2;
	return dmax(dt_bytes(dt), 2); /* fp8/fp4 GEMMs write bf16; fp32/tf32 write fp32 */
}

/* The epilogue's pointwise work on each element of C, in fp32 lane ops and special-function ops: a bias
   add or a ReLU is one op; GELU as cuBLASLt's epilogue computes it, the tanh form (PyTorch hands only
   approximate='tanh' to it), 0.5 x (1 + tanh(0.7979 (x + 0.044715 x^3))): 7 lane ops and a tanh. */
static void epi_ops(int epi, double *lane, double *sfu)
{
	*lane = 0, *sfu = 0;
	switch (epi) {
	case EPI_BIAS:
	case EPI_RELU: *lane = 1; break;
	case EPI_BIAS_RELU: *lane = 2; break;
	case EPI_GELU: *lane = 7, *sfu = 1; break;
	case EPI_BIAS_GELU: *lane = 8, *sfu = 1; break;
	default: break;
	}
}

/*
 * Chiplets: the bytes the dies' L2s fetch for a GEMM; each die's L2 holds what
 * its own CTAs reuse, so a panel two dies need is fetched twice. The hardware
 * dispatches CTAs to the dies round-robin ("WG0->XCD0, WG1->XCD1, ..., WG8->
 * XCD0" on MI300X, whose 8 XCDs each have their own L2); kernels tuned for
 * chiplets remap tile ids so that each die gets a contiguous chunk (Modular's
 * MAX kernels, chiplet_transform_chunked; hipBLASLt and Triton do the same).
 * Both are timed and the cheaper taken, as a library would.
 *
 * Round-robin over tiles launched row by row over `cols` tile columns (the
 * grid, or the square block a wave covers): die d gets tile indices = d mod
 * D, so with g = gcd(cols, D) it touches 1/g of the B panels and
 * min(1, cols/D) of the A panels. Chunked: each die gets a square block of
 * its wave share, or a p x q split of the whole grid (p q = D).
 */
static void die_share(long long cols, int D, double *a_frac, double *b_frac)
{
	long long a = cols, b = D;
	while (b) {
		long long t = a % b;
		a = b, b = t;
	}
	*b_frac = 1.0 / (double)a;
	*a_frac = dmin(1, (double)cols / D);
}

/* Bytes a wave pattern fetches: blocks of wr x wc tiles, each die fetching af of the block's A panels and bf
   of its B panels. */
static double wave_fill(const struct gemm_in *g, const struct gemm_cand *x, long long tm, long long tn, double wr,
                        double wc, double dies_af, double dies_bf, double a_share)
{
	double ea = dt_bytes(g->dt);
	double blocks = (double)tm * tn * g->batch / (wr * wc);
	return blocks * (dies_af * wr * x->bm * ea * a_share + dies_bf * wc * x->bn * ea) * (double)g->k;
}

static double gemm_die_fill(const struct gemm_in *g, const struct gemm_cand *x, const struct memsys *ms,
                            long long slots, long long tm, long long tn, double a_all, double b_all, double dram_in,
                            double l2_cta)
{
	/* round-robin puts the grid's CTAs on min(dies, CTAs) dies: a grid of fewer CTAs than dies (a tiny GEMM)
	   is fetched by as many dies as it has CTAs */
	int D = x->ctas < ms->dies ? (int)x->ctas : ms->dies;
	double af, bf;
	die_share(tn, D, &af, &bf);
	double rr = D * (af * a_all + bf * b_all), ch = INFINITY; /* whole grid, per batch */
	for (int p = 1; p <= D; p++)
		if (D % p == 0 && p <= tm && D / p <= tn)
			ch = dmin(ch, (double)(D / p) * a_all + p * b_all);
	double whole = dmin(rr, ch);
	/* never more than the CTAs load through L2: split-K's CTAs on different dies read disjoint slices of K */
	if (whole / D <= 0.5 * ms->l2_die || x->ctas <= slots)
		return dmax(dram_in, dmin(whole * (double)g->batch, (double)x->ctas * l2_cta));
	double ea = dt_bytes(g->dt), a_share = a_all / ((double)g->m * g->k * ea);
	long long wv = slots / x->split;
	double wc = dmin((double)tn, ceil(sqrt((double)wv))), wr = dmin((double)tm, ceil(wv / wc));
	die_share((long long)wc, D, &af, &bf);
	double f = wave_fill(g, x, tm, tn, wr, wc, D * af, D * bf, a_share);
	double wd = dmax(1, floor((double)wv / D)); /* chunked: a square block per die */
	double wcd = dmin((double)tn, ceil(sqrt(wd))), wrd = dmin((double)tm, ceil(wd / wcd));
	f = dmin(f, wave_fill(g, x, tm, tn, wrd, wcd, 1, 1, a_share));
	return dmax(dram_in, dmin(f, (double)x->ctas * l2_cta));
}

/*
 * One candidate's cost, in stages (gemm_cand_fit first, then gemm_cand_time puts the rest together; the search
 * computes gemm_cand_fit's parts once per tile, stage count and split):
 *   gemm_cand_fit       a CTA's shared memory, registers and warps: occupancy, CTAs, k-iterations;
 *   gemm_main_loop      one CTA's pipe and shared-memory time, its bytes through L2;
 *   gemm_dram_in        the bytes of A and B device memory delivers (once, or once per wave that needs a panel);
 *   gemm_load_latency   the latency a stage of loads sees (hits, misses, crossings, its own transfer);
 *   gemm_fixed_s        prologue and epilogue of one CTA;
 *   then the waves (waves.c) and, with split-K, the reduction pass.
 */

/* A CTA's warps and the CTAs of its tile and stage count a unit holds (shared memory, registers, warps);
   0 if none fits. */
static int gemm_occ(const struct arch_unit *u, const struct gemm_in *g, int bm, int bn, int bk, int S, int *warps)
{
	double ea = dt_bytes(g->dt);
	*warps = (int)dmin((double)u->max_warps, dmax(2, dmin(8, bm * bn / 4096.0)));
	double smem_B = (double)S * (bm + bn) * bk * ea; /* S stages of an A and a B tile */
	/* fp32 accumulators (twice with promote=: the MMAs' partial sums and the promoted ones) + 64 regs/thread */
	double regs_B = (double)bm * bn * 4 * (g->promote > 0 ? 2 : 1) + *warps * 32.0 * 64 * 4;
	double occ = (double)u->max_ctas;
	if (u->smem_bytes > 0)
		occ = dmin(occ, floor(u->smem_bytes / smem_B));
	if (u->regfile_bytes > 0)
		occ = dmin(occ, floor(u->regfile_bytes / regs_B));
	occ = dmin(occ, floor((double)u->max_warps / *warps));
	return occ < 1 ? 0 : (int)occ;
}

/* The k-iterations of a CTA of split-K sp; 0 if a split would hold fewer than two of them. */
static long long gemm_kit(const struct gemm_in *g, int bk, int sp)
{
	long long k_split = cdiv(g->k, sp); /* k of one split */
	if (sp > 1 && k_split < 2LL * bk)
		return 0;
	return cdiv(k_split, bk);
}

/* Resources of one CTA: occupancy, CTAs, k-iterations. Returns 0 if the candidate does not fit the unit. */
static int gemm_cand_fit(const struct arch_unit *u, const struct gemm_in *g, struct gemm_cand *x)
{
	x->occ = gemm_occ(u, g, x->bm, x->bn, x->bk, x->stages, &x->warps);
	x->kit = gemm_kit(g, x->bk, x->split);
	if (!x->occ || !x->kit)
		return 0;
	assert(x->occ >= 1 && x->warps >= 1);
	x->ctas = cdiv(g->m, x->bm) * cdiv(g->n, x->bn) * g->batch * x->split; /* tiles of C, each split */
	return 1;
}

/* The largest power of two, at most 16, that divides ld elements of e bytes (ld 0: 16). */
static int align_of(long long ld, double e)
{
	long long b = (long long)((double)ld * e);
	int a = 16;
	while (a > 1 && b % a)
		a /= 2;
	return a;
}

/* Bytes each thread loads per global load in the kernel the library runs on the matrix units: 0 for 16-byte vectors
   (every leading dimension of A, B and C a multiple of 16 bytes, or no fallback modelled:
   matrix.fallback_load_cycles 0; a GEMM on the vector lanes is not concerned); else
   cuBLAS's fallback, CUTLASS align1 (2-byte loads of 16-bit operands) or align2 (4-byte loads, which it also runs
   for 8-byte alignment: rows LX023 and LX024 of docs/validation.md). */
static double gemm_narrow_B(const struct arch_unit *u, const struct gemm_in *g, int matrix)
{
	if (!matrix || u->mat_narrow_clk <= 0)
		return 0;
	/* a matrix-vector product (m or n of 1) runs cuBLAS's GEMV kernels whatever the alignment (gemvx,
	   gemvNSP, gemmk1_kernel in the 128-rank job's trace, tests/import/sampled_128rank_rank0.json.gz) */
	if (g->m == 1 || g->n == 1)
		return 0;
	double ea = dt_bytes(g->dt), ec = out_bytes(g->dt, g->acc);
	int a = align_of(g->ld[0], ea), b = align_of(g->ld[1], ea), cc = align_of(g->ld[2], ec);
	int al = a < b ? a : b;
	al = al < cc ? al : cc;
	if (al >= 16)
		return 0;
	return al >= 4 ? 4 : al;
}

/* The promotions of one CTA's K of k_elems (promote=): each adds the tile's bm x bn partial sums on the unit's
   fp32 lanes (s). */
static double gemm_promote_s(const struct arch_unit *u, const struct gemm_in *g, int bm, int bn, double k_elems,
                             double clock)
{
	assert(g->promote > 0 && u->vec[DT_FP32] > 0);
	return ceil(k_elems / (double)g->promote) * (double)bm * bn / (u->vec[DT_FP32] * clock);
}

/* One CTA's main loop: its pipe time w->mma_s (or its shared-memory time, if longer on a unit whose matrix
   ops read registers), its bytes through L2 w->l2_B. Sets x->work, mma_s, smem_s; returns the bytes the
   warps read from shared memory. */
static double gemm_main_loop(const struct arch_chip *c, const struct arch_unit *u, const struct gemm_in *g,
                             double macs_clk, double clock, struct gemm_cand *x, struct wave_cost *w)
{
	double ea = dt_bytes(g->dt);
	int bm = x->bm, bn = x->bn, bk = x->bk;
	/* work of one CTA: the padded tile */
	double macs = (double)bm * bn * (double)(x->kit * bk);
	x->work = macs * (double)x->ctas;
	w->mma_s = macs / (macs_clk * clock * c->model.mma_eff);
	/* promote=: after every promote of K the warps wait for their MMAs in flight and add the partial sums into
	   the fp32 accumulators on the unit's fp32 lanes, one add per element of the tile, while the matrix units
	   idle (CUTLASS's GmmaFP8Accumulation::promote_core: warpgroup_wait<0>, then the adds) */
	if (g->promote > 0 && u->vec[DT_FP32] > 0)
		w->mma_s += gemm_promote_s(u, g, bm, bn, (double)x->kit * bk, clock);
	double narrow_B = x->narrow_B;
	if (narrow_B > 0) {
		/* the fallback kernel: mma.sync, and warp-wide loads of narrow_B bytes a thread for its A and B tiles
		 */
		double full_s = w->mma_s, loads = (double)x->kit * bk * (bm + bn) * ea / (32 * narrow_B);
		/* and, where C is the misaligned one, its epilogue's warp-wide stores of its own alignment's bytes, on
		   the same load-store path (matrix.fallback_store_cycles); split-K's partials are aligned fp32 */
		double ec = out_bytes(g->dt, g->acc);
		int c_al = align_of(g->ld[2], ec);
		double stores = c_al < 16 && x->split == 1 ? dmin(bm, g->m) * dmin(bn, g->n) * ec / (32.0 * c_al) : 0;
		w->mma_s = dmax(full_s / sync_rate_frac(c, u),
		                (loads * u->mat_narrow_clk + stores * u->mat_narrow_st_clk) / clock);
	}
	/* shared memory: operands read by the warps (64x64 warp tiles re-read each) */
	double warp_m = dmin(bm, 64), warp_n = dmin(bn, 64);
	double smem_rd_B = macs * ea * (1.0 / warp_m + 1.0 / warp_n);
	double smem_s = smem_rd_B / (u->smem_Bpc * clock);
	x->mma_s = w->mma_s, x->smem_s = smem_s;
	if ((!u->mat_async || narrow_B > 0) && smem_s > w->mma_s) /* async MMA reads operands from shared memory */
		w->mma_s = smem_s;
	double rows = (double)dmin(bm, g->m), cols = (double)dmin(bn, g->n);
	w->l2_B = (double)x->kit * bk * (rows + cols) * ea;
	return smem_rd_B;
}

/* Inputs already in L2: a warm op whose A and B fit half the cache. */
static int gemm_warm(const struct gemm_in *g, double in_once_B, const struct memsys *ms)
{
	return g->warm && in_once_B <= 0.5 * ms->cache;
}

/* Bytes of A and B from device memory (one die's view): each operand panel once per wave that needs it, unless
   all fits the cache or one wave holds every CTA; never more than the L2 traffic. */
static double gemm_dram_in(const struct gemm_in *g, const struct gemm_cand *x, const struct memsys *ms, long long slots,
                           double a_all_B, double b_all_B, double l2_cta_B)
{
	double ea = dt_bytes(g->dt);
	double in_once_B = (a_all_B + b_all_B) * g->batch;
	if (gemm_warm(g, in_once_B, ms))
		return 0;
	if ((a_all_B + b_all_B) <= 0.5 * ms->cache || x->ctas <= slots)
		return in_once_B;
	/* a wave covers about a square block of tiles */
	long long tm = cdiv(g->m, x->bm), tn = cdiv(g->n, x->bn);
	long long wave_tiles = slots / x->split;
	double wc = dmin((double)tn, ceil(sqrt((double)wave_tiles))), wr = dmin((double)tm, ceil(wave_tiles / wc));
	double waves = (double)tm * tn * g->batch / (wr * wc);
	double a_share = a_all_B / ((double)g->m * g->k * ea); /* conv: the input, not its im2col */
	double b_share = b_all_B / ((double)g->k * g->n * ea); /* conv's wgrad: likewise for B */
	double dram_in =
	    dmax(in_once_B, waves * (wr * x->bm * ea * a_share + wc * x->bn * ea * b_share) * (double)g->k);
	/* never more than L2 traffic: the square-block estimate of a wave overcounts the panels of skinny grids, and
	   this clamp is active on shipped configs (a model choice, not an invariant; the invariant hit >= 0 that it
	   ensures is asserted in gemm_cand_time) */
	return dmin(dram_in, (double)x->ctas * l2_cta_B);
}

/* The latency one stage of loads sees (s): an L2 hit, a miss's share of the memory latency, a crossing's share
   of the die-to-die latency, plus its own transfer at the unit's share of bandwidth. */
static double gemm_load_latency(const struct arch_unit *u, const struct memsys *ms, double stage_B, double hit,
                                double cross, double fill_B, double l2_all_B)
{
	double lat = ms->lat_l2 + (1 - hit) * (ms->lat_dram - ms->lat_l2);
	/* chiplets: a fill served by another die's cache is an L2 hit that crossed */
	lat += cross * ms->lat_d2d;
	/* a stage is outstanding for the latency plus its own transfer at the unit's share of bandwidth:
	   with two stages a tile's transfer is not hidden behind the previous tile's MMAs (the warp-level
	   stepper shows it, tests/test_step.c; the CTAs of a unit are out of phase, so their stages do not
	   queue behind each other) */
	double units = (double)u->count;
	double xfer_s = ms->l2_bw > 0 ? stage_B / (ms->l2_bw / units) : 0;
	double xd2d_s =
	    ms->d2d_bw > 0 && l2_all_B > 0 ? stage_B * ms->remote * fill_B / l2_all_B / (ms->d2d_bw / units) : 0;
	lat += dmax(dmax(xfer_s, xd2d_s), stage_B * (1 - hit) / (ms->dram_bw / units));
	return lat;
}

/* The epilogue's pointwise work per element of C on one unit (s), on its lanes and special-function units. */
static double gemm_epi_s_per_elem(const struct arch_unit *u, const struct gemm_in *g, double clock)
{
	double el, es;
	epi_ops(g->epi, &el, &es);
	double lanes_per_s = u->vec[DT_FP32] * clock, sfu_per_s = u->sfu > 0 ? u->sfu * clock : lanes_per_s / 4;
	return lanes_per_s > 0 ? el / lanes_per_s + es / sfu_per_s : 0;
}

/* Prologue and epilogue of one CTA (s): the first stage arrives after a miss; the pointwise work on the tile
   (on the unit's lanes, after its main loop; with split-K in the reduction pass instead), then C written. */
static double gemm_fixed_s(const struct arch_chip *c, const struct arch_unit *u, const struct memsys *ms,
                           double c_tile_B, double c_elems, int split, double epi_s_per_elem)
{
	double fixed_s = ms->lat_dram + c_tile_B * c->model.write_cost / (ms->dram_bw / (double)u->count);
	if (split == 1)
		fixed_s += c_elems * epi_s_per_elem;
	return fixed_s;
}

/* Times one candidate gemm_cand_fit accepted (its occupancy, k-iterations and CTAs set). */
static void gemm_cand_time(const struct arch_chip *c, const struct arch_unit *u, const struct gemm_in *g,
                           double macs_clk, double clock, int matrix, const struct memsys *ms, struct gemm_cand *x)
{
	double ea = dt_bytes(g->dt), ec = out_bytes(g->dt, g->acc);
	int bm = x->bm, bn = x->bn, bk = x->bk, S = x->stages, sp = x->split;
	assert(x->occ >= 1 && x->kit >= 1 && x->ctas >= 1);
	struct wave_cost w;
	double smem_rd_B = gemm_main_loop(c, u, g, macs_clk, clock, x, &w);
	double rows = (double)dmin(bm, g->m), cols = (double)dmin(bn, g->n); /* of C one CTA owns */
	double c_tile_B = rows * cols * (sp > 1 ? 4 : ec);                   /* partials in fp32 when split */
	/* device memory: A (conv: its input) and B, C written (split: the fp32 partials written and read back) */
	double a_all_B = g->a_bytes > 0 ? g->a_bytes : (double)g->m * g->k * ea;
	double b_all_B = g->b_bytes > 0 ? g->b_bytes : (double)g->k * g->n * ea;
	double in_once_B = (a_all_B + b_all_B) * g->batch;
	long long slots = (long long)u->count * x->occ;
	double dram_in_B = gemm_dram_in(g, x, ms, slots, a_all_B, b_all_B, w.l2_B);
	double dram_out_B = (double)g->m * g->n * g->batch * ec;
	if (sp > 1)
		dram_out_B += (double)g->m * g->n * g->batch * 4 * 2 * sp; /* partials written and read back */
	/* chiplets: what the dies' own L2s fetch, and what of it crosses */
	double fill_B = dram_in_B;
	w.d2d_B = 0;
	if (ms->dies > 1) {
		long long tm = cdiv(g->m, bm), tn = cdiv(g->n, bn);
		if (!gemm_warm(g, in_once_B, ms))
			fill_B = gemm_die_fill(g, x, ms, slots, tm, tn, a_all_B, b_all_B, dram_in_B, w.l2_B);
		if (!ms->dedup)
			dram_in_B = fill_B; /* every die's fetch is a device-memory read */
		w.d2d_B = ms->remote * (fill_B + dram_out_B) / (double)x->ctas; /* interleaved: (n-1)/n is remote */
	}
	x->dram_B = dram_in_B + dram_out_B;
	/* a written byte takes more of the memory's bandwidth than a read one (model.dram_write_cost) */
	w.dram_B = (dram_in_B + dram_out_B * c->model.write_cost) / (double)x->ctas;
	w.fly_B = (double)(S - 1) * (rows + cols) * bk * ea;
	double l2_all_B = (double)x->ctas * w.l2_B;
	double hit = l2_all_B > 0 ? 1 - dram_in_B / l2_all_B : 1;
	double cross = l2_all_B > 0 ? (fill_B - dram_in_B) / l2_all_B : 0;
	/* device memory delivers at most what the CTAs load through L2: 0 <= hit <= 1 */
	assert(dm_ok(dram_in_B) && dm_le(dram_in_B, l2_all_B) && hit <= 1 && hit >= -1e-12);
	assert(cross >= -1e-12 && dm_ok(w.fly_B) && dm_ok(w.dram_B) && dm_ok(w.d2d_B));
	w.lat = gemm_load_latency(u, ms, (rows + cols) * bk * ea, hit, cross, fill_B, l2_all_B);
	x->l2_cta = w.l2_B, x->dram_cta = w.dram_B, x->lat = w.lat, x->hit = hit;
	double epi_s_per_elem = gemm_epi_s_per_elem(u, g, clock);
	w.fixed_s = gemm_fixed_s(c, u, ms, c_tile_B, rows * cols, sp, epi_s_per_elem);
	memset(x->t, 0, sizeof x->t);
	x->time = waves_time(x->ctas, u->count, x->occ, &w, ms, x->t, matrix ? B_MATRIX : B_VECTOR);
	if (sp > 1) /* reduction of the partials, and the epilogue: a memory-bound pass */
		x->time += (double)g->m * g->n * g->batch * (4.0 * sp + ec) / ms->dram_bw + ms->lat_dram +
		           (double)g->m * g->n * g->batch * epi_s_per_elem / (double)u->count;
	assert(dm_ok(x->time) && x->time > 0);
	x->l2_B = x->ctas * w.l2_B;
	x->d2d_B = x->ctas * w.d2d_B;
	x->smem_B = x->ctas * (w.l2_B + smem_rd_B);
}

/*
 * A floor under gemm_cand_time's time, so that the search skips what could not win: every wave takes at least
 * its busiest unit's pipe time (at the full matrix rate: the fallback kernel and shared memory only slow it) or
 * its device-memory time, whichever is longer, plus a CTA's prologue, a miss (waves.c, gemm_fixed_s); with
 * split-K the reduction pass as timed there. The busiest units of the full waves and the tail hold cdiv(CTAs,
 * units) CTAs in all. gemm_floor_grid is the part of a tile and split (all stage counts): the floor is it plus
 * the waves x the miss.
 */
/* The floor's bytes of A and B from device memory: for a GEMM whose inputs are its operands and not warm in L2,
   each once (gemm_dram_in); else none. */
static double gemm_floor_in_B(const struct gemm_in *g, const struct memsys *ms)
{
	double ea = dt_bytes(g->dt);
	double in_once_B = ((double)g->m * g->k * ea + (double)g->k * g->n * ea) * g->batch; /* as gemm_cand_time */
	return g->a_bytes <= 0 && g->b_bytes <= 0 && !gemm_warm(g, in_once_B, ms) ? in_once_B : 0;
}

static double gemm_floor_grid(const struct arch_chip *c, const struct arch_unit *u, const struct gemm_in *g,
                              double macs_clk, double clock, const struct memsys *ms, double in_B, int bm, int bn,
                              int bk, long long kit, int split, long long ctas)
{
	double macs = (double)bm * bn * (double)(kit * bk);
	double pipe_s = (double)cdiv(ctas, u->count) * (macs / (macs_clk * clock * c->model.mma_eff));
	/* device memory: A and B (gemm_floor_in_B), C (split: the partials too) */
	double ec = out_bytes(g->dt, g->acc), mn = (double)g->m * g->n * g->batch;
	double out_B = mn * ec + (split > 1 ? mn * 4 * 2 * split : 0);
	double floor_s = dmax(pipe_s, (in_B + out_B * c->model.write_cost) / ms->dram_bw);
	if (split > 1)
		floor_s += mn * (4.0 * split + ec) / ms->dram_bw;
	return floor_s;
}

/* The kernel search: every tile, stage count and split-K that fits; the fastest two. A candidate whose floor
   (gemm_floor_grid) is above both the second's time and the best's tie window could not change either: it is
   counted without being timed. */
static int gemm_search(const struct arch_chip *c, const struct arch_unit *u, const struct gemm_in *g, double macs_clk,
                       double clock, int matrix, const struct memsys *ms, int bk, struct gemm_cand *best,
                       struct gemm_cand *second)
{
	memset(best, 0, sizeof *best);
	memset(second, 0, sizeof *second);
	best->time = second->time = INFINITY;
	int ncand = 0;
	double narrow_B = gemm_narrow_B(u, g, matrix); /* the kernel family: one for the whole search */
	enum { NSPLITS = sizeof splits / sizeof splits[0] };
	long long kit[NSPLITS]; /* gemm_cand_fit's parts, each computed once */
	double grid_s[NSPLITS], in_B = gemm_floor_in_B(g, ms);
	for (int si = 0; si < NSPLITS; si++)
		kit[si] = gemm_kit(g, bk, splits[si]);
	/* the tiles searched: every one, or the one the op names (tile=) */
	const int(*tset)[2] = tiles_mn, given[1][2] = {{g->tile_m, g->tile_n}};
	size_t nbase = sizeof tiles_mn / sizeof tiles_mn[0], ntiles = nbase;
	if (u->mat_async && matrix && narrow_B <= 0)
		ntiles += sizeof tiles_async_mn / sizeof tiles_async_mn[0];
	if (g->tile_m > 0)
		tset = given, ntiles = nbase = 1;
	for (size_t ti = 0; ti < ntiles; ti++) {
		int bm = ti < nbase ? tset[ti][0] : tiles_async_mn[ti - nbase][0];
		int bn = ti < nbase ? tset[ti][1] : tiles_async_mn[ti - nbase][1];
		long long tiles = cdiv(g->m, bm) * cdiv(g->n, bn) * g->batch;
		for (int si = 0; si < NSPLITS; si++)
			grid_s[si] = kit[si] ? gemm_floor_grid(c, u, g, macs_clk, clock, ms, in_B, bm, bn, bk, kit[si],
			                                       splits[si], tiles * splits[si])
			                     : 0;
		for (int S = 2; S <= 8; S++) {
			int warps, occ = gemm_occ(u, g, bm, bn, bk, S, &warps);
			long long slots = (long long)u->count * occ;
			for (int si = 0; occ && si < NSPLITS; si++) {
				if (!kit[si])
					continue;
				ncand++;
				long long ctas = tiles * splits[si];
				long long waves = ctas / slots + (ctas % slots > 0);
				double floor_s = (grid_s[si] + (double)waves * ms->lat_dram) * (1 - 1e-9);
				if (floor_s > second->time && floor_s > best->time * (1 + 1e-3))
					continue;
				struct gemm_cand x = {0};
				x.bm = bm, x.bn = bn, x.bk = bk, x.stages = S;
				x.narrow_B = narrow_B;
				x.split = splits[si];
				x.occ = occ, x.warps = warps, x.kit = kit[si],
				x.ctas = ctas; /* as gemm_cand_fit sets them */
				gemm_cand_time(c, u, g, macs_clk, clock, matrix, ms, &x);
				assert(x.time >= floor_s);
				/* the fastest; within 0.1% the one with less padded work (as a library would) */
				int tie = fabs(x.time - best->time) < 1e-3 * best->time;
				if (tie ? x.work < best->work : x.time < best->time)
					*second = *best, *best = x;
				else if (x.time < second->time)
					*second = x;
			}
		}
	}
	return ncand;
}

/* The main-loop iteration of the candidate chosen, per CTA-iteration of the unit (see struct dm_iter). */
static void gemm_iter_of(const struct arch_chip *c, const struct arch_unit *u, const struct gemm_in *g,
                         const struct gemm_cand *b, const struct memsys *ms, double clock, double macs_clk, int matrix,
                         int gi, struct dm_iter *it)
{
	double kit = (double)b->kit, occ = b->occ, units = (double)u->count;
	memset(it, 0, sizeof *it);
	it->kind = OP_GEMM, it->unit_group = gi, it->matrix = matrix, it->dtype = g->dt;
	it->clock_hz = clock, it->macs_clk = macs_clk;
	it->tile_m = b->bm, it->tile_n = b->bn, it->tile_k = b->bk, it->stages = b->stages;
	it->warps = b->warps, it->ctas_per_unit = b->occ, it->ctas = b->ctas, it->iters = b->kit;
	it->bytes_it = b->l2_cta / kit;
	it->hit = b->hit;
	it->lat_l2 = ms->lat_l2 * clock, it->lat_dram = ms->lat_dram * clock;
	it->l2_Bpc = ms->l2_bw > 0 ? ms->l2_bw / units / clock : 0;
	it->dram_Bpc = ms->dram_bw / units / clock;
	it->write_cost = c->model.write_cost;
	/* waves_time on a full wave: occ CTAs per unit, each kit iterations */
	it->c_matrix = b->mma_s / kit * clock;
	it->c_smem = b->smem_s / kit * clock;
	it->c_l2 = it->l2_Bpc > 0 ? b->l2_cta / kit / it->l2_Bpc : 0;
	it->c_dram = b->dram_cta / kit / it->dram_Bpc;
	it->c_latency = b->stages > 1 ? b->lat * clock / ((b->stages - 1) * occ) : 0;
	double pipe = it->c_matrix;
	if ((!u->mat_async || b->narrow_B > 0) && it->c_smem > pipe)
		pipe = it->c_smem;
	it->c_total = dmax(dmax(pipe, it->c_l2), dmax(it->c_dram, it->c_latency));
}

int gemm_time(const struct arch_chip *c, const struct gemm_in *g, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	return gemm_time_it(c, g, r, ex, why, wl, NULL);
}

/* The kernel for the units it is chosen for (pick) timed on the units it runs on (run): the library's choice for
   all units when another kernel holds some of them (busy=), else pick == run. The fastest two, as gemm_search. */
static int gemm_pick(const struct arch_chip *c, const struct arch_unit *pick, const struct arch_unit *run,
                     const struct gemm_in *g, double macs_clk, double clock, int matrix, const struct memsys *ms,
                     int bk, struct gemm_cand *best, struct gemm_cand *second)
{
	int ncand = gemm_search(c, pick, g, macs_clk, clock, matrix, ms, bk, best, second);
	if (!ncand || pick == run)
		return ncand;
	struct gemm_cand *cand[2] = {best, second};
	for (int i = 0; i < 2 && isfinite(cand[i]->time); i++) {
		struct gemm_cand x = {0};
		x.bm = cand[i]->bm, x.bn = cand[i]->bn, x.bk = cand[i]->bk, x.stages = cand[i]->stages;
		x.split = cand[i]->split, x.narrow_B = cand[i]->narrow_B;
		if (!gemm_cand_fit(run, g, &x))
			return 0; /* cannot happen: run differs from pick in its count alone */
		gemm_cand_time(c, run, g, macs_clk, clock, matrix, ms, &x);
		*cand[i] = x;
	}
	return ncand;
}

int gemm_time_it(const struct arch_chip *c, const struct gemm_in *g, struct dm_result *r, FILE *ex, char *why,
                 size_t wl, struct dm_iter *it)
{
	int matrix;
	double macs_clk, clock;
	int gi = need_unit(c, g->dt, &matrix, &macs_clk, &clock, why, wl);
	if (gi < 0)
		return -1;
	const struct arch_unit *chip_u = &c->units[gi];
	/* the datasheet's peak is at the clock its figures use (compute.tensor_clock); the clock a kernel runs at is
	   the top of the DVFS range (compute.clock) less what the power limit takes (below) */
	double peak_hz = clock;
	if (matrix)
		clock = dmax(clock, chip_u->clock_hz);
	if (g->units > chip_u->count || g->margin >= chip_u->count || g->busy >= chip_u->count) {
		const char *key = g->units ? "units" : g->margin ? "margin" : "busy";
		snprintf(why, wl, "%s=%lld: %s has %ld units of %s (%s= takes 1 to %ld)", key,
		         g->units    ? g->units
		         : g->margin ? g->margin
		                     : g->busy,
		         c->name, chip_u->count, chip_u->name, key, g->units ? chip_u->count : chip_u->count - 1);
		return -1;
	}
	/* the units the kernel is chosen for and those it runs on (op.h units=, margin=, busy=) */
	struct arch_unit pick_u = *chip_u, run_u = *chip_u;
	if (g->units > 0)
		pick_u.count = run_u.count = g->units;
	pick_u.count -= g->margin;
	run_u.count -= g->margin + g->busy;
	const struct arch_unit *u = &run_u, *pick = g->busy > 0 ? &pick_u : &run_u;
	if (matrix && g->acc == DT_FP16 && g->dt == DT_FP16 && u->mat_fp16_acc16 > 0)
		macs_clk = u->mat_units * u->mat_fp16_acc16;
	struct memsys ms;
	memsys_of(c, &ms);
	double ea = dt_bytes(g->dt);
	int bk = (int)dmax(8, 128 / ea);
	if (!matrix)
		bk = (int)dmax(8, 32 / ea);
	struct gemm_cand best, second;
	int ncand = gemm_pick(c, pick, u, g, macs_clk, clock, matrix, &ms, bk, &best, &second);
	/* power: the matrix units' dynamic power at this clock must fit the TDP left after static power; above it the
	   clock drops (P ~ f^2 near the top of the DVFS range) and the search runs again at that clock. The power is
	   that of the kernel the library picks at the range's top: its MAC rate x matrix.pj_per_mac of the dtype x the
	   average unit's duty cycle (the MACs done, padding included, at the rate a main loop sustains,
	   model.mma_efficiency, over the kernel's time: a tail wave on few units draws the power of those units only).
	   Units the kernel does not run on draw none of it. A kernel named by the op (tile=) runs at the clock the
	   library's pick sets, so no tile is faster than the search's. */
	double boost_hz = clock, dyn_power_w = 0, avail_power_w = 0;
	if (ncand && matrix && u->mat_pj > 0 && c->tdp_w > 0) {
		/* chiplets: the duty cycle is the one the kernel has on one die of the same resources (the single step
		   the fit was made with; taking the chiplet kernel's lower duty in that one step would raise the clock
		   past what its power allows) */
		struct gemm_cand one = best, one2;
		if (ms.dies > 1 || g->tile_m > 0) {
			struct memsys m1 = ms;
			if (ms.dies > 1)
				memsys_of_one(c, &m1);
			struct gemm_in lib = *g;
			lib.tile_m = lib.tile_n = 0;
			gemm_pick(c, pick, u, &lib, macs_clk, clock, matrix, &m1, bk, &one, &one2);
		}
		double duty = one.work / ((double)u->count * macs_clk * clock * c->model.mma_eff) / one.time;
		assert(duty >= 0 && duty <= 1 + 1e-9); /* the waves take at least their matrix time (waves.c) */
		dyn_power_w = (double)u->count * macs_clk * clock * u->mat_pj * 1e-12 * mac_energy_scale(g->dt) * duty;
		avail_power_w = c->tdp_w * (1 - c->model.static_power);
		if (dyn_power_w > avail_power_w) {
			clock *= sqrt(avail_power_w / dyn_power_w);
			ncand = gemm_pick(c, pick, u, g, macs_clk, clock, matrix, &ms, bk, &best, &second);
		}
	}
	if (!ncand) {
		if (g->tile_m > 0)
			snprintf(why, wl, "%s: tile=%dx%d does not fit the shared memory and registers of its %s",
			         c->name, g->tile_m, g->tile_n, chip_u->name);
		else
			snprintf(why, wl, "%s: no GEMM tile fits its shared memory and registers", c->name);
		return -1;
	}
	double launch = c->model.launch_s;
	r->time_s = best.time + launch;
	memcpy(r->t_res, best.t, sizeof r->t_res);
	r->t_res[B_LAUNCH] = launch;
	/* grouped=: the setup kernel first (one block: a launch, and its one dependent load of the groups' offsets
	   from device memory before it writes their records), and each CTA of the GEMM reads its group's record,
	   just written and in L2, before its first tile */
	double setup_s = 0;
	if (g->grouped) {
		setup_s = ms.lat_dram + ms.lat_l2;
		r->time_s += launch + setup_s;
		r->t_res[B_LAUNCH] += launch;
		r->t_res[B_LATENCY] += setup_s;
	}
	r->bytes_dram = best.dram_B;
	r->bytes_l2 = best.l2_B;
	r->bytes_smem = best.smem_B;
	r->bytes_d2d = best.d2d_B;
	r->clock_hz = clock;
	r->unit_group = gi;
	r->uses_matrix = matrix;
	r->peak_flops = 2 * macs_clk * peak_hz * chip_u->count; /* the chip's datasheet peak, not the power-limited
	                                                             one, nor that of the units the kernel has */
	struct dm_kernel *k = &r->kern;
	snprintf(k->name, sizeof k->name, "gemm_%dx%dx%d_s%d_k%d", best.bm, best.bn, best.bk, best.stages, best.split);
	k->tile_m = best.bm, k->tile_n = best.bn, k->tile_k = best.bk, k->stages = best.stages;
	k->splitk = best.split, k->ctas = best.ctas, k->ctas_per_unit = best.occ;
	k->waves = (double)best.ctas / ((double)u->count * best.occ);
	k->kernels = 1 + (g->grouped != 0);
	r->bound = bound_of(r->t_res, r->t_res[B_LAUNCH], r->time_s);
	assert(clock <= boost_hz && dm_ok(r->time_s) && r->time_s > 0);
	assert(k->waves * u->count * best.occ >= best.ctas * (1 - 1e-12)); /* waves x slots >= CTAs */
	if (it)
		gemm_iter_of(c, u, g, &best, &ms, clock, macs_clk, matrix, gi, it);
	if (ex) {
		xp(ex, "unit: %ld x %s, %s pipe %.0f MAC/clk at %.0f MHz (peak %.1f TFLOP/s %s)\n", chip_u->count,
		   u->name, matrix ? "matrix" : "vector", macs_clk, clock / 1e6, r->peak_flops / 1e12,
		   arch_dtype_name(g->dt));
		if (g->units > 0 || g->margin > 0)
			xp(ex,
			   "units: the kernel is chosen for and runs on %ld of the %ld (%s=: the library's SM count "
			   "target)\n",
			   u->count, chip_u->count, g->units ? "units" : "margin");
		else if (g->busy > 0)
			xp(ex,
			   "units: %lld are held by another kernel; the kernel chosen for all %ld runs on the other "
			   "%ld (busy=)\n",
			   g->busy, chip_u->count, u->count);
		if (dyn_power_w > avail_power_w)
			xp(ex,
			   "power: the matrix units would draw %.0f W at %.0f MHz, %.0f W of the %.0f W TDP is left "
			   "after "
			   "static power: the clock drops to %.0f MHz\n",
			   dyn_power_w, boost_hz / 1e6, avail_power_w, c->tdp_w, clock / 1e6);
		char l2txt[32];
		if (ms.l2_bw > 0)
			snprintf(l2txt, sizeof l2txt, "%.0f GB/s", ms.l2_bw / 1e9);
		else
			snprintf(l2txt, sizeof l2txt, "unknown (not a limit)");
		xp(ex,
		   "memory: device %.0f GB/s reachable (x%.2f of peak), L2 %s, latency %.0f ns miss / %.0f ns "
		   "hit under load, cache for reuse %.0f MiB\n",
		   ms.dram_bw / 1e9, c->model.dram_eff, l2txt, ms.lat_dram * 1e9, ms.lat_l2 * 1e9,
		   ms.cache / 1048576.0);
		double nb = best.narrow_B;
		if (nb > 0)
			xp(ex,
			   "alignment: a leading dimension (A %lld, B %lld, C %lld elements) is not a multiple of 16 "
			   "bytes: "
			   "the library's fallback kernel, mma.sync at %.0f%% of the matrix rate and %.0f-byte loads, "
			   "one warp-wide load every %.1f cycles per unit (matrix.fallback_load_cycles), a store of C "
			   "narrower than 16 bytes every %.1f (matrix.fallback_store_cycles)\n",
			   g->ld[0], g->ld[1], g->ld[2], 100 * sync_rate_frac(c, u), nb, u->mat_narrow_clk,
			   u->mat_narrow_st_clk);
		xp(ex,
		   "kernel search: %d candidates (%s, stages, split-K) fit the unit; fastest %s %.2f us, next "
		   "%dx%d s%d k%d %.2f us\n",
		   ncand, g->tile_m > 0 ? "the tile given" : "tile", k->name, best.time * 1e6, second.bm, second.bn,
		   second.stages, second.split, second.time * 1e6);
		xp(ex,
		   "occupancy: %d CTA(s) of %d warps per unit (shared memory %.0f KiB each); %lld CTAs = %.2f "
		   "waves on %ld units\n",
		   best.occ, best.warps, best.stages * (best.bm + best.bn) * best.bk * ea / 1024, best.ctas, k->waves,
		   u->count);
		if (ms.dies > 1)
			xp(ex,
			   "chiplets: %d dies, CTAs round-robin, each die's L2 (%.1f MiB) caches what its CTAs reuse; "
			   "%.0f%% of memory is on other dies: %.4g GB cross at %.0f GB/s (%.2f us), +%.0f ns per "
			   "miss\n",
			   ms.dies, ms.l2_die / 1048576.0, ms.remote * 100, best.d2d_B / 1e9, ms.d2d_bw / 1e9,
			   best.t[B_D2D] * 1e6,
			   ms.remote * ms.d2d_hops * c->dies.d2d_latency_s * c->model.loaded_latency * 1e9);
		if (g->promote > 0 && u->vec[DT_FP32] > 0) {
			double per_s = gemm_promote_s(u, g, best.bm, best.bn, (double)g->promote, clock);
			double all_s = gemm_promote_s(u, g, best.bm, best.bn, (double)best.kit * best.bk, clock);
			xp(ex,
			   "promotion: every %lld of K the %dx%d partial sums are added on the %.0f fp32 lanes of "
			   "the unit, %.0f cycles while the matrix units wait (%.3g us of a CTA's %.3g us main loop)\n",
			   g->promote, best.bm, best.bn, u->vec[DT_FP32], per_s * clock, all_s * 1e6, best.mma_s * 1e6);
		}
		if (g->grouped)
			xp(ex,
			   "grouped: a one-block setup kernel writes the %lld groups' pointers, strides and sizes "
			   "first "
			   "(a launch, %.2f us, and a load from device memory), and each CTA reads its group's from L2 "
			   "before its first tile: %.2f us in all\n",
			   g->batch, launch * 1e6, (launch + setup_s) * 1e6);
		long long tm = cdiv(g->m, best.bm), tn = cdiv(g->n, best.bn);
		xp(ex, "padding: %lld x %lld tiles cover %lld x %lld (%.1f%% of the work is padding)\n", tm, tn,
		   tm * best.bm, tn * best.bn,
		   100.0 * (1 - (double)g->m * g->n / ((double)tm * best.bm * (double)tn * best.bn)));
	}
	return 0;
}
