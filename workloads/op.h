/*
 * op.h -- one operation of a workload: the vocabulary `sim op` reads and the
 * trace format reuses (a trace line is an op line plus scheduling keys).
 *
 * An op is written as one line: a kind, then key=value arguments in any
 * order, e.g.
 *
 *   gemm m=4096 n=4096 k=4096 dtype=fp16
 *   attn b=8 h=32 hkv=8 sq=2048 skv=2048 d=128 causal=1 dtype=bf16 impl=flash2 dir=bwd
 *   elem op=layernorm n=67108864 cols=4096 dtype=fp16
 *   copy bytes=1GiB src=hbm dst=hbm
 *   conv n=32 c=64 h=56 w=56 k=64 r=3 s=3 stride=1 pad=1 dtype=fp16
 *   conv n=64 c=256 h=14 w=14 k=256 r=3 s=3 pad=1 dtype=bf16 dir=wgrad
 *   gemm m=8192 n=8192 k=8192 dtype=bf16 units=116
 *   gemm m=8192 n=8192 k=8192 dtype=bf16 margin=16
 *   embedding tokens=16384 dim=12288 vocab=50257 dtype=fp16
 *   gemm m=1 n=28672 k=4096 dtype=bf16 trans=nt launch=graph
 *
 * Sizes are positive integers (no units); `bytes=` takes a quantity with a
 * unit (units_parse, UNIT_BYTES). workloads/ depends only on arch/.
 */
#ifndef SIM_OP_H
#define SIM_OP_H

#include <stddef.h>

enum op_kind { OP_GEMM, OP_ATTN, OP_ELEM, OP_COPY, OP_CONV, OP_EMBED, OP_KIND_COUNT };

enum op_trans { TR_NN, TR_NT, TR_TN, TR_TT };
enum op_epilogue { EPI_NONE, EPI_BIAS, EPI_GELU, EPI_RELU, EPI_BIAS_GELU, EPI_BIAS_RELU, EPI_COUNT };
enum op_attn_impl {
	ATTN_FLASH2,
	ATTN_FLASH3,
	ATTN_NAIVE,
	ATTN_DECODE,
	ATTN_PAGED,
	ATTN_FLASH1,
	ATTN_FLASH2_DECODE, /* FlashAttention-2's decode path (flash_api.cpp), as torch SDPA's flash backend runs it */
	ATTN_CUDNN, /* cuDNN's fused flash attention (torch SDPA's cuDNN backend, Transformer Engine's FusedAttention)
	             */
	ATTN_MMHA,  /* TensorRT-LLM's generation attention with multi_block_mode off: masked MHA or XQA, keys not split
	             */
	ATTN_IMPL_COUNT
};
enum op_dir {
	DIR_FWD,
	DIR_BWD,   /* attn: the backward kernels; conv: dgrad and wgrad, as aten::convolution_backward runs them */
	DIR_DGRAD, /* conv: the input's gradient alone */
	DIR_WGRAD  /* conv: the filter's gradient alone */
};
enum op_elem {
	EL_ADD,    /* c = a + b */
	EL_MUL,    /* c = a * b */
	EL_GELU,   /* tanh approximation */
	EL_SILU,   /* x * sigmoid(x) */
	EL_SWIGLU, /* silu(a) * b: reads 2n, writes n */
	EL_RELU,
	EL_LAYERNORM,      /* row-wise over `cols` */
	EL_RMSNORM,        /* row-wise over `cols` */
	EL_SOFTMAX,        /* row-wise over `cols` */
	EL_ROPE,           /* rotary embedding on n elements */
	EL_CAST,           /* dtype -> to */
	EL_ADAM,           /* optimizer step on n parameters (fp32 master, m, v) */
	EL_READ,           /* reduction of one stream (STREAM "read") */
	EL_TRIAD,          /* a = b + s*c (STREAM "triad") */
	EL_COPY,           /* b = a inside device memory, by a kernel */
	EL_CAST_TRANSPOSE, /* dtype -> to, written twice: row-wise and transposed (fp8 GEMM operands) */
	EL_PERMUTE,        /* b = a with its 4 dims permuted (a transposed tensor made contiguous), not vectorized */
	EL_FILL,           /* a = constant: n elements written, none read (zero_, fill_, a memset of n int8) */
	EL_LAYERNORM_BWD,  /* row-wise over `cols`: dx from x and dy, with the weight gradient's partial sums */
	EL_RMSNORM_BWD,    /* row-wise over `cols`: as layernorm_bwd, without the mean */
	EL_SOFTMAX_BWD,    /* row-wise over `cols`: dx from the output y and dy */
	EL_COUNT
};
enum op_place { PLACE_HBM, PLACE_HOST };
enum op_launch { LAUNCH_EAGER, LAUNCH_GRAPH };

struct op {
	enum op_kind kind;
	int dtype;     /* enum arch_dtype of the inputs (-1 for copy, which has none) */
	int acc_dtype; /* accumulate / output type (gemm, conv: acc=), -1 = default;
	                  op_parse fills it in for gemm and conv, -1 for other kinds */

	/* gemm (and conv/embedding lowered to it): C[m,n] = A[m,k] B[k,n], batch times */
	long long m, n, k, batch;
	enum op_trans trans;
	enum op_epilogue epilogue;

	/* attn: b sequences, h query heads, hkv key/value heads (h % hkv == 0) */
	long long b, h, hkv, sq, skv, d;
	int causal;
	enum op_attn_impl impl;
	enum op_dir dir;
	long long page;   /* paged: tokens per KV page (default 16) */
	long long maxkv;  /* paged, flash2_decode: the longest context the kernel is launched for (vLLM's
	                     max_seq_len, FlashAttention's block table width x page; under CUDA graphs the
	                     capture's): paged's V1 logits and V1 or V2, flash2_decode's key splits; 0: skv */
	long long window; /* causal sliding window: each query sees its `window` latest keys, itself among them
	                     (Mistral, Gemma, GPT-OSS; FlashAttention's window_size=(window-1, 0)); 0: every key */
	double dropout; /* flash1/flash2 in training: dropout probability on the scores, inside the kernel (0: none) */

	/* elem: n elements; row ops reduce over cols (default: n, one row) */
	enum op_elem elem;
	long long elems, cols;
	int to_dtype; /* cast target, -1 = default (fp32); op_parse fills it in for cast */
	int strided;  /* a pointwise op whose operands are not contiguous or are broadcast (strided=1): PyTorch's
	                 element-by-element kernel with index arithmetic, not the vectorized one (a permute is one) */
	int split;    /* a norm's backward whose weight gradient is a kernel of its own that reads x and dy again
	                 (split=1: PyTorch's GammaBetaBackward), not partial sums of the input gradient's pass
	                 (Transformer Engine's and Apex's fused kernels) */
	int eager;    /* a softmax or its backward as PyTorch's own kernels run it (eager=1: aten's SoftMax.cu, which
	                 reads a row again for each of its passes where the row does not fit shared memory), not
	                 Transformer Engine's or Apex's fused one */

	/* copy */
	double bytes;
	enum op_place src, dst;

	/* conv (implicit GEMM, keys n c h w k r s stride pad): batch n (in `batch`),
	   channels c -> k, image h x w, filter r x s; embedding: tokens, dim, vocab */
	long long cin, cout, ih, iw, r, s, stride, pad;
	long long tokens, dim, vocab;

	/* inputs resident in L2 when they fit (produced just before): warm=1 */
	int warm;

	/* gemm, conv: the units (SMs, CUs) the kernel runs on. units=N: N of them, the kernel chosen for N (cuBLASLt's
	   SM count target); margin=N: all but N, chosen for them (what Transformer Engine's comm-overlap GEMMs set,
	   its set_sm_margin); busy=N: N held by a kernel the library does not know of (an NCCL kernel on another
	   stream), the kernel chosen for all runs on the rest. 0 when not given; at most one of the three. Checked
	   against the chip's units when predicted. */
	long long units, margin, busy;

	/* gemm: the kernel's tile of C (tile=MxN), as a library that runs one fixed kernel picks it (PyTorch's grouped
	   GEMM, GroupMM.cu); 0: the model's kernel search over every tile */
	int tile_m, tile_n;

	/* gemm: K elements between promotions of an fp8 kernel's partial sums into fp32 registers on the vector lanes
	   (promote=K), as CUTLASS's FP8 main loop without fast accumulation does it (fp8_accumulation.hpp: every
	   mma_promotion_interval 4 MMAs of K 32, 128 of K, after waiting for the MMAs in flight); 0: none, the MMAs
	   accumulate alone (fast accumulation, or a library that hides the promotion behind other MMAs) */
	long long promote;

	/* gemm: the batch's groups run as a pointer-array grouped GEMM (grouped=1), as PyTorch's torch._grouped_mm and
	   torch._scaled_grouped_mm run them on Hopper and Blackwell (GroupMM.cu, ScaledGroupMM.cu: a one-block kernel,
	   prepare_grouped_gemm_data<<<1, groups>>>, first writes each group's pointers, strides and problem size, then
	   CUTLASS's grouped kernel, GemmUniversalMode::kGrouped, reads them): two kernels; 0: one batched kernel */
	int grouped;

	/* every kind: how the kernels are launched (launch=eager|graph): one by one by the host (eager, the default),
	   or as nodes of a CUDA graph, which pay model.graph_launch_gap before each kernel instead of
	   model.launch_gap */
	enum op_launch launch;
};
#define OP_TILE_MAX 1024

/*
 * Parses one op line. Keys in `extra` (a NULL-terminated list, may be NULL)
 * are accepted and ignored: the trace parser owns them (stream=, after=).
 * Returns 0, or -1 with a one-line reason in why ("gemm: missing k=",
 * "gemm: m=0 must be a positive integer", "unknown op kind 'gem' (expected
 * gemm|attn|elem|copy|conv|embedding)"). On refusal *op is left untouched.
 */
int op_parse(const char *line, const char *const *extra, struct op *op, char *why, size_t whylen);

/*
 * The canonical text of an op: kind and every argument that affects timing,
 * in a fixed order with defaults filled in. Equal ops give equal text; it is
 * the memoization key and what reports print. Returns the length written.
 * (snprintf-like: the length of the whole text, so a result >= len means it
 * was cut; OP_TEXT_MAX always suffices.)
 */
#define OP_TEXT_MAX 512
size_t op_format(const struct op *op, char *buf, size_t len);

/* Useful work: FLOPs as the usual benchmarks count them (2mnk for a GEMM,
   4 b h sq skv d for attention forward, halved when causal, x2.5 backward).
   Causal counts the unmasked (query, key) pairs exactly, the queries aligned
   to the end of the keys: sq (sq + 1) / 2 when sq == skv. conv: 2 M N K of
   its implicit GEMM (M = n p q, N = k, K = c r s), the same for dgrad and
   wgrad, twice that for dir=bwd (both); copy, embedding: 0. */
double op_flops(const struct op *op);

const char *op_kind_name(enum op_kind k);
const char *op_elem_name(enum op_elem e);
/* a row op (layernorm, rmsnorm, softmax and their backward): one CTA a row of `cols` */
int op_elem_is_row(enum op_elem e);
const char *op_attn_impl_name(enum op_attn_impl i);
/* 1 for the inference decode kernels (a few query rows a sequence against its KV cache: sq <= 16, no dir=bwd) */
int op_attn_impl_decodes(enum op_attn_impl i);

#endif
