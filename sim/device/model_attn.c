/*
 * model_attn.c -- attention: FlashAttention-2/-3 and the original FlashAttention
 * (-1) forward and backward, decode and paged decode (split-KV), and naive
 * attention as separate kernels. Each kernel is a row of attn_kernels (at the
 * end), picked by the op's impl= name; dm_predict and dm_iteration reach them
 * through attn_time and attn_iteration.
 *
 * Invariants (asserted in Debug builds; a result's own in model.c):
 *  1. the share of pipe time the warps overlap is in [0, 1], so an inner step
 *     takes at least each pipe's time alone;
 *  2. causal masking only removes iterations: a CTA has at most the unmasked
 *     count, a head at most CTAs x that count.
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

/* ------------------------------------------------------------------ */
/* FlashAttention-2 and -3 (Dao 2023; Shah et al. 2024)                 */
/*
 * A CTA keeps one block of rows on chip and streams the other operand through
 * an inner loop: forward, a block of queries against blocks of keys (S = Q K^T,
 * softmax, O += P V); backward, a block of keys against blocks of queries
 * (five products for dV, dP, dS, dQ, dK). The cost, in stages:
 *   flash_fwd_shape / flash_bwd_shape  tiles, warps, shared memory, the work and bytes of one iteration;
 *   flash_occupancy                     CTAs per unit;
 *   flash_step_time                     one inner iteration on its pipes (s);
 *   flash_count                         iterations per head and of the longest CTA (causal stops at the diagonal);
 *   flash_dispatch_time                 the makespan of the CTAs on the units' slots (s): longest first, or in
 *                                       launch order (flash_inorder_time, FlashAttention-2);
 *   flash_traffic                       bytes per level: device memory, L2, die-to-die;
 *   flash_resources                     time of each resource alone, the kernel's time and its bound.
 */

/* What tells FlashAttention-3 from -2 in the model. */
struct flash_variant {
	const char *name; /* kernel name prefix */
	int async;        /* needs asynchronous matrix units; warp-specialized: a producer warpgroup loads, consumer
	                     warpgroups compute (flash_step_time: how their pipes overlap), each reading the streamed blocks
	                     from shared memory once */
	int warps_fwd, warps_bwd; /* warps of one CTA */
	int splitkv;              /* FlashAttention-2's split-KV forward kernel: 64 query rows per CTA */
	int fwd_rows;             /* the forward's query rows per CTA when fixed (0: by head dim) */
	int gqa_reduce; /* the backward with fewer K/V heads writes dK and dV per query head, then reduces them */
};
static const struct flash_variant flash2_variant = {"flash2", 0, 4, 8, 0, 0, 1};
static const struct flash_variant flash3_variant = {"flash3", 1, 12, 12, 0, 0, 0};
static const struct flash_variant flash2_splitkv_variant = {"flash2_splitkv", 0, 4, 8, 1, 0, 1};
/* cuDNN's fused flash attention on Hopper (cuDNN 9; the kernels torch SDPA's cuDNN backend runs, recorded in
   traces/kineto/h100-*: cudnn_generated_fort_native_sdpa_sm90_flash_{fprop,bprop}_wgmma_f16_knob_*): wgmma and
   TMA, 384 threads (a producer and two consumer warpgroups), a persistent grid of one CTA per SM. Its forward
   tiles are 64-row warpgroup blocks against 128 keys at head dims 64 and 128 (..._64x128x{64,128}_...): 128
   query rows per CTA and no head-dim-dependent tile, unlike FlashAttention-3's. The backward runs beside the
   main kernel the dO.O row sums (cudnn::fusion::compute_dot_do_o_specialized) and the fp32-to-16-bit dQ
   conversion (convert_dq_to_16bits), and with fewer K/V heads two reductions of the per-query-head dK and dV
   (fmha_reduce_head). Its inner step is modelled as FlashAttention-3's (flash_step_time). */
static const struct flash_variant cudnn_variant = {"cudnn", 1, 12, 12, 0, 128, 1};

/* One direction's kernel: the block a CTA keeps, the block an iteration streams, and what an iteration costs. */
struct flash_shape {
	int bwd;
	int rows_cta;                /* rows of the block a CTA keeps: fwd queries, bwd keys */
	int rows_step;               /* rows streamed per inner iteration: fwd keys, bwd queries */
	int warps;                   /* of one CTA */
	double smem_B;               /* shared memory of one CTA, bytes */
	long long len_cta, len_step; /* the sequence the CTAs tile (fwd sq), the one the iterations walk (fwd skv) */
	double mma_products;         /* matrix products per iteration, each rows_cta x rows_step x d MACs */
	double smem_products;        /* products that read the streamed block from shared memory */
	double lane_score;           /* lane ops per score */
	double lane_row;             /* lane ops per (row x head dim) per iteration: fwd the rescale of O */
	double l2_B_per_iter;        /* bytes one CTA loads through L2 per iteration */
	double fly_B;                /* bytes one CTA keeps in flight: one stage ahead */
	double resident_loads;       /* blocks of rows_cta x d a CTA loads once (fwd Q; bwd K, V, dK, dV) */
	double q_B, kv_B;            /* Q (and O, dO...) and K + V of all heads, bytes */
	double dram_B;               /* compulsory device-memory bytes */
	double streamed_B;           /* the streamed operand, fetched by each die's L2 (chiplets) */
	double passes_B;             /* device-memory bytes of the small kernels beside the main one (bwd) */
	int kernels;                 /* launched for the op */
	int passes;                  /* of which small memory-bound passes, each a dependent kernel */
};

/* Exps and the packed conversion of P to 16 bits (the same pipe), per score. */
#define FLASH_SFU_PER_SCORE 1.5

static void flash_bytes(const struct op *op, struct flash_shape *s)
{
	double ea = dt_bytes(op->dtype), d = (double)op->d;
	s->q_B = (double)op->b * op->h * op->sq * d * ea;
	s->kv_B = 2.0 * op->b * op->hkv * op->skv * d * ea;
}

/* Keys per block of FlashAttention-2's split-KV kernel (flash_api.cpp, set_params_splitkv). */
static int flash2_splitkv_block_n(long long d)
{
	return d <= 64 ? 256 : d <= 128 ? 128 : 64;
}

/* FlashAttention-3's forward tiles (hopper/tile_size.h, tile_size_fwd_sm90; the July 2024 release's
   flash_fwd_launch_template.h had the same for head dims 64, 128 and 256): kBlockM query rows, one consumer
   warpgroup per 64 of them, and kBlockN keys per iteration, by head dim, causal masking and input width */
static void flash3_fwd_tile(const struct op *op, int *br, int *bc)
{
	long long d = op->d;
	if (dt_bytes(op->dtype) < 2) { /* fp8 */
		*br = d <= 96 ? 192 : 128;
		*bc = d <= 64 ? 160 : d <= 96 ? 128 : d <= 128 ? 224 : d <= 192 ? 160 : 128;
		return;
	}
	*br = d <= 96 ? 192 : 128;
	*bc = d <= 64    ? (op->causal ? 128 : 192)
	      : d <= 96  ? 144
	      : d <= 128 ? (op->causal ? 128 : 176)
	      : d <= 192 ? 112
	                 : 80;
}

/* forward: Q block resident, K and V blocks streamed (double-buffered) */
static void flash_fwd_shape(const struct op *op, const struct flash_variant *v, struct flash_shape *s)
{
	double ea = dt_bytes(op->dtype), d = (double)op->d;
	int br = op->d <= 128 ? 128 : 64; /* query rows per CTA */
	int bc = op->d <= 64 ? 128 : 64;  /* keys per iteration */
	int warps = v->warps_fwd;
	if (v->splitkv) /* run_mha_fwd_splitkv_dispatch: kBlockM 64, kBlockN by head dim */
		br = 64, bc = flash2_splitkv_block_n(op->d);
	if (v->async) {
		flash3_fwd_tile(op, &br, &bc);
		if (v->fwd_rows)
			br = v->fwd_rows, bc = 128;
		warps = 4 * (br / 64 + 1); /* a producer warpgroup and br/64 consumer warpgroups */
	}
	s->bwd = 0;
	s->rows_cta = br, s->rows_step = bc, s->warps = warps;
	s->smem_B = ((double)br * d + 2.0 * bc * d) * ea;
	s->len_cta = op->sq, s->len_step = op->skv;
	s->mma_products = 2, s->smem_products = 2.0;
	s->lane_score = 5 + dropout_lane_ops(op), s->lane_row = 1;
	s->l2_B_per_iter = 2.0 * bc * d * ea; /* K and V blocks */
	s->fly_B = 2.0 * bc * d * ea;
	s->resident_loads = 1;
	flash_bytes(op, s);
	s->dram_B = 2 * s->q_B + s->kv_B; /* Q, K, V, O */
	s->streamed_B = s->kv_B;
	s->passes_B = 0;
	s->kernels = 1, s->passes = 0;
}

/* backward: K and V blocks resident, Q and dO blocks streamed (double-buffered), dQ accumulated in fp32
   atomics through L2 */
static void flash_bwd_shape(const struct op *op, const struct flash_variant *v, struct flash_shape *s)
{
	double ea = dt_bytes(op->dtype), d = (double)op->d;
	int br = op->d <= 64 ? 128 : 64; /* query rows per iteration */
	int bc = 128;                    /* keys per CTA */
	s->bwd = 1;
	s->rows_cta = bc, s->rows_step = br, s->warps = v->warps_bwd;
	s->smem_B = (2.0 * bc * d + 2 * 2.0 * br * d + (double)br * bc) * ea;
	s->len_cta = op->skv, s->len_step = op->sq;
	s->mma_products = 5, s->smem_products = 5.0;
	s->lane_score = 6 + dropout_lane_ops(op), s->lane_row = 0;
	s->l2_B_per_iter = 2.0 * br * d * ea + (double)br * d * 4 * 2; /* Q, dO blocks; dQ fp32 atomics */
	s->fly_B = 2.0 * br * d * ea;
	s->resident_loads = 4;
	flash_bytes(op, s);
	/* Q, K, V, O, dO, dQ, dK, dV and the log-sum-exp, dO.O and dQ fp32 rows */
	s->dram_B = 3 * s->q_B + 2 * s->kv_B + (double)op->b * op->h * op->sq * 4 * 3;
	s->streamed_B = 2 * s->q_B;
	/* the two small passes (flash_bwd_launch_template.h, run_flash_bwd_seqk_parallel): the first reads O and
	   dO for the dO.O row sums and clears the fp32 dQ accumulator (flash_bwd_dot_do_o_kernel<true>, Clear_dQaccum),
	   the last reads the accumulator and writes dQ; profiled on an H100
	   (tests/validation/measured/h100-2026-11-28): 98 + 78 us at 2^25 elements of Q, 2.6 TB/s */
	double acc_B = (double)op->b * op->h * op->sq * d * 4;
	s->passes_B = 2 * s->q_B + 2 * acc_B + s->q_B;
	s->kernels = 3, s->passes = 2; /* dO.O row sums, the main kernel, dQ conversion */
	if (v->gqa_reduce && op->hkv != op->h) {
		/* fewer K/V heads (FlashAttention-2: flash_api.cpp, mha_bwd; cuDNN: fmha_reduce_head): the main kernel
		   writes dK and dV for every query head, then two reductions read them and write the groups' sums */
		double expanded_B = s->kv_B * (double)op->h / (double)op->hkv;
		s->dram_B += expanded_B - s->kv_B;
		s->passes_B += expanded_B + s->kv_B;
		s->kernels += 2, s->passes += 2;
	}
}

/* CTAs resident per unit: warps, shared memory, registers (255 per thread at half the file), at least 1 */
static double flash_occupancy(const struct arch_unit *u, const struct flash_shape *s)
{
	double occ = dmin((double)u->max_ctas, floor((double)u->max_warps / s->warps));
	if (u->smem_bytes > 0)
		occ = dmin(occ, floor(u->smem_bytes / s->smem_B));
	if (u->regfile_bytes > 0)
		occ = dmin(occ, floor(u->regfile_bytes / (s->warps * 32.0 * 255 * 4 * 0.5)));
	/* a CTA that does not fit (head dim 256 on a unit with little shared memory, say) is still run, one per unit:
	   this clamp is active on shipped configs, a model choice (the kernel would spill), not an invariant */
	if (occ < 1)
		occ = 1;
	return occ;
}

/* One inner iteration of one CTA on its unit's pipes (seconds each). */
struct flash_step {
	double mma_s, smem_s, sfu_s, vec_s, int_s; /* each pipe alone */
	double smem_B;                             /* shared-memory bytes the iteration reads */
	double overlap;                            /* share of the other pipes hidden behind the longest */
	double step_s;                             /* the iteration */
};

static void flash_step_time(const struct arch_chip *c, const struct arch_unit *u, const struct op *op,
                            const struct flash_variant *v, const struct flash_shape *s, double macs_clk, double clock,
                            double occ, struct flash_step *st)
{
	double ea = dt_bytes(op->dtype), d = (double)op->d;
	int bo = s->rows_cta, bi = s->rows_step;
	double macs = (double)bo * bi * d * s->mma_products;
	double int_score = dropout_int_ops(op, 8);
	double sfu_ops = (double)bo * bi * FLASH_SFU_PER_SCORE;
	double lane_ops = (double)bo * bi * s->lane_score + s->lane_row * bo * d;
	double mma_per_s = macs_clk * clock * c->model.mma_eff;
	double lanes_per_s = u->vec[DT_FP32] * clock, sfu_per_s = u->sfu > 0 ? u->sfu * clock : lanes_per_s / 4;
	st->mma_s = macs / mma_per_s;
	st->sfu_s = lanes_per_s > 0 ? sfu_ops / sfu_per_s : 0;
	st->vec_s = lanes_per_s > 0 ? lane_ops / lanes_per_s : 0;
	st->int_s = int_lanes(u) > 0 ? (double)bo * bi * int_score / (int_lanes(u) * clock) : 0;
	/* shared memory: every warp reads the streamed blocks for its rows (fwd: K and V; bwd: Q and dO
	   through five products); async matrix units read them once per consumer warpgroup (forward: one per 64
	   rows; backward: two) */
	int wgs = s->bwd ? 2 : bo / 64;
	st->smem_B = s->smem_products * (v->async ? wgs : s->warps) * bi * d * ea;
	st->smem_s = st->smem_B / (u->smem_Bpc * clock);
	double lanes_s = st->sfu_s + st->vec_s + st->int_s;
	double tmax = dmax(dmax(st->mma_s, st->smem_s), dmax(st->sfu_s + st->vec_s, st->int_s));
	if (v->async) {
		/* FlashAttention-3 (Shah et al. 2024, section 3.1): the consumer warpgroups' matrix work is issued in
		   turn (ping-pong) and runs on the shared matrix units, so a warpgroup's products end after all of
		   theirs, and its softmax follows: the forward step is the matrix time plus one warpgroup's share of
		   the lane work. The backward has no ping-pong: its step is the matrix time, the shared-memory reads
		   of the streamed blocks and one warpgroup's share of the lane work in sequence. Neither is less than
		   the longest pipe (small head dims, where the lane work is most of the step). No FlashAttention-3
		   backward is measured in public; that form was chosen against cuDNN's backward on H100 and H200 (a
		   kernel of the same design: wgmma, TMA, a producer warpgroup; tests/validation/measured/README.md),
		   and it puts FlashAttention-3's backward at head dim 128 at 1.7x FlashAttention-2's measured one,
		   within the 1.5-1.75x its authors state. */
		st->step_s = dmax(tmax, st->mma_s + (s->bwd ? st->smem_s : 0) + lanes_s / wgs);
		double all = st->mma_s + st->smem_s + lanes_s;
		st->overlap = all > tmax ? (all - st->step_s) / (all - tmax) : 1;
	} else {
		/* pipes overlap as far as independent instructions allow: within a warp (ILP) and across the
		   warps sharing a scheduler */
		double warps_per_sched = occ * s->warps / (double)u->schedulers;
		st->overlap = 1 - 1 / (1 + warps_per_sched);
		st->step_s = step_overlap(st->mma_s, st->smem_s, st->sfu_s + st->vec_s, st->int_s, st->overlap);
	}
	assert(st->overlap >= -1e-12 && st->overlap <= 1 + 1e-12 && dm_ok(st->step_s));
	assert(st->step_s >= st->mma_s && st->step_s >= st->smem_s && st->step_s >= st->sfu_s + st->vec_s &&
	       st->step_s >= st->int_s); /* an iteration takes at least what each pipe alone needs */
}

/* Inner iterations per head (all its CTAs) and of the longest CTA. */
struct flash_count {
	long long ctas_per_head; /* blocks of rows_cta */
	long long iters_full;    /* iterations of a CTA without causal masking */
	long long per_head;      /* iterations of all CTAs of one head */
	long long longest;       /* iterations of the longest CTA */
};

/* Inner iterations of CTA i of a head (its blocks in launch order: blockIdx.x). Forward, causal: query rows
   [i*bo, i*bo+bo) see keys < off + row + 1 (queries aligned to the end of keys). Backward, causal: key block i
   is seen by query rows >= i*bo - off. */
/* With a window, the queries that see a key before key_end (exclusive): none past key_end - 1's window. */
static long long window_query_end(const struct op *op, long long key_end)
{
	return (long long)dmin((double)op->sq, (double)(key_end - (op->skv - op->sq) + op->window - 1));
}

static long long flash_cta_iters(const struct op *op, const struct flash_shape *s, long long iters_full, long long i)
{
	long long bo = s->rows_cta, bi = s->rows_step, w = op->window;
	long long off = op->skv - op->sq; /* key index of query 0 */
	if (!op->causal)
		return iters_full;
	if (!s->bwd) {
		long long last = off + (long long)dmin((double)(i + 1) * bo, (double)op->sq);
		long long n = (long long)dmax(0, dmin((double)iters_full, (double)cdiv(last, bi)));
		if (w > 0) /* a window: the key blocks before the first query's window are skipped */
			n -= (long long)dmin((double)n, dmax(0, (double)(off + i * bo - w + 1)) / (double)bi);
		return n;
	}
	long long first = (long long)dmax(0, (double)(i * bo - off));
	if (first >= op->sq)
		return 0;
	if (w > 0) { /* a window: the queries past the last key's window are skipped */
		return (long long)dmin((double)iters_full, (double)cdiv(window_query_end(op, (i + 1) * bo), bi)) -
		       first / bi;
	}
	return iters_full - first / bi;
}

static void flash_count(const struct op *op, const struct flash_shape *s, struct flash_count *n)
{
	n->ctas_per_head = cdiv(s->len_cta, s->rows_cta), n->iters_full = cdiv(s->len_step, s->rows_step);
	n->per_head = 0, n->longest = 0;
	for (long long i = 0; i < n->ctas_per_head; i++) {
		long long it = flash_cta_iters(op, s, n->iters_full, i);
		n->per_head += it;
		if (it > n->longest)
			n->longest = it;
	}
	assert(n->longest <= n->iters_full && n->per_head <= n->ctas_per_head * n->iters_full);
}

/* Slot heap of the in-order dispatch below: a binary min-heap of the times the slots free. */
static void heap_down(double *h, long long n, long long i)
{
	for (;;) {
		long long l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && h[l] < h[m])
			m = l;
		if (r < n && h[r] < h[m])
			m = r;
		if (m == i)
			return;
		double t = h[i];
		h[i] = h[m], h[m] = t, i = m;
	}
}

/* FlashAttention-2 launches the grid (CTAs of a head, batch, heads) and the block scheduler hands its CTAs to
   the slots in that order as they free (list scheduling in launch order, not longest first): a causal
   forward's last CTAs, the longest of their head, start last. The makespan of that (s), or a negative value
   when out of memory. Past 2^20 CTAs only the last heads are scheduled, every slot starting at the mean load
   of the ones before (the tail is what the order changes). */
static double flash_inorder_time(const struct op *op, const struct flash_shape *s, const struct flash_count *n,
                                 long long heads, long long slots, double iter_s, double cta_fixed_s)
{
	long long per = n->ctas_per_head, tail = heads;
	if (per * heads > (1LL << 20))
		tail = (long long)dmin((double)heads, (double)cdiv(8 * slots, per) + 1);
	double *h = malloc((size_t)slots * sizeof *h);
	double *job = malloc((size_t)per * sizeof *job);
	if (!h || !job) {
		free(h), free(job);
		return -1;
	}
	for (long long i = 0; i < per; i++)
		job[i] = flash_cta_iters(op, s, n->iters_full, i) * iter_s + cta_fixed_s;
	double base = (double)(heads - tail) * ((double)n->per_head * iter_s + per * cta_fixed_s) / (double)slots;
	for (long long i = 0; i < slots; i++)
		h[i] = base;
	double end = base;
	for (long long hd = 0; hd < tail; hd++)
		for (long long i = 0; i < per; i++) {
			h[0] += job[i]; /* the slot that frees first takes the next CTA */
			if (h[0] > end)
				end = h[0];
			heap_down(h, slots, 0);
		}
	free(h), free(job);
	return end;
}

/* The makespan of the pipes (s), each slot a 1/occ share of a unit: every head has the same blocks; slots take
   CTAs as they free, longest first (FlashAttention-3's tile scheduler) or in launch order (FlashAttention-2's
   grid, in_order). */
static double flash_dispatch_time(const struct op *op, const struct flash_shape *s, const struct flash_count *n,
                                  const struct flash_step *st, const struct memsys *ms, const struct arch_unit *u,
                                  double occ, long long heads, int in_order)
{
	double ea = dt_bytes(op->dtype), d = (double)op->d;
	long long slots = (long long)(u->count * occ);
	long long ctas = n->ctas_per_head * heads;
	/* per CTA: a miss, then its resident block at its unit's share of device memory */
	double cta_fixed_s =
	    ms->lat_dram + (double)s->rows_cta * d * ea * s->resident_loads / (ms->dram_bw / (double)u->count);
	/* LPT onto slots: with equal heads this is about total/slots, bounded below by the longest CTA */
	double iter_s = st->step_s * occ; /* a CTA sharing its unit with occ-1 others */
	double all_s = (double)n->per_head * heads * iter_s + ctas * cta_fixed_s;
	double longest_s = n->longest * iter_s + cta_fixed_s;
	long long waves = cdiv(ctas, slots);
	double sm_s = dmax(all_s / (double)slots, longest_s);
	if (!op->causal) /* equal CTAs: whole waves */
		sm_s = (double)waves * (n->iters_full * iter_s + cta_fixed_s);
	else if (in_order) {
		double t = flash_inorder_time(op, s, n, heads, slots, iter_s, cta_fixed_s);
		if (t >= 0) /* else (out of memory) the longest-first bound */
			sm_s = t;
	}
	assert(sm_s >= longest_s * (1 - 1e-9));
	return sm_s;
}

/* Bytes per level. */
struct flash_traffic {
	double dram_B; /* device memory (chiplets: with each die's fetch unless the chip serves repeats on chip) */
	double l2_B;   /* through L2: every iteration's loads, and the compulsory bytes */
	double d2d_B;  /* across dies */
};

static void flash_traffic(const struct flash_shape *s, const struct flash_count *n, const struct memsys *ms,
                          long long heads, struct flash_traffic *tr)
{
	/* device memory: the compulsory bytes; K/V re-read per head group if L2 is small */
	double dram = s->dram_B;
	tr->l2_B = (double)n->per_head * heads * s->l2_B_per_iter + dram;
	/* chiplets: a head's blocks are consecutive CTAs, so round-robin puts them on min(D, blocks) dies,
	   each of whose L2s fetches the streamed operand (fwd: K, V; bwd: Q, dO) once; of those fetches and
	   the rest, (n-1)/n is on another die. Unless the chip serves a repeated fetch on chip, it reads memory. */
	double fill = dram;
	if (ms->dies > 1) {
		fill += (dmin((double)ms->dies, (double)n->ctas_per_head) - 1) * s->streamed_B;
		if (!ms->dedup)
			dram = fill;
	}
	tr->dram_B = dram;
	tr->d2d_B = ms->remote * fill;
}

/* Each resource's time alone (t[], s) and the kernel's: the slowest of the CTAs' pipes and the chip's shared
   resources, the small passes of the backward, the launches. Returns the kernel's time (s). */
static double flash_resources(const struct arch_chip *c, const struct flash_shape *s, const struct flash_count *n,
                              const struct flash_step *st, const struct flash_traffic *tr, const struct memsys *ms,
                              const struct arch_unit *u, int matrix, double occ, long long heads, double sm_s,
                              double *t, double *body_s)
{
	long long slots = (long long)(u->count * occ);
	double iters = (double)n->per_head * heads; /* of the whole kernel */
	t[B_D2D] = ms->d2d_bw > 0 ? tr->d2d_B / ms->d2d_bw : 0;
	t[matrix ? B_MATRIX : B_VECTOR] = iters * st->mma_s / (double)u->count;
	t[B_SFU] = iters * st->sfu_s / (double)u->count;
	t[B_VECTOR] += iters * (st->vec_s + st->int_s) / (double)u->count;
	t[B_DRAM] = tr->dram_B / ms->dram_bw;
	t[B_L2] = ms->l2_bw > 0 ? tr->l2_B / ms->l2_bw : 0;
	t[B_LATENCY] = iters * s->l2_B_per_iter * ms->lat_l2 / (s->fly_B * (double)slots);
	double body = dmax(dmax(sm_s, t[B_D2D]), dmax(t[B_DRAM], dmax(t[B_L2], t[B_LATENCY])));
	/* the small passes (bwd): memory-bound, one after another */
	double extra_s = s->passes_B / ms->dram_bw + s->passes * ms->lat_dram;
	double launch = s->kernels * c->model.launch_s;
	t[B_LAUNCH] = launch;
	*body_s = body;
	return launch + body + extra_s;
}

/* The main-loop iteration, per CTA-iteration of the unit (struct dm_iter), for the warp-level stepper. */
static void flash_iter_of(const struct arch_chip *c, const struct arch_unit *u, const struct op *op,
                          const struct flash_shape *s, const struct flash_count *n, const struct flash_step *st,
                          const struct flash_traffic *tr, const struct memsys *ms, const struct dm_result *r,
                          double macs_clk, long long heads, struct dm_iter *it)
{
	double units = (double)u->count, clock = r->clock_hz;
	memset(it, 0, sizeof *it);
	it->kind = OP_ATTN, it->unit_group = r->unit_group, it->matrix = r->uses_matrix, it->dtype = op->dtype;
	it->clock_hz = clock, it->macs_clk = macs_clk;
	it->tile_m = s->rows_cta, it->tile_n = s->rows_step, it->tile_k = (int)op->d, it->stages = 2;
	it->warps = s->warps, it->ctas_per_unit = r->kern.ctas_per_unit, it->ctas = r->kern.ctas;
	it->iters = n->longest;
	it->bytes_it = s->l2_B_per_iter, it->hit = 1;
	it->lat_l2 = ms->lat_l2 * clock, it->lat_dram = ms->lat_dram * clock;
	it->l2_Bpc = ms->l2_bw > 0 ? ms->l2_bw / units / clock : 0;
	it->dram_Bpc = ms->dram_bw / units / clock;
	it->write_cost = c->model.write_cost;
	it->lane_item = s->lane_score, it->sfu_item = FLASH_SFU_PER_SCORE, it->lane_row = s->lane_row;
	it->c_matrix = st->mma_s * clock, it->c_smem = st->smem_s * clock;
	it->c_sfu = st->sfu_s * clock, it->c_vector = st->vec_s * clock;
	it->c_l2 = it->l2_Bpc > 0 ? s->l2_B_per_iter / it->l2_Bpc : 0;
	it->c_dram = n->per_head > 0 ? tr->dram_B / ((double)n->per_head * heads) * units / (ms->dram_bw / clock) : 0;
	it->c_latency = s->l2_B_per_iter * ms->lat_l2 * clock / (s->fly_B * (double)r->kern.ctas_per_unit);
	it->c_total = dmax(st->step_s * clock, dmax(dmax(it->c_l2, it->c_dram), it->c_latency));
}

static void flash_explain(FILE *ex, const struct arch_unit *u, const struct op *op, const struct flash_variant *v,
                          const struct flash_shape *s, const struct flash_count *n, const struct flash_step *st,
                          const struct flash_traffic *tr, const struct memsys *ms, const struct dm_result *r,
                          double macs_clk)
{
	char dtxt[96];
	xp(ex, "unit: %ld x %s, matrix %.0f MAC/clk%s, %.0f fp32 lanes, %.0f SFU/clk at %.0f MHz\n", u->count, u->name,
	   macs_clk, u->mat_sync_frac < 1 && !v->async ? " (mma.sync: matrix.sync_fraction of the rate)" : "",
	   u->vec[DT_FP32], u->sfu, r->clock_hz / 1e6);
	xp(ex,
	   "blocks: %d %s rows per CTA, %d per inner step; %lld CTAs, %.0f per unit (%d warps each, "
	   "%.0f KiB shared memory)\n",
	   s->rows_cta, s->bwd ? "key" : "query", s->rows_step, r->kern.ctas, (double)r->kern.ctas_per_unit, s->warps,
	   s->smem_B / 1024);
	xp(ex,
	   "inner step: matrix %.0f ns, shared memory %.0f ns, exp %.0f ns, other lane ops %.0f ns%s; "
	   "overlap %.0f%% (%s) -> %.0f ns\n",
	   st->mma_s * 1e9, st->smem_s * 1e9, st->sfu_s * 1e9, st->vec_s * 1e9,
	   drop_txt(op, st->int_s, dtxt, sizeof dtxt), st->overlap * 100,
	   v->async ? (s->bwd ? "warp-specialized backward: matrix, shared memory, one warpgroup's lane work in turn"
	                      : "warp-specialized: one consumer warpgroup's lane work after the matrix time")
	            : "other warps on the same scheduler",
	   st->step_s * 1e9);
	if (ms->dies > 1)
		xp(ex,
		   "chiplets: %d dies, CTAs round-robin; %.0f%% of memory on other dies: %.4g MB cross at %.0f "
		   "GB/s (%.2f us)\n",
		   ms->dies, ms->remote * 100, tr->d2d_B / 1e6, ms->d2d_bw / 1e9, r->t_res[B_D2D] * 1e6);
	if (op->causal)
		xp(ex, "causal: %lld of %lld inner steps per head are computed; the longest CTA has %lld\n",
		   n->per_head, n->ctas_per_head * n->iters_full, n->longest);
}

static int flash_time(const struct arch_chip *c, const struct op *op, const struct flash_variant *v,
                      struct dm_result *r, FILE *ex, char *why, size_t wl, struct dm_iter *it)
{
	int matrix;
	double macs_clk, clock;
	int gi = need_unit(c, op->dtype, &matrix, &macs_clk, &clock, why, wl);
	if (gi < 0)
		return -1;
	const struct arch_unit *u = &c->units[gi];
	if (v->async && !u->mat_async) {
		snprintf(why, wl,
		         "impl=%s needs asynchronous matrix units (%s has compute.%s.matrix.async = false); "
		         "use impl=flash2",
		         v->name, c->name, u->name);
		return -1;
	}
	/* FlashAttention-2 issues the synchronous warp-level instruction (mma.sync), which on units that also
	   take asynchronous ones (Hopper wgmma) reaches only matrix.sync_fraction of their rate */
	double issue_clk = macs_clk * (matrix && !v->async ? u->mat_sync_frac : 1);
	struct memsys ms;
	memsys_of(c, &ms);
	struct flash_shape s;
	struct flash_count n;
	if (op->dir == DIR_BWD)
		flash_bwd_shape(op, v, &s);
	else
		flash_fwd_shape(op, v, &s);
	flash_count(op, &s, &n);
	double occ = flash_occupancy(u, &s);
	struct flash_step st;
	flash_step_time(c, u, op, v, &s, issue_clk, clock, occ, &st);
	long long heads = op->b * op->h;
	double sm_s = flash_dispatch_time(op, &s, &n, &st, &ms, u, occ, heads, !v->async);
	struct flash_traffic tr;
	flash_traffic(&s, &n, &ms, heads, &tr);
	double t[B_COUNT] = {0}, body_s;
	r->time_s = flash_resources(c, &s, &n, &st, &tr, &ms, u, matrix, occ, heads, sm_s, t, &body_s);
	memcpy(r->t_res, t, sizeof t);
	r->bound = bound_of(t, t[B_LAUNCH], r->time_s);
	if (r->bound != B_LAUNCH && sm_s >= body_s && t[B_SFU] + t[B_VECTOR] > t[B_MATRIX] && !matrix)
		r->bound = B_VECTOR;
	r->bytes_dram = tr.dram_B;
	r->bytes_l2 = tr.l2_B;
	r->bytes_smem = tr.l2_B;
	r->bytes_d2d = tr.d2d_B;
	r->clock_hz = clock;
	r->unit_group = gi;
	r->uses_matrix = matrix;
	r->peak_flops = 2 * macs_clk * clock * u->count;
	struct dm_kernel *k = &r->kern;
	long long slots = (long long)(u->count * occ), ctas = n.ctas_per_head * heads;
	snprintf(k->name, sizeof k->name, "%s_%s_%dx%d", v->name, s.bwd ? "bwd" : "fwd", s.rows_cta, s.rows_step);
	k->tile_m = s.rows_cta, k->tile_n = s.rows_step, k->tile_k = op->d > 0 ? (int)op->d : 0, k->stages = 2;
	k->splitk = 1;
	k->ctas = ctas, k->ctas_per_unit = (int)occ, k->waves = (double)ctas / (double)slots, k->kernels = s.kernels;
	if (it)
		flash_iter_of(c, u, op, &s, &n, &st, &tr, &ms, r, issue_clk, heads, it);
	if (ex)
		flash_explain(ex, u, op, v, &s, &n, &st, &tr, &ms, r, issue_clk);
	return 0;
}

static int flash2_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                       size_t wl)
{
	return flash_time(c, op, &flash2_variant, r, ex, why, wl, NULL);
}

static int flash3_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                       size_t wl)
{
	return flash_time(c, op, &flash3_variant, r, ex, why, wl, NULL);
}

static int cudnn_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                      size_t wl)
{
	return flash_time(c, op, &cudnn_variant, r, ex, why, wl, NULL);
}

static int flash2_iter(const struct arch_chip *c, const struct op *op, struct dm_result *r, struct dm_iter *it,
                       char *why, size_t wl)
{
	return flash_time(c, op, &flash2_variant, r, NULL, why, wl, it);
}

static int flash3_iter(const struct arch_chip *c, const struct op *op, struct dm_result *r, struct dm_iter *it,
                       char *why, size_t wl)
{
	return flash_time(c, op, &flash3_variant, r, NULL, why, wl, it);
}

/* ------------------------------------------------------------------ */
/* decode, naive, FlashAttention-1                                      */

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
	double kv_B = 2.0 * op->b * op->hkv * op->skv * d * ea;
	double q_B = (double)op->b * op->h * op->sq * d * ea;
	/* split the keys so that every unit has work (FlashDecoding) */
	long long groups = op->b * op->hkv;
	long long split = (long long)dmax(1, dmin(ceil(2.0 * u->count / (double)groups), (double)cdiv(op->skv, 256)));
	long long ctas = groups * split;
	double keys_per_split = (double)op->skv / split;
	/* in flight per CTA: a few blocks of keys; a page is the unit of a paged load */
	double block_keys = op->impl == ATTN_PAGED ? dmin(64.0, (double)op->page) : 64.0;
	double fly_B_cta = 4 * block_keys * d * ea * 2;
	double occ = dmax(1, dmin((double)u->max_ctas, floor((double)u->max_warps / 4)));
	double resident = dmin((double)ctas, u->count * occ);
	double little_Bps = resident * fly_B_cta / ms.lat_dram;
	double rows = (double)op->sq * op->h / op->hkv;                 /* query rows sharing one K/V stream */
	double macs = 2.0 * dmax(rows, 16) * keys_per_split * d * ctas; /* padded to 16 rows on matrix units */
	double t[B_COUNT] = {0};
	t[B_DRAM] = (kv_B + 2 * q_B) / ms.dram_bw;
	t[B_LATENCY] = kv_B / little_Bps;
	/* chiplets: each CTA streams its own chunk of keys, (n-1)/n of it from other dies */
	double d2d_B = ms.remote * (kv_B + 2 * q_B);
	t[B_D2D] = ms.d2d_bw > 0 ? d2d_B / ms.d2d_bw : 0;
	/* FlashDecoding's split-KV kernels are FlashAttention-2's: mma.sync (matrix.sync_fraction) */
	t[matrix ? B_MATRIX : B_VECTOR] = macs / (macs_clk * (matrix ? u->mat_sync_frac : 1) * clock * u->count);
	t[B_SFU] = rows * op->skv * op->b * op->hkv / (u->sfu > 0 ? u->sfu * clock * u->count : 1e12);
	double page_s = 0;
	if (op->impl == ATTN_PAGED) /* a block-table lookup before each page of each CTA */
		page_s =
		    ceil(keys_per_split / (double)op->page) / (fly_B_cta / (block_keys * d * ea * 2)) * ms.lat_l2 / 4;
	double body = 0;
	for (int i = 0; i < B_COUNT; i++)
		body = dmax(body, t[i]);
	int kernels = split > 1 ? 2 : 1; /* the split results are combined by a second kernel */
	double launch = kernels * c->model.launch_s;
	t[B_LAUNCH] = launch;
	r->time_s = launch + ms.lat_dram * kernels + body + page_s;
	memcpy(r->t_res, t, sizeof t);
	r->bound = bound_of(t, launch, r->time_s);
	r->bytes_dram = kv_B + 2 * q_B;
	r->bytes_l2 = kv_B + 2 * q_B;
	r->bytes_smem = kv_B;
	r->bytes_d2d = d2d_B;
	r->clock_hz = clock;
	r->unit_group = gi;
	r->uses_matrix = matrix;
	r->peak_flops = 2 * macs_clk * clock * u->count;
	struct dm_kernel *k = &r->kern;
	snprintf(k->name, sizeof k->name, "%s_split%lld", op->impl == ATTN_PAGED ? "paged_decode" : "flash_decode",
	         split);
	k->tile_m = (int)dmax(rows, 16), k->tile_n = (int)block_keys, k->tile_k = (int)op->d, k->stages = 4;
	k->splitk = (int)split, k->ctas = ctas, k->ctas_per_unit = (int)occ;
	k->waves = (double)ctas / (u->count * occ), k->kernels = kernels;
	if (ex) {
		xp(ex, "decode: %lld sequences x %lld KV heads, %lld keys each: KV cache %.4g MB to read\n", op->b,
		   op->hkv, op->skv, kv_B / 1e6);
		xp(ex,
		   "split-KV: %lld splits -> %lld CTAs; %.0f KiB in flight per CTA -> %.0f GB/s by Little's law "
		   "(device memory %.0f GB/s)\n",
		   split, ctas, fly_B_cta / 1024, little_Bps / 1e9, ms.dram_bw / 1e9);
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
	struct gemm_in g = {.m = part->m,
	                    .n = part->n,
	                    .k = part->k,
	                    .batch = part->batch,
	                    .dt = part->dtype,
	                    .acc = part->acc_dtype,
	                    .warm = part->warm,
	                    .epi = part->epilogue};
	return gemm_time(c, &g, r, NULL, why, wl);
}

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
	double t[B_COUNT] = {0}, total_s = 0, dram_B = 0, l2_B = 0, smem_B = 0, d2d_B = 0;
	for (int i = 0; i < np; i++) {
		struct dm_result p;
		memset(&p, 0, sizeof p);
		if (naive_part_time(c, &parts[i], &p, why, wl))
			return -1;
		total_s += p.time_s, dram_B += p.bytes_dram, l2_B += p.bytes_l2, smem_B += p.bytes_smem,
		    d2d_B += p.bytes_d2d;
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
	r->time_s = total_s;
	memcpy(r->t_res, t, sizeof t);
	r->bound = bound_of(t, t[B_LAUNCH], total_s);
	r->bytes_dram = dram_B, r->bytes_l2 = l2_B, r->bytes_smem = smem_B, r->bytes_d2d = d2d_B;
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
/* The split count the FlashAttention kernels' launchers pick: the fewest s in 1..most (at most 128) whose waves of
   blocks x s CTAs on `slots` are within `within` of the best count's wave efficiency (strictly above it when
   strict). With n_blocks > 0, a count that leaves each split as many of the n_blocks as one split fewer is not
   eligible (FlashAttention-2's num_splits_heuristic). */
static long long split_for_waves(long long blocks, long long slots, long long most, double within, int strict,
                                 long long n_blocks)
{
	double best = 0, eff[128] = {0};
	if (most > 128)
		most = 128;
	for (long long s = 1; s <= most; s++) {
		if (n_blocks > 0 && s > 1 && cdiv(n_blocks, s) == cdiv(n_blocks, s - 1))
			continue;
		double waves = (double)(blocks * s) / (double)slots;
		eff[s - 1] = waves / ceil(waves);
		best = dmax(best, eff[s - 1]);
	}
	for (long long s = 1; s <= most; s++)
		if (eff[s - 1] > 0 && (strict ? eff[s - 1] > within * best : eff[s - 1] >= within * best))
			return s;
	return 1;
}

static long long fa1_splits(long long heads, long long slots, long long max_splits)
{
	return split_for_waves(heads, slots, max_splits < 64 ? max_splits : 64, 0.95, 1, 0);
}

static int attn_flash1(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
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
	double smem_B = 2.0 * bc * dk * ea + (bwd ? 4.0 : 2.0) * bq * dk * ea + warps * (double)bq * dk * 4 +
	                (bwd ? 2.0 * bq * bc * ea : 0);
	double occ = dmin((double)u->max_ctas, floor((double)u->max_warps / warps));
	if (u->smem_bytes > 0)
		occ = dmin(occ, floor(u->smem_bytes / smem_B));
	if (u->regfile_bytes > 0)
		occ = dmin(occ, floor(u->regfile_bytes / (warps * 32.0 * 255 * 4 * 0.5)));
	if (occ < 1) /* as in flash_occupancy: active on shipped configs, a model choice */
		occ = 1;
	/* per step (16 query rows against the CTA's Bc keys): MACs, exps, lane ops */
	double macs_step = (double)bq * bc * dk * (bwd ? 5 : 2);
	double sfu_score = 1.5;
	double lane_score = (bwd ? 6 : 5) + dropout_lane_ops(op), int_score = dropout_int_ops(op, 16);
	/* per row and head dim: forward the rescale (3 ops) and the sum of the warps' partial O; backward the
	   sum of the partial dQ and its fp32 accumulation */
	double lane_row = bwd ? warps : 3 + (warps - 1);
	double sfu_ops = (double)bq * bc * sfu_score;
	double lane_ops = (double)bq * bc * lane_score + lane_row * bq * dk + 2.0 * warps * bq;   /* + row max, sum */
	double mma_per_s = macs_clk * (matrix ? u->mat_sync_frac : 1) * clock * c->model.mma_eff; /* mma.sync */
	double lanes_per_s = u->vec[DT_FP32] * clock, sfu_per_s = u->sfu > 0 ? u->sfu * clock : lanes_per_s / 4;
	double t_mma = macs_step / mma_per_s, t_sfu = lanes_per_s > 0 ? sfu_ops / sfu_per_s : 0,
	       t_vec = lanes_per_s > 0 ? lane_ops / lanes_per_s : 0;
	double t_int = int_lanes(u) > 0 ? (double)bq * bc * int_score / (int_lanes(u) * clock) : 0;
	/* shared memory per step: the query step (bwd: and dO) stored once and read by every warp (bwd: in
	   four products); V (bwd: K for dQ, V for dP) read by the warps owning its keys (K stays in registers
	   in the forward); the partials written and read back; bwd: P and dS transposed */
	double smem_B_step = bwd ? (2.0 + 4.0 * warps) * bq * dk * ea + 4.0 * bq * bc * ea + 2.0 * bc * dk * ea +
	                               2.0 * warps * bq * dk * 4
	                         : (1.0 + warps) * bq * dk * ea + (double)bc * dk * ea + 2.0 * warps * bq * dk * 4;
	double t_smem = smem_B_step / (u->smem_Bpc * clock);
	/* the barriers of every step keep a CTA's warps in the same phase: only the other CTAs on the unit
	   overlap it (FlashAttention-2: every warp on the scheduler) */
	double warps_per_sched = occ;
	double overlap = 1 - 1 / (1 + warps_per_sched);
	double other = t_sfu + t_vec;
	double step_s = step_overlap(t_mma, t_smem, other, t_int, overlap);
	/* steps: key block j is seen by the query steps from its diagonal on (causal: queries aligned to the
	   end of the keys) */
	long long nkv = cdiv(op->skv, bc), nq = cdiv(op->sq, bq), heads = op->b * op->h;
	long long off = op->skv - op->sq, total_it = 0;
	for (long long j = 0; j < nkv; j++) {
		long long first = op->causal ? (long long)dmax(0, (double)(j * bc - off)) : 0;
		long long end = op->causal && op->window > 0
		                    ? window_query_end(op, (j + 1) * bc)
		                    : op->sq; /* a window: no query past the block's last window */
		total_it += first >= op->sq ? 0 : cdiv(end, bq) - first / bq;
	}
	long long slots = (long long)(u->count * occ);
	long long splits = fa1_splits(heads, slots, bwd ? nkv : (long long)dmin(30, (double)nq));
	long long ctas = heads * splits;
	/* bytes per step through L2: fwd the query step, the running O (fp32) and its statistic, read and
	   written at every key block but the first; bwd Q, dO, their two row statistics, dQ fp32 in and out */
	double keep = nkv > 1 ? (double)(nkv - 1) / nkv : 0;
	double l2_B_step = bwd ? 2.0 * bq * d * ea + 2.0 * bq * 4 + 2.0 * bq * d * 4
	                       : (double)bq * d * ea + keep * 2.0 * bq * (d * 4 + 4);
	double fly_B = l2_B_step; /* one step ahead */
	/* per CTA: its share of the steps, and per key block the load of K and V */
	long long cta_steps = cdiv(total_it, splits), cta_blocks = bwd ? cdiv(nkv, splits) : nkv;
	double kv_block_s = ms.lat_dram + 2.0 * bc * d * ea / (ms.dram_bw / (double)u->count);
	double step_shared_s = step_s * occ;
	double cta_s = (double)cta_steps * step_shared_s + (double)cta_blocks * kv_block_s;
	double sm_s = (double)cdiv(ctas, slots) * cta_s;
	/* device memory: compulsory Q, K, V, O (bwd: dO, dQ, dK, dV, statistics); the steps' traffic as well
	   when the per-pass working set (every head's queries, running output and statistics) exceeds the
	   cache, since no two CTAs share it */
	double q = (double)op->b * op->h * op->sq * d * ea, kv = 2.0 * op->b * op->hkv * op->skv * d * ea;
	double dram_B = bwd ? 3 * q + 2 * kv + (double)op->b * op->h * op->sq * 4 * 3 : 2 * q + kv;
	double working_set_B = (double)heads * op->sq * (bwd ? 2 * d * ea + d * 4 + 8 : d * ea + d * 4 + 4);
	double l2_B = (double)total_it * heads * l2_B_step + dram_B;
	int streamed = !bwd && working_set_B > ms.cache;
	if (streamed)
		dram_B += (double)total_it * heads * l2_B_step - q;
	double fill = dram_B;
	if (ms.dies > 1 && !ms.dedup)
		dram_B = fill;
	double d2d_B = ms.dies > 1 ? ms.remote * fill : 0;
	double t[B_COUNT] = {0};
	t[B_D2D] = ms.d2d_bw > 0 ? d2d_B / ms.d2d_bw : 0;
	t[matrix ? B_MATRIX : B_VECTOR] = (double)total_it * heads * t_mma / (double)u->count;
	t[B_SFU] = (double)total_it * heads * t_sfu / (double)u->count;
	t[B_VECTOR] += (double)total_it * heads * (t_vec + t_int) / (double)u->count;
	t[B_DRAM] = dram_B / ms.dram_bw;
	t[B_L2] = ms.l2_bw > 0 ? l2_B / ms.l2_bw : 0;
	t[B_LATENCY] = (double)total_it * heads * l2_B_step * (streamed ? ms.lat_dram : ms.lat_l2) /
	               (fly_B * (double)dmin((double)slots, (double)ctas));
	double body = dmax(dmax(sm_s, t[B_D2D]), dmax(t[B_DRAM], dmax(t[B_L2], t[B_LATENCY])));
	int kernels = bwd ? 2 : 1; /* bwd: the main kernel, then dQ from fp32 */
	double extra = 0;
	if (bwd) /* read dQ fp32, write dQ */
		extra = (double)op->b * op->h * op->sq * d * 6 / ms.dram_bw + ms.lat_dram;
	double launch = kernels * c->model.launch_s;
	t[B_LAUNCH] = launch;
	r->time_s = launch + body + extra;
	memcpy(r->t_res, t, sizeof t);
	r->bound = bound_of(t, launch, r->time_s);
	if (r->bound != B_LAUNCH && sm_s >= body && t[B_SFU] + t[B_VECTOR] > t[B_MATRIX] && !matrix)
		r->bound = B_VECTOR;
	r->bytes_dram = dram_B;
	r->bytes_l2 = l2_B;
	r->bytes_smem = (double)total_it * heads * smem_B_step;
	r->bytes_d2d = d2d_B;
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
		   bc, bq, heads, splits, bwd ? "key blocks" : "query steps", ctas, occ, warps, smem_B / 1024);
		xp(ex,
		   "step: matrix %.0f ns, shared memory %.0f ns (%.0f KiB: query step per warp, fp32 partials), exp "
		   "%.0f ns, other lane ops %.0f ns%s; overlap %.0f%% -> %.0f ns\n",
		   t_mma * 1e9, t_smem * 1e9, smem_B_step / 1024, t_sfu * 1e9, t_vec * 1e9,
		   drop_txt(op, t_int, dtxt, sizeof dtxt), overlap * 100, step_s * 1e9);
		if (!bwd)
			xp(ex,
			   "running output: %.0f B per step through L2 over %lld key blocks; working set %.4g MB %s "
			   "the "
			   "%.4g MB cache -> %.4g MB from device memory\n",
			   l2_B_step, nkv, working_set_B / 1e6, streamed ? "exceeds" : "fits", ms.cache / 1e6,
			   dram_B / 1e6);
		if (op->causal)
			xp(ex, "causal: %lld of %lld steps per head are computed\n", total_it, nkv * nq);
	}
	return 0;
}

/* FlashAttention-2's decode path (flash_api.cpp, mha_fwd): the number of key splits num_splits_heuristic picks.
   With fewer query blocks than 0.8 of two per unit, the splits (of those whose blocks per split differ from one
   split fewer) that come within 85% of the best wave efficiency, the fewest of them; else one. */
static int flash2_num_splits(long long blocks, long long slots, long long n_blocks, int max_splits)
{
	if (blocks >= 0.8 * (double)slots)
		return 1;
	long long most = n_blocks < slots ? n_blocks : slots;
	return (int)split_for_waves(blocks, slots, most < max_splits ? most : max_splits, 0.85, 0, n_blocks);
}

/*
 * FlashAttention-2's decode (impl=flash2_decode): the forward of one query (or a few) per sequence as mha_fwd runs
 * it (torch SDPA's flash backend; measured on H100 and H200, tests/validation/measured/README.md). With one query and
 * grouped KV heads, the queries of a KV head become the rows of one block (seqlenq_ngroups_swapped), padded to the
 * kernel's 64 or 128 rows on the matrix units; the keys are split over CTAs when the query blocks do not fill the
 * chip (flash2_num_splits), a second kernel combining the splits' fp32 partial outputs.
 */
static int attn_flash2_decode(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                              size_t wl)
{
	int matrix;
	double macs_clk, clock;
	int gi = need_unit(c, op->dtype, &matrix, &macs_clk, &clock, why, wl);
	if (gi < 0)
		return -1;
	struct op k = *op;
	int swap = op->sq == 1 && op->h > op->hkv && op->d % 8 == 0;
	if (swap) /* (b, 1, hkv * g, d) viewed as (b, g, hkv, d) */
		k.sq = op->h / op->hkv, k.h = op->hkv;
	k.impl = ATTN_FLASH2, k.causal = 0; /* one query sees every key: causal is not applied */
	long long block_n = flash2_splitkv_block_n(op->d), n_blocks = cdiv(op->skv, block_n);
	long long units = c->units[gi].count, blocks = op->b * k.h * cdiv(k.sq, 64);
	int splits = flash2_num_splits(blocks, 2 * units, n_blocks, 128);
	if (splits == 1)
		return flash_time(c, &k, &flash2_variant, r, ex, why, wl, NULL);
	/* each split a sequence of its own: b x splits of ceil(blocks / splits) key blocks */
	k.b = op->b * splits;
	k.skv = (long long)dmin((double)op->skv, (double)(cdiv(n_blocks, splits) * block_n));
	if (flash_time(c, &k, &flash2_splitkv_variant, r, ex, why, wl, NULL))
		return -1;
	/* the combine kernel: reads each split's fp32 output rows and log-sum-exps, writes the output */
	struct memsys ms;
	memsys_of(c, &ms);
	double rows = (double)op->b * op->h * op->sq;
	double comb_B = rows * splits * ((double)op->d + 1) * 4 + rows * op->d * dt_bytes(op->dtype);
	double comb_s = c->model.launch_s + ms.lat_dram + comb_B / ms.dram_bw;
	r->time_s += comb_s;
	r->t_res[B_LAUNCH] += c->model.launch_s;
	r->bytes_dram += comb_B;
	r->bytes_l2 += comb_B;
	r->kern.splitk = splits;
	r->kern.kernels += 1;
	if (ex)
		xp(ex,
		   "FlashAttention-2 decode: %s%lld query blocks on %lld units -> %d key splits "
		   "(num_splits_heuristic), "
		   "then a combine kernel (%.4g MB, %.2f us)\n",
		   swap ? "the queries of each KV head as one block; " : "", blocks, units, splits, comb_B / 1e6,
		   comb_s * 1e6);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the attention kernels, picked by name                                */

/* One attention kernel model: impl=NAME of a trace's attn op (workloads/op.c names them) and its costs. A new
   kernel is a row here (and its name in workloads/op.c); tests/test_model.c checks every name has a row. */
struct attn_kernel_ops {
	const char *name;
	/* the op's duration and why (dm_predict) */
	int (*time)(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
	            size_t wl);
	/* its main-loop iteration for the warp-level stepper (dm_iteration); NULL: none to step */
	int (*iteration)(const struct arch_chip *c, const struct op *op, struct dm_result *r, struct dm_iter *it,
	                 char *why, size_t wl);
};

static const struct attn_kernel_ops attn_kernels[] = {
    {"flash2", flash2_time, flash2_iter},
    {"flash3", flash3_time, flash3_iter},
    {"flash1", attn_flash1, NULL},
    {"decode", attn_decode, NULL},
    {"paged", attn_decode, NULL},
    {"naive", attn_naive, NULL},
    {"flash2_decode", attn_flash2_decode, NULL},
    {"cudnn", cudnn_time, NULL},
};

static const struct attn_kernel_ops *attn_kernel(const struct op *op, char *why, size_t wl)
{
	const char *name = op_attn_impl_name(op->impl);
	for (size_t i = 0; i < sizeof attn_kernels / sizeof attn_kernels[0]; i++)
		if (!strcmp(attn_kernels[i].name, name))
			return &attn_kernels[i];
	snprintf(why, wl, "attn impl=%s: no kernel model of that name (sim/device/model_attn.c)", name);
	return NULL;
}

/* The decode kernels read the keys a window leaves the queries (the last window + sq - 1 of them), as if
   there were no more; the eager kernels compute every score and mask (a window saves them nothing); the
   FlashAttention kernels skip the blocks outside it (flash_cta_iters, attn_flash1). */
static struct op windowed(const struct op *op)
{
	struct op w = *op;
	int decode = op->impl == ATTN_DECODE || op->impl == ATTN_PAGED || op->impl == ATTN_FLASH2_DECODE;
	if (op->window > 0 && decode) {
		w.skv = (long long)dmin((double)op->skv, (double)(op->window + op->sq - 1));
		w.window = 0;
	}
	return w;
}

int attn_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	const struct attn_kernel_ops *k = attn_kernel(op, why, wl);
	struct op w = windowed(op);
	return k ? k->time(c, &w, r, ex, why, wl) : -1;
}

int attn_iteration(const struct arch_chip *c, const struct op *op, struct dm_iter *it, char *why, size_t wl)
{
	if (op->dropout > 0) {
		snprintf(why, wl,
		         "attn dropout=%g: the warp-level model has no integer pipe for the dropout's random "
		         "numbers yet (step the op without dropout=)",
		         op->dropout);
		return -1;
	}
	const struct attn_kernel_ops *k = attn_kernel(op, why, wl);
	if (!k)
		return -1;
	if (!k->iteration) {
		snprintf(why, wl, "attn impl=%s has no main loop to step (use impl=flash2 or flash3)", k->name);
		return -1;
	}
	struct dm_result r;
	memset(&r, 0, sizeof r);
	return k->iteration(c, op, &r, it, why, wl);
}
