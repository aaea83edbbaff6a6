/*
 * op_text.c -- an op's canonical text (op_format: every argument that affects
 * its timing, the memoization key and what traces and reports print) and its
 * useful work (op_flops: the FLOPs the usual benchmarks count). op.c parses
 * the line; op_int.h has the names of the keys' words both use.
 */
#include "op.h"
#include "op_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FLOPs per element of each elementwise op (as the usual benchmarks count). */
static const double elem_flops[EL_COUNT] = {
    [EL_ADD] = 1,         [EL_MUL] = 1,   [EL_GELU] = 8,           [EL_SILU] = 4,
    [EL_SWIGLU] = 5,      [EL_RELU] = 1,  [EL_LAYERNORM] = 8,      [EL_RMSNORM] = 5,
    [EL_SOFTMAX] = 5,     [EL_ROPE] = 3,  [EL_CAST] = 0,           [EL_ADAM] = 12,
    [EL_READ] = 1,        [EL_TRIAD] = 2, [EL_COPY] = 0,           [EL_CAST_TRANSPOSE] = 0,
    [EL_PERMUTE] = 0,     [EL_FILL] = 0,  [EL_LAYERNORM_BWD] = 10, [EL_RMSNORM_BWD] = 7,
    [EL_SOFTMAX_BWD] = 3,
};

/* ---- canonical text ---- */

size_t op_format(const struct op *op, char *buf, size_t len)
{
	char a[96] = "", b[48] = "", u[48] = "";
	int n = 0;
	if (!buf)
		len = 0;
	if (!op)
		return 0;
	/* units=, margin= and busy= only where given: the text of every other op stays what it was */
	if (op->units > 0)
		snprintf(u, sizeof u, " units=%lld", op->units);
	else if (op->margin > 0)
		snprintf(u, sizeof u, " margin=%lld", op->margin);
	else if (op->busy > 0)
		snprintf(u, sizeof u, " busy=%lld", op->busy);
	switch (op->kind) {
	case OP_GEMM:
		if (op->tile_m > 0) /* tile= and promote= only where given, as units= */
			snprintf(a, sizeof a, " tile=%dx%d", op->tile_m, op->tile_n);
		if (op->promote > 0) {
			size_t used = strlen(a);
			snprintf(a + used, sizeof a - used, " promote=%lld", op->promote);
		}
		if (op->grouped) {
			size_t used = strlen(a);
			snprintf(a + used, sizeof a - used, " grouped=1");
		}
		n = snprintf(buf, len,
		             "gemm m=%lld n=%lld k=%lld batch=%lld dtype=%s acc=%s trans=%s epilogue=%s warm=%d%s%s",
		             op->m, op->n, op->k, op->batch, op_dtype_name(op->dtype), op_dtype_name(op->acc_dtype),
		             op_name_in(op_trans_names, 4, (int)op->trans),
		             op_name_in(op_epi_names, EPI_COUNT, (int)op->epilogue), op->warm, u, a);
		break;
	case OP_ATTN:
		if (op->impl == ATTN_PAGED)
			snprintf(a, sizeof a, " page=%lld", op->page);
		if (op->maxkv) {
			size_t used = strlen(a);
			snprintf(a + used, sizeof a - used, " maxkv=%lld", op->maxkv);
		}
		if (op->dropout > 0) {
			/* the fewest digits that read back as the same double: the canonical text is the op */
			int p = 1;
			do
				snprintf(a, sizeof a, " dropout=%.*g", p, op->dropout);
			while (p++ < 17 && strtod(a + 9, NULL) != op->dropout);
		}
		if (op->window) {
			size_t used = strlen(a);
			snprintf(a + used, sizeof a - used, " window=%lld", op->window);
		}
		n = snprintf(buf, len,
		             "attn b=%lld h=%lld hkv=%lld sq=%lld skv=%lld d=%lld causal=%d dtype=%s impl=%s%s dir=%s "
		             "warm=%d",
		             op->b, op->h, op->hkv, op->sq, op->skv, op->d, op->causal, op_dtype_name(op->dtype),
		             op_attn_impl_name(op->impl), a, op_name_in(op_dir_names, 2, (int)op->dir), op->warm);
		break;
	case OP_ELEM:
		if (op_elem_is_row(op->elem))
			snprintf(a, sizeof a, " cols=%lld", op->cols);
		if (op->elem == EL_CAST || op->elem == EL_CAST_TRANSPOSE)
			snprintf(b, sizeof b, " to=%s", op_dtype_name(op->to_dtype));
		n = snprintf(buf, len, "elem op=%s n=%lld%s dtype=%s%s warm=%d%s%s%s", op_elem_name(op->elem),
		             op->elems, a, op_dtype_name(op->dtype), b, op->warm, op->strided ? " strided=1" : "",
		             op->split ? " split=1" : "", op->eager ? " eager=1" : "");
		break;
	case OP_COPY:
		n = snprintf(buf, len, "copy bytes=%.0f src=%s dst=%s", op->bytes,
		             op_name_in(op_place_names, 2, (int)op->src), op_name_in(op_place_names, 2, (int)op->dst));
		break;
	case OP_CONV:
		/* dir= only where not the forward: the text of every forward conv stays what it was */
		if (op->dir != DIR_FWD)
			snprintf(a, sizeof a, " dir=%s", op_name_in(op_conv_dir_names, 4, (int)op->dir));
		n = snprintf(
		    buf, len,
		    "conv n=%lld c=%lld h=%lld w=%lld k=%lld r=%lld s=%lld stride=%lld pad=%lld dtype=%s acc=%s "
		    "warm=%d%s%s",
		    op->batch, op->cin, op->ih, op->iw, op->cout, op->r, op->s, op->stride, op->pad,
		    op_dtype_name(op->dtype), op_dtype_name(op->acc_dtype), op->warm, a, u);
		break;
	case OP_EMBED:
		n = snprintf(buf, len, "embedding tokens=%lld dim=%lld vocab=%lld dtype=%s warm=%d", op->tokens,
		             op->dim, op->vocab, op_dtype_name(op->dtype), op->warm);
		break;
	default: n = snprintf(buf, len, "?"); break;
	}
	/* launch= only where it is a graph's: the text of every other op stays what it was */
	if (n >= 0 && op->launch == LAUNCH_GRAPH) {
		size_t used = (size_t)n < len ? (size_t)n : (len ? len - 1 : 0);
		int m = snprintf(buf ? buf + used : NULL, len > used ? len - used : 0, " launch=graph");
		n = m < 0 ? n : n + m;
	}
	return n < 0 ? 0 : (size_t)n;
}

/* ---- useful work ---- */

/* sum of min(w, p + 1) over key positions p = a .. b (w = 0: no window) */
static double visible_keys(double a, double b, double w)
{
	if (a > b)
		return 0;
	if (w <= 0 || b + 1 <= w)
		return (b - a + 1) * (a + b + 2) / 2;
	if (a + 1 >= w)
		return (b - a + 1) * w;
	return visible_keys(a, w - 1, 0) + (b - w + 1) * w;
}

/* Unmasked (query, key) pairs: causal with the queries aligned to the end
   of the keys (query i of sq sees keys up to skv - sq + i; with a window,
   its `window` latest of them). */
static double attn_pairs(const struct op *op)
{
	double sq = (double)op->sq, skv = (double)op->skv;
	if (!op->causal)
		return sq * skv;
	/* query i's last key is p = skv - sq + i; the first sq - skv queries see no key */
	double first = skv - sq > 0 ? skv - sq : 0;
	return visible_keys(first, skv - 1, (double)op->window);
}

double op_flops(const struct op *op)
{
	if (!op)
		return 0;
	switch (op->kind) {
	case OP_GEMM: return 2.0 * (double)op->m * (double)op->n * (double)op->k * (double)op->batch;
	case OP_ATTN: {
		double f = 4.0 * (double)op->b * (double)op->h * (double)op->d * attn_pairs(op);
		return op->dir == DIR_BWD ? 2.5 * f : f;
	}
	case OP_ELEM:
		return (int)op->elem >= 0 && (int)op->elem < EL_COUNT ? elem_flops[op->elem] * (double)op->elems : 0;
	case OP_CONV: {
		if (op->stride <= 0 || op->pad < 0 || op->ih <= 0 || op->iw <= 0)
			return 0;
		double pp = (double)op->ih + 2.0 * (double)op->pad - (double)op->r,
		       qq = (double)op->iw + 2.0 * (double)op->pad - (double)op->s;
		if (pp < 0 || qq < 0)
			return 0;
		double p = floor(pp / (double)op->stride) + 1, q = floor(qq / (double)op->stride) + 1;
		return (op->dir == DIR_BWD ? 4.0 : 2.0) * (double)op->batch * p * q * (double)op->cout *
		       (double)op->cin * (double)op->r * (double)op->s;
	}
	case OP_COPY:
	case OP_EMBED:
	default: return 0;
	}
}
