/*
 * gen.h -- the workload generator behind `sim gen`: a transformer model and
 * its parallel layout in, a `simtrace 1` trace of one training step (or one
 * inference request batch) out, with the memory each rank needs and the
 * model FLOPs of the step (docs/workloads.md is the user's reference).
 *
 * Three layers, each usable alone:
 *
 *   presets     gen_preset(): the published shapes of GPT-3, LLaMA-2/3,
 *               Mixtral, DeepSeek, Qwen3, Kimi, GPT-OSS and Nemotron 3 (a
 *               table in gen_presets.c)
 *   arithmetic  gen_check() (gen_check.c), gen_stage_params(),
 *               gen_stage_memory(), gen_model_flops() (gen.c, gen_csa.c):
 *               pure functions of a struct gen_config, no I/O
 *               (tests/test_gen.c checks them against the papers)
 *   emission    gen_write(): the trace text (workloads/gen_trace.c)
 *
 * Shapes are per whole model; the generator shards them: Megatron-LM's
 * column/row tensor parallelism over tp, layers over pp (and virtual
 * stages), experts over ep (ep splits the data-parallel ranks: the layout
 * is tp, ep, dp/ep, pp), optimizer state over dp with ZeRO. Sizes are in
 * elements or bytes as each field says.
 */
#ifndef SIM_GEN_H
#define SIM_GEN_H

#include "op.h"
#include <stddef.h>
#include <stdio.h>

enum gen_norm { GEN_LAYERNORM, GEN_RMSNORM };
/* the MLP's activation: GELU (2 matrices), SwiGLU (3, gated), squared ReLU (2; Nemotron-H's relu(x)^2) */
enum gen_act { GEN_GELU, GEN_SWIGLU, GEN_RELU2 };
/* MHA covers GQA and MQA (kv_heads < heads); CSA: DeepSeek-V4's hybrid attention (gen_csa.c) */
enum gen_attn { GEN_MHA, GEN_MLA, GEN_CSA };
enum gen_sched { GEN_1F1B, GEN_GPIPE, GEN_INTERLEAVED };
/* how context parallelism exchanges the sequence (Megatron-Core's --cp-comm-type) */
enum gen_cp_comm { GEN_CP_P2P, GEN_CP_A2A };
/* how an MoE layer moves its tokens to the experts' ranks and back (Megatron-Core's --moe-token-dispatcher-type):
   an all-to-all of a copy per chosen expert; all-gathers of every rank's tokens and a reduce-scatter of the
   results; the flex dispatcher's deduplicating all-to-all (DeepEP, HybridEP) */
enum gen_dispatcher { GEN_DISP_ALLTOALL, GEN_DISP_ALLGATHER, GEN_DISP_FLEX };
enum gen_recompute { GEN_RC_NONE, GEN_RC_SELECTIVE, GEN_RC_FULL };
enum gen_mode { GEN_TRAIN, GEN_INFER };
/* the GEMMs' dtype: fp8 training runs Transformer Engine's fp8 recipes (--fp8-recipe); fp4 training its NVFP4
   recipe (NVFP4BlockScaling: 16-element blocks with e4m3 scales and a per-tensor scale, random Hadamard
   transforms on the wgrad operands), inference the GEMMs in that dtype */
enum gen_dtype { GEN_BF16, GEN_FP16, GEN_FP8, GEN_FP4 };
/* Transformer Engine's fp8 training recipes (--fp8-recipe, with --dtype fp8):
   DelayedScaling, Float8CurrentScaling, MXFP8BlockScaling; none: the GEMMs
   alone, no quantization kernel (a bound no recipe reaches, to show what
   the quantization costs) */
enum gen_fp8_recipe { GEN_FP8_DELAYED, GEN_FP8_CURRENT, GEN_FP8_MX, GEN_FP8_NONE };
/* the serving engine an inference step runs in (--engine): none (the host
   keeps ahead of the device: a CUDA-graph loop), vLLM's V0 engine (0.5-0.6,
   one scheduler step per forward: gen_engine_host_s), or TensorRT-LLM's C++
   executor (its host keeps ahead too; its checkpoint holds the embedding
   table whole on every tensor-parallel rank: infer_memory, build_emb) */
enum gen_engine { GEN_ENGINE_NONE, GEN_ENGINE_VLLM, GEN_ENGINE_TRTLLM };
/* how the device ops are launched (--launch): eager (one by one by the
   host, the default) or graph (from CUDA graphs: an inference's decode
   steps, as vLLM and TensorRT-LLM capture them, or a training step whole,
   as torch.cuda.graph captures it): the ops of a graph carry launch=graph
   (workloads/op.h) */
enum gen_launch { GEN_LAUNCH_EAGER, GEN_LAUNCH_GRAPH };
/* the decode steps' attention kernels (--decode-impl): auto (paged with
   --paged, else flash2_decode), FlashAttention-2's decode kernels
   (flash2_decode: torch SDPA's flash backend, vLLM's FLASH_ATTN backend,
   whose block table reads the paged cache), vLLM's PagedAttention kernels
   (paged: its XFORMERS backend, and ROCm's up to 0.6.1), a generic split-KV kernel
   (decode: FlashDecoding), or TensorRT-LLM's generation kernels with
   multi_block_mode off (mmha: masked MHA, or XQA for grouped KV heads, the
   keys of a sequence never split) */
enum gen_decode_impl { GEN_DEC_AUTO, GEN_DEC_FLASH2, GEN_DEC_PAGED, GEN_DEC_GENERIC, GEN_DEC_MMHA };
/* the attention kernels of prefill and training (decode: --decode-impl):
   fused FlashAttention-2/-3, cuDNN's fused attention (what Transformer
   Engine runs on Hopper and later), or the separate kernels of an eager
   framework (Q K^T, mask, softmax, P V), which keep the s x s scores */
enum gen_attn_impl { GEN_FLASH2, GEN_FLASH3, GEN_NAIVE, GEN_FLASH1, GEN_CUDNN };
/* when data-parallel gradients are reduced: bucket by bucket during the
   backward (DDP, default), or all at once after it (Megatron-LM's local DDP
   before its overlapped reduction) */
enum gen_grad_sync { GEN_GS_OVERLAP, GEN_GS_AFTER };

#define GEN_HYBRID_MAX  257 /* a pattern of up to 256 layers */
#define GEN_MAMBA_CONV  4   /* Megatron-Core's MambaMixer d_conv */
#define GEN_MAMBA_CHUNK 128 /* its chunk_size: the SSD scan's block of tokens */

struct gen_model {
	char name[48];      /* preset name, or "gpt" */
	long long layers;   /* transformer blocks */
	long long hidden;   /* h, the model width */
	long long heads;    /* a, query heads */
	long long kv_heads; /* key/value heads (= heads: MHA; 1: MQA; else GQA) */
	long long head_dim; /* d per head (a * d is h except for a few GPT-3 sizes) */
	long long ffn;      /* dense FFN width (4h for GPT) */
	long long vocab;    /* V */
	long long seq;      /* default sequence length (training context) */
	enum gen_norm norm; /* LayerNorm (GPT) or RMSNorm (LLaMA) */
	enum gen_act act;   /* GELU MLP (2 matrices) or SwiGLU (3 matrices) */
	enum gen_attn attn; /* MHA/GQA/MQA or MLA */
	int rope;           /* rotary position embedding (else learned positions, unless nopos) */
	int nopos;          /* no position embedding at all (hybrid Mamba models: the Mamba layers order the tokens) */
	int tied;           /* input and output embeddings share weights */
	int qk_norm;        /* RMSNorm/LayerNorm over each query and key head (Qwen3) */
	/* mixture of experts (experts = 0: dense) */
	long long experts;      /* routed experts per MoE layer */
	long long topk;         /* experts per token */
	long long shared;       /* shared experts, always active */
	long long expert_ffn;   /* FFN width of one expert */
	long long dense_layers; /* the first dense_layers blocks have a dense FFN */
	/* LatentMoE (Nemotron 3 Super and Ultra; Megatron-Core's --moe-latent-size): the routed experts work on a
	   latent width, the tokens projected down to it after the router (fc1_latent_proj) and back up after the
	   combine (fc2_latent_proj), linear layers replicated over tp; the dispatch moves latent-wide tokens. The
	   router and the shared experts keep the model width. 0: none. */
	long long moe_latent;
	/* group-limited routing (DeepSeek-V3; Megatron-Core's --moe-router-num-groups and --moe-router-group-topk):
	   a token's experts lie in router_group_topk of router_groups expert groups (0: not group-limited) */
	long long router_groups, router_group_topk;
	/* multi-head latent attention (DeepSeek-V2/V3) */
	long long q_lora, kv_lora, rope_dim, nope_dim, v_dim;
	/* multi-token prediction (DeepSeek-V3 section 2.2, Megatron-Core's --mtp-num-layers): modules after the
	   last block, each predicting one token further (training only; gen_chunk_mtp). A hybrid model's module
	   holds an attention and an MoE sublayer (Megatron-Core's mtp_hybrid_override_pattern "*E", Nemotron 3). */
	long long mtp;
	/* sliding-window attention (Mistral, Gemma, GPT-OSS): the keys each query sees in a windowed layer (0: all),
	   and every window_skip-th layer attends to all (Megatron-Core's window_attn_skip_freq; 0: every layer
	   windowed); gen_layer_is_windowed */
	long long window, window_skip;
	/* hybrid Mamba models (Megatron-Core's MambaModel; Nemotron-H, Nemotron 3): one symbol a layer, as
	   hybrid_override_pattern writes them ("": every layer a transformer block): 'M' a Mamba-2 mixer, '*'
	   self-attention, '-' a dense MLP, 'E' a mixture of experts, each with its own norm and residual
	   (gen_layer_type). The Mamba-2 mixer (Dao and Gu 2024, megatron/core/ssm/mamba_mixer.py): mamba_heads
	   heads of mamba_head_dim channels (d_inner = their product), B and C of mamba_state over mamba_groups
	   groups, a causal depthwise convolution of GEN_MAMBA_CONV taps, the SSD scan by chunks of
	   GEN_MAMBA_CHUNK tokens. */
	char hybrid[GEN_HYBRID_MAX];
	long long mamba_heads, mamba_head_dim, mamba_state, mamba_groups;
	/* DeepSeek-V4's hybrid attention (attn = GEN_CSA; Megatron-Core's dsv4_hybrid; workloads/gen_csa.c): heads
	   query heads over one key/value head of head_dim (a key is its value), the queries from a low-rank q_lora
	   (MLA's), rope_dim of each head rotated, the output projected low-rank by groups (o_groups groups of heads,
	   each to o_lora, then the o_groups x o_lora to h). A query sees the last `window` keys and, past them, as
	   gen_layer_compress says of its layer: nothing more (the first csa_first layers and the MTP modules), the
	   keys compressed csa_ratio to one of which an indexer of idx_heads heads of idx_dim picks idx_topk
	   (Compressed Sparse Attention), or every key compressed hca_ratio to one (Heavily Compressed Attention),
	   the two alternating from layer csa_first on. */
	long long o_lora, o_groups, csa_first, csa_ratio, hca_ratio, idx_heads, idx_dim, idx_topk;
	/* manifold-constrained hyper-connections (DeepSeek-V4): the residual stream is hc copies of the hidden
	   state, mixed before each sublayer and updated after it (0: a plain residual) */
	long long hc;
};

/* A pipeline layout (--pipeline-layout; workloads/gen_layout.c): which
   layers each model chunk holds, as Megatron-Core's
   pipeline_model_parallel_layout names them. Chunk q (0-based, in the
   text's order) is pipeline stage q % pp's virtual stage q / pp. */
#define GEN_LAYOUT_TEXT   256
#define GEN_LAYOUT_CHUNKS 512
struct gen_layout {
	char text[GEN_LAYOUT_TEXT];          /* as given ("": no layout) */
	int chunks;                          /* model chunks named (0: no layout) */
	int layers[GEN_LAYOUT_CHUNKS];       /* transformer layers ('t') of each chunk */
	int mtp, mtp_chunk, mtp_split;       /* 'm' counted, the chunk of the last one (-1: none), 1: in two chunks */
	int mtp_after;                       /* every 'm' comes after every 't' */
	int emb, emb_chunk;                  /* 'E' counted, the chunk of the first */
	int loss, loss_chunk;                /* 'L' counted, the chunk of the last */
	long long emb_at, loss_at, elements; /* element index of the first E, the last L; elements in all */
};

struct gen_parallel {
	long long tp, pp, dp, ep;       /* ranks = tp * cp * pp * dp; ep divides dp, or spans tp x dp (gen_ep_folded) */
	long long cp;                   /* context parallelism: each rank holds seq / cp tokens of a sequence */
	enum gen_cp_comm cp_comm;       /* its exchange: the ring of K/V blocks, or all-to-alls over the heads */
	enum gen_dispatcher dispatcher; /* MoE token dispatch (default all-to-all) */
	int moe_overlap; /* --moe-a2a-overlap: a forward's and a backward's layers interleaved, all-to-alls on a stream
	                  */
	double moe_imbalance; /* --moe-imbalance: the busiest rank's token assignments over the balanced share (>= 1;
	                         0: balanced, 1) */
	double moe_capacity;  /* --moe-capacity-factor: an expert keeps at most this times the balanced share, the
	                         rest dropped (0: dropless) */
	long long vstages;    /* model chunks per pipeline rank (interleaved) */
	/* Megatron-Core's uneven split (gen_chunk_layers): the first and last
	   stage's layer counts (0: not given), or the embedding and the loss
	   counted as one layer each of the first and the last model chunk */
	long long first_layers, last_layers;
	int split_embedding, split_loss;
	struct gen_layout layout; /* --pipeline-layout (layout.chunks = 0: none) */
	int sp;                   /* sequence parallelism (with tp) */
	int tp_overlap; /* --tp-comm-overlap: sp's all-gathers and reduce-scatters ring-exchanged beside the GEMMs */
	int zero;       /* ZeRO stage 0-3 over dp */
	int offload;    /* optimizer states live on the host */
	enum gen_sched sched;
	enum gen_recompute recompute;
	enum gen_grad_sync grad_sync;
	long long micro_batch;  /* sequences per micro-batch */
	long long global_batch; /* sequences per step, all data-parallel ranks */
	enum gen_dtype dtype;
	enum gen_fp8_recipe fp8_recipe; /* training with --dtype fp8 */
	long long vocab_div; /* --make-vocab-size-divisible-by (0: the framework's default, gen_vocab_padded) */
};

/* Expert parallelism folded over tensor parallelism (Megatron-Core's MoE parallel folding, expert tensor
   parallelism 1): an expert layer's groups are ep ranks of the tp x dp ranks of a stage, tp of them tensor-parallel
   ranks and ep / tp data-parallel ones, so ep may exceed dp (Qwen3-235B-A22B with TP 2, EP 32 on a data-parallel
   group of 16). Sequence parallel: each rank routes its own seq / tp tokens and runs its experts whole. Taken when
   ep does not divide dp. */
int gen_ep_folded(const struct gen_parallel *p);
/* the layout's ep dim: the data-parallel ranks an expert group spans (ep, or ep / tp folded) */
long long gen_ep_dim(const struct gen_parallel *p);
/* The busiest rank's share of an MoE layer's token assignments over the balanced one: --moe-imbalance (with ep 2
   or more), capped by --moe-capacity-factor (gen.c) */
double gen_moe_load(const struct gen_parallel *p);

struct gen_infer {
	long long batch;                  /* sequences per model replica */
	long long input_len;              /* prompt tokens */
	long long output_len;             /* generated tokens (the first comes from prefill) */
	int paged;                        /* PagedAttention, KV blocks of GEN_PAGE tokens */
	enum gen_engine engine;           /* whose host work each step waits for */
	int enforce_eager;                /* --enforce-eager: vLLM without CUDA graphs (gen_decode_max_keys) */
	enum gen_decode_impl decode_impl; /* --decode-impl */
	int same_prompt;                  /* --same-prompt: the batch is one prompt B times, decoded greedily */
};

#define GEN_PAGE 16
/* runs of layers of one kind (dense or MoE, windowed or not) a model chunk may hold (gen_check) */
#define GEN_RUNS_MAX 256

struct gen_config {
	struct gen_model m;
	struct gen_parallel p;
	enum gen_mode mode;
	struct gen_infer inf;
	long long seq;                /* sequence length of this run (training) */
	enum gen_attn_impl attn_impl; /* default flash2 */
	double dropout;               /* training dropout probability, 0 <= p < 1 (0: none) */
	enum gen_launch launch;       /* --launch */
};

/* Device memory of one rank, bytes per category (the `memory` statement). */
struct gen_memory {
	double params, grads, optimizer, activations, kv, workspace;
};

/* Parameters held by one rank of a stage after tensor, pipeline and expert
   sharding (before ZeRO): those reduced over all data-parallel ranks, and
   the expert weights, reduced over the dp/ep ranks that hold the same
   experts. */
struct gen_params {
	double dense, expert;
};

/* The presets, in table order (NULL past the end). */
const struct gen_model *gen_preset_at(int i);
/* A preset by name, NULL when there is none. */
const struct gen_model *gen_preset(const char *name);
/* A model `gpt` starts from: GPT-3 175B's vocabulary and context, no shape. */
void gen_gpt_base(struct gen_model *m);
/* The vocabulary as the framework pads it, so that the embedding and the LM head's GEMMs have leading dimensions
   a multiple of 16 bytes: Megatron-LM (training) to a multiple of make-vocab-size-divisible-by (128) x tp
   (megatron/training/tokenizer: _vocab_size_with_padding); vLLM (inference) to a multiple of 64
   (vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE), each tp rank an equal slice. */
long long gen_vocab_padded(const struct gen_config *c);

/* The tokens of a sequence one rank holds: seq / cp (training; cp = 1 otherwise). */
long long gen_seq_local(const struct gen_config *c);

/* The ranks of the job: tp x cp x pp x dp. */
long long gen_ranks(const struct gen_config *c);
/* Defaults for everything but the model: one rank, bf16, 1F1B, training. */
void gen_defaults(struct gen_config *c);

/* What `sim gen`'s argument list said besides the config. */
struct gen_args {
	const char *model;   /* MODEL (a preset or "gpt"); points into argv */
	const char *outpath; /* -o FILE; NULL: stdout */
	char cmdline[2048];  /* the arguments without -o FILE, for the trace's first line */
};

/*
 * Parses `sim gen`'s arguments (argv[0] is the command name and is skipped)
 * into a complete, checked config: the preset, the flags over it, the
 * derived defaults, gen_check(). Returns 0, or -1 with the one-line message
 * in why (what `sim gen` prints after "sim gen: ", e.g. "--tp 0: expected
 * a positive integer up to 1048576"). workloads/gen_args.c.
 */
int gen_parse_args(int argc, char **argv, struct gen_config *c, struct gen_args *a, char *why, size_t len);

/* What `sim gen` makes of a flag ("--tp"): 1 it takes a value, 0 it is a switch (--sp), -1 it has no such flag. */
int gen_flag_kind(const char *name);

/* Checks that the config can be laid out. Returns 0, or -1 with one line in
   why naming the flag and what was expected ("--heads 96 is not divisible
   by --tp 7 (each tensor-parallel rank holds heads/tp heads)"). */
int gen_check(const struct gen_config *c, char *why, size_t len);

/* Micro-batches per pipeline in a step: global_batch / (micro_batch * dp). */
long long gen_microbatches(const struct gen_config *c);
/* Transformer layers of one model chunk. A stage holds vstages chunks,
   chunk c of stage K being the model's chunk c x pp + K. Even split:
   layers / (pp x vstages) each. As Megatron-Core splits unevenly
   (megatron/core/transformer/transformer_block.py, get_num_layers_to_build
   and the layer offset): --decoder-first/last-pipeline-num-layers give the
   first and last stage their counts, split evenly over their chunks, and
   the middle stages share the rest evenly; --account-for-embedding/loss-in-
   pipeline-split count the embedding and the loss as a layer each, so every
   chunk holds (layers + 2) / (pp x vstages) slots and the first chunk of
   stage 0 and the last chunk of the last stage one layer fewer each;
   --pipeline-layout names each chunk's count (struct gen_layout). */
long long gen_chunk_layers(const struct gen_config *c, long long stage, long long chunk);
/* Multi-token-prediction modules of one model chunk (training): the layout's
   'm' chunk, else the last chunk of the last stage, as Megatron-Core places
   them (gpt_model.py: mtp_process on the pipeline's last stage); 0 in
   inference, which does not run them. */
long long gen_chunk_mtp(const struct gen_config *c, long long stage, long long chunk);
/* The weights of one MTP module on one rank of stage `stage`: a transformer
   block like the model's last, its projection of 2h to h (eh_proj) and three
   norms, and a copy of the embedding when the stage is not the first
   (Megatron-Core builds one wherever an MTP module runs). */
struct gen_params gen_mtp_params(const struct gen_config *c, long long stage);
/* Parses a --pipeline-layout text into L (gen_layout.c); whether it fits the
   model and --pp is gen_check's. Returns 0, or -1 with the message in why. */
int gen_layout_parse(struct gen_layout *L, const char *text, char *why, size_t len);
/* Global index of the first layer of that chunk (chunks are numbered chunk
   x pp + stage, as Megatron-Core places them). */
long long gen_chunk_first_layer(const struct gen_config *c, long long stage, long long chunk);
/* Layers of all the chunks of one stage. */
long long gen_stage_layers(const struct gen_config *c, long long stage);
/* What layer `layer` (0-based) is: a transformer block (attention and FFN), or one sublayer of a hybrid model's
   pattern (m->hybrid): a Mamba-2 mixer, attention, a dense MLP, a mixture of experts. */
enum gen_layer_type { GEN_LT_BLOCK, GEN_LT_MAMBA, GEN_LT_ATTN, GEN_LT_MLP, GEN_LT_MOE };
enum gen_layer_type gen_layer_type(const struct gen_model *m, long long layer);
/* The layers of each type in the model (indexed by enum gen_layer_type). */
void gen_layer_counts(const struct gen_model *m, long long count[5]);
/* Whether layer `layer` (0-based) has a mixture-of-experts FFN (a transformer block past the dense ones, or a
   hybrid model's 'E'). */
int gen_layer_is_moe(const struct gen_model *m, long long layer);
/* Whether block `layer` attends through the sliding window: every layer with a window but each window_skip-th
   (layers window_skip - 1, 2 window_skip - 1, ... attend to all keys, as Megatron-Core's pattern
   [0 if (i + 1) % window_attn_skip_freq == 0 else 1]). */
int gen_layer_is_windowed(const struct gen_model *m, long long layer);

/* DeepSeek-V4's attention (gen_csa.c): the compression ratio of layer `layer`'s keys (0: the window alone; an
   MTP module is layer m->layers or past it), the keys a query attends to at sequence length s as Megatron-Bridge's
   FLOPs count takes them (the window and the mean of the compressed keys seen), and the weights of one such
   layer's attention (its norms, compressor and indexer with it). */
long long gen_layer_compress(const struct gen_model *m, long long layer);
double gen_csa_keys(const struct gen_model *m, long long ratio, double s);
double gen_csa_attn_params(const struct gen_model *m, long long ratio);
/* the hyper-connections' weights of one sublayer (0 without them); the bytes a token of one such attention keeps
   for the backward (q: a quantized copy's bytes a value, 2 for none); the forward FLOPs of the attention cores of
   one sequence of s tokens over the layers and mtp MTP modules; Megatron-Bridge's count of a token's attention
   (multiply-adds) */
double gen_hc_params(const struct gen_model *m);
double gen_csa_act_token(const struct gen_model *m, long long ratio, double q);
double gen_csa_core_flops(const struct gen_model *m, double s, long long mtp);
double gen_csa_mcore_attn(const struct gen_config *c);
/* Parameters of one rank of pipeline stage `stage` (0 .. pp-1). */
struct gen_params gen_stage_params(const struct gen_config *c, long long stage);
/* The weights of layer `layer` (0-based) on one rank, as gen_stage_params counts them. */
struct gen_params gen_layer_params(const struct gen_config *c, long long layer);
/* Parameters of the whole model (no sharding), and those a token uses. */
double gen_total_params(const struct gen_model *m);
double gen_active_params(const struct gen_model *m);

/*
 * Mixed-precision Adam state of psi parameters sharded over n data-parallel
 * ranks with ZeRO stage `zero` (bytes per rank): 2-byte weights and
 * gradients, 12 bytes of optimizer state (fp32 master weights, momentum and
 * variance: K = 12). Baseline 16 psi; ZeRO-1 4 psi + 12 psi/n; ZeRO-2
 * 2 psi + 14 psi/n; ZeRO-3 16 psi/n. With offload the optimizer state is on
 * the host (0 here). Sets params, grads and optimizer only.
 */
void gen_zero_memory(double psi, long long n, int zero, int offload, struct gen_memory *m);
/* Elements each rank sends per step to reduce psi gradients over n ranks
   (ring): 2 psi (n-1)/n for an all-reduce or ZeRO-1/2's reduce-scatter +
   all-gather, 3 psi (n-1)/n for ZeRO-3 (parameters gathered twice). */
double gen_dp_comm_elems(double psi, long long n, int zero);

/*
 * Activation bytes one transformer block keeps for its backward, per
 * micro-batch per rank, after Korthikanti et al. 2022 ("Reducing Activation
 * Recomputation in Large Transformer Models", Table 2): s b h (34 + 5 a s/h)
 * for a GPT block with naive attention and dropout, without parallelism;
 * (10 + 24/t + 5as/(ht)) with tensor parallelism, all of it /t with
 * sequence parallelism; selective recompute drops the 5as/h term (attention
 * scores); full recompute keeps only the block's input, 2 s b h (/t with
 * sp). Without dropout the two 1-byte hidden masks (2sbh) and the score
 * dropout's mask and output (3as^2b) go: 32 + 2as/h. FlashAttention keeps
 * no scores, only its fp32 log-sum-exp (4asb): 34 + 4a/h with dropout,
 * 32 + 4a/h without. GQA, SwiGLU, MoE and MLA blocks count their own
 * tensors the same way (docs/workloads.md).
 */
double gen_act_layer_bytes(const struct gen_config *c, long long layer, enum gen_recompute rc);

/* Memory of one rank of stage `stage` (training or inference). */
void gen_stage_memory(const struct gen_config *c, long long stage, struct gen_memory *m);
double gen_memory_total(const struct gen_memory *m);

/*
 * Model FLOPs of the step, all ranks, as Megatron-LM counts them (no
 * recompute): 3x the forward's 2 x params x tokens for every weight
 * matrix (LM head included, embedding lookups not) plus attention's
 * QK^T and PV over all s^2 pairs. For GPT (a d = h, ffn = 4h) this is
 * 72 B s l h^2 (1 + s/(6h) + V/(12 l h)). Inference: the forward only,
 * prefill plus each decode step over the keys cached so far.
 */
double gen_model_flops(const struct gen_config *c);
/*
 * The step's model FLOPs as Megatron-LM and Megatron-Bridge count them for
 * their TFLOP/s (num_floating_point_operations: megatron/training/
 * training.py; Megatron-Bridge training/utils/flop_utils.py,
 * transformer_flops), training only: per token 6 x (attention + MLPs + MTP
 * + logits) over layers + mtp (an MTP module counts as a layer of the last
 * layer's kind): attention h (a d + 2 g d) + a d h + a d s (causal: half the
 * s x s scores, QK^T and PV; a windowed layer a d 2 (W - W (W - 1) / (2s))
 * for W < s, over the source's window_attn_skip_freq pattern), with multi-head latent attention q_lora (h +
 * a (d_nope + d_rope) + 1) + kv_lora (h + a (d_nope + d_v) + 1) + h d_rope
 * + a d_v h + s a (d_nope + d_rope + d_v) / 2; a dense MLP h f (x 3 gated,
 * x 2 not), an MoE layer's topk routed and its shared experts of width f_e
 * h f_e (topk + shared) (x 3 / x 2); each MTP module 3h + 2h^2 (norms,
 * eh_proj); logits h V (1 + mtp), V padded as Megatron pads it
 * (gen_vocab_padded); times B s tokens. (gen_model_flops counts the
 * weights a token multiplies with and every s x s attention pair.)
 */
double gen_mcore_flops(const struct gen_config *c);
/* Tokens of the step: global_batch * seq (training), or generated tokens:
   batch * output_len * dp (inference). */
double gen_tokens(const struct gen_config *c);
/* Decode steps in an inference trace: output_len - 1 (prefill makes the
   first token). */
long long gen_decode_steps(const struct gen_config *c);
/* Inference with --pp: the batch runs as this many micro-batches in flight
   (the largest divisor of --batch up to --pp: a pipeline server keeps one per
   stage); 1 without --pp. */
long long gen_infer_microbatches(const struct gen_config *c);
/* The host time, s, that one engine step of `seqs` sequences (prefilling
   and decoding) waits for before its forward starts, as the engine of c
   runs it: 0 for GEN_ENGINE_NONE. */
double gen_engine_host_s(const struct gen_config *c, long long seqs);
const char *gen_engine_name(enum gen_engine e);
/* the impl= of the decode steps' attention (--decode-impl, --paged) */
enum op_attn_impl gen_decode_attn(const struct gen_config *c);
/* The maxkv= of a decode step's attention through a block table (paged, or flash2_decode with --paged) over `batch`
   sequences of up to `skv` keys: the capture's max_seq_len where the engine (--engine vllm) replays the step from a
   CUDA graph, else 0 (the step's own) */
long long gen_decode_max_keys(const struct gen_config *c, long long batch, long long skv);

/*
 * The ops of one engine step of a server (sim serve) on pipeline stage
 * `stage`: `tokens` new tokens of a continuous batch (prefill chunks and
 * decode tokens together) through the stage's embedding (stage 0) and
 * layers (part GEN_STEP_BODY), or its LM head (GEN_STEP_HEAD: the last
 * stage's final norm over the tokens, the logits of the `sampled` rows that
 * produce a token; nothing when sampled is 0), as write_infer's forward
 * writes them. Each op line goes to
 * fn with the times it runs in the step (a run of equal layers is one line).
 * GEN_LINE_ATTN marks an attention op as a template (b=1 sq=tokens
 * skv=tokens): its heads, dimension, dtype and kernel hold, and the caller
 * replaces it with the batch's own attention over each sequence's context.
 * fn returns nonzero to stop. Returns 0, or -1 (out of memory, or fn's stop).
 */
enum { GEN_LINE_OP, GEN_LINE_ATTN };
enum { GEN_STEP_BODY, GEN_STEP_HEAD };
typedef int (*gen_line_fn)(void *ctx, int what, const char *line, long long times);
int gen_serve_step(const struct gen_config *c, long long stage, int part, long long tokens, long long sampled,
                   gen_line_fn fn, void *ctx);

/* Writes the trace; cmdline (may be NULL) goes into the first comment line.
   Returns 0, or -1 when writing failed or memory ran out. */
int gen_write(FILE *f, const struct gen_config *c, const char *cmdline);

const char *gen_dtype_name(enum gen_dtype d);
const char *gen_sched_name(enum gen_sched s);
const char *gen_recompute_name(enum gen_recompute r);
const char *gen_attn_impl_name(enum gen_attn_impl i);

#endif
