/*
 * gen_trace_int.h -- private to the trace writer of `sim gen` (workloads/gen_trace.c, gen_emit.c, gen_train.c,
 * gen_infer.c) and its model blocks (workloads/gen_blocks.c, gen_steps.c): a block is the list of steps of one kind
 * of layer (embedding, transformer layer, MoE layer, Mamba mixer, LM head ...) in forward order; gen_blocks.c builds
 * them, gen_steps.c writes each step's forward and backward ops, gen_emit.c a block's defs, gen_train.c and
 * gen_infer.c lay the blocks out into a training step or an inference batch, gen_trace.c the whole trace.
 */
#ifndef SIM_GEN_TRACE_INT_H
#define SIM_GEN_TRACE_INT_H

#include "gen.h"

#include <stdio.h>

#define MAX_STEPS 64

enum step_kind {
	ST_NORM,      /* elem norm, same backward */
	ST_ELEM,      /* elem op, same backward */
	ST_GEMM,      /* forward gemm; backward dgrad + wgrad (and the GELU epilogue) */
	ST_ATTN,      /* attn dir=fwd; backward dir=bwd */
	ST_TP_F,      /* Megatron f: identity (sp: all-gather) fwd, all-reduce (sp: reduce-scatter) bwd */
	ST_TP_G,      /* Megatron g: all-reduce (sp: reduce-scatter) fwd, identity (sp: all-gather) bwd */
	ST_TP_AR_FWD, /* all-reduce over tp in the forward only (loss statistics) */
	ST_TP_AG_FWD, /* all-gather over tp in the forward only (vLLM's logits, gathered for its sampler) */
	ST_A2A,       /* all-to-all over ep, both ways (route: the flex dispatcher's, deduplicated) */
	ST_EP_AG,     /* all-gather over ep; backward reduce-scatters the gradient (grad) or nothing */
	ST_EP_RS,     /* reduce-scatter over ep; backward all-gathers the gradient */
	ST_EMB,       /* embedding lookup; backward: scatter-add into the table */
	ST_CONV1D,    /* Mamba's causal depthwise convolution and SiLU (n elements); backward recomputes it */
	ST_SSD,       /* Mamba-2's chunked scan (mamba_ssm's kernels, fwd and bwd as they run: ssd_text) */
	ST_GNORM,     /* Mamba's gated RMSNorm over n elements (norm of y silu(z)) */
};

/* A GEMM of an fp8 training step (--dtype fp8 --fp8-recipe R), as Megatron-Core
   runs its Transformer Engine linear layers: the layers of the transformer
   blocks compute in fp8, the router and the LM head in bf16 (Megatron's own
   modules, outside TE's fp8 autocast). An fp8 GEMM's input is quantized by
   the kernel that produced it when that is TE's norm (the norm kernel writes
   fp8, or with current scaling bf16 and its amax) and by a kernel of its own
   otherwise; the backward quantizes the output's gradient. */
enum fp8_in {
	FP8_NONE, /* bf16 GEMM */
	FP8_NORM, /* input from a TE norm (LayerNormLinear) */
	FP8_SEP,  /* input from attention, the activation, the dispatcher: a quantize kernel */
};

struct step {
	enum step_kind kind;
	const char *op;                  /* elem: op name */
	const char *dtype;               /* elem: dtype (NULL: activations') */
	const char *extra;               /* elem: keys after dtype= (" to=fp32", " eager=1"; NULL: none) */
	long long m, n, k, batch;        /* gemm (n also elem's elements, k its cols) */
	int gelu;                        /* gemm: GELU epilogue */
	enum fp8_in fp8;                 /* gemm: how an fp8 training step quantizes its input */
	long long bytes;                 /* collectives */
	long long b, h, hkv, sq, skv, d; /* attn */
	int causal, decode;
	long long drop;   /* attn: scores the dropout passes over (naive attention with dropout; 0: none) */
	long long window; /* attn: the sliding window (0: none) */
	int flash_drop;   /* attn: dropout inside the FlashAttention kernel (training with dropout) */
	int ring;         /* ST_TP_F / ST_TP_G with --tp-comm-overlap: ring steps beside the GEMM next to it */
	int route;        /* ST_A2A: the model's routing on the line (the flex dispatcher) */
	int grad;         /* ST_EP_AG: what it gathers has a gradient */
	long long chunks, heads, groups, p, state, tokens; /* ST_SSD: chunks, this rank's heads and groups, head dim,
	                                                      state dim, tokens */
};

/* _SWA: the same layer attending through the sliding window (gen_layer_is_windowed); BK_MAMBA .. BK_EXPERTS: the
   layers of a hybrid model (gen_layer_type), each a norm, one sublayer and its residual */
enum block_kind {
	BK_EMB,
	BK_DENSE,
	BK_MOE,
	BK_HEAD,
	BK_MTP,
	BK_DENSE_SWA,
	BK_MOE_SWA,
	BK_MAMBA,
	BK_ATTN,
	BK_MLP,
	BK_EXPERTS,
	BK_MOE_CSA, /* DeepSeek-V4's MoE layers whose keys compress to CSA's and to HCA's ratio (gen_layer_compress);
	               BK_MOE_SWA its layers of the window alone */
	BK_MOE_HCA,
	BK_COUNT
};

struct block {
	struct step st[MAX_STEPS];
	int n;
	struct gen_params par; /* weights of this block on one rank */
};

/* tokens one rank works on: b sequences of sq new tokens attending to skv */
struct tok {
	long long b, sq, skv;
	int decode;
	long long rows; /* inference head: the rows that sample a token (0: b, one per sequence) */
};

struct em {
	const struct gen_config *c;
	const struct gen_model *m;
	FILE *f;
	int depth;
	int err;
	long long t, al, kvl, h, vl;
	const char *dt, *gdt; /* activation and GEMM dtype */
	long long nd, ne;     /* data-parallel group sizes: dense weights, experts */
	const char *cd, *ce;  /* their communicators */
	const char *cx;       /* an MoE layer's all-to-all communicator: ep, or ept folded over tp (gen_ep_folded) */
	int sync;             /* data-parallel gradient collectives exist */
	int swa;              /* the block being built attends through the sliding window */
	int graph;            /* the device ops written now are a CUDA graph's: they get launch=graph */
	long long csa;        /* DeepSeek-V4: the ratio its keys compress by (0: the window alone) */
	long long
	    distinct; /* the distinct tokens of the block being built (--same-prompt: its positions); 0: every one */
	/* --moe-a2a-overlap: the block kinds cut at their all-to-alls (gen_trace.c), and each one's dispatch */
	int cut[BK_COUNT];
	struct step a2a[BK_COUNT];
};

/* A list of op lines; the first may get an after=, the last an id=. */
struct lines {
	char v[16 * MAX_STEPS][256]; /* a block's steps; with --cp 16 its attention takes 400 (gen_check's bound) */
	int n;
	const char *wait; /* a label the next op added waits for (after=), or NULL */
};

/* gen_steps.c: adds a line to L (it takes L->wait as an after=, then clears it); appends to the last one */
void gt_add(struct lines *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gt_append(struct lines *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the forward ops of a block's steps, and their backward ops (last step first); one step's forward; an attention
   step as the op of direction dir; an MoE layer's all-to-all (the flex dispatcher's with its routing) */
void gt_steps_fwd(struct em *e, struct lines *L, const struct block *B);
void gt_steps_bwd(struct em *e, struct lines *L, const struct block *B);
void gt_step_fwd(struct em *e, struct lines *L, const struct step *s);
void gt_attn_text(struct em *e, struct lines *L, const struct step *s, const char *dir);
void gt_a2a_text(struct em *e, struct lines *L, const struct step *s);

/* the kind of block layer `layer` is (gen_blocks.c) */
enum block_kind gt_layer_kind(const struct gen_model *m, long long layer);
/* The steps of one block of that kind for k's tokens into B, and its weights on one rank (gen_blocks.c). */
void gt_build_block(struct em *e, enum block_kind kind, const struct tok *k, struct block *B);

/* ---- the trace's text (gen_emit.c) ---- */

/* the block kinds' names in the trace (emb, dense, moe, ...), by enum block_kind */
extern const char *const gt_block_names[BK_COUNT];
/* a line at the current indentation; a block opened by a line ending in '{' and closed by '}'; L's lines, the
   first waiting for after= and the last labelled id= (either NULL) */
void gt_out(struct em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gt_open_block(struct em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gt_close_block(struct em *e);
void gt_flush_lines(struct em *e, const struct lines *L, const char *after, const char *id);
/* the shortest decimal text that reads back to x; x rounded up to an integer */
void gt_fmt_num(char *buf, size_t len, double x);
long long gt_ceil_ll(double x);
/* a block's defs: prefix+name_fwd, _bwd and _bwd_sync (the header comment of gen_trace.c) */
void gt_emit_block_defs(struct em *e, const char *prefix, enum block_kind kind, const struct block *B);
/* --moe-a2a-overlap: the indices of a block's dispatch and combine all-to-alls (0 when it has not both), and its
   defs cut at them */
int gt_a2a_cut(const struct block *B, int *d, int *c);
void gt_emit_moe_segments(struct em *e, const char *nm, const struct block *B);

/* ---- training (gen_train.c) ---- */

/* the layers of one chunk as runs of one kind (dense, MoE, each windowed or not); gen_check bounds the runs
   of a chunk (GEN_RUNS_MAX) */
struct runs {
	enum block_kind kind[GEN_RUNS_MAX];
	long long n[GEN_RUNS_MAX];
	int count;
};

typedef void (*run_fn)(struct em *e, enum block_kind kind, long long n, const void *ctx);
/* the layers of a chunk of a stage as runs; runs r written through one (reversed for a backward), a periodic
   stretch of them as one repeat; as calls of prefix+kind+sfx */
void gt_chunk_runs(const struct gen_config *c, long long stage, long long chunk, struct runs *r);
void gt_emit_runs_of(struct em *e, const struct runs *r, int reverse, run_fn one, const void *ctx);
void gt_call_runs(struct em *e, const struct runs *r, int reverse, const char *prefix, const char *sfx);
/* a stage's memory line; whether the trace has blocks of a kind */
void gt_memory_line(struct em *e, long long stage);
int gt_kind_used(const struct em *e, int kind);
/* the whole training step (0, or -1 with e->err) */
int gt_write_train(struct em *e);

/* ---- inference (gen_infer.c) ---- */

/* the prefill and decode steps of one request batch (0, or -1 with e->err) */
int gt_write_infer(struct em *e);

#endif
