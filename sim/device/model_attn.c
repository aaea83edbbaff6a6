/*
 * model_attn.c -- attention: the kernel models by impl= name (attn_kernels, at
 * the end; dm_predict and dm_iteration reach them through attn_time and
 * attn_iteration), and the kernels that are not FlashAttention-2/-3 or cuDNN
 * (those are model_flash.c's): split-KV decode, vLLM's paged decode, naive attention as
 * separate kernels, and the original FlashAttention (-1).
 *
 * Invariants (asserted in Debug builds; a result's own in model.c):
 *  1. the share of pipe time the warps overlap is in [0, 1], so an inner step
 *     takes at least each pipe's time alone;
 *  2. causal masking only removes iterations: a CTA has at most the unmasked
 *     count, a head at most CTAs x that count.
 */
#include "model_attn_int.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* decode, naive, FlashAttention-1                                      */

/* impl=decode: one (or a few) query rows per sequence against the KV cache, the keys split over CTAs (at most
   max_split ways: 1 for a kernel that does not split them) */
static int decode_kernel(const struct arch_chip *c, const struct op *op, long long max_split, struct dm_result *r,
                         FILE *ex, char *why, size_t wl)
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
	split = split < max_split ? split : max_split;
	long long ctas = groups * split;
	double keys_per_split = (double)op->skv / split;
	/* in flight per CTA: a few blocks of keys */
	double block_keys = 64.0;
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
	/* FlashDecoding's split-KV kernels are FlashAttention-2's: mma.sync (sync_rate_frac) */
	t[matrix ? B_MATRIX : B_VECTOR] = macs / (macs_clk * (matrix ? sync_rate_frac(c, u) : 1) * clock * u->count);
	t[B_SFU] = rows * op->skv * op->b * op->hkv / (u->sfu > 0 ? u->sfu * clock * u->count : 1e12);
	double body = 0;
	for (int i = 0; i < B_COUNT; i++)
		body = dmax(body, t[i]);
	int kernels = split > 1 ? 2 : 1; /* the split results are combined by a second kernel */
	double launch = kernels * c->model.launch_s;
	t[B_LAUNCH] = launch;
	r->time_s = launch + ms.lat_dram * kernels + body;
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
	snprintf(k->name, sizeof k->name, "flash_decode_split%lld", split);
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

static int attn_decode(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                       size_t wl)
{
	return decode_kernel(c, op, LLONG_MAX, r, ex, why, wl);
}

/* A kernel of one CTA a query head a sequence (a grid of query heads x sequences x parts of the keys): each CTA
   streams its KV head's keys, then its values, with fly_warp_B bytes in flight a warp, `granule` keys at a time
   (their fp32 logits in shared memory bound the CTAs a unit holds); `kernels` = 2 when a second kernel reduces
   the parts. The paged kernel's and TensorRT-LLM's masked MHA's shared body; *seen gets what --explain prints
   beside the result (the CTAs a unit holds are r->kern.ctas_per_unit). */
struct head_kernel {
	long long parts, threads;
	double fly_warp_B, granule;
	double smem_keys;  /* keys whose fp32 logits a CTA's shared memory is sized for; 0: its own keys */
	double warps_unit; /* warps a unit holds of this kernel (its registers); 0: the unit's limit */
	int kernels;
	const char *name;
};

struct head_seen {
	double fly_B;    /* bytes in flight, all resident CTAs together */
	double rate_Bps; /* what they stream at, by Little's law */
	double smem_B;   /* shared memory of a CTA: its keys' logits */
};

static void head_ctas_time(const struct arch_chip *c, const struct op *op, const struct head_kernel *hk,
                           struct dm_result *r, struct head_seen *seen)
{
	int gi = pick_vector_unit(c);
	const struct arch_unit *u = &c->units[gi];
	struct memsys ms;
	memsys_of(c, &ms);
	double ea = dt_bytes(op->dtype), d = (double)op->d;
	long long rows = op->b * op->sq; /* the grid's sequences */
	double keys_cta = ceil((double)op->skv / (double)hk->parts);
	long long ctas = op->h * rows * hk->parts;
	double warps_cta = dmax(1, (double)hk->threads / (double)u->warp_size);
	double smem_cta = ceil((hk->smem_keys > 0 ? hk->smem_keys : keys_cta) / hk->granule) * hk->granule * 4 + d * ea;
	double warps_unit = hk->warps_unit > 0 ? dmin(hk->warps_unit, (double)u->max_warps) : (double)u->max_warps;
	double occ = dmin((double)u->max_ctas, floor(warps_unit / warps_cta));
	if (u->smem_bytes > 0)
		occ = dmin(occ, floor(u->smem_bytes / smem_cta));
	occ = dmax(1, occ);
	double resident = dmin((double)ctas, (double)u->count * occ);
	/* bytes: every CTA reads its KV head's keys and values; the queries read, the outputs written */
	double kv_B = 2.0 * op->b * op->hkv * op->skv * d * ea;
	double q_B = (double)rows * op->h * d * ea;
	double group = (double)op->h / (double)op->hkv;
	double l2_B = kv_B * (double)op->sq * group + 2 * q_B;
	double fill_B = kv_B * (ms.dies > 1 ? dmin((double)ms.dies, group) : 1) + 2 * q_B;
	double dram_B = ms.dies > 1 && !ms.dedup ? fill_B : kv_B + 2 * q_B;
	double hit = 1 - dram_B / l2_B;
	assert(hit > -1e-12 && hit < 1);
	double lat_s = ms.lat_l2 + hit * ms.lat_l2 + (1 - hit) * ms.lat_dram;
	double fly_B = resident * warps_cta * hk->fly_warp_B;
	double t[B_COUNT] = {0};
	t[B_DRAM] = dram_B / ms.dram_bw;
	t[B_L2] = ms.l2_bw > 0 ? l2_B / ms.l2_bw : 0;
	t[B_LATENCY] = l2_B * lat_s / fly_B;
	double d2d_B = ms.remote * fill_B;
	t[B_D2D] = ms.d2d_bw > 0 ? d2d_B / ms.d2d_bw : 0;
	double lanes = u->vec[DT_FP32] * (double)u->count * u->clock_hz;
	double macs = 2.0 * rows * op->h * op->skv * d; /* q.k, then p.v */
	t[B_VECTOR] = lanes > 0 ? macs / lanes : 0;
	t[B_SFU] = (double)rows * op->h * op->skv / (u->sfu > 0 ? u->sfu * u->clock_hz * (double)u->count : 1e12);
	double body = 0;
	for (int i = 0; i < B_COUNT; i++)
		body = dmax(body, t[i]);
	double launch = hk->kernels * c->model.launch_s;
	t[B_LAUNCH] = launch;
	r->time_s = launch + ms.lat_dram * hk->kernels + body;
	memcpy(r->t_res, t, sizeof t);
	r->bound = bound_of(t, launch, r->time_s);
	r->bytes_dram = dram_B, r->bytes_l2 = l2_B, r->bytes_smem = 2 * keys_cta * 4 * (double)ctas;
	r->bytes_d2d = d2d_B;
	r->clock_hz = u->clock_hz, r->unit_group = gi, r->uses_matrix = 0;
	r->peak_flops = 2 * u->vec[DT_FP32] * u->clock_hz * (double)u->count;
	struct dm_kernel *k = &r->kern;
	snprintf(k->name, sizeof k->name, "%s", hk->name);
	k->tile_m = 1, k->tile_n = (int)hk->granule, k->tile_k = (int)op->d, k->stages = 1;
	k->splitk = (int)hk->parts, k->ctas = ctas, k->ctas_per_unit = (int)occ;
	k->waves = (double)ctas / ((double)u->count * occ), k->kernels = hk->kernels;
	seen->fly_B = fly_B, seen->rate_Bps = fly_B / lat_s, seen->smem_B = smem_cta;
}

/*
 * impl=paged: vLLM's PagedAttention V1/V2 kernels (csrc/attention/attention_kernels.cuh,
 * paged_attention_kernel, after FasterTransformer's masked multi-head attention), the decode of vLLM's
 * XFORMERS backend and of its ROCm backend up to 0.6.1 (its own MI300 kernel came with vllm-project/vllm#8310):
 *   - the grid is query heads x sequences (V2: x partitions of 512 keys), one CTA a query head: under GQA the
 *     query heads of one KV head each stream that head's keys and values (through L2, see below); the sq
 *     query rows of a sequence (speculative decoding) are rows of the grid of their own, as vLLM's
 *     batch-expansion scorer runs them;
 *   - V1 or V2 as vllm/attention/ops/paged_attn.py (forward_decode) picks it: V1 when the context is at most
 *     8192 keys and it has one partition or more than 512 sequence-heads; V2 adds a kernel that reduces the
 *     partitions;
 *   - 128 threads; each warp takes one page at a time, after reading the page's number from the block table,
 *     the keys' pages first, then (after the softmax) the values' the same way: a page a warp in flight,
 *     behind an L2 hit and a load;
 *   - the logits in fp32 in shared memory, sized by the launch, not by the sequences: V1 the launcher's
 *     max_seq_len (maxkv=, default skv), V2 a partition of 512; which bounds the CTAs a unit holds. Under CUDA
 *     graphs vLLM launches the kernel with the capture's max_seq_len (CommonAttentionState's
 *     graph_capture_get_metadata_for_batch, vllm/attention/backends/utils.py: max_seq_len_to_capture), which
 *     also picks V1 or V2; the dot products on the fp32 lanes (no matrix instructions).
 * The query heads of one KV head are consecutive CTAs: on one die one L2 serves their re-reads; round robin
 * puts them on min(dies, heads per KV head) dies, each of whose L2s fetches the head, from memory unless the
 * chip serves a repeated fetch on chip (as flash_traffic).
 */
enum { PAGED_PART_KEYS = 512 };

/* vLLM's forward_decode: V1 for a launch of at most 8192 keys with one partition or more than 512
   sequence-heads */
static int paged_v1(long long keys, long long seq_heads)
{
	return keys <= 8192 && (cdiv(keys, PAGED_PART_KEYS) == 1 || seq_heads > 512);
}

static int attn_paged(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                      size_t wl)
{
	(void)why, (void)wl;
	const long long part_keys = PAGED_PART_KEYS, threads = 128;
	double ea = dt_bytes(op->dtype), d = (double)op->d;
	long long rows = op->b * op->sq;
	long long launch_keys = op->maxkv > 0 ? op->maxkv : op->skv; /* the launcher's max_seq_len */
	int v1 = paged_v1(launch_keys, rows * op->h);
	/* V2's grid has the partitions of launch_keys; those past a sequence's context return at once */
	long long parts = v1 ? 1 : cdiv(op->skv, part_keys);
	struct head_kernel hk = {.parts = parts,
	                         .threads = threads,
	                         .fly_warp_B = (double)op->page * d * ea, /* a page a warp */
	                         .granule = (double)op->page,
	                         .smem_keys = (double)(v1 ? launch_keys : part_keys),
	                         .kernels = v1 ? 1 : 2,
	                         .name = v1 ? "paged_attention_v1" : "paged_attention_v2"};
	struct head_seen seen;
	head_ctas_time(c, op, &hk, r, &seen);
	if (ex) {
		double group = (double)op->h / (double)op->hkv * (double)op->sq;
		xp(ex,
		   "paged attention %s (vLLM): %lld query heads x %lld sequences x %lld partition%s = %lld CTAs, %d "
		   "a unit (%.1f KiB of logits each)\n",
		   v1 ? "V1" : "V2", op->h, rows, parts, parts > 1 ? "s" : "", r->kern.ctas, r->kern.ctas_per_unit,
		   seen.smem_B / 1024);
		/* a launch for more keys only moves V1 to V2: more partitions, or past V1's 8192 keys */
		int v1_own = paged_v1(op->skv, rows * op->h);
		if (op->maxkv)
			xp(ex, "launched for %lld keys (maxkv): %s%s\n", op->maxkv,
			   v1 ? "the logits sized for them" : "partitions past a sequence's keys return at once",
			   v1_own && !v1 ? " (V2, where its own keys would pick V1)" : "");
		xp(ex,
		   "a CTA a query head: each KV head read by %.0f CTA%s, %.4g MB through L2, %.4g MB from device "
		   "memory; a page a warp in flight -> %.0f GB/s by Little's law\n",
		   group, group > 1 ? "s" : "", r->bytes_l2 / 1e6, r->bytes_dram / 1e6, seen.rate_Bps / 1e9);
	}
	return 0;
}

/*
 * impl=mmha: TensorRT-LLM's generation-phase attention (its GPT attention plugin) with multi_block_mode off,
 * the default of the run.py of its examples up to 0.11 (examples/utils.py, add_common_args: --multi_block_mode
 * is a store_true flag): the keys of a sequence are never split over CTAs.
 *   - XQA when the query heads share KV heads and 4 x sequences x KV heads reach the SM count
 *     (decoderXQARunner's mayHavePerfGain, kEnableMinBlockFactor 4): one CTA a KV head a sequence, its query
 *     heads together on the matrix unit: the decode kernel with one split;
 *   - else the masked multi-head attention kernel (decoderMaskedMultiheadAttentionLaunch.h,
 *     mmha_launch_kernel_ex): a grid of query heads x sequences, one CTA a query head reading its KV head's keys
 *     and values (L2 serves a group's re-reads), 256 threads, or where fewer than 4 CTAs an SM are launched,
 *     256 x min(ceil(SMs x CTAs an SM holds / CTAs), CTAs an SM holds) up to 1024 (CTAs an SM holds: by its
 *     registers, 64 a thread: at most 32 warps an SM, as the launcher's comment has it). In flight a thread:
 *     model.bytes_per_thread.
 */
static int attn_mmha(const struct arch_chip *c, const struct op *op, struct dm_result *r, FILE *ex, char *why,
                     size_t wl)
{
	const struct arch_unit *u = &c->units[pick_vector_unit(c)];
	const double xqa_factor = 4, regs_thread = 64, base_threads = 256, max_threads = 1024;
	long long rows = op->b * op->sq;
	if (op->h > op->hkv && xqa_factor * (double)(rows * op->hkv) >= (double)u->count) {
		int rc = decode_kernel(c, op, 1, r, ex, why, wl);
		if (!rc) {
			snprintf(r->kern.name, sizeof r->kern.name, "xqa_generation");
			if (ex)
				xp(ex,
				   "XQA: %lld sequences x %lld KV heads >= SMs / 4: a CTA a KV head, keys not split\n",
				   rows, op->hkv);
		}
		return rc;
	}
	long long ctas = rows * op->h;
	double threads = base_threads;
	double warps_regs = u->regfile_bytes > 0 ? floor(u->regfile_bytes / (regs_thread * 4 * (double)u->warp_size))
	                                         : (double)u->max_warps;
	if ((double)ctas < 4.0 * (double)u->count) {
		double per_unit =
		    dmax(1, floor(dmin(warps_regs, (double)u->max_warps) * (double)u->warp_size / base_threads));
		double factor = dmin(ceil((double)u->count * per_unit / (double)ctas), per_unit);
		threads = dmin(base_threads * factor, max_threads);
		threads = threads < 512 ? base_threads : threads < 1024 ? 512 : max_threads;
	}
	struct head_kernel hk = {.parts = 1,
	                         .threads = (long long)threads,
	                         .fly_warp_B = c->model.bytes_per_thread * (double)u->warp_size,
	                         .granule = 1,
	                         .warps_unit = warps_regs,
	                         .kernels = 1,
	                         .name = "masked_multihead_attention"};
	struct head_seen seen;
	head_ctas_time(c, op, &hk, r, &seen);
	if (ex)
		xp(ex,
		   "masked MHA (TensorRT-LLM, multi_block_mode off): %lld query heads x %lld sequences = %lld CTAs "
		   "of %.0f threads, %d a unit; %.4g MB through L2, %.4g MB from device memory; %.0f KiB in "
		   "flight -> %.0f GB/s by Little's law\n",
		   op->h, rows, ctas, threads, r->kern.ctas_per_unit, r->bytes_l2 / 1e6, r->bytes_dram / 1e6,
		   seen.fly_B / 1024, seen.rate_Bps / 1e9);
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
static long long fa1_splits(long long heads, long long slots, long long max_splits)
{
	return waves_split_count(heads, slots, max_splits < 64 ? max_splits : 64, 0.95, 1, 0);
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
	double lane_ops = (double)bq * bc * lane_score + lane_row * bq * dk + 2.0 * warps * bq; /* + row max, sum */
	double mma_per_s = macs_clk * (matrix ? sync_rate_frac(c, u) : 1) * clock * c->model.mma_eff; /* mma.sync */
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
    {"flash2", flash2_time, flash2_iter}, {"flash3", flash3_time, flash3_iter},
    {"flash1", attn_flash1, NULL},        {"decode", attn_decode, NULL},
    {"paged", attn_paged, NULL},          {"mmha", attn_mmha, NULL},
    {"naive", attn_naive, NULL},          {"flash2_decode", flash2_decode_time, NULL},
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
	int decode = op_attn_impl_decodes(op->impl);
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
