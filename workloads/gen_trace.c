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
 * This file writes the header and the whole trace (gen_write) and one
 * serving engine step (gen_serve_step); gen_emit.c the text and the
 * blocks' defs, gen_train.c a training step, gen_infer.c an inference
 * batch (their functions in gen_trace_int.h).
 *
 * Labels: lo = a block's last forward op, wg = its last backward op (its
 * gradients are complete), dpg = a gradient collective, ag = a ZeRO-3
 * gather. Sends run on their own streams (p2p_fwd, p2p_bwd), one peer each,
 * after the op that produced the data; recvs on the compute stream.
 */
#include "gen_trace_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the whole trace ------------------------------------------------------------ */

static void describe(struct em *e)
{
	const struct gen_config *c = e->c;
	const struct gen_model *m = e->m;
	char tot[32], act[32];
	gt_fmt_num(tot, sizeof tot, round(gen_total_params(m) / 1e6) / 1e3);
	gt_fmt_num(act, sizeof act, round(gen_active_params(m) / 1e6) / 1e3);
	gt_out(
	    e,
	    "# %s: %lld layers, hidden %lld, %lld heads (%lld kv, d %lld), ffn %lld, vocab %lld (padded to %lld); %sB "
	    "params%s%s",
	    m->name, m->layers, m->hidden, m->heads, m->kv_heads, m->head_dim, m->ffn, m->vocab, gen_vocab_padded(c),
	    tot, m->experts ? ", active " : "", m->experts ? act : "");
	if (m->experts && m->hybrid[0])
		gt_out(e, "# experts: %lld routed (top-%lld, ffn %lld), %lld shared", m->experts, m->topk,
		       m->expert_ffn, m->shared);
	else if (m->experts)
		gt_out(e, "# experts: %lld routed (top-%lld, ffn %lld), %lld shared, first %lld layer%s dense",
		       m->experts, m->topk, m->expert_ffn, m->shared, m->dense_layers, m->dense_layers == 1 ? "" : "s");
	if (m->experts && (c->p.moe_imbalance > 0 || c->p.moe_capacity > 0)) {
		char cap[48] = "dropless";
		if (c->p.moe_capacity > 0)
			snprintf(cap, sizeof cap, "capacity factor %g, the rest dropped", c->p.moe_capacity);
		gt_out(
		    e,
		    "# routing: the busiest rank of the ep group receives %g x the balanced share (imbalance %g%s; %s)",
		    gen_moe_load(&c->p), c->p.moe_imbalance > 0 ? c->p.moe_imbalance : 1.0,
		    c->p.ep > 1 ? "" : ", between the experts of each rank: ep 1", cap);
	}
	if (m->hybrid[0]) {
		long long n[5];
		gen_layer_counts(m, n);
		gt_out(
		    e,
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
		gt_out(
		    e,
		    "# compressed attention: a window of %lld keys; %lld layers the window alone, %lld CSA (%lld keys "
		    "to "
		    "one, top %lld), %lld HCA (%lld to one); %lld hyper-connection streams",
		    m->window, n[0], n[1], m->csa_ratio, m->idx_topk, n[2], m->hca_ratio, m->hc);
	} else if (m->window) {
		long long w = 0;
		for (long long l = 0; l < m->layers; l++)
			w += gen_layer_is_windowed(m, l);
		gt_out(e, "# sliding-window attention: %lld keys a query in %lld of the %lld layers", m->window, w,
		       m->layers);
	}
	if (c->mode == GEN_TRAIN && m->mtp)
		gt_out(e, "# multi-token prediction: %lld module%s after the last layer", m->mtp,
		       m->mtp == 1 ? "" : "s");
	char extra[64] = "";
	if (c->attn_impl != GEN_FLASH2 || c->dropout > 0) { /* the defaults go unsaid */
		char p[32];
		gt_fmt_num(p, sizeof p, c->dropout);
		snprintf(extra, sizeof extra, "; %s attention%s%s", gen_attn_impl_name(c->attn_impl),
		         c->dropout > 0 ? ", dropout " : "", c->dropout > 0 ? p : "");
	}
	char cp[64] = "";
	if (c->p.cp > 1)
		snprintf(cp, sizeof cp, ", cp %lld (%s)", c->p.cp,
		         c->p.cp_comm == GEN_CP_A2A ? "all-to-all over the heads" : "ring attention");
	gt_out(e, "# %lld ranks: tp %lld%s, pp %lld, dp %lld, ep %lld%s; %s%s", gen_ranks(c), c->p.tp, cp, c->p.pp,
	       c->p.dp, c->p.ep, c->p.sp ? ", sequence parallel" : "", gen_dtype_name(c->p.dtype), extra);
	if (c->mode == GEN_TRAIN)
		gt_out(e,
		       "# seq %lld; %lld micro-batches of %lld per pipeline (global batch %lld); %s schedule%s%s%s; "
		       "recompute %s; ZeRO-%d%s",
		       c->seq, gen_microbatches(c), c->p.micro_batch, c->p.global_batch, gen_sched_name(c->p.sched),
		       c->p.vstages > 1 ? " (virtual stages)" : "", c->p.layout.chunks ? ", pipeline layout " : "",
		       c->p.layout.text, gen_recompute_name(c->p.recompute), c->p.zero,
		       c->p.offload ? ", optimizer offloaded" : "");
	else
		gt_out(e, "# inference: batch %lld, input %lld, output %lld tokens%s%s", c->inf.batch, c->inf.input_len,
		       c->inf.output_len, c->inf.paged ? ", PagedAttention (16-token blocks)" : "",
		       c->inf.engine == GEN_ENGINE_VLLM ? "; vLLM V0 engine (host work before each step)" : "");
}

static void header(struct em *e, const char *cmdline)
{
	const struct gen_config *c = e->c;
	char flops[40], tokens[40];
	if (cmdline)
		gt_out(e, "# sim gen %s", cmdline);
	describe(e);
	gt_out(e, "simtrace 1");
	gt_out(e, "ranks %lld", gen_ranks(c));
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
		gt_out(e, "%s", lay);
	gt_fmt_num(flops, sizeof flops, gen_model_flops(c));
	gt_fmt_num(tokens, sizeof tokens, gen_tokens(c));
	if (c->mode == GEN_TRAIN)
		gt_out(e, "workload name=%s kind=train model_flops=%s tokens=%s", e->m->name, flops, tokens);
	else
		gt_out(e, "workload name=%s kind=infer model_flops=%s tokens=%s decode_steps=%lld", e->m->name, flops,
		       tokens, gen_decode_steps(c));
	long long cp = c->p.cp, ep = epd, dpe = c->p.dp / epd;
	if (gen_ep_folded(&c->p))
		gt_out(
		    e,
		    "comm ept dims=tp,ep # an expert layer's ranks: tensor- and data-parallel (MoE parallel folding)");
	if (cp == 1 && ep > 1 && dpe > 1)
		gt_out(e, "comm dpe dims=ep,dp # all data-parallel ranks (the dense weights' gradients)");
	if (cp > 1 && dpe > 1)
		gt_out(e,
		       "comm dpc dims=cp,dp # data- and context-parallel ranks (Megatron-Core reduces gradients over "
		       "both)");
	if (cp > 1 && ep > 1 && dpe > 1)
		gt_out(e, "comm dpec dims=cp,ep,dp # with the expert-parallel ranks (the dense weights' gradients)");
	if (cp > 1 && ep > 1 && dpe == 1)
		gt_out(e, "comm epc dims=cp,ep # expert- and context-parallel ranks (the dense weights' gradients)");
}

static void em_init(struct em *e, FILE *f, const struct gen_config *c)
{
	memset(e, 0, sizeof *e);
	e->c = c;
	e->m = &c->m;
	e->f = f;
	e->graph = c->mode == GEN_TRAIN && c->launch == GEN_LAUNCH_GRAPH; /* a training step captured whole */
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
	int rc = c->mode == GEN_TRAIN ? gt_write_train(&e) : gt_write_infer(&e);
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
	gt_chunk_runs(c, stage, 0, &r);
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
