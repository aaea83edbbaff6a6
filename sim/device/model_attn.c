/*
 * model_attn.c -- attention: FlashAttention-2/-3 and the original FlashAttention
 * (-1) forward and backward, decode and paged decode (split-KV), and naive
 * attention as separate kernels.
 */
#include "model_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* attention                                                            */

/* Dropout inside a FlashAttention kernel (Dao et al. 2022, section 3.1): each score's keep bit comes from a
   counter-based Philox4x32 generator of 7 rounds (the kernels' philox.cuh, as Apex's FMHA; Dao in
   flash-attention issue #56), drawn again in the backward instead of stored. A call gives 128 random bits;
   FlashAttention-1 compares 16 of them per score (apply_dropout_16bits in fmha/softmax.h),
   FlashAttention-2 8. Integer lane ops: a round is two 32x32->64-bit multiplies (two multiply-adds each)
   and two three-input xors, 6 ops; a call is 7 rounds and the counter's setup (2 ops); per score, its bits
   unpacked and compared with the threshold (2 ops). */
#define PHILOX_ROUNDS    7
#define PHILOX_ROUND_OPS 6
#define PHILOX_CALL_OPS  (PHILOX_ROUNDS * PHILOX_ROUND_OPS + 2)

static double dropout_int_ops(const struct op *op, int bits_per_score)
{
	return op->dropout > 0 ? PHILOX_CALL_OPS / (128.0 / bits_per_score) + 2 : 0;
}

/* the select that zeroes a dropped score, a lane op: forward on P, backward on P and dP */
static double dropout_lane_ops(const struct op *op)
{
	return op->dropout > 0 ? (op->dir == DIR_BWD ? 2 : 1) : 0;
}

/* integer lanes per clock of a unit: its int32 pipe, else its fp32 lanes */
static double int_lanes(const struct arch_unit *u)
{
	return u->vec[DT_INT32] > 0 ? u->vec[DT_INT32] : u->vec[DT_FP32];
}

/* An inner step's time from its pipes' times (matrix, shared memory, exp and lane ops, integer ops: the
   integer pipe is one of its own): the longest, plus the share 1 - ov of the others that the warps do not overlap
   with it */
static double step_overlap(double t_mma, double t_smem, double other, double t_int, double ov)
{
	double tmax = dmax(dmax(t_mma, t_int), dmax(t_smem, other));
	return tmax + (1 - ov) * (t_mma + t_smem + other + t_int - tmax);
}

/* the explanation's words for the dropout's integer work ("" without dropout) */
static const char *drop_txt(const struct op *op, double t_int, char *buf, size_t len)
{
	buf[0] = '\0';
	if (op->dropout > 0)
		snprintf(buf, len, ", dropout %g: Philox on the integer pipe %.0f ns", op->dropout, t_int * 1e9);
	return buf;
}

int attn_flash(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	return attn_flash_it(c, op, r, ex, why, wl, NULL);
}

int attn_flash_it(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl,
                  struct dm_iter *it)
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
	double sfu_score = 1.5; /* exp, and the packed conversion of P to 16 bits (same pipe) */
	/* lane ops per score; per row and head dim (the rescale of O) */
	double lane_score = (bwd ? 6 : 5) + dropout_lane_ops(op), lane_row = bwd ? 0 : 1;
	double int_score = dropout_int_ops(op, 8);
	double ex_ops = (double)bo * bi * sfu_score;
	double lane = (double)bo * bi * lane_score + lane_row * bo * d;
	double rate = macs_clk * clock * c->model.mma_eff;
	double lanes = u->vec[DT_FP32] * clock, sfu = u->sfu > 0 ? u->sfu * clock : lanes / 4;
	double t_mma = mm / rate, t_sfu = lanes > 0 ? ex_ops / sfu : 0, t_vec = lanes > 0 ? lane / lanes : 0;
	double t_int = int_lanes(u) > 0 ? (double)bo * bi * int_score / (int_lanes(u) * clock) : 0;
	/* shared memory: every warp reads the streamed blocks for its rows (fwd: K and V; bwd: Q and dO
	   through five products); async matrix units read them once per warpgroup */
	double smem_it = (bwd ? 5.0 : 2.0) * (fa3 ? 2 : warps) * bi * d * ea;
	double t_smem = smem_it / (u->smem_Bpc * clock);
	/* pipes overlap as far as independent instructions allow: within a warp (ILP) and across the
	   warps sharing a scheduler; FlashAttention-3 overlaps them by design (ping-pong warpgroups) */
	double wps = occ * warps / (double)u->schedulers;
	double ov = fa3 ? 1 : 1 - 1 / (1 + wps);
	double other = t_sfu + t_vec;
	double t_it = step_overlap(t_mma, t_smem, other, t_int, ov);
	/* bytes per iteration through L2: the streamed blocks (+ dQ fp32 atomics in bwd) */
	double it_l2 = 2.0 * bi * d * ea + (bwd ? (double)bi * d * 4 * 2 : 0);
	double fly = 2.0 * bi * d * ea; /* one stage ahead */
	/* iterations per CTA: causal blocks stop at the diagonal (queries aligned to the end of keys) */
	long long total_it = 0, max_it = 0;
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
	/* device memory: Q, K, V, O (and dO, dQ, dK, dV, LSE in bwd), K/V re-read per head group if L2 is small */
	double q = (double)op->b * op->h * op->sq * d * ea, kv = 2.0 * op->b * op->hkv * op->skv * d * ea;
	double dram = bwd ? 3 * q + 2 * kv + (double)op->b * op->h * op->sq * 4 * 3 : 2 * q + kv;
	double l2 = (double)total_it * heads * it_l2 + dram;
	/* chiplets: a head's blocks are consecutive CTAs, so round-robin puts them on min(D, blocks) dies,
	   each of whose L2s fetches the streamed operand (fwd: K, V; bwd: Q, dO) once; of those fetches and
	   the rest, (n-1)/n is on another die. Unless the chip serves a repeated fetch on chip, it reads memory. */
	double fill = dram;
	if (ms.dies > 1) {
		double streamed = bwd ? 2 * q : kv;
		fill += (dmin((double)ms.dies, (double)nout) - 1) * streamed;
		if (!ms.dedup)
			dram = fill;
	}
	double d2d = ms.remote * fill;
	double t[B_COUNT] = {0};
	t[B_D2D] = ms.d2d_bw > 0 ? d2d / ms.d2d_bw : 0;
	t[matrix ? B_MATRIX : B_VECTOR] = (double)total_it * heads * t_mma / (double)u->count;
	t[B_SFU] = (double)total_it * heads * t_sfu / (double)u->count;
	t[B_VECTOR] += (double)total_it * heads * (t_vec + t_int) / (double)u->count;
	t[B_DRAM] = dram / ms.dram_bw;
	t[B_L2] = ms.l2_bw > 0 ? l2 / ms.l2_bw : 0;
	t[B_LATENCY] = (double)total_it * heads * it_l2 * ms.lat_l2 / (fly * (double)slots);
	double body = dmax(dmax(sm_time, t[B_D2D]), dmax(t[B_DRAM], dmax(t[B_L2], t[B_LATENCY])));
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
	r->bytes_d2d = d2d;
	r->clock_hz = clock;
	r->unit_group = gi;
	r->uses_matrix = matrix;
	r->peak_flops = 2 * macs_clk * clock * u->count;
	struct dm_kernel *k = &r->kern;
	snprintf(k->name, sizeof k->name, "%s_%s_%dx%d", fa3 ? "flash3" : "flash2", bwd ? "bwd" : "fwd", bo, bi);
	k->tile_m = bo, k->tile_n = bi, k->tile_k = op->d > 0 ? (int)op->d : 0, k->stages = 2, k->splitk = 1;
	k->ctas = ctas, k->ctas_per_unit = (int)occ, k->waves = (double)ctas / (double)slots, k->kernels = kernels;
	if (it) { /* one inner iteration, per CTA-iteration of the unit (struct dm_iter) */
		double units = (double)u->count;
		memset(it, 0, sizeof *it);
		it->kind = OP_ATTN, it->unit_group = gi, it->matrix = matrix, it->dtype = op->dtype;
		it->clock_hz = clock, it->macs_clk = macs_clk;
		it->tile_m = bo, it->tile_n = bi, it->tile_k = (int)op->d, it->stages = 2;
		it->warps = warps, it->ctas_per_unit = (int)occ, it->ctas = ctas, it->iters = max_it;
		it->bytes_it = it_l2, it->hit = 1;
		it->lat_l2 = ms.lat_l2 * clock, it->lat_dram = ms.lat_dram * clock;
		it->l2_Bpc = ms.l2_bw > 0 ? ms.l2_bw / units / clock : 0;
		it->dram_Bpc = ms.dram_bw / units / clock;
		it->write_cost = c->model.write_cost;
		it->lane_item = lane_score, it->sfu_item = sfu_score, it->lane_row = lane_row;
		it->c_matrix = t_mma * clock, it->c_smem = t_smem * clock;
		it->c_sfu = t_sfu * clock, it->c_vector = t_vec * clock;
		it->c_l2 = it->l2_Bpc > 0 ? it_l2 / it->l2_Bpc : 0;
		it->c_dram = total_it > 0 ? dram / ((double)total_it * heads) * units / (ms.dram_bw / clock) : 0;
		it->c_latency = it_l2 * ms.lat_l2 * clock / (fly * occ);
		it->c_total = dmax(t_it * clock, dmax(dmax(it->c_l2, it->c_dram), it->c_latency));
	}
	if (ex) {
		char dtxt[96];
		xp(ex, "unit: %ld x %s, matrix %.0f MAC/clk, %.0f fp32 lanes, %.0f SFU/clk at %.0f MHz\n", u->count,
		   u->name, macs_clk, u->vec[DT_FP32], u->sfu, clock / 1e6);
		xp(ex,
		   "blocks: %d %s rows per CTA, %d per inner step; %lld CTAs, %.0f per unit (%d warps each, "
		   "%.0f KiB shared memory)\n",
		   bo, bwd ? "key" : "query", bi, ctas, occ, warps, smem / 1024);
		xp(ex,
		   "inner step: matrix %.0f ns, shared memory %.0f ns, exp %.0f ns, other lane ops %.0f ns%s; "
		   "overlap %.0f%% (%s) -> %.0f ns\n",
		   t_mma * 1e9, t_smem * 1e9, t_sfu * 1e9, t_vec * 1e9, drop_txt(op, t_int, dtxt, sizeof dtxt),
		   ov * 100,
		   fa3 ? "FlashAttention-3 ping-pong on async matrix units" : "other warps on the same scheduler",
		   t_it * 1e9);
		if (ms.dies > 1)
			xp(ex,
			   "chiplets: %d dies, CTAs round-robin; %.0f%% of memory on other dies: %.4g MB cross at %.0f "
			   "GB/s (%.2f us)\n",
			   ms.dies, ms.remote * 100, d2d / 1e6, ms.d2d_bw / 1e9, t[B_D2D] * 1e6);
		if (op->causal)
			xp(ex, "causal: %lld of %lld inner steps per head are computed; the longest CTA has %lld\n",
			   total_it, nout * nin, max_it);
	}
	return 0;
}

/* decode / paged: one (or a few) query rows per sequence against the KV cache */
int attn_decode(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
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
	/* chiplets: each CTA streams its own chunk of keys, (n-1)/n of it from other dies */
	double d2d = ms.remote * (kv + 2 * q);
	t[B_D2D] = ms.d2d_bw > 0 ? d2d / ms.d2d_bw : 0;
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
	r->bytes_d2d = d2d;
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

/* One kernel of naive attention, a GEMM or an elementwise op, timed by its family directly (as dm_predict
   would, without the dispatch: the families sit below it). */
static int naive_part_time(const struct arch_chip *c, const struct op *part, struct dm_result *r, char *why, size_t wl)
{
	if (part->kind == OP_ELEM) {
		elem_time(c, part, r, NULL);
		return 0;
	}
	struct gemm_in g = {part->m,         part->n, part->k,    part->batch,   part->dtype,
	                    part->acc_dtype, 0,       part->warm, part->epilogue};
	return gemm_time(c, &g, r, NULL, why, wl);
}

/* naive attention: the separate kernels of an eager framework */
int attn_naive(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
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
	double t[B_COUNT] = {0}, tot = 0, dram = 0, l2 = 0, smem = 0, d2d = 0;
	for (int i = 0; i < np; i++) {
		struct dm_result p;
		memset(&p, 0, sizeof p);
		if (naive_part_time(c, &parts[i], &p, why, wl))
			return -1;
		tot += p.time_s, dram += p.bytes_dram, l2 += p.bytes_l2, smem += p.bytes_smem, d2d += p.bytes_d2d;
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
	r->bytes_dram = dram, r->bytes_l2 = l2, r->bytes_smem = smem, r->bytes_d2d = d2d;
	snprintf(r->kern.name, sizeof r->kern.name, "naive_%s_%d_kernels", op->dir == DIR_BWD ? "bwd" : "fwd", np);
	r->kern.kernels = np;
	return 0;
}

/* FlashAttention-1 (Dao et al. 2022, Algorithm 1/2; its CUDA kernels fmha_*_1xN_loop). What differs from
   FlashAttention-2 (Dao 2023, sections 3.1-3.3), each a cost of its own below:
   - loop order: a CTA keeps one block of Bc keys (K, V) on chip and sweeps the queries in steps of 16
     rows; the forward's running output O_i (fp32) and its log-sum-exp are read from and written back
     to global memory at every key block after the first (2 N d (N/Bc) elements per head), so unless
     the queries, outputs and statistics of all heads fit in the cache they stream from device memory;
   - rescaling: O_i is rescaled by diag(l)^-1 at every step (Algorithm 1 line 12: old O times
     l_old e^(m_old - m_new), plus the new P V, times 1/l_new), FlashAttention-2 once at the end;
   - split-K between warps: the warps of a CTA split the keys, so each warp's partial product over its
     keys (forward: O = P V, and the row max and sum of S; backward: dQ = dS K) goes through shared
     memory (fp32) and a barrier and is summed; the 16-row query step is read by every warp;
   - parallelism: the grid is batch x heads x num_splits, the splits chosen by the kernel's heuristic
     (num_splits_heuristic_fwd in its forward launcher: the fewest splits, of at most 30, whose waves
     are more than 95% as full as the best count's): the forward splits the query steps, the backward
     the key blocks (dQ accumulated in fp32 in global memory). */
static long long fa1_splits(long long heads, long long slots, long long max_splits)
{
	double best = 0, eff[64];
	if (max_splits > 64)
		max_splits = 64;
	for (long long s = 1; s <= max_splits; s++) {
		double waves = (double)(heads * s) / (double)slots;
		eff[s - 1] = waves / ceil(waves);
		best = dmax(best, eff[s - 1]);
	}
	for (long long s = 1; s <= max_splits; s++)
		if (eff[s - 1] > 0.95 * best)
			return s;
	return 1;
}

int attn_flash1(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	int matrix;
	double macs_clk, clock;
	int gi = need_unit(c, op->dtype, &matrix, &macs_clk, &clock, why, wl);
	if (gi < 0)
		return -1;
	const struct arch_unit *u = &c->units[gi];
	struct memsys ms;
	memsys_of(c, &ms);
	if (op->d > 128 || op->d % 8) {
		snprintf(why, wl,
		         "impl=flash1: head dim %lld: the original FlashAttention has kernels for head dims "
		         "that are multiples of 8 up to 128",
		         op->d);
		return -1;
	}
	/* its launcher runs the kernel of head dim 32, 64 or 128 that holds d (fmha_api.cpp run_fmha_fwd,
	   run_fmha_bwd): the matrix work and the shared-memory tiles are the padded kernel's (dk), the bytes
	   loaded and stored the tensor's own (d) */
	double ea = dt_bytes(op->dtype), d = (double)op->d, dk = op->d <= 32 ? 32 : op->d <= 64 ? 64 : 128;
	int bwd = op->dir == DIR_BWD;
	/* the kernels' traits: Bc keys per CTA (256 at head dim <= 64), query steps of 16
	   rows, the keys split over 4 warps (forward) or 8 (backward) */
	int bc = op->d <= 64 ? 256 : 128, bq = 16, warps = bwd ? 8 : 4;
	/* shared memory: the K, V block, the query step(s) double-buffered, the warps' fp32 partials
	   (backward: also P and dS, transposed for dV and dK) */
	double smem = 2.0 * bc * dk * ea + (bwd ? 4.0 : 2.0) * bq * dk * ea + warps * (double)bq * dk * 4 +
	              (bwd ? 2.0 * bq * bc * ea : 0);
	double occ = dmin((double)u->max_ctas, floor((double)u->max_warps / warps));
	if (u->smem_bytes > 0)
		occ = dmin(occ, floor(u->smem_bytes / smem));
	if (u->regfile_bytes > 0)
		occ = dmin(occ, floor(u->regfile_bytes / (warps * 32.0 * 255 * 4 * 0.5)));
	if (occ < 1)
		occ = 1;
	/* per step (16 query rows against the CTA's Bc keys): MACs, exps, lane ops */
	double mm = (double)bq * bc * dk * (bwd ? 5 : 2);
	double sfu_score = 1.5;
	double lane_score = (bwd ? 6 : 5) + dropout_lane_ops(op), int_score = dropout_int_ops(op, 16);
	/* per row and head dim: forward the rescale (3 ops) and the sum of the warps' partial O; backward the
	   sum of the partial dQ and its fp32 accumulation */
	double lane_row = bwd ? warps : 3 + (warps - 1);
	double ex_ops = (double)bq * bc * sfu_score;
	double lane = (double)bq * bc * lane_score + lane_row * bq * dk + 2.0 * warps * bq; /* + row max, sum */
	double rate = macs_clk * clock * c->model.mma_eff;
	double lanes = u->vec[DT_FP32] * clock, sfu = u->sfu > 0 ? u->sfu * clock : lanes / 4;
	double t_mma = mm / rate, t_sfu = lanes > 0 ? ex_ops / sfu : 0, t_vec = lanes > 0 ? lane / lanes : 0;
	double t_int = int_lanes(u) > 0 ? (double)bq * bc * int_score / (int_lanes(u) * clock) : 0;
	/* shared memory per step: the query step (bwd: and dO) stored once and read by every warp (bwd: in
	   four products); V (bwd: K for dQ, V for dP) read by the warps owning its keys (K stays in registers
	   in the forward); the partials written and read back; bwd: P and dS transposed */
	double smem_it = bwd ? (2.0 + 4.0 * warps) * bq * dk * ea + 4.0 * bq * bc * ea + 2.0 * bc * dk * ea +
	                           2.0 * warps * bq * dk * 4
	                     : (1.0 + warps) * bq * dk * ea + (double)bc * dk * ea + 2.0 * warps * bq * dk * 4;
	double t_smem = smem_it / (u->smem_Bpc * clock);
	/* the barriers of every step keep a CTA's warps in the same phase: only the other CTAs on the unit
	   overlap it (FlashAttention-2: every warp on the scheduler) */
	double wps = occ;
	double ov = 1 - 1 / (1 + wps);
	double other = t_sfu + t_vec;
	double t_it = step_overlap(t_mma, t_smem, other, t_int, ov);
	/* steps: key block j is seen by the query steps from its diagonal on (causal: queries aligned to the
	   end of the keys) */
	long long nkv = cdiv(op->skv, bc), nq = cdiv(op->sq, bq), heads = op->b * op->h;
	long long off = op->skv - op->sq, total_it = 0;
	for (long long j = 0; j < nkv; j++) {
		long long first = op->causal ? (long long)dmax(0, (double)(j * bc - off)) : 0;
		total_it += first >= op->sq ? 0 : nq - first / bq;
	}
	long long slots = (long long)(u->count * occ);
	long long splits = fa1_splits(heads, slots, bwd ? nkv : (long long)dmin(30, (double)nq));
	long long ctas = heads * splits;
	/* bytes per step through L2: fwd the query step, the running O (fp32) and its statistic, read and
	   written at every key block but the first; bwd Q, dO, their two row statistics, dQ fp32 in and out */
	double keep = nkv > 1 ? (double)(nkv - 1) / nkv : 0;
	double it_l2 = bwd ? 2.0 * bq * d * ea + 2.0 * bq * 4 + 2.0 * bq * d * 4
	                   : (double)bq * d * ea + keep * 2.0 * bq * (d * 4 + 4);
	double fly = it_l2; /* one step ahead */
	/* per CTA: its share of the steps, and per key block the load of K and V */
	long long cta_it = cdiv(total_it, splits), cta_blocks = bwd ? cdiv(nkv, splits) : nkv;
	double t_blk = ms.lat_dram + 2.0 * bc * d * ea / (ms.dram_bw / (double)u->count);
	double per_it = t_it * occ;
	double cta_time = (double)cta_it * per_it + (double)cta_blocks * t_blk;
	double sm_time = (double)cdiv(ctas, slots) * cta_time;
	/* device memory: compulsory Q, K, V, O (bwd: dO, dQ, dK, dV, statistics); the steps' traffic as well
	   when the per-pass working set (every head's queries, running output and statistics) exceeds the
	   cache, since no two CTAs share it */
	double q = (double)op->b * op->h * op->sq * d * ea, kv = 2.0 * op->b * op->hkv * op->skv * d * ea;
	double dram = bwd ? 3 * q + 2 * kv + (double)op->b * op->h * op->sq * 4 * 3 : 2 * q + kv;
	double ws = (double)heads * op->sq * (bwd ? 2 * d * ea + d * 4 + 8 : d * ea + d * 4 + 4);
	double l2 = (double)total_it * heads * it_l2 + dram;
	int streamed = !bwd && ws > ms.cache;
	if (streamed)
		dram += (double)total_it * heads * it_l2 - q;
	double fill = dram;
	if (ms.dies > 1 && !ms.dedup)
		dram = fill;
	double d2d = ms.dies > 1 ? ms.remote * fill : 0;
	double t[B_COUNT] = {0};
	t[B_D2D] = ms.d2d_bw > 0 ? d2d / ms.d2d_bw : 0;
	t[matrix ? B_MATRIX : B_VECTOR] = (double)total_it * heads * t_mma / (double)u->count;
	t[B_SFU] = (double)total_it * heads * t_sfu / (double)u->count;
	t[B_VECTOR] += (double)total_it * heads * (t_vec + t_int) / (double)u->count;
	t[B_DRAM] = dram / ms.dram_bw;
	t[B_L2] = ms.l2_bw > 0 ? l2 / ms.l2_bw : 0;
	t[B_LATENCY] = (double)total_it * heads * it_l2 * (streamed ? ms.lat_dram : ms.lat_l2) /
	               (fly * (double)dmin((double)slots, (double)ctas));
	double body = dmax(dmax(sm_time, t[B_D2D]), dmax(t[B_DRAM], dmax(t[B_L2], t[B_LATENCY])));
	int kernels = bwd ? 2 : 1; /* bwd: the main kernel, then dQ from fp32 */
	double extra = 0;
	if (bwd) /* read dQ fp32, write dQ */
		extra = (double)op->b * op->h * op->sq * d * 6 / ms.dram_bw + ms.lat_dram;
	double launch = kernels * c->model.launch_s;
	t[B_LAUNCH] = launch;
	r->time_s = launch + body + extra;
	memcpy(r->t_res, t, sizeof t);
	r->bound = bound_of(t, launch, r->time_s);
	if (r->bound != B_LAUNCH && sm_time >= body && t[B_SFU] + t[B_VECTOR] > t[B_MATRIX] && !matrix)
		r->bound = B_VECTOR;
	r->bytes_dram = dram;
	r->bytes_l2 = l2;
	r->bytes_smem = (double)total_it * heads * smem_it;
	r->bytes_d2d = d2d;
	r->clock_hz = clock;
	r->unit_group = gi;
	r->uses_matrix = matrix;
	r->peak_flops = 2 * macs_clk * clock * u->count;
	struct dm_kernel *k = &r->kern;
	snprintf(k->name, sizeof k->name, "flash1_%s_%dx%d", bwd ? "bwd" : "fwd", bq, bc);
	k->tile_m = bq, k->tile_n = bc, k->tile_k = op->d > 0 ? (int)op->d : 0, k->stages = 2, k->splitk = (int)splits;
	k->ctas = ctas, k->ctas_per_unit = (int)occ, k->waves = (double)ctas / (double)slots, k->kernels = kernels;
	if (ex) {
		char dtxt[96];
		xp(ex, "unit: %ld x %s, matrix %.0f MAC/clk, %.0f fp32 lanes, %.0f SFU/clk at %.0f MHz\n", u->count,
		   u->name, macs_clk, u->vec[DT_FP32], u->sfu, clock / 1e6);
		xp(ex,
		   "blocks: %d keys per CTA and key block, steps of %d query rows; %lld heads x %lld splits (of the "
		   "%s) "
		   "= %lld CTAs, %.0f per unit (%d warps splitting the keys, %.0f KiB shared memory)\n",
		   bc, bq, heads, splits, bwd ? "key blocks" : "query steps", ctas, occ, warps, smem / 1024);
		xp(ex,
		   "step: matrix %.0f ns, shared memory %.0f ns (%.0f KiB: query step per warp, fp32 partials), exp "
		   "%.0f ns, other lane ops %.0f ns%s; overlap %.0f%% -> %.0f ns\n",
		   t_mma * 1e9, t_smem * 1e9, smem_it / 1024, t_sfu * 1e9, t_vec * 1e9,
		   drop_txt(op, t_int, dtxt, sizeof dtxt), ov * 100, t_it * 1e9);
		if (!bwd)
			xp(ex,
			   "running output: %.0f B per step through L2 over %lld key blocks; working set %.4g MB %s "
			   "the "
			   "%.4g MB cache -> %.4g MB from device memory\n",
			   it_l2, nkv, ws / 1e6, streamed ? "exceeds" : "fits", ms.cache / 1e6, dram / 1e6);
		if (op->causal)
			xp(ex, "causal: %lld of %lld steps per head are computed\n", total_it, nkv * nq);
	}
	return 0;
}
