/*
 * gen.c -- the workload generator's model presets and arithmetic: which
 * configs can be laid out, parameters per rank, memory per rank (ZeRO,
 * activations after Korthikanti et al., KV cache) and model FLOPs. Pure
 * functions; the trace text is workloads/gen_trace.c.
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
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define GEN_WORKSPACE (1024.0 * 1024 * 1024) /* cuBLAS, NCCL buffers, fragmentation */

/* GPT-3: Brown et al. 2020, Table 2.1. Two rows do not add up and follow
   the replications instead: XL lists 24 heads of 128 for d_model 2048 (16
   heads of 128 here, as GPT-Neo 1.3B), 13B lists d_model 5140 for 40 heads
   of 128 (5120 here); both then have the paper's parameter counts. */
#define GPT3(nm, l, h, a, d)                                                                                           \
	{                                                                                                              \
		.name = nm, .layers = l, .hidden = h, .heads = a, .kv_heads = a, .head_dim = d, .ffn = 4 * (h),        \
		.vocab = 50257, .seq = 2048, .norm = GEN_LAYERNORM, .act = GEN_GELU, .tied = 1                         \
	}
/* LLaMA-2 (Touvron et al. 2023, Table 1 / HF configs) and LLaMA-3 (Dubey et
   al. 2024, Table 3): RMSNorm, SwiGLU, RoPE, untied embeddings. */
#define LLAMA(nm, l, h, a, kv, f, v, s)                                                                                \
	{                                                                                                              \
		.name = nm, .layers = l, .hidden = h, .heads = a, .kv_heads = kv, .head_dim = (h) / (a), .ffn = f,     \
		.vocab = v, .seq = s, .norm = GEN_RMSNORM, .act = GEN_SWIGLU, .rope = 1                                \
	}

static const struct gen_model presets[] = {
    GPT3("gpt3-125m", 12, 768, 12, 64),
    GPT3("gpt3-350m", 24, 1024, 16, 64),
    GPT3("gpt3-760m", 24, 1536, 16, 96),
    GPT3("gpt3-1.3b", 24, 2048, 16, 128),
    GPT3("gpt3-2.7b", 32, 2560, 32, 80),
    GPT3("gpt3-6.7b", 32, 4096, 32, 128),
    GPT3("gpt3-13b", 40, 5120, 40, 128),
    GPT3("gpt3-175b", 96, 12288, 96, 128),
    LLAMA("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096),
    LLAMA("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096),
    LLAMA("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096),
    LLAMA("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192),
    LLAMA("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192),
    LLAMA("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192),
    /* Mixtral of Experts (Jiang et al. 2024, Table 1): 8 experts, top-2. */
    {.name = "mixtral-8x7b",
     .layers = 32,
     .hidden = 4096,
     .heads = 32,
     .kv_heads = 8,
     .head_dim = 128,
     .ffn = 14336,
     .vocab = 32000,
     .seq = 32768,
     .norm = GEN_RMSNORM,
     .act = GEN_SWIGLU,
     .rope = 1,
     .experts = 8,
     .topk = 2,
     .expert_ffn = 14336},
    /* DeepSeek-V3 Technical Report (2024), sections 2 and 4.2: MLA, 3 dense
       blocks then 256 routed experts top-8 and 1 shared expert. */
    {.name = "deepseek-v3",
     .layers = 61,
     .hidden = 7168,
     .heads = 128,
     .kv_heads = 128,
     .head_dim = 128,
     .ffn = 18432,
     .vocab = 129280,
     .seq = 4096,
     .norm = GEN_RMSNORM,
     .act = GEN_SWIGLU,
     .attn = GEN_MLA,
     .rope = 1,
     .experts = 256,
     .topk = 8,
     .shared = 1,
     .expert_ffn = 2048,
     .dense_layers = 3,
     .router_groups = 8, /* n_group and topk_group of its published config */
     .router_group_topk = 4,
     .mtp = 1,
     .q_lora = 1536,
     .kv_lora = 512,
     .rope_dim = 64,
     .nope_dim = 128,
     .v_dim = 128},
    /* Qwen3 Technical Report (2025), Table 2, and the models' published
       configs: QK-norm, GQA with 4 key/value heads of 128, every block MoE
       of 128 experts top-8 without shared experts, untied embeddings. */
    {.name = "qwen3-30b-a3b",
     .layers = 48,
     .hidden = 2048,
     .heads = 32,
     .kv_heads = 4,
     .head_dim = 128,
     .ffn = 6144,
     .vocab = 151936,
     .seq = 4096,
     .norm = GEN_RMSNORM,
     .act = GEN_SWIGLU,
     .rope = 1,
     .qk_norm = 1,
     .experts = 128,
     .topk = 8,
     .expert_ffn = 768},
    /* Kimi K2 (Kimi K2: Open Agentic Intelligence, 2025, Table 2, and its
       published config): DeepSeek-V3's architecture with 64 heads, 384
       experts and one dense block, no MTP module. */
    {.name = "kimi-k2",
     .layers = 61,
     .hidden = 7168,
     .heads = 64,
     .kv_heads = 64,
     .head_dim = 128,
     .ffn = 18432,
     .vocab = 163840,
     .seq = 4096,
     .norm = GEN_RMSNORM,
     .act = GEN_SWIGLU,
     .attn = GEN_MLA,
     .rope = 1,
     .experts = 384,
     .topk = 8,
     .shared = 1,
     .expert_ffn = 2048,
     .dense_layers = 1,
     .q_lora = 1536,
     .kv_lora = 512,
     .rope_dim = 64,
     .nope_dim = 128,
     .v_dim = 128},
    /* gpt-oss-120b (OpenAI, gpt-oss-120b & gpt-oss-20b Model Card, 2025, and its published config):
       36 MoE blocks of 128 experts top-4, GQA with 8 key/value heads of 64, banded attention of 128 keys on
       every other layer (the first windowed), untied embeddings. Its attention sinks (a learned logit per
       head in each softmax) and biased projections add no kernel of note and are not written. */
    {.name = "gpt-oss-120b",
     .layers = 36,
     .hidden = 2880,
     .heads = 64,
     .kv_heads = 8,
     .head_dim = 64,
     .ffn = 2880,
     .vocab = 201088,
     .seq = 4096,
     .norm = GEN_RMSNORM,
     .act = GEN_SWIGLU,
     .rope = 1,
     .experts = 128,
     .topk = 4,
     .expert_ffn = 2880,
     .window = 128,
     .window_skip = 2},
    /* NVIDIA Nemotron 3 Nano 30B-A3B (Nemotron 3 Nano technical report, 2025; Megatron-Bridge's
       Nemotron3NanoProvider, models/nemotronh/nemotron_h_provider.py): 52 layers of a hybrid pattern, 23 Mamba-2
       mixers (64 heads of 64, state 128 in 8 groups), 23 MoE layers of 128 experts top-6 of width 1856 with a
       shared expert of 3712 (two widths), 6 attention layers of 32 heads with 2 key/value heads of 128, no
       position embedding, squared-ReLU MLPs, untied embeddings. */
    {.name = "nemotron-3-nano",
     .layers = 52,
     .hidden = 2688,
     .heads = 32,
     .kv_heads = 2,
     .head_dim = 128,
     .ffn = 1856,
     .vocab = 131072,
     .seq = 8192,
     .norm = GEN_RMSNORM,
     .act = GEN_RELU2,
     .nopos = 1,
     .experts = 128,
     .topk = 6,
     .shared = 2,
     .expert_ffn = 1856,
     .hybrid = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
     .mamba_heads = 64,
     .mamba_head_dim = 64,
     .mamba_state = 128,
     .mamba_groups = 8},
    /* NVIDIA Nemotron 3 Super 120B-A12B (its Hugging Face config.json, nvidia/NVIDIA-Nemotron-3-Super-120B-A12B;
       Megatron-Bridge's recipes/nemotronh/nemotron_3_super.py): 88 layers of a hybrid pattern, 40 Mamba-2
       mixers (128 heads of 64, state 128 in 8 groups), 40 LatentMoE layers of 512 experts top-22 of width 2688
       on a latent width of 1024 with a shared expert of 5376 (two widths), 8 attention layers of 32 heads with
       2 key/value heads of 128; one MTP module of an attention and an MoE sublayer ("*E"), which the
       recipe runs twice (mtp_num_layers 2 with mtp_use_repeated_layer: --mtp-num-layers 2 here, each module
       with weights of its own). */
    {.name = "nemotron-3-super",
     .layers = 88,
     .hidden = 4096,
     .heads = 32,
     .kv_heads = 2,
     .head_dim = 128,
     .ffn = 2688,
     .vocab = 131072,
     .seq = 8192,
     .norm = GEN_RMSNORM,
     .act = GEN_RELU2,
     .nopos = 1,
     .experts = 512,
     .topk = 22,
     .shared = 2,
     .expert_ffn = 2688,
     .moe_latent = 1024,
     .mtp = 1,
     .hybrid = "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
     .mamba_heads = 128,
     .mamba_head_dim = 64,
     .mamba_state = 128,
     .mamba_groups = 8},
    /* NVIDIA Nemotron 3 Ultra (its Hugging Face config.json; the Megatron-LM pre-training script's
       --hybrid-override-pattern): 108 layers, 48 Mamba-2 mixers (256 heads of 64, state 128 in 8 groups), 48
       LatentMoE layers of 512 experts top-22 of width 5120 on a latent width of 2048 with a shared expert of
       10240, 12 attention layers of 64 heads with 2 key/value heads of 128, hidden 8192; one "*E" MTP module. */
    {.name = "nemotron-3-ultra",
     .layers = 108,
     .hidden = 8192,
     .heads = 64,
     .kv_heads = 2,
     .head_dim = 128,
     .ffn = 5120,
     .vocab = 131072,
     .seq = 8192,
     .norm = GEN_RMSNORM,
     .act = GEN_RELU2,
     .nopos = 1,
     .experts = 512,
     .topk = 22,
     .shared = 2,
     .expert_ffn = 5120,
     .moe_latent = 2048,
     .mtp = 1,
     .hybrid = "MEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*"
               "EMEMEMEME",
     .mamba_heads = 256,
     .mamba_head_dim = 64,
     .mamba_state = 128,
     .mamba_groups = 8},
    {.name = "qwen3-235b-a22b",
     .layers = 94,
     .hidden = 4096,
     .heads = 64,
     .kv_heads = 4,
     .head_dim = 128,
     .ffn = 12288,
     .vocab = 151936,
     .seq = 4096,
     .norm = GEN_RMSNORM,
     .act = GEN_SWIGLU,
     .rope = 1,
     .qk_norm = 1,
     .experts = 128,
     .topk = 8,
     .expert_ffn = 1536},
};
#define NPRESETS (int)(sizeof presets / sizeof presets[0])

const struct gen_model *gen_preset_at(int i)
{
	return i >= 0 && i < NPRESETS ? &presets[i] : NULL;
}

const struct gen_model *gen_preset(const char *name)
{
	for (int i = 0; i < NPRESETS; i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}

void gen_gpt_base(struct gen_model *m)
{
	*m = (struct gen_model){
	    .name = "gpt", .vocab = 50257, .seq = 2048, .norm = GEN_LAYERNORM, .act = GEN_GELU, .tied = 1};
}

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
	return e == GEN_ENGINE_VLLM ? "vllm" : "none";
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
	if (c->inf.engine == GEN_ENGINE_NONE || seqs <= 0)
		return 0;
	return VLLM_V0_HOST_S_PER_SEQ * (double)seqs;
}

/* ---- checks -------------------------------------------------------------- */

static int fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int check_shape(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_model *m = &c->m;
	const struct gen_parallel *p = &c->p;
	if (m->heads % p->tp)
		return fail(
		    why, len,
		    "--heads %lld is not divisible by --tp %lld (each tensor-parallel rank holds heads/tp heads)",
		    m->heads, p->tp);
	if (m->kv_heads > m->heads || m->heads % m->kv_heads)
		return fail(why, len,
		            "--kv-heads %lld must divide --heads %lld (query heads share key/value heads in groups)",
		            m->kv_heads, m->heads);
	if (m->attn == GEN_MHA && m->kv_heads % p->tp && p->tp % m->kv_heads)
		return fail(why, len,
		            "--kv-heads %lld and --tp %lld: one must divide the other (kv heads are split over tp, or "
		            "replicated when tp > kv heads)",
		            m->kv_heads, p->tp);
	if (m->ffn % p->tp)
		return fail(why, len, "--ffn %lld is not divisible by --tp %lld (the FFN is split by columns over tp)",
		            m->ffn, p->tp);
	if (m->window && p->cp > 1)
		return fail(
		    why, len,
		    "--window with --cp %lld: ring attention over a sliding window is not modelled (use --cp 1)",
		    p->cp);
	if (m->experts && m->expert_ffn % p->tp)
		return fail(why, len, "expert FFN %lld is not divisible by --tp %lld", m->expert_ffn, p->tp);
	if (m->moe_latent && !m->experts)
		return fail(why, len, "--moe-latent %lld: a latent width of the experts needs --experts",
		            m->moe_latent);
	if (m->experts && (m->topk < 1 || m->topk > m->experts))
		return fail(why, len, "--topk %lld: expected 1 to --experts %lld", m->topk, m->experts);
	if (m->experts && (m->router_groups > 0 || m->router_group_topk > 0)) {
		long long G = m->router_groups, g = m->router_group_topk;
		if (G < 1 || g < 1)
			return fail(why, len,
			            "--router-groups and --router-group-topk go together (group-limited routing)");
		if (m->experts % G)
			return fail(why, len, "--router-groups %lld does not divide --experts %lld", G, m->experts);
		if (g > G)
			return fail(why, len, "--router-group-topk %lld is more than --router-groups %lld", g, G);
		if (m->topk > g * (m->experts / G))
			return fail(why, len,
			            "--topk %lld is more than the %lld experts of --router-group-topk %lld groups",
			            m->topk, g * (m->experts / G), g);
	}
	/* Megatron-Core's own checks (megatron/training/arguments.py) */
	if (p->moe_overlap && (!m->experts || p->ep < 2))
		return fail(why, len,
		            "--moe-a2a-overlap overlaps expert-parallel all-to-alls: it needs --ep 2 or more");
	if (p->moe_overlap && p->dispatcher == GEN_DISP_ALLGATHER)
		return fail(why, len, "--moe-a2a-overlap works with --moe-dispatcher alltoall or flex, not allgather");
	if (p->moe_overlap && p->recompute == GEN_RC_FULL)
		return fail(why, len, "--moe-a2a-overlap: not with --recompute full (Megatron-Core refuses it)");
	if (p->moe_overlap && p->sched == GEN_GPIPE)
		return fail(why, len,
		            "--moe-a2a-overlap pairs 1F1B's forwards and backwards: not with --schedule gpipe");
	if (m->experts && p->dispatcher == GEN_DISP_FLEX && m->topk > 256)
		return fail(why, len, "--moe-dispatcher flex: --topk %lld, at most 256 (the trace's coll topk=)",
		            m->topk);
	if (m->experts && p->dispatcher == GEN_DISP_ALLGATHER && p->tp > 1)
		return fail(
		    why, len,
		    "--moe-dispatcher allgather with --tp %lld: it gathers over tp x ep, which sim gen does not "
		    "lay out (use alltoall or flex)",
		    p->tp);
	if (m->dense_layers > m->layers)
		return fail(why, len, "%lld dense layers but only --layers %lld", m->dense_layers, m->layers);
	if (m->window_skip && !m->window)
		return fail(why, len, "--window-skip-freq %lld needs --window (the keys a windowed layer sees)",
		            m->window_skip);
	long long runs = 0;
	for (long long l = 0; l < m->layers && m->window; l++)
		runs += l == 0 || gen_layer_is_windowed(m, l) != gen_layer_is_windowed(m, l - 1) ||
		        gen_layer_is_moe(m, l) != gen_layer_is_moe(m, l - 1);
	if (runs > GEN_RUNS_MAX)
		return fail(
		    why, len,
		    "--window-skip-freq %lld over %lld layers: %lld runs of windowed and full layers, at most %d",
		    m->window_skip, m->layers, runs, GEN_RUNS_MAX);
	return 0;
}

/* a --pipeline-layout against the model and the pipeline, as Megatron-Core's
   PipelineParallelLayerLayout.validate_layer_layout checks it */
static int check_layout(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_layout *L = &c->p.layout;
	const struct gen_parallel *p = &c->p;
	const char *x = L->text;
	long long t = 0, mtp = c->mode == GEN_TRAIN ? c->m.mtp : 0;
	for (int q = 0; q < L->chunks; q++)
		t += L->layers[q];
	if (p->first_layers || p->last_layers || p->split_embedding || p->split_loss)
		return fail(why, len,
		            "--pipeline-layout and --decoder-first/last-pipeline-num-layers or "
		            "--account-for-embedding/loss-in-pipeline-split exclude each other (as in Megatron-Core)");
	if (L->chunks != p->pp * p->vstages)
		return fail(why, len,
		            "--pipeline-layout '%s' names %d model chunks, expected --pp %lld x %lld virtual stages", x,
		            L->chunks, p->pp, p->vstages);
	if (L->emb != 1 || L->emb_at != 0 || L->emb_chunk != 0)
		return fail(why, len,
		            "--pipeline-layout '%s': the embedding (E) must be named once, first in the first chunk",
		            x);
	if (L->loss != 1 || L->loss_at != L->elements - 1 || L->loss_chunk != L->chunks - 1)
		return fail(why, len, "--pipeline-layout '%s': the loss (L) must be named once, last in the last chunk",
		            x);
	if (t != c->m.layers)
		return fail(why, len, "--pipeline-layout '%s' names %lld transformer layers (t), the model has %lld", x,
		            t, c->m.layers);
	if (L->mtp != mtp)
		return fail(why, len,
		            "--pipeline-layout '%s' names %d MTP modules (m), the model has %lld (--mtp-num-layers)", x,
		            L->mtp, mtp);
	if (L->mtp && (L->mtp_split || !L->mtp_after || L->mtp_chunk / p->pp != p->vstages - 1))
		return fail(why, len,
		            "--pipeline-layout '%s': the MTP modules (m) must share one chunk, after every transformer "
		            "layer, in the last virtual stage of their pipeline stage (as Megatron-Core requires)",
		            x);
	return 0;
}

/* the layers split over stages and chunks (gen_chunk_layers) */
static int check_split(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_model *m = &c->m;
	const struct gen_parallel *p = &c->p;
	long long v = p->vstages, chunks = p->pp * v, F = p->first_layers, L = p->last_layers;
	int uneven = F || L, acct = p->split_embedding || p->split_loss;
	if (p->layout.chunks)
		return check_layout(c, why, len);
	if ((uneven || acct) && p->pp < 2)
		return fail(why, len, "%s needs --pp 2 or more",
		            F                    ? "--decoder-first-pipeline-num-layers"
		            : L                  ? "--decoder-last-pipeline-num-layers"
		            : p->split_embedding ? "--account-for-embedding-in-pipeline-split"
		                                 : "--account-for-loss-in-pipeline-split");
	if (uneven && acct)
		return fail(
		    why, len,
		    "--decoder-first/last-pipeline-num-layers and --account-for-embedding/loss-in-pipeline-split "
		    "exclude each other (as in Megatron-Core)");
	if (uneven) {
		long long middle = p->pp - (F > 0) - (L > 0), rest = m->layers - F - L;
		if (F % v || L % v)
			return fail(why, len,
			            "--decoder-%s-pipeline-num-layers %lld is not divisible by --virtual-stages %lld",
			            F % v ? "first" : "last", F % v ? F : L, v);
		if (rest < 0 || (middle == 0 && rest != 0) || (middle > 0 && rest % (middle * v)))
			return fail(
			    why, len,
			    "--layers %lld minus the first and last stages' %lld is not divisible by the %lld middle "
			    "stages%s",
			    m->layers, F + L, middle, v > 1 ? " x --virtual-stages" : "");
		return 0;
	}
	long long slots = m->layers + p->split_embedding + p->split_loss;
	if (slots % chunks) {
		char vs_n[96] = "";
		if (v > 1)
			snprintf(vs_n, sizeof vs_n, " x --virtual-stages %lld = %lld model chunks", v, chunks);
		return fail(
		    why, len,
		    "--layers %lld%s is not divisible by --pp %lld%s (every model chunk holds the same number of "
		    "layers unless --decoder-first/last-pipeline-num-layers or "
		    "--account-for-embedding/loss-in-pipeline-split say otherwise)",
		    m->layers,
		    !acct                                 ? ""
		    : p->split_embedding && p->split_loss ? " + 2 (embedding, loss)"
		    : p->split_embedding                  ? " + 1 (embedding)"
		                                          : " + 1 (loss)",
		    p->pp, vs_n);
	}
	return 0;
}

static int check_parallel(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_model *m = &c->m;
	const struct gen_parallel *p = &c->p;
	long long v = p->vstages;
	if (p->sched == GEN_INTERLEAVED && p->pp < 2)
		return fail(why, len, "--schedule interleaved needs --pp 2 or more");
	if (p->sched != GEN_INTERLEAVED && v != 1)
		return fail(why, len, "--virtual-stages %lld needs --schedule interleaved", v);
	if (check_split(c, why, len))
		return -1;
	if (p->ep > 1 && !m->experts)
		return fail(why, len, "--ep %lld needs a model with experts (--experts)", p->ep);
	if (m->experts && m->experts % p->ep)
		return fail(why, len, "--experts %lld is not divisible by --ep %lld", m->experts, p->ep);
	if (p->dp % p->ep && (p->tp < 2 || p->ep % p->tp || p->dp % (p->ep / p->tp) || !p->sp || p->cp > 1 ||
	                      c->mode != GEN_TRAIN || p->dispatcher == GEN_DISP_ALLGATHER))
		return fail(
		    why, len,
		    "--ep %lld does not divide --dp %lld (expert parallelism splits the data-parallel ranks; in "
		    "training with --tp, --sp, --cp 1 and an all-to-all or flex dispatcher it may span the tp x dp "
		    "ranks, Megatron-Core's MoE parallel folding: --tp divides --ep and --ep / --tp divides --dp)",
		    p->ep, p->dp);
	double ranks = (double)p->tp * (double)p->cp * (double)p->pp * (double)p->dp;
	if (ranks > 1048576)
		return fail(why, len, "--tp x --cp x --pp x --dp is %.0f ranks; at most 1048576", ranks);
	if (p->cp > 16)
		return fail(why, len, "--cp %lld: at most 16 (each layer writes out every step of the ring)", p->cp);
	if (p->cp > 1 && c->seq % (2 * p->cp))
		return fail(
		    why, len,
		    "--cp %lld: --seq %lld is not divisible by 2 x --cp = %lld (each rank holds two chunks of the "
		    "sequence, for causal load balance)",
		    p->cp, c->seq, 2 * p->cp);
	if (p->cp > 1 && c->attn_impl == GEN_NAIVE)
		return fail(why, len, "--cp %lld needs a fused attention (--attn-impl flash2, flash3 or flash1)",
		            p->cp);
	if (p->cp > 1 && p->cp_comm == GEN_CP_A2A) {
		/* the all-to-alls split a rank's heads over the cp ranks (Transformer Engine asserts it for Q and K) */
		long long hl = c->m.heads / p->tp, kvl = c->m.kv_heads >= p->tp ? c->m.kv_heads / p->tp : 1;
		if (hl % p->cp || kvl % p->cp)
			return fail(
			    why, len,
			    "--cp %lld --cp-comm-type a2a: the %lld query and %lld key/value heads of a "
			    "tensor-parallel "
			    "rank are not both divisible by --cp (the all-to-alls split them over the cp ranks)",
			    p->cp, hl, kvl);
	}
	if (p->sp && gen_seq_local(c) % p->tp)
		return fail(why, len,
		            "--sp: the %lld tokens of a rank (--seq %lld / --cp %lld) are not divisible by --tp %lld",
		            gen_seq_local(c), c->seq, p->cp, p->tp);
	if (p->tp_overlap && p->tp > 1 && !p->sp) /* (with --tp 1 there is nothing to overlap: it changes nothing) */
		return fail(why, len,
		            "--tp-comm-overlap: needs --sp (it overlaps sequence parallelism's all-gathers and "
		            "reduce-scatters with the GEMMs, as Megatron-Core requires)");
	return 0;
}

static int check_train(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_parallel *p = &c->p;
	if (p->global_batch % (p->micro_batch * p->dp))
		return fail(
		    why, len,
		    "--global-batch %lld is not divisible by --micro-batch %lld x --dp %lld (every data-parallel "
		    "rank runs whole micro-batches)",
		    p->global_batch, p->micro_batch, p->dp);
	long long mb = p->global_batch / (p->micro_batch * p->dp);
	if (p->sched == GEN_INTERLEAVED && mb % p->pp)
		return fail(why, len,
		            "--schedule interleaved: %lld micro-batches per pipeline is not a multiple of --pp %lld",
		            mb, p->pp);
	if (p->grad_sync == GEN_GS_AFTER && p->zero >= 2)
		return fail(why, len,
		            "--grad-sync after with --zero %d: ZeRO-%d reduce-scatters every micro-batch's gradients "
		            "(use --zero 0 or 1)",
		            p->zero, p->zero);
	if (p->zero == 3 && p->pp > 1)
		return fail(why, len,
		            "--zero 3 with --pp %lld: ZeRO-3 is not supported with pipeline parallelism (use --zero 1 "
		            "or 2, or --pp 1)",
		            p->pp);
	return 0;
}

/* a hybrid pattern (m->hybrid) against the model, the mode and the layout */
static int check_hybrid(const struct gen_config *c, char *why, size_t len)
{
	const struct gen_model *m = &c->m;
	const struct gen_parallel *p = &c->p;
	const char *x = m->hybrid;
	if (!x[0])
		return 0;
	size_t bad = strspn(x, "M*-E");
	if (x[bad])
		return fail(why, len,
		            "--hybrid-pattern '%s': '%c' at %zu is not a layer (M Mamba-2, * attention, - MLP, E "
		            "mixture of experts)",
		            x, x[bad], bad + 1);
	if ((long long)strlen(x) != m->layers)
		return fail(why, len, "--hybrid-pattern names %zu layers, --layers says %lld", strlen(x), m->layers);
	if (strchr(x, 'E') && !m->experts)
		return fail(why, len, "--hybrid-pattern '%s': its 'E' layers need --experts", x);
	if (!strchr(x, 'E') && m->experts)
		return fail(why, len, "--experts %lld: the hybrid pattern '%s' has no 'E' layer to hold them",
		            m->experts, x);
	if (strchr(x, 'M')) {
		if (!m->mamba_heads || !m->mamba_head_dim || !m->mamba_state || !m->mamba_groups)
			return fail(why, len,
			            "--hybrid-pattern: its Mamba layers need --mamba-heads, --mamba-head-dim, "
			            "--mamba-state and --mamba-groups");
		if (m->mamba_heads % m->mamba_groups)
			return fail(why, len, "--mamba-groups %lld does not divide --mamba-heads %lld", m->mamba_groups,
			            m->mamba_heads);
		if (m->mamba_groups % p->tp)
			return fail(
			    why, len,
			    "--mamba-groups %lld is not divisible by --tp %lld (each tensor-parallel rank holds "
			    "groups/tp groups and their heads)",
			    m->mamba_groups, p->tp);
	}
	if (c->mode != GEN_TRAIN)
		return fail(why, len,
		            "%s is a hybrid Mamba model (--hybrid-pattern), written for training only: a Mamba layer's "
		            "decode step (its recurrent state update) is not modelled",
		            m->name);
	if ((m->mtp && !m->experts) || m->window || m->dense_layers || m->attn == GEN_MLA)
		return fail(why, len,
		            "--hybrid-pattern with %s: a hybrid model's layers are its pattern's (no sliding windows, "
		            "leading dense layers or MLA; an MTP module is an attention and an MoE sublayer, \"*E\", "
		            "so it needs --experts)",
		            m->mtp            ? "--mtp-num-layers"
		            : m->window       ? "--window"
		            : m->dense_layers ? "--dense-layers"
		                              : "MLA");
	if (p->cp > 1)
		return fail(why, len,
		            "--hybrid-pattern with --cp %lld: context parallelism over Mamba layers is not "
		            "modelled (use --cp 1)",
		            p->cp);
	return 0;
}

int gen_check(const struct gen_config *c, char *why, size_t len)
{
	if (check_hybrid(c, why, len) || check_shape(c, why, len) || check_parallel(c, why, len))
		return -1;
	if (!(c->dropout >= 0 && c->dropout < 1))
		return fail(why, len, "--dropout %g: expected a probability from 0 up to (not including) 1",
		            c->dropout);
	if (c->dropout > 0 && c->mode != GEN_TRAIN)
		return fail(why, len, "--dropout belongs to --mode train");
	if (c->dropout > 0 && (c->attn_impl == GEN_FLASH3 || c->attn_impl == GEN_CUDNN))
		return fail(why, len, "--dropout with --attn-impl %s: %s has no dropout (use flash2)",
		            gen_attn_impl_name(c->attn_impl),
		            c->attn_impl == GEN_FLASH3 ? "FlashAttention-3" : "the model's cuDNN kernel");
	long long hd = c->m.attn == GEN_MLA ? c->m.nope_dim + c->m.rope_dim : c->m.head_dim; /* of Q and K */
	if (c->attn_impl == GEN_FLASH1 && (hd > 128 || hd % 8))
		return fail(why, len,
		            "--attn-impl flash1: head dim %lld: the original FlashAttention has kernels for head dims "
		            "that are multiples of 8 up to 128 (use flash2)",
		            hd);
	if (c->mode == GEN_TRAIN)
		return check_train(c, why, len);
	return 0;
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
	struct gen_params r = {attn_params(m, t) + 2 * norm_params(m) + qk_norm_params(m), 0};
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

/* MTP modules of all the chunks of one stage */
static long long stage_mtp(const struct gen_config *c, long long stage)
{
	long long n = 0;
	for (long long ch = 0; ch < c->p.vstages; ch++)
		n += gen_chunk_mtp(c, stage, ch);
	return n;
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
		r = layer_params(m, m->layers - 1, c->p.tp, gen_etp(&c->p), (double)(m->experts / c->p.ep));
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
   MoE: each of topk experts' input copy and intermediates, shared experts.
   q (attn_act_token): the activation's output is the second GEMM's input,
   kept quantized (Transformer Engine's LayerNormMLP and GroupedLinear save
   the quantized tensor they multiplied), and so is an expert's input. */
static double ffn_act_token(const struct gen_model *m, long long layer, long long t, double q, int folded)
{
	double per = (m->act == GEN_SWIGLU ? 4.0 : 2.0) + q;
	if (!gen_layer_is_moe(m, layer))
		return per * m->ffn / t;
	/* LatentMoE: latent-wide expert inputs, and fc2_latent_proj's input (2 bytes a latent value); folded over
	   tp (gen_ep_folded), a rank routes its own 1/t of the tokens to experts it runs whole */
	double w = m->moe_latent ? (double)m->moe_latent : (double)m->hidden;
	double routed =
	    folded ? m->topk * (q * w + per * m->expert_ffn) / t : m->topk * (q * w + per * m->expert_ffn / t);
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
		default: tok = ffn_act_token(m, layer, c->p.tp, q, gen_ep_folded(&c->p)); break;
		}
		return repl + s * b * tok + core;
	}
	/* norms' inputs 4h, attention and MLP inputs 2h + 2h (quantized: q h + q h),
	   the two hidden dropout masks 1h + 1h (with dropout): 10 s b h (8
	   without dropout), replicated over tp unless sequence parallel */
	double repl = ((drop ? 10 : 8) - 2 * (2 - q)) * s * b * h / (c->p.sp ? t : 1);
	double shard =
	    s * b * (attn_act_token(m, c->p.tp, q) + ffn_act_token(m, layer, c->p.tp, q, gen_ep_folded(&c->p)));
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
		return gen_act_layer_bytes(c, c->m.layers - 1, rc);
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
	out->kv = 2 * layers * per_token * b * (double)tokens;
	/* prefill's live set of one block: input and residual, and the larger of
	   the attention and FFN intermediates */
	double a = attn_act_token(m, c->p.tp, 2), f = ffn_act_token(m, m->layers - 1, c->p.tp, 2, 0); /* unquantized */
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
	       (m->attn == GEN_MLA ? (double)(m->q_lora + m->kv_lora) : 0);
}

/* an MTP module's block: the last layer's, or a hybrid model's "*E" */
static double mtp_matmul_params(const struct gen_model *m)
{
	if (!m->hybrid[0])
		return layer_matmul_params(m, m->layers - 1);
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
		long long n[5];
		gen_layer_counts(m, n);
		double scan = (double)n[GEN_LT_MAMBA] * s * mamba_scan_flops(m);
		return 3 * (double)c->p.global_batch *
		       (2 * s * (nb + head) + pair * sum_pairs(m, s) + mtp_flops + scan);
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
	if (m->attn == GEN_MLA) {
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
