/*
 * gen_blocks.c -- the blocks `sim gen` writes (gen_trace_int.h): each kind of layer as the kernels its framework
 * runs, in forward order: attention (MHA/GQA, MLA), the MLP (GELU, SwiGLU, squared ReLU), the mixture of experts
 * with its router, dispatch and combine, the Mamba-2 mixer, the embedding, the LM head and the MTP module; and the
 * weights a block holds on one rank. How each step's ops are written forward and backward is gen_trace.c's.
 */
#include "gen_trace_int.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- step constructors ----------------------------------------------------- */

static struct step *push(struct block *B, enum step_kind k)
{
	if (B->n == MAX_STEPS)
		abort();
	struct step *s = &B->st[B->n++];
	memset(s, 0, sizeof *s);
	s->kind = k;
	return s;
}

static void s_elem(struct block *B, const char *op, long long n, long long cols, const char *dtype)
{
	struct step *s = push(B, ST_ELEM);
	s->op = op;
	s->n = n;
	s->k = cols;
	s->dtype = dtype;
}

static void s_norm(struct em *e, struct block *B, long long rows, long long cols)
{
	s_elem(B, e->m->norm == GEN_RMSNORM ? "rmsnorm" : "layernorm", rows * cols, cols, NULL);
	B->st[B->n - 1].kind = ST_NORM;
}

static struct step *s_gemm(struct block *B, long long m, long long n, long long k, long long batch, int gelu,
                           enum fp8_in fp8)
{
	struct step *s = push(B, ST_GEMM);
	s->m = m;
	s->n = n;
	s->k = k;
	s->batch = batch;
	s->gelu = gelu;
	s->fp8 = fp8;
	return s;
}

static void s_coll(struct block *B, enum step_kind k, long long bytes)
{
	push(B, k)->bytes = bytes;
}

static void s_a2a(struct block *B, long long bytes, int route)
{
	struct step *s = push(B, ST_A2A);
	s->bytes = bytes;
	s->route = route;
}

/* ---- blocks ---------------------------------------------------------------- */

/* scores the dropout passes over: naive attention in training with dropout */
static long long attn_dropout(const struct em *e, const struct tok *k)
{
	const struct gen_config *c = e->c;
	if (c->attn_impl != GEN_NAIVE || c->dropout <= 0 || c->mode != GEN_TRAIN)
		return 0;
	return k->b * e->al * k->sq * k->skv;
}

/* hidden dropout on n elements (before a residual add, after the embedding) */
static void s_dropout(struct em *e, struct block *B, long long n)
{
	if (e->c->dropout > 0 && e->c->mode == GEN_TRAIN)
		s_elem(B, "mul", n, 0, NULL);
}

/* the attention of k's tokens over al query heads and hkv key/value heads of dimension d */
static void s_attn(struct em *e, struct block *B, const struct tok *k, long long hkv, long long d)
{
	struct step *a = push(B, ST_ATTN);
	*a = (struct step){.kind = ST_ATTN,
	                   .b = k->b,
	                   .h = e->al,
	                   .hkv = hkv,
	                   .sq = k->sq,
	                   .skv = k->skv,
	                   .d = d,
	                   .causal = !k->decode,
	                   .decode = k->decode};
	a->drop = attn_dropout(e, k);
	a->window = e->swa ? e->m->window : 0;
	a->flash_drop = e->c->attn_impl != GEN_NAIVE && e->c->dropout > 0 && e->c->mode == GEN_TRAIN && !k->decode;
}

static void build_attn_mha(struct em *e, struct block *B, const struct tok *k)
{
	long long T = k->b * k->sq, dh = e->m->head_dim;
	s_gemm(B, T, (e->al + 2 * e->kvl) * dh, e->h, 1, 0, FP8_NORM);
	if (e->m->qk_norm) { /* over each head's query and key, before RoPE */
		s_norm(e, B, T * e->al, dh);
		s_norm(e, B, T * e->kvl, dh);
	}
	if (e->m->rope)
		s_elem(B, "rope", T * (e->al + e->kvl) * dh, 0, NULL);
	/* vLLM writes the step's keys and values into its paged cache with a kernel of their own before the attention
	   (reshape_and_cache / reshape_and_cache_flash, from each backend's forward in vllm/attention/backends/) */
	if (e->c->mode == GEN_INFER && e->c->inf.engine == GEN_ENGINE_VLLM)
		s_elem(B, "copy", T * 2 * e->kvl * dh, 0, NULL);
	s_attn(e, B, k, e->kvl, dh);
	s_gemm(B, T, e->h, e->al * dh, 1, 0, FP8_SEP);
}

/* MLA (DeepSeek-V2/V3): low-rank query and key/value projections (the down
   projections are replicated over tp), attention on nope+rope dims. */
static void build_attn_mla(struct em *e, struct block *B, const struct tok *k)
{
	const struct gen_model *m = e->m;
	long long T = k->b * k->sq, dqk = m->nope_dim + m->rope_dim;
	s_gemm(B, T, m->q_lora, e->h, 1, 0, FP8_NORM);
	s_norm(e, B, T, m->q_lora);
	s_gemm(B, T, e->al * dqk, m->q_lora, 1, 0, FP8_NORM);
	s_gemm(B, T, m->kv_lora + m->rope_dim, e->h, 1, 0, FP8_NORM);
	s_norm(e, B, T, m->kv_lora);
	s_gemm(B, T, e->al * (m->nope_dim + m->v_dim), m->kv_lora, 1, 0, FP8_NORM);
	s_elem(B, "rope", T * (e->al + 1) * m->rope_dim, 0, NULL);
	s_attn(e, B, k, e->al, dqk);
	s_gemm(B, T, e->h, e->al * m->v_dim, 1, 0, FP8_SEP);
}

/* DeepSeek-V4's attention (gen_csa.c) of a layer whose keys compress e->csa to one (0: the window alone), as
   Megatron-Core's dsv4_hybrid runs it: wq_a to the query latent and its norm, wq_b to the heads and a norm over
   each head, wkv to the one key/value head and its norm, RoPE on rope_dim of each; the compressor's keys and gates
   (two sets where CSA's windows overlap), pooled ratio to one by a softmax over the gates; with CSA the lightning
   indexer: its queries from the latent, a weight a head, its own compressor, the scores of each query against the
   sequence's compressed keys (a GEMM of the queries' heads against them), and the pass that weighs the heads and
   picks the top-k; then the sparse attention, MQA over the keys each query sees (the window and its compressed
   keys, gen_csa_keys: a non-causal attention over that many keys a query), and the output: wo_a by groups of
   heads, wo_b. */
static void build_attn_csa(struct em *e, struct block *B, const struct tok *k)
{
	const struct gen_model *m = e->m;
	long long T = k->b * k->sq, d = m->head_dim, a = e->al, r = e->csa;
	s_gemm(B, T, m->q_lora, e->h, 1, 0, FP8_NORM);
	s_norm(e, B, T, m->q_lora);
	s_gemm(B, T, a * d, m->q_lora, 1, 0, FP8_NORM);
	s_norm(e, B, T * a, d);
	s_gemm(B, T, d, e->h, 1, 0, FP8_NORM);
	s_norm(e, B, T, d);
	s_elem(B, "rope", T * (a + 1) * m->rope_dim, 0, NULL);
	if (r > 0) {
		long long sets = r == m->csa_ratio ? 2 : 1;
		s_gemm(B, T, 2 * sets * d, e->h, 1, 0, FP8_NORM);
		s_elem(B, "softmax", T * sets * d, r, "fp32");
	}
	if (r > 0 && r == m->csa_ratio) {
		long long nc = k->skv / r, di = m->idx_dim;
		s_gemm(B, T, m->idx_heads * di, m->q_lora, 1, 0, FP8_NORM);
		s_gemm(B, T, m->idx_heads, e->h, 1, 0, FP8_NONE);
		s_gemm(B, T, 4 * di, e->h, 1, 0, FP8_NORM);
		s_elem(B, "softmax", T * 2 * di, r, "fp32");
		s_gemm(B, k->sq * m->idx_heads, nc, di, k->b, 0, FP8_NONE);
		s_elem(B, "softmax", T * nc, nc, "fp32");
	}
	struct step *x = push(B, ST_ATTN);
	x->b = k->b, x->h = a, x->hkv = 1, x->sq = k->sq, x->d = d;
	x->skv = (long long)(gen_csa_keys(m, r, (double)k->skv) + 0.5);
	s_gemm(B, T, m->o_lora, a * d / m->o_groups, m->o_groups, 0, FP8_SEP);
	s_gemm(B, T, e->h, m->o_groups * m->o_lora, 1, 0, FP8_SEP);
}

/* DeepSeek-V4's hyper-connections around a sublayer: before it, the mixing coefficients of the hc streams (a
   projection of (2 + hc) hc a token; the Sinkhorn iterations on hc x hc are a few registers a token) and their
   weighted sum into the sublayer's input, a kernel reading the hc streams and writing one (an op of that traffic);
   after it, the streams remixed and the sublayer's output added to each, reading hc + 1 and writing hc. */
static void hc_pre(struct em *e, struct block *B, long long T)
{
	long long hc = e->m->hc;
	s_gemm(B, T, (2 + hc) * hc, e->h, 1, 0, FP8_NONE);
	s_elem(B, "read", T * (hc + 1) * e->h, 0, NULL);
}

static void hc_post(struct em *e, struct block *B, long long T)
{
	s_elem(B, "read", T * (2 * e->m->hc + 1) * e->h, 0, NULL);
}

/* the MLP of width f split over `split` ranks (tp; experts folded over tp run whole: 1) on T tokens of width d
   (the model's, or LatentMoE's experts'), batch experts at once; `in`:
   how its input reaches fp8 (the layer's norm, or the dispatcher's tokens). Megatron-Core's SwiGLU/GELU is its
   own fused kernel writing bf16, so the second GEMM quantizes its input separately. */
static void build_mlp_w(struct em *e, struct block *B, long long T, long long d, long long f, long long split,
                        long long batch, enum fp8_in in)
{
	long long fl = f / split; /* the columns this rank holds: f / tp, or whole */
	if (e->m->act == GEN_SWIGLU) {
		s_gemm(B, T, 2 * fl, d, batch, 0, in); /* gate and up projections, fused */
		s_elem(B, "swiglu", T * fl * batch, 0, NULL);
	} else if (e->m->act == GEN_RELU2) { /* squared ReLU, a kernel of its own (Megatron-Core's fused one) */
		s_gemm(B, T, fl, d, batch, 0, in);
		s_elem(B, "relu", T * fl * batch, 0, NULL);
	} else {
		s_gemm(B, T, fl, d, batch, 1, in);
	}
	s_gemm(B, T, d, fl, batch, 0, FP8_SEP);
}

static void build_mlp(struct em *e, struct block *B, long long T, long long f, long long batch, enum fp8_in in)
{
	build_mlp_w(e, B, T, e->h, f, e->t, batch, in);
}

/* Megatron-Core's all-gather dispatcher (MoEAllGatherTokenDispatcher, token_dispatcher.py): every rank gathers
   the ep group's tokens, their routing map (one byte per token and expert, no gradient) and probabilities (fp32),
   picks the copies its local experts need (a permute: one copy per token and local expert), and after them
   scatters the weighted outputs back into the gathered order (unpermute) and reduce-scatters them to their ranks.
   With ep 1 there is nothing to gather. */
static void moe_allgather(struct em *e, struct block *B, long long T, long long w, long long per, long long active,
                          long long hits)
{
	const struct gen_model *m = e->m;
	long long ep = e->c->p.ep;
	int train = e->c->mode == GEN_TRAIN;
	if (ep > 1) {
		s_coll(B, ST_EP_AG, T * ep * m->experts);     /* routing map */
		s_coll(B, ST_EP_AG, T * ep * m->experts * 4); /* probabilities */
		B->st[B->n - 1].grad = 1;
		s_coll(B, ST_EP_AG, T * ep * w * 2); /* tokens */
		B->st[B->n - 1].grad = 1;
	}
	if (train || ep > 1)
		s_elem(B, "copy", hits * w, 0, NULL); /* permute */
	build_mlp_w(e, B, per, w, m->expert_ffn, e->t, active, FP8_SEP);
	if (train || ep > 1)
		s_elem(B, "copy", hits * w, 0, NULL); /* unpermute */
	if (ep > 1)
		s_coll(B, ST_EP_RS, T * ep * w * 2);
}

/* --same-prompt (inference): of a block's T tokens only e->distinct differ (a decode step of B copies of one
   sequence: one), the same on every rank of the ep group (one prompt throughout), and equal tokens take the same
   experts: the group's ep x T x topk assignments fall on distinct x topk of the experts (build_moe calls this when
   that is fewer than all of them; else the routing is the balanced one, --moe-imbalance included), spread over the
   group; *active of them on the busiest rank, *per assignments each (at most --moe-capacity-factor times the
   balanced share, the rest dropped), *recv in all. */
static void moe_spread(const struct em *e, long long T, long long local, long long *active, long long *per,
                       long long *recv)
{
	const struct gen_model *m = e->m;
	long long hit = e->distinct * m->topk;
	assert(hit > 0 && hit < m->experts);
	long long on_rank = (hit + e->c->p.ep - 1) / e->c->p.ep;
	*active = on_rank < local ? on_rank : local;
	long long all = e->c->p.ep * T * m->topk;
	*per = (all + hit - 1) / hit;
	if (e->c->p.moe_capacity > 0) {
		long long cap = (long long)ceil(e->c->p.moe_capacity * (double)all / (double)m->experts - 1e-9);
		if (cap < *per)
			*per = cap > 0 ? cap : 1;
	}
	*recv = *active * *per;
}

/* router, dispatch, the local experts' tokens, combine, shared experts. A
   rank's local experts receive T x topk token assignments (balanced routing:
   the ep group's ep T topk spread over all experts, local / experts of them
   here), so min(local, T topk) experts run, each on its share: a decode step
   of one sequence reads topk experts' weights, not every expert's. With
   --moe-imbalance F the rank is the ep group's busiest, which receives F
   times that (at most --moe-capacity-factor times it, the rest dropped:
   gen_moe_load); every rank waits for it at the combine, so its share sets
   the step: what it receives (the dispatch and combine, and the sort of the
   received chunks) and its experts' GEMMs scale, what it sends (its own
   tokens' permute) does not.
   Training moves the token copies as Megatron-Core's all-to-all dispatcher
   does (megatron/core/transformer/moe/token_dispatcher.py, moe_utils.py):
   a permute that groups the T x topk copies by expert before the dispatch,
   with ep > 1 and several local experts a sort of the received chunks by
   local expert after it, and the mirror images (unsort, unpermute with the
   routing weights) around the combine: one copy kernel of T x topk x h
   elements each. Inference engines fuse the gather into the expert GEMM
   (vLLM's fused_moe), so inference has none. LatentMoE (Megatron-Core's
   moe_layer.py with moe_latent_size): after the router, fc1_latent_proj
   takes the tokens down to the latent width, which every copy, transfer
   and expert GEMM then has, and fc2_latent_proj takes the combined output
   back up; both are linear layers replicated over tp, on all T tokens.
   Folded over tp (gen_ep_folded), T is the rank's own tokens (sequence
   parallel), routed to experts it runs whole; the shared experts keep tp,
   their input gathered over it and their output scattered back.
   With --same-prompt (moe_spread) a decode step reads topk experts' weights
   whatever the batch. */
static void build_moe(struct em *e, struct block *B, long long T)
{
	int folded = gen_ep_folded(&e->c->p);
	const struct gen_model *m = e->m;
	long long ep = e->c->p.ep, local = m->experts / ep, hits = T * m->topk;
	long long recv = (long long)ceil(gen_moe_load(&e->c->p) * (double)hits - 1e-9); /* the busiest rank's */
	long long active = recv < local ? recv : local, per = (recv + active - 1) / active;
	if (e->distinct > 0 && e->distinct < T && e->distinct * m->topk < m->experts) /* fewer experts than all hit */
		moe_spread(e, T, local, &active, &per, &recv);
	long long w = m->moe_latent ? m->moe_latent : e->h; /* the width the experts work on */
	long long a2a = recv * w * 2;
	enum gen_dispatcher d = e->c->p.dispatcher;
	int train = e->c->mode == GEN_TRAIN, sort = train && ep > 1 && local > 1;
	s_gemm(B, T, m->experts, e->h, 1, 0, FP8_NONE);
	s_elem(B, "softmax", T * m->experts, m->experts, "fp32");
	if (m->moe_latent)
		s_gemm(B, T, w, e->h, 1, 0, FP8_NORM); /* fc1_latent_proj, on the norm's output */
	if (d == GEN_DISP_ALLGATHER) {
		moe_allgather(e, B, T, w, per, active, recv);
	} else {
		if (train && d == GEN_DISP_ALLTOALL)
			s_elem(B, "copy", hits * w, 0, NULL); /* permute */
		if (ep > 1)
			s_a2a(B, a2a, d == GEN_DISP_FLEX);
		if (sort || (train && d == GEN_DISP_FLEX))
			s_elem(B, "copy", recv * w, 0, NULL); /* sort chunks by local expert; flex: permute */
		build_mlp_w(e, B, per, w, m->expert_ffn, folded ? 1 : e->t, active, FP8_SEP);
		if (sort || (train && d == GEN_DISP_FLEX))
			s_elem(B, "copy", recv * w, 0, NULL); /* unsort; flex: unpermute */
		if (ep > 1)
			s_a2a(B, a2a, d == GEN_DISP_FLEX);
		if (train && d == GEN_DISP_ALLTOALL)
			s_elem(B, "copy", hits * w, 0, NULL); /* unpermute */
	}
	if (m->moe_latent)
		s_gemm(B, T, e->h, w, 1, 0, FP8_SEP); /* fc2_latent_proj */
	if (m->shared && folded) {
		s_coll(B, ST_TP_F, T * e->t * e->h * 2);
		build_mlp(e, B, T * e->t, m->expert_ffn * m->shared, 1, FP8_SEP);
		s_coll(B, ST_TP_G, T * e->t * e->h * 2);
	} else if (m->shared) {
		build_mlp(e, B, T, m->expert_ffn * m->shared, 1, FP8_SEP);
	}
}

/* a transformer layer: norm, attention, residual, norm, FFN, residual */
static void build_layer(struct em *e, struct block *B, const struct tok *k, int moe)
{
	long long T = k->b * k->sq, Tn = e->c->p.sp ? T / e->t : T, act = T * e->h * 2;
	/* --tp-comm-overlap: Transformer Engine's linear layers of a dense layer (QKV, out-projection, FC1, FC2)
	   ring-exchange their all-gathers and reduce-scatters; MLA's projections and MoE's dispatch do not */
	int ring = e->c->p.tp_overlap && e->c->p.sp && e->t > 1 && e->c->mode == GEN_TRAIN;
	int ring_attn = ring && e->m->attn == GEN_MHA, ring_mlp = ring && !moe, hc = e->m->hc > 1;
	if (hc)
		hc_pre(e, B, Tn);
	s_norm(e, B, Tn, e->h);
	s_coll(B, ST_TP_F, act);
	B->st[B->n - 1].ring = ring_attn;
	if (e->m->attn == GEN_CSA)
		build_attn_csa(e, B, k);
	else if (e->m->attn == GEN_MLA)
		build_attn_mla(e, B, k);
	else
		build_attn_mha(e, B, k);
	s_coll(B, ST_TP_G, act);
	B->st[B->n - 1].ring = ring_attn;
	s_dropout(e, B, Tn * e->h);
	if (hc) {
		hc_post(e, B, Tn);
		hc_pre(e, B, Tn);
	} else {
		s_elem(B, "add", Tn * e->h, 0, NULL);
	}
	s_norm(e, B, Tn, e->h);
	if (moe && gen_ep_folded(&e->c->p)) { /* the rank's own tokens to the experts: no gather over tp */
		build_moe(e, B, Tn);
	} else {
		s_coll(B, ST_TP_F, act);
		B->st[B->n - 1].ring = ring_mlp;
		if (moe)
			build_moe(e, B, T);
		else
			build_mlp(e, B, T, e->m->ffn, 1, FP8_NORM);
		s_coll(B, ST_TP_G, act);
		B->st[B->n - 1].ring = ring_mlp;
	}
	s_dropout(e, B, Tn * e->h);
	if (hc)
		hc_post(e, B, Tn);
	else
		s_elem(B, "add", Tn * e->h, 0, NULL);
}

/* A Mamba-2 mixer (Megatron-Core's MambaMixer, megatron/core/ssm/mamba_mixer.py, with mamba_ssm's kernels) on
   T tokens of b sequences: in_proj (column-parallel: each rank's heads and groups), the causal depthwise
   convolution over x, B and C with its SiLU (causal_conv1d: one pass, as a SiLU's traffic), the SSD scan by
   chunks of Q tokens (mamba_chunk_scan_combined: the dt cumsum, the chunk states B^T x a head, the states passed
   from chunk to chunk, C B^T a group, and the chunk scan: those scores times x and C times the entering state, a
   head; batched GEMMs in the activations' dtype, never fp8), the gated RMSNorm y silu(z) (one pass reading y and
   z, as SwiGLU's), and out_proj (row-parallel). */
static void build_mamba(struct em *e, struct block *B, const struct tok *k)
{
	const struct gen_model *m = e->m;
	long long T = k->b * k->sq, t = e->t, Q = GEN_MAMBA_CHUNK;
	long long H = m->mamba_heads / t, G = m->mamba_groups / t, P = m->mamba_head_dim, N = m->mamba_state;
	long long din = H * P, conv = din + 2 * G * N;
	s_gemm(B, T, din + conv + H, e->h, 1, 0, FP8_NORM);
	push(B, ST_CONV1D)->n = T * conv;
	struct step *x = push(B, ST_SSD);
	x->chunks = k->b * ((k->sq + Q - 1) / Q), x->heads = H, x->groups = G, x->p = P, x->state = N, x->tokens = T;
	push(B, ST_GNORM)->n = T * din;
	s_gemm(B, T, e->h, din, 1, 0, FP8_SEP);
}

/* a hybrid model's layer: norm, one sublayer, residual (Megatron-Core's MambaLayer and the hybrid stack's
   TransformerLayers with an identity MLP or attention) */
static void build_sublayer(struct em *e, struct block *B, const struct tok *k, enum block_kind kind)
{
	long long T = k->b * k->sq, Tn = e->c->p.sp ? T / e->t : T, act = T * e->h * 2;
	s_norm(e, B, Tn, e->h);
	int own = kind == BK_EXPERTS && gen_ep_folded(&e->c->p); /* the rank's own tokens to the experts */
	if (!own)
		s_coll(B, ST_TP_F, act);
	switch (kind) {
	case BK_MAMBA: build_mamba(e, B, k); break;
	case BK_ATTN: build_attn_mha(e, B, k); break;
	case BK_MLP: build_mlp(e, B, T, e->m->ffn, 1, FP8_NORM); break;
	default: build_moe(e, B, own ? Tn : T); break;
	}
	if (!own)
		s_coll(B, ST_TP_G, act);
	s_dropout(e, B, Tn * e->h);
	s_elem(B, "add", Tn * e->h, 0, NULL);
}

static void build_emb(struct em *e, struct block *B, const struct tok *k)
{
	long long T = k->b * k->sq;
	struct step *s = push(B, ST_EMB);
	s->m = T;
	s->n = e->h;
	/* vocabulary-parallel: each rank's rows, then their sum over tp; TensorRT-LLM's whole table needs none */
	int whole = e->c->mode == GEN_INFER && e->c->inf.engine == GEN_ENGINE_TRTLLM;
	s->k = whole ? e->vl * e->t : e->vl;
	if (!whole)
		s_coll(B, ST_TP_G, T * e->h * 2);
	if (!e->m->rope && !e->m->nopos) /* learned positions */
		s_elem(B, "add", (e->c->p.sp ? T / e->t : T) * e->h, 0, NULL);
	s_dropout(e, B, (e->c->p.sp ? T / e->t : T) * e->h);
	if (e->m->hc > 1) /* the hyper-connections' streams: hc copies of the embedding */
		s_elem(B, "copy", (e->c->p.sp ? T / e->t : T) * e->m->hc * e->h, 0, NULL);
}

/* one elementwise pass of rows x the vocabulary (the sampler's), with the keys `extra` after its dtype */
static void s_pass(struct block *B, const char *op, long long n, long long cols, const char *dtype, const char *extra)
{
	s_elem(B, op, n, cols, dtype);
	B->st[B->n - 1].extra = extra;
}

/* vLLM's V0 sampler (vllm/model_executor/layers/sampler.py, Sampler.forward, 0.5 and 0.6) on each step's logits,
   as the LLM-Inference-Bench harness samples (temperature 1, no top-p or top-k, no penalties, no logprobs asked):
   the vocabulary-parallel logits gathered (the driver samples, the other ranks wait for its next step), in fp32,
   divided by the temperatures (a column broadcast: a read and a write), softmax and log_softmax (PyTorch's
   kernels), the draw (_multinomial: the probabilities indexed, an exponential_ tensor written, their quotient, its
   argmax), and the sampled tokens' logprobs and ranks, which get_logprobs computes whatever was asked (the
   logprobs indexed, x > the token's value as bool, .long(), .sum(1): timed as int8 and fp64 of the same
   widths). Eager PyTorch kernels, outside the CUDA graphs of the decode steps. */
static void vllm_sampler(struct em *e, struct block *B, long long rows)
{
	long long V = e->m->vocab, n = rows * V;
	s_coll(B, ST_TP_AG_FWD, rows * e->vl * e->t * 2);
	s_pass(B, "cast", n, 0, NULL, " to=fp32");
	s_pass(B, "copy", n, 0, "fp32", NULL);
	s_pass(B, "softmax", n, V, "fp32", " eager=1");
	s_pass(B, "softmax", n, V, "fp32", " eager=1");
	s_pass(B, "copy", n, 0, "fp32", NULL);
	s_pass(B, "fill", n, 0, "fp32", NULL);
	s_pass(B, "mul", n, 0, "fp32", NULL);
	s_pass(B, "read", n, 0, "fp32", NULL);
	s_pass(B, "copy", n, 0, "fp32", NULL);
	s_pass(B, "cast", n, 0, "fp32", " to=int8");
	s_pass(B, "cast", n, 0, "int8", " to=fp64");
	s_pass(B, "read", n, 0, "fp64", NULL);
}

/* final norm, LM head (vocab-parallel), softmax cross-entropy in fp32 over
   the local vocabulary slice (its max and sum reduced over tp); inference
   computes the logits of the last token of each sequence only, and samples
   them as its engine does (--engine vllm: vllm_sampler) */
static void build_head(struct em *e, struct block *B, const struct tok *k)
{
	long long T = k->b * k->sq, rows = e->c->mode == GEN_INFER ? (k->rows ? k->rows : k->b) : T;
	if (e->m->hc > 1) /* the hyper-connections' streams mixed into one */
		hc_pre(e, B, e->c->p.sp ? T / e->t : T);
	s_norm(e, B, e->c->p.sp ? T / e->t : T, e->h);
	s_coll(B, ST_TP_F, T * e->h * 2);
	s_gemm(B, rows, e->vl, e->h, 1, 0, FP8_NONE);
	if (e->c->mode == GEN_INFER && e->c->inf.engine == GEN_ENGINE_VLLM) {
		vllm_sampler(e, B, rows);
		return;
	}
	s_elem(B, "softmax", rows * e->vl, e->vl, "fp32");
	s_coll(B, ST_TP_AR_FWD, rows * 8);
}

/* a multi-token-prediction module (Megatron-Core's MultiTokenPredictionLayer,
   megatron/core/transformer/multi_token_prediction.py; DeepSeek-V3 section
   2.2): the embedding of the tokens one further, RMSNorms of it and of the
   hidden state, their concatenation projected from 2h to h (eh_proj, a
   column-parallel linear whose output is gathered over tp), a transformer
   block as the model's last, and its prediction through the shared LM head
   and loss. Megatron-Core computes that head on the loss's chunk; here it
   is part of the module (the same chunk unless a layout puts 'm' apart). */
static void build_mtp(struct em *e, struct block *B, const struct tok *k)
{
	long long T = k->b * k->sq, Tn = e->c->p.sp ? T / e->t : T;
	build_emb(e, B, k);
	s_norm(e, B, Tn, e->h);
	s_norm(e, B, Tn, e->h);
	s_elem(B, "copy", 2 * Tn * e->h, 0, NULL); /* concatenation */
	s_coll(B, ST_TP_F, 2 * T * e->h * 2);
	s_gemm(B, T, e->h / e->t, 2 * e->h, 1, 0, FP8_NONE);
	s_coll(B, ST_TP_G, T * e->h * 2);
	/* a hybrid model's module is "*E": attention and an MoE sublayer, as a transformer block's two halves */
	build_layer(e, B, k, e->m->hybrid[0] ? e->m->experts > 0 : gen_layer_is_moe(e->m, e->m->layers - 1));
	build_head(e, B, k);
}

static double block_weights(const struct gen_config *c, enum block_kind kind, struct gen_params *out)
{
	if (c->m.attn == GEN_CSA && kind != BK_EMB && kind != BK_HEAD && kind != BK_MTP) { /* a layer of that kind */
		long long l = 0;
		while (l < c->m.layers - 1 && gt_layer_kind(&c->m, l) != kind)
			l++;
		*out = gen_layer_params(c, l);
		return out->dense + out->expert;
	}
	/* a representative layer's weights: stage params of a 1-layer model */
	struct gen_config one = *c;
	one.p.pp = 1;
	one.p.vstages = 1;
	one.p.layout.chunks = 0;
	one.m.mtp = 0;
	one.m.tied = 0;
	one.m.layers = 1;
	int dense = kind == BK_DENSE || kind == BK_DENSE_SWA;
	one.m.dense_layers = dense ? 1 : 0;
	if (c->m.hybrid[0]) { /* the layer alone */
		static const char sym[BK_COUNT] = {
		    [BK_MAMBA] = 'M', [BK_ATTN] = '*', [BK_MLP] = '-', [BK_EXPERTS] = 'E'};
		one.m.dense_layers = 0;
		one.m.hybrid[0] = sym[kind] ? sym[kind] : 'M';
		one.m.hybrid[1] = '\0';
	}
	if (dense && c->m.experts && !c->m.dense_layers)
		one.m.dense_layers = 1;
	struct gen_params all = gen_stage_params(&one, 0);
	if (kind == BK_MTP) { /* one module, on its stage (not the first: with its embedding copy) */
		const struct gen_layout *L = &c->p.layout;
		*out = gen_mtp_params(c, L->chunks ? L->mtp_chunk % c->p.pp : c->p.pp - 1);
		return out->dense + out->expert;
	}
	double vh = (double)(gen_vocab_padded(c) / c->p.tp) * c->m.hidden;
	double norm = c->m.norm == GEN_LAYERNORM ? 2.0 * c->m.hidden : (double)c->m.hidden;
	double pos = c->m.rope || c->m.nopos ? 0 : (double)c->seq * c->m.hidden;
	switch (kind) {
	case BK_EMB: *out = (struct gen_params){vh + pos, 0}; break;
	case BK_HEAD: *out = (struct gen_params){norm + (c->m.tied && c->p.pp == 1 ? 0 : vh), 0}; break;
	default: *out = (struct gen_params){all.dense - 2 * vh - pos - norm, all.expert}; break;
	}
	return out->dense + out->expert;
}

enum block_kind gt_layer_kind(const struct gen_model *m, long long layer)
{
	static const enum block_kind hybrid[] = {
	    [GEN_LT_MAMBA] = BK_MAMBA, [GEN_LT_ATTN] = BK_ATTN, [GEN_LT_MLP] = BK_MLP, [GEN_LT_MOE] = BK_EXPERTS};
	enum gen_layer_type lt = gen_layer_type(m, layer);
	if (lt != GEN_LT_BLOCK)
		return hybrid[lt];
	if (m->attn == GEN_CSA) { /* gen_check: every layer MoE */
		long long r = gen_layer_compress(m, layer);
		return r == 0 ? BK_MOE_SWA : r == m->csa_ratio ? BK_MOE_CSA : BK_MOE_HCA;
	}
	int moe = gen_layer_is_moe(m, layer), swa = gen_layer_is_windowed(m, layer);
	return moe ? (swa ? BK_MOE_SWA : BK_MOE) : (swa ? BK_DENSE_SWA : BK_DENSE);
}

void gt_build_block(struct em *e, enum block_kind kind, const struct tok *k, struct block *B)
{
	B->n = 0;
	/* --same-prompt: every sequence of the batch is the same, so its tokens differ only by position (a decode
	   step: one token) */
	e->distinct = e->c->inf.same_prompt ? k->sq : 0;
	switch (kind) {
	case BK_EMB: build_emb(e, B, k); break;
	case BK_HEAD: build_head(e, B, k); break;
	case BK_MTP: build_mtp(e, B, k); break; /* DeepSeek-V4's: its window alone (e->csa 0) */
	case BK_MAMBA:
	case BK_ATTN:
	case BK_MLP:
	case BK_EXPERTS: build_sublayer(e, B, k, kind); break;
	default:
		e->swa = kind == BK_DENSE_SWA || kind == BK_MOE_SWA;
		e->csa = kind == BK_MOE_CSA ? e->m->csa_ratio : kind == BK_MOE_HCA ? e->m->hca_ratio : 0;
		build_layer(e, B, k, kind == BK_MOE || kind == BK_MOE_SWA || kind == BK_MOE_CSA || kind == BK_MOE_HCA);
		e->swa = 0;
		e->csa = 0;
		break;
	}
	e->distinct = 0;
	block_weights(e->c, kind, &B->par);
}
