/*
 * test_gen_mech.c -- the mechanisms of `sim gen`'s training and inference
 * steps, each counted by hand against the framework it follows: dropout and
 * norm backwards, MoE dispatchers and their overlap, fp8 recipes, gradient
 * reduction overlap, inference on pipeline stages, context parallelism (ring
 * and all-to-all), tensor-parallel communication overlap, DeepSeek's
 * compressed attention, hybrid Mamba models, expert-parallel folding and
 * sliding windows. tests/test_gen.c has the arithmetic and the refusals.
 */
#include "gen_test.h"

struct counts {
	int attn_fwd, attn_bwd, impl_other; /* attention ops of the expected impl, and of any other */
	int score_mul, hidden_mul;          /* elem op=mul over the scores, over s b h */
	int attn_drop;                      /* attention ops that drop scores out in their kernel */
};

/* the ops rank 0 runs (one stage, one micro-batch) */
static struct counts count_ops(const struct gen_config *c, enum op_attn_impl impl)
{
	struct counts n = {0};
	char *txt = text_of(c, NULL), why[TR_MSG_MAX];
	struct trace *t = txt ? tr_parse_string(txt, "dropout", why, sizeof why) : NULL;
	CHECK(t != NULL, "dropout trace does not parse: %s", why);
	long long T = c->p.micro_batch * c->seq, scores = T * c->seq * (c->m.heads / c->p.tp);
	if (t) {
		struct tr_cursor *cur = tr_cursor_new(t, 0);
		struct tr_event ev;
		while (tr_next(cur, &ev, why, sizeof why) == 1) {
			if (ev.kind != TK_OP)
				continue;
			if (ev.op.kind == OP_ATTN && ev.op.impl != impl)
				n.impl_other++;
			else if (ev.op.kind == OP_ATTN)
				*(ev.op.dir == DIR_FWD ? &n.attn_fwd : &n.attn_bwd) += 1;
			if (ev.op.kind == OP_ATTN && ev.op.dropout > 0)
				n.attn_drop += ev.op.dropout == c->dropout;
			if (ev.op.kind == OP_ELEM && ev.op.elem == EL_MUL)
				n.score_mul += ev.op.elems == scores, n.hidden_mul += ev.op.elems == T * c->m.hidden;
		}
		tr_cursor_free(cur);
		tr_free(t);
	}
	free(txt);
	return n;
}

/* fp8 training: which GEMMs run in fp8 and what quantizes their operands,
   per recipe, counted by hand for one dense LLaMA-style layer (rmsnorm,
   SwiGLU, tp 1, one micro-batch): QKV and gate/up follow a norm, the output
   projection and the down projection do not; the router and LM head stay
   bf16. Elements: T tokens, h hidden, f FFN. */
/* Calls visit on every op rank 0 of c's trace runs. */
static void each_event(const struct gen_config *c, void (*visit)(const struct tr_event *ev, void *arg), void *arg)
{
	char *txt = text_of(c, NULL), why[TR_MSG_MAX];
	struct trace *t = txt ? tr_parse_string(txt, "ops", why, sizeof why) : NULL;
	CHECK(t != NULL, "trace does not parse: %s", why);
	if (t) {
		struct tr_cursor *cur = tr_cursor_new(t, 0);
		struct tr_event ev;
		while (tr_next(cur, &ev, why, sizeof why) == 1)
			visit(&ev, arg);
		tr_cursor_free(cur);
		tr_free(t);
	}
	free(txt);
}

struct op_visit {
	void (*visit)(const struct op *op, void *arg);
	void *arg;
};

static void op_only(const struct tr_event *ev, void *arg)
{
	const struct op_visit *v = arg;
	if (ev->kind == TK_OP)
		v->visit(&ev->op, v->arg);
}

static void each_op(const struct gen_config *c, void (*visit)(const struct op *op, void *arg), void *arg)
{
	struct op_visit v = {visit, arg};
	each_event(c, op_only, &v);
}

/* What quantizes a low-precision training step's GEMM operands, and the GEMMs by dtype. */
struct quant_count {
	long long ct_n, ct_el, rd_n, rd_el; /* cast_transpose ops and their elements, amax reads and theirs */
	int ct_to;                          /* the dtype every cast_transpose writes (-1: none, -2: several) */
	long long gemms[DT_COUNT];
};

static void count_quant_op(const struct op *op, void *arg)
{
	struct quant_count *q = arg;
	if (op->kind == OP_ELEM && op->elem == EL_CAST_TRANSPOSE) {
		q->ct_n++, q->ct_el += op->elems;
		q->ct_to = q->ct_to == -1 || q->ct_to == op->to_dtype ? op->to_dtype : -2;
	}
	if (op->kind == OP_ELEM && op->elem == EL_READ)
		q->rd_n++, q->rd_el += op->elems;
	if (op->kind == OP_GEMM && op->dtype >= 0 && op->dtype < DT_COUNT)
		q->gemms[op->dtype]++;
}

static struct quant_count count_quant(const struct gen_config *c)
{
	struct quant_count q;
	memset(&q, 0, sizeof q);
	q.ct_to = -1;
	each_op(c, count_quant_op, &q);
	return q;
}

static void test_fp8_recipes(void)
{
	struct gen_config c;
	config(&c, "llama3-8b");
	c.m.layers = 2;
	c.seq = c.m.seq = 512;
	layout(&c, 1, 1, 1, 1, 1);
	c.p.dtype = GEN_FP8;
	long long T = 512, h = c.m.hidden, f = c.m.ffn, L = 2, qkv_out = (c.m.heads + 2 * c.m.kv_heads) * c.m.head_dim;
	long long sep = L * (T * h + T * f + T * qkv_out + T * h + T * 2 * f + T * h), all = sep + L * 2 * T * h;
	struct {
		enum gen_fp8_recipe r;
		long long ct_n, ct_elems, rd_n, rd_elems;
	} v[] = {
	    /* forward: proj and down inputs; backward: every GEMM's output gradient */
	    {GEN_FP8_DELAYED, 6 * L, sep, 0, 0},
	    {GEN_FP8_MX, 6 * L, sep, 0, 0},
	    /* current scaling: the norm-fed inputs too (their amax came with the norm); an amax read before
	       every other quantization */
	    {GEN_FP8_CURRENT, 8 * L, all, 6 * L, sep},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		c.p.fp8_recipe = v[i].r;
		struct quant_count q = count_quant(&c);
		CHECK(q.ct_n == v[i].ct_n && q.ct_el == v[i].ct_elems && q.ct_to == DT_FP8,
		      "recipe %zu: %lld cast_transpose of %lld elements to %d, want %lld of %lld to fp8", i, q.ct_n,
		      q.ct_el, q.ct_to, v[i].ct_n, v[i].ct_elems);
		CHECK(q.rd_n == v[i].rd_n && q.rd_el == v[i].rd_elems,
		      "recipe %zu: %lld amax reads of %lld elements, want %lld of %lld", i, q.rd_n, q.rd_el, v[i].rd_n,
		      v[i].rd_elems);
		/* 4 linear layers x 3 GEMMs (forward, dgrad, wgrad) per layer in fp8; the LM head's 3 in bf16 */
		CHECK(q.gemms[DT_FP8] == 12 * L && q.gemms[DT_BF16] == 3,
		      "recipe %zu: %lld fp8 and %lld bf16 GEMMs, want %lld and 3", i, q.gemms[DT_FP8], q.gemms[DT_BF16],
		      12 * L);
	}
	/* NVFP4 (--dtype fp4): the same GEMMs in fp4; every quantization reads its tensor's amax first (taken after
	   the Hadamard transform of the wgrad copy, so the norm's own amax does not do), then writes both copies */
	c.p.dtype = GEN_FP4;
	c.p.fp8_recipe = GEN_FP8_DELAYED;
	struct quant_count q = count_quant(&c);
	CHECK(q.ct_n == 8 * L && q.ct_el == all && q.ct_to == DT_FP4 && q.rd_n == q.ct_n && q.rd_el == all,
	      "fp4: %lld quantizations of %lld elements to %d and %lld amax reads of %lld, want %lld of %lld each",
	      q.ct_n, q.ct_el, q.ct_to, q.rd_n, q.rd_el, 8 * L, all);
	CHECK(q.gemms[DT_FP4] == 12 * L && q.gemms[DT_BF16] == 3 && q.gemms[DT_FP8] == 0,
	      "fp4: %lld fp4, %lld fp8 and %lld bf16 GEMMs, want %lld, 0 and 3", q.gemms[DT_FP4], q.gemms[DT_FP8],
	      q.gemms[DT_BF16], 12 * L);
}

/* every norm of the forward has its backward, over the same rows (a LLaMA-style layer: the attention's and the
   MLP's RMSNorm; the final norm before the head), as Transformer Engine's fused kernel (no split=) */
struct norm_count {
	long long fwd, bwd, fwd_el, bwd_el, split, bad_cols, h;
};

static void count_norm_op(const struct op *op, void *arg)
{
	struct norm_count *n = arg;
	if (op->kind == OP_ELEM && op->elem == EL_RMSNORM)
		n->fwd++, n->fwd_el += op->elems;
	if (op->kind == OP_ELEM && op->elem == EL_RMSNORM_BWD)
		n->bwd++, n->bwd_el += op->elems, n->split += op->split, n->bad_cols += op->cols != n->h;
}

static void test_norm_backward(void)
{
	struct gen_config c;
	config(&c, "llama3-8b");
	c.m.layers = 2;
	c.seq = c.m.seq = 512;
	layout(&c, 1, 1, 1, 1, 1);
	long long T = 512, h = c.m.hidden;
	struct norm_count n = {0, 0, 0, 0, 0, 0, h};
	each_op(&c, count_norm_op, &n);
	CHECK(n.bad_cols == 0, "%lld rmsnorm_bwd not over rows of %lld", n.bad_cols, h);
	CHECK(n.fwd == 2 * 2 + 1 && n.bwd == n.fwd && n.fwd_el == 5 * T * h && n.bwd_el == n.fwd_el && n.split == 0,
	      "%lld norms of %lld elements forward, %lld of %lld backward (%lld split), want 5 of %lld each", n.fwd,
	      n.fwd_el, n.bwd, n.bwd_el, n.split, 5 * T * h);
}

/* An MoE layer's token movement by dispatcher (Megatron-Core's token_dispatcher.py): what goes over ep, and the
   token copies around it. */
struct moe_count {
	long long a2a, a2a_bytes, routed, ag, ag_bytes, rs, rs_bytes, copies, copy_el;
	struct tr_route route; /* the last routed all-to-all's */
};

static void count_moe_event(const struct tr_event *ev, void *arg)
{
	struct moe_count *n = arg;
	if (ev->kind == TK_COLL && ev->coll == CO_ALLTOALL) {
		n->a2a++, n->a2a_bytes += (long long)ev->bytes;
		if (ev->route.topk)
			n->routed++, n->route = ev->route;
	}
	if (ev->kind == TK_COLL && ev->coll == CO_ALLGATHER)
		n->ag++, n->ag_bytes += (long long)ev->bytes;
	if (ev->kind == TK_COLL && ev->coll == CO_REDUCESCATTER)
		n->rs++, n->rs_bytes += (long long)ev->bytes;
	if (ev->kind == TK_OP && ev->op.kind == OP_ELEM && ev->op.elem == EL_COPY)
		n->copies++, n->copy_el += ev->op.elems;
}

static struct moe_count count_moe(const char *preset, enum gen_dispatcher d)
{
	struct gen_config c;
	config(&c, preset);
	c.m.layers = c.m.dense_layers + 1; /* one MoE layer */
	c.m.mtp = 0;
	c.seq = c.m.seq = 1024;
	layout(&c, 1, 1, 8, 1, 8);
	c.p.ep = 8;
	c.p.dispatcher = d;
	c.p.zero = 1; /* the expert gradients' reduce-scatter goes over dp / ep, not ep */
	struct moe_count n;
	memset(&n, 0, sizeof n);
	each_event(&c, count_moe_event, &n);
	return n;
}

static void test_moe_dispatchers(void)
{
	long long T = 1024, h = 7168, K = 8, E = 256;
	/* all-to-all: dispatch and combine, forward and backward, a copy per chosen expert; a permute, a sort,
	   an unsort and an unpermute of T K h elements each way */
	struct moe_count a = count_moe("deepseek-v3", GEN_DISP_ALLTOALL);
	CHECK(a.a2a == 4 && a.a2a_bytes == 4 * T * K * h * 2 && a.routed == 0,
	      "alltoall: %lld all-to-alls of %lld bytes (%lld routed), want 4 of %lld", a.a2a, a.a2a_bytes, a.routed,
	      4 * T * K * h * 2);
	CHECK(a.copies == 8 && a.copy_el == 8 * T * K * h, "alltoall: %lld copies of %lld elements, want 8 of %lld",
	      a.copies, a.copy_el, 8 * T * K * h);
	/* flex: the same buffers, carrying the model's routing (group-limited: 8 groups, 4 a token); only the
	   permute after the dispatch and the unpermute before the combine */
	struct moe_count f = count_moe("deepseek-v3", GEN_DISP_FLEX);
	CHECK(f.a2a == 4 && f.a2a_bytes == a.a2a_bytes && f.routed == 4 && f.route.topk == K && f.route.experts == E &&
	          f.route.groups == 8 && f.route.group_topk == 4,
	      "flex: %lld all-to-alls (%lld routed: topk %d experts %d groups %d of %d)", f.a2a, f.routed, f.route.topk,
	      f.route.experts, f.route.group_topk, f.route.groups);
	CHECK(f.copies == 4 && f.copy_el == 4 * T * K * h, "flex: %lld copies of %lld elements, want 4 of %lld",
	      f.copies, f.copy_el, 4 * T * K * h);
	/* allgather: the routing map (a byte per token and expert), the probabilities (fp32) and the tokens gathered
	   over ep; the outputs reduce-scattered; backward the tokens' and probabilities' gradients reduce-scattered and
	   the outputs' gathered */
	struct moe_count g = count_moe("deepseek-v3", GEN_DISP_ALLGATHER);
	long long ep = 8, map = T * ep * E, probs = map * 4, tok = T * ep * h * 2;
	CHECK(g.a2a == 0 && g.ag - a.ag == 3 + 1 && g.ag_bytes - a.ag_bytes == map + probs + tok + tok,
	      "allgather: %lld more all-gathers of %lld bytes, want 4 of %lld", g.ag - a.ag, g.ag_bytes - a.ag_bytes,
	      map + probs + 2 * tok);
	CHECK(g.rs - a.rs == 1 + 2 && g.rs_bytes - a.rs_bytes == tok + probs + tok,
	      "allgather: %lld more reduce-scatters of %lld bytes, want 3 of %lld", g.rs - a.rs,
	      g.rs_bytes - a.rs_bytes, tok + probs + tok);
	CHECK(g.copies == 4 && g.copy_el == 4 * T * K * h, "allgather: %lld copies of %lld elements, want 4 of %lld",
	      g.copies, g.copy_el, 4 * T * K * h);
	/* a model without group-limited routing: the routing alone */
	struct moe_count q = count_moe("qwen3-30b-a3b", GEN_DISP_FLEX);
	CHECK(q.routed == 4 && q.route.topk == 8 && q.route.experts == 128 && q.route.groups == 1 &&
	          q.route.group_topk == 1,
	      "flex qwen3: %lld routed (groups %d of %d)", q.routed, q.route.group_topk, q.route.groups);
}

/* What every rank of a trace runs: GEMM FLOPs, all-to-alls and the all-to-alls on a stream of their own, other
   ops that take time, and zero-time delays. */
struct work_count {
	double flops;
	long long a2a, a2a_stream, ops, waits;
};

static struct work_count count_work(const struct gen_config *c)
{
	struct work_count w = {0, 0, 0, 0, 0};
	char *txt = text_of(c, NULL), why[TR_MSG_MAX];
	struct trace *t = txt ? tr_parse_string(txt, "work", why, sizeof why) : NULL;
	CHECK(t != NULL, "trace does not parse: %s", why);
	for (int r = 0; t && r < tr_ranks(t); r++) {
		struct tr_cursor *cur = tr_cursor_new(t, r);
		struct tr_event ev;
		int rc;
		while ((rc = tr_next(cur, &ev, why, sizeof why)) == 1) {
			if (ev.kind == TK_OP && ev.op.kind == OP_GEMM)
				w.flops += op_flops(&ev.op);
			if (ev.kind == TK_OP)
				w.ops++;
			if (ev.kind == TK_COLL && ev.coll == CO_ALLTOALL)
				w.a2a++, w.a2a_stream += ev.stream != 0;
			if (ev.kind == TK_DELAY && ev.seconds == 0)
				w.waits++;
		}
		CHECK(rc == 0, "expansion: %s", why);
		tr_cursor_free(cur);
	}
	tr_free(t);
	free(txt);
	return w;
}

/* --moe-a2a-overlap changes when the work runs, not what: every rank runs the same GEMMs, ops and all-to-alls
   as without it, the all-to-alls now on their own stream behind zero-time waits; one more micro-batch is in
   flight (Megatron-Core's extra warm-up forward), so a stage holds more activations. */
static void test_moe_overlap(void)
{
	struct gen_config c;
	config(&c, "qwen3-30b-a3b");
	c.m.layers = 8;
	c.seq = c.m.seq = 1024;
	layout(&c, 1, 2, 4, 1, 16);
	c.p.ep = 4;
	c.p.sched = GEN_INTERLEAVED;
	c.p.vstages = 2;
	c.p.zero = 1;
	c.p.dispatcher = GEN_DISP_FLEX;
	struct work_count a = count_work(&c);
	struct gen_memory ma, mb;
	gen_stage_memory(&c, 0, &ma);
	c.p.moe_overlap = 1;
	char *txt = text_of(&c, NULL);
	CHECK(txt && strstr(txt, "\ndef fb_c0_bwd_c1_pp0 {\n") && strstr(txt, "stream=ep after=xfa id=xfd"),
	      "the overlapped trace has no merged step or no dispatch on the ep stream");
	free(txt);
	struct work_count b = count_work(&c);
	gen_stage_memory(&c, 0, &mb);
	CHECK(fabs(a.flops - b.flops) <= 1e-9 * a.flops && a.ops == b.ops && a.a2a == b.a2a,
	      "overlap changes the work: %g vs %g FLOPs, %lld vs %lld ops, %lld vs %lld all-to-alls", a.flops, b.flops,
	      a.ops, b.ops, a.a2a, b.a2a);
	CHECK(a.a2a_stream == 0 && b.a2a_stream > 0 && b.a2a_stream < b.a2a && b.waits > 0,
	      "all-to-alls on a stream: %lld of %lld without, %lld of %lld with (%lld waits)", a.a2a_stream, a.a2a,
	      b.a2a_stream, b.a2a, b.waits);
	CHECK(mb.activations > ma.activations, "activations %g with the overlap, %g without: one more in flight",
	      mb.activations, ma.activations);
}

static void test_dropout_ops(void)
{
	struct gen_config c;
	memset(&c, 0, sizeof c);
	gen_defaults(&c);
	gen_gpt_base(&c.m);
	c.m.layers = 4;
	c.m.hidden = 512;
	c.m.heads = 8;
	c.m.kv_heads = 8;
	c.m.head_dim = 64;
	c.m.ffn = 2048;
	c.seq = c.m.seq = 256;
	layout(&c, 2, 1, 1, 2, 2);
	long long L = 4;
	struct {
		enum gen_attn_impl impl;
		double p;
		enum gen_recompute rc;
		struct counts want;
	} v[] = {
	    /* no dropout: today's ops */
	    {GEN_FLASH2, 0, GEN_RC_NONE, {L, L, 0, 0, 0, 0}},
	    {GEN_CUDNN, 0, GEN_RC_SELECTIVE, {2 * L, L, 0, 0, 0, 0}},
	    {GEN_NAIVE, 0, GEN_RC_SELECTIVE, {2 * L, L, 0, 0, 0, 0}},
	    /* flash: the attention's dropout is in its kernel (dropout= on every attn op, the recomputed
	       forward's too); hidden dropout before both residual adds and after the embedding, forward and
	       backward */
	    {GEN_FLASH2, 0.1, GEN_RC_NONE, {L, L, 0, 0, 4 * L + 2, 2 * L}},
	    {GEN_FLASH1, 0.1, GEN_RC_FULL, {2 * L, L, 0, 0, 6 * L + 2, 3 * L}},
	    /* naive: the scores' dropout forward, its gradient, and again in any recompute */
	    {GEN_NAIVE, 0.1, GEN_RC_NONE, {L, L, 0, 2 * L, 4 * L + 2, 0}},
	    {GEN_NAIVE, 0.1, GEN_RC_SELECTIVE, {2 * L, L, 0, 3 * L, 4 * L + 2, 0}},
	    {GEN_NAIVE, 0.1, GEN_RC_FULL, {2 * L, L, 0, 3 * L, 6 * L + 2, 0}},
	};
	static const enum op_attn_impl op_impl[] = {ATTN_FLASH2, ATTN_FLASH3, ATTN_NAIVE, ATTN_FLASH1, ATTN_CUDNN};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		c.attn_impl = v[i].impl;
		c.dropout = v[i].p;
		c.p.recompute = v[i].rc;
		/* one micro-batch: the counts are per micro-batch */
		c.p.global_batch = c.p.micro_batch;
		struct counts n = count_ops(&c, op_impl[v[i].impl]), w = v[i].want;
		CHECK(!memcmp(&n, &w, sizeof n),
		      "%s dropout %g recompute %s: attn fwd %d bwd %d other %d, score muls %d, hidden muls %d, attn "
		      "with dropout %d; want %d %d %d, %d, %d, %d",
		      gen_attn_impl_name(v[i].impl), v[i].p, gen_recompute_name(v[i].rc), n.attn_fwd, n.attn_bwd,
		      n.impl_other, n.score_mul, n.hidden_mul, n.attn_drop, w.attn_fwd, w.attn_bwd, w.impl_other,
		      w.score_mul, w.hidden_mul, w.attn_drop);
		char why[256];
		CHECK(!gen_check(&c, why, sizeof why), "%s dropout %g refused: %s", gen_attn_impl_name(v[i].impl),
		      v[i].p, why);
		double attn = 3.0 * c.p.global_batch * (2.0 * 4 * 8 * 128) * 256.0 * 256 / gen_model_flops(&c);
		double head = 3.0 * c.p.global_batch * 2 * 256.0 * 50257 * 512 / gen_model_flops(&c);
		/* full recompute runs the layers' forward GEMMs again (not the LM head's) */
		test_trace(&c, "gpt dropout", 1 - attn + (v[i].rc == GEN_RC_FULL ? (1 - attn - head) / 3 : 0));
	}
}

/* --grad-sync: overlap reduces each block's bucket on stream dp during the
   backward; after reduces every gradient once, on the compute stream, after
   the last backward and before the optimizer (the same bytes either way) */
static void test_grad_sync(void)
{
	struct gen_config c;
	config(&c, "gpt3-125m");
	layout(&c, 1, 1, 4, 2, 8);
	for (int gs = GEN_GS_OVERLAP; gs <= GEN_GS_AFTER; gs++) {
		c.p.grad_sync = (enum gen_grad_sync)gs;
		char *txt = text_of(&c, NULL), why[TR_MSG_MAX];
		struct trace *t = txt ? tr_parse_string(txt, "grad-sync", why, sizeof why) : NULL;
		CHECK(t != NULL, "grad-sync trace does not parse: %s", why);
		if (!t) {
			free(txt);
			continue;
		}
		struct tr_cursor *cur = tr_cursor_new(t, 0);
		struct tr_event ev;
		double bytes = 0;
		int n = 0, after_backward = 1, seen_optimizer = 0, dp = -1;
		for (int i = 0; i < tr_ncomms(t); i++)
			if (!strcmp(tr_comm_name(t, i), "dp"))
				dp = i;
		while (tr_next(cur, &ev, why, sizeof why) == 1) {
			if (ev.kind == TK_MARK && !strcmp(tr_mark_name(t, ev.mark), "optimizer"))
				seen_optimizer = 1;
			if (ev.kind != TK_COLL || ev.comm != dp)
				continue;
			n++;
			bytes += ev.bytes;
			after_backward &= seen_optimizer && ev.stream == 0;
		}
		double want = 2 * gen_stage_params(&c, 0).dense;
		CHECK(fabs(bytes - want) <= n, "grad-sync %d: %g bytes reduced, want %g", gs, bytes, want);
		if (gs == GEN_GS_AFTER)
			CHECK(n == 1 && after_backward, "grad-sync after: %d dp collectives, after the backward %d", n,
			      after_backward);
		else
			CHECK(n > 1 && !after_backward,
			      "grad-sync overlap: %d dp collectives, all after the backward %d", n, after_backward);
		tr_cursor_free(cur);
		tr_free(t);
		free(txt);
	}
	c.p.zero = 2;
	c.p.grad_sync = GEN_GS_AFTER;
	refuse(&c, "--grad-sync after with --zero 2");
}

/* Inference on pipeline stages: the batch runs as up to pp micro-batches
   (the largest divisor of the batch); each prefill and decode step passes
   every stage once: activations forward, the sampled tokens from the last
   stage back to stage 0, which also receives the last step's. Each stage
   runs its own layers, and the ops of all stages add up to the pp = 1 trace. */
static void test_infer_pp(void)
{
	static const struct {
		long long pp, batch, m;
	} v[] = {{4, 8, 4}, {4, 6, 3}, {2, 1, 1}};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		struct gen_config c;
		config(&c, "llama2-7b");
		c.mode = GEN_INFER;
		layout(&c, 2, v[i].pp, 1, 1, 1);
		c.inf.batch = v[i].batch;
		c.inf.input_len = 64;
		c.inf.output_len = 5;
		CHECK(gen_infer_microbatches(&c) == v[i].m, "pp %lld batch %lld: %lld micro-batches, want %lld",
		      v[i].pp, v[i].batch, gen_infer_microbatches(&c), v[i].m);
		char *txt = text_of(&c, NULL), why[TR_MSG_MAX];
		struct trace *t = txt ? tr_parse_string(txt, "infer-pp", why, sizeof why) : NULL;
		CHECK(t != NULL, "pp inference trace does not parse: %s", why);
		if (!t) {
			free(txt);
			continue;
		}
		long long passes = v[i].m * (1 + gen_decode_steps(&c)), gemms = 0;
		for (long long s = 0; s < v[i].pp; s++) {
			int rank = -1;
			for (int r = 0; r < tr_ranks(t) && rank < 0; r++)
				if (tr_coord(t, r, DIM_PP) == s && tr_coord(t, r, DIM_TP) == 0)
					rank = r;
			struct tr_cursor *cur = tr_cursor_new(t, rank);
			struct tr_event ev;
			long long sends = 0, recvs = 0, heads = 0;
			while (tr_next(cur, &ev, why, sizeof why) == 1) {
				sends += ev.kind == TK_SEND;
				recvs += ev.kind == TK_RECV;
				gemms += ev.kind == TK_OP && ev.op.kind == OP_GEMM;
				heads += ev.kind == TK_OP && ev.op.kind == OP_GEMM && ev.op.n == 32000 / 2;
			}
			tr_cursor_free(cur);
			long long want_recv = s == 0 ? passes - v[i].m + v[i].m : passes;
			CHECK(sends == passes && recvs == want_recv,
			      "pp %lld stage %lld: %lld sends, %lld recvs; want %lld, %lld", v[i].pp, s, sends, recvs,
			      passes, want_recv);
			CHECK(heads == (s == v[i].pp - 1 ? passes : 0), "pp %lld stage %lld: %lld LM heads", v[i].pp, s,
			      heads);
		}
		/* the same GEMMs as one stage holding every layer, per micro-batch */
		struct gen_config one = c;
		one.p.pp = 1;
		char *t1 = text_of(&one, NULL);
		struct trace *u = t1 ? tr_parse_string(t1, "infer", why, sizeof why) : NULL;
		long long gemms1 = 0;
		if (u) {
			struct tr_cursor *cur = tr_cursor_new(u, 0);
			struct tr_event ev;
			while (tr_next(cur, &ev, why, sizeof why) == 1)
				gemms1 += ev.kind == TK_OP && ev.op.kind == OP_GEMM;
			tr_cursor_free(cur);
			tr_free(u);
		}
		CHECK(gemms == gemms1 * v[i].m, "pp %lld: %lld GEMMs over the stages, want %lld x %lld", v[i].pp, gemms,
		      gemms1, v[i].m);
		free(t1);
		tr_free(t);
		free(txt);
	}
}

/* Context parallelism (--cp): ring attention as Transformer Engine runs it (context_parallel.py,
   AttnFuncWithCPAndKVP2P). Counted by hand for Llama-3 8B at tp 2, cp 2, dp 2, 16 micro-batches of 8192
   tokens per data-parallel rank: each rank holds 4096 tokens of each; per layer the forward runs cp = 2
   attention ops (the local causal block, then half a block of the peer's keys), the backward 2 more; a rank
   sends K and V of its 4096 tokens (2 x 4096 x 4 local KV heads x 128 x 2 bytes = 8 MiB) once forward, K, V
   and their gradients once backward (16 MiB), and the gradients home (8 MiB): 32 MiB a layer and micro-batch.
   Activations are those of 4096 tokens; the distributed optimizer shards over dp x cp. */
static void test_cp(void)
{
	struct gen_config c, one;
	config(&c, "llama3-8b");
	layout(&c, 2, 1, 2, 1, 32); /* 16 micro-batches a rank */
	c.p.cp = 2;
	c.p.zero = 1;
	c.p.sp = 1;
	char why[256];
	CHECK(gen_check(&c, why, sizeof why) == 0, "llama3-8b tp 2 cp 2 dp 2: %s", why);
	CHECK(gen_ranks(&c) == 8 && gen_seq_local(&c) == 4096, "cp 2: %lld ranks, %lld tokens a rank", gen_ranks(&c),
	      gen_seq_local(&c));
	one = c;
	one.p.cp = 1, one.p.dp = 4; /* the same 8 ranks without cp */
	struct gen_memory m2, m1;
	gen_stage_memory(&c, 0, &m2);
	gen_stage_memory(&one, 0, &m1);
	CHECK(near(m2.activations, m1.activations / 2, 1e-12), "cp 2: activations %.4g B, want half of %.4g",
	      m2.activations, m1.activations);
	CHECK(near(m2.optimizer, m1.optimizer, 1e-12), "cp 2: optimizer %.4g B, want %.4g (sharded over dp x cp = 4)",
	      m2.optimizer, m1.optimizer);
	double gemm = 1 - 3.0 * 32 * (2 * 32 * 32 * 256) * 8192.0 * 8192 / gen_model_flops(&c);
	test_trace(&c, "llama3-8b cp 2", gemm);
	char *txt = text_of(&c, NULL);
	struct trace *t = txt ? tr_parse_string(txt, "cp", why, sizeof why) : NULL;
	CHECK(t != NULL, "cp trace does not parse: %s", why);
	if (t) {
		CHECK(tr_dim_size(t, DIM_CP) == 2 && tr_ranks(t) == 8, "cp trace: layout cp %d, %d ranks",
		      tr_dim_size(t, DIM_CP), tr_ranks(t));
		for (int rank = 0; rank < 8; rank += 2) { /* cp 0 and cp 1 of each dp rank (tp 0) */
			struct tr_cursor *cur = tr_cursor_new(t, rank);
			struct tr_event ev;
			int fwd = 0, bwd = 0, causal = 0;
			double sent = 0, got = 0;
			while (tr_next(cur, &ev, why, sizeof why) == 1) {
				if (ev.kind == TK_OP && ev.op.kind == OP_ATTN) {
					*(ev.op.dir == DIR_FWD ? &fwd : &bwd) += 1;
					causal += ev.op.causal;
					CHECK(ev.op.sq == 4096 && ev.op.skv == (ev.op.causal ? 4096 : 2048),
					      "rank %d: attn sq %lld skv %lld causal %d", rank, (long long)ev.op.sq,
					      (long long)ev.op.skv, ev.op.causal);
				}
				if (ev.kind == TK_SEND || ev.kind == TK_RECV) {
					CHECK(ev.peer == (rank ^ 2),
					      "rank %d: a transfer with rank %d, not its cp peer", rank, ev.peer);
					*(ev.kind == TK_SEND ? &sent : &got) += ev.bytes;
				}
				if (ev.kind == TK_COLL && !strcmp(tr_comm_name(t, ev.comm), "dpc"))
					CHECK(tr_comm_group(t, ev.comm, rank, NULL, 0, NULL) == 4,
					      "dpc: %d ranks, want dp x cp = 4",
					      tr_comm_group(t, ev.comm, rank, NULL, 0, NULL));
			}
			tr_cursor_free(cur);
			CHECK(fwd == 16 * 64 && bwd == 16 * 64 && causal == 16 * 64,
			      "rank %d: %d forward, %d backward, %d causal attention ops", rank, fwd, bwd, causal);
			CHECK(sent == 16 * 32.0 * 32 * 1048576 && got == sent,
			      "rank %d: sent %.0f, received %.0f bytes", rank, sent, got);
		}
		tr_free(t);
	}
	free(txt);
}

/* What rank 0 of a trace issues: collectives by op (tp ones apart), GEMMs, elementwise ops, shift bytes. */
struct rank_counts {
	long coll[CO_COUNT], tp_coll[CO_COUNT], gemm, elem;
	long margin; /* GEMMs that leave SMs to communication kernels (margin=) */
	double shift_bytes;
};

static int count_rank0(const char *txt, const char *name, struct rank_counts *n)
{
	char why[TR_MSG_MAX];
	memset(n, 0, sizeof *n);
	struct trace *t = txt ? tr_parse_string(txt, name, why, sizeof why) : NULL;
	CHECK(t != NULL, "%s does not parse: %s", name, why);
	if (!t)
		return -1;
	struct tr_cursor *cur = tr_cursor_new(t, 0);
	struct tr_event ev;
	while (tr_next(cur, &ev, why, sizeof why) == 1) {
		if (ev.kind == TK_COLL) {
			n->coll[ev.coll]++;
			if (!strcmp(tr_comm_name(t, ev.comm), "tp"))
				n->tp_coll[ev.coll]++;
			if (ev.coll == CO_SHIFT)
				n->shift_bytes += ev.bytes;
		}
		n->gemm += ev.kind == TK_OP && ev.op.kind == OP_GEMM;
		n->margin += ev.kind == TK_OP && ev.op.kind == OP_GEMM && ev.op.margin == 16;
		n->elem += ev.kind == TK_OP && ev.op.kind == OP_ELEM;
	}
	tr_cursor_free(cur);
	tr_free(t);
	return 0;
}

/* --tp-comm-overlap (Transformer Engine's userbuffers, each GEMM's default method): counted by hand for Llama-3 8B
   at tp 4, dp 2, 4 micro-batches of 8192 tokens per data-parallel rank, against the same run without it. Per layer
   and micro-batch: the forward's all-gathers before QKV and FC1, and the backward's all-gathers of the
   out-projection's and FC2's output gradients, become tp - 1 = 3 ring-exchange shifts of a quarter of 8192 x 4096
   x 2 bytes (16 MiB) each, 12 shifts, beside those GEMMs in 4 chunks (3 GEMMs more each, 12); the out-projection's
   and FC2's forward run in 4 chunks, each chunk's output reduce-scattered ("pipeline": 3 GEMMs and 3
   reduce-scatters more each, 6 and 6). The backward of QKV and FC1 (and of the logits GEMM, once a micro-batch)
   gathers the input again beside dgrad and reduce-scatters beside wgrad ("bulk"): 2 all-gathers a layer and 1 a
   micro-batch more, the reduce-scatters the same. The GEMMs beside userbuffers kernels leave them 16 SMs
   (margin=16): the 8 pipelined chunks and the 4 bulk dgrad and wgrad GEMMs a layer, and the logits GEMM's dgrad
   and wgrad a micro-batch. The FLOPs do not change. */
static void test_tp_overlap(void)
{
	struct gen_config c, off;
	config(&c, "llama3-8b");
	layout(&c, 4, 1, 2, 1, 8);
	c.p.sp = 1;
	c.p.tp_overlap = 1;
	char why[256];
	CHECK(gen_check(&c, why, sizeof why) == 0, "llama3-8b tp 4 sp, --tp-comm-overlap: %s", why);
	off = c;
	off.p.tp_overlap = 0;
	char *a = text_of(&c, NULL), *b = text_of(&off, NULL);
	struct trace *ta = a ? tr_parse_string(a, "tp overlap", why, sizeof why) : NULL;
	struct trace *tb = b ? tr_parse_string(b, "no overlap", why, sizeof why) : NULL;
	CHECK(ta && tb && near(trace_flops(ta), trace_flops(tb), 1e-12), "the GEMMs' FLOPs change: %.6g vs %.6g",
	      ta ? trace_flops(ta) : 0, tb ? trace_flops(tb) : 0);
	tr_free(ta);
	tr_free(tb);
	struct rank_counts on, no;
	if (!count_rank0(a, "tp overlap", &on) && !count_rank0(b, "no overlap", &no)) {
		long lm = 32 * 4; /* layers x micro-batches */
		CHECK(on.coll[CO_SHIFT] == 12 * lm && on.tp_coll[CO_SHIFT] == on.coll[CO_SHIFT] &&
		          no.coll[CO_SHIFT] == 0,
		      "%ld shifts over tp, want %ld", on.coll[CO_SHIFT], 12 * lm);
		CHECK(on.shift_bytes == 12.0 * lm * 16 * 1048576, "shifts move %.0f bytes", on.shift_bytes);
		CHECK(no.tp_coll[CO_ALLGATHER] - on.tp_coll[CO_ALLGATHER] == 4 * lm - 2 * lm - 4 &&
		          on.tp_coll[CO_REDUCESCATTER] - no.tp_coll[CO_REDUCESCATTER] == 6 * lm,
		      "all-gathers %ld -> %ld, reduce-scatters %ld -> %ld", no.tp_coll[CO_ALLGATHER],
		      on.tp_coll[CO_ALLGATHER], no.tp_coll[CO_REDUCESCATTER], on.tp_coll[CO_REDUCESCATTER]);
		CHECK(on.gemm - no.gemm == 18 * lm && on.elem == no.elem, "GEMMs %ld -> %ld, elementwise %ld -> %ld",
		      no.gemm, on.gemm, no.elem, on.elem);
		CHECK(on.margin == 12 * lm + 2 * 4 && no.margin == 0,
		      "GEMMs with margin=16: %ld (%ld without), want %ld", on.margin, no.margin, 12 * lm + 2 * 4);
		/* sequence parallelism alone, by hand: a layer's forward gathers before QKV and FC1 and reduce-scatters
		   after the out-projection and FC2; its backward gathers the out-projection's and FC2's output
		   gradients and reduce-scatters QKV's and FC1's input gradients; a micro-batch's embedding
		   reduce-scatters its output and gathers its gradient, the logits GEMM gathers its input and
		   reduce-scatters its gradient. With the overlap, the bulk backward of QKV, FC1 and the logits gathers
		   the input again: 2 a layer and 1 a micro-batch more */
		CHECK(no.tp_coll[CO_ALLGATHER] == 4 * lm + 2 * 4 && no.tp_coll[CO_REDUCESCATTER] == 4 * lm + 2 * 4,
		      "--sp: %ld all-gathers (want %ld), %ld reduce-scatters (want %ld)", no.tp_coll[CO_ALLGATHER],
		      4 * lm + 2 * 4, no.tp_coll[CO_REDUCESCATTER], 4 * lm + 2 * 4);
	}
	free(a);
	free(b);
	c.p.sp = 0;
	CHECK(gen_check(&c, why, sizeof why) != 0 && strstr(why, "--tp-comm-overlap: needs --sp"),
	      "--tp-comm-overlap without --sp: '%s'", why);
}

/* --cp-comm-type a2a (Ulysses-style, Transformer Engine's AttnFuncWithCPAndQKVOA2A): per attention an all-to-all of
   Q, K, V over cp, the attention over the whole sequence with heads/cp heads, an all-to-all of O back (backward:
   dO, then dQ, dK, dV); no ring transfers; the same attention work as the ring. A rank's heads must divide by cp. */
static void test_cp_a2a(void)
{
	struct gen_config c;
	config(&c, "llama3-8b"); /* 32 query heads, 8 key/value heads */
	layout(&c, 2, 1, 2, 1, 32);
	c.p.cp = 2, c.p.cp_comm = GEN_CP_A2A, c.p.zero = 1, c.p.sp = 1;
	char why[256];
	CHECK(gen_check(&c, why, sizeof why) == 0, "llama3-8b tp 2 cp 2 a2a: %s", why);
	double gemm = 1 - 3.0 * 32 * (2 * 32 * 32 * 256) * 8192.0 * 8192 / gen_model_flops(&c);
	test_trace(&c, "llama3-8b cp 2 a2a", gemm);
	char *txt = text_of(&c, NULL);
	struct trace *t = txt ? tr_parse_string(txt, "cp-a2a", why, sizeof why) : NULL;
	CHECK(t != NULL, "cp a2a trace does not parse: %s", why);
	for (int rank = 0; t && rank < 8; rank += 3) {
		struct tr_cursor *cur = tr_cursor_new(t, rank);
		struct tr_event ev;
		int fwd = 0, bwd = 0, p2p = 0, a2a = 0;
		double bytes = 0;
		while (tr_next(cur, &ev, why, sizeof why) == 1) {
			if (ev.kind == TK_OP && ev.op.kind == OP_ATTN) {
				*(ev.op.dir == DIR_FWD ? &fwd : &bwd) += 1;
				CHECK(ev.op.sq == 8192 && ev.op.skv == 8192 && ev.op.h == 8 && ev.op.hkv == 2 &&
				          ev.op.causal,
				      "rank %d: attn sq %lld skv %lld h %lld hkv %lld causal %d", rank,
				      (long long)ev.op.sq, (long long)ev.op.skv, (long long)ev.op.h,
				      (long long)ev.op.hkv, ev.op.causal);
			}
			p2p += ev.kind == TK_SEND || ev.kind == TK_RECV;
			if (ev.kind == TK_COLL && ev.coll == CO_ALLTOALL) {
				CHECK(!strcmp(tr_comm_name(t, ev.comm), "cp") &&
				          tr_comm_group(t, ev.comm, rank, NULL, 0, NULL) == 2,
				      "rank %d: an all-to-all on %s", rank, tr_comm_name(t, ev.comm));
				a2a++;
				bytes += ev.bytes;
			}
		}
		tr_cursor_free(cur);
		/* 16 micro-batches x 32 layers; a rank's head: 4096 tokens x 128 x 2 B = 1 MiB; Q, K, V 16 + 2 x 4
		 * heads */
		CHECK(fwd == 512 && bwd == 512 && p2p == 0 && a2a == 4 * 512,
		      "rank %d: %d forward, %d backward attention ops, %d sends/receives, %d all-to-alls", rank, fwd,
		      bwd, p2p, a2a);
		CHECK(bytes == 512 * 2 * (24 + 16) * 1048576.0, "rank %d: %.0f bytes of all-to-all", rank, bytes);
	}
	tr_free(t);
	free(txt);
	config(&c, "llama3-70b"); /* 64 and 8 heads: 8 and 1 a rank at tp 8 */
	layout(&c, 8, 1, 1, 1, 8);
	c.p.cp = 2, c.p.cp_comm = GEN_CP_A2A;
	CHECK(gen_check(&c, why, sizeof why) != 0 && strstr(why, "not both divisible by --cp"),
	      "llama3-70b tp 8 cp 2 a2a (1 key/value head a rank): %s", why);
}

/* DeepSeek-V4's compressed attention (workloads/gen_csa.c): a four-layer Flash on one rank (layers of the window
   alone, CSA, HCA) at 1024 tokens, its GEMMs counted by hand, the keys each query attends to, and the refusals. */
static void test_csa(void)
{
	struct gen_config c;
	struct gen_args a;
	char why[512];
	int rc = parse("deepseek-v4-flash --layers 4 --seq 1024 --global-batch 1", &c, &a, why, sizeof why);
	CHECK(rc == 0, "deepseek-v4-flash, 4 layers: %s", why);
	if (rc)
		return;
	CHECK(gen_layer_compress(&c.m, 0) == 0 && gen_layer_compress(&c.m, 1) == 0 &&
	          gen_layer_compress(&c.m, 2) == 4 && gen_layer_compress(&c.m, 3) == 128 &&
	          gen_layer_compress(&c.m, 4) == 0,
	      "compression ratios of the layers and the MTP module");
	char *text = text_of(&c, "csa");
	/* a query's keys: the window of 128; CSA's top 512 of the 256 compressed keys, the first queries seeing
	   fewer, 128 + 256 (1 - 256 x 4 / 2048) = 256; HCA's 8 compressed keys, half seen: 132 */
	CHECK(text && strstr(text, "h=64 hkv=1 sq=1024 skv=128 d=512 causal=0") &&
	          strstr(text, "h=64 hkv=1 sq=1024 skv=256 d=512 causal=0") &&
	          strstr(text, "h=64 hkv=1 sq=1024 skv=132 d=512 causal=0"),
	      "the sparse attention's keys a query");
	struct trace *t = text ? tr_parse_string(text, "csa", why, sizeof why) : NULL;
	CHECK(t != NULL, "csa trace does not parse: %s", why);
	if (t) {
		double s = 1024, h = 4096, d = 512, A = 64, ql = 1024, ol = 1024, og = 8, hc = 4, E = 256, f = 2048;
		double ai = 64, di = 128, V = (double)gen_vocab_padded(&c), mix = (2 + hc) * hc * h;
		double layer[3]; /* window alone, CSA, HCA: a token's multiply-adds */
		for (int r = 0; r < 3; r++)
			layer[r] = ql * h + A * d * ql + d * h + A * d * ol + og * ol * h +
			           2 * mix                              /* attention, mixing */
			           + h * E + 6 * 3 * h * f + 3 * h * f; /* router, six experts and the shared one */
		layer[1] += h * 4 * d + ql * ai * di + h * ai + h * 4 * di + ai * di * s / 4; /* compressor, indexer */
		layer[2] += h * 2 * d;
		double head = mix + h * V; /* the streams mixed, the LM head */
		double want = 6 * s * (2 * layer[0] + layer[1] + layer[2] + 2 * h * h + layer[0] + 2 * head);
		double got = trace_flops(t);
		CHECK(near(got, want, 1e-9), "csa: the trace's GEMMs do %.6g FLOPs, counted %.6g (ratio %.6f)", got,
		      want, got / want);
		tr_free(t);
	}
	free(text);
	static const struct {
		const char *line, *says;
	} bad[] = {
	    {"deepseek-v4-flash --mode infer --batch 1 --input-len 128 --output-len 8", "training only"},
	    {"deepseek-v4-flash --tp 2", "use --tp 1 --cp 1"},
	    {"deepseek-v4-flash --seq 64", "shorter than the 128 keys"},
	    {"deepseek-v4-flash --dense-layers 1", "every layer"},
	    {"deepseek-v4-flash --window-skip-freq 2", "a window on every layer"},
	    {"deepseek-v4-flash --layers 600", "599 runs of one kind"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		rc = parse(bad[i].line, &c, &a, why, sizeof why);
		CHECK(rc == -1 && strstr(why, bad[i].says), "%s: '%s'", bad[i].line, why);
	}
}

/* Hybrid Mamba models (--hybrid-pattern): Nemotron 3 Nano's layer counts (its report: 23 Mamba-2, 23 MoE, 6
   attention layers), the refusals, and a small model's trace, whose GEMMs do what the layers multiply (3 x the
   forward, as every weight's dgrad and wgrad) plus the SSD scan's GEMMs as mamba_ssm runs them, counted here from
   its kernels (ssd_combined.py): forward the chunk states (2 N P Q a head and chunk), C B^T (2 Q^2 N a group),
   the scores times x (2 Q^2 P) and C times the states (2 Q P N); backward C B^T and the chunk states again,
   dstates, dx through the scores and the states, dB, dC (2 Q N P each), dCB and the decay's gradient (2 Q^2 P
   each) and the two products through C B^T (2 Q^2 N each, a group). */
static void test_hybrid(void)
{
	struct gen_config c;
	config(&c, "nemotron-3-nano");
	long long n[5];
	gen_layer_counts(&c.m, n);
	CHECK(n[GEN_LT_MAMBA] == 23 && n[GEN_LT_MOE] == 23 && n[GEN_LT_ATTN] == 6 && n[GEN_LT_MLP] == 0 &&
	          n[GEN_LT_BLOCK] == 0,
	      "nemotron-3-nano: %lld Mamba, %lld MoE, %lld attention, %lld MLP layers", n[GEN_LT_MAMBA], n[GEN_LT_MOE],
	      n[GEN_LT_ATTN], n[GEN_LT_MLP]);
	CHECK(gen_layer_is_moe(&c.m, 1) && !gen_layer_is_moe(&c.m, 0), "E layers hold the experts, M layers none");
	c.mode = GEN_INFER;
	refuse(&c, "written for training only");
	static const struct {
		const char *line, *want;
	} bad[] = {
	    {"gpt --hidden 1024 --heads 16 --hybrid-pattern M*X-", "'X' at 3 is not a layer"},
	    {"gpt --layers 3 --hidden 1024 --heads 16 --hybrid-pattern M*M-", "names 4 layers, --layers says 3"},
	    {"gpt --hidden 1024 --heads 16 --hybrid-pattern M*E-", "its 'E' layers need --experts"},
	    {"gpt --hidden 1024 --heads 16 --experts 8 --hybrid-pattern M*M-", "has no 'E' layer"},
	    {"gpt --hidden 1024 --heads 16 --hybrid-pattern M*M- --tp 16", "--mamba-groups 8 is not divisible by --tp"},
	    {"gpt --hidden 1024 --heads 16 --hybrid-pattern M*M- --mamba-groups 5", "does not divide --mamba-heads"},
	    {"gpt --hidden 1024 --heads 16 --hybrid-pattern M*M- --cp 2", "--cp 2"},
	    {"gpt --hidden 1024 --heads 16 --hybrid-pattern M*M- --window 128", "--window"},
	    {"gpt --hidden 1024 --heads 16 --hybrid-pattern M*M- --mtp-num-layers 1", "so it needs --experts"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct gen_args a;
		char why[512] = "";
		int rc = parse(bad[i].line, &c, &a, why, sizeof why);
		CHECK(rc == -1 && strstr(why, bad[i].want), "%s: want a refusal with '%s', got '%s'", bad[i].line,
		      bad[i].want, why);
	}
	/* a small hybrid model: Megatron-Core's MambaModel defaults (64-channel heads over twice the width, state 128
	   in 8 groups, no position embedding) */
	struct gen_args a;
	char why[512];
	int rc = parse("gpt --hidden 1024 --heads 16 --experts 8 --topk 2 --hybrid-pattern M*-E --seq 2048", &c, &a,
	               why, sizeof why);
	CHECK(rc == 0, "hybrid gpt: %s", why);
	if (rc)
		return;
	CHECK(c.m.layers == 4 && c.m.mamba_heads == 32 && c.m.mamba_head_dim == 64 && c.m.mamba_state == 128 &&
	          c.m.mamba_groups == 8 && c.m.nopos,
	      "hybrid gpt: %lld layers, %lld heads of %lld, state %lld, %lld groups, nopos %d", c.m.layers,
	      c.m.mamba_heads, c.m.mamba_head_dim, c.m.mamba_state, c.m.mamba_groups, c.m.nopos);
	char *text = text_of(&c, "hybrid"), *again = text_of(&c, "hybrid");
	CHECK(text && again && !strcmp(text, again), "hybrid: the same config gives different text");
	CHECK(text && strstr(text, "def mamba_bwd") && strstr(text, "def attn_fwd") && strstr(text, "def mlp_fwd") &&
	          strstr(text, "def experts_fwd") && !strstr(text, "def dense_fwd"),
	      "hybrid: a def per layer kind");
	struct trace *t = text ? tr_parse_string(text, "hybrid", why, sizeof why) : NULL;
	CHECK(t != NULL, "hybrid trace does not parse: %s", why);
	if (t) {
		double s = 2048, h = 1024, f = 4096, E = 8, k = 2, V = (double)gen_vocab_padded(&c);
		double H = 32, P = 64, N = 128, G = 8, Q = GEN_MAMBA_CHUNK, din = H * P;
		double mats = h * (2 * din + 2 * G * N + H) + din * h /* Mamba in_proj, out_proj */
		              + 4 * h * h                             /* attention: Q, K, V, out */
		              + 2 * h * f                             /* the MLP */
		              + h * E + k * 2 * h * f                 /* the router, two experts a token */
		              + h * V;                                /* the LM head */
		double fwd = H * P * (4 * N + 2 * Q) + 2 * Q * N * G, bwd = 6 * Q * N * G + H * P * (10 * N + 6 * Q);
		double want = 3 * 2 * s * mats + s * (fwd + bwd), got = trace_flops(t);
		CHECK(near(got, want, 1e-9), "hybrid: the trace's GEMMs do %.6g FLOPs, counted %.6g (ratio %.6f)", got,
		      want, got / want);
		tr_free(t);
	}
	free(text);
	free(again);
	/* the same with LatentMoE (experts on a width of 256, projections down and up around them) and an MTP module
	   of an attention and an MoE sublayer ("*E": eh_proj 2h x h, attention, the latent MoE, the LM head again) */
	rc = parse("gpt --hidden 1024 --heads 16 --experts 8 --topk 2 --moe-latent 256 --mtp-num-layers 1 "
	           "--hybrid-pattern M*-E --seq 2048",
	           &c, &a, why, sizeof why);
	CHECK(rc == 0, "latent hybrid gpt: %s", why);
	if (rc)
		return;
	text = text_of(&c, "latent");
	t = text ? tr_parse_string(text, "latent", why, sizeof why) : NULL;
	CHECK(t != NULL, "latent hybrid trace does not parse: %s", why);
	if (t) {
		double s = 2048, h = 1024, f = 4096, E = 8, k = 2, w = 256, V = (double)gen_vocab_padded(&c);
		double H = 32, P = 64, N = 128, G = 8, Q = GEN_MAMBA_CHUNK, din = H * P;
		double moe =
		    h * E + k * 2 * w * f + 2 * h * w; /* router, two latent experts a token, fc1/fc2_latent_proj */
		double mats = h * (2 * din + 2 * G * N + H) + din * h + 4 * h * h + 2 * h * f + moe + h * V;
		double mtp = 2 * h * h + 4 * h * h + moe + h * V;
		double fwd = H * P * (4 * N + 2 * Q) + 2 * Q * N * G, bwd = 6 * Q * N * G + H * P * (10 * N + 6 * Q);
		double want = 3 * 2 * s * (mats + mtp) + s * (fwd + bwd), got = trace_flops(t);
		CHECK(near(got, want, 1e-9),
		      "latent hybrid: the trace's GEMMs do %.6g FLOPs, counted %.6g (ratio %.6f)", got, want,
		      got / want);
		tr_free(t);
	}
	free(text);
	/* at ep 2 the dispatch moves latent-wide tokens: 2 bytes x topk x w a token */
	rc =
	    parse("gpt --hidden 1024 --heads 16 --experts 8 --topk 2 --moe-latent 256 --hybrid-pattern M*-E --seq 2048 "
	          "--dp 2 --ep 2",
	          &c, &a, why, sizeof why);
	CHECK(rc == 0, "latent hybrid gpt at ep 2: %s", why);
	text = rc ? NULL : text_of(&c, "latent ep");
	const char *a2a = text ? strstr(text, "op=alltoall") : NULL, *bytes = a2a ? strstr(a2a, "bytes=") : NULL;
	CHECK(bytes && strtod(bytes + 6, NULL) == 2048.0 * 2 * 256 * 2, "latent all-to-all: %.40s",
	      bytes ? bytes : "none");
	free(text);
	rc = parse("gpt --hidden 1024 --heads 16 --moe-latent 256 --hybrid-pattern M*-M --seq 2048", &c, &a, why,
	           sizeof why);
	CHECK(rc == -1 && strstr(why, "needs --experts"), "--moe-latent without experts: '%s'", why);
}

/* Expert parallelism folded over tensor parallelism (Megatron-Core's MoE parallel folding, expert TP 1): EP 4 on
   TP 2 x DP 2. Each rank routes its own half of the tokens (sequence parallel) over the tp x ep ranks and runs its
   experts whole: over all ranks the GEMMs do 3 x 2 x the tokens x (attention 4 h^2, the router h E once a token,
   topk experts' 2 h f, the LM head h V), where unfolded tensor parallelism runs the router on every rank of a
   token. The refusals name what folding needs. */
static void test_ep_folding(void)
{
	struct gen_config c;
	struct gen_args a;
	char why[512];
	int rc =
	    parse("gpt --layers 2 --hidden 1024 --heads 16 --experts 8 --topk 2 --seq 2048 --tp 2 --sp --dp 2 --ep 4",
	          &c, &a, why, sizeof why);
	CHECK(rc == 0, "folded: %s", why);
	if (rc)
		return;
	CHECK(gen_ep_folded(&c.p) && gen_ep_dim(&c.p) == 2, "ep 4 on tp 2 x dp 2 is folded, its dim 2");
	char *text = text_of(&c, "folded");
	struct trace *t = text ? tr_parse_string(text, "folded", why, sizeof why) : NULL;
	CHECK(t != NULL, "folded trace does not parse: %s", why);
	CHECK(text && strstr(text, "\nlayout tp=2 ep=2\n") && strstr(text, "\ncomm ept dims=tp,ep"),
	      "folded: the layout's ep dim 2 and the communicator over tp and ep");
	const char *a2a = text ? strstr(text, "op=alltoall") : NULL;
	CHECK(a2a && !strncmp(a2a, "op=alltoall comm=ept bytes=", 27) &&
	          strtod(a2a + 27, NULL) == 1024.0 * 2 * 1024 * 2,
	      "folded all-to-all: a rank's 1024 tokens x topk 2 x h x 2 bytes over ept");
	if (t) {
		double tok = 2 * 2048, h = 1024, f = 4096, E = 8, k = 2, V = (double)gen_vocab_padded(&c);
		double want = 6 * tok * (2 * (4 * h * h + h * E + k * 2 * h * f) + h * V), got = trace_flops(t);
		CHECK(near(got, want, 1e-9), "folded: the ranks' GEMMs do %.6g FLOPs, counted %.6g (ratio %.6f)", got,
		      want, got / want);
		tr_free(t);
	}
	free(text);
	/* a rank's expert weights: 2 of the 8 experts, whole */
	struct gen_params ps = gen_stage_params(&c, 0);
	CHECK(near(ps.expert, 2 * 2 * 2 * 1024.0 * 4096, 1e-12), "folded: %.6g expert weights a rank", ps.expert);
	static const struct {
		const char *line, *want;
	} bad[] = {
	    {"gpt --layers 2 --hidden 1024 --heads 16 --experts 8 --tp 2 --dp 2 --ep 4",
	     "--ep 4 does not divide --dp 2"},
	    {"gpt --layers 2 --hidden 1024 --heads 16 --experts 8 --tp 2 --sp --dp 2 --ep 8",
	     "--ep 8 does not divide --dp 2"},
	    {"gpt --layers 2 --hidden 1024 --heads 16 --experts 12 --tp 4 --sp --dp 4 --ep 6",
	     "--ep 6 does not divide --dp 4"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = '\0';
		rc = parse(bad[i].line, &c, &a, why, sizeof why);
		CHECK(rc == -1 && strstr(why, bad[i].want), "%s: want a refusal with '%s', got '%s'", bad[i].line,
		      bad[i].want, why);
	}
}

/* Sliding-window attention (--window, --window-skip-freq) as gpt-oss-120b has it: every other layer banded to
   128 keys, the first of them windowed (Megatron-Core's window_attn_skip_freq pattern). */
static void test_window(void)
{
	struct gen_config c;
	struct gen_args a;
	char why[512];
	int rc = parse("gpt-oss-120b --dp 8 --ep 8 --micro-batch 1 --global-batch 16", &c, &a, why, sizeof why);
	CHECK(rc == 0, "gpt-oss-120b: %s", why);
	if (rc)
		return;
	long long w = 0;
	for (long long l = 0; l < c.m.layers; l++)
		w += gen_layer_is_windowed(&c.m, l);
	CHECK(w == 18 && gen_layer_is_windowed(&c.m, 0) && !gen_layer_is_windowed(&c.m, 1), "%lld windowed layers", w);
	char *t = text_of(&c, "window");
	const char *sw = t ? strstr(t, "def moe_swa_fwd {") : NULL, *full = t ? strstr(t, "def moe_fwd {") : NULL;
	const char *sw_end = sw ? strstr(sw, "\n}") : NULL, *full_end = full ? strstr(full, "\n}") : NULL;
	const char *wa = sw ? strstr(sw, " window=128") : NULL, *wf = full ? strstr(full, " window=") : NULL;
	CHECK(wa && wa < sw_end && (!wf || wf > full_end),
	      "the windowed layer's attention has window=128, the full one none");
	CHECK(t && strstr(t, "repeat 18 {"), "18 pairs of a windowed and a full layer as one repeat");
	free(t);
	/* the model FLOPs: the windowed layers' pairs, fewer than full attention's, the same with a window as long */
	double f = gen_model_flops(&c);
	c.m.window = 0, c.m.window_skip = 0;
	double full_f = gen_model_flops(&c);
	c.m.window = c.seq, c.m.window_skip = 2;
	CHECK(f < full_f && gen_model_flops(&c) == full_f, "model FLOPs %.6g windowed, %.6g full, %.6g window = seq", f,
	      full_f, gen_model_flops(&c));
	static const struct refusal bad[] = {
	    {"llama3-8b --window-skip-freq 2", "--window-skip-freq 2 needs --window"},
	    {"llama3-8b --window 128 --cp 2 --global-batch 1", "ring attention over a sliding window is not modelled"},
	    {"llama3-8b --layers 600 --window 128 --window-skip-freq 2", "at most 256"},
	};
	check_refusals(bad, sizeof bad / sizeof bad[0]);
}

int main(void)
{
	test_dropout_ops();
	test_norm_backward();
	test_moe_dispatchers();
	test_moe_overlap();
	test_fp8_recipes();
	test_grad_sync();
	test_infer_pp();
	test_cp();
	test_cp_a2a();
	test_tp_overlap();
	test_csa();
	test_hybrid();
	test_ep_folding();
	test_window();
	printf("%d checks, %d failed\n", checks, fails);
	return fails != 0;
}
