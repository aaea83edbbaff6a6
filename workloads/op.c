/*
 * op.c -- the op vocabulary: one op line parsed into a struct op (op_text.c
 * writes an op's canonical text and counts its useful work).
 *
 * The parser is table driven: each kind lists its keys with a value type
 * (positive size, non-negative size, dtype, bool, one of a set of words,
 * byte quantity). Tokens are read in place (no copy of the line, so any
 * length is fine); values are checked as they are read, then the required
 * keys, then the checks between keys (hkv divides h, cols divides n, conv
 * output at least 1x1, products of sizes below 2^62).
 */
#include "op.h"
#include "op_int.h"

#include "arch.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_LIMIT (1LL << 62) /* every size and every product of sizes stays below */
#define SHOW_MAX   40          /* characters of a token quoted in a message */

static const char *const kind_names[OP_KIND_COUNT] = {"gemm", "attn", "elem", "copy", "conv", "embedding"};
const char *const op_trans_names[] = {"nn", "nt", "tn", "tt", NULL};
const char *const op_epi_names[] = {"none", "bias", "gelu", "relu", "bias_gelu", "bias_relu", NULL};
static const char *const impl_names[] = {"flash2", "flash3",        "naive", "decode", "paged",
                                         "flash1", "flash2_decode", "cudnn", "mmha",   NULL};
const char *const op_dir_names[] = {"fwd", "bwd", NULL};
const char *const op_conv_dir_names[] = {"fwd", "bwd", "dgrad", "wgrad", NULL};
const char *const op_place_names[] = {"hbm", "host", NULL};
static const char *const elem_names[] = {
    "add",     "mul",  "gelu",          "silu",        "swiglu",      "relu",  "layernorm", "rmsnorm",
    "softmax", "rope", "cast",          "adam",        "read",        "triad", "copy",      "cast_transpose",
    "permute", "fill", "layernorm_bwd", "rmsnorm_bwd", "softmax_bwd", NULL};
_Static_assert(sizeof elem_names / sizeof elem_names[0] == EL_COUNT + 1, "one name per enum op_elem");
_Static_assert(sizeof impl_names / sizeof impl_names[0] == ATTN_IMPL_COUNT + 1, "one name per enum op_attn_impl");
_Static_assert(sizeof op_epi_names / sizeof op_epi_names[0] == EPI_COUNT + 1, "one name per enum op_epilogue");
#define DTYPES_EXPECTED "fp64|fp32|tf32|fp16|bf16|fp8|fp4|int8|int4|int32"

const char *op_name_in(const char *const *names, int count, int i)
{
	return i >= 0 && i < count ? names[i] : "?";
}

const char *op_kind_name(enum op_kind k)
{
	return op_name_in(kind_names, OP_KIND_COUNT, (int)k);
}
const char *op_elem_name(enum op_elem e)
{
	return op_name_in(elem_names, EL_COUNT, (int)e);
}
const char *op_attn_impl_name(enum op_attn_impl i)
{
	return op_name_in(impl_names, ATTN_IMPL_COUNT, (int)i);
}

int op_attn_impl_decodes(enum op_attn_impl i)
{
	return i == ATTN_DECODE || i == ATTN_PAGED || i == ATTN_FLASH2_DECODE || i == ATTN_MMHA;
}

const char *op_dtype_name(int dt)
{
	return dt >= 0 && dt < DT_COUNT ? arch_dtype_name((enum arch_dtype)dt) : "?";
}

/* ---- keys of each kind ---- */

enum vtype {
	V_POS,    /* positive integer, plain decimal */
	V_NONNEG, /* non-negative integer */
	V_DTYPE,  /* arch dtype name */
	V_BOOL,   /* 0|1 */
	V_CHOICE, /* one of key.choices */
	V_BYTES,  /* byte quantity (units_parse), stored in struct pstate.bytes */
	V_PROB,   /* probability in [0, 1): plain decimal, stored in struct pstate.prob */
	V_TILE,   /* a kernel's tile of C, MxN: each a multiple of 8 from 8 to OP_TILE_MAX, stored as M << 16 | N */
};

struct key {
	const char *name;
	enum vtype type;
	int required;
	const char *const *choices; /* V_CHOICE */
};

#define MAX_KEYS 16

enum {
	G_M,
	G_N,
	G_K,
	G_BATCH,
	G_DTYPE,
	G_ACC,
	G_TRANS,
	G_EPI,
	G_WARM,
	G_UNITS,
	G_MARGIN,
	G_BUSY,
	G_TILE,
	G_PROMOTE,
	G_GROUPED,
	G_COUNT
};
static const struct key gemm_keys[G_COUNT + 1] = {
    [G_M] = {"m", V_POS, 1, NULL},
    [G_N] = {"n", V_POS, 1, NULL},
    [G_K] = {"k", V_POS, 1, NULL},
    [G_BATCH] = {"batch", V_POS, 0, NULL},
    [G_DTYPE] = {"dtype", V_DTYPE, 1, NULL},
    [G_ACC] = {"acc", V_DTYPE, 0, NULL},
    [G_TRANS] = {"trans", V_CHOICE, 0, op_trans_names},
    [G_EPI] = {"epilogue", V_CHOICE, 0, op_epi_names},
    [G_WARM] = {"warm", V_BOOL, 0, NULL},
    [G_UNITS] = {"units", V_POS, 0, NULL},
    [G_MARGIN] = {"margin", V_POS, 0, NULL},
    [G_BUSY] = {"busy", V_POS, 0, NULL},
    [G_TILE] = {"tile", V_TILE, 0, NULL},
    [G_PROMOTE] = {"promote", V_POS, 0, NULL},
    [G_GROUPED] = {"grouped", V_BOOL, 0, NULL},
};

enum {
	A_B,
	A_H,
	A_HKV,
	A_SQ,
	A_SKV,
	A_D,
	A_CAUSAL,
	A_DTYPE,
	A_IMPL,
	A_DIR,
	A_PAGE,
	A_MAXKV,
	A_DROP,
	A_WINDOW,
	A_WARM,
	A_COUNT
};
static const struct key attn_keys[A_COUNT + 1] = {
    [A_B] = {"b", V_POS, 1, NULL},
    [A_H] = {"h", V_POS, 1, NULL},
    [A_HKV] = {"hkv", V_POS, 0, NULL},
    [A_SQ] = {"sq", V_POS, 1, NULL},
    [A_SKV] = {"skv", V_POS, 1, NULL},
    [A_D] = {"d", V_POS, 1, NULL},
    [A_CAUSAL] = {"causal", V_BOOL, 0, NULL},
    [A_DTYPE] = {"dtype", V_DTYPE, 1, NULL},
    [A_IMPL] = {"impl", V_CHOICE, 1, impl_names},
    [A_DIR] = {"dir", V_CHOICE, 0, op_dir_names},
    [A_PAGE] = {"page", V_POS, 0, NULL},
    [A_MAXKV] = {"maxkv", V_POS, 0, NULL},
    [A_DROP] = {"dropout", V_PROB, 0, NULL},
    [A_WINDOW] = {"window", V_POS, 0, NULL},
    [A_WARM] = {"warm", V_BOOL, 0, NULL},
};

enum { E_OP, E_N, E_COLS, E_DTYPE, E_TO, E_WARM, E_STRIDED, E_SPLIT, E_EAGER, E_COUNT };
static const struct key elem_keys[E_COUNT + 1] = {
    [E_OP] = {"op", V_CHOICE, 1, elem_names},   [E_N] = {"n", V_POS, 1, NULL},
    [E_COLS] = {"cols", V_POS, 0, NULL},        [E_DTYPE] = {"dtype", V_DTYPE, 1, NULL},
    [E_TO] = {"to", V_DTYPE, 0, NULL},          [E_WARM] = {"warm", V_BOOL, 0, NULL},
    [E_STRIDED] = {"strided", V_BOOL, 0, NULL}, [E_SPLIT] = {"split", V_BOOL, 0, NULL},
    [E_EAGER] = {"eager", V_BOOL, 0, NULL},
};

enum { Y_BYTES, Y_SRC, Y_DST, Y_COUNT };
static const struct key copy_keys[Y_COUNT + 1] = {
    [Y_BYTES] = {"bytes", V_BYTES, 1, NULL},
    [Y_SRC] = {"src", V_CHOICE, 0, op_place_names},
    [Y_DST] = {"dst", V_CHOICE, 0, op_place_names},
};

enum {
	C_N,
	C_C,
	C_H,
	C_W,
	C_K,
	C_R,
	C_S,
	C_STRIDE,
	C_PAD,
	C_DTYPE,
	C_ACC,
	C_WARM,
	C_DIR,
	C_UNITS,
	C_MARGIN,
	C_BUSY,
	C_COUNT
};
_Static_assert(G_MARGIN == G_UNITS + 1 && G_BUSY == G_UNITS + 2 && C_MARGIN == C_UNITS + 1 && C_BUSY == C_UNITS + 2,
               "take_units reads units=, margin= and busy= in a row");
_Static_assert(G_COUNT <= MAX_KEYS && C_COUNT <= MAX_KEYS, "a kind's keys fit struct pstate");
static const struct key conv_keys[C_COUNT + 1] = {
    [C_N] = {"n", V_POS, 1, NULL},
    [C_C] = {"c", V_POS, 1, NULL},
    [C_H] = {"h", V_POS, 1, NULL},
    [C_W] = {"w", V_POS, 1, NULL},
    [C_K] = {"k", V_POS, 1, NULL},
    [C_R] = {"r", V_POS, 1, NULL},
    [C_S] = {"s", V_POS, 1, NULL},
    [C_STRIDE] = {"stride", V_POS, 0, NULL},
    [C_PAD] = {"pad", V_NONNEG, 0, NULL},
    [C_DTYPE] = {"dtype", V_DTYPE, 1, NULL},
    [C_ACC] = {"acc", V_DTYPE, 0, NULL},
    [C_WARM] = {"warm", V_BOOL, 0, NULL},
    [C_DIR] = {"dir", V_CHOICE, 0, op_conv_dir_names},
    [C_UNITS] = {"units", V_POS, 0, NULL},
    [C_MARGIN] = {"margin", V_POS, 0, NULL},
    [C_BUSY] = {"busy", V_POS, 0, NULL},
};

enum { M_TOKENS, M_DIM, M_VOCAB, M_DTYPE, M_WARM, M_COUNT };
static const struct key embed_keys[M_COUNT + 1] = {
    [M_TOKENS] = {"tokens", V_POS, 1, NULL}, [M_DIM] = {"dim", V_POS, 1, NULL},
    [M_VOCAB] = {"vocab", V_POS, 1, NULL},   [M_DTYPE] = {"dtype", V_DTYPE, 1, NULL},
    [M_WARM] = {"warm", V_BOOL, 0, NULL},
};

static const char *const launch_names[] = {"eager", "graph", NULL};
static const struct key launch_key = {"launch", V_CHOICE, 0, launch_names}; /* every kind's */

static const struct key *const kind_keys[OP_KIND_COUNT] = {
    [OP_GEMM] = gemm_keys, [OP_ATTN] = attn_keys, [OP_ELEM] = elem_keys,
    [OP_COPY] = copy_keys, [OP_CONV] = conv_keys, [OP_EMBED] = embed_keys,
};

/* ---- messages ---- */

struct span {
	const char *p;
	size_t n;
};

/* A token as quoted in a message: at most SHOW_MAX characters, unprintable
   bytes as '?', "..." when cut. */
static void show(char out[SHOW_MAX + 4], const char *p, size_t n)
{
	size_t i, lim = n > SHOW_MAX ? SHOW_MAX : n;
	for (i = 0; i < lim; i++)
		out[i] = isprint((unsigned char)p[i]) ? p[i] : '?';
	if (n > SHOW_MAX) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(char *why, size_t whylen, const char *fmt, ...)
{
	if (!why || !whylen)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	for (char *c = why; *c; c++) /* one line, whatever the input held */
		if (!isprint((unsigned char)*c))
			*c = '?';
	return -1;
}

/* ---- values ---- */

static int span_is(struct span s, const char *word)
{
	return strlen(word) == s.n && memcmp(s.p, word, s.n) == 0;
}

/* Plain decimal digits, below SIZE_LIMIT. 0 ok, -1 malformed, -2 too large. */
static int parse_size(struct span v, long long *out)
{
	long long x = 0;
	if (v.n == 0)
		return -1;
	for (size_t i = 0; i < v.n; i++) {
		if (v.p[i] < '0' || v.p[i] > '9')
			return -1;
	}
	for (size_t i = 0; i < v.n; i++) {
		int d = v.p[i] - '0';
		if (x > (SIZE_LIMIT - 1 - d) / 10)
			return -2; /* x * 10 + d would reach 2^62 */
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

static int parse_dtype(struct span v)
{
	char buf[16];
	if (v.n >= sizeof buf)
		return -1;
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	return arch_dtype_parse(buf);
}

static int default_acc(int dt)
{
	switch (dt) {
	case DT_FP64: return DT_FP64;
	case DT_INT8:
	case DT_INT4:
	case DT_INT32: return DT_INT32;
	default: return DT_FP32;
	}
}

/* Reads bytes= : a plain number of bytes or a quantity with a byte unit. */
static int parse_bytes(const char *kn, struct span v, double *out, char *why, size_t whylen)
{
	char buf[128], shown[SHOW_MAX + 4], uwhy[256];
	double x;
	show(shown, v.p, v.n);
	if (v.n >= sizeof buf)
		return fail(why, whylen, "%s: bytes=%s is too long for a quantity", kn, shown);
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	if (units_parse(buf, UNIT_NONE, &x, uwhy, sizeof uwhy) && units_parse(buf, UNIT_BYTES, &x, uwhy, sizeof uwhy))
		return fail(why, whylen, "%s: bytes=%s: %s", kn, shown, uwhy);
	if (!isfinite(x) || x <= 0)
		return fail(why, whylen, "%s: bytes=%s must be positive", kn, shown);
	if (x != floor(x))
		return fail(why, whylen, "%s: bytes=%s is not a whole number of bytes", kn, shown);
	if (x >= (double)SIZE_LIMIT)
		return fail(why, whylen, "%s: bytes=%s is too large (must be below 2^62 bytes)", kn, shown);
	*out = x;
	return 0;
}

struct pstate {
	long long val[MAX_KEYS];
	int seen[MAX_KEYS];
	double bytes;
	double prob;
};

/* Reads a probability: a decimal number (digits, a point, an exponent: "0.1", ".1", "1e-3") from 0 up to
   (not including) 1. */
static int parse_prob(const char *kn, const char *name, struct span v, double *out, char *why, size_t whylen)
{
	char buf[32], shown[SHOW_MAX + 4], *end = NULL;
	show(shown, v.p, v.n);
	int ok = v.n > 0 && v.n < sizeof buf;
	for (size_t i = 0; ok && i < v.n; i++) /* no hex, inf or nan */
		ok = strchr("0123456789.eE+-", v.p[i]) != NULL;
	double x = -1;
	if (ok) {
		memcpy(buf, v.p, v.n);
		buf[v.n] = '\0';
		x = strtod(buf, &end);
		ok = end == buf + v.n;
	}
	if (!ok || !(x >= 0 && x < 1))
		return fail(why, whylen, "%s: %s=%s must be a probability from 0 up to (not including) 1, such as 0.1",
		            kn, name, shown);
	*out = x == 0 ? 0 : x; /* "-0" is 0: the op's canonical text omits it, and parses back to +0 */
	return 0;
}

/* MxN (tile=): 0 and *out = M << 16 | N, or -1. */
static int parse_tile(struct span v, long long *out)
{
	const char *x = memchr(v.p, 'x', v.n);
	long long m, n;
	if (!x || parse_size((struct span){v.p, (size_t)(x - v.p)}, &m) ||
	    parse_size((struct span){x + 1, v.n - (size_t)(x - v.p) - 1}, &n))
		return -1;
	if (m < 8 || n < 8 || m > OP_TILE_MAX || n > OP_TILE_MAX || m % 8 || n % 8)
		return -1;
	*out = m << 16 | n;
	return 0;
}

static int parse_value(const char *kn, const struct key *key, struct span v, struct pstate *st, int idx, char *why,
                       size_t whylen)
{
	char shown[SHOW_MAX + 4];
	long long x = 0;
	int r;
	show(shown, v.p, v.n);
	switch (key->type) {
	case V_POS:
	case V_NONNEG:
		r = parse_size(v, &x);
		if (r == -2)
			return fail(why, whylen, "%s: %s=%s is too large (must be below 2^62)", kn, key->name, shown);
		if (r || (key->type == V_POS && x == 0))
			return fail(why, whylen, "%s: %s=%s must be a %s integer", kn, key->name, shown,
			            key->type == V_POS ? "positive" : "non-negative");
		break;
	case V_DTYPE:
		x = parse_dtype(v);
		if (x < 0 && !strcmp(key->name, "dtype"))
			return fail(why, whylen, "%s: unknown dtype '%s' (expected " DTYPES_EXPECTED ")", kn, shown);
		if (x < 0)
			return fail(why, whylen, "%s: unknown dtype '%s' in %s= (expected " DTYPES_EXPECTED ")", kn,
			            shown, key->name);
		break;
	case V_BOOL:
		if (!span_is(v, "0") && !span_is(v, "1"))
			return fail(why, whylen, "%s: %s=%s must be 0 or 1", kn, key->name, shown);
		x = v.p[0] == '1';
		break;
	case V_CHOICE:
		x = -1;
		for (int i = 0; key->choices[i]; i++)
			if (span_is(v, key->choices[i]))
				x = i;
		if (x < 0) {
			char list[160] = "";
			for (int i = 0; key->choices[i]; i++) {
				strncat(list, i ? "|" : "", sizeof list - strlen(list) - 1);
				strncat(list, key->choices[i], sizeof list - strlen(list) - 1);
			}
			return fail(why, whylen, "%s: %s=%s is not one of %s", kn, key->name, shown, list);
		}
		break;
	case V_BYTES:
		if (parse_bytes(kn, v, &st->bytes, why, whylen))
			return -1;
		break;
	case V_PROB:
		if (parse_prob(kn, key->name, v, &st->prob, why, whylen))
			return -1;
		break;
	case V_TILE:
		if (parse_tile(v, &x))
			return fail(why, whylen,
			            "%s: %s=%s must be MxN, M and N multiples of 8 from 8 to %d (a kernel's tile of C, "
			            "such as 128x256)",
			            kn, key->name, shown, OP_TILE_MAX);
		break;
	}
	st->val[idx] = x;
	st->seen[idx] = 1;
	return 0;
}

static int next_token(const char **pp, struct span *t)
{
	const char *p = *pp;
	while (*p && isspace((unsigned char)*p))
		p++;
	if (!*p)
		return 0;
	t->p = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	t->n = (size_t)(p - t->p);
	*pp = p;
	return 1;
}

/* Product of n sizes (each in [1, 2^62)) stays below 2^62. */
static int product_ok(const long long *v, int n)
{
	long long acc = 1;
	for (int i = 0; i < n; i++)
		if (__builtin_mul_overflow(acc, v[i], &acc) || acc >= SIZE_LIMIT)
			return 0;
	return 1;
}

static int check_acc(const char *kn, int dtype, int acc, char *why, size_t whylen)
{
	int di = arch_dtype_is_int((enum arch_dtype)dtype), ai = arch_dtype_is_int((enum arch_dtype)acc);
	if (di != ai)
		return fail(why, whylen, "%s: acc=%s does not suit dtype=%s (%s inputs accumulate in %s type)", kn,
		            op_dtype_name(acc), op_dtype_name(dtype), di ? "integer" : "float",
		            di ? "an integer" : "a float");
	return 0;
}

/* ---- each kind: defaults and the checks between keys ---- */

/* units=, margin= and busy= of a gemm or conv, keys ku, ku + 1 and ku + 2 (the chip's count is checked when it is
   predicted) */
static int take_units(const char *kn, struct op *o, const struct pstate *st, int ku, char *why, size_t whylen)
{
	if (st->seen[ku] + st->seen[ku + 1] + st->seen[ku + 2] > 1)
		return fail(
		    why, whylen,
		    "%s: more than one of units=, margin= and busy= (units= gives the kernel's units, margin= those "
		    "it leaves to another kernel, busy= those another kernel holds: give one)",
		    kn);
	o->units = st->seen[ku] ? st->val[ku] : 0;
	o->margin = st->seen[ku + 1] ? st->val[ku + 1] : 0;
	o->busy = st->seen[ku + 2] ? st->val[ku + 2] : 0;
	return 0;
}

static int build_gemm(struct op *o, const struct pstate *st, char *why, size_t whylen)
{
	const long long *v = st->val;
	o->m = v[G_M];
	o->n = v[G_N];
	o->k = v[G_K];
	if (st->seen[G_BATCH])
		o->batch = v[G_BATCH];
	o->dtype = (int)v[G_DTYPE];
	o->acc_dtype = st->seen[G_ACC] ? (int)v[G_ACC] : default_acc(o->dtype);
	o->trans = (enum op_trans)v[G_TRANS];
	o->epilogue = (enum op_epilogue)v[G_EPI];
	o->warm = (int)v[G_WARM];
	if (st->seen[G_TILE])
		o->tile_m = (int)(v[G_TILE] >> 16), o->tile_n = (int)(v[G_TILE] & 0xffff);
	if (st->seen[G_PROMOTE]) {
		if (o->dtype != DT_FP8)
			return fail(
			    why, whylen,
			    "gemm: promote=%lld with dtype=%s: promote= is for fp8 inputs (the partial sums of fp8 "
			    "MMAs added into fp32 registers every K elements)",
			    v[G_PROMOTE], op_dtype_name(o->dtype));
		o->promote = v[G_PROMOTE];
	}
	o->grouped = (int)v[G_GROUPED];
	if (check_acc("gemm", o->dtype, o->acc_dtype, why, whylen) || take_units("gemm", o, st, G_UNITS, why, whylen))
		return -1;
	const long long all[] = {o->m, o->n, o->k, o->batch};
	if (!product_ok(all, 4))
		return fail(why, whylen, "gemm: sizes overflow (m*n*k*batch > 2^62)");
	return 0;
}

static int build_attn(struct op *o, const struct pstate *st, char *why, size_t whylen)
{
	const long long *v = st->val;
	o->b = v[A_B];
	o->h = v[A_H];
	o->hkv = st->seen[A_HKV] ? v[A_HKV] : o->h;
	o->sq = v[A_SQ];
	o->skv = v[A_SKV];
	o->d = v[A_D];
	o->causal = (int)v[A_CAUSAL];
	o->dtype = (int)v[A_DTYPE];
	o->impl = (enum op_attn_impl)v[A_IMPL];
	o->dir = (enum op_dir)v[A_DIR];
	if (st->seen[A_PAGE])
		o->page = v[A_PAGE];
	if (st->seen[A_MAXKV] && v[A_MAXKV] != o->skv) /* maxkv=skv is the default: one canonical text */
		o->maxkv = v[A_MAXKV];
	o->warm = (int)v[A_WARM];
	o->dropout = st->seen[A_DROP] ? st->prob : 0;
	o->window = st->seen[A_WINDOW] ? v[A_WINDOW] : 0;
	if (o->window && !o->causal)
		return fail(why, whylen,
		            "attn: window=%lld needs causal=1 (a sliding window over the keys up to each query)",
		            o->window);
	if (o->h % o->hkv)
		return fail(why, whylen, "attn: hkv=%lld must divide h=%lld", o->hkv, o->h);
	if (st->seen[A_PAGE] && o->impl != ATTN_PAGED)
		return fail(why, whylen, "attn: page= applies only to impl=paged (not impl=%s)",
		            op_attn_impl_name(o->impl));
	if (st->seen[A_MAXKV] && o->impl != ATTN_PAGED && o->impl != ATTN_FLASH2_DECODE)
		return fail(why, whylen, "attn: maxkv= applies only to impl=paged and impl=flash2_decode (not impl=%s)",
		            op_attn_impl_name(o->impl));
	if (o->maxkv && o->maxkv < o->skv)
		return fail(why, whylen,
		            "attn: maxkv=%lld is below skv=%lld (the longest context the kernel is launched for "
		            "bounds every sequence's)",
		            o->maxkv, o->skv);
	if (o->dropout > 0 && o->impl != ATTN_FLASH1 && o->impl != ATTN_FLASH2)
		return fail(why, whylen,
		            "attn: dropout= applies to the training kernels impl=flash1 and impl=flash2 (impl=%s: %s)",
		            op_attn_impl_name(o->impl),
		            o->impl == ATTN_NAIVE    ? "its dropout is an elementwise pass of its own, an elem op"
		            : o->impl == ATTN_FLASH3 ? "FlashAttention-3 has no dropout"
		            : o->impl == ATTN_CUDNN  ? "the model's cuDNN kernel has no dropout"
		                                     : "inference has no dropout");
	if (op_attn_impl_decodes(o->impl)) {
		if (o->sq > 16)
			return fail(why, whylen,
			            "attn: impl=%s needs sq between 1 and 16, not sq=%lld (decode: one query (up to 16 "
			            "speculative) per sequence)",
			            op_attn_impl_name(o->impl), o->sq);
		if (o->dir == DIR_BWD)
			return fail(why, whylen, "attn: dir=bwd is not available with impl=%s (inference only)",
			            op_attn_impl_name(o->impl));
	}
	const long long all[] = {o->b, o->h, o->sq, o->skv, o->d};
	if (!product_ok(all, 5))
		return fail(why, whylen, "attn: sizes overflow (b*h*sq*skv*d > 2^62)");
	return 0;
}

int op_elem_is_row(enum op_elem e)
{
	return e == EL_LAYERNORM || e == EL_RMSNORM || e == EL_SOFTMAX || e == EL_LAYERNORM_BWD ||
	       e == EL_RMSNORM_BWD || e == EL_SOFTMAX_BWD;
}

static int build_elem(struct op *o, const struct pstate *st, char *why, size_t whylen)
{
	const long long *v = st->val;
	o->elem = (enum op_elem)v[E_OP];
	o->elems = v[E_N];
	o->cols = o->elems;
	o->dtype = (int)v[E_DTYPE];
	o->warm = (int)v[E_WARM];
	if (st->seen[E_COLS]) {
		if (!op_elem_is_row(o->elem))
			return fail(
			    why, whylen,
			    "elem: cols= applies only to the row ops layernorm|rmsnorm|softmax and their _bwd (not "
			    "op=%s)",
			    op_elem_name(o->elem));
		o->cols = v[E_COLS];
		if (o->elems % o->cols)
			return fail(why, whylen, "elem: cols=%lld must divide n=%lld", o->cols, o->elems);
	}
	o->strided = (int)v[E_STRIDED];
	if (o->strided && (op_elem_is_row(o->elem) || o->elem == EL_CAST_TRANSPOSE || o->elem == EL_ADAM ||
	                   o->elem == EL_READ || o->elem == EL_TRIAD))
		return fail(
		    why, whylen,
		    "elem: strided= applies to the pointwise ops of a framework (not op=%s, a kernel of its own)",
		    op_elem_name(o->elem));
	if (o->elem == EL_PERMUTE)
		o->strided = 0; /* a permute is one: the same op either way */
	o->split = (int)v[E_SPLIT];
	if (o->split && o->elem != EL_LAYERNORM_BWD && o->elem != EL_RMSNORM_BWD)
		return fail(
		    why, whylen,
		    "elem: split= applies only to op=layernorm_bwd and op=rmsnorm_bwd (a weight gradient of its "
		    "own), not op=%s",
		    op_elem_name(o->elem));
	o->eager = (int)v[E_EAGER];
	if (o->eager && o->elem != EL_SOFTMAX && o->elem != EL_SOFTMAX_BWD)
		return fail(
		    why, whylen,
		    "elem: eager= applies only to op=softmax and op=softmax_bwd (PyTorch's own kernels), not op=%s",
		    op_elem_name(o->elem));
	if (o->elem == EL_CAST || o->elem == EL_CAST_TRANSPOSE)
		o->to_dtype = st->seen[E_TO] ? (int)v[E_TO] : DT_FP32;
	else if (st->seen[E_TO])
		return fail(why, whylen, "elem: to= applies only to op=cast and op=cast_transpose (not op=%s)",
		            op_elem_name(o->elem));
	return 0;
}

static int build_copy(struct op *o, const struct pstate *st, char *why, size_t whylen)
{
	(void)why;
	(void)whylen;
	o->bytes = st->bytes;
	o->src = (enum op_place)st->val[Y_SRC];
	o->dst = (enum op_place)st->val[Y_DST];
	return 0;
}

/* Output extent of a convolution along one axis; 0 when the filter does not
   fit the padded input (all arguments valid sizes, see build_conv). */
static long long conv_extent(long long in, long long pad, long long filt, long long stride)
{
	long long padded = in + 2 * pad;
	return padded < filt ? 0 : (padded - filt) / stride + 1;
}

static int build_conv(struct op *o, const struct pstate *st, char *why, size_t whylen)
{
	const long long *v = st->val;
	o->batch = v[C_N];
	o->cin = v[C_C];
	o->ih = v[C_H];
	o->iw = v[C_W];
	o->cout = v[C_K];
	o->r = v[C_R];
	o->s = v[C_S];
	if (st->seen[C_STRIDE])
		o->stride = v[C_STRIDE];
	o->pad = v[C_PAD];
	o->dtype = (int)v[C_DTYPE];
	o->acc_dtype = st->seen[C_ACC] ? (int)v[C_ACC] : default_acc(o->dtype);
	o->warm = (int)v[C_WARM];
	o->dir = (enum op_dir)v[C_DIR];
	if (check_acc("conv", o->dtype, o->acc_dtype, why, whylen) || take_units("conv", o, st, C_UNITS, why, whylen))
		return -1;
	/* each below 2^62, so h + 2*pad < 3*2^62 fits in unsigned long long */
	if ((unsigned long long)o->ih + 2ull * (unsigned long long)o->pad >= (unsigned long long)SIZE_LIMIT ||
	    (unsigned long long)o->iw + 2ull * (unsigned long long)o->pad >= (unsigned long long)SIZE_LIMIT)
		return fail(why, whylen, "conv: sizes overflow (h+2*pad or w+2*pad > 2^62)");
	if (o->r > o->ih + 2 * o->pad)
		return fail(why, whylen, "conv: filter r=%lld is larger than the padded input (h+2*pad=%lld)", o->r,
		            o->ih + 2 * o->pad);
	if (o->s > o->iw + 2 * o->pad)
		return fail(why, whylen, "conv: filter s=%lld is larger than the padded input (w+2*pad=%lld)", o->s,
		            o->iw + 2 * o->pad);
	long long p = conv_extent(o->ih, o->pad, o->r, o->stride), q = conv_extent(o->iw, o->pad, o->s, o->stride);
	const long long in[] = {o->batch, o->cin, o->ih, o->iw};
	const long long mnk[] = {o->batch, p, q, o->cout, o->cin, o->r, o->s};
	if (!product_ok(in, 4))
		return fail(why, whylen, "conv: sizes overflow (n*c*h*w > 2^62)");
	if (!product_ok(mnk, 7))
		return fail(why, whylen, "conv: sizes overflow (n*p*q*k*c*r*s > 2^62)");
	return 0;
}

static int build_embed(struct op *o, const struct pstate *st, char *why, size_t whylen)
{
	const long long *v = st->val;
	o->tokens = v[M_TOKENS];
	o->dim = v[M_DIM];
	o->vocab = v[M_VOCAB];
	o->dtype = (int)v[M_DTYPE];
	o->warm = (int)v[M_WARM];
	const long long t[] = {o->tokens, o->dim}, w[] = {o->vocab, o->dim};
	if (!product_ok(t, 2))
		return fail(why, whylen, "embedding: sizes overflow (tokens*dim > 2^62)");
	if (!product_ok(w, 2))
		return fail(why, whylen, "embedding: sizes overflow (vocab*dim > 2^62)");
	return 0;
}

/* ---- the line ---- */

int op_parse(const char *line, const char *const *extra, struct op *op, char *why, size_t whylen)
{
	char shown[SHOW_MAX + 4];
	struct span t;
	const char *p = line;
	if (why && whylen)
		why[0] = '\0';
	if (!line || !op)
		return fail(why, whylen, "op: no line");
	if (!next_token(&p, &t))
		return fail(why, whylen, "op: empty line (expected gemm|attn|elem|copy|conv|embedding and key=value)");
	int kind = -1;
	for (int i = 0; i < OP_KIND_COUNT; i++)
		if (span_is(t, kind_names[i]))
			kind = i;
	if (kind < 0) {
		show(shown, t.p, t.n);
		return fail(why, whylen, "unknown op kind '%s' (expected gemm|attn|elem|copy|conv|embedding)", shown);
	}
	const char *kn = kind_names[kind];
	const struct key *keys = kind_keys[kind];
	struct pstate st;
	memset(&st, 0, sizeof st);
	int launch = -1; /* launch=, a key of every kind */

	while (next_token(&p, &t)) {
		const char *eq = memchr(t.p, '=', t.n);
		show(shown, t.p, t.n);
		if (!eq)
			return fail(why, whylen, "%s: '%s' is not key=value", kn, shown);
		struct span k = {t.p, (size_t)(eq - t.p)}, v = {eq + 1, t.n - k.n - 1};
		if (k.n == 0)
			return fail(why, whylen, "%s: '%s' has no key before '='", kn, shown);
		if (span_is(k, launch_key.name)) {
			if (launch >= 0)
				return fail(why, whylen, "%s: launch= given twice", kn);
			if (v.n == 0)
				return fail(why, whylen, "%s: launch= has no value", kn);
			struct pstate ls;
			memset(&ls, 0, sizeof ls);
			if (parse_value(kn, &launch_key, v, &ls, 0, why, whylen))
				return -1;
			launch = (int)ls.val[0];
			continue;
		}
		int idx = -1;
		for (int i = 0; keys[i].name; i++)
			if (span_is(k, keys[i].name))
				idx = i;
		if (idx < 0) {
			int is_extra = 0;
			for (int i = 0; extra && extra[i]; i++)
				is_extra |= span_is(k, extra[i]);
			if (is_extra)
				continue;
			char list[256] = "";
			for (int i = 0; keys[i].name; i++) {
				strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
				strncat(list, keys[i].name, sizeof list - strlen(list) - 1);
			}
			strncat(list, ", launch", sizeof list - strlen(list) - 1);
			show(shown, k.p, k.n);
			return fail(why, whylen, "%s: unknown key '%s' (expected %s)", kn, shown, list);
		}
		if (st.seen[idx])
			return fail(why, whylen, "%s: %s= given twice", kn, keys[idx].name);
		if (v.n == 0)
			return fail(why, whylen, "%s: %s= has no value", kn, keys[idx].name);
		if (parse_value(kn, &keys[idx], v, &st, idx, why, whylen))
			return -1;
	}
	for (int i = 0; keys[i].name; i++)
		if (keys[i].required && !st.seen[i])
			return fail(why, whylen, "%s: missing %s=", kn, keys[i].name);

	struct op o;
	memset(&o, 0, sizeof o);
	o.kind = (enum op_kind)kind;
	o.dtype = -1; /* copy has none */
	o.acc_dtype = -1;
	o.to_dtype = -1;
	o.batch = 1;
	o.page = 16;
	o.stride = 1;
	o.trans = TR_NN;
	o.epilogue = EPI_NONE;
	o.impl = ATTN_FLASH2;
	o.dir = DIR_FWD;
	o.src = o.dst = PLACE_HBM;
	int r = -1;
	switch (o.kind) {
	case OP_GEMM: r = build_gemm(&o, &st, why, whylen); break;
	case OP_ATTN: r = build_attn(&o, &st, why, whylen); break;
	case OP_ELEM: r = build_elem(&o, &st, why, whylen); break;
	case OP_COPY: r = build_copy(&o, &st, why, whylen); break;
	case OP_CONV: r = build_conv(&o, &st, why, whylen); break;
	case OP_EMBED: r = build_embed(&o, &st, why, whylen); break;
	case OP_KIND_COUNT: break;
	}
	if (r)
		return -1;
	o.launch = launch == LAUNCH_GRAPH ? LAUNCH_GRAPH : LAUNCH_EAGER;
	*op = o;
	return 0;
}
