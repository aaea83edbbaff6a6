/*
 * gen_emit.c -- the text of a `sim gen` trace (gen_trace.c says what it
 * holds): lines at their indentation, blocks, a model block's defs (its
 * forward, its backward, the backward that ends with its data-parallel
 * gradient bucket) and, with --moe-a2a-overlap, a MoE block's defs cut at
 * its all-to-alls. gen_train.c and gen_infer.c write the rest with these.
 */
#include "gen_trace_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const gt_block_names[BK_COUNT] = {"emb",   "dense", "moe", "head",    "mtp",     "dense_swa", "moe_swa",
                                              "mamba", "attn",  "mlp", "experts", "moe_csa", "moe_hca"};

/* ---- text output ------------------------------------------------------- */

/* a device op's line (its first word one of workloads/op.h's kinds), which launch= applies to */
static int device_op(const char *line)
{
	for (int k = 0; k < OP_KIND_COUNT; k++) {
		const char *name = op_kind_name((enum op_kind)k);
		size_t n = strlen(name);
		if (!strncmp(line, name, n) && line[n] == ' ')
			return 1;
	}
	return 0;
}

void gt_out(struct em *e, const char *fmt, ...)
{
	va_list ap;
	char head[16] = "";
	for (int i = 0; i < e->depth; i++)
		fputs("  ", e->f);
	if (e->graph) { /* only a CUDA graph's lines need their first word */
		va_start(ap, fmt);
		vsnprintf(head, sizeof head, fmt, ap);
		va_end(ap);
	}
	va_start(ap, fmt);
	vfprintf(e->f, fmt, ap);
	va_end(ap);
	if (e->graph && device_op(head))
		fputs(" launch=graph", e->f);
	fputc('\n', e->f);
}

void gt_open_block(struct em *e, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	gt_out(e, "%s {", buf);
	e->depth++;
}

void gt_close_block(struct em *e)
{
	e->depth--;
	gt_out(e, "}");
}

/* the shortest decimal text that reads back to x */
void gt_fmt_num(char *buf, size_t len, double x)
{
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, len, "%.*g", p, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

void gt_flush_lines(struct em *e, const struct lines *L, const char *after, const char *id)
{
	for (int i = 0; i < L->n; i++)
		gt_out(e, "%s%s%s%s%s", L->v[i], i == 0 && after ? " after=" : "", i == 0 && after ? after : "",
		       i == L->n - 1 && id ? " id=" : "", i == L->n - 1 && id ? id : "");
}

/* ---- block defs ------------------------------------------------------------ */

long long gt_ceil_ll(double x)
{
	return (long long)ceil(x);
}

/* ZeRO-3: gather this block's weights (dense over cd, experts over ce) */
static int zero3_gather(struct em *e, const struct block *B)
{
	int any = 0;
	if (e->c->p.zero < 3)
		return 0;
	if (e->nd > 1 && B->par.dense > 0)
		any = 1, gt_out(e, "coll op=allgather comm=%s bytes=%lld stream=zero id=ag", e->cd,
		                gt_ceil_ll(2 * B->par.dense));
	if (e->ne > 1 && B->par.expert > 0)
		any = 1, gt_out(e, "coll op=allgather comm=%s bytes=%lld stream=zero id=ag", e->ce,
		                gt_ceil_ll(2 * B->par.expert));
	return any;
}

/* the block's gradient bucket: all-reduce (ZeRO-0) or reduce-scatter */
static void grad_bucket(struct em *e, const struct block *B)
{
	const char *op = e->c->p.zero ? "reducescatter" : "allreduce";
	if (e->nd > 1 && B->par.dense > 0)
		gt_out(e, "coll op=%s comm=%s bytes=%lld stream=dp after=wg id=dpg", op, e->cd,
		       gt_ceil_ll(2 * B->par.dense));
	if (e->ne > 1 && B->par.expert > 0)
		gt_out(e, "coll op=%s comm=%s bytes=%lld stream=dp after=wg id=dpg", op, e->ce,
		       gt_ceil_ll(2 * B->par.expert));
}

/* gradient accumulation: each micro-batch's weight gradients are added into the step's (PyTorch's
   AccumulateGrad, Megatron's main_grad hook), a pass over the block's gradients in the model dtype that the
   wgrad GEMMs do not fuse (ZeRO-2/3: over this rank's shard, reduce-scattered every micro-batch); with one
   micro-batch they are the step's gradients */
static void grad_accumulate(struct em *e, struct lines *L, const struct block *B)
{
	if (gen_microbatches(e->c) > 1 && B->par.dense + B->par.expert > 0) {
		int shard = e->c->p.zero >= 2;
		double n = B->par.dense / (shard ? (double)e->nd : 1) + B->par.expert / (shard ? (double)e->ne : 1);
		gt_add(L, "elem op=add n=%lld dtype=%s", gt_ceil_ll(n), e->dt);
	}
}

void gt_emit_block_defs(struct em *e, const char *prefix, enum block_kind kind, const struct block *B)
{
	char nm[64];
	snprintf(nm, sizeof nm, "%s%s", prefix, gt_block_names[kind]);
	struct lines L;
	int layer = kind != BK_EMB && kind != BK_HEAD;
	gt_open_block(e, "def %s_fwd", nm);
	int g = zero3_gather(e, B);
	L.n = 0;
	L.wait = NULL;
	gt_steps_fwd(e, &L, B);
	if (L.wait) /* nothing after it in the block: a mark of no time that waits */
		gt_add(&L, "delay time=0ns");
	gt_flush_lines(e, &L, g ? "ag" : NULL, "lo");
	gt_close_block(e);
	if (e->c->mode == GEN_INFER)
		return;
	gt_open_block(e, "def %s_bwd", nm);
	g = zero3_gather(e, B);
	L.n = 0;
	L.wait = NULL;
	if (layer && e->c->p.recompute == GEN_RC_FULL)
		gt_steps_fwd(e, &L, B);
	gt_steps_bwd(e, &L, B);
	grad_accumulate(e, &L, B);
	gt_flush_lines(e, &L, g ? "ag" : NULL, "wg");
	if (e->c->p.zero >= 2)
		grad_bucket(e, B);
	gt_close_block(e);
	if (e->sync && e->c->p.zero < 2) {
		gt_open_block(e, "def %s_bwd_sync", nm);
		gt_out(e, "call %s_bwd", nm);
		grad_bucket(e, B);
		gt_close_block(e);
	}
	if (e->cut[kind])
		gt_emit_moe_segments(e, nm, B);
}

/* ---- the MoE all-to-all overlap (--moe-a2a-overlap) ---------------------------
 *
 * Megatron-Core's --overlap-moe-expert-parallel-comm (Megatron-Bridge's moe_a2a_overlap; megatron/core/pipeline_
 * parallel/combined_1f1b.py and models/gpt/fine_grained_callables.py): in the steady state of the pipeline
 * schedule a forward and a backward of two other micro-batches run as one step, layer against layer, and each
 * layer is cut into its attention (with the router), dispatch, experts and combine, so that one micro-batch's
 * all-to-all runs on a communication stream while the other's compute runs:
 *
 *   compute  B.r   F.a         B.m         F.m         B.a         F.r
 *   comm           B.combine   F.dispatch  B.dispatch  F.combine
 *
 * (F the forward layer, B the backward one; .a attention, router and what precedes the dispatch, .m what lies
 * between dispatch and combine, the experts; .r what follows the combine, shared experts and residual; B's
 * segments are their backward.) A MoE block's defs are also written cut there: K_fwd_a, K_fwd_m, K_fwd_r and
 * K_bwd_r, K_bwd_m, K_bwd_a (the gradient accumulation and, as K_bwd_sync_a, the gradient bucket at the end),
 * their all-to-alls written in the step with stream=ep and the waits as zero-time delays. */

/* the indices of a block's dispatch and combine all-to-alls; 0 when it has not both */
int gt_a2a_cut(const struct block *B, int *d, int *c)
{
	*d = *c = -1;
	for (int i = 0; i < B->n; i++)
		if (B->st[i].kind == ST_A2A)
			*(*d < 0 ? d : c) = i;
	return *d >= 0 && *c > *d;
}

/* steps [lo, hi) of B as a block of their own (its weights kept: the gradient accumulation is over all) */
static void sub_block(struct block *S, const struct block *B, int lo, int hi)
{
	S->n = hi - lo;
	S->par = B->par;
	memcpy(S->st, B->st + lo, (size_t)(hi - lo) * sizeof *S->st);
}

static void emit_segment(struct em *e, const char *name, const struct block *S, int bwd, const char *after,
                         const char *id)
{
	struct lines L = {.n = 0};
	gt_open_block(e, "def %s", name);
	if (bwd)
		gt_steps_bwd(e, &L, S);
	else
		gt_steps_fwd(e, &L, S);
	if (!L.n)
		gt_add(&L, "delay time=0ns");
	gt_flush_lines(e, &L, after, id);
	gt_close_block(e);
}

void gt_emit_moe_segments(struct em *e, const char *nm, const struct block *B)
{
	int d, c;
	if (!gt_a2a_cut(B, &d, &c))
		return;
	struct block *S = malloc(sizeof *S);
	if (!S) {
		e->err = 1;
		return;
	}
	char name[80];
	int g;
	snprintf(name, sizeof name, "%s_fwd_a", nm);
	gt_open_block(e, "def %s", name);
	g = zero3_gather(e, B);
	sub_block(S, B, 0, d);
	struct lines L = {.n = 0};
	gt_steps_fwd(e, &L, S);
	gt_flush_lines(e, &L, g ? "ag" : NULL, NULL);
	gt_close_block(e);
	sub_block(S, B, d + 1, c);
	snprintf(name, sizeof name, "%s_fwd_m", nm);
	emit_segment(e, name, S, 0, NULL, NULL);
	sub_block(S, B, c + 1, B->n);
	snprintf(name, sizeof name, "%s_fwd_r", nm);
	emit_segment(e, name, S, 0, NULL, "lo");
	snprintf(name, sizeof name, "%s_bwd_r", nm);
	gt_open_block(e, "def %s", name);
	g = zero3_gather(e, B);
	L.n = 0;
	L.wait = NULL;
	gt_steps_bwd(e, &L, S);
	if (!L.n)
		gt_add(&L, "delay time=0ns");
	gt_flush_lines(e, &L, g ? "ag" : NULL, NULL);
	gt_close_block(e);
	sub_block(S, B, d + 1, c);
	snprintf(name, sizeof name, "%s_bwd_m", nm);
	emit_segment(e, name, S, 1, NULL, NULL);
	sub_block(S, B, 0, d);
	snprintf(name, sizeof name, "%s_bwd_a", nm);
	gt_open_block(e, "def %s", name);
	L.n = 0;
	L.wait = NULL;
	gt_steps_bwd(e, &L, S);
	grad_accumulate(e, &L, B);
	gt_flush_lines(e, &L, NULL, "wg");
	if (e->c->p.zero >= 2)
		grad_bucket(e, B);
	gt_close_block(e);
	if (e->sync && e->c->p.zero < 2) {
		gt_open_block(e, "def %s_bwd_sync_a", nm);
		gt_out(e, "call %s_bwd_a", nm);
		grad_bucket(e, B);
		gt_close_block(e);
	}
	free(S);
}
