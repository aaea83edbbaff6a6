/*
 * gen_layout.c -- `sim gen --pipeline-layout`: Megatron-Core's pipeline
 * layout string (TransformerConfig.pipeline_model_parallel_layout, parsed by
 * megatron/core/transformer/pipeline_parallel_layer_layout.py) to the layers
 * of each model chunk (struct gen_layout, gen.h).
 *
 * The string names the model chunks in order, separated by '|': chunk q is
 * held by pipeline stage q % pp as its virtual stage q / pp. In a chunk, 'E'
 * is the embedding, 't' a transformer (decoder) layer, 'm' a multi-token-
 * prediction module, 'L' the loss; "x*n" repeats x n times, "(...)*n" a
 * group (nested groups too, a superset of Megatron-Core's two regular
 * expressions), and commas are cosmetic. "Et*3|(tt|)*29,m|L" is DeepSeek-V3
 * on 16 stages x 2: the embedding and 3 layers, 29 chunks of 2, the MTP
 * module alone, the loss alone.
 *
 * This file only reads the text; whether it fits the model and --pp is
 * gen_check's (gen.c: check_layout), as Megatron-Core's validate_layer_layout.
 */
#include "gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the expansion's bound: layers (100 K at most) plus separators, with room */
#define EXPANDED_MAX (1 << 20)
#define DEPTH_MAX    16

struct expand {
	char *out;
	size_t n;
	const char *text, *p; /* the whole text, the reading position */
	char *why;
	size_t len;
};

static int fail(struct expand *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct expand *x, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(x->why, x->len, "--pipeline-layout '%s': %s (at character %d)", x->text, msg,
	         (int)(x->p - x->text) + 1);
	return -1;
}

/* a repeat count after '*': 0 to 1000000 */
static int count(struct expand *x, long *n)
{
	if (*x->p < '0' || *x->p > '9')
		return fail(x, "expected a repeat count after '*'");
	*n = 0;
	while (*x->p >= '0' && *x->p <= '9') {
		*n = *n * 10 + (*x->p++ - '0');
		if (*n > 1000000)
			return fail(x, "repeat count over 1000000");
	}
	return 0;
}

/* the items up to the end or the ')' closing a group, appended to out */
static int sequence(struct expand *x, int depth)
{
	while (*x->p && *x->p != ')') {
		size_t start = x->n;
		char ch = *x->p;
		if (ch == '(') {
			if (depth == DEPTH_MAX)
				return fail(x, "groups nested deeper than %d", DEPTH_MAX);
			x->p++;
			if (sequence(x, depth + 1))
				return -1;
			if (*x->p != ')')
				return fail(x, "'(' without its ')'");
			x->p++;
		} else if (ch == ',') { /* cosmetic */
			x->p++;
			continue;
		} else if (strchr("EtmL|", ch)) {
			if (x->n == EXPANDED_MAX)
				return fail(x, "expands to more than %d characters", EXPANDED_MAX);
			x->out[x->n++] = ch;
			x->p++;
		} else {
			return fail(
			    x,
			    "'%c' is not a layer: expected E (embedding), t (transformer layer), m (MTP module), "
			    "L (loss), | (next chunk), x*n or (...)*n",
			    ch);
		}
		if (*x->p != '*')
			continue;
		x->p++;
		long n = 0;
		if (count(x, &n))
			return -1;
		size_t unit = x->n - start;
		if (n == 0) {
			x->n = start;
			continue;
		}
		if (unit && (size_t)(n - 1) > (EXPANDED_MAX - x->n) / unit)
			return fail(x, "expands to more than %d characters", EXPANDED_MAX);
		for (long i = 1; i < n; i++, x->n += unit)
			memcpy(x->out + x->n, x->out + start, unit);
	}
	return 0;
}

int gen_layout_parse(struct gen_layout *L, const char *text, char *why, size_t len)
{
	struct expand x = {.text = text, .p = text, .why = why, .len = len};
	memset(L, 0, sizeof *L);
	if (strlen(text) >= sizeof L->text) {
		snprintf(why, len, "--pipeline-layout: longer than %zu characters", sizeof L->text - 1);
		return -1;
	}
	snprintf(L->text, sizeof L->text, "%s", text);
	x.out = malloc(EXPANDED_MAX);
	if (!x.out) {
		snprintf(why, len, "--pipeline-layout: out of memory");
		return -1;
	}
	int rc = sequence(&x, 0);
	if (!rc && *x.p == ')')
		rc = fail(&x, "')' without its '('");
	L->mtp_chunk = -1;
	L->chunks = 1;
	long long element = 0, last_t = -1, first_m = -1;
	for (size_t i = 0; !rc && i < x.n; i++) {
		int q = L->chunks - 1;
		switch (x.out[i]) {
		case '|':
			if (L->chunks == GEN_LAYOUT_CHUNKS) {
				snprintf(why, len, "--pipeline-layout '%s': more than %d model chunks", text,
				         GEN_LAYOUT_CHUNKS);
				rc = -1;
			}
			L->chunks++;
			continue;
		case 'E':
			if (!L->emb++)
				L->emb_at = element, L->emb_chunk = q;
			break;
		case 'L':
			L->loss++;
			L->loss_at = element;
			L->loss_chunk = q;
			break;
		case 't':
			L->layers[q]++;
			last_t = element;
			break;
		default: /* 'm' */
			if (L->mtp && L->mtp_chunk != q)
				L->mtp_split = 1;
			L->mtp++;
			L->mtp_chunk = q;
			if (first_m < 0)
				first_m = element;
			break;
		}
		element++;
	}
	L->elements = element;
	L->mtp_after = first_m < 0 || first_m > last_t;
	free(x.out);
	if (rc)
		memset(L, 0, sizeof *L);
	return rc;
}
