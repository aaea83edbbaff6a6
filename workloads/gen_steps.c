/*
 * gen_steps.c -- a block's steps as trace lines: each step's forward ops and
 * its backward ops (a GEMM's dgrad and wgrad, an attention's dir=bwd,
 * Megatron's tensor-parallel f and g, the fp8 and NVFP4 quantization kernels,
 * context parallelism's ring and all-to-alls, Transformer Engine's ring
 * exchange beside the GEMMs with --tp-comm-overlap, Mamba-2's kernels), into
 * a `struct lines` that gen_trace.c writes out. No state of its own: what a
 * step becomes depends on the step and the config only.
 */
#include "gen_trace_int.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void gt_add(struct lines *L, const char *fmt, ...)
{
	va_list ap;
	if (L->n == (int)(sizeof L->v / sizeof L->v[0]))
		abort(); /* MAX_STEPS bounds a block's ops */
	va_start(ap, fmt);
	vsnprintf(L->v[L->n++], sizeof L->v[0], fmt, ap);
	va_end(ap);
	if (L->wait) { /* the op waits for the label too: into its after= list, or one of its own */
		char *v = L->v[L->n - 1], *a = strstr(v, " after=");
		char rest[256];
		if (a) {
			snprintf(rest, sizeof rest, "%s", a + 7);
			snprintf(a + 7, sizeof L->v[0] - (size_t)(a + 7 - v), "%s,%s", L->wait, rest);
		} else {
			size_t used = strlen(v);
			snprintf(v + used, sizeof L->v[0] - used, " after=%s", L->wait);
		}
		L->wait = NULL;
	}
}

/* appends to the last line added (a key=value the op takes); the line is cut at its size, never overrun */
void gt_append(struct lines *L, const char *fmt, ...)
{
	va_list ap;
	assert(L->n > 0);
	char *v = L->v[L->n - 1];
	size_t used = strlen(v);
	va_start(ap, fmt);
	vsnprintf(v + used, sizeof L->v[0] - used, fmt, ap);
	va_end(ap);
}

/* ---- steps ----------------------------------------------------------------- */

/* a training step in fp8 or fp4 (NVFP4): Transformer Engine's quantized GEMMs */
static int lowp_train(const struct em *e)
{
	return e->c->mode == GEN_TRAIN && (e->c->p.dtype == GEN_FP8 || e->c->p.dtype == GEN_FP4);
}

/* the GEMM runs quantized (in fp8, or fp4): a low-precision training step's
   transformer-block linear layer (gemm_dtype: also any GEMM of fp8 or fp4
   inference, weights and activations quantized ahead, as the serving
   engines do) */
static int fp8_step(const struct em *e, const struct step *s)
{
	return lowp_train(e) && s->fp8 != FP8_NONE;
}

static const char *gemm_dtype(const struct em *e, const struct step *s)
{
	if (lowp_train(e))
		return s->fp8 != FP8_NONE ? e->gdt : e->dt;
	return e->gdt;
}

static void gemm_text(struct em *e, struct lines *L, const struct step *s, long long m, long long n, long long k,
                      const char *trans, int gelu)
{
	char bt[32] = "";
	if (s->batch > 1)
		snprintf(bt, sizeof bt, " batch=%lld", s->batch);
	gt_add(L, "gemm m=%lld n=%lld k=%lld%s dtype=%s%s%s%s", m, n, k, bt, gemm_dtype(e, s), trans ? " trans=" : "",
	       trans ? trans : "", gelu ? " epilogue=gelu" : "");
}

/* Quantizing n elements of a bf16 tensor for fp8 GEMMs (recipes as
   Transformer Engine implements them, transformer_engine/pytorch/module/
   and common/util/cast_kernels.cuh): one kernel writes the row-wise copy and
   the column-wise (transposed) one the other GEMM of the pair reads. Delayed
   scaling takes the scale from past steps' amax; current scaling first
   reduces this tensor's amax (a read of it) unless its producer did; MXFP8
   derives a scale per 32 elements in the same pass (the 1-byte scales, 1/32
   of the output, are not counted). NVFP4 (fp4: TE's NVFP4BlockScaling,
   common/recipe/__init__.py) scales blocks of 16 under a per-tensor scale:
   the tensor's amax first, taken after the random Hadamard transform that
   the column-wise (wgrad) copy of inputs and gradients gets, so a read of
   it even after a norm; then one kernel writes both copies (the e4m3 scales,
   1/16 of the output, are not counted). */
static void quantize(struct em *e, struct lines *L, long long n, int amax_known)
{
	int fp4 = e->c->p.dtype == GEN_FP4;
	if (!fp4 && e->c->p.fp8_recipe == GEN_FP8_NONE)
		return;
	if (fp4 || (e->c->p.fp8_recipe == GEN_FP8_CURRENT && !amax_known))
		gt_add(L, "elem op=read n=%lld dtype=%s", n, e->dt);
	gt_add(L, "elem op=cast_transpose n=%lld dtype=%s to=%s", n, e->dt, fp4 ? "fp4" : "fp8");
}

/* the fp8 quantization before a forward GEMM: TE's norm writes fp8 itself
   (delayed scaling, MXFP8) or bf16 and its amax (current scaling) */
static void quantize_input(struct em *e, struct lines *L, const struct step *s)
{
	if (!fp8_step(e, s) ||
	    (s->fp8 == FP8_NORM && e->c->p.dtype == GEN_FP8 && e->c->p.fp8_recipe != GEN_FP8_CURRENT))
		return;
	quantize(e, L, s->m * s->k * (s->batch > 1 ? s->batch : 1), s->fp8 == FP8_NORM);
}

void gt_attn_text(struct em *e, struct lines *L, const struct step *s, const char *dir)
{
	enum op_attn_impl dec = gen_decode_attn(e->c);
	const char *impl = !s->decode ? gen_attn_impl_name(e->c->attn_impl) : op_attn_impl_name(dec);
	int paged = s->decode && dec == ATTN_PAGED;
	char hkv[32] = "";
	if (s->hkv != s->h)
		snprintf(hkv, sizeof hkv, " hkv=%lld", s->hkv);
	/* a decode step's window: the keys it reads */
	long long skv = s->decode && s->window > 0 && s->window < s->skv ? s->window : s->skv;
	gt_add(L, "attn b=%lld h=%lld%s sq=%lld skv=%lld d=%lld causal=%d dtype=%s impl=%s%s%s", s->b, s->h, hkv, s->sq,
	       skv, s->d, s->causal, e->dt, impl, !s->decode && e->c->mode == GEN_TRAIN ? " dir=" : "",
	       !s->decode && e->c->mode == GEN_TRAIN ? dir : "");
	if (!s->decode && s->window > 0)
		gt_append(L, " window=%lld", s->window);
	if (paged)
		gt_append(L, " page=%d", GEN_PAGE);
	long long maxkv = s->decode ? gen_decode_max_keys(e->c, s->b, skv) : 0;
	if (maxkv)
		gt_append(L, " maxkv=%lld", maxkv);
	if (s->flash_drop) /* FlashAttention drops scores out inside its kernel */
		gt_append(L, " dropout=%.9g", e->c->dropout);
}

/* Context parallelism (--cp N): ring attention as Transformer Engine runs it for Megatron-Core
   (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py, AttnFuncWithCPAndKVP2P).
   The sequence is cut into 2N chunks and rank i holds chunks i and 2N-1-i, so that causal work is balanced. Each
   of N steps attends the local queries to one rank's K and V, which travel around the cp ring (send to cp+1,
   receive from cp-1, on streams cps and cpr) while the step before computes: step 0 is the local block, causal
   (S x S over the rank's S tokens); every other step is half a block without a mask (the first half of the keys
   for all queries, or the second half of the queries for all keys: S x S/2), then the output and its log-sum-exp
   are corrected (fp32). The backward walks the ring again; K, V and their gradients travel together, and the
   gradients take one hop more home. Labels: cpq the op before the attention, cpr0 and cpr1 the receives (by
   parity), cpa the last step, cpd the gradients home. */
/* One half of a hop: OP (send or recv) with the next rank of the ring (next) or the previous, around the ends. */
static void cp_hop(struct em *e, struct lines *L, const char *op, int next, long long bytes, const char *stream,
                   const char *key, const char *label)
{
	const char *end = next ? "last" : "0";
	gt_add(L, "on cp!=%s {", end);
	gt_add(L, "  %s peer=cp%c1 bytes=%lld tag=7 stream=%s %s=%s", op, next ? '+' : '-', bytes, stream, key, label);
	gt_add(L, "}");
	gt_add(L, "on cp=%s {", end);
	gt_add(L, "  %s peer=cp%c%lld bytes=%lld tag=7 stream=%s %s=%s", op, next ? '-' : '+', e->c->p.cp - 1, bytes,
	       stream, key, label);
	gt_add(L, "}");
}

/* One exchange: send what label FROM produced to the next rank, receive from the previous one as label TO. */
static void cp_exchange(struct em *e, struct lines *L, long long bytes, const char *from, const char *to)
{
	cp_hop(e, L, "send", 1, bytes, "cps", "after", from);
	cp_hop(e, L, "recv", 0, bytes, "cpr", "id", to);
}

static void cp_ring(struct em *e, struct lines *L, const struct step *s, const char *dir)
{
	long long n = e->c->p.cp, S = s->sq;
	int bwd = dir[0] == 'b';
	long long kv = 2 * s->b * S * s->hkv * s->d * 2; /* K and V of the rank's tokens, 16-bit */
	long long bytes = bwd ? 2 * kv : kv;             /* backward: and their gradients */
	gt_append(L, " id=cpq");
	cp_exchange(e, L, bytes, "cpq", "cpr1");
	struct step a = *s;
	gt_attn_text(e, L, &a, dir); /* step 0: the local block, causal */
	a.causal = 0, a.skv = S / 2;
	for (long long i = 1; i < n; i++) {
		if (i + 1 < n)
			cp_exchange(e, L, bytes, i % 2 ? "cpr1" : "cpr0", i % 2 ? "cpr0" : "cpr1");
		gt_attn_text(e, L, &a, dir);
		gt_append(L, " after=cpr%d", (int)(i % 2));
		/* forward: O and its log-sum-exp rescaled; backward: dQ accumulated */
		gt_add(L, "elem op=add n=%lld dtype=fp32", s->b * S * s->h * s->d);
	}
	if (bwd) {
		gt_append(L, " id=cpa");
		cp_exchange(e, L, kv, "cpa", "cpd");
		gt_add(L, "elem op=add n=%lld dtype=fp32 after=cpd", 2 * s->b * S * s->hkv * s->d); /* dK, dV */
	}
}

/* Context parallelism with all-to-alls (--cp-comm-type a2a, Ulysses-style: Transformer Engine's
   AttnFuncWithCPAndQKVOA2A in context_parallel.py): Q, K and V go from a split of the sequence to a split of the
   heads by one all-to-all over cp, the attention runs over the whole sequence with heads/cp heads, and its output
   comes back by another. The backward sends dO the same way and dQ, dK, dV back. */
static void cp_a2a(struct em *e, struct lines *L, const struct step *s, const char *dir)
{
	long long n = e->c->p.cp, S = s->sq, tok = s->b * S * s->d * 2; /* a head's tokens of one rank, 16-bit */
	long long qkv = tok * (s->h + 2 * s->hkv), o = tok * s->h;
	int bwd = dir[0] == 'b';
	gt_add(L, "coll op=alltoall comm=cp bytes=%lld", bwd ? o : qkv); /* forward Q, K, V; backward dO */
	struct step a = *s;
	a.h = s->h / n, a.hkv = s->hkv / n, a.sq = a.skv = S * n;
	gt_attn_text(e, L, &a, dir);
	gt_add(L, "coll op=alltoall comm=cp bytes=%lld", bwd ? qkv : o); /* forward O; backward dQ, dK, dV */
}

/* context parallelism's attention, as --cp-comm-type says */
static void cp_attn(struct em *e, struct lines *L, const struct step *s, const char *dir)
{
	if (e->c->p.cp_comm == GEN_CP_A2A)
		cp_a2a(e, L, s, dir);
	else
		cp_ring(e, L, s, dir);
}

/* Tensor-parallel communication overlap (--tp-comm-overlap), as Megatron-Core runs it with Transformer Engine's
   userbuffers (Megatron-Bridge's performance recipes turn it on, megatron/bridge/training/comm_overlap.py; TE's
   transformer_engine/pytorch/module/base.py initialize_ub, whose default method per GEMM is followed here, and
   common/comm_gemm_overlap). With sequence parallelism a column-parallel GEMM (QKV, FC1) multiplies the tokens
   every tp rank holds: instead of an all-gather and then the GEMM, the tp chunks travel around the tp ring, one
   `coll op=shift comm=tp` step at a time on stream tpc, while the GEMM works on the chunk in hand, the local one
   first ("ring_exchange", TE's split_overlap_ag_p2p, by the copy engines: no SM taken). A row-parallel GEMM
   (out-projection, FC2) is computed in chunks whose outputs are reduce-scattered while the next is computed
   ("pipeline", pipe_gemm_rs). The backward gathers the gradient of a row-parallel GEMM's output by ring exchange
   beside the chunks of its dgrad GEMM, and a column-parallel GEMM's backward overlaps the input's all-gather and
   the gradient's reduce-scatter with its dgrad and wgrad GEMMs ("bulk", gemm_bwd_sp). Labels: tgq the op before
   the steps, tgr0 and tgr1 the chunks received (by parity), tgs and tgr a pipelined chunk and its reduce-scatter,
   tba, tbd and tbr the bulk all-gather, the dgrad GEMM and the reduce-scatter. */
static void tp_shift(struct lines *L, long long bytes, const char *from, const char *to)
{
	gt_add(L, "coll op=shift comm=tp bytes=%lld stream=tpc after=%s id=%s", bytes, from, to);
}

/* The all-gather of `bytes` (the whole gathered tensor) ring-exchanged beside the GEMM (m x n x k, trans) whose
   rows it gathers: the local chunk first, each chunk received while the one before is multiplied. */
static void ring_ag_gemm(struct em *e, struct lines *L, const struct step *s, long long bytes, long long m, long long n,
                         long long k, const char *trans)
{
	long long t = e->t, mc = m / t, chunk = bytes / t;
	gt_append(L, " id=tgq");
	tp_shift(L, chunk, "tgq", "tgr1");
	gemm_text(e, L, s, mc, n, k, trans, s->gelu && !trans);
	for (long long i = 1; i < t; i++) {
		if (i + 1 < t)
			tp_shift(L, chunk, i % 2 ? "tgr1" : "tgr0", i % 2 ? "tgr0" : "tgr1");
		gemm_text(e, L, s, mc, n, k, trans, s->gelu && !trans);
		gt_append(L, " after=tgr%d", (int)(i % 2));
	}
}

/* The SMs Transformer Engine's userbuffers kernels take beside a GEMM in its "pipeline" and "bulk" overlaps, which
   it leaves to them with cuBLASLt's SM count target (set_sm_margin), and the chunks of its pipelined
   reduce-scatter: get_default_config of initialize_ub (transformer_engine/pytorch/module/base.py), num_sm 16 and
   num_splits 4 for those methods. The GEMMs beside them are written margin=16 (op.h). */
#define TE_COMM_SMS    16
#define TE_PIPE_SPLITS 4

/* The label of the last op added: its id=, or the given one appended to it. */
static const char *last_id(struct lines *L, const char *id, char *buf, size_t len)
{
	const char *v = L->v[L->n - 1], *p = strstr(v, " id=");
	if (!p) {
		gt_append(L, " id=%s", id);
		return id;
	}
	snprintf(buf, len, "%.*s", (int)strcspn(p + 4, " "), p + 4);
	return buf;
}

/* A row-parallel GEMM (out-projection, FC2) and the reduce-scatter of its output (`bytes`, the whole unreduced
   output) in Transformer Engine's "pipeline" overlap (its default for proj_fprop and fc2_fprop): TE_PIPE_SPLITS
   chunks of the GEMM's rows, each chunk's output reduce-scattered by userbuffers kernels on TE_COMM_SMS SMs while
   the next chunk is computed on the others; what follows waits for the last reduce-scatter. */
static void pipe_gemm_rs(struct em *e, struct lines *L, const struct step *s, long long bytes)
{
	long long m = s->m, done = 0;
	quantize_input(e, L, s);
	for (int i = 0; i < TE_PIPE_SPLITS; i++) {
		long long mc = (m - done) / (TE_PIPE_SPLITS - i); /* the rows left, shared out: every row once */
		gemm_text(e, L, s, mc, s->n, s->k, NULL, s->gelu);
		gt_append(L, " margin=%d id=tgs", TE_COMM_SMS);
		gt_add(L, "coll op=reducescatter comm=tp bytes=%lld stream=tpc after=tgs id=tgr", bytes / m * mc);
		done += mc;
	}
	L->wait = "tgr";
}

/* The backward of a column-parallel GEMM (QKV, FC1, the logits) under sequence parallelism in Transformer Engine's
   "bulk" overlap (--tp-comm-overlap; TE's default for qkv_dgrad, qkv_wgrad, fc1_dgrad and fc1_wgrad): the layer's
   input, kept sharded over tp, is all-gathered again (`bytes`) beside the dgrad GEMM, for the wgrad GEMM needs all
   of it; the input's gradient is reduce-scattered beside the wgrad GEMM, and what follows waits for it; the
   userbuffers kernels take TE_COMM_SMS SMs, the GEMMs beside them are chosen for the others. Megatron-Core runs the
   same pattern with NCCL when sequence parallelism is on without it (LinearWithGradAccumulationAndAsyncCommunication),
   but NCCL's kernels take SMs the model cannot count yet (their channels): modelled so, without that charge, the 29
   sequence-parallel training rows of the validation suite came out 1-4% faster on 2026-11-28 (13 nearer, 16
   farther; the training bias +4.6% to +6.0%), so sequence parallelism alone keeps its reduce-scatter after the
   GEMMs and no second all-gather (issue 17). */
static void gemm_bwd_sp(struct em *e, struct lines *L, const struct step *s, long long bytes)
{
	long long b = s->batch > 1 ? s->batch : 1;
	char buf[64], margin[32] = "";
	if (e->c->p.tp_overlap)
		snprintf(margin, sizeof margin, " margin=%d", TE_COMM_SMS);
	const char *from = last_id(L, "tbq", buf, sizeof buf);
	gt_add(L, "coll op=allgather comm=tp bytes=%lld stream=tpc after=%s id=tba", bytes, from);
	if (s->gelu)
		gt_add(L, "elem op=gelu n=%lld dtype=%s", s->m * s->n * b, e->dt);
	if (fp8_step(e, s))
		quantize(e, L, s->m * s->n * b, 0);
	gemm_text(e, L, s, s->m, s->k, s->n, "nt", 0); /* dX = dY W^T */
	gt_append(L, "%s id=tbd", margin);
	gt_add(L, "coll op=reducescatter comm=tp bytes=%lld stream=tpc after=tbd id=tbr", bytes);
	gemm_text(e, L, s, s->k, s->n, s->m, "tn", 0); /* dW = X^T dY, with all of X */
	gt_append(L, "%s after=tba", margin);
	L->wait = "tbr";
}

/* The forward of a block's steps; with --tp-comm-overlap a ring step and the GEMM beside it go together. */
void gt_steps_fwd(struct em *e, struct lines *L, const struct block *B)
{
	for (int i = 0; i < B->n; i++) {
		const struct step *s = &B->st[i], *nx = i + 1 < B->n ? &B->st[i + 1] : NULL;
		if (s->ring && s->kind == ST_TP_F && nx && nx->kind == ST_GEMM && L->n > 0) {
			quantize_input(e, L, nx);
			ring_ag_gemm(e, L, nx, s->bytes, nx->m, nx->n, nx->k, NULL);
			i++;
		} else if (s->kind == ST_GEMM && nx && nx->ring && nx->kind == ST_TP_G) {
			pipe_gemm_rs(e, L, s, nx->bytes);
			i++;
		} else {
			gt_step_fwd(e, L, s);
		}
	}
}

/* A GEMM's backward: the GELU epilogue's gradient, the output gradient quantized (fp8), dgrad and wgrad; with
   ring_bytes > 0 (--tp-comm-overlap) the output gradient, sharded over tp, is gathered beside the chunks of the
   dgrad GEMM (its wgrad GEMM then has all of it). */
static void gemm_bwd(struct em *e, struct lines *L, const struct step *s, long long ring_bytes)
{
	long long b = s->batch > 1 ? s->batch : 1;
	if (s->gelu)
		gt_add(L, "elem op=gelu n=%lld dtype=%s", s->m * s->n * b, e->dt);
	if (fp8_step(e, s)) /* the output's gradient, for both GEMMs */
		quantize(e, L, s->m * s->n * b, 0);
	if (ring_bytes > 0)
		ring_ag_gemm(e, L, s, ring_bytes, s->m, s->k, s->n, "nt"); /* dX = dY W^T, by chunks */
	else
		gemm_text(e, L, s, s->m, s->k, s->n, "nt", 0); /* dX = dY W^T */
	gemm_text(e, L, s, s->k, s->n, s->m, "tn", 0);         /* dW = X^T dY */
}

/* The backward of a block's steps, last first; with --tp-comm-overlap a row-parallel GEMM's ring step goes with
   its dgrad (gemm_bwd). */
static void step_bwd(struct em *e, struct lines *L, const struct step *s);
void gt_steps_bwd(struct em *e, struct lines *L, const struct block *B)
{
	/* the bulk overlap with --tp-comm-overlap only: sequence parallelism alone (NCCL) keeps the reduce-scatter
	   after the GEMMs and does not gather the input again (see gemm_bwd_sp) */
	int sp_bwd = e->c->p.sp && e->c->p.tp_overlap && e->t > 1 && e->c->mode == GEN_TRAIN;
	for (int i = B->n - 1; i >= 0; i--) {
		const struct step *s = &B->st[i], *pv = i > 0 ? &B->st[i - 1] : NULL;
		if (s->ring && s->kind == ST_TP_G && pv && pv->kind == ST_GEMM && !pv->gelu && L->n > 0) {
			gemm_bwd(e, L, pv, s->bytes);
			i--;
		} else if (sp_bwd && s->kind == ST_GEMM && pv && pv->kind == ST_TP_F && L->n > 0) {
			gemm_bwd_sp(e, L, s, pv->bytes);
			i--;
		} else {
			step_bwd(e, L, s);
		}
	}
	if (L->wait) /* nothing after it in the block: a mark of no time that waits */
		gt_add(L, "delay time=0ns");
}

/* the attention forward; naive attention with dropout then drops out
   scores (after the softmax, before P V: the kernels run in order either
   way), as a pass of two streams in and one out */
static void attn_fwd(struct em *e, struct lines *L, const struct step *s)
{
	if (e->c->p.cp > 1 && !s->decode) {
		cp_attn(e, L, s, "fwd");
		return;
	}
	gt_attn_text(e, L, s, "fwd");
	if (s->drop)
		gt_add(L, "elem op=mul n=%lld dtype=%s", s->drop, e->dt);
}

static void elem_text(struct em *e, struct lines *L, const struct step *s)
{
	char cols[32] = "";
	if (s->k && s->k != s->n)
		snprintf(cols, sizeof cols, " cols=%lld", s->k);
	gt_add(L, "elem op=%s n=%lld%s dtype=%s%s", s->op, s->n, cols, s->dtype ? s->dtype : e->dt,
	       s->extra ? s->extra : "");
}

/* A batched GEMM of the SSD kernels, in the activations' dtype (never fp8). */
static void ssd_gemm(struct em *e, struct lines *L, long long m, long long n, long long k, long long batch)
{
	gt_add(L, "gemm m=%lld n=%lld k=%lld batch=%lld dtype=%s", m, n, k, batch, e->dt);
}

/* Mamba-2's chunked scan as mamba_ssm runs it (mamba_ssm/ops/triton/ssd_combined.py, with chunks of Q tokens,
   H heads of P channels, G groups of B and C of N states): each Triton kernel as the GEMM or the pass over
   memory it is. Forward (_mamba_chunk_scan_combined_fwd): the dt cumsum a chunk, the chunk states B^T x (N x P
   over Q a head), their passing from chunk to chunk (a pass over the fp32 states), C B^T (Q x Q over N a group),
   and the chunk scan: those scores times x (Q x P over Q) and C times the entering states (Q x P over N), a head.
   Backward (_mamba_chunk_scan_combined_bwd): the cumsum, C B^T, the chunk states and their passing again
   (recomputed, not saved), dstates (N x P over Q), the states' passing backward (fp32 states and their
   gradients), dx (the scores' and the states' parts), dB and dC (Q x N over P a head), dCB (Q x Q over P), their
   two products back through C B^T, the decay's gradient (Q x Q over P) and the cumsum's backward. */
static void ssd_text(struct em *e, struct lines *L, const struct step *s, int bwd)
{
	long long Q = GEN_MAMBA_CHUNK, P = s->p, N = s->state, ch = s->chunks, hb = ch * s->heads, gb = ch * s->groups;
	long long dt = s->tokens * s->heads, states = hb * P * N;
	gt_add(L, "elem op=add n=%lld dtype=fp32", dt);
	if (bwd)
		ssd_gemm(e, L, Q, Q, N, gb);
	ssd_gemm(e, L, N, P, Q, hb);
	gt_add(L, "elem op=copy n=%lld dtype=fp32", states); /* read the chunk states, write the entering ones */
	if (!bwd) {
		ssd_gemm(e, L, Q, Q, N, gb);
		ssd_gemm(e, L, Q, P, Q, hb);
		ssd_gemm(e, L, Q, P, N, hb);
		return;
	}
	ssd_gemm(e, L, N, P, Q, hb);                        /* dstates */
	gt_add(L, "elem op=add n=%lld dtype=fp32", states); /* state passing backward: states and dstates in */
	ssd_gemm(e, L, Q, P, Q, hb);                        /* dx: through the scores */
	ssd_gemm(e, L, Q, P, N, hb);                        /* dx: through the states */
	ssd_gemm(e, L, Q, N, P, hb);                        /* dB */
	ssd_gemm(e, L, Q, N, P, hb);                        /* dC */
	ssd_gemm(e, L, Q, Q, P, hb);                        /* dCB */
	ssd_gemm(e, L, Q, N, Q, gb);                        /* dB += dCB^T C */
	ssd_gemm(e, L, Q, N, Q, gb);                        /* dC += dCB B */
	ssd_gemm(e, L, Q, Q, P, hb);                        /* the decay's gradient */
	gt_add(L, "elem op=add n=%lld dtype=fp32", dt);
}

static void tp_coll(struct em *e, struct lines *L, const char *op, long long bytes)
{
	if (e->t > 1)
		gt_add(L, "coll op=%s comm=tp bytes=%lld", op, bytes);
}

/* an MoE layer's all-to-all; the flex dispatcher's carries the routing, which makes the replay move a token
   once per rank and node it reaches (DeepEP, HybridEP) */
void gt_a2a_text(struct em *e, struct lines *L, const struct step *s)
{
	const struct gen_model *m = e->m;
	if (!s->route) {
		gt_add(L, "coll op=alltoall comm=%s bytes=%lld", e->cx, s->bytes);
		return;
	}
	gt_add(L, "coll op=alltoall comm=%s bytes=%lld topk=%lld experts=%lld", e->cx, s->bytes, m->topk, m->experts);
	if (m->router_groups > 1)
		gt_append(L, " groups=%lld group_topk=%lld", m->router_groups, m->router_group_topk);
}

void gt_step_fwd(struct em *e, struct lines *L, const struct step *s)
{
	int sp = e->c->p.sp;
	switch (s->kind) {
	case ST_NORM:
	case ST_ELEM: elem_text(e, L, s); break;
	case ST_GEMM:
		quantize_input(e, L, s);
		gemm_text(e, L, s, s->m, s->n, s->k, NULL, s->gelu);
		break;
	case ST_ATTN: attn_fwd(e, L, s); break;
	case ST_TP_F:
		if (sp)
			tp_coll(e, L, "allgather", s->bytes);
		break;
	case ST_TP_G: tp_coll(e, L, sp ? "reducescatter" : "allreduce", s->bytes); break;
	case ST_TP_AR_FWD: tp_coll(e, L, "allreduce", s->bytes); break;
	case ST_TP_AG_FWD: tp_coll(e, L, "allgather", s->bytes); break;
	case ST_A2A: gt_a2a_text(e, L, s); break;
	case ST_EP_AG: gt_add(L, "coll op=allgather comm=ep bytes=%lld", s->bytes); break;
	case ST_EP_RS: gt_add(L, "coll op=reducescatter comm=ep bytes=%lld", s->bytes); break;
	case ST_EMB: gt_add(L, "embedding tokens=%lld dim=%lld vocab=%lld dtype=%s", s->m, s->n, s->k, e->dt); break;
	case ST_CONV1D: gt_add(L, "elem op=silu n=%lld dtype=%s", s->n, e->dt); break;
	case ST_SSD: ssd_text(e, L, s, 0); break;
	case ST_GNORM: gt_add(L, "elem op=swiglu n=%lld dtype=%s", s->n, e->dt); break;
	}
}

/* A norm's backward as Transformer Engine runs it (its fused ln_bwd / rmsnorm_bwd kernels: dx, and the weight
   gradient's partial sums, from x and dy; then the partials reduced) */
static void norm_bwd_text(struct em *e, struct lines *L, const struct step *s)
{
	gt_add(L, "elem op=%s_bwd n=%lld cols=%lld dtype=%s", s->op, s->n, s->k ? s->k : s->n,
	       s->dtype ? s->dtype : e->dt);
}

static void step_bwd(struct em *e, struct lines *L, const struct step *s)
{
	int sp = e->c->p.sp;
	switch (s->kind) {
	case ST_NORM: norm_bwd_text(e, L, s); break;
	case ST_ELEM: elem_text(e, L, s); break;
	case ST_GEMM: gemm_bwd(e, L, s, 0); break;
	case ST_ATTN:
		if (e->c->p.recompute == GEN_RC_SELECTIVE)
			attn_fwd(e, L, s);
		if (s->drop) /* the scores' gradient through the mask */
			gt_add(L, "elem op=mul n=%lld dtype=%s", s->drop, e->dt);
		if (e->c->p.cp > 1)
			cp_attn(e, L, s, "bwd");
		else
			gt_attn_text(e, L, s, "bwd");
		break;
	case ST_TP_F: tp_coll(e, L, sp ? "reducescatter" : "allreduce", s->bytes); break;
	case ST_TP_G:
		if (sp)
			tp_coll(e, L, "allgather", s->bytes);
		break;
	case ST_TP_AR_FWD:
	case ST_TP_AG_FWD: break;
	case ST_A2A: gt_a2a_text(e, L, s); break;
	case ST_EP_AG:
		if (s->grad)
			gt_add(L, "coll op=reducescatter comm=ep bytes=%lld", s->bytes);
		break;
	case ST_EP_RS: gt_add(L, "coll op=allgather comm=ep bytes=%lld", s->bytes); break;
	case ST_EMB: gt_add(L, "elem op=add n=%lld dtype=fp32", s->m * s->n); break;
	/* Megatron-Core's Mamba path (mamba_split_conv1d_scan_combined, checkpoint_lvl 1) recomputes the
	   convolution's output in the backward, then causal_conv1d_bwd reads x and the gradient (dx, and the taps'
	   gradient reduced); the gated norm's backward reads y, z and the gradient and writes dy and dz */
	case ST_CONV1D:
		gt_add(L, "elem op=silu n=%lld dtype=%s", s->n, e->dt);
		gt_add(L, "elem op=swiglu n=%lld dtype=%s", s->n, e->dt);
		break;
	case ST_SSD: ssd_text(e, L, s, 1); break;
	case ST_GNORM:
		gt_add(L, "elem op=swiglu n=%lld dtype=%s", s->n, e->dt);
		gt_add(L, "elem op=add n=%lld dtype=%s", s->n, e->dt);
		break;
	}
}
