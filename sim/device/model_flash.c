/*
 * model_flash.c -- FlashAttention-2 and -3 (Dao 2023; Shah et al. 2024) and
 * cuDNN's fused attention, forward and backward, as the tiled kernels they
 * are: a CTA keeps one block of rows on chip and streams the other operand
 * through its inner loop. Also FlashAttention-2's decode (split-KV and its
 * combine kernel). model_attn.c's table reaches them through the entry points
 * in model_attn_int.h; dm_iteration's stepper through flash2_iter/flash3_iter.
 *
 * Invariants (asserted in Debug builds; a result's own in model.c):
 *  1. the share of pipe time the warps overlap is in [0, 1], so an inner step
 *     takes at least each pipe's time alone;
 *  2. causal masking only removes iterations: a CTA has at most the unmasked
 *     count, a head at most CTAs x that count.
 */
#include "model_attn_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* CTAs resident per unit: warps, shared memory, registers (255 a thread: the H100 trace in tests/import
   records 255 for FlashAttention-2's flash_fwd_kernel, so two CTAs of 4 warps fit a 256 KiB file), at least 1 */
static double flash_occupancy(const struct arch_unit *u, const struct flash_shape *s)
{
	double occ = dmin((double)u->max_ctas, floor((double)u->max_warps / s->warps));
	if (u->smem_bytes > 0)
		occ = dmin(occ, floor(u->smem_bytes / s->smem_B));
	if (u->regfile_bytes > 0)
		occ = dmin(occ, floor(u->regfile_bytes / (s->warps * 32.0 * 255 * 4)));
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
	   macs_clk,
	   u->mat_sync_frac < 1 && !v->async ? " (mma.sync: matrix.sync_fraction x model.sync_efficiency of the rate)"
	                                     : "",
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
	   take asynchronous ones (Hopper wgmma) reaches only matrix.sync_fraction of their rate, and among the
	   kernel's other instructions model.sync_efficiency of that (sync_rate_frac) */
	double issue_clk = macs_clk * (matrix && !v->async ? sync_rate_frac(c, u) : 1);
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

int flash2_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	return flash_time(c, op, &flash2_variant, r, ex, why, wl, NULL);
}

int flash3_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	return flash_time(c, op, &flash3_variant, r, ex, why, wl, NULL);
}

int cudnn_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why, size_t wl)
{
	return flash_time(c, op, &cudnn_variant, r, ex, why, wl, NULL);
}

int flash2_iter(const struct arch_chip *c, const struct op *op, struct dm_result *r, struct dm_iter *it, char *why,
                size_t wl)
{
	return flash_time(c, op, &flash2_variant, r, NULL, why, wl, it);
}

int flash3_iter(const struct arch_chip *c, const struct op *op, struct dm_result *r, struct dm_iter *it, char *why,
                size_t wl)
{
	return flash_time(c, op, &flash3_variant, r, NULL, why, wl, it);
}

/* FlashAttention-2's decode path (flash_api.cpp, mha_fwd): the number of key splits num_splits_heuristic picks.
   With fewer query blocks than 0.8 of two per unit, the splits (of those whose blocks per split differ from one
   split fewer) that come within 85% of the best wave efficiency, the fewest of them; else one. */
static int flash2_num_splits(long long blocks, long long slots, long long n_blocks, int max_splits)
{
	if (blocks >= 0.8 * (double)slots)
		return 1;
	long long most = n_blocks < slots ? n_blocks : slots;
	return (int)waves_split_count(blocks, slots, most < max_splits ? most : max_splits, 0.85, 0, n_blocks);
}

/*
 * FlashAttention-2's decode (impl=flash2_decode): the forward of one query (or a few) per sequence as mha_fwd runs
 * it (torch SDPA's flash backend; measured on H100 and H200, tests/validation/measured/README.md). With one query and
 * grouped KV heads, the queries of a KV head become the rows of one block (seqlenq_ngroups_swapped), padded to the
 * kernel's 64 or 128 rows on the matrix units; the keys are split over CTAs when the query blocks do not fill the
 * chip (flash2_num_splits), a second kernel combining the splits' fp32 partial outputs. Through a block table
 * (flash_attn_with_kvcache, mha_fwd_kvcache) the heuristic sees the table's width x its page as the keys: maxkv=,
 * default skv. The splits it picks for those keys cover them in equal runs of key blocks, and a split past a
 * sequence's keys writes an empty result at once (timed as nothing); the combine kernel reads every split.
 */
int flash2_decode_time(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
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
	long long launch_blocks = cdiv(op->maxkv > 0 ? op->maxkv : op->skv, block_n);
	long long units = c->units[gi].count, blocks = op->b * k.h * cdiv(k.sq, 64);
	int splits = flash2_num_splits(blocks, 2 * units, launch_blocks, 128);
	long long per_split = cdiv(launch_blocks, splits), working = cdiv(n_blocks, per_split);
	if (splits == 1) /* one split covers every launch block, so it alone works */
		return flash_time(c, &k, &flash2_variant, r, ex, why, wl, NULL);
	/* each working split a sequence of its own: b x working splits of per_split key blocks */
	k.b = op->b * working;
	k.skv = (long long)dmin((double)op->skv, (double)(per_split * block_n));
	if (flash_time(c, &k, &flash2_splitkv_variant, r, ex, why, wl, NULL))
		return -1;
	/* the combine kernel (combine_attn_seqk_parallel in flash_fwd_kernel.h): a CTA of 128 threads per 4, 8 or 16
	   output rows (head dim a multiple of 128, of 64, other), which reads the splits' log-sum-exps, then loops
	   over the splits one after another, each a load of that split's fp32 rows (an L2 hit: just written) before
	   it is scaled and added: a chain of `splits` loads per CTA, all CTAs resident at once up to 16 per unit */
	struct memsys ms;
	memsys_of(c, &ms);
	double rows = (double)op->b * op->h * op->sq;
	double comb_B = rows * splits * ((double)op->d + 1) * 4 + rows * op->d * dt_bytes(op->dtype);
	long long comb_rows = op->d % 128 == 0 ? 4 : op->d % 64 == 0 ? 8 : 16;
	long long comb_ctas = cdiv((long long)rows, comb_rows), comb_waves = cdiv(comb_ctas, units * 16);
	double chain_s = (double)comb_waves * splits * ms.lat_l2;
	double comb_s = c->model.launch_s + ms.lat_dram + dmax(chain_s, comb_B / ms.dram_bw);
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
		   "then a combine kernel (%.4g MB; %lld CTAs, each %d loads one after another: %.2f us)\n",
		   swap ? "the queries of each KV head as one block; " : "", blocks, units, splits, comb_B / 1e6,
		   comb_ctas, splits, comb_s * 1e6);
	return 0;
}
