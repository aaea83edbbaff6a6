/*
 * test_gen_mech.c -- the ops `sim gen` writes for a step's mechanisms, each
 * counted by hand against the framework it follows: dropout inside and around
 * attention, norm backwards, MoE dispatchers and their all-to-all overlap,
 * fp8 recipes, expert parallelism folded over tensor parallelism.
 * tests/test_gen_par.c has the parallel layouts and model families,
 * tests/test_gen.c the arithmetic and the refusals.
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
	long long exp_m, exp_batch; /* the experts' batched GEMMs: tokens an expert and experts (the largest) */
	struct tr_route route;      /* the last routed all-to-all's */
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
	if (ev->kind == TK_OP && ev->op.kind == OP_GEMM && ev->op.batch > 1 && ev->op.trans == 0) /* the forward */
		n->exp_m = ev->op.m > n->exp_m ? ev->op.m : n->exp_m, n->exp_batch = ev->op.batch;
}

static struct moe_count count_moe_load(const char *preset, enum gen_dispatcher d, double imbalance, double capacity,
                                       struct gen_memory *mem)
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
	c.p.moe_imbalance = imbalance, c.p.moe_capacity = capacity;
	struct moe_count n;
	memset(&n, 0, sizeof n);
	each_event(&c, count_moe_event, &n);
	if (mem)
		gen_stage_memory(&c, 0, mem);
	return n;
}

static struct moe_count count_moe(const char *preset, enum gen_dispatcher d)
{
	return count_moe_load(preset, d, 0, 0, NULL);
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

/* --moe-imbalance F, --moe-capacity-factor C: the rank is the ep group's busiest, receiving min(F, C) times the
   balanced T K token assignments (rounded up); what it receives scales (the all-to-alls, the sort and unsort of the
   received chunks, its experts' tokens and their activations), what it sends does not (the permute before the
   dispatch and the unpermute after the combine). DeepSeek-V3 on ep 8: 32 local experts, 256 tokens each balanced. */
static void test_moe_load(void)
{
	long long T = 1024, h = 7168, K = 8, local = 256 / 8;
	struct gen_memory m0, m1, m2;
	struct moe_count a = count_moe_load("deepseek-v3", GEN_DISP_ALLTOALL, 0, 0, &m0);
	struct moe_count b = count_moe_load("deepseek-v3", GEN_DISP_ALLTOALL, 1.5, 0, &m1);
	struct moe_count c = count_moe_load("deepseek-v3", GEN_DISP_ALLTOALL, 1.5, 1.2, &m2);
	long long rb = 3 * T * K / 2, rc = (long long)ceil(1.2 * (double)(T * K));
	CHECK(a.exp_batch == local && a.exp_m == T * K / local && b.exp_batch == local && b.exp_m == rb / local &&
	          c.exp_m == (rc + local - 1) / local,
	      "experts' GEMMs: %lld x %lld tokens balanced, %lld x %lld at 1.5, %lld at 1.5 capped at 1.2; want %lld x "
	      "%lld, "
	      "%lld, %lld",
	      a.exp_batch, a.exp_m, b.exp_batch, b.exp_m, c.exp_m, local, T * K / local, rb / local,
	      (rc + local - 1) / local);
	CHECK(b.a2a == 4 && b.a2a_bytes == 4 * rb * h * 2 && c.a2a_bytes == 4 * rc * h * 2,
	      "all-to-alls: %lld bytes at 1.5, %lld capped at 1.2; want %lld, %lld", b.a2a_bytes, c.a2a_bytes,
	      4 * rb * h * 2, 4 * rc * h * 2);
	CHECK(b.copies == 8 && b.copy_el == 4 * T * K * h + 4 * rb * h,
	      "copies at 1.5: %lld of %lld elements, want 8 of %lld (the sends' %lld, the receives' %lld)", b.copies,
	      b.copy_el, 4 * T * K * h + 4 * rb * h, 4 * T * K * h, 4 * rb * h);
	CHECK(m1.activations > m0.activations && m2.activations > m0.activations && m2.activations < m1.activations &&
	          m1.params == m0.params,
	      "activations %g balanced, %g at 1.5, %g capped at 1.2 (params %g, %g)", m0.activations, m1.activations,
	      m2.activations, m0.params, m1.params);
	/* a capacity over the balanced share drops nothing when routing is balanced */
	struct moe_count d = count_moe_load("deepseek-v3", GEN_DISP_ALLTOALL, 0, 1.25, NULL);
	CHECK(!memcmp(&d, &a, sizeof a), "capacity 1.25 with balanced routing changed the layer");
	/* without expert parallelism the rank holds every expert: the imbalance moves nothing off it */
	struct gen_config e;
	config(&e, "mixtral-8x7b");
	e.p.ep = 1, e.p.moe_imbalance = 2;
	CHECK(gen_moe_load(&e.p) == 1, "ep 1, imbalance 2: load %g, want 1", gen_moe_load(&e.p));
	e.p.moe_capacity = 0.5;
	CHECK(gen_moe_load(&e.p) == 0.5, "ep 1, capacity 0.5: load %g, want 0.5", gen_moe_load(&e.p));
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

int main(void)
{
	test_dropout_ops();
	test_norm_backward();
	test_moe_dispatchers();
	test_moe_load();
	test_moe_overlap();
	test_fp8_recipes();
	test_ep_folding();
	printf("%d checks, %d failed\n", checks, fails);
	return fails != 0;
}
