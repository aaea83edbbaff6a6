/*
 * gen_trace.c -- writes the `simtrace 1` trace of a gen_config: one
 * training step (pipeline schedule, tensor/sequence/expert/data
 * parallelism, ZeRO, recompute, optimizer) or one inference request batch
 * (prefill, then decode steps binned by KV length).
 *
 * The model is a few kinds of block (embedding, dense transformer layer,
 * MoE layer, LM head), each a list of steps in forward order. A step knows
 * its forward ops and its backward ops (a GEMM's backward is its dgrad and
 * wgrad GEMMs, an attention's is attn dir=bwd, Megatron's tensor-parallel
 * "f" is identity forward and all-reduce backward ...); a block's backward
 * is its steps' backward in reverse (gen_steps.c turns steps into op lines).
 * Each block becomes defs:
 *
 *   B_fwd       the forward ops (ZeRO-3: gather the weights first)
 *   B_bwd       [recompute] + the backward ops (ZeRO-2/3: reduce-scatter)
 *   B_bwd_sync  B_bwd then the block's data-parallel gradient bucket, for
 *               the last micro-batch (ZeRO-0/1), so communication overlaps
 *               the rest of the backward
 *
 * Stage defs (fwd/bwd per pipeline stage and model chunk: recv, blocks,
 * send) are written once per distinct text and named by the first stage
 * that uses them; each stage's schedule is a run-length-encoded list of
 * calls in an `on pp=K` block (stages with the same text share one block).
 *
 * With --moe-a2a-overlap a MoE block is also cut at its all-to-alls
 * (B_fwd_a/_m/_r, B_bwd_r/_m/_a) and each steady step of the schedule is
 * one def fb_... that runs a forward and a backward layer against layer,
 * the all-to-alls on stream ep (see "the MoE all-to-all overlap" below).
 *
 * Labels: lo = a block's last forward op, wg = its last backward op (its
 * gradients are complete), dpg = a gradient collective, ag = a ZeRO-3
 * gather. Sends run on their own streams (p2p_fwd, p2p_bwd), one peer each,
 * after the op that produced the data; recvs on the compute stream.
 */
#include "gen_trace_int.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BINS 8 /* decode KV-length groups */

static const char *const block_names[BK_COUNT] = {"emb",   "dense", "moe", "head",    "mtp",     "dense_swa", "moe_swa",
                                                  "mamba", "attn",  "mlp", "experts", "moe_csa", "moe_hca"};

/* ---- text output ------------------------------------------------------- */

static void out(struct em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(struct em *e, const char *fmt, ...)
{
	va_list ap;
	for (int i = 0; i < e->depth; i++)
		fputs("  ", e->f);
	va_start(ap, fmt);
	vfprintf(e->f, fmt, ap);
	va_end(ap);
	fputc('\n', e->f);
}

static void open_block(struct em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void open_block(struct em *e, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	out(e, "%s {", buf);
	e->depth++;
}

static void close_block(struct em *e)
{
	e->depth--;
	out(e, "}");
}

/* the shortest decimal text that reads back to x */
static void fmt_num(char *buf, size_t len, double x)
{
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, len, "%.*g", p, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

static void flush_lines(struct em *e, const struct lines *L, const char *after, const char *id)
{
	for (int i = 0; i < L->n; i++)
		out(e, "%s%s%s%s%s", L->v[i], i == 0 && after ? " after=" : "", i == 0 && after ? after : "",
		    i == L->n - 1 && id ? " id=" : "", i == L->n - 1 && id ? id : "");
}

/* ---- block defs ------------------------------------------------------------ */

static long long ceil_ll(double x)
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
		any = 1,
		out(e, "coll op=allgather comm=%s bytes=%lld stream=zero id=ag", e->cd, ceil_ll(2 * B->par.dense));
	if (e->ne > 1 && B->par.expert > 0)
		any = 1,
		out(e, "coll op=allgather comm=%s bytes=%lld stream=zero id=ag", e->ce, ceil_ll(2 * B->par.expert));
	return any;
}

/* the block's gradient bucket: all-reduce (ZeRO-0) or reduce-scatter */
static void grad_bucket(struct em *e, const struct block *B)
{
	const char *op = e->c->p.zero ? "reducescatter" : "allreduce";
	if (e->nd > 1 && B->par.dense > 0)
		out(e, "coll op=%s comm=%s bytes=%lld stream=dp after=wg id=dpg", op, e->cd, ceil_ll(2 * B->par.dense));
	if (e->ne > 1 && B->par.expert > 0)
		out(e, "coll op=%s comm=%s bytes=%lld stream=dp after=wg id=dpg", op, e->ce,
		    ceil_ll(2 * B->par.expert));
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
		gt_add(L, "elem op=add n=%lld dtype=%s", ceil_ll(n), e->dt);
	}
}

static void emit_moe_segments(struct em *e, const char *nm, const struct block *B);

static void emit_block_defs(struct em *e, const char *prefix, enum block_kind kind, const struct block *B)
{
	char nm[64];
	snprintf(nm, sizeof nm, "%s%s", prefix, block_names[kind]);
	struct lines L;
	int layer = kind != BK_EMB && kind != BK_HEAD;
	open_block(e, "def %s_fwd", nm);
	int g = zero3_gather(e, B);
	L.n = 0;
	L.wait = NULL;
	gt_steps_fwd(e, &L, B);
	if (L.wait) /* nothing after it in the block: a mark of no time that waits */
		gt_add(&L, "delay time=0ns");
	flush_lines(e, &L, g ? "ag" : NULL, "lo");
	close_block(e);
	if (e->c->mode == GEN_INFER)
		return;
	open_block(e, "def %s_bwd", nm);
	g = zero3_gather(e, B);
	L.n = 0;
	L.wait = NULL;
	if (layer && e->c->p.recompute == GEN_RC_FULL)
		gt_steps_fwd(e, &L, B);
	gt_steps_bwd(e, &L, B);
	grad_accumulate(e, &L, B);
	flush_lines(e, &L, g ? "ag" : NULL, "wg");
	if (e->c->p.zero >= 2)
		grad_bucket(e, B);
	close_block(e);
	if (e->sync && e->c->p.zero < 2) {
		open_block(e, "def %s_bwd_sync", nm);
		out(e, "call %s_bwd", nm);
		grad_bucket(e, B);
		close_block(e);
	}
	if (e->cut[kind])
		emit_moe_segments(e, nm, B);
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
static int a2a_cut(const struct block *B, int *d, int *c)
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
	open_block(e, "def %s", name);
	if (bwd)
		gt_steps_bwd(e, &L, S);
	else
		gt_steps_fwd(e, &L, S);
	if (!L.n)
		gt_add(&L, "delay time=0ns");
	flush_lines(e, &L, after, id);
	close_block(e);
}

static void emit_moe_segments(struct em *e, const char *nm, const struct block *B)
{
	int d, c;
	if (!a2a_cut(B, &d, &c))
		return;
	struct block *S = malloc(sizeof *S);
	if (!S) {
		e->err = 1;
		return;
	}
	char name[80];
	int g;
	snprintf(name, sizeof name, "%s_fwd_a", nm);
	open_block(e, "def %s", name);
	g = zero3_gather(e, B);
	sub_block(S, B, 0, d);
	struct lines L = {.n = 0};
	gt_steps_fwd(e, &L, S);
	flush_lines(e, &L, g ? "ag" : NULL, NULL);
	close_block(e);
	sub_block(S, B, d + 1, c);
	snprintf(name, sizeof name, "%s_fwd_m", nm);
	emit_segment(e, name, S, 0, NULL, NULL);
	sub_block(S, B, c + 1, B->n);
	snprintf(name, sizeof name, "%s_fwd_r", nm);
	emit_segment(e, name, S, 0, NULL, "lo");
	snprintf(name, sizeof name, "%s_bwd_r", nm);
	open_block(e, "def %s", name);
	g = zero3_gather(e, B);
	L.n = 0;
	L.wait = NULL;
	gt_steps_bwd(e, &L, S);
	if (!L.n)
		gt_add(&L, "delay time=0ns");
	flush_lines(e, &L, g ? "ag" : NULL, NULL);
	close_block(e);
	sub_block(S, B, d + 1, c);
	snprintf(name, sizeof name, "%s_bwd_m", nm);
	emit_segment(e, name, S, 1, NULL, NULL);
	sub_block(S, B, 0, d);
	snprintf(name, sizeof name, "%s_bwd_a", nm);
	open_block(e, "def %s", name);
	L.n = 0;
	L.wait = NULL;
	gt_steps_bwd(e, &L, S);
	grad_accumulate(e, &L, B);
	flush_lines(e, &L, NULL, "wg");
	if (e->c->p.zero >= 2)
		grad_bucket(e, B);
	close_block(e);
	if (e->sync && e->c->p.zero < 2) {
		open_block(e, "def %s_bwd_sync_a", nm);
		out(e, "call %s_bwd_a", nm);
		grad_bucket(e, B);
		close_block(e);
	}
	free(S);
}

/* ---- training: stages and schedule ----------------------------------------- */

enum pass { PASS_F, PASS_B, PASS_BS, PASS_COUNT };
static const char *const pass_names[PASS_COUNT] = {"fwd", "bwd", "bwd_sync"};

/* captured text: what out() writes between cap_begin and cap_end */
struct cap {
	FILE *saved, *f;
	int depth;
	char *buf;
	size_t len;
};

static void cap_begin(struct em *e, struct cap *k)
{
	k->buf = NULL;
	k->len = 0;
	k->f = open_memstream(&k->buf, &k->len);
	k->saved = e->f;
	k->depth = e->depth;
	if (!k->f) {
		e->err = 1;
		k->f = fopen("/dev/null", "w");
	}
	e->f = k->f;
	e->depth = 0;
}

static char *cap_end(struct em *e, struct cap *k)
{
	if (k->f && fclose(k->f))
		e->err = 1;
	e->f = k->saved;
	e->depth = k->depth;
	if (!k->buf)
		e->err = 1;
	return k->buf;
}

/* writes captured text at the current indentation */
static void put_text(struct em *e, const char *text)
{
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		int n = nl ? (int)(nl - text) : (int)strlen(text);
		out(e, "%.*s", n, text);
		text += n + (nl != NULL);
	}
}

static int same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* the layers of one chunk as runs of one kind (dense, MoE, each windowed or not); gen_check bounds the runs
   of a chunk (GEN_RUNS_MAX) */
struct runs {
	enum block_kind kind[GEN_RUNS_MAX];
	long long n[GEN_RUNS_MAX];
	int count;
};

static void chunk_runs(const struct gen_config *c, long long stage, long long chunk, struct runs *r)
{
	long long lc = gen_chunk_layers(c, stage, chunk), first = gen_chunk_first_layer(c, stage, chunk);
	r->count = 0;
	for (long long l = first; l < first + lc; l++) {
		enum block_kind k = gt_layer_kind(&c->m, l);
		if (r->count && r->kind[r->count - 1] == k) {
			r->n[r->count - 1]++;
			continue;
		}
		if (r->count == GEN_RUNS_MAX)
			abort(); /* gen_check refuses a model with more */
		r->kind[r->count] = k;
		r->n[r->count++] = 1;
	}
}

/* Writes runs r (reversed for a backward) through one(e, kind, n, ctx), with a periodic stretch of them as
   one repeat block: the windowed and full layers of a model that alternates them become `repeat 18 { ... }`. */
typedef void (*run_fn)(struct em *e, enum block_kind kind, long long n, const void *ctx);
static void emit_runs_of(struct em *e, const struct runs *r, int reverse, run_fn one, const void *ctx)
{
	enum block_kind k[GEN_RUNS_MAX];
	long long n[GEN_RUNS_MAX];
	int count = r->count;
	for (int j = 0; j < count; j++) {
		int i = reverse ? count - 1 - j : j;
		k[j] = r->kind[i], n[j] = r->n[i];
	}
	/* the first offset (0-2) and the shortest period (1-8) that repeat at least twice from there */
	for (int o = 0; o < 3 && o < count; o++)
		for (int p = 1; p <= 8 && (count - o) / p >= 2; p++) {
			int ok = 1;
			for (int i = o + p; i < count && ok; i++)
				ok = k[i] == k[o + (i - o) % p] && n[i] == n[o + (i - o) % p];
			if (!ok)
				continue;
			for (int i = 0; i < o; i++)
				one(e, k[i], n[i], ctx);
			open_block(e, "repeat %d", (count - o) / p);
			for (int i = o; i < o + p; i++)
				one(e, k[i], n[i], ctx);
			close_block(e);
			for (int i = o + (count - o) / p * p; i < count; i++)
				one(e, k[i], n[i], ctx);
			return;
		}
	for (int i = 0; i < count; i++)
		one(e, k[i], n[i], ctx);
}

struct call_ctx {
	const char *prefix, *sfx;
};

static void call_one(struct em *e, enum block_kind kind, long long n, const void *ctx)
{
	const struct call_ctx *x = ctx;
	if (n > 1)
		open_block(e, "repeat %lld", n);
	out(e, "call %s%s_%s", x->prefix, block_names[kind], x->sfx);
	if (n > 1)
		close_block(e);
}

static void call_runs(struct em *e, const struct runs *r, int reverse, const char *prefix, const char *sfx)
{
	struct call_ctx x = {prefix, sfx};
	emit_runs_of(e, r, reverse, call_one, &x);
}

/* a chunk's MTP modules, after its layers (backward: before them) */
static void call_mtp(struct em *e, long long n, const char *sfx)
{
	if (n > 1)
		open_block(e, "repeat %lld", n);
	if (n > 0)
		out(e, "call mtp_%s", sfx);
	if (n > 1)
		close_block(e);
}

static long long p2p_bytes(const struct em *e)
{
	const struct gen_config *c = e->c;
	long long a = c->p.micro_batch * gen_seq_local(c) * e->h * 2;
	return c->p.sp ? a / e->t : a;
}

/* the body of a stage def: one micro-batch's forward or backward of one
   model chunk on one stage */
static void stage_body(struct em *e, long long stage, long long chunk, enum pass p)
{
	const struct gen_config *c = e->c;
	int first = stage == 0 && chunk == 0, last = stage == c->p.pp - 1 && chunk == c->p.vstages - 1;
	long long bytes = p2p_bytes(e);
	const char *next = stage < c->p.pp - 1 ? "pp+1" : NULL, *prev = stage > 0 ? "pp-1" : NULL;
	char wrap[32];
	snprintf(wrap, sizeof wrap, stage ? "pp-%lld" : "pp+%lld", c->p.pp - 1); /* last <-> first stage */
	struct runs r;
	long long mtp = gen_chunk_mtp(c, stage, chunk);
	chunk_runs(c, stage, chunk, &r);
	if (p == PASS_F) {
		out(e, "mark name=forward");
		if (first)
			out(e, "call emb_fwd");
		else
			out(e, "recv peer=%s bytes=%lld", prev ? prev : wrap, bytes);
		call_runs(e, &r, 0, "", "fwd");
		call_mtp(e, mtp, "fwd");
		if (last)
			out(e, "call head_fwd");
		else
			out(e, "send peer=%s bytes=%lld stream=p2p_fwd after=lo", next ? next : wrap, bytes);
		return;
	}
	out(e, "mark name=backward");
	if (last)
		out(e, "call head_%s", pass_names[p]);
	else
		out(e, "recv peer=%s bytes=%lld", next ? next : wrap, bytes);
	call_mtp(e, mtp, pass_names[p]);
	call_runs(e, &r, 1, "", pass_names[p]);
	if (first)
		out(e, "call emb_%s", pass_names[p]);
	else
		out(e, "send peer=%s bytes=%lld stream=p2p_bwd after=wg", prev ? prev : wrap, bytes);
}

static void def_name(const struct em *e, char *buf, size_t len, enum pass p, long long chunk, long long stage)
{
	char cs[32] = "", ss[32] = "";
	if (e->c->p.vstages > 1)
		snprintf(cs, sizeof cs, "_c%lld", chunk);
	if (e->c->p.pp > 1)
		snprintf(ss, sizeof ss, "_pp%lld", stage);
	snprintf(buf, len, "%s%s%s", pass_names[p], cs, ss);
}

/* stage defs: text[(stage * v + chunk) * PASS_COUNT + pass], and the first
   stage whose text is the same (it names the def) */
struct merged_defs;
struct stage_defs {
	char **text;
	long long *first;
	long long n;
	struct merged_defs *md; /* --moe-a2a-overlap: the steady steps' merged defs (NULL: none) */
};

static long long sd_index(const struct gen_config *c, long long stage, long long chunk, enum pass p)
{
	return (stage * c->p.vstages + chunk) * PASS_COUNT + p;
}

static int build_stage_defs(struct em *e, struct stage_defs *sd, int npass)
{
	const struct gen_config *c = e->c;
	sd->n = c->p.pp * c->p.vstages * PASS_COUNT;
	sd->text = calloc((size_t)sd->n, sizeof *sd->text);
	sd->first = calloc((size_t)sd->n, sizeof *sd->first);
	if (!sd->text || !sd->first)
		return -1;
	for (long long s = 0; s < c->p.pp; s++)
		for (long long ch = 0; ch < c->p.vstages; ch++)
			for (int p = 0; p < npass; p++) {
				struct cap k;
				long long i = sd_index(c, s, ch, (enum pass)p);
				cap_begin(e, &k);
				stage_body(e, s, ch, (enum pass)p);
				sd->text[i] = cap_end(e, &k);
				sd->first[i] = s;
				if (s > 0 && same(sd->text[i], sd->text[sd_index(c, s - 1, ch, (enum pass)p)]))
					sd->first[i] = sd->first[sd_index(c, s - 1, ch, (enum pass)p)];
			}
	for (long long i = 0; i < sd->n; i++) {
		long long s = i / PASS_COUNT / c->p.vstages;
		if (!sd->text[i] || sd->first[i] != s)
			continue;
		char nm[64];
		def_name(e, nm, sizeof nm, (enum pass)(i % PASS_COUNT), i / PASS_COUNT % c->p.vstages, s);
		open_block(e, "def %s", nm);
		put_text(e, sd->text[i]);
		close_block(e);
	}
	return e->err ? -1 : 0;
}

static void free_stage_defs(struct stage_defs *sd)
{
	for (long long i = 0; sd->text && i < sd->n; i++)
		free(sd->text[i]);
	free(sd->text);
	free(sd->first);
}

/* ---- --moe-a2a-overlap: a steady step's forward and backward as one ------------ */

/* a MoE block's all-to-all on the communication stream, after label `after`, labelled `id` */
static void a2a_on_stream(struct em *e, enum block_kind k, const char *after, const char *id)
{
	struct lines L = {.n = 0};
	gt_a2a_text(e, &L, &e->a2a[k]);
	gt_append(&L, " stream=ep after=%s id=%s", after, id);
	flush_lines(e, &L, NULL, NULL);
}

/* forward layer fk against backward layer bk, both cut at their all-to-alls (see emit_moe_segments) */
static void pair_layers(struct em *e, enum block_kind fk, enum block_kind bk, const char *bpass)
{
	const char *f = block_names[fk], *b = block_names[bk];
	out(e, "call %s_bwd_r", b);
	out(e, "delay time=0ns id=xbr");
	a2a_on_stream(e, bk, "xbr", "xbc"); /* B's combine, backward */
	out(e, "call %s_fwd_a", f);
	out(e, "delay time=0ns id=xfa");
	a2a_on_stream(e, fk, "xfa", "xfd"); /* F's dispatch */
	out(e, "delay time=0ns after=xbc");
	out(e, "call %s_bwd_m", b);
	out(e, "delay time=0ns id=xbm");
	a2a_on_stream(e, bk, "xbm", "xbd"); /* B's dispatch, backward */
	out(e, "delay time=0ns after=xfd");
	out(e, "call %s_fwd_m", f);
	out(e, "delay time=0ns id=xfm");
	a2a_on_stream(e, fk, "xfm", "xfc"); /* F's combine */
	out(e, "delay time=0ns after=xbd");
	out(e, "call %s_%s_a", b, bpass);
	out(e, "delay time=0ns after=xfc");
	out(e, "call %s_fwd_r", f);
}

/* a chunk's layers one by one in the order they run (a backward's last first); returns the count */
static long long layer_list(const struct gen_config *c, long long stage, long long chunk, int reverse,
                            enum block_kind *out_k)
{
	struct runs r;
	long long n = 0;
	chunk_runs(c, stage, chunk, &r);
	for (int j = 0; j < r.count; j++) {
		int i = reverse ? r.count - 1 - j : j;
		for (long long q = 0; q < r.n[i]; q++)
			out_k[n++] = r.kind[i];
	}
	return n;
}

/* the forward of chunk fch and the backward (pass bp) of chunk bch of stage `stage` as one step: both prologues,
   then layer against layer (cut MoE layers interleaved, others one after the other; a run of like pairs as a
   repeat), what is left of either, then the epilogues. The region is marked backward. */
static void merged_body(struct em *e, long long stage, long long fch, long long bch, enum pass bp)
{
	const struct gen_config *c = e->c;
	long long pp = c->p.pp, v = c->p.vstages, bytes = p2p_bytes(e);
	int ffirst = stage == 0 && fch == 0, flast = stage == pp - 1 && fch == v - 1;
	int bfirst = stage == 0 && bch == 0, blast = stage == pp - 1 && bch == v - 1;
	char wrap[32], next[32], prev[32];
	snprintf(wrap, sizeof wrap, stage ? "pp-%lld" : "pp+%lld", pp - 1);
	snprintf(next, sizeof next, "%s", stage < pp - 1 ? "pp+1" : wrap);
	snprintf(prev, sizeof prev, "%s", stage > 0 ? "pp-1" : wrap);
	const char *bpn = pass_names[bp];
	enum block_kind *fl = malloc(2 * (size_t)(c->m.layers + 1) * sizeof *fl), *bl = fl + c->m.layers + 1;
	if (!fl) {
		e->err = 1;
		return;
	}
	long long nf = layer_list(c, stage, fch, 0, fl), nb = layer_list(c, stage, bch, 1, bl), k = 0;
	out(e, "mark name=forward");
	if (ffirst)
		out(e, "call emb_fwd");
	else
		out(e, "recv peer=%s bytes=%lld", prev, bytes);
	out(e, "mark name=backward");
	if (blast)
		out(e, "call head_%s", bpn);
	else
		out(e, "recv peer=%s bytes=%lld", next, bytes);
	call_mtp(e, gen_chunk_mtp(c, stage, bch), bpn);
	while (k < nf && k < nb) {
		long long r = 1;
		while (k + r < nf && k + r < nb && fl[k + r] == fl[k] && bl[k + r] == bl[k])
			r++;
		if (r > 1)
			open_block(e, "repeat %lld", r);
		if (e->cut[fl[k]] && e->cut[bl[k]]) {
			pair_layers(e, fl[k], bl[k], bpn);
		} else {
			out(e, "call %s_fwd", block_names[fl[k]]);
			out(e, "call %s_%s", block_names[bl[k]], bpn);
		}
		if (r > 1)
			close_block(e);
		k += r;
	}
	for (long long i = k; i < nf; i++)
		out(e, "call %s_fwd", block_names[fl[i]]);
	call_mtp(e, gen_chunk_mtp(c, stage, fch), "fwd");
	if (flast)
		out(e, "call head_fwd");
	else
		out(e, "send peer=%s bytes=%lld stream=p2p_fwd after=lo", next, bytes);
	for (long long i = k; i < nb; i++)
		out(e, "call %s_%s", block_names[bl[i]], bpn);
	if (bfirst)
		out(e, "call emb_%s", bpn);
	else
		out(e, "send peer=%s bytes=%lld stream=p2p_bwd after=wg", prev, bytes);
	free(fl);
}

/* the merged defs, text[((stage * v + fch) * v + bch) * PASS_COUNT + pass] for the steps a schedule has, named
   by the first stage with the same text: fb_cF_bwd_cB_ppS */
struct merged_defs {
	char **text;
	long long *first;
	long long n;
};

static long long md_index(const struct gen_config *c, long long stage, long long fch, long long bch, enum pass p)
{
	return ((stage * c->p.vstages + fch) * c->p.vstages + bch) * PASS_COUNT + p;
}

static void merged_name(const struct em *e, char *buf, size_t len, long long fch, long long bch, enum pass p,
                        long long stage)
{
	char fc[32] = "", bc[32] = "", ss[32] = "";
	if (e->c->p.vstages > 1) {
		snprintf(fc, sizeof fc, "_c%lld", fch);
		snprintf(bc, sizeof bc, "_c%lld", bch);
	}
	if (e->c->p.pp > 1)
		snprintf(ss, sizeof ss, "_pp%lld", stage);
	snprintf(buf, len, "fb%s_%s%s%s", fc, pass_names[p], bc, ss);
}

/* one step of a stage's schedule: a forward, a backward, or both (1F1B's
   steady state); each is a call index pass * v + chunk, -1 for none */
struct unit {
	long long a, b;
};

static long long fchunk(const struct gen_config *c, long long i)
{
	return i / c->p.pp % c->p.vstages;
}

static long long bchunk(const struct gen_config *c, long long j)
{
	return c->p.vstages - 1 - j / c->p.pp % c->p.vstages;
}

/* Megatron-LM's schedules: GPipe (all forwards, then all backwards); 1F1B
   (stage K: pp-K-1 warm-up forwards, then one forward and one backward,
   then the remaining backwards); interleaved 1F1B over v model chunks
   (warm-up (pp-K-1)*2 + (v-1)*pp chunk forwards). Returns the count. */
static long long schedule(const struct gen_config *c, long long stage, struct unit *u)
{
	long long v = c->p.vstages, mb = gen_microbatches(c) * v, n = 0, w;
	if (c->p.sched == GEN_GPIPE)
		w = mb;
	else if (c->p.sched == GEN_INTERLEAVED)
		w = (c->p.pp - stage - 1) * 2 + (v - 1) * c->p.pp;
	else
		w = c->p.pp - stage - 1;
	/* --moe-a2a-overlap: one more warm-up forward, so that each steady step's forward and backward are of two
	   micro-batches (as Megatron-Core's schedules.py adds one with the overlap on) */
	if (c->p.sched != GEN_GPIPE)
		w += c->p.moe_overlap;
	w = w < mb ? w : mb;
	for (long long i = 0; i < w; i++)
		u[n++] = (struct unit){PASS_F * v + fchunk(c, i), -1};
	for (long long j = 0; j < mb - w; j++)
		u[n++] = (struct unit){PASS_F * v + fchunk(c, w + j), PASS_B * v + bchunk(c, j)};
	for (long long j = mb - w; j < mb; j++)
		u[n++] = (struct unit){PASS_B * v + bchunk(c, j), -1};
	return n;
}

/* the last backward of each chunk carries the gradient buckets */
static int mark_sync(const struct gen_config *c, struct unit *u, long long n)
{
	long long v = c->p.vstages;
	char *seen = calloc((size_t)v, 1);
	if (!seen)
		return -1;
	for (long long i = n - 1; i >= 0; i--)
		for (int slot = 1; slot >= 0; slot--) {
			long long *x = slot ? &u[i].b : &u[i].a;
			if (*x >= 0 && *x / v == PASS_B && !seen[*x % v]) {
				seen[*x % v] = 1;
				*x += v; /* PASS_BS */
			}
		}
	free(seen);
	return 0;
}

/* the step of a stage's schedule u[0..n) (the last backward of each chunk marked for the gradient buckets);
   returns n, or -1 when memory runs out (*u freed by the caller) */
static long long stage_units(struct em *e, long long stage, struct unit **u)
{
	long long cap = 2 * gen_microbatches(e->c) * e->c->p.vstages + 2;
	*u = malloc((size_t)cap * sizeof **u);
	if (!*u)
		return -1;
	long long n = schedule(e->c, stage, *u);
	if (e->sync && e->c->p.zero < 2 && mark_sync(e->c, *u, n))
		return -1;
	return n;
}

static int build_merged_defs(struct em *e, struct merged_defs *md)
{
	const struct gen_config *c = e->c;
	long long v = c->p.vstages;
	md->n = c->p.pp * v * v * PASS_COUNT;
	md->text = calloc((size_t)md->n, sizeof *md->text);
	md->first = calloc((size_t)md->n, sizeof *md->first);
	if (!md->text || !md->first)
		return -1;
	for (long long s = 0; s < c->p.pp; s++) {
		struct unit *u = NULL;
		long long n = stage_units(e, s, &u);
		for (long long i = 0; i < n; i++) {
			if (u[i].a < 0 || u[i].b < 0)
				continue;
			enum pass p = (enum pass)(u[i].b / v);
			long long fch = u[i].a % v, bch = u[i].b % v, x = md_index(c, s, fch, bch, p);
			if (md->text[x])
				continue;
			struct cap k;
			cap_begin(e, &k);
			merged_body(e, s, fch, bch, p);
			md->text[x] = cap_end(e, &k);
			md->first[x] = s;
			long long y = s > 0 ? md_index(c, s - 1, fch, bch, p) : -1;
			if (y >= 0 && same(md->text[x], md->text[y]))
				md->first[x] = md->first[y];
		}
		free(u);
		if (n < 0)
			return -1;
	}
	for (long long x = 0; x < md->n; x++) {
		long long s = x / PASS_COUNT / v / v, fch = x / PASS_COUNT / v % v, bch = x / PASS_COUNT % v;
		if (!md->text[x] || md->first[x] != s)
			continue;
		char nm[80];
		merged_name(e, nm, sizeof nm, fch, bch, (enum pass)(x % PASS_COUNT), s);
		open_block(e, "def %s", nm);
		put_text(e, md->text[x]);
		close_block(e);
	}
	return e->err ? -1 : 0;
}

static void free_merged_defs(struct merged_defs *md)
{
	for (long long i = 0; md->text && i < md->n; i++)
		free(md->text[i]);
	free(md->text);
	free(md->first);
}

static void call_unit(struct em *e, const struct stage_defs *sd, long long stage, long long x)
{
	long long v = e->c->p.vstages;
	enum pass p = (enum pass)(x / v);
	char nm[64];
	def_name(e, nm, sizeof nm, p, x % v, sd->first[sd_index(e->c, stage, x % v, p)]);
	out(e, "call %s", nm);
}

/* a unit and how many times it repeats in a row */
struct run {
	struct unit u;
	long long n;
};

/* runs in a repeated pattern: the interleaved schedule's cycle over its
   chunks takes two runs a virtual stage (a forward chunk's last micro-batches
   beside the backward of one, its first beside the next's) */
static long long max_period(const struct em *e)
{
	return e->c->p.vstages > 4 ? 2 * e->c->p.vstages : 8;
}

static int runs_equal(const struct run *a, const struct run *b, long long q)
{
	for (long long k = 0; k < q; k++)
		if (a[k].u.a != b[k].u.a || a[k].u.b != b[k].u.b || a[k].n != b[k].n)
			return 0;
	return 1;
}

static void emit_run(struct em *e, const struct stage_defs *sd, long long stage, const struct run *r)
{
	if (r->n > 1)
		open_block(e, "repeat %lld", r->n);
	if (sd->md && r->u.a >= 0 && r->u.b >= 0) { /* --moe-a2a-overlap: the two as one */
		long long v = e->c->p.vstages, fch = r->u.a % v, bch = r->u.b % v;
		enum pass p = (enum pass)(r->u.b / v);
		char nm[80];
		merged_name(e, nm, sizeof nm, fch, bch, p, sd->md->first[md_index(e->c, stage, fch, bch, p)]);
		out(e, "call %s", nm);
	} else {
		call_unit(e, sd, stage, r->u.a);
		if (r->u.b >= 0)
			call_unit(e, sd, stage, r->u.b);
	}
	if (r->n > 1)
		close_block(e);
}

/* Writes runs, folding a pattern of up to max_period runs that recurs
   (the interleaved schedule's chunk alternation) into one repeat. */
static void emit_runs(struct em *e, const struct stage_defs *sd, long long stage, const struct run *r, long long n)
{
	for (long long i = 0; i < n;) {
		long long bq = 0, br = 1;
		for (long long q = 2; q <= max_period(e) && i + 2 * q <= n; q++) {
			long long k = 1;
			while (i + (k + 1) * q <= n && runs_equal(r + i, r + i + k * q, q))
				k++;
			if (k >= 2 && q * k > bq * br)
				bq = q, br = k;
		}
		if (!bq) {
			emit_run(e, sd, stage, &r[i++]);
			continue;
		}
		open_block(e, "repeat %lld", br);
		for (long long k = 0; k < bq; k++)
			emit_run(e, sd, stage, &r[i + k]);
		close_block(e);
		i += bq * br;
	}
}

static int emit_schedule(struct em *e, const struct stage_defs *sd, long long stage)
{
	long long cap = 2 * gen_microbatches(e->c) * e->c->p.vstages + 2, nr = 0;
	struct unit *u = NULL;
	struct run *r = malloc((size_t)cap * sizeof *r);
	long long n = stage_units(e, stage, &u);
	int rc = -1;
	if (!r || n < 0)
		goto out;
	for (long long i = 0; i < n; i++) {
		if (nr && r[nr - 1].u.a == u[i].a && r[nr - 1].u.b == u[i].b)
			r[nr - 1].n++;
		else
			r[nr++] = (struct run){u[i], 1};
	}
	emit_runs(e, sd, stage, r, nr);
	rc = 0;
out:
	free(u);
	free(r);
	return rc;
}

static void memory_line(struct em *e, long long stage)
{
	struct gen_memory m;
	gen_stage_memory(e->c, stage, &m);
	out(e, "memory params=%.0f grads=%.0f optimizer=%.0f activations=%.0f kv=%.0f workspace=%.0f", ceil(m.params),
	    ceil(m.grads), ceil(m.optimizer), ceil(m.activations), ceil(m.kv), ceil(m.workspace));
}

/* unscale (fp16), [bring the states in], Adam on this rank's shard in fp32,
   [send them back], cast to the model dtype, [gather the updated shards] */
static void optimizer(struct em *e, long long stage)
{
	const struct gen_config *c = e->c;
	struct gen_params ps = gen_stage_params(c, stage);
	int z = c->p.zero;
	long long n = ceil_ll(ps.dense / (z ? (double)e->nd : 1) + ps.expert / (z ? (double)e->ne : 1));
	struct lines L = {.n = 0};
	out(e, "mark name=optimizer");
	if (c->mode == GEN_TRAIN && c->p.grad_sync == GEN_GS_AFTER && z < 2) {
		/* every gradient at once, on the compute stream after the backward */
		const char *op = z ? "reducescatter" : "allreduce";
		if (e->nd > 1 && ps.dense > 0)
			gt_add(&L, "coll op=%s comm=%s bytes=%lld", op, e->cd, ceil_ll(2 * ps.dense));
		if (e->ne > 1 && ps.expert > 0)
			gt_add(&L, "coll op=%s comm=%s bytes=%lld", op, e->ce, ceil_ll(2 * ps.expert));
	}
	if (c->p.dtype == GEN_FP16)
		gt_add(&L, "elem op=mul n=%lld dtype=fp32", n); /* unscale the loss-scaled gradients */
	if (c->p.offload)
		gt_add(&L, "copy bytes=%lld src=host dst=hbm", 12 * n);
	gt_add(&L, "elem op=adam n=%lld dtype=fp32", n);
	if (c->p.offload)
		gt_add(&L, "copy bytes=%lld src=hbm dst=host", 12 * n);
	gt_add(&L, "elem op=cast n=%lld dtype=fp32 to=%s", n, c->p.dtype == GEN_FP16 ? "fp16" : "bf16");
	if ((z == 1 || z == 2) && e->nd > 1)
		gt_add(&L, "coll op=allgather comm=%s bytes=%lld", e->cd, ceil_ll(2 * ps.dense));
	if ((z == 1 || z == 2) && e->ne > 1 && ps.expert > 0)
		gt_add(&L, "coll op=allgather comm=%s bytes=%lld", e->ce, ceil_ll(2 * ps.expert));
	flush_lines(e, &L, e->sync ? "dpg" : NULL, NULL);
}

static int stage_blocks(struct em *e, const struct stage_defs *sd)
{
	long long pp = e->c->p.pp;
	char **text = calloc((size_t)pp, sizeof *text);
	if (!text)
		return -1;
	for (long long s = 0; s < pp; s++) {
		struct cap k;
		cap_begin(e, &k);
		memory_line(e, s);
		if (emit_schedule(e, sd, s))
			e->err = 1;
		optimizer(e, s);
		text[s] = cap_end(e, &k);
	}
	for (long long s = 0; s < pp && !e->err;) {
		long long j = s + 1;
		while (j < pp && same(text[j], text[s]))
			j++;
		if (pp == 1)
			put_text(e, text[s]);
		else {
			if (j - s > 1)
				open_block(e, "on pp=%lld-%lld", s, j - 1);
			else
				open_block(e, "on pp=%lld", s);
			put_text(e, text[s]);
			close_block(e);
		}
		s = j;
	}
	for (long long s = 0; s < pp; s++)
		free(text[s]);
	free(text);
	return e->err ? -1 : 0;
}

/* whether the trace has blocks of this kind: dense and MoE layers as the
   model has them, MTP modules in training */
static int kind_used(const struct em *e, int kind)
{
	const struct gen_model *m = e->m;
	switch (kind) {
	case BK_EMB:
	case BK_HEAD: return 1;
	case BK_MTP: return e->c->mode == GEN_TRAIN && m->mtp > 0;
	default:
		for (long long l = 0; l < m->layers; l++)
			if (gt_layer_kind(m, l) == (enum block_kind)kind)
				return 1;
		return 0;
	}
}

static int write_train(struct em *e)
{
	const struct gen_config *c = e->c;
	struct tok k = {c->p.micro_batch, gen_seq_local(c), gen_seq_local(c), 0, 0};
	struct block *B = malloc(sizeof *B);
	if (!B)
		return -1;
	for (int kind = 0; kind < BK_COUNT; kind++) {
		if (!kind_used(e, kind))
			continue;
		gt_build_block(e, (enum block_kind)kind, &k, B);
		int d, cut;
		/* the layers a merged step pairs (an MTP module runs whole, after them) */
		e->cut[kind] = c->p.moe_overlap && kind != BK_MTP && a2a_cut(B, &d, &cut);
		if (e->cut[kind])
			e->a2a[kind] = B->st[d];
		emit_block_defs(e, "", (enum block_kind)kind, B);
	}
	free(B);
	struct stage_defs sd = {0};
	struct merged_defs md = {0};
	int rc = build_stage_defs(e, &sd, e->sync && c->p.zero < 2 ? PASS_COUNT : PASS_BS);
	if (!rc && c->p.moe_overlap) {
		sd.md = &md;
		rc = build_merged_defs(e, &md);
	}
	if (!rc)
		rc = stage_blocks(e, &sd);
	free_stage_defs(&sd);
	free_merged_defs(&md);
	return rc;
}

/* ---- inference --------------------------------------------------------------- */

/* decode layer defs split around the attention, whose KV length changes */
static void emit_decode_split(struct em *e, enum block_kind kind, const struct block *B, struct step *attn)
{
	struct lines L = {.n = 0};
	int i = 0;
	open_block(e, "def decode_%s_pre", block_names[kind]);
	for (; B->st[i].kind != ST_ATTN; i++)
		gt_step_fwd(e, &L, &B->st[i]);
	flush_lines(e, &L, NULL, NULL);
	close_block(e);
	*attn = B->st[i];
	L.n = 0;
	open_block(e, "def decode_%s_post", block_names[kind]);
	for (i++; i < B->n; i++)
		gt_step_fwd(e, &L, &B->st[i]);
	flush_lines(e, &L, NULL, e->c->p.pp > 1 ? "lo" : NULL); /* pipeline: the send to the next stage waits for it */
	close_block(e);
}

/* The host work an engine step of `seqs` sequences waits for (--engine),
   as a delay before its forward; nothing when the host keeps ahead. */
static void host_delay(struct em *e, long long seqs)
{
	double t = gen_engine_host_s(e->c, seqs);
	if (t > 0)
		out(e, "delay time=%.9gus", t * 1e6);
}

/* The decode defs of one micro-batch (one token per sequence); the
   attention of each layer kind goes to attn[], its KV length set per step. */
static int decode_defs(struct em *e, struct step *attn)
{
	const struct gen_config *c = e->c;
	struct tok k = {c->inf.batch / gen_infer_microbatches(c), 1, c->inf.input_len + 1, 1, 0};
	struct block *B = malloc(sizeof *B);
	if (!B)
		return -1;
	for (int kind = 0; kind < BK_COUNT; kind++) {
		if (!kind_used(e, kind))
			continue;
		gt_build_block(e, (enum block_kind)kind, &k, B);
		if (kind != BK_EMB && kind != BK_HEAD)
			emit_decode_split(e, (enum block_kind)kind, B, &attn[kind]);
		else
			emit_block_defs(e, "decode_", (enum block_kind)kind, B);
	}
	free(B);
	return 0;
}

struct decode_ctx {
	const struct step *attn;
	long long kv;
};

static void decode_one(struct em *e, enum block_kind kind, long long n, const void *ctx)
{
	const struct decode_ctx *x = ctx;
	struct lines L = {.n = 0};
	struct step a = x->attn[kind];
	a.skv = x->kv;
	gt_attn_text(e, &L, &a, "fwd");
	if (n > 1)
		open_block(e, "repeat %lld", n);
	out(e, "call decode_%s_pre", block_names[kind]);
	flush_lines(e, &L, NULL, NULL);
	out(e, "call decode_%s_post", block_names[kind]);
	if (n > 1)
		close_block(e);
}

/* the layers r of one decode step at KV length kv */
static void decode_layers(struct em *e, const struct runs *r, const struct step *attn, long long kv)
{
	struct decode_ctx x = {attn, kv};
	emit_runs_of(e, r, 0, decode_one, &x);
}

/* the KV length of decode bin i: steps j (1-based, attending to input_len
   + j keys) are binned in up to MAX_BINS groups, each at its mean; *n gets
   the bin's steps */
static long long decode_bin(const struct gen_config *c, long long i, long long bins, long long *n)
{
	long long steps = gen_decode_steps(c), j0 = i * steps / bins + 1, j1 = (i + 1) * steps / bins;
	*n = j1 - j0 + 1;
	return c->inf.input_len + (j0 + j1 + 1) / 2;
}

static void emit_decode(struct em *e)
{
	const struct gen_config *c = e->c;
	long long steps = gen_decode_steps(c), bins = steps < MAX_BINS ? steps : MAX_BINS;
	struct step attn[BK_COUNT];
	struct runs r;
	if (decode_defs(e, attn)) {
		e->err = 1;
		return;
	}
	chunk_runs(c, 0, 0, &r);
	for (long long i = 0; i < bins; i++) {
		long long n, kv = decode_bin(c, i, bins, &n);
		open_block(e, "def decode_%lld", i);
		host_delay(e, c->inf.batch);
		out(e, "call decode_emb_fwd");
		decode_layers(e, &r, attn, kv);
		out(e, "call decode_head_fwd");
		close_block(e);
	}
	out(e, "mark name=decode");
	for (long long i = 0; i < bins; i++) {
		long long n;
		decode_bin(c, i, bins, &n);
		if (n > 1)
			open_block(e, "repeat %lld", n);
		out(e, "call decode_%lld", i);
		if (n > 1)
			close_block(e);
	}
}

/* One micro-batch through pipeline stage s (inference): the activation from
   the previous stage (stage 0 in decode: the sequences' last token, sampled
   on the last stage), the stage's layers, and the activation to the next
   stage on stream p2p_fwd (the last stage: the head, and the sampled tokens
   back to stage 0 on stream p2p_tok). bin < 0: prefill. */
static void infer_pass(struct em *e, long long s, const struct runs *r, const struct step *attn, long long bin,
                       long long bins)
{
	const struct gen_config *c = e->c;
	long long P = c->p.pp, mb = c->inf.batch / gen_infer_microbatches(c), n;
	long long act = mb * (bin < 0 ? c->inf.input_len : 1) * e->h * 2, tok = 4 * mb;
	const char *pre = bin < 0 ? "prefill_" : "decode_";
	if (s > 0)
		out(e, "recv peer=pp-1 bytes=%lld", act);
	else if (bin >= 0)
		out(e, "recv peer=pp+%lld bytes=%lld", P - 1, tok);
	if (s == 0) {
		host_delay(e, mb);
		out(e, "call %semb_fwd", pre);
	}
	if (bin < 0)
		call_runs(e, r, 0, "prefill_", "fwd");
	else
		decode_layers(e, r, attn, decode_bin(c, bin, bins, &n));
	if (s < P - 1) {
		out(e, "send peer=pp+1 bytes=%lld stream=p2p_fwd after=lo", act);
		return;
	}
	out(e, "call %shead_fwd", pre);
	out(e, "send peer=pp-%lld bytes=%lld stream=p2p_tok after=lo", P - 1, tok);
}

/*
 * Inference on pipeline stages: the batch runs as gen_infer_microbatches
 * micro-batches, each through the stages in turn, so that every stage has
 * one to work on; the prefill of each, then each decode step of each, whose
 * first stage waits for the token the last stage sampled at the previous
 * step. Stage 0 ends by receiving the last step's tokens (the outputs).
 */
static void emit_infer_pp(struct em *e)
{
	const struct gen_config *c = e->c;
	long long M = gen_infer_microbatches(c), steps = gen_decode_steps(c),
	          bins = steps < MAX_BINS ? steps : MAX_BINS;
	long long tok = 4 * (c->inf.batch / M);
	struct step attn[BK_COUNT];
	if (steps > 0 && decode_defs(e, attn)) {
		e->err = 1;
		return;
	}
	for (long long s = 0; s < c->p.pp; s++) {
		struct runs r;
		chunk_runs(c, s, 0, &r);
		open_block(e, "on pp=%lld", s);
		memory_line(e, s);
		out(e, "mark name=prefill");
		if (M > 1)
			open_block(e, "repeat %lld", M);
		infer_pass(e, s, &r, attn, -1, bins);
		if (M > 1)
			close_block(e);
		if (steps > 0)
			out(e, "mark name=decode");
		for (long long i = 0; i < bins; i++) {
			long long n;
			decode_bin(c, i, bins, &n);
			if (n * M > 1)
				open_block(e, "repeat %lld", n * M);
			infer_pass(e, s, &r, attn, i, bins);
			if (n * M > 1)
				close_block(e);
		}
		if (s == 0) {
			if (M > 1)
				open_block(e, "repeat %lld", M);
			out(e, "recv peer=pp+%lld bytes=%lld", c->p.pp - 1, tok);
			if (M > 1)
				close_block(e);
		}
		close_block(e);
	}
}

static int write_infer(struct em *e)
{
	const struct gen_config *c = e->c;
	struct tok k = {c->inf.batch / gen_infer_microbatches(c), c->inf.input_len, c->inf.input_len, 0, 0};
	struct block *B = malloc(sizeof *B);
	struct runs r;
	if (!B)
		return -1;
	if (c->p.pp == 1)
		memory_line(e, 0);
	for (int kind = 0; kind < BK_COUNT; kind++) {
		if (!kind_used(e, kind))
			continue;
		gt_build_block(e, (enum block_kind)kind, &k, B);
		emit_block_defs(e, "prefill_", (enum block_kind)kind, B);
	}
	free(B);
	if (c->p.pp > 1) {
		emit_infer_pp(e);
		return e->err ? -1 : 0;
	}
	out(e, "mark name=prefill");
	host_delay(e, c->inf.batch);
	out(e, "call prefill_emb_fwd");
	chunk_runs(c, 0, 0, &r);
	call_runs(e, &r, 0, "prefill_", "fwd");
	out(e, "call prefill_head_fwd");
	if (gen_decode_steps(c) > 0)
		emit_decode(e);
	return e->err ? -1 : 0;
}

/* ---- the whole trace ------------------------------------------------------------ */

static void describe(struct em *e)
{
	const struct gen_config *c = e->c;
	const struct gen_model *m = e->m;
	char tot[32], act[32];
	fmt_num(tot, sizeof tot, round(gen_total_params(m) / 1e6) / 1e3);
	fmt_num(act, sizeof act, round(gen_active_params(m) / 1e6) / 1e3);
	out(e,
	    "# %s: %lld layers, hidden %lld, %lld heads (%lld kv, d %lld), ffn %lld, vocab %lld (padded to %lld); %sB "
	    "params%s%s",
	    m->name, m->layers, m->hidden, m->heads, m->kv_heads, m->head_dim, m->ffn, m->vocab, gen_vocab_padded(c),
	    tot, m->experts ? ", active " : "", m->experts ? act : "");
	if (m->experts && m->hybrid[0])
		out(e, "# experts: %lld routed (top-%lld, ffn %lld), %lld shared", m->experts, m->topk, m->expert_ffn,
		    m->shared);
	else if (m->experts)
		out(e, "# experts: %lld routed (top-%lld, ffn %lld), %lld shared, first %lld layer%s dense", m->experts,
		    m->topk, m->expert_ffn, m->shared, m->dense_layers, m->dense_layers == 1 ? "" : "s");
	if (m->hybrid[0]) {
		long long n[5];
		gen_layer_counts(m, n);
		out(e,
		    "# hybrid: %lld Mamba-2 (%lld heads of %lld, state %lld in %lld groups), %lld attention, %lld MLP, "
		    "%lld MoE: %s",
		    n[GEN_LT_MAMBA], m->mamba_heads, m->mamba_head_dim, m->mamba_state, m->mamba_groups, n[GEN_LT_ATTN],
		    n[GEN_LT_MLP], n[GEN_LT_MOE], m->hybrid);
	}
	if (m->attn == GEN_CSA) {
		long long n[3] = {0, 0, 0};
		for (long long l = 0; l < m->layers; l++) {
			long long r = gen_layer_compress(m, l);
			n[r == 0 ? 0 : r == m->csa_ratio ? 1 : 2]++;
		}
		out(e,
		    "# compressed attention: a window of %lld keys; %lld layers the window alone, %lld CSA (%lld keys "
		    "to "
		    "one, top %lld), %lld HCA (%lld to one); %lld hyper-connection streams",
		    m->window, n[0], n[1], m->csa_ratio, m->idx_topk, n[2], m->hca_ratio, m->hc);
	} else if (m->window) {
		long long w = 0;
		for (long long l = 0; l < m->layers; l++)
			w += gen_layer_is_windowed(m, l);
		out(e, "# sliding-window attention: %lld keys a query in %lld of the %lld layers", m->window, w,
		    m->layers);
	}
	if (c->mode == GEN_TRAIN && m->mtp)
		out(e, "# multi-token prediction: %lld module%s after the last layer", m->mtp, m->mtp == 1 ? "" : "s");
	char extra[64] = "";
	if (c->attn_impl != GEN_FLASH2 || c->dropout > 0) { /* the defaults go unsaid */
		char p[32];
		fmt_num(p, sizeof p, c->dropout);
		snprintf(extra, sizeof extra, "; %s attention%s%s", gen_attn_impl_name(c->attn_impl),
		         c->dropout > 0 ? ", dropout " : "", c->dropout > 0 ? p : "");
	}
	char cp[64] = "";
	if (c->p.cp > 1)
		snprintf(cp, sizeof cp, ", cp %lld (%s)", c->p.cp,
		         c->p.cp_comm == GEN_CP_A2A ? "all-to-all over the heads" : "ring attention");
	out(e, "# %lld ranks: tp %lld%s, pp %lld, dp %lld, ep %lld%s; %s%s", gen_ranks(c), c->p.tp, cp, c->p.pp,
	    c->p.dp, c->p.ep, c->p.sp ? ", sequence parallel" : "", gen_dtype_name(c->p.dtype), extra);
	if (c->mode == GEN_TRAIN)
		out(e,
		    "# seq %lld; %lld micro-batches of %lld per pipeline (global batch %lld); %s schedule%s%s%s; "
		    "recompute %s; ZeRO-%d%s",
		    c->seq, gen_microbatches(c), c->p.micro_batch, c->p.global_batch, gen_sched_name(c->p.sched),
		    c->p.vstages > 1 ? " (virtual stages)" : "", c->p.layout.chunks ? ", pipeline layout " : "",
		    c->p.layout.text, gen_recompute_name(c->p.recompute), c->p.zero,
		    c->p.offload ? ", optimizer offloaded" : "");
	else
		out(e, "# inference: batch %lld, input %lld, output %lld tokens%s%s", c->inf.batch, c->inf.input_len,
		    c->inf.output_len, c->inf.paged ? ", PagedAttention (16-token blocks)" : "",
		    c->inf.engine == GEN_ENGINE_VLLM ? "; vLLM V0 engine (host work before each step)" : "");
}

static void header(struct em *e, const char *cmdline)
{
	const struct gen_config *c = e->c;
	char flops[40], tokens[40];
	if (cmdline)
		out(e, "# sim gen %s", cmdline);
	describe(e);
	out(e, "simtrace 1");
	out(e, "ranks %lld", gen_ranks(c));
	char lay[128] = "layout";
	size_t n = strlen(lay);
	if (c->p.tp > 1)
		n += (size_t)snprintf(lay + n, sizeof lay - n, " tp=%lld", c->p.tp);
	if (c->p.cp > 1)
		n += (size_t)snprintf(lay + n, sizeof lay - n, " cp=%lld", c->p.cp);
	long long epd = gen_ep_dim(&c->p); /* folded over tp: the ep dim is ep / tp data-parallel ranks */
	if (epd > 1)
		n += (size_t)snprintf(lay + n, sizeof lay - n, " ep=%lld", epd);
	if (c->p.dp / epd > 1)
		n += (size_t)snprintf(lay + n, sizeof lay - n, " dp=%lld", c->p.dp / epd);
	if (c->p.pp > 1)
		n += (size_t)snprintf(lay + n, sizeof lay - n, " pp=%lld", c->p.pp);
	if (n > strlen("layout"))
		out(e, "%s", lay);
	fmt_num(flops, sizeof flops, gen_model_flops(c));
	fmt_num(tokens, sizeof tokens, gen_tokens(c));
	if (c->mode == GEN_TRAIN)
		out(e, "workload name=%s kind=train model_flops=%s tokens=%s", e->m->name, flops, tokens);
	else
		out(e, "workload name=%s kind=infer model_flops=%s tokens=%s decode_steps=%lld", e->m->name, flops,
		    tokens, gen_decode_steps(c));
	long long cp = c->p.cp, ep = epd, dpe = c->p.dp / epd;
	if (gen_ep_folded(&c->p))
		out(e,
		    "comm ept dims=tp,ep # an expert layer's ranks: tensor- and data-parallel (MoE parallel folding)");
	if (cp == 1 && ep > 1 && dpe > 1)
		out(e, "comm dpe dims=ep,dp # all data-parallel ranks (the dense weights' gradients)");
	if (cp > 1 && dpe > 1)
		out(e, "comm dpc dims=cp,dp # data- and context-parallel ranks (Megatron-Core reduces gradients over "
		       "both)");
	if (cp > 1 && ep > 1 && dpe > 1)
		out(e, "comm dpec dims=cp,ep,dp # with the expert-parallel ranks (the dense weights' gradients)");
	if (cp > 1 && ep > 1 && dpe == 1)
		out(e, "comm epc dims=cp,ep # expert- and context-parallel ranks (the dense weights' gradients)");
}

static void em_init(struct em *e, FILE *f, const struct gen_config *c)
{
	memset(e, 0, sizeof *e);
	e->c = c;
	e->m = &c->m;
	e->f = f;
	e->t = c->p.tp;
	e->al = c->m.heads / c->p.tp;
	e->kvl = c->m.kv_heads >= c->p.tp ? c->m.kv_heads / c->p.tp : 1;
	e->h = c->m.hidden;
	e->vl = gen_vocab_padded(c) / c->p.tp;
	e->dt = c->p.dtype == GEN_FP16 ? "fp16" : "bf16";
	e->gdt = c->p.dtype == GEN_FP8 ? "fp8" : c->p.dtype == GEN_FP4 ? "fp4" : e->dt;
	/* gradients reduce over the data-parallel ranks and, with --cp, the context-parallel ones */
	long long cp = c->mode == GEN_TRAIN ? c->p.cp : 1;
	e->nd = c->p.dp * cp;
	long long epd = gen_ep_dim(&c->p);
	e->ne = c->p.dp / epd * cp;
	e->cx = gen_ep_folded(&c->p) ? "ept" : "ep";
	if (cp == 1) {
		e->cd = epd == 1 ? "dp" : c->p.dp / epd > 1 ? "dpe" : "ep";
		e->ce = "dp";
	} else {
		int dpe = c->p.dp / epd > 1;
		e->cd = epd == 1 ? (dpe ? "dpc" : "cp") : dpe ? "dpec" : "epc";
		e->ce = dpe ? "dpc" : "cp";
	}
	e->sync = c->mode == GEN_TRAIN && e->nd > 1 && c->p.grad_sync == GEN_GS_OVERLAP;
}

int gen_write(FILE *f, const struct gen_config *c, const char *cmdline)
{
	struct em e;
	em_init(&e, f, c);
	header(&e, cmdline);
	int rc = c->mode == GEN_TRAIN ? write_train(&e) : write_infer(&e);
	if (rc || e.err || ferror(f))
		return -1;
	return 0;
}

/* ---- one serving engine step (sim serve) --------------------------------------- */

/* the lines of block B, the attention given as its template */
static int step_lines(struct em *e, const struct block *B, long long times, gen_line_fn fn, void *ctx)
{
	for (int i = 0; i < B->n; i++) {
		struct lines L = {.n = 0};
		gt_step_fwd(e, &L, &B->st[i]);
		for (int j = 0; j < L.n; j++)
			if (fn(ctx, B->st[i].kind == ST_ATTN ? GEN_LINE_ATTN : GEN_LINE_OP, L.v[j], times))
				return -1;
	}
	return 0;
}

int gen_serve_step(const struct gen_config *c, long long stage, int part, long long tokens, long long sampled,
                   gen_line_fn fn, void *ctx)
{
	struct em e;
	struct block *B = malloc(sizeof *B);
	struct runs r;
	int rc = 0;
	if (!B)
		return -1;
	em_init(&e, NULL, c);
	/* the dense part sees one row per token; the attention template is
	   one sequence of one token over one key, which the caller replaces */
	struct tok k = {1, tokens, tokens, 0, sampled};
	if (part == GEN_STEP_BODY && stage == 0) {
		gt_build_block(&e, BK_EMB, &k, B);
		rc = step_lines(&e, B, 1, fn, ctx);
	}
	chunk_runs(c, stage, 0, &r);
	for (int x = 0; x < r.count && !rc && part == GEN_STEP_BODY; x++) {
		gt_build_block(&e, r.kind[x], &k, B);
		rc = step_lines(&e, B, r.n[x], fn, ctx);
	}
	if (!rc && part == GEN_STEP_HEAD && stage == c->p.pp - 1 && sampled > 0) {
		gt_build_block(&e, BK_HEAD, &k, B);
		rc = step_lines(&e, B, 1, fn, ctx);
	}
	free(B);
	return rc;
}
