/*
 * gen_presets.c -- the published model shapes `sim gen` knows by name (docs/workloads.md's table, with each
 * one's source), and the `gpt` model a shape given by flags starts from. tests/test_gen.c holds each preset's
 * parameters to its published count.
 */
#include "gen.h"

#include <string.h>

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
    /* DeepSeek-V4-Flash (its Hugging Face config.json, deepseek-ai/DeepSeek-V4-Flash; Megatron-Bridge's
       DeepSeekV4ModelConfig): 43 blocks, every one a mixture of 256 routed experts top-6 of width 2048 and a
       shared expert (the first three route by a hash of the token, at the same cost); attention of 64 query
       heads of 512 over one key/value head (gen_csa.c), queries from a latent of 1024, 64 dims rotated, the
       output by 8 groups to 1024 each; a window of 128 keys, the first two layers nothing more, then CSA (4 keys
       to one, an indexer of 64 heads of 128 picking 512) and HCA (128 to one) alternating; 4 hyper-connection
       streams; one MTP module (window only). Its FLOPs a token as Megatron-Bridge counts them come to the
       source's (Megatron-Bridge's 26.08 DeepSeekV4 Flash row: 706 TFLOP/s over 7776 tokens/s, 90.8 GFLOP). */
    {.name = "deepseek-v4-flash",
     .layers = 43,
     .hidden = 4096,
     .heads = 64,
     .kv_heads = 1,
     .head_dim = 512,
     .ffn = 2048,
     .vocab = 129280,
     .seq = 4096,
     .norm = GEN_RMSNORM,
     .act = GEN_SWIGLU,
     .attn = GEN_CSA,
     .rope = 1,
     .experts = 256,
     .topk = 6,
     .shared = 1,
     .expert_ffn = 2048,
     .mtp = 1,
     .q_lora = 1024,
     .rope_dim = 64,
     .window = 128,
     .o_lora = 1024,
     .o_groups = 8,
     .csa_first = 2,
     .csa_ratio = 4,
     .hca_ratio = 128,
     .idx_heads = 64,
     .idx_dim = 128,
     .idx_topk = 512,
     .hc = 4},
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
