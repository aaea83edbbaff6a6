/*
 * kineto_ops.c -- what a GPU item of a Kineto trace is, as an op of the
 * simtrace vocabulary: the kernel's family from its name, the op from the
 * CPU op that launched it and record_shapes' "Input Dims" / "Input type" /
 * "Concrete Inputs", collectives from the args NCCL's profiling records.
 * Every line made here is checked with op_parse before it is used; a shape
 * that cannot be read makes no op (the kernel keeps its measured time).
 * docs/import.md has the tables in words.
 */
#include "import_int.h"
#include "op.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *imp_family_name(enum imp_family f)
{
	static const char *const names[IF_COUNT] = {"gemm", "attention", "elementwise", "memcpy", "nccl", "other"};
	return f >= 0 && f < IF_COUNT ? names[f] : "?";
}

/* case-insensitive strstr */
static int has(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (; *s; s++)
		if (!strncasecmp(s, w, n))
			return 1;
	return 0;
}

enum imp_family kin_family(const char *cat, const char *k)
{
	if (!strcmp(cat, "gpu_memcpy") || !strcmp(cat, "gpu_memset") || !strcmp(cat, "Memcpy") ||
	    !strcmp(cat, "Memset"))
		return IF_MEMCPY;
	if (has(k, "nccl") || has(k, "rccl"))
		return IF_NCCL;
	if (has(k, "flash") || has(k, "fmha") || has(k, "sdpa") || has(k, "attention"))
		return IF_ATTN;
	if (has(k, "prepare_grouped_gemm_data")) /* the grouped GEMM's argument setup (GroupMM.cu), one CTA */
		return IF_OTHER;
	if (has(k, "gemm") || !strncmp(k, "Cijk_", 5) || has(k, "nvjet") || has(k, "xmma") || has(k, "cublas") ||
	    has(k, "cutlass") || has(k, "gemv"))
		return IF_GEMM;
	if (has(k, "at::native") || has(k, "elementwise") || has(k, "reduce") || has(k, "cub::") || has(k, "fbgemm") ||
	    has(k, "triton") || has(k, "multi_tensor") || has(k, "softmax") || has(k, "norm"))
		return IF_ELEM;
	return IF_OTHER;
}

/* ---- recorded shapes ---- */

#define MAXD 8

/* The dims one tensor's shape `a` lists: their count, or -1 when it is not a list of at most MAXD integers up to
   2^40, each positive (0 too where zero_ok: an empty tensor). */
static int dims_of(json_t *a, long long *d, int zero_ok)
{
	if (!json_is_array(a) || json_array_size(a) > MAXD)
		return -1;
	int n = (int)json_array_size(a);
	for (int k = 0; k < n; k++) {
		json_t *v = json_array_get(a, (size_t)k);
		if (!json_is_integer(v) || json_integer_value(v) < !zero_ok || json_integer_value(v) > (1LL << 40))
			return -1;
		d[k] = json_integer_value(v);
	}
	return n;
}

/* Dims of input i: the count (0 for a scalar or a list), or -1 when absent
   or not positive integers. */
static int dims(json_t *args, int i, long long *d)
{
	return dims_of(json_array_get(json_object_get(args, "Input Dims"), (size_t)i), d, 0);
}

/* Whether input i (n dims) is the transpose of a row-major matrix in its last two dims, as its "Input Strides"
   record it (PyTorch's profiler with record_shapes): the second-to-last stride 1 and the last not (a transposed
   view that cuBLAS reads column-major, whose leading dimension is then the row count). 0 when not recorded, when
   both strides are 1 (a dim of size 1) or when the last stride is 1. */
static int transposed(json_t *args, int i, int n)
{
	json_t *a = json_array_get(json_object_get(args, "Input Strides"), (size_t)i);
	if (n < 2 || !json_is_array(a) || (int)json_array_size(a) != n)
		return 0;
	json_t *s2 = json_array_get(a, (size_t)n - 2), *s1 = json_array_get(a, (size_t)n - 1);
	return json_is_integer(s2) && json_is_integer(s1) && json_integer_value(s2) == 1 && json_integer_value(s1) != 1;
}

static long long prod(const long long *d, int n)
{
	long long p = 1;
	for (int k = 0; k < n; k++) {
		if (p > (1LL << 50) / d[k])
			return -1;
		p *= d[k];
	}
	return p;
}

/* A GEMM's trans= by whether A and B are transposed (nn, the default, unwritten) */
static const char *const trans_key[2][2] = {{"", " trans=nt"}, {" trans=tn", " trans=tt"}};

static long long cdiv_ll(long long a, long long b)
{
	return (a + b - 1) / b;
}

static long long numel(json_t *args, int i)
{
	long long d[MAXD];
	int n = dims(args, i, d);
	return n <= 0 ? -1 : prod(d, n);
}

/* PyTorch's dtypes as "Input type" names them: the simtrace dtype and its bytes */
static const struct {
	const char *torch, *dt;
	int bytes;
} dtypes[] = {
    {"float", "fp32", 4},
    {"c10::BFloat16", "bf16", 2},
    {"c10::Half", "fp16", 2},
    {"double", "fp64", 8},
    {"c10::Float8_e4m3fn", "fp8", 1},
    {"c10::Float8_e5m2", "fp8", 1},
    {"c10::Float8_e4m3fnuz", "fp8", 1},
    {"c10::Float8_e5m2fnuz", "fp8", 1},
};

/* Input i's entry of dtypes, or -1. */
static int dtype_index(json_t *args, int i)
{
	const char *t = json_string_value(json_array_get(json_object_get(args, "Input type"), (size_t)i));
	for (int k = 0; t && k < (int)(sizeof dtypes / sizeof dtypes[0]); k++)
		if (!strcmp(t, dtypes[k].torch))
			return k;
	return -1;
}

/* The simtrace dtype of input i, or NULL. */
static const char *dtype(json_t *args, int i)
{
	int k = dtype_index(args, i);
	return k >= 0 ? dtypes[k].dt : NULL;
}

/* "True"/"1" -> 1, "False"/"0" -> 0, else -1 (not recorded). */
static int concrete_bool(json_t *args, int i)
{
	const char *v = json_string_value(json_array_get(json_object_get(args, "Concrete Inputs"), (size_t)i));
	if (!v)
		return -1;
	if (!strcmp(v, "True") || !strcmp(v, "1"))
		return 1;
	if (!strcmp(v, "False") || !strcmp(v, "0"))
		return 0;
	return -1;
}

static int checked(char *buf, size_t len, int n)
{
	if (n <= 0 || (size_t)n >= len)
		return 0;
	struct op op;
	char why[256];
	return op_parse(buf, NULL, &op, why, sizeof why) == 0;
}

/* ---- GEMM ---- */

struct gemm_form {
	const char *op;
	int a, b;   /* inputs A and B */
	int bias;   /* input of a bias, -1 none */
	int weight; /* B is a weight [N, K] (linear) */
};

static const struct gemm_form gemms[] = {
    {"aten::mm", 0, 1, -1, 0},    {"aten::addmm", 1, 2, 0, 0},       {"aten::_addmm_activation", 1, 2, 0, 0},
    {"aten::bmm", 0, 1, -1, 0},   {"aten::baddbmm", 1, 2, -1, 0},    {"aten::matmul", 0, 1, -1, 0},
    {"aten::linear", 0, 1, 2, 1}, {"aten::_scaled_mm", 0, 1, -1, 0},
};

/* fp32 operands reach the tensor cores only as TF32 (PyTorch's allow_tf32, or torch.set_float32_matmul_precision
   "high"): the kernel's name says so, cuBLAS's ("sm80_xmma_gemm_f32f32_tf32f32_...") or CUTLASS's tensor-op ones
   ("cutlass_80_tensorop_s1688gemm_...", s1688: single precision on the m16n8k8 TF32 instruction); an FP32 SIMT
   kernel ("ampere_sgemm_...") names neither */
static int tf32_kernel(const char *kernel)
{
	return kernel && (strstr(kernel, "tf32") || strstr(kernel, "tensorop"));
}

static int gemm_op(const struct gemm_form *f, json_t *args, const char *kernel, char *buf, size_t len)
{
	long long A[MAXD], B[MAXD], C[MAXD];
	int na = dims(args, f->a, A), nb = dims(args, f->b, B);
	const char *dt = dtype(args, f->a);
	if (na < 2 || nb < 2 || !dt)
		return 0;
	if (!strcmp(dt, "fp32") && tf32_kernel(kernel))
		dt = "tf32";
	long long m, n, k = A[na - 1], batch = 1;
	if (f->weight) { /* linear: W [N, K] */
		if (nb != 2 || B[1] != k)
			return 0;
		n = B[0];
		m = prod(A, na - 1);
	} else if (nb == 2) { /* [..., M, K] x [K, N]: the leading dims fold into M */
		if (B[0] != k)
			return 0;
		n = B[1];
		m = prod(A, na - 1);
	} else { /* batched: [..., M, K] x [..., K, N] */
		if (na != nb || B[nb - 2] != k)
			return 0;
		n = B[nb - 1];
		m = A[na - 2];
		batch = prod(A, na - 2);
	}
	if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
		return 0;
	/* the layout (trans=): A [m, k] as stored, or transposed ([k, m] row-major: a weight gradient's dY^T) when
	   its strides say so and it is one matrix or a batch of them (leading dims folded into M need rows of
	   contiguous K); B [k, n], or [n, k] row-major: a linear's weight, or a transposed view */
	int ta = (na == 2 || nb > 2) && transposed(args, f->a, na);
	int tb = f->weight ? !transposed(args, f->b, nb) : transposed(args, f->b, nb);
	int bias = f->bias >= 0 && dims(args, f->bias, C) >= 1;
	int w;
	if (batch > 1)
		w = snprintf(buf, len, "gemm m=%lld n=%lld k=%lld batch=%lld dtype=%s%s%s", m, n, k, batch, dt,
		             trans_key[ta][tb], bias ? " epilogue=bias" : "");
	else
		w = snprintf(buf, len, "gemm m=%lld n=%lld k=%lld dtype=%s%s%s", m, n, k, dt, trans_key[ta][tb],
		             bias ? " epilogue=bias" : "");
	return checked(buf, len, w);
}

/* ---- grouped GEMM ---- */

/* torch._scaled_grouped_mm's kernel on Hopper (ScaledGroupMM.cu, dispatch_fp8_grouped_gemm_on_tile_size), from a
   group's M, N and K and its use_fast_accum (input 8; False when not recorded, its default): ping-pong 64x128 when
   M or N is at most 128; when two of M, N and K are at least 2048, 256x128 with fast accumulation and 128x128
   without; else 128x256 (K 64). Without fast accumulation the partial sums are promoted every 128 of K (CUTLASS's
   mma_promotion_interval 4 x K 32): promote=128, except in the 128x256 kernel, whose two sets of accumulators
   (2 x 128 fp32 a thread) spill out of the registers, which the model does not time: that one is left to the
   kernel search. */
static const char *scaled_tile(json_t *args, long long m, long long n, long long k)
{
	int fast = concrete_bool(args, 8) == 1;
	int large = (m >= 2048 && k >= 2048) || (m >= 2048 && n >= 2048) || (k >= 2048 && n >= 2048);
	if (m <= 128 || n <= 128)
		return fast ? " tile=64x128" : " tile=64x128 promote=128";
	if (large)
		return fast ? " tile=256x128" : " tile=128x128 promote=128";
	return fast ? " tile=128x256" : "";
}

/* aten::_grouped_mm (and _scaled_grouped_mm, fp8): G GEMMs in one kernel, the groups' boundaries in `offs`
   (input 2; 4 for the scaled one), whose values the profiler does not record: the groups are taken as equal (what
   balanced routing gives), `gemm ... batch=G` of the mean size. The forms (GroupMM.cu): A [M, K] x B [G, K, N],
   groups along M (the MoE layer's forward and input gradient); A [M, K] x B [K, N], groups along K (the weight
   gradient: G outputs [M, N]); A [G, M, K] x B [K, N], groups along N; A [G, M, K] x B [G, K, N]. PyTorch runs one
   CUTLASS kernel of a fixed tile: on Hopper (its kernel's name says sm9x) 64x128 when a group's M or N is at most
   128, else 128x256; on Blackwell (sm10x) 64x128 (aten/src/ATen/native/cuda/GroupMM.cu,
   dispatch_bf16_grouped_kernel_on_tile_size), written as tile=. The fp8 one on Hopper
   (ScaledGroupMM.cu, dispatch_fp8_grouped_gemm_on_tile_size; scaled_tile) has tiles of its own and, without
   use_fast_accum, promotes its partial sums every 128 of K (promote=128). Both launch a one-block setup kernel
   (prepare_grouped_gemm_data) before the grouped one: grouped=1 where the kernel's name says which of them ran. */
static int grouped_op(json_t *args, int offs, const char *kernel, char *buf, size_t len)
{
	long long A[MAXD], B[MAXD], O[MAXD];
	int na = dims(args, 0, A), nb = dims(args, 1, B), no = dims(args, offs, O);
	const char *dt = dtype(args, 0);
	if (na < 2 || na > 3 || nb < 2 || nb > 3 || !dt)
		return 0;
	long long g, m, n, k;
	if (na == 2 && nb == 3) /* groups along M */
		g = B[0], m = cdiv_ll(A[0], g), k = A[1], n = B[2];
	else if (na == 2 && nb == 2) /* groups along K */
		g = no == 1 ? O[0] : 0, m = A[0], k = g > 0 ? cdiv_ll(A[1], g) : 0, n = B[1];
	else if (na == 3 && nb == 2) /* groups along N */
		g = A[0], m = A[1], k = A[2], n = cdiv_ll(B[1], g);
	else /* a batch */
		g = A[0], m = A[1], k = A[2], n = B[2];
	/* the inner dimensions agree, and so do both operands' group counts where both have them */
	if (g <= 0 || m <= 0 || n <= 0 || k <= 0 || B[nb - 2] != A[na - 1] || (na == 3 && nb == 3 && B[0] != A[0]))
		return 0;
	int ta = transposed(args, 0, na), tb = transposed(args, 1, nb);
	int hopper = kernel && (strstr(kernel, "sm9x") || strstr(kernel, "Sm90"));
	int blackwell = kernel && (strstr(kernel, "sm10x") || strstr(kernel, "Sm100"));
	const char *tile = "";
	if (!strcmp(dt, "fp8"))
		tile = hopper ? scaled_tile(args, m, n, k) : "";
	else if (hopper)
		tile = m <= 128 || n <= 128 ? " tile=64x128" : " tile=128x256";
	else if (blackwell)
		tile = " tile=64x128";
	/* CUTLASS's pointer-array kernels (Hopper, and bf16 on Blackwell) behind their setup kernel: grouped=1 */
	const char *ptrs = (hopper || (blackwell && strcmp(dt, "fp8"))) ? " grouped=1" : "";
	int w = snprintf(buf, len, "gemm m=%lld n=%lld k=%lld batch=%lld dtype=%s%s%s%s", m, n, k, g, dt,
	                 trans_key[ta][tb], tile, ptrs);
	return checked(buf, len, w);
}

/* ---- attention ---- */

struct attn_form {
	const char *op;
	int q, k;   /* inputs query and key */
	int causal; /* input is_causal (custom_mask_type for the efficient kernels) */
	int bshd;   /* q is [b, s, h, d] (else [b, h, s, d]) */
	int bwd;
};

static const struct attn_form attns[] = {
    {"aten::_scaled_dot_product_flash_attention", 0, 1, 4, 0, 0},
    {"aten::_scaled_dot_product_flash_attention_backward", 1, 2, 11, 0, 1},
    {"aten::_scaled_dot_product_efficient_attention", 0, 1, 6, 0, 0},
    {"aten::_scaled_dot_product_efficient_attention_backward", 1, 2, 11, 0, 1},
    {"aten::_scaled_dot_product_cudnn_attention", 0, 1, 6, 0, 0},
    {"aten::_scaled_dot_product_cudnn_attention_backward", 1, 2, 14, 0, 1},
    {"aten::_cudnn_attention_forward", 0, 1, 10, 0, 0},
    {"aten::_cudnn_attention_backward", 1, 2, 14, 0, 1},
    {"aten::_flash_attention_forward", 0, 1, 8, 1, 0},
    {"aten::_flash_attention_backward", 1, 2, 11, 1, 1},
    {"aten::_efficient_attention_forward", 0, 1, 9, 1, 0},
    {"aten::_efficient_attention_backward", 1, 2, 14, 1, 1},
};

static int attn_op(const struct attn_form *f, json_t *args, const char *kernel, char *buf, size_t len)
{
	long long Q[MAXD], K[MAXD];
	if (dims(args, f->q, Q) != 4 || dims(args, f->k, K) != 4)
		return 0;
	const char *dt = dtype(args, f->q);
	if (!dt)
		return 0;
	long long b = Q[0], h = f->bshd ? Q[2] : Q[1], sq = f->bshd ? Q[1] : Q[2], d = Q[3];
	long long hkv = f->bshd ? K[2] : K[1], skv = f->bshd ? K[1] : K[2];
	if (K[0] != b || K[3] != d || hkv <= 0 || h % hkv)
		return 0;
	/* is_causal as recorded; the efficient kernels' custom_mask_type is 0 for
	   none; not recorded: not causal (the larger of the two amounts of work) */
	int causal = concrete_bool(args, f->causal);
	if (causal < 0) {
		const char *v =
		    json_string_value(json_array_get(json_object_get(args, "Concrete Inputs"), (size_t)f->causal));
		causal = v && isdigit((unsigned char)v[0]) && strcmp(v, "0") ? 1 : 0;
	}
	/* cuDNN's Hopper SDPA kernels (cudnn_generated_..._sm90_flash_...) run
	   as impl=cudnn; the other Hopper kernels of the warp-specialized kind
	   (FlashAttention-3: a name with sm90, wgmma, flash3 or hopper) as
	   impl=flash3; a FlashAttention-2 forward of one query token (a decode
	   step) runs its decode path, the query heads of a KV head moved into the
	   rows of one tile (flash_api.cpp, seqlenq_ngroups_swapped) and the keys
	   split when that does not fill the chip: impl=flash2_decode; every other
	   as FlashAttention-2 */
	int hopper = has(kernel, "sm90") || has(kernel, "wgmma") || has(kernel, "flash3") || has(kernel, "hopper");
	const char *impl = hopper && has(kernel, "cudnn") ? "cudnn"
	                   : hopper                       ? "flash3"
	                   : sq == 1 && !f->bwd           ? "flash2_decode"
	                                                  : "flash2";
	int w = snprintf(buf, len, "attn b=%lld h=%lld hkv=%lld sq=%lld skv=%lld d=%lld causal=%d dtype=%s impl=%s%s",
	                 b, h, hkv, sq, skv, d, causal, dt, impl, f->bwd ? " dir=bwd" : "");
	return checked(buf, len, w);
}

/* ---- elementwise and reductions ---- */

static int last_dim(json_t *args, int i, long long *cols)
{
	long long d[MAXD];
	int n = dims(args, i, d);
	if (n < 1)
		return 0;
	*cols = d[n - 1];
	return 1;
}

/* PyTorch's element-by-element kernel (at::native::elementwise_kernel<128, 4>, Loops.cuh), which TensorIterator
   launches when an operand is not contiguous or is broadcast, not the vectorized or unrolled ones of contiguous
   operands: the op's strided=1 (its index arithmetic, sim/device/model_stream.c) */
static const char *strided(const char *kernel)
{
	return kernel && strstr(kernel, "at::native::elementwise_kernel<") ? " strided=1" : "";
}

static int elem_op(const char *name, json_t *args, const char *kernel, char *buf, size_t len)
{
	const char *dt = dtype(args, 0), *st = strided(kernel);
	long long n = numel(args, 0), cols;
	int w = -1;
	static const char *const binary[] = {"aten::add",  "aten::add_", "aten::sub",  "aten::sub_", "aten::mul",
	                                     "aten::mul_", "aten::div",  "aten::div_", NULL};
	for (int i = 0; binary[i]; i++) {
		if (strcmp(name, binary[i]))
			continue;
		long long n1 = numel(args, 1);
		if (n1 > n)
			n = n1;
		if (!dt || n <= 0)
			return 0;
		w = snprintf(buf, len, "elem op=%s n=%lld dtype=%s%s",
		             strstr(name, "add") || strstr(name, "sub") ? "add" : "mul", n, dt, st);
		return checked(buf, len, w);
	}
	if (!strcmp(name, "aten::copy_")) { /* copy_(dst, src): a cast when the types differ */
		const char *src = dtype(args, 1);
		if (!dt || !src || n <= 0)
			return 0;
		if (strcmp(dt, src))
			w = snprintf(buf, len, "elem op=cast n=%lld dtype=%s to=%s%s", n, src, dt, st);
		else
			w = snprintf(buf, len, "elem op=copy n=%lld dtype=%s%s", n, dt, st);
		return checked(buf, len, w);
	}
	if (!dt || n <= 0)
		return 0;
	if (!strcmp(name, "aten::gelu") || !strcmp(name, "aten::silu") || !strcmp(name, "aten::relu"))
		w = snprintf(buf, len, "elem op=%s n=%lld dtype=%s%s", name + 6, n, dt, st);
	else if (!strcmp(name, "aten::gelu_backward") || !strcmp(name, "aten::silu_backward") ||
	         !strcmp(name, "aten::threshold_backward"))
		/* read two tensors of n, write one: the bytes of a multiply */
		w = snprintf(buf, len, "elem op=mul n=%lld dtype=%s%s", n, dt, st);
	else if ((!strcmp(name, "aten::_softmax_backward_data") || !strcmp(name, "aten::_log_softmax_backward_data")) &&
	         last_dim(args, 0, &cols))
		/* PyTorch's own kernel (SoftMax.cu): eager=1 */
		w = snprintf(buf, len, "elem op=softmax_bwd n=%lld cols=%lld dtype=%s eager=1", n, cols, dt);
	else if ((!strcmp(name, "aten::native_layer_norm_backward") ||
	          !strcmp(name, "aten::_fused_rms_norm_backward")) &&
	         last_dim(args, 0, &cols))
		/* PyTorch's: the input gradient's kernel, then GammaBetaBackward reads x and dy again (split=1) */
		w = snprintf(buf, len, "elem op=%s_bwd n=%lld cols=%lld dtype=%s split=1",
		             strstr(name, "rms") ? "rmsnorm" : "layernorm", n, cols, dt);
	else if (!strcmp(name, "aten::fill_") || !strcmp(name, "aten::zero_"))
		w = snprintf(buf, len, "elem op=fill n=%lld dtype=%s%s", n, dt, st);
	else if ((!strcmp(name, "aten::native_layer_norm") || !strcmp(name, "aten::_fused_rms_norm") ||
	          !strcmp(name, "aten::_softmax") || !strcmp(name, "aten::_log_softmax")) &&
	         last_dim(args, 0, &cols))
		w = snprintf(buf, len, "elem op=%s n=%lld cols=%lld dtype=%s%s",
		             strstr(name, "softmax") ? "softmax"
		             : strstr(name, "rms")   ? "rmsnorm"
		                                     : "layernorm",
		             n, cols, dt, strstr(name, "softmax") ? " eager=1" : "");
	else if (!strcmp(name, "aten::sum") || !strcmp(name, "aten::mean") || !strcmp(name, "aten::amax"))
		w = snprintf(buf, len, "elem op=read n=%lld dtype=%s", n, dt);
	return checked(buf, len, w);
}

/* aten::cat: its inputs copied into one output. The inputs are a TensorList, whose dims the profiler records as a
   list of lists and whose element type it does not record: the element's size is the kernel's
   (CatArrayBatchedCopy<OpaqueType<N>, ...>, N bytes: aten/src/ATen/native/cuda/Shape.cu), `elem op=copy` of the
   output's elements (bf16 for 2 bytes: only the bytes matter to a copy). Only the kernels for contiguous inputs
   (CatArrayBatchedCopy_vectorized, _contig, _aligned16_contig): the plain CatArrayBatchedCopy, which PyTorch runs on
   strided inputs, computes each element's offsets in both tensors and ran at a quarter to two fifths of the bandwidth
   of a copy (a GPT's q, k and v in [b, h, s, d] views: 192 us for 201 MB on an H100), which no op describes: it
   keeps its measured time. */
static int cat_op(json_t *args, const char *kernel, char *buf, size_t len)
{
	json_t *list = json_array_get(json_object_get(args, "Input Dims"), 0);
	const char *o = kernel ? strstr(kernel, "OpaqueType<") : NULL;
	if (!json_is_array(list) || !json_array_size(list) || !o || !strstr(kernel, "CatArrayBatchedCopy_"))
		return 0;
	static const char *const by_size[] = {NULL, "int8", "bf16", NULL, "fp32", NULL, NULL, NULL, "fp64"};
	long sz = strtol(o + strlen("OpaqueType<"), NULL, 10);
	const char *dt = sz > 0 && sz <= 8 ? by_size[sz] : NULL;
	long long n = 0;
	for (size_t i = 0; i < json_array_size(list); i++) {
		long long d[MAXD];
		int nd = dims_of(json_array_get(list, i), d, 1),
		    empty = 0; /* an empty input (a dim of 0): cat skips it */
		if (nd < 1)
			return 0;
		for (int k = 0; k < nd; k++)
			empty |= d[k] == 0;
		long long e = empty ? 0 : prod(d, nd);
		if (e < 0 || n > (1LL << 50) - e)
			return 0;
		n += e;
	}
	if (!dt || n <= 0)
		return 0;
	return checked(buf, len, snprintf(buf, len, "elem op=copy n=%lld dtype=%s", n, dt));
}

/* aten::index_select(self, dim, index): the rows the index names copied out, `elem op=copy` of the output's
   elements (self's dims with dim's extent the index's length) */
static int index_select_op(json_t *args, char *buf, size_t len)
{
	long long d[MAXD], ix[MAXD];
	int nd = dims(args, 0, d), ni = dims(args, 2, ix);
	const char *dt = dtype(args, 0),
	           *c = json_string_value(json_array_get(json_object_get(args, "Concrete Inputs"), 1));
	long dim = c && *c ? strtol(c, NULL, 10) : -(long)MAXD - 1;
	if (dim < 0) /* counted from the last dim, as PyTorch's dim=-1 */
		dim += nd;
	if (nd < 1 || ni != 1 || !dt || dim < 0 || dim >= nd)
		return 0;
	d[dim] = ix[0];
	long long n = prod(d, nd);
	if (n <= 0)
		return 0;
	return checked(buf, len, snprintf(buf, len, "elem op=copy n=%lld dtype=%s", n, dt));
}

/* ---- convolution (2-D, forward and backward) ---- */

/* Where a convolution's arguments are: the schemas of aten::conv2d
   (input, weight, bias, stride, padding, dilation, groups),
   aten::convolution and aten::_convolution (..., dilation, transposed,
   output_padding, groups, ...), aten::cudnn_convolution (self, weight,
   padding, stride, dilation, groups, ...) and aten::convolution_backward
   (grad_output, input, weight, bias_sizes, stride, padding, dilation,
   transposed, output_padding, groups, output_mask). */
struct conv_form {
	const char *op;
	int in, weight;                           /* the input's and the filter's dims */
	int stride, pad, dil, groups, transposed; /* -1: not an argument */
	int mask;                                 /* the backward's output_mask (input, weight, bias); -1: forward */
};

static const struct conv_form convs[] = {
    {"aten::conv2d", 0, 1, 3, 4, 5, 6, -1, -1},
    {"aten::convolution", 0, 1, 3, 4, 5, 8, 6, -1},
    {"aten::_convolution", 0, 1, 3, 4, 5, 8, 6, -1},
    {"aten::cudnn_convolution", 0, 1, 3, 2, 4, 5, -1, -1},
    {"aten::convolution_backward", 1, 2, 4, 5, 6, 9, 7, 10},
};

/* A concrete int or a list of two equal ones ("1", "[2, 2]"): the value,
   or -1 when not recorded, not a number, or not the same on both axes. */
static long long concrete_same(json_t *args, int i)
{
	const char *v = json_string_value(json_array_get(json_object_get(args, "Concrete Inputs"), (size_t)i));
	long long a, b;
	char tail;
	if (!v)
		return -1;
	if (sscanf(v, "[%lld, %lld]%c", &a, &b, &tail) == 2 || sscanf(v, "[%lld,%lld]%c", &a, &b, &tail) == 2)
		return a == b && a >= 0 ? a : -1;
	if (sscanf(v, "%lld%c", &a, &tail) == 1)
		return a >= 0 ? a : -1;
	return -1;
}

/* The passes of a backward's output_mask ("[True, True, False]": the input's and the filter's gradients; the
   bias's is a reduction the conv op does not time): "bwd", "dgrad", "wgrad", or NULL when none or unrecorded. */
static const char *conv_passes(json_t *args, int i)
{
	const char *v = json_string_value(json_array_get(json_object_get(args, "Concrete Inputs"), (size_t)i));
	char a[8], b[8];
	if (!v || sscanf(v, "[%7[A-Za-z], %7[A-Za-z]", a, b) != 2)
		return NULL;
	int dx = !strcasecmp(a, "true"), dw = !strcasecmp(b, "true");
	return dx && dw ? "bwd" : dx ? "dgrad" : dw ? "wgrad" : NULL;
}

static int conv_op(const struct conv_form *f, json_t *args, char *buf, size_t len)
{
	long long in[MAXD], w[MAXD];
	const char *dt = dtype(args, f->in), *dir = NULL;
	if (dims(args, f->in, in) != 4 || dims(args, f->weight, w) != 4 || !dt)
		return 0;
	long long stride = concrete_same(args, f->stride), pad = concrete_same(args, f->pad);
	long long dil = concrete_same(args, f->dil), groups = concrete_same(args, f->groups);
	if (stride < 1 || pad < 0 || dil != 1 || groups != 1 || w[1] != in[1])
		return 0; /* grouped, dilated, asymmetric or unrecorded: the `conv` op has none of these */
	if (f->transposed >= 0 && concrete_bool(args, f->transposed) != 0)
		return 0;
	if (f->mask >= 0 && !(dir = conv_passes(args, f->mask)))
		return 0;
	int n = snprintf(
	    buf, len, "conv n=%lld c=%lld h=%lld w=%lld k=%lld r=%lld s=%lld stride=%lld pad=%lld dtype=%s%s%s", in[0],
	    in[1], in[2], in[3], w[0], w[2], w[3], stride, pad, dt, dir ? " dir=" : "", dir ? dir : "");
	return checked(buf, len, n);
}

/* Whether a kernel's name is a GEMM's or an attention's (kin_family). */
static int main_family(const char *kernel)
{
	enum imp_family f = kernel ? kin_family("kernel", kernel) : IF_OTHER;
	return f == IF_GEMM || f == IF_ATTN;
}

int kin_cpu_op(const char *name, json_t *args, const char *kernel, char *buf, size_t len)
{
	if (!name || !json_is_object(args))
		return 0;
	/* a GEMM or an attention is modelled on a kernel of its kind (main_family): a CPU op whose items hold none (a
	   cuBLAS call whose memset alone is in the trace's window) keeps their measured time */
	for (size_t i = 0; i < sizeof gemms / sizeof gemms[0]; i++)
		if (!strcmp(name, gemms[i].op))
			return main_family(kernel) && gemm_op(&gemms[i], args, kernel, buf, len);
	if (!strcmp(name, "aten::_grouped_mm"))
		return main_family(kernel) && grouped_op(args, 2, kernel, buf, len);
	if (!strcmp(name, "aten::_scaled_grouped_mm"))
		return main_family(kernel) && grouped_op(args, 4, kernel, buf, len);
	for (size_t i = 0; i < sizeof attns / sizeof attns[0]; i++)
		if (!strcmp(name, attns[i].op))
			return main_family(kernel) && attn_op(&attns[i], args, kernel, buf, len);
	if (!strcmp(name, "aten::cat"))
		return cat_op(args, kernel, buf, len);
	if (!strcmp(name, "aten::index_select"))
		return index_select_op(args, buf, len);
	for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++)
		if (!strcmp(name, convs[i].op))
			/* Chakra's converter records cudnn_convolution's arguments under aten::conv2d's name:
			   a list where conv2d has its bias tells them apart */
			return conv_op(&convs[i], args, buf, len) ||
			       (i == 0 && concrete_same(args, 2) >= 0 && conv_op(&convs[3], args, buf, len));
	return elem_op(name, args, kernel, buf, len);
}

/* The bytes a copy or memset of CPU op `name` moves, from its recorded shapes (ROCm's traces record no bytes on
   the item): aten::copy_'s source, aten::zero_'s or aten::fill_'s tensor; -1 when not known. */
static long long cpu_bytes(const char *name, json_t *cargs)
{
	int i = !name                                                          ? -1
	        : !strcmp(name, "aten::copy_")                                 ? 1
	        : !strcmp(name, "aten::zero_") || !strcmp(name, "aten::fill_") ? 0
	                                                                       : -1;
	int k = i >= 0 ? dtype_index(cargs, i) : -1;
	long long n = k >= 0 ? numel(cargs, i) : -1;
	return n > 0 && n <= (1LL << 48) ? n * dtypes[k].bytes : -1;
}

int kin_copy_op(const char *kernel, json_t *args, const char *cpu_name, json_t *cargs, int memset, char *buf,
                size_t len)
{
	json_t *b = json_object_get(args, "bytes");
	long long bytes = json_is_integer(b) ? json_integer_value(b) : cpu_bytes(cpu_name, cargs);
	if (bytes <= 0 || bytes > (1LL << 50))
		return 0;
	if (memset) { /* cudaMemset: a kernel that writes the bytes */
		int w = snprintf(buf, len, "elem op=fill n=%lld dtype=int8", bytes);
		return checked(buf, len, w);
	}
	const char *src = "hbm", *dst = "hbm";
	if (strstr(kernel, "HtoD"))
		src = "host";
	else if (strstr(kernel, "DtoH"))
		dst = "host";
	else if (!strstr(kernel, "DtoD"))
		return 0; /* peer and unknown copies keep their time */
	int w = snprintf(buf, len, "copy bytes=%lld src=%s dst=%s", bytes, src, dst);
	return checked(buf, len, w);
}

/* ---- collectives ---- */

static int dtype_bytes(const char *t)
{
	static const struct {
		const char *name;
		int bytes;
	} map[] = {{"Float", 4}, {"Float32", 4}, {"Half", 2},          {"BFloat16", 2},    {"Double", 8},
	           {"Long", 8},  {"Int", 4},     {"Int32", 4},         {"Int64", 8},       {"Byte", 1},
	           {"Char", 1},  {"Bool", 1},    {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"Short", 2}};
	for (size_t i = 0; t && i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(t, map[i].name))
			return map[i].bytes;
	return 0;
}

static json_t *arg2(json_t *a, json_t *b, const char *key)
{
	json_t *v = json_object_get(a, key);
	return v ? v : json_object_get(b, key);
}

/* "[0, 1, 2]" -> increasing ranks; 0 when not such a list. */
static int parse_ranks(const char *s, struct kin_item *it)
{
	if (!s || *s != '[')
		return 0;
	int cap = 0, n = 0, *g = NULL;
	const char *p = s + 1;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p == ']' && n == 0)
			break;
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0 || v >= (1 << 20) || (n && v <= g[n - 1]) || n >= (1 << 20)) {
			free(g);
			return 0;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			int *q = realloc(g, (size_t)cap * sizeof *q);
			if (!q) {
				free(g);
				return 0;
			}
			g = q;
		}
		g[n++] = (int)v;
		p = end;
		while (*p == ' ')
			p++;
		if (*p == ',')
			p++;
		else if (*p == ']')
			break;
		else {
			free(g);
			return 0;
		}
	}
	if (n < 1) {
		free(g);
		return 0;
	}
	it->group = g;
	it->ngroup = n;
	return 1;
}

int kin_coll(json_t *ka, json_t *ca, struct kin_item *it)
{
	const char *name = json_string_value(arg2(ka, ca, "Collective name"));
	const char *dt = json_string_value(arg2(ka, ca, "dtype"));
	json_t *in = arg2(ka, ca, "In msg nelems"), *outn = arg2(ka, ca, "Out msg nelems");
	int size = dtype_bytes(dt);
	if (!name || !size || !json_is_integer(in) || !json_is_integer(outn))
		return 0;
	static const struct {
		const char *kineto, *op;
		int out; /* bytes from the output's count */
	} map[] = {{"allreduce", "allreduce", 0},
	           {"all_reduce", "allreduce", 0},
	           {"allgather", "allgather", 1},
	           {"_allgather_base", "allgather", 1},
	           {"all_gather", "allgather", 1},
	           {"allgather_into_tensor_coalesced", "allgather", 1},
	           {"reduce_scatter", "reducescatter", 0},
	           {"_reduce_scatter_base", "reducescatter", 0},
	           {"reduce_scatter_tensor_coalesced", "reducescatter", 0},
	           {"broadcast", "broadcast", 0},
	           {"reduce", "reduce", 0},
	           {"all_to_all", "alltoall", 0},
	           {"alltoall", "alltoall", 0},
	           {"alltoall_base", "alltoall", 0}};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (strcmp(name, map[i].kineto))
			continue;
		long long cnt = json_integer_value(map[i].out ? outn : in);
		if (cnt <= 0 || cnt > (1LL << 50) / size)
			return 0;
		if (!parse_ranks(json_string_value(arg2(ka, ca, "Process Group Ranks")), it))
			return 0;
		snprintf(it->coll, sizeof it->coll, "%s", map[i].op);
		it->bytes = (double)cnt * size;
		return 1;
	}
	return 0;
}
