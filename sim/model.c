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
 *   Little's law: a unit cannot stream faster than bytes-in-flight / latency.
 *
 * plus the fixed costs of a kernel (launch gap, pipeline prologue, epilogue).
 * Nothing here is specific to a chip: everything comes from struct
 * arch_chip, including the fitted constants of its `model` section.
 */
#include "model.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const bound_names[B_COUNT] = {"matrix", "vector", "sfu", "dram", "l2", "latency", "launch", "link"};
const char *dm_bound_name(enum dm_bound b)
{
	return b < B_COUNT ? bound_names[b] : "?";
}

/* ------------------------------------------------------------------ */
/* helpers                                                              */

static void xp(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xp(FILE *f, const char *fmt, ...)
{
	if (!f)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
}

static double dt_bytes(int dt)
{
	switch (dt) {
	case DT_FP64: return 8;
	case DT_FP32:
	case DT_TF32:
	case DT_INT32: return 4;
	case DT_FP16:
	case DT_BF16: return 2;
	case DT_FP8:
	case DT_INT8: return 1;
	case DT_FP4:
	case DT_INT4: return 0.5;
	}
	return 4;
}

static double dmax(double a, double b)
{
	return a > b ? a : b;
}
static double dmin(double a, double b)
{
	return a < b ? a : b;
}
static long long cdiv(long long a, long long b)
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
};

static void memsys_of(const struct arch_chip *c, struct memsys *m)
{
	const struct arch_model *k = &c->model;
	m->dram_bw = c->dram.bw_Bps * k->dram_eff;
	m->l2_bw = c->l2.present ? c->l2.bw_Bps * k->l2_eff : 0;
	double ld = c->dram.latency_s > 0 ? c->dram.latency_s : k->dram_latency_s;
	double l2 = c->l2.present && c->l2.latency_s > 0 ? c->l2.latency_s : k->l2_latency_s;
	if (l2 > ld)
		l2 = ld;
	m->lat_dram = ld * k->loaded_latency;
	m->lat_l2 = l2 * k->loaded_latency;
	m->cache = dmax(c->l2.present ? c->l2.size_bytes : 0, c->llc.present ? c->llc.size_bytes : 0);
}

/* The unit group and pipe that run dtype dt: the best matrix unit, else the
   best vector unit. Returns the group index or -1. */
static int pick_unit(const struct arch_chip *c, int dt, int *matrix, double *macs_per_clk, double *clock)
{
	int best = -1, bm = 0;
	double bestrate = 0, bmacs = 0, bclk = 0;
	for (int pass = 0; pass < 2 && best < 0; pass++) {
		for (int g = 0; g < c->nunits; g++) {
			const struct arch_unit *u = &c->units[g];
			double macs = pass == 0 ? u->mat_units * u->mat[dt] : u->vec[dt];
			if (macs <= 0)
				continue;
			double clk =
			    (pass == 0 && dt != DT_FP64 && u->tensor_clock_hz > 0) ? u->tensor_clock_hz : u->clock_hz;
			double rate = macs * clk * u->count;
			if (rate > bestrate) {
				bestrate = rate, best = g, bm = pass == 0, bmacs = macs, bclk = clk;
			}
		}
	}
	if (best >= 0) {
		*matrix = bm;
		*macs_per_clk = bmacs;
		*clock = bclk;
	}
	return best;
}

/* pick_unit, or a reason naming the chip and dtype. */
static int need_unit(const struct arch_chip *c, int dt, int *matrix, double *macs_per_clk, double *clock, char *why,
                     size_t wl)
{
	int gi = pick_unit(c, dt, matrix, macs_per_clk, clock);
	if (gi < 0)
		snprintf(why, wl, "%s has no matrix or vector unit for %s", c->name, arch_dtype_name(dt));
	return gi;
}

/* The group that runs elementwise work: the one with the most fp32 lanes. */
static int pick_vector_unit(const struct arch_chip *c)
{
	int best = 0;
	double br = -1;
	for (int g = 0; g < c->nunits; g++) {
		const struct arch_unit *u = &c->units[g];
		double r = u->vec[DT_FP32] * u->count * u->clock_hz;
		if (r > br)
			br = r, best = g;
	}
	return best;
}

static double unit_threads(const struct arch_unit *u)
{
	return (double)u->max_warps * (double)u->warp_size;
}

/* ------------------------------------------------------------------ */
/* waves: CTAs of equal work dispatched onto units x occupancy slots     */

struct wave_cost {
	double mma_s;   /* one CTA's pipe time when it has a unit to itself */
	double l2_B;    /* bytes one CTA loads through L2 */
	double dram_B;  /* device-memory bytes per CTA (average) */
	double fly_B;   /* bytes one CTA keeps in flight */
	double lat;     /* latency those bytes see */
	double fixed_s; /* prologue + epilogue of one CTA */
};

/* Time of a wave of w CTAs; adds each resource's time to t[]. */
static double wave_time(long long w, long units, const struct wave_cost *k, const struct memsys *m, double *t,
                        enum dm_bound pipe)
{
	double per_unit = (double)cdiv(w, units); /* CTAs on the busiest unit */
	double tp = per_unit * k->mma_s;
	double tl2 = m->l2_bw > 0 ? (double)w * k->l2_B / m->l2_bw : 0;
	double tdr = (double)w * k->dram_B / m->dram_bw;
	/* Little's law on the busiest unit: its CTAs' bytes in flight cover the latency */
	double tlat = k->fly_B > 0 ? per_unit * k->l2_B * k->lat / (per_unit * k->fly_B) : 0;
	double tw = dmax(dmax(tp, tl2), dmax(tdr, tlat));
	t[pipe] += tp;
	t[B_L2] += tl2;
	t[B_DRAM] += tdr;
	t[B_LATENCY] += tlat;
	return tw + k->fixed_s;
}

/* Full waves plus the tail. */
static double waves_time(long long ctas, long units, int occ, const struct wave_cost *k, const struct memsys *m,
                         double *t, enum dm_bound pipe)
{
	long long slots = (long long)units * occ;
	long long full = ctas / slots, tail = ctas % slots;
	double tt = 0;
	if (full > 0)
		tt += (double)full * wave_time(slots, units, k, m, t, pipe);
	if (full > 0)
		for (int i = 0; i < B_COUNT; i++)
			t[i] *= (double)full;
	if (tail > 0)
		tt += wave_time(tail, units, k, m, t, pipe);
	return tt;
}

static enum dm_bound bound_of(const double *t, double launch, double total)
{
	if (launch > 0.5 * total)
		return B_LAUNCH;
	enum dm_bound b = B_MATRIX;
	for (int i = 0; i < B_COUNT; i++)
		if (i != B_LAUNCH && t[i] > t[b])
			b = (enum dm_bound)i;
	return b;
}

/* ------------------------------------------------------------------ */
/* GEMM                                                                 */

struct gemm_in {
	long long m, n, k, batch;
	int dt, acc;
	double a_bytes; /* compulsory bytes of A (0 = m*k*elem); conv reads its input instead */
	int warm;       /* inputs already in L2 if they fit */
};

struct gemm_cand {
	int bm, bn, bk, stages, split, occ, warps;
	double time, t[B_COUNT];
	double l2_B, dram_B, smem_B;
	double work; /* MACs including padding */
	long long ctas;
};

static const int tiles_mn[][2] = {{256, 128}, {128, 256}, {128, 128}, {256, 64}, {64, 256}, {128, 64},
                                  {64, 128},  {64, 64},   {128, 32},  {32, 128}, {64, 32},  {32, 64},
                                  {16, 128},  {16, 256},  {16, 64},   {32, 256}, {32, 32},  {16, 32}};
static const int splits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};

static double out_bytes(int dt, int acc)
{
	if (dt == DT_INT8 || dt == DT_INT4)
		return 4;
	if (acc == DT_FP16 || acc == DT_BF16)
		return 2;
	return dmax(dt_bytes(dt), 2); /* fp8/fp4 GEMMs write bf16; fp32/tf32 write fp32 */
}

/* Times one candidate; returns 0 if it does not fit the unit. */
static int gemm_cand_time(const struct arch_chip *c, const struct arch_unit *u, const struct gemm_in *g,
                          double macs_clk, double clock, int matrix, const struct memsys *ms, struct gemm_cand *x)
{
	double ea = dt_bytes(g->dt), ec = out_bytes(g->dt, g->acc);
	int bm = x->bm, bn = x->bn, bk = x->bk, S = x->stages, sp = x->split;
	/* resources of one CTA */
	x->warps = (int)dmin((double)u->max_warps, dmax(2, dmin(8, bm * bn / 4096.0)));
	double smem = (double)S * (bm + bn) * bk * ea;
	double regs = (double)bm * bn * 4 + x->warps * 32.0 * 64 * 4; /* fp32 accumulators + 64 regs/thread */
	double occ = (double)u->max_ctas;
	if (u->smem_bytes > 0)
		occ = dmin(occ, floor(u->smem_bytes / smem));
	if (u->regfile_bytes > 0)
		occ = dmin(occ, floor(u->regfile_bytes / regs));
	occ = dmin(occ, floor((double)u->max_warps / x->warps));
	if (occ < 1)
		return 0;
	x->occ = (int)occ;
	long long tm = cdiv(g->m, bm), tn = cdiv(g->n, bn);
	long long kc = cdiv(g->k, sp);
	long long kit = cdiv(kc, bk);
	if (sp > 1 && kc < 2LL * bk)
		return 0;
	x->ctas = tm * tn * g->batch * sp;
	/* work of one CTA: the padded tile */
	double macs = (double)bm * bn * (double)(kit * bk);
	x->work = macs * (double)x->ctas;
	struct wave_cost w;
	w.mma_s = macs / (macs_clk * clock * c->model.mma_eff);
	/* shared memory: operands read by the warps (64x64 warp tiles re-read each) */
	double wm = dmin(bm, 64), wn = dmin(bn, 64);
	double smem_rd = macs * ea * (1.0 / wm + 1.0 / wn);
	double smem_t = smem_rd / (u->smem_Bpc * clock);
	if (!u->mat_async && smem_t > w.mma_s) /* async MMA reads operands from shared memory itself */
		w.mma_s = smem_t;
	double rows = (double)dmin(bm, g->m), cols = (double)dmin(bn, g->n);
	w.l2_B = (double)kit * bk * (rows + cols) * ea;
	double cw = rows * cols * (sp > 1 ? 4 : ec); /* partials in fp32 when split */
	/* device memory: each operand panel once per wave that needs it, unless all fits */
	double a_all = g->a_bytes > 0 ? g->a_bytes : (double)g->m * g->k * ea;
	double b_all = (double)g->k * g->n * ea;
	double in_once = (a_all + b_all) * g->batch;
	double dram_in;
	long long slots = (long long)u->count * x->occ;
	if (g->warm && in_once <= 0.5 * ms->cache)
		dram_in = 0;
	else if ((a_all + b_all) <= 0.5 * ms->cache || x->ctas <= slots)
		dram_in = in_once;
	else {
		/* a wave covers about a square block of tiles */
		long long wv = slots / sp;
		double wc = dmin((double)tn, ceil(sqrt((double)wv))), wr = dmin((double)tm, ceil(wv / wc));
		double waves = (double)tm * tn * g->batch / (wr * wc);
		double a_share = a_all / ((double)g->m * g->k * ea); /* conv: the input, not its im2col */
		dram_in = dmax(in_once, waves * (wr * bm * ea * a_share + wc * bn * ea) * (double)g->k);
		dram_in = dmin(dram_in, (double)x->ctas * w.l2_B); /* never more than L2 traffic */
	}
	double dram_out = (double)g->m * g->n * g->batch * ec;
	if (sp > 1)
		dram_out += (double)g->m * g->n * g->batch * 4 * 2 * sp; /* partials written and read back */
	x->dram_B = dram_in + dram_out;
	w.dram_B = x->dram_B / (double)x->ctas;
	w.fly_B = (double)(S - 1) * (rows + cols) * bk * ea;
	double hit = x->ctas * w.l2_B > 0 ? 1 - dram_in / (x->ctas * w.l2_B) : 1;
	w.lat = ms->lat_l2 + (1 - hit) * (ms->lat_dram - ms->lat_l2);
	/* prologue: the first stage arrives after a miss; epilogue writes C */
	w.fixed_s = ms->lat_dram + cw / (ms->dram_bw / (double)u->count);
	memset(x->t, 0, sizeof x->t);
	x->time = waves_time(x->ctas, u->count, x->occ, &w, ms, x->t, matrix ? B_MATRIX : B_VECTOR);
	if (sp > 1) /* reduction of the partials: a memory-bound pass */
		x->time += (double)g->m * g->n * g->batch * (4.0 * sp + ec) / ms->dram_bw + ms->lat_dram;
	x->l2_B = x->ctas * w.l2_B;
	x->smem_B = x->ctas * (w.l2_B + smem_rd);
	return 1;
}

/* The kernel search: every tile, stage count and split-K that fits; the fastest two. */
static int gemm_search(const struct arch_chip *c, const struct arch_unit *u, const struct gemm_in *g, double macs_clk,
                       double clock, int matrix, const struct memsys *ms, int bk, struct gemm_cand *best,
                       struct gemm_cand *second)
{
	memset(best, 0, sizeof *best);
	memset(second, 0, sizeof *second);
	best->time = second->time = INFINITY;
	int ncand = 0;
	for (size_t ti = 0; ti < sizeof tiles_mn / sizeof tiles_mn[0]; ti++)
		for (int S = 2; S <= 8; S++)
			for (size_t si = 0; si < sizeof splits / sizeof splits[0]; si++) {
				struct gemm_cand x = {0};
				x.bm = tiles_mn[ti][0], x.bn = tiles_mn[ti][1], x.bk = bk, x.stages = S;
				x.split = splits[si];
				if (!gemm_cand_time(c, u, g, macs_clk, clock, matrix, ms, &x))
					continue;
				ncand++;
				/* the fastest; within 0.1% the one with less padded work (as a library would) */
				int tie = fabs(x.time - best->time) < 1e-3 * best->time;
				if (tie ? x.work < best->work : x.time < best->time)
					*second = *best, *best = x;
				else if (x.time < second->time)
					*second = x;
			}
	return ncand;
}

static int gemm_time(const struct arch_chip *c, const struct gemm_in *g, struct dm_result *r, FILE *ex, char *why,
                     size_t wl)
{
	int matrix;
	double macs_clk, clock;
	int gi = need_unit(c, g->dt, &matrix, &macs_clk, &clock, why, wl);
	if (gi < 0)
		return -1;
	const struct arch_unit *u = &c->units[gi];
	if (matrix && g->acc == DT_FP16 && g->dt == DT_FP16 && u->mat_fp16_acc16 > 0)
		macs_clk = u->mat_units * u->mat_fp16_acc16;
	struct memsys ms;
	memsys_of(c, &ms);
	double ea = dt_bytes(g->dt);
	int bk = (int)dmax(8, 128 / ea);
	if (!matrix)
		bk = (int)dmax(8, 32 / ea);
	struct gemm_cand best, second;
	int ncand = gemm_search(c, u, g, macs_clk, clock, matrix, &ms, bk, &best, &second);
	/* power: the matrix units' dynamic power at this clock and duty cycle must fit the TDP
	   left after static power; above it the clock drops (P ~ f^2 near the top of the DVFS range) */
	double boost = clock, pdyn = 0, avail = 0;
	if (ncand && matrix && u->mat_pj > 0 && c->tdp_w > 0) {
		double duty = dmin(1, best.t[B_MATRIX] / best.time);
		pdyn = (double)u->count * macs_clk * clock * u->mat_pj * 1e-12 * (dt_bytes(g->dt) / 2) * duty;
		avail = c->tdp_w * (1 - c->model.static_power);
		if (pdyn > avail) {
			clock *= sqrt(avail / pdyn);
			ncand = gemm_search(c, u, g, macs_clk, clock, matrix, &ms, bk, &best, &second);
		}
	}
	if (!ncand) {
		snprintf(why, wl, "%s: no GEMM tile fits its shared memory and registers", c->name);
		return -1;
	}
	double launch = c->model.launch_s;
	r->time_s = best.time + launch;
	memcpy(r->t_res, best.t, sizeof r->t_res);
	r->t_res[B_LAUNCH] = launch;
	r->bytes_dram = best.dram_B;
	r->bytes_l2 = best.l2_B;
	r->bytes_smem = best.smem_B;
	r->clock_hz = clock;
	r->unit_group = gi;
	r->uses_matrix = matrix;
	r->peak_flops = 2 * macs_clk * boost * u->count; /* the datasheet peak, not the power-limited one */
	struct dm_kernel *k = &r->kern;
	snprintf(k->name, sizeof k->name, "gemm_%dx%dx%d_s%d_k%d", best.bm, best.bn, best.bk, best.stages, best.split);
	k->tile_m = best.bm, k->tile_n = best.bn, k->tile_k = best.bk, k->stages = best.stages;
	k->splitk = best.split, k->ctas = best.ctas, k->ctas_per_unit = best.occ;
	k->waves = (double)best.ctas / ((double)u->count * best.occ);
	k->kernels = 1;
	r->bound = bound_of(r->t_res, launch, r->time_s);
	if (ex) {
		xp(ex, "unit: %ld x %s, %s pipe %.0f MAC/clk at %.0f MHz (peak %.1f TFLOP/s %s)\n", u->count, u->name,
		   matrix ? "matrix" : "vector", macs_clk, clock / 1e6, r->peak_flops / 1e12, arch_dtype_name(g->dt));
		if (pdyn > avail)
			xp(ex,
			   "power: the matrix units would draw %.0f W at %.0f MHz, %.0f W of the %.0f W TDP is left "
			   "after "
			   "static power: the clock drops to %.0f MHz\n",
			   pdyn, boost / 1e6, avail, c->tdp_w, clock / 1e6);
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
		xp(ex,
		   "kernel search: %d candidates (tile, stages, split-K) fit the unit; fastest %s %.2f us, next "
		   "%dx%d s%d k%d %.2f us\n",
		   ncand, k->name, best.time * 1e6, second.bm, second.bn, second.stages, second.split,
		   second.time * 1e6);
		xp(ex,
		   "occupancy: %d CTA(s) of %d warps per unit (shared memory %.0f KiB each); %lld CTAs = %.2f "
		   "waves on %ld units\n",
		   best.occ, best.warps, best.stages * (best.bm + best.bn) * best.bk * ea / 1024, best.ctas, k->waves,
		   u->count);
		long long tm = cdiv(g->m, best.bm), tn = cdiv(g->n, best.bn);
		xp(ex, "padding: %lld x %lld tiles cover %lld x %lld (%.1f%% of the work is padding)\n", tm, tn,
		   tm * best.bm, tn * best.bn,
		   100.0 * (1 - (double)g->m * g->n / ((double)tm * best.bm * (double)tn * best.bn)));
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* memory-bound kernels                                                 */

struct stream_in {
	double rd, wr;   /* bytes read and written in device memory */
	double l2_extra; /* further bytes re-read through L2 (hits) */
	double vec_ops;  /* fp32 lane operations */
	double sfu_ops;  /* special-function operations */
	double threads;  /* threads the kernel has (its parallelism) */
	double fly_per_thread;
	int warm; /* input is L2-resident if it fits */
};

static void stream_time(const struct arch_chip *c, const struct stream_in *s, struct dm_result *r, FILE *ex)
{
	struct memsys ms;
	memsys_of(c, &ms);
	int gi = pick_vector_unit(c);
	const struct arch_unit *u = &c->units[gi];
	double units = (double)u->count;
	double resident = dmin(s->threads, units * unit_threads(u));
	double busy = dmin(units, ceil(resident / unit_threads(u) * units / units));
	(void)busy;
	int in_l2 = s->warm && c->l2.present && s->rd <= 0.5 * c->l2.size_bytes;
	double lat = in_l2 ? ms.lat_l2 : ms.lat_dram;
	double fly = resident * s->fly_per_thread;
	double little = fly / lat;
	double bw = in_l2 && ms.l2_bw > 0 ? ms.l2_bw : ms.dram_bw;
	double rd_dram = in_l2 ? 0 : s->rd;
	double t[B_COUNT] = {0};
	if (in_l2)
		t[B_L2] = (s->rd + s->wr) / bw;
	else {
		t[B_DRAM] = (s->rd + s->wr * c->model.write_cost) / ms.dram_bw;
		if (ms.l2_bw > 0)
			t[B_L2] = (s->rd + s->wr + s->l2_extra) / ms.l2_bw;
	}
	t[B_LATENCY] = (s->rd + s->wr) / little;
	double lanes = 0, sfu = 0;
	for (int g = 0; g < c->nunits; g++) {
		lanes += c->units[g].vec[DT_FP32] * c->units[g].count * c->units[g].clock_hz;
		sfu += c->units[g].sfu * c->units[g].count * c->units[g].clock_hz;
	}
	/* a chip whose config declares no vector lanes (a TPU, an LPU): arithmetic is not a limit here */
	t[B_VECTOR] = lanes > 0 ? s->vec_ops / lanes : 0;
	t[B_SFU] = sfu > 0 ? s->sfu_ops / sfu : lanes > 0 ? s->sfu_ops * 4 / lanes : 0; /* no SFU: ~4 lane ops */
	double body = 0;
	for (int i = 0; i < B_COUNT; i++)
		body = dmax(body, t[i]);
	double launch = c->model.launch_s;
	t[B_LAUNCH] = launch;
	r->time_s = launch + lat + body;
	memcpy(r->t_res, t, sizeof t);
	r->bytes_dram = rd_dram + (in_l2 ? 0 : s->wr);
	r->bytes_l2 = s->rd + s->wr + s->l2_extra;
	r->bytes_smem = 0;
	r->clock_hz = u->clock_hz;
	r->unit_group = gi;
	r->uses_matrix = 0;
	r->peak_flops = 2 * lanes;
	r->bound = bound_of(t, launch + lat, r->time_s);
	struct dm_kernel *k = &r->kern;
	long long ctas = (long long)ceil(s->threads / 256);
	snprintf(k->name, sizeof k->name, "stream_256t");
	k->ctas = ctas > 0 ? ctas : 1;
	k->ctas_per_unit = (int)dmax(1, dmin((double)u->max_ctas, unit_threads(u) / 256));
	k->waves = (double)k->ctas / (units * k->ctas_per_unit);
	k->kernels = 1;
	if (ex) {
		xp(ex, "memory-bound kernel on %ld x %s: reads %.4g MB, writes %.4g MB%s\n", u->count, u->name,
		   s->rd / 1e6, s->wr / 1e6, in_l2 ? " (input resident in L2)" : "");
		xp(ex,
		   "bandwidth: %s %.0f GB/s reachable; bytes in flight %.0f KiB (%.0f threads x %.0f B) / "
		   "latency %.0f ns = %.0f GB/s (Little's law)\n",
		   in_l2 ? "L2" : "device memory", bw / 1e9, fly / 1024, resident, s->fly_per_thread, lat * 1e9,
		   little / 1e9);
		xp(ex, "pipes: %.4g G lane ops (%.2f us), %.4g G special-function ops (%.2f us)\n", s->vec_ops / 1e9,
		   t[B_VECTOR] * 1e6, s->sfu_ops / 1e9, t[B_SFU] * 1e6);
	}
}

/* Per element of an elementwise op: bytes read and written (in units of the
   element size, plus fp32 state for adam), lane ops and SFU ops. */
struct elem_cost {
	double rd, wr, vec, sfu;
};

static struct elem_cost elem_cost_of(const struct op *op)
{
	double e = dt_bytes(op->dtype);
	struct elem_cost k = {e, e, 1, 0};
	switch (op->elem) {
	case EL_ADD:
	case EL_MUL: k.rd = 2 * e; break;
	case EL_GELU: k.vec = 25, k.sfu = 0; break; /* exact erf-based GELU (the framework default): ~20-op erff */
	case EL_SILU: k.vec = 12, k.sfu = 2; break; /* accurate expf (~8 ops + ex2) and a division */
	case EL_SWIGLU: k.rd = 2 * e, k.vec = 13, k.sfu = 2; break;
	case EL_RELU: break;
	case EL_LAYERNORM: k.vec = 14; break; /* Welford mean/variance, normalise, scale and shift, conversions */
	case EL_RMSNORM: k.vec = 8; break;
	case EL_SOFTMAX: k.vec = 30, k.sfu = 2; break; /* max, sum of exp, exp again to write: 2 accurate expf */
	case EL_ROPE: k.vec = 4; break;
	case EL_CAST: k.wr = dt_bytes(op->to_dtype >= 0 ? op->to_dtype : DT_FP32); break;
	case EL_ADAM: k.rd = e + 12, k.wr = 12 + e, k.vec = 12, k.sfu = 2; break;
	case EL_READ: k.wr = 0; break;
	case EL_TRIAD: k.rd = 2 * e, k.vec = 1; break;
	case EL_COPY: k.vec = 0; break;
	case EL_COUNT: break;
	}
	return k;
}

static void elem_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex)
{
	struct elem_cost k = elem_cost_of(op);
	double n = (double)op->elems, e = dt_bytes(op->dtype);
	struct stream_in s = {0};
	s.rd = n * k.rd, s.wr = n * k.wr, s.vec_ops = n * k.vec, s.sfu_ops = n * k.sfu;
	s.warm = op->warm;
	double per_thread = c->model.bytes_per_thread / e; /* elements per vector load */
	s.threads = ceil(n / per_thread);
	s.fly_per_thread = c->model.bytes_per_thread * (k.rd / e); /* one load per input stream */
	int rowop = op->elem == EL_LAYERNORM || op->elem == EL_RMSNORM || op->elem == EL_SOFTMAX;
	if (rowop) {
		double rows = n / (double)op->cols;
		const struct arch_unit *u = &c->units[pick_vector_unit(c)];
		double tpr = dmin(1024, ceil((double)op->cols / per_thread)); /* a CTA per row */
		s.threads = rows * tpr;
		/* a row too long for registers is read again from L2 */
		double row_bytes = (double)op->cols * e;
		if (row_bytes > 1024 * per_thread * e)
			s.l2_extra = s.rd;
		s.sfu_ops += rows; /* rsqrt or reciprocal per row */
		(void)u;
	}
	stream_time(c, &s, r, ex);
	r->flops = op_flops(op);
	if (ex && rowop)
		xp(ex, "row op: %lld rows of %lld, one CTA per row\n", op->elems / op->cols, op->cols);
}

/* ------------------------------------------------------------------ */
/* attention                                                            */

static int attn_flash(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                      size_t wl)
{
	int matrix;
	double macs_clk, clock;
	int gi = need_unit(c, op->dtype, &matrix, &macs_clk, &clock, why, wl);
	if (gi < 0)
		return -1;
	const struct arch_unit *u = &c->units[gi];
	if (op->impl == ATTN_FLASH3 && !u->mat_async) {
		snprintf(why, wl,
		         "impl=flash3 needs asynchronous matrix units (%s has compute.%s.matrix.async = false); "
		         "use impl=flash2",
		         c->name, u->name);
		return -1;
	}
	struct memsys ms;
	memsys_of(c, &ms);
	double ea = dt_bytes(op->dtype), d = (double)op->d;
	int bwd = op->dir == DIR_BWD, fa3 = op->impl == ATTN_FLASH3;
	/* block sizes: rows of Q per CTA (br) and keys per inner iteration (bc) */
	int br = bwd ? (op->d <= 64 ? 128 : 64) : (op->d <= 128 ? 128 : 64);
	int bc = bwd ? 128 : (op->d <= 64 || fa3 ? 128 : 64);
	int warps = fa3 ? 12 : (bwd ? 8 : 4);
	/* shared memory: Q (or K,V for bwd) block resident, K/V (or Q/dO) blocks double-buffered */
	double smem =
	    bwd ? (2.0 * bc * d + 2 * 2.0 * br * d + (double)br * bc) * ea : ((double)br * d + 2.0 * bc * d) * ea;
	double occ = dmin((double)u->max_ctas, floor((double)u->max_warps / warps));
	if (u->smem_bytes > 0)
		occ = dmin(occ, floor(u->smem_bytes / smem));
	if (u->regfile_bytes > 0)
		occ = dmin(occ, floor(u->regfile_bytes / (warps * 32.0 * 255 * 4 * 0.5)));
	if (occ < 1)
		occ = 1;
	/* the outer blocks (CTAs) and inner iterations */
	long long outer = bwd ? op->skv : op->sq, inner_len = bwd ? op->sq : op->skv;
	int bo = bwd ? bc : br, bi = bwd ? br : bc;
	long long nout = cdiv(outer, bo), heads = op->b * op->h;
	/* per inner iteration, per CTA: MACs, exps, lane ops */
	double mm = (double)bo * bi * d * (bwd ? 5 : 2);
	double ex_ops = (double)bo * bi * 1.5; /* exp, and the packed conversion of P to 16 bits (same pipe) */
	double lane = (double)bo * bi * (bwd ? 6 : 5) + (bwd ? 0 : (double)bo * d);
	double rate = macs_clk * clock * c->model.mma_eff;
	double lanes = u->vec[DT_FP32] * clock, sfu = u->sfu > 0 ? u->sfu * clock : lanes / 4;
	double t_mma = mm / rate, t_sfu = lanes > 0 ? ex_ops / sfu : 0, t_vec = lanes > 0 ? lane / lanes : 0;
	/* shared memory: every warp reads the streamed blocks for its rows (fwd: K and V; bwd: Q and dO
	   through five products); async matrix units read them once per warpgroup */
	double smem_it = (bwd ? 5.0 : 2.0) * (fa3 ? 2 : warps) * bi * d * ea;
	double t_smem = smem_it / (u->smem_Bpc * clock);
	/* pipes overlap as far as independent instructions allow: within a warp (ILP) and across the
	   warps sharing a scheduler; FlashAttention-3 overlaps them by design (ping-pong warpgroups) */
	double wps = occ * warps / (double)u->schedulers;
	double ov = fa3 ? 1 : 1 - 1 / (1 + wps);
	double other = t_sfu + t_vec;
	double tmax = dmax(t_mma, dmax(t_smem, other));
	double t_it = tmax + (1 - ov) * (t_mma + t_smem + other - tmax);
	/* bytes per iteration through L2: the streamed blocks (+ dQ fp32 atomics in bwd) */
	double it_l2 = 2.0 * bi * d * ea + (bwd ? (double)bi * d * 4 * 2 : 0);
	double fly = 2.0 * bi * d * ea; /* one stage ahead */
	/* iterations per CTA: causal blocks stop at the diagonal (queries aligned to the end of keys) */
	long long total_it = 0, max_it = 0;
	long long *its = malloc(sizeof *its * (size_t)nout);
	if (!its) {
		snprintf(why, wl, "out of memory");
		return -1;
	}
	long long off = op->skv - op->sq; /* key index of query 0 */
	long long nin = cdiv(inner_len, bi);
	for (long long i = 0; i < nout; i++) {
		long long n = nin;
		if (op->causal) {
			if (!bwd) { /* query rows [i*bo, i*bo+bo) see keys < off + row + 1 */
				long long last = off + dmin((double)(i + 1) * bo, (double)op->sq);
				n = dmax(0, dmin((double)nin, (double)cdiv(last, bi)));
			} else { /* key block i is seen by query rows >= i*bo - off */
				long long first = (long long)dmax(0, (double)(i * bo - off));
				n = first >= op->sq ? 0 : nin - first / bi;
			}
		}
		its[i] = n;
		total_it += n;
		if (n > max_it)
			max_it = n;
	}
	/* dispatch: every head has the same blocks; slots take CTAs as they free (longest first) */
	long long slots = (long long)(u->count * occ);
	long long ctas = nout * heads;
	double t_cta_fixed = ms.lat_dram + (double)bo * d * ea * (bwd ? 4 : 1) / (ms.dram_bw / (double)u->count);
	double sm_time; /* makespan of the pipes, each slot a 1/occ share of a unit */
	{
		/* LPT onto slots: with equal heads this is about total/slots, bounded below by the longest CTA */
		double per_it = t_it * occ; /* a CTA sharing its unit with occ-1 others */
		double tot = (double)total_it * heads * per_it + ctas * t_cta_fixed;
		double longest = max_it * per_it + t_cta_fixed;
		long long waves = cdiv(ctas, slots);
		sm_time = dmax(tot / (double)slots, longest);
		if (!op->causal) /* equal CTAs: whole waves */
			sm_time = (double)waves * (nin * per_it + t_cta_fixed);
	}
	free(its);
	/* device memory: Q, K, V, O (and dO, dQ, dK, dV, LSE in bwd), K/V re-read per head group if L2 is small */
	double q = (double)op->b * op->h * op->sq * d * ea, kv = 2.0 * op->b * op->hkv * op->skv * d * ea;
	double dram = bwd ? 3 * q + 2 * kv + (double)op->b * op->h * op->sq * 4 * 3 : 2 * q + kv;
	double l2 = (double)total_it * heads * it_l2 + dram;
	double t[B_COUNT] = {0};
	t[matrix ? B_MATRIX : B_VECTOR] = (double)total_it * heads * t_mma / (double)u->count;
	t[B_SFU] = (double)total_it * heads * t_sfu / (double)u->count;
	t[B_VECTOR] += (double)total_it * heads * t_vec / (double)u->count;
	t[B_DRAM] = dram / ms.dram_bw;
	t[B_L2] = ms.l2_bw > 0 ? l2 / ms.l2_bw : 0;
	t[B_LATENCY] = (double)total_it * heads * it_l2 * ms.lat_l2 / (fly * (double)slots);
	double body = dmax(sm_time, dmax(t[B_DRAM], dmax(t[B_L2], t[B_LATENCY])));
	int kernels = bwd ? 3 : 1; /* bwd: dO.O row sums, the main kernel, dQ conversion */
	double extra = 0;
	if (bwd) /* the two small passes: read O, dO; read dQ fp32, write dQ */
		extra = (2 * q + (double)op->b * op->h * op->sq * d * 6) / ms.dram_bw + 2 * ms.lat_dram;
	double launch = kernels * c->model.launch_s;
	t[B_LAUNCH] = launch;
	r->time_s = launch + body + extra;
	memcpy(r->t_res, t, sizeof t);
	r->bound = bound_of(t, launch, r->time_s);
	if (r->bound != B_LAUNCH && sm_time >= body && t[B_SFU] + t[B_VECTOR] > t[B_MATRIX] && !matrix)
		r->bound = B_VECTOR;
	r->bytes_dram = dram;
	r->bytes_l2 = l2;
	r->bytes_smem = l2;
	r->clock_hz = clock;
	r->unit_group = gi;
	r->uses_matrix = matrix;
	r->peak_flops = 2 * macs_clk * clock * u->count;
	struct dm_kernel *k = &r->kern;
	snprintf(k->name, sizeof k->name, "%s_%s_%dx%d", fa3 ? "flash3" : "flash2", bwd ? "bwd" : "fwd", bo, bi);
	k->tile_m = bo, k->tile_n = bi, k->tile_k = op->d > 0 ? (int)op->d : 0, k->stages = 2, k->splitk = 1;
	k->ctas = ctas, k->ctas_per_unit = (int)occ, k->waves = (double)ctas / (double)slots, k->kernels = kernels;
	if (ex) {
		xp(ex, "unit: %ld x %s, matrix %.0f MAC/clk, %.0f fp32 lanes, %.0f SFU/clk at %.0f MHz\n", u->count,
		   u->name, macs_clk, u->vec[DT_FP32], u->sfu, clock / 1e6);
		xp(ex,
		   "blocks: %d %s rows per CTA, %d per inner step; %lld CTAs, %.0f per unit (%d warps each, "
		   "%.0f KiB shared memory)\n",
		   bo, bwd ? "key" : "query", bi, ctas, occ, warps, smem / 1024);
		xp(ex,
		   "inner step: matrix %.0f ns, shared memory %.0f ns, exp %.0f ns, other lane ops %.0f ns; "
		   "overlap %.0f%% (%s) -> %.0f ns\n",
		   t_mma * 1e9, t_smem * 1e9, t_sfu * 1e9, t_vec * 1e9, ov * 100,
		   fa3 ? "FlashAttention-3 ping-pong on async matrix units" : "other warps on the same scheduler",
		   t_it * 1e9);
		if (op->causal)
			xp(ex, "causal: %lld of %lld inner steps per head are computed; the longest CTA has %lld\n",
			   total_it, nout * nin, max_it);
	}
	return 0;
}

/* decode / paged: one (or a few) query rows per sequence against the KV cache */
static int attn_decode(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                       size_t wl)
{
	int matrix;
	double macs_clk, clock;
	int gi = need_unit(c, op->dtype, &matrix, &macs_clk, &clock, why, wl);
	if (gi < 0)
		return -1;
	const struct arch_unit *u = &c->units[gi];
	struct memsys ms;
	memsys_of(c, &ms);
	double ea = dt_bytes(op->dtype), d = (double)op->d;
	double kv = 2.0 * op->b * op->hkv * op->skv * d * ea;
	double q = (double)op->b * op->h * op->sq * d * ea;
	/* split the keys so that every unit has work (FlashDecoding) */
	long long groups = op->b * op->hkv;
	long long split = (long long)dmax(1, dmin(ceil(2.0 * u->count / (double)groups), (double)cdiv(op->skv, 256)));
	long long ctas = groups * split;
	double chunk = (double)op->skv / split;
	/* in flight per CTA: a few blocks of keys; a page is the unit of a paged load */
	double blk = op->impl == ATTN_PAGED ? dmin(64.0, (double)op->page) : 64.0;
	double fly_cta = 4 * blk * d * ea * 2;
	double occ = dmax(1, dmin((double)u->max_ctas, floor((double)u->max_warps / 4)));
	double resident = dmin((double)ctas, u->count * occ);
	double little = resident * fly_cta / ms.lat_dram;
	double rows = (double)op->sq * op->h / op->hkv;        /* query rows sharing one K/V stream */
	double macs = 2.0 * dmax(rows, 16) * chunk * d * ctas; /* padded to 16 rows on matrix units */
	double t[B_COUNT] = {0};
	t[B_DRAM] = (kv + 2 * q) / ms.dram_bw;
	t[B_LATENCY] = kv / little;
	t[matrix ? B_MATRIX : B_VECTOR] = macs / (macs_clk * clock * u->count);
	t[B_SFU] = rows * op->skv * op->b * op->hkv / (u->sfu > 0 ? u->sfu * clock * u->count : 1e12);
	double page_s = 0;
	if (op->impl == ATTN_PAGED) /* a block-table lookup before each page of each CTA */
		page_s = ceil(chunk / (double)op->page) / (fly_cta / (blk * d * ea * 2)) * ms.lat_l2 / 4;
	double body = 0;
	for (int i = 0; i < B_COUNT; i++)
		body = dmax(body, t[i]);
	int kernels = split > 1 ? 2 : 1; /* the split results are combined by a second kernel */
	double launch = kernels * c->model.launch_s;
	t[B_LAUNCH] = launch;
	r->time_s = launch + ms.lat_dram * kernels + body + page_s;
	memcpy(r->t_res, t, sizeof t);
	r->bound = bound_of(t, launch, r->time_s);
	r->bytes_dram = kv + 2 * q;
	r->bytes_l2 = kv + 2 * q;
	r->bytes_smem = kv;
	r->clock_hz = clock;
	r->unit_group = gi;
	r->uses_matrix = matrix;
	r->peak_flops = 2 * macs_clk * clock * u->count;
	struct dm_kernel *k = &r->kern;
	snprintf(k->name, sizeof k->name, "%s_split%lld", op->impl == ATTN_PAGED ? "paged_decode" : "flash_decode",
	         split);
	k->tile_m = (int)dmax(rows, 16), k->tile_n = (int)blk, k->tile_k = (int)op->d, k->stages = 4;
	k->splitk = (int)split, k->ctas = ctas, k->ctas_per_unit = (int)occ;
	k->waves = (double)ctas / (u->count * occ), k->kernels = kernels;
	if (ex) {
		xp(ex, "decode: %lld sequences x %lld KV heads, %lld keys each: KV cache %.4g MB to read\n", op->b,
		   op->hkv, op->skv, kv / 1e6);
		xp(ex,
		   "split-KV: %lld splits -> %lld CTAs; %.0f KiB in flight per CTA -> %.0f GB/s by Little's law "
		   "(device memory %.0f GB/s)\n",
		   split, ctas, fly_cta / 1024, little / 1e9, ms.dram_bw / 1e9);
	}
	return 0;
}

static int predict(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl);

/* naive attention: the separate kernels of an eager framework */
static int attn_naive(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                      size_t wl)
{
	struct op parts[8];
	int np = 0;
	long long bh = op->b * op->h;
	struct op g = {0};
	g.kind = OP_GEMM, g.dtype = op->dtype, g.acc_dtype = DT_FP32, g.to_dtype = -1;
	struct op e = {0};
	e.kind = OP_ELEM, e.dtype = op->dtype, e.to_dtype = -1;
	e.elems = bh * op->sq * op->skv;
	e.cols = op->skv;
#define GEMM(M, N, K) (g.m = (M), g.n = (N), g.k = (K), g.batch = bh, parts[np++] = g)
	if (op->dir == DIR_FWD) {
		GEMM(op->sq, op->skv, op->d); /* S = Q K^T */
		if (op->causal) {             /* masked_fill */
			e.elem = EL_ADD, parts[np++] = e;
		}
		e.elem = EL_SOFTMAX, parts[np++] = e;
		GEMM(op->sq, op->d, op->skv); /* O = P V */
	} else {
		GEMM(op->skv, op->d, op->sq);        /* dV = P^T dO */
		GEMM(op->sq, op->skv, op->d);        /* dP = dO V^T */
		e.elem = EL_SWIGLU, parts[np++] = e; /* dS = P * (dP - rowsum): two streams in, one out */
		GEMM(op->sq, op->d, op->skv);        /* dQ = dS K */
		GEMM(op->skv, op->d, op->sq);        /* dK = dS^T Q */
	}
#undef GEMM
	double t[B_COUNT] = {0}, tot = 0, dram = 0, l2 = 0, smem = 0;
	for (int i = 0; i < np; i++) {
		struct dm_result p;
		memset(&p, 0, sizeof p);
		if (predict(c, &parts[i], &p, NULL, why, wl))
			return -1;
		tot += p.time_s, dram += p.bytes_dram, l2 += p.bytes_l2, smem += p.bytes_smem;
		for (int j = 0; j < B_COUNT; j++)
			t[j] += p.t_res[j];
		if (ex) {
			char buf[256];
			op_format(&parts[i], buf, sizeof buf);
			xp(ex, "  kernel %d: %s -> %.2f us (%s)\n", i + 1, buf, p.time_s * 1e6, dm_bound_name(p.bound));
		}
		if (i == 0)
			r->clock_hz = p.clock_hz, r->unit_group = p.unit_group, r->uses_matrix = p.uses_matrix,
			r->peak_flops = p.peak_flops;
	}
	r->time_s = tot;
	memcpy(r->t_res, t, sizeof t);
	r->bound = bound_of(t, t[B_LAUNCH], tot);
	r->bytes_dram = dram, r->bytes_l2 = l2, r->bytes_smem = smem;
	snprintf(r->kern.name, sizeof r->kern.name, "naive_%s_%d_kernels", op->dir == DIR_BWD ? "bwd" : "fwd", np);
	r->kern.kernels = np;
	return 0;
}

/* ------------------------------------------------------------------ */
/* copies                                                               */

/* Payload share of PCIe transaction packets: 128-byte payloads (the usual
   max payload size of a GPU's root port) behind ~24 bytes of TLP header,
   sequence number, LCRC and framing. */
#define PCIE_PAYLOAD      128.0
#define PCIE_TLP_OVERHEAD 24.0

static int copy_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                     size_t wl)
{
	double t[B_COUNT] = {0};
	struct memsys ms;
	memsys_of(c, &ms);
	double launch = c->model.launch_s;
	if (op->src == PLACE_HOST && op->dst == PLACE_HOST) {
		snprintf(why, wl, "host to host does not involve the device");
		return -1;
	}
	if (op->src == PLACE_HBM && op->dst == PLACE_HBM) {
		t[B_DRAM] = op->bytes * (1 + c->model.write_cost) / ms.dram_bw;
		r->bytes_dram = 2 * op->bytes;
		r->time_s = launch + ms.lat_dram + t[B_DRAM];
		r->bound = bound_of(t, launch + ms.lat_dram, r->time_s);
		xp(ex, "device copy: %.4g MB read and written at %.0f GB/s\n", op->bytes / 1e6, ms.dram_bw / 1e9);
	} else {
		const struct arch_link *l = NULL;
		for (int i = 0; i < c->nlinks; i++)
			if (!strcmp(c->links[i].kind, "pcie"))
				l = &c->links[i];
		if (!l) {
			snprintf(why, wl, "%s has no PCIe link to the host (links.* of kind pcie)", c->name);
			return -1;
		}
		double raw = arch_link_bw(l) * (double)l->count;
		double bw = raw * PCIE_PAYLOAD / (PCIE_PAYLOAD + PCIE_TLP_OVERHEAD);
		double lat = l->latency_s > 0 ? l->latency_s : 1e-6;
		t[B_LINK] = op->bytes / bw;
		r->bytes_link = op->bytes;
		r->bytes_dram = op->bytes;
		r->time_s = launch + lat + t[B_LINK];
		r->bound = bound_of(t, launch + lat, r->time_s);
		xp(ex, "host copy over PCIe gen %ld x%ld: %.1f GB/s raw, %.1f GB/s of payload (%.0f-byte TLPs)\n",
		   l->pcie_gen, l->pcie_lanes, raw / 1e9, bw / 1e9, PCIE_PAYLOAD);
	}
	t[B_LAUNCH] = launch;
	memcpy(r->t_res, t, sizeof t);
	r->clock_hz = c->units[0].clock_hz;
	snprintf(r->kern.name, sizeof r->kern.name, "memcpy_%s_to_%s", op->src == PLACE_HOST ? "host" : "hbm",
	         op->dst == PLACE_HOST ? "host" : "hbm");
	r->kern.kernels = 1;
	(void)why, (void)wl;
	return 0;
}

/* ------------------------------------------------------------------ */

static int predict(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	memset(r, 0, sizeof *r);
	int rc = 0;
	switch (op->kind) {
	case OP_GEMM: {
		struct gemm_in g = {op->m, op->n, op->k, op->batch, op->dtype, op->acc_dtype, 0, op->warm};
		rc = gemm_time(c, &g, r, ex, why, wl);
		break;
	}
	case OP_CONV: {
		long long p = (op->ih + 2 * op->pad - op->r) / op->stride + 1;
		long long q = (op->iw + 2 * op->pad - op->s) / op->stride + 1;
		struct gemm_in g = {
		    op->batch * p * q, op->cout, op->cin * op->r * op->s, 1, op->dtype, op->acc_dtype, 0, op->warm};
		g.a_bytes = (double)op->batch * op->cin * op->ih * op->iw * dt_bytes(op->dtype);
		xp(ex,
		   "implicit GEMM: M = n*p*q = %lld, N = k = %lld, K = c*r*s = %lld (input read once, not "
		   "im2col)\n",
		   g.m, g.n, g.k);
		rc = gemm_time(c, &g, r, ex, why, wl);
		break;
	}
	case OP_ATTN:
		if (op->impl == ATTN_DECODE || op->impl == ATTN_PAGED)
			rc = attn_decode(c, op, r, ex, why, wl);
		else if (op->impl == ATTN_NAIVE)
			rc = attn_naive(c, op, r, ex, why, wl);
		else
			rc = attn_flash(c, op, r, ex, why, wl);
		break;
	case OP_ELEM: elem_time(c, op, r, ex); break;
	case OP_EMBED: {
		double e = dt_bytes(op->dtype), rows = (double)op->tokens, row = (double)op->dim * e;
		struct stream_in s = {0};
		s.rd = rows * row + rows * 4, s.wr = rows * row; /* gathered rows, the token ids, the output */
		s.threads = rows * dmin(1024, ceil(row / c->model.bytes_per_thread));
		s.fly_per_thread = c->model.bytes_per_thread;
		stream_time(c, &s, r, ex);
		snprintf(r->kern.name, sizeof r->kern.name, "embedding_gather");
		break;
	}
	case OP_COPY: rc = copy_time(c, op, r, ex, why, wl); break;
	case OP_KIND_COUNT: snprintf(why, wl, "unknown op kind"); return -1;
	}
	if (rc)
		return rc;
	r->flops = op_flops(op);
	r->tflops = r->time_s > 0 ? r->flops / r->time_s / 1e12 : 0;
	r->peak_frac = r->peak_flops > 0 && r->flops > 0 ? r->flops / r->time_s / r->peak_flops : 0;
	return 0;
}

int dm_predict(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *explain, char *why,
               size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	return predict(c, op, r, explain, why, whylen);
}

/* ------------------------------------------------------------------ */
/* memo: open addressing on (chip, canonical op text)                   */

struct memo {
	const struct arch_chip *chip;
	uint64_t h;
	char *key;
	struct dm_result r;
};
static struct memo *memo_tab;
static size_t memo_cap, memo_n;

static uint64_t fnv(const char *s, const void *p)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)p;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int memo_grow(void)
{
	size_t cap = memo_cap ? memo_cap * 2 : 1024;
	struct memo *t = calloc(cap, sizeof *t);
	if (!t)
		return -1;
	for (size_t i = 0; i < memo_cap; i++)
		if (memo_tab[i].key) {
			size_t j = memo_tab[i].h & (cap - 1);
			while (t[j].key)
				j = (j + 1) & (cap - 1);
			t[j] = memo_tab[i];
		}
	free(memo_tab);
	memo_tab = t, memo_cap = cap;
	return 0;
}

int dm_predict_cached(const struct arch_chip *c, const struct op *op, struct dm_result *r, char *why, size_t whylen)
{
	char key[512];
	op_format(op, key, sizeof key);
	uint64_t h = fnv(key, c);
	if (memo_cap) {
		for (size_t j = h & (memo_cap - 1); memo_tab[j].key; j = (j + 1) & (memo_cap - 1))
			if (memo_tab[j].h == h && memo_tab[j].chip == c && !strcmp(memo_tab[j].key, key)) {
				*r = memo_tab[j].r;
				return 0;
			}
	}
	if (dm_predict(c, op, r, NULL, why, whylen))
		return -1;
	if ((memo_n + 1) * 2 > memo_cap && memo_grow())
		return 0; /* no room to remember: still a valid answer */
	size_t j = h & (memo_cap - 1);
	while (memo_tab[j].key)
		j = (j + 1) & (memo_cap - 1);
	memo_tab[j].key = strdup(key);
	if (!memo_tab[j].key)
		return 0;
	memo_tab[j].chip = c, memo_tab[j].h = h, memo_tab[j].r = *r;
	memo_n++;
	return 0;
}

void dm_cache_clear(void)
{
	for (size_t i = 0; i < memo_cap; i++)
		free(memo_tab[i].key);
	free(memo_tab);
	memo_tab = NULL, memo_cap = memo_n = 0;
}
