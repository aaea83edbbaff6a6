/*
 * gen.c -- the workload generator's arithmetic: the layers' kinds and the
 * pipeline's split, parameters per rank, memory per rank (ZeRO, activations
 * after Korthikanti et al., KV cache) and model FLOPs. Pure functions; the
 * presets are workloads/gen_presets.c, which configs can be laid out
 * gen_check.c, DeepSeek-V4's attention gen_csa.c, the trace text
 * gen_trace.c.
 *
 * Invariants the tests hold these to: gen_zero_memory reproduces ZeRO's
 * 16/4+12/N/2+14/N/16/N psi table exactly; gen_model_flops equals
 * Megatron-LM's 72 B s l h^2 (1 + s/6h + V/12lh) for GPT shapes;
 * gen_act_layer_bytes equals s b h (34 + 5 a s / h) for a GPT block on one
 * rank with naive attention and dropout.
 */
#include "gen.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define GEN_WORKSPACE (1024.0 * 1024 * 1024) /* cuBLAS, NCCL buffers, fragmentation */

void gen_defaults(struct gen_config *c)
{
	memset(&c->p, 0, sizeof c->p);
	c->p.tp = c->p.pp = c->p.dp = c->p.ep = c->p.cp = c->p.vstages = 1;
	c->p.micro_batch = 1;
	c->p.global_batch = 0; /* 0: micro_batch * dp */
	c->p.sched = GEN_1F1B;
	c->p.recompute = GEN_RC_NONE;
	c->p.dtype = GEN_BF16;
	c->mode = GEN_TRAIN;
	c->inf = (struct gen_infer){.batch = 1, .input_len = 0, .output_len = 128};
	c->seq = 0; /* 0: the model's */
	c->attn_impl = GEN_FLASH2;
	c->dropout = 0;
}

const char *gen_dtype_name(enum gen_dtype d)
{
	return d == GEN_FP16 ? "fp16" : d == GEN_FP8 ? "fp8" : d == GEN_FP4 ? "fp4" : "bf16";
}

const char *gen_sched_name(enum gen_sched s)
{
	return s == GEN_GPIPE ? "gpipe" : s == GEN_INTERLEAVED ? "interleaved" : "1f1b";
}

const char *gen_recompute_name(enum gen_recompute r)
{
	return r == GEN_RC_FULL ? "full" : r == GEN_RC_SELECTIVE ? "selective" : "none";
}

const char *gen_attn_impl_name(enum gen_attn_impl i)
{
	return i == GEN_NAIVE    ? "naive"
	       : i == GEN_FLASH3 ? "flash3"
	       : i == GEN_FLASH1 ? "flash1"
	       : i == GEN_CUDNN  ? "cudnn"
	                         : "flash2";
}

const char *gen_engine_name(enum gen_engine e)
{
	return e == GEN_ENGINE_VLLM ? "vllm" : e == GEN_ENGINE_TRTLLM ? "trtllm" : "none";
}

enum op_attn_impl gen_decode_attn(const struct gen_config *c)
{
	switch (c->inf.decode_impl) {
	case GEN_DEC_FLASH2: return ATTN_FLASH2_DECODE;
	case GEN_DEC_PAGED: return ATTN_PAGED;
	case GEN_DEC_GENERIC: return ATTN_DECODE;
	case GEN_DEC_MMHA: return ATTN_MMHA;
	default: return c->inf.paged ? ATTN_PAGED : ATTN_FLASH2_DECODE;
	}
}

/*
 * vLLM's V0 engine (LLMEngine.step in 0.5 and 0.6 with one scheduler step
 * per forward, the default until multi-step scheduling and the V1 engine)
 * does its host work between two forwards while the device waits: the
 * scheduler, the input tensors of the next batch, the sampler's metadata and
 * the processing of the sampled tokens (detokenizing, stop checks), all in
 * Python, one pass per sequence. Its maintainers measured that work at about
 * 20 ms a step for a batch of 200 sequences (vllm-project/vllm#6801, the
 * performance roadmap, 2024-08-08: sampling, input preparation, output
 * processing and scheduling together), and GPU bubbles of 5-13 ms a decode
 * step for Llama-3-8B on one H100 (vllm-project/vllm#6854, the multi-step
 * scheduling RFC): 100 us per sequence a step. No figure of a run this
 * model predicts went into it.
 */
#define VLLM_V0_HOST_S_PER_SEQ 100e-6

double gen_engine_host_s(const struct gen_config *c, long long seqs)
{
	if (c->inf.engine != GEN_ENGINE_VLLM || seqs <= 0)
		return 0;
	return VLLM_V0_HOST_S_PER_SEQ * (double)seqs;
}

/*
 * vLLM (V0, 0.5 and 0.6) replays its decode steps from CUDA graphs (enforce_eager off, its default; on with
 * --enforce-eager) where the batch is at most 256 sequences (the largest of _BATCH_SIZES_TO_CAPTURE in
 * vllm/worker/model_runner.py) and no context is longer than max_seq_len_to_capture, min(8192, max_model_len)
 * (vllm/config.py; max_model_len is the model's context by default). A graph keeps the launch of its capture, and the
 * capture passed max_seq_len_to_capture as the attention's max_seq_len
 * (CommonAttentionState.graph_capture_get_metadata_for_batch, vllm/attention/backends/utils.py) and a block table as
 * wide as it (the model runner's graph_block_tables): the maxkv= of the paged kernel and of FlashAttention's decode
 * through the block table (--paged).
 */
long long gen_decode_max_keys(const struct gen_config *c, long long batch, long long skv)
{
	const long long capture_batch = 256, capture_keys = 8192;
	enum op_attn_impl impl = gen_decode_attn(c);
	if (c->inf.engine != GEN_ENGINE_VLLM || c->inf.enforce_eager || c->m.seq <= 0 ||
	    !(impl == ATTN_PAGED || (impl == ATTN_FLASH2_DECODE && c->inf.paged)))
		return 0;
	long long cap = c->m.seq < capture_keys ? c->m.seq : capture_keys;
	return batch <= capture_batch && skv < cap ? cap : 0;
}

/* ---- parameters ---------------------------------------------------------- */

long long gen_ranks(const struct gen_config *c)
{
	return c->p.tp * c->p.cp * c->p.pp * c->p.dp;
}

long long gen_seq_local(const struct gen_config *c)
{
	return c->mode == GEN_TRAIN && c->p.cp > 1 ? c->seq / c->p.cp : c->seq;
}

long long gen_microbatches(const struct gen_config *c)
{
	return c->p.global_batch / (c->p.micro_batch * c->p.dp);
}

long long gen_chunk_layers(const struct gen_config *c, long long stage, long long chunk)
{
	const struct gen_parallel *p = &c->p;
	long long v = p->vstages, last = p->pp - 1;
	if (p->layout.chunks)
		return p->layout.layers[chunk * p->pp + stage];
	if (p->first_layers || p->last_layers) {
		if (stage == 0 && p->first_layers)
			return p->first_layers / v;
		if (stage == last && p->last_layers)
			return p->last_layers / v;
		long long middle = p->pp - (p->first_layers > 0) - (p->last_layers > 0);
		return (c->m.layers - p->first_layers - p->last_layers) / (middle * v);
	}
	long long slots = (c->m.layers + p->split_embedding + p->split_loss) / (p->pp * v);
	return slots - (p->split_embedding && stage == 0 && chunk == 0) -
	       (p->split_loss && stage == last && chunk == v - 1);
}

long long gen_chunk_mtp(const struct gen_config *c, long long stage, long long chunk)
{
	const struct gen_parallel *p = &c->p;
	if (c->mode != GEN_TRAIN || !c->m.mtp)
		return 0;
	if (p->layout.chunks)
		return p->layout.mtp_chunk == chunk * p->pp + stage ? c->m.mtp : 0;
	return stage == p->pp - 1 && chunk == p->vstages - 1 ? c->m.mtp : 0;
}

long long gen_chunk_first_layer(const struct gen_config *c, long long stage, long long chunk)
{
	long long first = 0;
	for (long long q = 0; q < chunk * c->p.pp + stage; q++)
		first += gen_chunk_layers(c, q % c->p.pp, q / c->p.pp);
	return first;
}

int gen_ep_folded(const struct gen_parallel *p)
{
	return p->ep > 1 && p->dp % p->ep != 0;
}

double gen_moe_load(const struct gen_parallel *p)
{
	/* without expert parallelism the imbalance moves assignments between the experts of the one rank, whose
	   total stays T x topk (a capacity under 1 still drops the same share from each) */
	double f = p->ep > 1 && p->moe_imbalance > 0 ? p->moe_imbalance : 1;
	return p->moe_capacity > 0 && p->moe_capacity < f ? p->moe_capacity : f;
}

long long gen_ep_dim(const struct gen_parallel *p)
{
	return gen_ep_folded(p) ? p->ep / p->tp : p->ep;
}

long long gen_stage_layers(const struct gen_config *c, long long stage)
{
	long long n = 0;
	for (long long ch = 0; ch < c->p.vstages; ch++)
		n += gen_chunk_layers(c, stage, ch);
	return n;
}

enum gen_layer_type gen_layer_type(const struct gen_model *m, long long layer)
{
	if (!m->hybrid[0])
		return GEN_LT_BLOCK;
	assert(layer >= 0 && layer < (long long)strlen(m->hybrid));
	switch (m->hybrid[layer]) {
	case 'M': return GEN_LT_MAMBA;
	case '*': return GEN_LT_ATTN;
	case '-': return GEN_LT_MLP;
	default: return GEN_LT_MOE; /* 'E' (gen_check refuses any other symbol) */
	}
}

void gen_layer_counts(const struct gen_model *m, long long count[5])
{
	for (int i = 0; i < 5; i++)
		count[i] = 0;
	for (long long l = 0; l < m->layers; l++)
		count[gen_layer_type(m, l)]++;
}

int gen_layer_is_moe(const struct gen_model *m, long long layer)
{
	if (m->hybrid[0])
		return gen_layer_type(m, layer) == GEN_LT_MOE;
	return m->experts > 0 && layer >= m->dense_layers;
}

/* the layer attends: a transformer block, or a hybrid model's attention layer */
static int layer_attends(const struct gen_model *m, long long layer)
{
	enum gen_layer_type t = gen_layer_type(m, layer);
	return t == GEN_LT_BLOCK || t == GEN_LT_ATTN;
}

int gen_layer_is_windowed(const struct gen_model *m, long long layer)
{
	return m->window > 0 && !(m->window_skip > 0 && (layer + 1) % m->window_skip == 0);
}

/* kv heads one tensor-parallel rank holds (replicated when tp > kv heads) */
static double kv_local(const struct gen_model *m, long long t)
{
	return m->kv_heads >= t ? (double)(m->kv_heads / t) : 1;
}

static double ffn_mats(const struct gen_model *m)
{
	return m->act == GEN_SWIGLU ? 3 : 2;
}

/* a learned position embedding: neither RoPE nor a model without positions */
static int learned_pos(const struct gen_model *m)
{
	return !m->rope && !m->nopos;
}

/* The Mamba-2 mixer's widths (megatron/core/ssm/mamba_mixer.py): d_inner = heads x head_dim; in_proj writes z
   and x (d_inner each), B and C (groups x state each) and dt (one a head); the convolution runs over x, B, C. */
static double mamba_inner(const struct gen_model *m)
{
	return (double)m->mamba_heads * (double)m->mamba_head_dim;
}

static double mamba_conv_dim(const struct gen_model *m)
{
	return mamba_inner(m) + 2.0 * (double)m->mamba_groups * (double)m->mamba_state;
}

static double mamba_in_proj(const struct gen_model *m)
{
	return mamba_inner(m) + mamba_conv_dim(m) + (double)m->mamba_heads;
}

/* a Mamba-2 mixer's weights on one of t tensor-parallel ranks (its heads and groups split over them): in_proj
   and out_proj, the convolution's taps and bias, dt_bias, A_log and D a head, the gated norm's weight */
static double mamba_params(const struct gen_model *m, long long t)
{
	double h = (double)m->hidden;
	return (h * mamba_in_proj(m) + mamba_conv_dim(m) * (GEN_MAMBA_CONV + 1) + 3.0 * (double)m->mamba_heads +
	        mamba_inner(m) + mamba_inner(m) * h) /
	       (double)t;
}

/* forward FLOPs a token of the SSD scan (Dao and Gu 2024, section 7; mamba_ssm's ssd_combined kernels) over
   chunks of Q: the chunk states B^T x (2 N P a head), C B^T within the chunk (2 Q N a group), those scores
   times x (2 Q P a head) and the states back to the outputs (2 N P a head) */
static double mamba_scan_flops(const struct gen_model *m)
{
	double H = (double)m->mamba_heads, P = (double)m->mamba_head_dim, N = (double)m->mamba_state;
	double G = (double)m->mamba_groups, Q = GEN_MAMBA_CHUNK;
	return 2 * H * P * (2 * N + Q) + 2 * Q * N * G;
}

static double norm_params(const struct gen_model *m)
{
	return m->norm == GEN_LAYERNORM ? 2.0 * m->hidden : (double)m->hidden;
}

/* the query and key norms' weights (one vector of head_dim each) */
static double qk_norm_params(const struct gen_model *m)
{
	return m->qk_norm ? (m->norm == GEN_LAYERNORM ? 2.0 : 1.0) * 2 * m->head_dim : 0;
}

/* attention weights of one rank (t = 1: the whole layer's) */
static double attn_params(const struct gen_model *m, long long t)
{
	double h = m->hidden, al = (double)(m->heads / t);
	if (m->attn == GEN_MLA)
		return h * m->q_lora + m->q_lora * al * (m->nope_dim + m->rope_dim) + h * (m->kv_lora + m->rope_dim) +
		       m->kv_lora * al * (m->nope_dim + m->v_dim) + al * m->v_dim * h + m->q_lora + m->kv_lora;
	return 2 * h * al * m->head_dim + 2 * h * kv_local(m, t) * m->head_dim;
}

/* the experts' tensor parallelism: tp, or 1 with expert parallelism folded over tp */
static long long gen_etp(const struct gen_parallel *p)
{
	return gen_ep_folded(p) ? 1 : p->tp;
}

/* An MoE sublayer's weights on one rank, norms apart: the router, the shared experts and LatentMoE's two
   projections (replicated over tp) dense, experts_used routed experts of the experts' width. */
static void add_moe_params(const struct gen_model *m, long long t, long long etp, double experts_used,
                           struct gen_params *r)
{
	double h = (double)m->hidden, w = m->moe_latent ? (double)m->moe_latent : h; /* the experts' width */
	r->dense += h * m->experts + m->shared * ffn_mats(m) * h * m->expert_ffn / t + (m->moe_latent ? 2 * h * w : 0);
	r->expert += experts_used * ffn_mats(m) * w * m->expert_ffn / etp;
}

/* The weights of one block on one rank: dense (attention, norms, router,
   shared experts, dense FFN) and expert. experts_used: experts counted
   (E / ep per rank, or topk for the active parameters); etp: the experts' tensor parallelism (t, or 1 folded). */
static struct gen_params layer_params(const struct gen_model *m, long long layer, long long t, long long etp,
                                      double experts_used)
{
	double at = m->attn == GEN_CSA ? gen_csa_attn_params(m, gen_layer_compress(m, layer)) + 2 * gen_hc_params(m)
	                               : attn_params(m, t);
	struct gen_params r = {at + 2 * norm_params(m) + qk_norm_params(m), 0};
	double h = m->hidden;
	switch (gen_layer_type(m, layer)) { /* a hybrid model's layer: one norm and its sublayer */
	case GEN_LT_BLOCK: break;
	case GEN_LT_MAMBA: return (struct gen_params){norm_params(m) + mamba_params(m, t), 0};
	case GEN_LT_ATTN: return (struct gen_params){norm_params(m) + attn_params(m, t) + qk_norm_params(m), 0};
	case GEN_LT_MLP: return (struct gen_params){norm_params(m) + ffn_mats(m) * h * m->ffn / t, 0};
	case GEN_LT_MOE: r.dense = norm_params(m); break;
	}
	if (!gen_layer_is_moe(m, layer)) {
		r.dense += ffn_mats(m) * h * m->ffn / t;
		return r;
	}
	add_moe_params(m, t, etp, experts_used, &r);
	return r;
}

long long gen_vocab_padded(const struct gen_config *c)
{
	long long div = c->p.vocab_div > 0 ? c->p.vocab_div : c->mode == GEN_TRAIN ? 128 : 64;
	long long mult = c->mode == GEN_TRAIN ? div * c->p.tp : div;
	long long v = (c->m.vocab + mult - 1) / mult * mult;
	if (v % c->p.tp) /* inference's padding need not divide over tp: each rank's slice rounds up */
		v = (v + c->p.tp - 1) / c->p.tp * c->p.tp;
	return v;
}

/* One tensor-parallel rank's slice of the padded vocabulary. */
static double vocab_local(const struct gen_config *c)
{
	return (double)(gen_vocab_padded(c) / c->p.tp);
}

/* the layer an MTP module's block is counted as: the last (Megatron-Core builds it as the last layer's spec), or
   with DeepSeek-V4's attention one past it (its compression ratio 0, gen_layer_compress) */
static long long mtp_layer(const struct gen_model *m)
{
	return m->attn == GEN_CSA ? m->layers : m->layers - 1;
}

/* MTP modules of all the chunks of one stage */
static long long stage_mtp(const struct gen_config *c, long long stage)
{
	long long n = 0;
	for (long long ch = 0; ch < c->p.vstages; ch++)
		n += gen_chunk_mtp(c, stage, ch);
	return n;
}

struct gen_params gen_layer_params(const struct gen_config *c, long long layer)
{
	return layer_params(&c->m, layer, c->p.tp, gen_etp(&c->p), (double)(c->m.experts / c->p.ep));
}

struct gen_params gen_mtp_params(const struct gen_config *c, long long stage)
{
	const struct gen_model *m = &c->m;
	double h = (double)m->hidden;
	struct gen_params r;
	if (m->hybrid[0]) { /* "*E": an attention and an MoE sublayer, a norm each */
		r = (struct gen_params){2 * norm_params(m) + attn_params(m, c->p.tp) + qk_norm_params(m), 0};
		add_moe_params(m, c->p.tp, gen_etp(&c->p), (double)(m->experts / c->p.ep), &r);
	} else {
		r = layer_params(m, mtp_layer(m), c->p.tp, gen_etp(&c->p), (double)(m->experts / c->p.ep));
	}
	r.dense += 2 * h * h / (double)c->p.tp + 3 * norm_params(m);
	if (stage > 0)
		r.dense += vocab_local(c) * h;
	return r;
}

struct gen_params gen_stage_params(const struct gen_config *c, long long stage)
{
	const struct gen_model *m = &c->m;
	long long t = c->p.tp;
	struct gen_params r = {0, 0};
	for (long long ch = 0; ch < c->p.vstages; ch++)
		for (long long l = 0, first = gen_chunk_first_layer(c, stage, ch); l < gen_chunk_layers(c, stage, ch);
		     l++) {
			struct gen_params lp =
			    layer_params(m, first + l, t, gen_etp(&c->p), (double)(m->experts / c->p.ep));
			r.dense += lp.dense;
			r.expert += lp.expert;
		}
	double n = (double)stage_mtp(c, stage);
	if (n > 0) {
		struct gen_params mp = gen_mtp_params(c, stage);
		r.dense += n * mp.dense;
		r.expert += n * mp.expert;
	}
	double emb = vocab_local(c) * m->hidden;
	if (stage == 0)
		r.dense += emb + (learned_pos(m) ? (double)c->seq * m->hidden : 0);
	if (stage == c->p.pp - 1)
		r.dense += norm_params(m) + (m->tied && c->p.pp == 1 ? 0 : emb);
	return r;
}

static double model_params(const struct gen_model *m, int active)
{
	double n = 0;
	for (long long l = 0; l < m->layers; l++) {
		struct gen_params lp = layer_params(m, l, 1, 1, (double)(active ? m->topk : m->experts));
		n += lp.dense + lp.expert;
	}
	double emb = (double)m->vocab * m->hidden;
	return n + emb * (m->tied ? 1 : 2) + norm_params(m) + (learned_pos(m) ? (double)m->seq * m->hidden : 0);
}

double gen_total_params(const struct gen_model *m)
{
	return model_params(m, 0);
}

double gen_active_params(const struct gen_model *m)
{
	return model_params(m, 1);
}

/* ---- memory -------------------------------------------------------------- */

void gen_zero_memory(double psi, long long n, int zero, int offload, struct gen_memory *m)
{
	m->params = zero >= 3 ? 2 * psi / n : 2 * psi;
	m->grads = zero >= 2 ? 2 * psi / n : 2 * psi;
	m->optimizer = offload ? 0 : zero >= 1 ? 12 * psi / n : 12 * psi;
}

double gen_dp_comm_elems(double psi, long long n, int zero)
{
	return (zero >= 3 ? 3 : 2) * psi * (double)(n - 1) / (double)n;
}

/* bytes per token of the attention tensors one rank keeps (Q, K, V, the
   out-projection input; MLA: also the latent vectors). q: the bytes of a
   value Transformer Engine keeps quantized (2: none; fp8 1; NVFP4 half a
   byte and an e4m3 scale per 16), where the out-projection (a TE Linear)
   also keeps the quantized copy of its input it multiplied, beside the
   attention's bf16 output. */
static double attn_act_token(const struct gen_model *m, long long t, double q)
{
	double copy = q < 2 ? q : 0;
	double al = (double)(m->heads / t);
	if (m->attn == GEN_MLA)
		return 2.0 * m->q_lora + 2.0 * (m->kv_lora + m->rope_dim) + 4 * al * (m->nope_dim + m->rope_dim) +
		       (4 + copy) * al * m->v_dim;
	/* with QK-norm, the norms' inputs too */
	return (m->qk_norm ? 6 : 4) * (al + kv_local(m, t)) * m->head_dim + copy * al * m->head_dim;
}

/* bytes per token of the FFN tensors one rank keeps: GELU in and out
   (2 x 2 ffn), SwiGLU gate and up outputs and their product (3 x 2 ffn);
   MoE: each of topk experts' input copy and intermediates (on the busiest rank: `load` times the balanced
   share, gen_moe_load), shared experts. q (attn_act_token): the activation's output is the second GEMM's input,
   kept quantized (Transformer Engine's LayerNormMLP and GroupedLinear save
   the quantized tensor they multiplied), and so is an expert's input. */
static double ffn_act_token(const struct gen_model *m, long long layer, long long t, double q, int folded, double load)
{
	double per = (m->act == GEN_SWIGLU ? 4.0 : 2.0) + q;
	if (!gen_layer_is_moe(m, layer))
		return per * m->ffn / t;
	/* LatentMoE: latent-wide expert inputs, and fc2_latent_proj's input (2 bytes a latent value); folded over
	   tp (gen_ep_folded), a rank routes its own 1/t of the tokens to experts it runs whole */
	double w = m->moe_latent ? (double)m->moe_latent : (double)m->hidden;
	double routed =
	    load * (folded ? m->topk * (q * w + per * m->expert_ffn) / t : m->topk * (q * w + per * m->expert_ffn / t));
	return routed + m->shared * per * m->expert_ffn / t + (m->moe_latent ? 2 * w / (folded ? t : 1) : 0);
}

double gen_act_layer_bytes(const struct gen_config *c, long long layer, enum gen_recompute rc)
{
	const struct gen_model *m = &c->m;
	double s = (double)gen_seq_local(c), b = (double)c->p.micro_batch, h = (double)m->hidden, t = (double)c->p.tp;
	double al = (double)(m->heads / c->p.tp);
	int drop = c->dropout > 0;
	/* 2-byte activations; fp8 and fp4 training (Transformer Engine) keep
	   the inputs of their quantized GEMMs quantized, q bytes a value (fp8 1;
	   NVFP4 half a byte and an e4m3 scale per 16 values): the norms'
	   outputs, the second MLP GEMM's input, an expert's input (Transformer
	   Engine's LayerNormLinear, LayerNormMLP and GroupedLinear save what
	   they multiplied), and the out-projection's input beside the bf16 one */
	int train = c->mode == GEN_TRAIN;
	double q = train && c->p.dtype == GEN_FP8 ? 1 : train && c->p.dtype == GEN_FP4 ? 0.5 + 1.0 / 16 : 2;
	if (rc == GEN_RC_FULL)
		return 2 * s * b * h / (c->p.sp ? t : 1);
	enum gen_layer_type lt = gen_layer_type(m, layer);
	if (lt != GEN_LT_BLOCK) {
		/* a hybrid model's layer: its norm's input 2h and its sublayer's input 2h (fp8: 1h), a dropout mask 1h,
		   replicated over tp unless sequence parallel; then the sublayer's own tensors. A Mamba-2 mixer keeps
		   in_proj's output (z, x, B, C, dt), the convolution's output (x, B, C), the scan's output y, and the
		   gated norm's output that out_proj multiplies (fp8: 1 byte); the scan recomputes its chunk states in
		   the backward (mamba_ssm's MambaChunkScanCombinedFn saves none). */
		double repl = ((drop ? 5 : 4) - (2 - q)) * s * b * h / (c->p.sp ? t : 1), tok = 0, core = 0;
		switch (lt) {
		case GEN_LT_MAMBA:
			tok = (2 * mamba_in_proj(m) + 2 * mamba_conv_dim(m) + (2 + q) * mamba_inner(m)) / t;
			break;
		case GEN_LT_ATTN:
			tok = attn_act_token(m, c->p.tp, q);
			core = c->attn_impl == GEN_NAIVE ? (rc == GEN_RC_NONE ? (drop ? 5.0 : 2.0) * al * s * s * b : 0)
			                                 : 4.0 * al * s * b;
			break;
		default: tok = ffn_act_token(m, layer, c->p.tp, q, gen_ep_folded(&c->p), gen_moe_load(&c->p)); break;
		}
		return repl + s * b * tok + core;
	}
	/* norms' inputs 4h, attention and MLP inputs 2h + 2h (quantized: q h + q h),
	   the two hidden dropout masks 1h + 1h (with dropout): 10 s b h (8
	   without dropout), replicated over tp unless sequence parallel */
	double repl = ((drop ? 10 : 8) - 2 * (2 - q)) * s * b * h / (c->p.sp ? t : 1);
	/* DeepSeek-V4: its attention's own tensors, and the hyper-connections' streams each sublayer mixes */
	double at = m->attn == GEN_CSA ? gen_csa_act_token(m, gen_layer_compress(m, layer), q) +
	                                     2 * 2.0 * (double)m->hc * h * (m->hc > 1)
	                               : attn_act_token(m, c->p.tp, q);
	double shard = s * b * (at + ffn_act_token(m, layer, c->p.tp, q, gen_ep_folded(&c->p), gen_moe_load(&c->p)));
	double core;
	if (c->attn_impl == GEN_NAIVE) /* softmax output 2, with dropout its mask 1 and output 2 bytes per score */
		core = rc == GEN_RC_NONE ? (drop ? 5.0 : 2.0) * al * s * s * b : 0;
	else /* FlashAttention: the fp32 log-sum-exp of each query row and head (dropout: its RNG state only) */
		core = 4.0 * al * s * b;
	return repl + shard + core;
}

/* the tensors an MTP module's block keeps: the last layer's, or a hybrid model's "*E", its first attention and
   its first MoE layer's */
static double mtp_act_bytes(const struct gen_config *c, enum gen_recompute rc)
{
	const char *h = c->m.hybrid, *a = strchr(h, '*'), *e = strchr(h, 'E');
	if (!h[0])
		return gen_act_layer_bytes(c, mtp_layer(&c->m), rc);
	return (a ? gen_act_layer_bytes(c, a - h, rc) : 0) + (e ? gen_act_layer_bytes(c, e - h, rc) : 0);
}

/* micro-batch chunks whose activations stage K holds at the peak */
static double in_flight(const struct gen_config *c, long long stage)
{
	long long p = c->p.pp, mb = gen_microbatches(c), v = c->p.vstages;
	switch (c->p.sched) {
	case GEN_GPIPE: return (double)mb;
	case GEN_INTERLEAVED: {
		long long w = (p - stage - 1) * 2 + (v - 1) * p + 1 + c->p.moe_overlap;
		return (double)(w < mb * v ? w : mb * v);
	}
	default: {
		long long w = p - stage + c->p.moe_overlap; /* the overlap's extra warm-up forward (gen_trace.c) */
		return (double)(w < mb ? w : mb);
	}
	}
}

static void train_activations(const struct gen_config *c, long long stage, struct gen_memory *out)
{
	double per_chunk = 0, biggest = 0; /* one chunk's layers (mean over chunks), the largest layer */
	for (long long ch = 0; ch < c->p.vstages; ch++)
		for (long long l = 0, first = gen_chunk_first_layer(c, stage, ch); l < gen_chunk_layers(c, stage, ch);
		     l++) {
			long long g = first + l;
			per_chunk += gen_act_layer_bytes(c, g, c->p.recompute) / (double)c->p.vstages;
			double all = gen_act_layer_bytes(c, g, GEN_RC_NONE);
			biggest = all > biggest ? all : biggest;
		}
	/* an MTP module keeps a block's tensors (as the last layer's) and its
	   eh_proj input, the two normed halves: 4h bytes a token */
	double n = (double)stage_mtp(c, stage), tok = (double)gen_seq_local(c) * c->p.micro_batch;
	if (n > 0)
		per_chunk +=
		    n * (mtp_act_bytes(c, c->p.recompute) + 4.0 * tok * c->m.hidden / (c->p.sp ? (double)c->p.tp : 1)) /
		    (double)c->p.vstages;
	out->activations = in_flight(c, stage) * per_chunk + (c->p.recompute == GEN_RC_FULL ? biggest : 0);
}

static void train_memory(const struct gen_config *c, long long stage, struct gen_memory *out)
{
	struct gen_params ps = gen_stage_params(c, stage);
	struct gen_memory d, e;
	/* the distributed optimizer shards over the data-parallel ranks with the context-parallel ones
	   (Megatron-Core: the data-parallel group with_context_parallel) */
	gen_zero_memory(ps.dense, c->p.dp * c->p.cp, c->p.zero, c->p.offload, &d);
	gen_zero_memory(ps.expert, c->p.dp / gen_ep_dim(&c->p) * c->p.cp, c->p.zero, c->p.offload, &e);
	out->params = d.params + e.params;
	out->grads = d.grads + e.grads;
	out->optimizer = d.optimizer + e.optimizer;
	train_activations(c, stage, out);
	out->kv = 0;
	out->workspace = GEN_WORKSPACE;
	if (stage == c->p.pp - 1) /* fp32 logits of a micro-batch for the loss */
		out->workspace += 4.0 * c->p.micro_batch * gen_seq_local(c) * vocab_local(c);
	if (c->p.zero == 3) { /* a gathered layer in use and the next one prefetched */
		struct gen_params lp =
		    layer_params(&c->m, c->m.layers - 1, c->p.tp, gen_etp(&c->p), (double)(c->m.experts / c->p.ep));
		out->workspace += 2 * 2 * (lp.dense + lp.expert);
	}
}

static void infer_memory(const struct gen_config *c, long long stage, struct gen_memory *out)
{
	const struct gen_model *m = &c->m;
	struct gen_params ps = gen_stage_params(c, stage);
	double wbytes = c->p.dtype == GEN_FP8 ? 1 : c->p.dtype == GEN_FP4 ? 0.5 + 1.0 / 16 : 2; /* fp4: e4m3 scales */
	double b = (double)c->inf.batch, in = (double)c->inf.input_len;
	double bm = b / (double)gen_infer_microbatches(c); /* activations: one micro-batch at a time */
	long long tokens = c->inf.input_len + c->inf.output_len;
	if (c->inf.paged)
		tokens = (tokens + GEN_PAGE - 1) / GEN_PAGE * GEN_PAGE;
	double layers = (double)gen_stage_layers(c, stage);
	double per_token =
	    m->attn == GEN_MLA ? (double)(m->kv_lora + m->rope_dim) : 2 * kv_local(m, c->p.tp) * (double)m->head_dim;
	*out = (struct gen_memory){0};
	out->params = wbytes * (ps.dense + ps.expert);
	if (c->inf.engine == GEN_ENGINE_TRTLLM && stage == 0 && c->p.tp > 1) {
		/* TensorRT-LLM's checkpoint keeps the lookup table whole on every rank (convert_checkpoint.py:
		   --use_parallel_embedding is off by default) beside the vocabulary-parallel LM head */
		double full = (double)gen_vocab_padded(c) * (double)m->hidden;
		out->params += wbytes * (m->tied && c->p.pp == 1 ? full : full - vocab_local(c) * (double)m->hidden);
	}
	out->kv = 2 * layers * per_token * b * (double)tokens;
	/* prefill's live set of one block: input and residual, and the larger of
	   the attention and FFN intermediates */
	double a = attn_act_token(m, c->p.tp, 2),
	       f = ffn_act_token(m, m->layers - 1, c->p.tp, 2, 0, gen_moe_load(&c->p)); /* unquantized */
	if (c->attn_impl == GEN_NAIVE) /* the scores and the softmax output, 2 bytes each, per query */
		a += 4.0 * (double)(m->heads / c->p.tp) * in;
	out->activations = bm * in * (4.0 * m->hidden + (a > f ? a : f));
	out->workspace = GEN_WORKSPACE + 4 * bm * vocab_local(c);
}

void gen_stage_memory(const struct gen_config *c, long long stage, struct gen_memory *m)
{
	if (c->mode == GEN_INFER)
		infer_memory(c, stage, m);
	else
		train_memory(c, stage, m);
}

double gen_memory_total(const struct gen_memory *m)
{
	return m->params + m->grads + m->optimizer + m->activations + m->kv + m->workspace;
}

/* ---- FLOPs ----------------------------------------------------------------- */

/* weights a token multiplies with in the blocks (norms excluded) */
static double layer_matmul_params(const struct gen_model *m, long long l)
{
	struct gen_params lp = layer_params(m, l, 1, 1, (double)m->topk);
	switch (gen_layer_type(m, l)) {
	case GEN_LT_BLOCK: break;
	case GEN_LT_MAMBA: return (double)m->hidden * (mamba_in_proj(m) + mamba_inner(m)); /* in_proj, out_proj */
	case GEN_LT_ATTN: return attn_params(m, 1);
	default: return lp.dense + lp.expert - norm_params(m);
	}
	return lp.dense + lp.expert - 2 * norm_params(m) - qk_norm_params(m) -
	       (m->attn == GEN_MLA   ? (double)(m->q_lora + m->kv_lora)
	        : m->attn == GEN_CSA ? (double)(m->q_lora + m->head_dim)
	                             : 0);
}

/* an MTP module's block: the last layer's, or a hybrid model's "*E" */
static double mtp_matmul_params(const struct gen_model *m)
{
	if (!m->hybrid[0])
		return layer_matmul_params(m, mtp_layer(m));
	struct gen_params r = {attn_params(m, 1), 0};
	add_moe_params(m, 1, 1, (double)m->topk, &r);
	return r.dense + r.expert;
}

static double block_matmul_params(const struct gen_model *m)
{
	double n = 0;
	for (long long l = 0; l < m->layers; l++)
		n += layer_matmul_params(m, l);
	return n;
}

/* attention FLOPs per (query, key) pair of one layer: QK^T and PV */
static double attn_pair_flops(const struct gen_model *m)
{
	double dqk = m->attn == GEN_MLA ? (double)(m->nope_dim + m->rope_dim) : (double)m->head_dim;
	double dv = m->attn == GEN_MLA ? (double)m->v_dim : (double)m->head_dim;
	return 2.0 * m->heads * (dqk + dv);
}

/* (query, key) pairs of s tokens as the model FLOPs count them, summed over the layers: all s^2 (Megatron-LM's
   count), and in a windowed layer twice the causal pairs inside the window, 2 (s W - W (W - 1) / 2) */
static double sum_pairs(const struct gen_model *m, double s)
{
	double w = (double)m->window, n = 0;
	for (long long l = 0; l < m->layers; l++)
		if (layer_attends(m, l))
			n += gen_layer_is_windowed(m, l) && w < s ? 2 * (s * w - w * (w - 1) / 2) : s * s;
	return n;
}

/* keys attended by `steps` decode steps after a prompt of `in` tokens, summed over the layers (step t sees
   in + t keys, a windowed layer at most its window) */
static double sum_decode_keys(const struct gen_model *m, double in, double steps)
{
	double full = steps * in + steps * (steps + 1) / 2, w = (double)m->window, n = 0;
	for (long long l = 0; l < m->layers; l++) {
		if (!gen_layer_is_windowed(m, l) || in + steps <= w) {
			n += full;
			continue;
		}
		double below = w > in ? w - in : 0; /* steps that see fewer than w keys */
		n += below * in + below * (below + 1) / 2 + (steps - below) * w;
	}
	return n;
}

double gen_model_flops(const struct gen_config *c)
{
	const struct gen_model *m = &c->m;
	double nb = block_matmul_params(m), head = (double)m->vocab * m->hidden, pair = attn_pair_flops(m);
	if (c->mode == GEN_TRAIN) {
		double s = (double)c->seq;
		/* each MTP module: a block as the last (its attention pairs a layer's share), eh_proj 2h x h, the head
		 */
		double h = (double)m->hidden, last = mtp_matmul_params(m);
		double mtp_flops = (double)m->mtp * (2 * s * (last + 2 * h * h + head) + pair * s * s);
		double core = pair * sum_pairs(m, s);
		if (m->attn == GEN_CSA) { /* each query's own keys, and the indexers' scores */
			core = gen_csa_core_flops(m, s, 0);
			mtp_flops += gen_csa_core_flops(m, s, m->mtp) - core - (double)m->mtp * pair * s * s;
		}
		long long n[5];
		gen_layer_counts(m, n);
		double scan = (double)n[GEN_LT_MAMBA] * s * mamba_scan_flops(m);
		return 3 * (double)c->p.global_batch * (2 * s * (nb + head) + core + mtp_flops + scan);
	}
	double in = (double)c->inf.input_len, steps = (double)gen_decode_steps(c);
	double prefill = 2 * in * nb + 2 * head + pair * sum_pairs(m, in);
	double decode = steps * 2 * (nb + head) + pair * sum_decode_keys(m, in, steps);
	return (double)c->p.dp * (double)c->inf.batch * (prefill + decode);
}

/* A hybrid model's count (Megatron-Bridge training/utils/flop_utils.py, hybrid_flops, and Megatron-LM's
   training.py): per token 3 x the forward's, attention 4 h p (h + h g / a + s / 2) with p = a d / h, a dense MLP
   4 h f (x 3/2 gated), a Mamba layer 2 h (2 d_in + 2 G N + H) + 7 d_in N + 2 d_in h with d_in taken as 2h
   whatever the model's heads (the source's simplification, kept so the figure is the source's), an MoE layer
   4 h f_e topk and its shared experts' 4 h f_shared (x 3/2 gated), the logits 2 h V. */
static double hybrid_mcore_flops(const struct gen_config *c)
{
	const struct gen_model *m = &c->m;
	double s = (double)c->seq, h = (double)m->hidden, a = (double)m->heads, g = (double)m->kv_heads;
	double p = (double)m->head_dim * a / h, gate = m->act == GEN_SWIGLU ? 1.5 : 1, din = 2 * h;
	double N = (double)m->mamba_state, G = (double)m->mamba_groups, H = (double)m->mamba_heads;
	long long n[5];
	gen_layer_counts(m, n);
	double attn = 4 * h * p * (h + h * g / a + s / 2), mlp = 4 * (double)m->ffn * gate * h;
	double mamba = 2 * h * (2 * din + 2 * G * N + H) + 7 * din * N + 2 * din * h;
	/* LatentMoE: the routed experts on the latent width w, and the projections down and up 4 h w */
	double w = m->moe_latent ? (double)m->moe_latent : h, ef = (double)m->expert_ffn;
	double moe = 4 * w * ef * (double)m->topk * gate + 4 * h * ef * (double)m->shared * gate +
	             (m->moe_latent ? 4 * h * w : 0);
	/* each MTP module ("*E") counts as one attention and one MoE layer and adds the logits once more */
	double mtp = (double)m->mtp;
	double per_token = ((double)n[GEN_LT_ATTN] + mtp) * attn + (double)n[GEN_LT_MLP] * mlp +
	                   (double)n[GEN_LT_MAMBA] * mamba + ((double)n[GEN_LT_MOE] + mtp) * moe +
	                   2 * h * (double)gen_vocab_padded(c) * (1 + mtp);
	return 3 * (double)c->p.global_batch * s * per_token;
}

double gen_mcore_flops(const struct gen_config *c)
{
	const struct gen_model *m = &c->m;
	if (m->hybrid[0])
		return hybrid_mcore_flops(c);
	double s = (double)c->seq, h = (double)m->hidden, a = (double)m->heads, g = (double)m->kv_heads,
	       d = (double)m->head_dim, mtp = (double)m->mtp, layers = (double)m->layers + mtp;
	double mats = m->act == GEN_SWIGLU ? 3 : 2, mlp = 0, attn = 0;
	for (long long l = 0; l < m->layers + m->mtp; l++) { /* an MTP module's MLP is the last layer's */
		long long k = l < m->layers ? l : m->layers - 1;
		/* LatentMoE: the routed experts on the latent width (h x mlp is what a token multiplies), the
		   projections down and up 2 h w */
		double w = m->moe_latent ? (double)m->moe_latent : h;
		mlp += gen_layer_is_moe(m, k)
		           ? mats * (double)m->expert_ffn * ((double)m->topk * w / h + (double)m->shared) +
		                 (m->moe_latent ? 2 * w : 0)
		           : mats * (double)m->ffn;
	}
	if (m->attn == GEN_CSA) {
		attn = gen_csa_mcore_attn(c);
	} else if (m->attn == GEN_MLA) {
		double dqk = (double)(m->nope_dim + m->rope_dim), dv = (double)m->v_dim;
		attn = layers * ((double)m->q_lora * (h + a * dqk + 1) +
		                 (double)m->kv_lora * (h + a * ((double)m->nope_dim + dv) + 1) +
		                 h * (double)m->rope_dim + a * dv * h + s * a * (dqk + dv) / 2);
	} else {
		/* a windowed layer: each query's mean causal context W - W (W - 1) / (2 s), counted twice as the
		   full layers' s / 2 is */
		double w = (double)m->window, swa = w < s ? w - w * (w - 1) / (2 * s) : s / 2;
		for (long long l = 0; l < m->layers + m->mtp; l++)
			attn +=
			    h * (a * d + 2 * g * d) + a * d * h + a * d * (gen_layer_is_windowed(m, l) ? 2 * swa : s);
	}
	double per_token =
	    6 * (h * mlp + attn + mtp * (3 * h + 2 * h * h) + h * (double)gen_vocab_padded(c) * (1 + mtp));
	return (double)c->p.global_batch * s * per_token;
}

double gen_tokens(const struct gen_config *c)
{
	if (c->mode == GEN_TRAIN)
		return (double)c->p.global_batch * (double)c->seq;
	return (double)c->inf.batch * (double)c->inf.output_len * (double)c->p.dp;
}

long long gen_infer_microbatches(const struct gen_config *c)
{
	long long m = c->p.pp < c->inf.batch ? c->p.pp : c->inf.batch;
	while (m > 1 && c->inf.batch % m)
		m--;
	return m > 1 ? m : 1;
}

long long gen_decode_steps(const struct gen_config *c)
{
	return c->inf.output_len - 1;
}
