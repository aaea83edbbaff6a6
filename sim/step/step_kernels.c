/*
 * step_kernels.c -- the instruction streams the stepper replays, generated
 * from the kernel the device model picked (struct dm_iter) and the unit's
 * pipes and latencies:
 *
 *   GEMM, synchronous matrix units (Volta..Ada mma.sync, CDNA MFMA): a
 *     multistage cp.async pipeline (CUTLASS "multistage"): wait for the
 *     oldest stage, bar.sync, copy the stage S-1 tiles ahead, then per k-step
 *     ldmatrix A and B fragments (double-buffered in registers) and the warp
 *     tile's mma instructions;
 *   GEMM, asynchronous matrix units (Hopper wgmma): warp-specialized, one
 *     producer warp issuing TMA loads into S stages guarded by mbarriers,
 *     consumer warpgroups issuing wgmma and releasing a stage when the
 *     wgmma group that read it has completed (one group kept in flight);
 *   GEMM on vector lanes (no matrix unit for the dtype): LDS + FFMA;
 *   FlashAttention-2 forward (mma.sync): S = Q K^T, the online softmax
 *     (scale, row max, exp on the SFU, row sum, packing P to 16 bits,
 *     rescaling O) and O += P V, two barriers per block of keys;
 *   FlashAttention-3 forward (wgmma): producer warp with TMA, two consumer
 *     warpgroups; S_j and P_{j-1} V_{j-1} run on the tensor cores while the
 *     softmax of block j runs on the lanes and the SFU;
 *   elementwise: vector loads per input stream, the lane and SFU work of
 *     the op per element, a vector store, in a grid-stride loop.
 *
 * The work per iteration (MACs, bytes, lane and SFU operations per score or
 * element) is the model's; only the order, the dependencies and the
 * contention are the stepper's own.
 */
#include "step_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double dmx(double a, double b)
{
	return a > b ? a : b;
}

int prog_name(struct step_prog *p, const char *name)
{
	for (int i = 0; i < p->nnames; i++)
		if (!strcmp(p->names[i], name))
			return i;
	if (p->nnames == STEP_MAX_NAMES)
		return STEP_MAX_NAMES - 1;
	snprintf(p->names[p->nnames], sizeof p->names[0], "%s", name);
	return p->nnames++;
}

static int reg_of(int r)
{
	return r < 0 ? -1 : r % STEP_MAX_REGS;
}

int prog_emit(struct step_prog *p, int op, int pipe, int cls, const char *name, int dst, int s0, int s1, int s2,
              double ii, double lat, int arg, double bytes)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 256;
		struct step_inst *in = realloc(p->in, (size_t)cap * sizeof *in);
		if (!in)
			return -1;
		p->in = in, p->cap = cap;
	}
	struct step_inst *x = &p->in[p->n++];
	memset(x, 0, sizeof *x);
	x->op = (uint8_t)op, x->pipe = (uint8_t)pipe, x->cls = (uint8_t)cls;
	x->name = (uint8_t)prog_name(p, name);
	x->dst = (int16_t)reg_of(dst);
	x->src[0] = (int16_t)reg_of(s0), x->src[1] = (int16_t)reg_of(s1), x->src[2] = (int16_t)reg_of(s2);
	x->ii = (float)ii, x->lat = (float)lat, x->arg = (int16_t)arg, x->bytes = (float)bytes;
	return 0;
}

/* What the generators share: the unit's rates and latencies. */
struct kc {
	struct step_sim *s;
	const struct dm_iter *it;
	const struct arch_unit *u;
	double ea;     /* operand bytes */
	int W;         /* warp size */
	double ii_alu; /* cycles a warp's lane instruction occupies its scheduler's lanes */
	double ii_sfu; /* ... the SFU (on the lanes, 4 times longer, where the unit has none) */
	int sfu_pipe;
	double rate; /* matrix (or lane) MACs per clock per scheduler */
	int nreg;    /* next free virtual register */
	int err;
};

static int regs(struct kc *k, int n)
{
	int r = k->nreg;
	k->nreg += n;
	return r;
}

#define E(p, ...)                                                                                                      \
	do {                                                                                                           \
		if (prog_emit(p, __VA_ARGS__))                                                                         \
			k->err = 1;                                                                                    \
	} while (0)

static void alu(struct kc *k, struct step_prog *p, const char *nm, int d, int a, int b)
{
	E(p, I_ALU, SP_ALU, 'A', nm, d, a, b, -1, k->ii_alu, k->u->lat_alu, 0, 0);
}
static void sfu(struct kc *k, struct step_prog *p, const char *nm, int d, int a, int b)
{
	E(p, I_SFU, k->sfu_pipe, 'X', nm, d, a, b, -1, k->ii_sfu, k->u->lat_sfu, 0, 0);
}
static void shfl(struct kc *k, struct step_prog *p, int d, int a)
{
	E(p, I_SHFL, SP_LSU, 'S', "shfl.bfly", d, a, -1, -1, 1, k->u->lat_smem, 0, 0);
}
static void lds(struct kc *k, struct step_prog *p, const char *nm, int d, double bytes)
{
	double ii = bytes / k->u->smem_Bpc;
	E(p, I_LDS, SP_LSU, 'L', nm, d, -1, -1, -1, ii, ii + k->u->lat_smem, 0, bytes);
}
static void mma(struct kc *k, struct step_prog *p, const char *nm, int d, int a, int b, int c, double macs)
{
	double ii = macs / k->rate;
	E(p, I_MMA, SP_TENSOR, 'M', nm, d, a, b, c, ii, ii + k->u->lat_mma, 0, 0);
}
static void ctl(struct kc *k, struct step_prog *p, int op, const char *nm, int arg)
{
	E(p, op, SP_NONE, op == I_BAR ? 'B' : 'C', nm, -1, -1, -1, -1, 0, 0, arg, 0);
}
static void mem(struct kc *k, struct step_prog *p, int op, const char *nm, int d, int s0, int arg, double bytes)
{
	E(p, op, SP_MEM, 'G', nm, d, s0, -1, -1, 0, 0, arg, bytes);
}

static void body_begin(struct step_prog *p)
{
	p->body = p->n;
}
static void body_end(struct kc *k, struct step_prog *p)
{
	ctl(k, p, I_BRA, "bra (loop)", 0);
	p->end = p->n;
}

/* ------------------------------------------------------------------ */
/* GEMM                                                                 */

/* The matrix instruction of a warp: rows x cols x k, its name. */
struct mshape {
	int rows, cols, kk;
	char name[28];
	char ldname[28];
	int ld_rows; /* rows (A) or columns (B) one fragment load covers */
};

static void mshape_of(const struct kc *k, struct mshape *m)
{
	if (k->W >= 64) { /* CDNA MFMA 32x32xK */
		m->rows = 32, m->cols = 32, m->kk = (int)dmx(1, 16 / k->ea), m->ld_rows = 32;
		snprintf(m->name, sizeof m->name, "mfma.32x32x%d", m->kk);
		snprintf(m->ldname, sizeof m->ldname, "ds_read.b128");
	} else if (k->ea >= 8) { /* fp64 */
		m->rows = 8, m->cols = 8, m->kk = 4, m->ld_rows = 8;
		snprintf(m->name, sizeof m->name, "mma.m8n8k4");
		snprintf(m->ldname, sizeof m->ldname, "lds.64");
	} else {
		m->rows = 16, m->cols = 8, m->kk = (int)dmx(1, 32 / k->ea), m->ld_rows = 16;
		snprintf(m->name, sizeof m->name, "mma.m16n8k%d", m->kk);
		snprintf(m->ldname, sizeof m->ldname, "ldmatrix.x4");
	}
}

static int cdiv_i(double a, double b)
{
	return (int)ceil(a / b - 1e-9);
}

/* Copies of one CTA's tile split over its warps: count per warp, bytes each (16 B per thread). */
static int copies(const struct kc *k, double cta_bytes, int warps, double *each)
{
	double per_warp = cta_bytes / warps;
	int n = (int)dmx(1, cdiv_i(per_warp, 16.0 * k->W));
	*each = per_warp / n;
	return n;
}

static void store_tile(struct kc *k, struct step_prog *p, double bytes, int acc, int nacc)
{
	int n = (int)dmx(1, cdiv_i(bytes, 16.0 * k->W));
	for (int i = 0; i < n; i++)
		mem(k, p, I_STG, "st.global.v4", -1, acc + (nacc > 0 ? i % nacc : 0), 0, bytes / n);
}

/* The cp.async multi-stage pipeline around a main loop: S-1 stages issued
   before the loop; each iteration waits for its oldest stage, synchronizes
   the CTA and issues the stage S-1 tiles ahead. */
static void cp_pipeline(struct kc *k, struct step_prog *p, int S, int ncp, double cpb)
{
	for (int st = 0; st < S - 1; st++) { /* prologue: S-1 stages in flight */
		for (int i = 0; i < ncp; i++)
			mem(k, p, I_CPASYNC, "cp.async.cg.16", -1, -1, st, cpb);
		ctl(k, p, I_CPCOMMIT, "cp.async.commit_group", 0);
	}
	body_begin(p);
	char wait[40];
	snprintf(wait, sizeof wait, "cp.async.wait_group %d", S - 2);
	ctl(k, p, I_CPWAIT, wait, S - 2);
	ctl(k, p, I_BAR, "bar.sync", 0);
	for (int i = 0; i < ncp; i++)
		mem(k, p, I_CPASYNC, "cp.async.cg.16", -1, -1, S - 1, cpb);
	ctl(k, p, I_CPCOMMIT, "cp.async.commit_group", 0);
}

static void gemm_sync(struct kc *k)
{
	struct step_sim *s = k->s;
	const struct dm_iter *it = k->it;
	struct step_prog *p = &s->progs[0];
	int bm = it->tile_m, bn = it->tile_n, bk = it->tile_k, S = it->stages, Wc = it->warps;
	/* warp tile: bm x bn over the warps, at most 64 rows */
	double area = (double)bm * bn / Wc;
	double wm = dmx(1, fmin(bm, 64)), wn = area / wm;
	if (wn > bn)
		wn = bn, wm = area / bn;
	struct mshape m;
	mshape_of(k, &m);
	int na = (int)dmx(1, cdiv_i(wm, m.rows)), nn = (int)dmx(1, cdiv_i(wn, m.cols));
	int nb = (int)dmx(1, cdiv_i(wn, m.ld_rows));
	int ks = (int)dmx(1, bk / m.kk);
	double macs = (double)m.rows * m.cols * m.kk;
	double a_bytes = m.rows * m.kk * k->ea, b_bytes = m.ld_rows * m.kk * k->ea;
	int acc = regs(k, na * nn), fa = regs(k, 2 * na), fb = regs(k, 2 * nb);
	double cpb;
	int ncp = copies(k, it->bytes_it, Wc, &cpb);
	cp_pipeline(k, p, S, ncp, cpb);
	for (int kx = 0; kx <= ks; kx++) {
		if (kx < ks) { /* fragments of k-step kx into buffer kx % 2 */
			int buf = kx % 2;
			for (int a = 0; a < na; a++)
				lds(k, p, m.ldname, fa + buf * na + a, a_bytes);
			for (int b = 0; b < nb; b++)
				lds(k, p, m.ldname, fb + buf * nb + b, b_bytes);
		}
		if (kx == 0)
			continue;
		int q = kx - 1, buf = q % 2; /* the mmas of the previous k-step, after the next step's loads */
		for (int a = 0; a < na; a++)
			for (int n = 0; n < nn; n++) {
				int c = acc + a * nn + n;
				mma(k, p, m.name, c, fa + buf * na + a, fb + buf * nb + n * nb / nn, c, macs);
			}
	}
	body_end(k, p);
	ctl(k, p, I_CPWAIT, "cp.async.wait_group 0", 0);
	store_tile(k, p, wm * wn * (k->ea >= 4 ? 4 : 2), acc, na * nn);
	ctl(k, p, I_EXIT, "exit", 0);
	s->cta_nw = Wc, s->cta_barw = Wc, s->cta_consumers = 0, s->marker_wid = 0;
	memset(s->wprog, 0, sizeof s->wprog);
	snprintf(s->shape, sizeof s->shape, "warp tile %.0fx%.0f: %d x %s per k-step of %d, %d k-steps per tile", wm,
	         wn, na * nn, m.name, m.kk, ks);
}

static void gemm_vector(struct kc *k)
{
	struct step_sim *s = k->s;
	const struct dm_iter *it = k->it;
	struct step_prog *p = &s->progs[0];
	int bm = it->tile_m, bn = it->tile_n, bk = it->tile_k, S = it->stages, Wc = it->warps;
	double area = (double)bm * bn / Wc;
	double wm = dmx(1, fmin(bm, 64)), wn = area / wm;
	if (wn > bn)
		wn = bn, wm = area / bn;
	int nf = (int)dmx(1, area / k->W); /* FMAs per thread per k */
	int acc = regs(k, nf < 128 ? nf : 128), fa = regs(k, 2), fb = regs(k, 2);
	double cpb;
	int ncp = copies(k, it->bytes_it, Wc, &cpb);
	cp_pipeline(k, p, S, ncp, cpb);
	for (int kx = 0; kx < bk; kx++) {
		int buf = kx % 2;
		lds(k, p, "lds.128", fa + buf, wm * k->ea); /* the warp's A column and B row (broadcast reads) */
		lds(k, p, "lds.128", fb + buf, wn * k->ea);
		for (int f = 0; f < nf; f++) {
			int c = acc + f % 128;
			E(p, I_MMA, SP_ALU, 'A', "ffma", c, fa + buf, fb + buf, c, k->ii_alu, k->u->lat_alu, 0, 0);
		}
	}
	body_end(k, p);
	ctl(k, p, I_CPWAIT, "cp.async.wait_group 0", 0);
	store_tile(k, p, wm * wn * (k->ea >= 4 ? 4 : 2), acc, nf < 128 ? nf : 128);
	ctl(k, p, I_EXIT, "exit", 0);
	s->cta_nw = Wc, s->cta_barw = Wc, s->cta_consumers = 0, s->marker_wid = 0;
	memset(s->wprog, 0, sizeof s->wprog);
	snprintf(s->shape, sizeof s->shape, "warp tile %.0fx%.0f on the lanes: %d ffma per k", wm, wn, nf);
}

static void gemm_async(struct kc *k)
{
	struct step_sim *s = k->s;
	const struct dm_iter *it = k->it;
	struct step_prog *pr = &s->progs[0], *p = &s->progs[1];
	int bm = it->tile_m, bn = it->tile_n, bk = it->tile_k;
	int cons = ((it->warps + 3) / 4) * 4; /* whole warpgroups */
	int kk = (int)dmx(1, 32 / k->ea), ks = (int)dmx(1, bk / kk);
	double area = (double)bm * bn / cons; /* output elements per consumer warp */
	int N = bn < 256 ? bn : 256;
	int nins = (int)dmx(1, area / (16.0 * N));
	double macs = area * kk / nins;
	char name[28];
	snprintf(name, sizeof name, "wgmma.m64n%dk%d", N & 1023, kk & 255);
	/* producer: one TMA load of the A and B tiles per stage */
	snprintf(pr->role, sizeof pr->role, "producer");
	body_begin(pr);
	E(pr, I_TMA, SP_MEM, 'G', "tma.load (A,B tiles)", -1, -1, -1, -1, 0, 0, 0, it->bytes_it);
	body_end(k, pr);
	ctl(k, pr, I_EXIT, "exit", 0);
	/* consumers */
	snprintf(p->role, sizeof p->role, "consumer");
	int acc = regs(k, 32);
	body_begin(p);
	E(p, I_MBWAIT, SP_NONE, 'C', "mbarrier.wait (full)", -1, -1, -1, -1, 0, 0, 0, 0);
	for (int kx = 0; kx < ks; kx++)
		for (int i = 0; i < nins; i++)
			E(p, I_WGMMA, SP_TENSOR, 'M', name, -1, -1, -1, -1, macs / k->rate, k->u->lat_mma, 0, 0);
	ctl(k, p, I_WGCOMMIT, "wgmma.commit_group", 0);
	ctl(k, p, I_WGWAIT, "wgmma.wait_group 1", 1);
	E(p, I_MBARRIVE, SP_NONE, 'C', "mbarrier.arrive (empty)", -1, -1, -1, -1, 0, 0, -1, 0);
	body_end(k, p);
	ctl(k, p, I_WGWAIT, "wgmma.wait_group 0", 0);
	E(p, I_MBARRIVE, SP_NONE, 'C', "mbarrier.arrive (empty)", -1, -1, -1, -1, 0, 0, -1, 0);
	store_tile(k, p, area * 2, acc, 32);
	ctl(k, p, I_EXIT, "exit", 0);
	s->cta_nw = cons + 1, s->cta_barw = cons + 1, s->cta_consumers = cons, s->marker_wid = 1;
	memset(s->wprog, 1, sizeof s->wprog);
	s->wprog[0] = 0;
	snprintf(s->shape, sizeof s->shape,
	         "%d consumer warps (%d warpgroups) + 1 producer warp: %d x %s per warp per k-step of %d, %d k-steps",
	         cons, cons / 4, nins, name, kk, ks);
}

/* ------------------------------------------------------------------ */
/* FlashAttention forward                                               */

#define NPART 4 /* partial accumulators of a row reduction */

struct soft {
	int part;            /* partial accumulators: rows x NPART */
	int ns;              /* scores per thread */
	int sc, sacc, nsacc; /* score registers; the S accumulators they come from */
	int rows, rmax, rsum, rscale, tmp;
	int pf, npf;            /* P fragments (16-bit) */
	int oacc, noacc, nresc; /* O accumulators; rescale multiplications per thread */
};

/* The online softmax of one block of keys: per score the model's lane and SFU operations. */
static void softmax(struct kc *k, struct step_prog *p, const struct soft *x, int with_rescale)
{
	const struct dm_iter *it = k->it;
	int per_row = x->ns / x->rows > 0 ? x->ns / x->rows : 1;
	int extra = (int)dmx(0, floor(it->lane_item + 0.5) - 4); /* beyond scale, max, exp argument, sum */
	for (int i = 0; i < x->ns; i++)
		alu(k, p, "fmul (scale)", x->sc + i, x->sacc + (i * x->nsacc) / x->ns, -1);
	for (int e = 0; e < extra; e++)
		for (int i = 0; i < x->ns; i++)
			alu(k, p, "fsel (mask)", x->sc + i, x->sc + i, -1);
	/* row max and row sum: NPART partial accumulators per row (the compiler reassociates them under
	   fast-math, as FlashAttention is built), combined pairwise */
	for (int i = 0; i < x->ns; i++) {
		int r = (i / per_row) % x->rows, q = (i % per_row) % NPART;
		int a = q ? x->part + r * NPART + q : x->rmax + r;
		alu(k, p, "fmnmx (row max)", a, a, x->sc + i);
	}
	for (int r = 0; r < x->rows; r++)
		for (int q = 1; q < NPART; q++)
			alu(k, p, "fmnmx (row max)", x->rmax + r, x->rmax + r, x->part + r * NPART + q);
	for (int r = 0; r < x->rows; r++)
		for (int q = 0; q < 2; q++) { /* the quad of threads holding a row */
			shfl(k, p, x->tmp + r, x->rmax + r);
			alu(k, p, "fmnmx (row max)", x->rmax + r, x->rmax + r, x->tmp + r);
		}
	for (int r = 0; r < x->rows; r++) {
		alu(k, p, "fadd (max change)", x->rscale + r, x->rmax + r, -1);
		sfu(k, p, "mufu.ex2", x->rscale + r, x->rscale + r, -1);
	}
	/* exp, row sum and packing, software-pipelined as the compiler schedules the loop: score i's
	   ffma and ex2 beside the sum of score i - LAG and the packing of earlier pairs, with the
	   rescaling of O (which needs only the max change) filling the lane slots the SFU leaves */
	int npack = (int)floor(x->ns * (it->sfu_item - 1) + 0.5);
	int lag = 4, packed = 0, resc = with_rescale ? 0 : x->nresc;
	for (int i = 0; i < x->ns + lag; i++) {
		if (i < x->ns) {
			alu(k, p, "ffma (x - max)", x->sc + i, x->sc + i, x->rmax + (i / per_row) % x->rows);
			sfu(k, p, "mufu.ex2", x->sc + i, x->sc + i, -1);
		}
		int j = i - lag;
		if (j >= 0) {
			int r = (j / per_row) % x->rows, q = (j % per_row) % NPART;
			int a = q ? x->part + r * NPART + q : x->rsum + r;
			alu(k, p, "fadd (row sum)", a, a, x->sc + j);
			for (; packed < npack && 2 * packed + 1 <= j; packed++) {
				int pa = x->sc + (2 * packed) % x->ns, pb = x->sc + (2 * packed + 1) % x->ns;
				sfu(k, p, "f2f.f16x2 (pack P)", x->pf + (packed * x->npf) / (npack ? npack : 1), pa,
				    pb);
			}
		}
		for (int n = 0; n < 2 && resc < x->nresc; n++, resc++) {
			int o = x->oacc + resc % x->noacc;
			alu(k, p, "fmul (rescale O)", o, o, x->rscale + (resc * x->rows) / x->nresc);
		}
	}
	for (; packed < npack; packed++) {
		int pa = x->sc + (2 * packed) % x->ns, pb = x->sc + (2 * packed + 1) % x->ns;
		sfu(k, p, "f2f.f16x2 (pack P)", x->pf + (packed * x->npf) / (npack ? npack : 1), pa, pb);
	}
	for (; resc < x->nresc; resc++) {
		int o = x->oacc + resc % x->noacc;
		alu(k, p, "fmul (rescale O)", o, o, x->rscale + (resc * x->rows) / x->nresc);
	}
	for (int r = 0; r < x->rows; r++)
		for (int q = 1; q < NPART; q++)
			alu(k, p, "fadd (row sum)", x->rsum + r, x->rsum + r, x->part + r * NPART + q);
}

static void rescale(struct kc *k, struct step_prog *p, const struct soft *x)
{
	for (int i = 0; i < x->nresc; i++) {
		int o = x->oacc + i % x->noacc;
		alu(k, p, "fmul (rescale O)", o, o, x->rscale + (i * x->rows) / x->nresc);
	}
}

static void soft_regs(struct kc *k, struct soft *x, int rows_warp, int bc, int d, int nsacc, int noacc, int npf)
{
	x->ns = rows_warp * bc / k->W;
	x->rows = (int)dmx(1, rows_warp * 2 / 16); /* each thread holds 2 rows of each 16-row fragment */
	x->sc = regs(k, x->ns), x->sacc = regs(k, nsacc), x->nsacc = nsacc;
	x->rmax = regs(k, x->rows), x->rsum = regs(k, x->rows), x->rscale = regs(k, x->rows), x->tmp = regs(k, x->rows);
	x->part = regs(k, x->rows * NPART);
	x->pf = regs(k, npf), x->npf = npf;
	x->oacc = regs(k, noacc), x->noacc = noacc;
	x->nresc = (int)floor(k->it->lane_row * rows_warp * d / k->W + 0.5);
}

static void attn_sync(struct kc *k)
{
	struct step_sim *s = k->s;
	const struct dm_iter *it = k->it;
	struct step_prog *p = &s->progs[0];
	int br = it->tile_m, bc = it->tile_n, d = it->tile_k, Wc = it->warps;
	int rw = br / Wc; /* query rows per warp */
	struct mshape m;
	mshape_of(k, &m);
	int na = (int)dmx(1, rw / m.rows);
	int kS = (int)dmx(1, d / m.kk), nS = (int)dmx(1, bc / m.cols), nbS = (int)dmx(1, bc / m.ld_rows);
	int kP = (int)dmx(1, bc / m.kk), nP = (int)dmx(1, d / m.cols), nbP = (int)dmx(1, d / m.ld_rows);
	double macs = (double)m.rows * m.cols * m.kk, ldb = m.ld_rows * m.kk * k->ea;
	struct soft x;
	int qf = regs(k, na * kS), kf = regs(k, 2 * nbS), vf = regs(k, 2 * nbP);
	soft_regs(k, &x, rw, bc, d, na * nS, na * nP, na * kP);
	double kvb = (double)bc * d * k->ea, cpb;
	int ncp = copies(k, kvb, Wc, &cpb);
	/* prologue: Q and K_0 */
	double qb;
	int nq = copies(k, (double)br * d * k->ea, Wc, &qb);
	for (int i = 0; i < nq; i++)
		mem(k, p, I_CPASYNC, "cp.async.cg.16 (Q)", -1, -1, 0, qb);
	for (int i = 0; i < ncp; i++)
		mem(k, p, I_CPASYNC, "cp.async.cg.16 (K)", -1, -1, 0, cpb);
	ctl(k, p, I_CPCOMMIT, "cp.async.commit_group", 0);
	ctl(k, p, I_CPWAIT, "cp.async.wait_group 0", 0);
	ctl(k, p, I_BAR, "bar.sync", 0);
	for (int i = 0; i < na * kS; i++)
		lds(k, p, m.ldname, qf + i, ldb);
	body_begin(p);
	ctl(k, p, I_CPWAIT, "cp.async.wait_group 0", 0);
	ctl(k, p, I_BAR, "bar.sync", 0);
	for (int i = 0; i < ncp; i++)
		mem(k, p, I_CPASYNC, "cp.async.cg.16 (V)", -1, -1, 0, cpb);
	ctl(k, p, I_CPCOMMIT, "cp.async.commit_group", 0);
	for (int kx = 0; kx <= kS; kx++) { /* S = Q K^T */
		if (kx < kS)
			for (int b = 0; b < nbS; b++)
				lds(k, p, m.ldname, kf + (kx % 2) * nbS + b, ldb);
		if (kx == 0)
			continue;
		int q = kx - 1;
		for (int a = 0; a < na; a++)
			for (int n = 0; n < nS; n++) {
				int c = x.sacc + a * nS + n;
				mma(k, p, m.name, c, qf + a * kS + q, kf + (q % 2) * nbS + n * nbS / nS, q ? c : -1,
				    macs);
			}
	}
	ctl(k, p, I_CPWAIT, "cp.async.wait_group 0", 0);
	ctl(k, p, I_BAR, "bar.sync", 0);
	for (int i = 0; i < ncp; i++)
		mem(k, p, I_CPASYNC, "cp.async.cg.16 (K next)", -1, -1, 1, cpb);
	ctl(k, p, I_CPCOMMIT, "cp.async.commit_group", 0);
	softmax(k, p, &x, 1); /* with the rescaling of O */
	char ldt[48];
	snprintf(ldt, sizeof ldt, "%s.trans", m.ldname);
	for (int kx = 0; kx <= kP; kx++) { /* O += P V */
		if (kx < kP)
			for (int b = 0; b < nbP; b++)
				lds(k, p, ldt, vf + (kx % 2) * nbP + b, ldb);
		if (kx == 0)
			continue;
		int q = kx - 1;
		for (int a = 0; a < na; a++)
			for (int n = 0; n < nP; n++) {
				int c = x.oacc + a * nP + n;
				mma(k, p, m.name, c, x.pf + a * kP + q, vf + (q % 2) * nbP + n * nbP / nP, c, macs);
			}
	}
	body_end(k, p);
	for (int r = 0; r < x.rows; r++)
		sfu(k, p, "mufu.rcp (1/sum)", x.rscale + r, x.rsum + r, -1);
	rescale(k, p, &x);
	store_tile(k, p, (double)rw * d * k->ea, x.oacc, x.noacc);
	ctl(k, p, I_EXIT, "exit", 0);
	s->cta_nw = Wc, s->cta_barw = Wc, s->cta_consumers = 0, s->marker_wid = 0;
	memset(s->wprog, 0, sizeof s->wprog);
	snprintf(s->shape, sizeof s->shape,
	         "%d query rows per warp, %d scores per thread; per block of keys %d + %d x %s, %g lane and %g SFU "
	         "operations per score",
	         rw, x.ns, na * nS * kS, na * nP * kP, m.name, it->lane_item, it->sfu_item);
}

static void attn_async(struct kc *k)
{
	struct step_sim *s = k->s;
	const struct dm_iter *it = k->it;
	struct step_prog *pr = &s->progs[0], *p = &s->progs[1], *idle = &s->progs[2];
	int br = it->tile_m, bc = it->tile_n, d = it->tile_k;
	int groups = br / 64 > 1 ? br / 64 : 1; /* consumer warpgroups: m64 each (FlashAttention-3's tile) */
	int cons = 4 * groups;
	int rw = br / cons; /* 16 query rows per warp */
	int kk = (int)dmx(1, 32 / k->ea);
	int nSi = (int)dmx(1, d / kk), nPi = (int)dmx(1, bc / kk);
	double macS = (double)rw * bc * kk, macP = (double)rw * d * kk;
	char nS[28], nP[28];
	snprintf(nS, sizeof nS, "wgmma.m64n%dk%d (S)", bc, kk);
	snprintf(nP, sizeof nP, "wgmma.m64n%dk%d (PV)", d, kk);
	double kvb = (double)bc * d * k->ea;
	snprintf(pr->role, sizeof pr->role, "producer");
	body_begin(pr);
	E(pr, I_TMA, SP_MEM, 'G', "tma.load (K)", -1, -1, -1, -1, 0, 0, 0, kvb);
	pr->in[pr->n - 1].ch = 0;
	E(pr, I_TMA, SP_MEM, 'G', "tma.load (V)", -1, -1, -1, -1, 0, 0, 0, kvb);
	pr->in[pr->n - 1].ch = 1;
	body_end(k, pr);
	ctl(k, pr, I_EXIT, "exit", 0);
	snprintf(idle->role, sizeof idle->role, "idle");
	ctl(k, idle, I_EXIT, "exit (setmaxnreg)", 0);
	idle->body = idle->end = 0;
	snprintf(p->role, sizeof p->role, "consumer");
	struct soft x;
	soft_regs(k, &x, rw, bc, d, 16, 32, 16);
	int q = regs(k, 1);
	mem(k, p, I_LDG, "ld.global (Q)", q, -1, 0, (double)rw * d * k->ea);
	body_begin(p);
	/* ping-pong: a warpgroup issues its GEMMs after the other one has issued its own, so that one's
	   softmax runs while the other's GEMMs occupy the tensor cores (FlashAttention-3, section 3.1) */
	ctl(k, p, I_PPWAIT, "bar.sync (warpgroup turn)", 0);
	E(p, I_MBWAIT, SP_NONE, 'C', "mbarrier.wait (K full)", -1, -1, -1, -1, 0, 0, 0, 0);
	for (int i = 0; i < nSi; i++)
		E(p, I_WGMMA, SP_TENSOR, 'M', nS, -1, q, -1, -1, macS / k->rate, k->u->lat_mma, 0, 0);
	ctl(k, p, I_WGCOMMIT, "wgmma.commit_group", 0);
	E(p, I_MBWAIT, SP_NONE, 'C', "mbarrier.wait (V full)", -1, -1, -1, -1, 0, 0, -1, 0);
	p->in[p->n - 1].ch = 1;
	for (int i = 0; i < nPi; i++) { /* P_{j-1} V_{j-1}: none before the first block */
		E(p, I_WGMMA, SP_TENSOR, 'M', nP, -1, x.pf + i % x.npf, -1, -1, macP / k->rate, k->u->lat_mma, -1, 0);
	}
	ctl(k, p, I_WGCOMMIT, "wgmma.commit_group", 0);
	ctl(k, p, I_PPARRIVE, "bar.arrive (other warpgroup's turn)", 0);
	ctl(k, p, I_WGWAIT, "wgmma.wait_group 1", 1);
	E(p, I_MBARRIVE, SP_NONE, 'C', "mbarrier.arrive (K empty)", -1, -1, -1, -1, 0, 0, 0, 0);
	softmax(k, p, &x, 0); /* O is rescaled once P_{j-1} V_{j-1} is done */
	ctl(k, p, I_WGWAIT, "wgmma.wait_group 0", 0);
	E(p, I_MBARRIVE, SP_NONE, 'C', "mbarrier.arrive (V empty)", -1, -1, -1, -1, 0, 0, -1, 0);
	p->in[p->n - 1].ch = 1;
	rescale(k, p, &x);
	body_end(k, p);
	ctl(k, p, I_PPWAIT, "bar.sync (warpgroup turn)", 0);
	E(p, I_MBWAIT, SP_NONE, 'C', "mbarrier.wait (V full)", -1, -1, -1, -1, 0, 0, -1, 0);
	p->in[p->n - 1].ch = 1;
	for (int i = 0; i < nPi; i++) {
		E(p, I_WGMMA, SP_TENSOR, 'M', nP, -1, x.pf + i % x.npf, -1, -1, macP / k->rate, k->u->lat_mma, -1, 0);
	}
	ctl(k, p, I_WGCOMMIT, "wgmma.commit_group", 0);
	ctl(k, p, I_PPARRIVE, "bar.arrive (other warpgroup's turn)", 0);
	ctl(k, p, I_WGWAIT, "wgmma.wait_group 0", 0);
	E(p, I_MBARRIVE, SP_NONE, 'C', "mbarrier.arrive (V empty)", -1, -1, -1, -1, 0, 0, -1, 0);
	p->in[p->n - 1].ch = 1;
	for (int r = 0; r < x.rows; r++)
		sfu(k, p, "mufu.rcp (1/sum)", x.rscale + r, x.rsum + r, -1);
	rescale(k, p, &x);
	store_tile(k, p, (double)rw * d * k->ea, x.oacc, x.noacc);
	ctl(k, p, I_EXIT, "exit", 0);
	/* warp 0: producer; 1-3: the rest of the producer warpgroup (idle); 4 on: consumers, 4 warps a group */
	s->cta_nw = 4 + cons, s->cta_barw = 4 + cons, s->cta_consumers = cons, s->marker_wid = 4;
	memset(s->wprog, 1, sizeof s->wprog);
	s->wprog[0] = 0, s->wprog[1] = s->wprog[2] = s->wprog[3] = 2;
	for (int i = 0; i < 64; i++)
		s->wwg[i] = (uint8_t)(i >= 4 && i < 4 + cons ? (i - 4) / 4 : 0);
	s->pp_groups = groups;
	snprintf(s->shape, sizeof s->shape,
	         "producer warp (TMA) + %d consumer warpgroups of %d query rows; per block of keys %d + %d x wgmma per "
	         "warp, %d scores per thread",
	         groups, 4 * rw, nSi, nPi, x.ns);
}

/* ------------------------------------------------------------------ */
/* elementwise                                                          */

static void elem(struct kc *k, const struct op *op)
{
	struct step_sim *s = k->s;
	const struct dm_iter *it = k->it;
	struct step_prog *p = &s->progs[0];
	int Wc = it->warps, ept = it->tile_m > 0 ? it->tile_m : 1;
	double rd = it->bytes_it / Wc, wr = it->wbytes_it / Wc; /* per warp and iteration */
	double stream = 16.0 * k->W * ((double)ept * k->ea / 16.0);
	int nld = (int)dmx(1, floor(rd / stream + 0.5));
	int nl = (int)floor(it->lane_item + 0.5), nx = (int)floor(it->sfu_item + 0.5);
	int in = regs(k, nld), v = regs(k, ept);
	body_begin(p);
	for (int i = 0; i < nld; i++)
		mem(k, p, I_LDG, "ld.global.v4", in + i, -1, 0, rd / nld);
	for (int e = 0; e < ept; e++) /* unpack: the first operation of each element reads the loads */
		alu(k, p, "cvt/unpack", v + e, in, in + nld - 1);
	for (int q = 1; q < nl; q++)
		for (int e = 0; e < ept; e++)
			alu(k, p, "ffma", v + e, v + e, -1);
	for (int q = 0; q < nx; q++)
		for (int e = 0; e < ept; e++)
			sfu(k, p, "mufu.ex2", v + e, v + e, -1);
	if (wr > 0) {
		int nst = (int)dmx(1, floor(wr / stream + 0.5));
		for (int i = 0; i < nst; i++)
			mem(k, p, I_STG, "st.global.v4", -1, v + (i * ept) / nst, 0, wr / nst);
	}
	body_end(k, p);
	ctl(k, p, I_EXIT, "exit", 0);
	s->cta_nw = Wc, s->cta_barw = Wc, s->cta_consumers = 0, s->marker_wid = 0;
	memset(s->wprog, 0, sizeof s->wprog);
	snprintf(s->shape, sizeof s->shape,
	         "%s: %d elements per thread per iteration, %d load(s) of %.0f B per warp, %d lane and %d SFU "
	         "operations per element",
	         op_elem_name(op->elem), ept, nld, rd / nld, nl, nx);
}

int step_build(struct step_sim *s, const struct op *op, char *why, size_t wl)
{
	const struct dm_iter *it = &s->it;
	const struct arch_unit *u = s->unit;
	struct kc k = {0};
	k.s = s, k.it = it, k.u = u;
	k.W = (int)u->warp_size;
	k.ea = op->dtype >= 0 ? (op->dtype == DT_FP64                           ? 8
	                         : op->dtype == DT_FP32 || op->dtype == DT_TF32 ? 4
	                         : op->dtype == DT_FP8 || op->dtype == DT_INT8  ? 1
	                         : op->dtype == DT_FP4 || op->dtype == DT_INT4  ? 0.5
	                                                                        : 2)
	                      : 2;
	double nsch = (double)u->schedulers;
	double lanes = u->vec[DT_FP32] > 0 ? u->vec[DT_FP32] / nsch : k.W;
	k.ii_alu = k.W / lanes;
	if (u->sfu > 0)
		k.ii_sfu = k.W / (u->sfu / nsch), k.sfu_pipe = SP_SFU;
	else
		k.ii_sfu = 4 * k.ii_alu, k.sfu_pipe = SP_ALU; /* no SFU: about 4 lane operations */
	k.rate = it->macs_clk / nsch;
	if (k.rate <= 0)
		k.rate = lanes;
	for (int i = 0; i < 3; i++)
		memset(&s->progs[i], 0, sizeof s->progs[i]);
	s->nprogs = 1;
	switch (it->kind) {
	case OP_GEMM:
		if (!it->matrix) {
			k.rate = (it->macs_clk > 0 ? it->macs_clk : lanes * nsch) / nsch;
			k.ii_alu = k.W / k.rate;
			gemm_vector(&k);
		} else if (u->mat_async) {
			gemm_async(&k);
			s->nprogs = 2;
		} else
			gemm_sync(&k);
		s->stages = it->stages;
		break;
	case OP_ATTN:
		if (op->dir == DIR_BWD) {
			snprintf(why, wl, "attn dir=bwd: the stepper replays the forward pass (dir=fwd)");
			return -1;
		}
		if (op->impl == ATTN_FLASH3) {
			attn_async(&k);
			s->nprogs = 3;
		} else
			attn_sync(&k);
		s->stages = 2;
		break;
	case OP_ELEM:
		elem(&k, op);
		s->stages = 1;
		break;
	default: snprintf(why, wl, "%s has no main loop to step", op_kind_name(op->kind)); return -1;
	}
	if (k.err) {
		snprintf(why, wl, "out of memory building the instruction stream");
		return -1;
	}
	for (int i = 0; i < s->nprogs; i++)
		s->progs[i].nreg = k.nreg < STEP_MAX_REGS ? k.nreg : STEP_MAX_REGS;
	if (s->stages > STEP_MAX_STAGES)
		s->stages = STEP_MAX_STAGES;
	return 0;
}
