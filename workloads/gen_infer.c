/*
 * gen_infer.c -- one inference request batch of a `sim gen` trace
 * (gen_trace.c says what it holds): the prefill, then the decode steps
 * binned by KV length (each layer's defs split around its attention, whose
 * KV length changes), with --pp the micro-batches passing through the
 * stages, with --engine vllm the host's work before each step.
 */
#include "gen_trace_int.h"

#include <stdlib.h>

#define MAX_BINS 8 /* decode KV-length groups */

/* ---- inference --------------------------------------------------------------- */

/* decode layer defs split around the attention, whose KV length changes */
static void emit_decode_split(struct em *e, enum block_kind kind, const struct block *B, struct step *attn)
{
	struct lines L = {.n = 0};
	int i = 0;
	gt_open_block(e, "def decode_%s_pre", gt_block_names[kind]);
	for (; B->st[i].kind != ST_ATTN; i++)
		gt_step_fwd(e, &L, &B->st[i]);
	gt_flush_lines(e, &L, NULL, NULL);
	gt_close_block(e);
	*attn = B->st[i];
	L.n = 0;
	gt_open_block(e, "def decode_%s_post", gt_block_names[kind]);
	for (i++; i < B->n; i++)
		gt_step_fwd(e, &L, &B->st[i]);
	gt_flush_lines(e, &L, NULL,
	               e->c->p.pp > 1 ? "lo" : NULL); /* pipeline: the send to the next stage waits for it */
	gt_close_block(e);
}

/* The host work an engine step of `seqs` sequences waits for (--engine),
   as a delay before its forward; nothing when the host keeps ahead. */
static void host_delay(struct em *e, long long seqs)
{
	double t = gen_engine_host_s(e->c, seqs);
	if (t > 0)
		gt_out(e, "delay time=%.9gus", t * 1e6);
}

/* --launch graph: the decode steps are replayed from CUDA graphs (vLLM and TensorRT-LLM capture them; vLLM's
   enforce_eager defaults to False); the prefill runs eager, as in vLLM, whose graphs are for decode batches. */
static int decode_graph(const struct gen_config *c)
{
	return c->launch == GEN_LAUNCH_GRAPH;
}

/* The decode defs of one micro-batch (one token per sequence); the
   attention of each layer kind goes to attn[], its KV length set per step. */
static int decode_defs(struct em *e, struct step *attn)
{
	const struct gen_config *c = e->c;
	e->graph = decode_graph(c);
	struct tok k = {c->inf.batch / gen_infer_microbatches(c), 1, c->inf.input_len + 1, 1, 0};
	struct block *B = malloc(sizeof *B);
	if (!B)
		return -1;
	for (int kind = 0; kind < BK_COUNT; kind++) {
		if (!gt_kind_used(e, kind))
			continue;
		gt_build_block(e, (enum block_kind)kind, &k, B);
		if (kind != BK_EMB && kind != BK_HEAD)
			emit_decode_split(e, (enum block_kind)kind, B, &attn[kind]);
		else
			gt_emit_block_defs(e, "decode_", (enum block_kind)kind, B);
	}
	free(B);
	e->graph = 0;
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
	e->graph = decode_graph(e->c);
	gt_attn_text(e, &L, &a, "fwd");
	if (n > 1)
		gt_open_block(e, "repeat %lld", n);
	gt_out(e, "call decode_%s_pre", gt_block_names[kind]);
	gt_flush_lines(e, &L, NULL, NULL);
	gt_out(e, "call decode_%s_post", gt_block_names[kind]);
	if (n > 1)
		gt_close_block(e);
	e->graph = 0;
}

/* the layers r of one decode step at KV length kv */
static void decode_layers(struct em *e, const struct runs *r, const struct step *attn, long long kv)
{
	struct decode_ctx x = {attn, kv};
	gt_emit_runs_of(e, r, 0, decode_one, &x);
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
	gt_chunk_runs(c, 0, 0, &r);
	for (long long i = 0; i < bins; i++) {
		long long n, kv = decode_bin(c, i, bins, &n);
		gt_open_block(e, "def decode_%lld", i);
		host_delay(e, c->inf.batch);
		gt_out(e, "call decode_emb_fwd");
		decode_layers(e, &r, attn, kv);
		gt_out(e, "call decode_head_fwd");
		gt_close_block(e);
	}
	gt_out(e, "mark name=decode");
	for (long long i = 0; i < bins; i++) {
		long long n;
		decode_bin(c, i, bins, &n);
		if (n > 1)
			gt_open_block(e, "repeat %lld", n);
		gt_out(e, "call decode_%lld", i);
		if (n > 1)
			gt_close_block(e);
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
		gt_out(e, "recv peer=pp-1 bytes=%lld", act);
	else if (bin >= 0)
		gt_out(e, "recv peer=pp+%lld bytes=%lld", P - 1, tok);
	if (s == 0) {
		host_delay(e, mb);
		gt_out(e, "call %semb_fwd", pre);
	}
	if (bin < 0)
		gt_call_runs(e, r, 0, "prefill_", "fwd");
	else
		decode_layers(e, r, attn, decode_bin(c, bin, bins, &n));
	if (s < P - 1) {
		gt_out(e, "send peer=pp+1 bytes=%lld stream=p2p_fwd after=lo", act);
		return;
	}
	gt_out(e, "call %shead_fwd", pre);
	gt_out(e, "send peer=pp-%lld bytes=%lld stream=p2p_tok after=lo", P - 1, tok);
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
		gt_chunk_runs(c, s, 0, &r);
		gt_open_block(e, "on pp=%lld", s);
		gt_memory_line(e, s);
		gt_out(e, "mark name=prefill");
		if (M > 1)
			gt_open_block(e, "repeat %lld", M);
		infer_pass(e, s, &r, attn, -1, bins);
		if (M > 1)
			gt_close_block(e);
		if (steps > 0)
			gt_out(e, "mark name=decode");
		for (long long i = 0; i < bins; i++) {
			long long n;
			decode_bin(c, i, bins, &n);
			if (n * M > 1)
				gt_open_block(e, "repeat %lld", n * M);
			infer_pass(e, s, &r, attn, i, bins);
			if (n * M > 1)
				gt_close_block(e);
		}
		if (s == 0) {
			if (M > 1)
				gt_open_block(e, "repeat %lld", M);
			gt_out(e, "recv peer=pp+%lld bytes=%lld", c->p.pp - 1, tok);
			if (M > 1)
				gt_close_block(e);
		}
		gt_close_block(e);
	}
}

int gt_write_infer(struct em *e)
{
	const struct gen_config *c = e->c;
	struct tok k = {c->inf.batch / gen_infer_microbatches(c), c->inf.input_len, c->inf.input_len, 0, 0};
	struct block *B = malloc(sizeof *B);
	struct runs r;
	if (!B)
		return -1;
	if (c->p.pp == 1)
		gt_memory_line(e, 0);
	for (int kind = 0; kind < BK_COUNT; kind++) {
		if (!gt_kind_used(e, kind))
			continue;
		gt_build_block(e, (enum block_kind)kind, &k, B);
		gt_emit_block_defs(e, "prefill_", (enum block_kind)kind, B);
	}
	free(B);
	if (c->p.pp > 1) {
		emit_infer_pp(e);
		return e->err ? -1 : 0;
	}
	gt_out(e, "mark name=prefill");
	host_delay(e, c->inf.batch);
	gt_out(e, "call prefill_emb_fwd");
	gt_chunk_runs(c, 0, 0, &r);
	gt_call_runs(e, &r, 0, "prefill_", "fwd");
	gt_out(e, "call prefill_head_fwd");
	if (gen_decode_steps(c) > 0)
		emit_decode(e);
	return e->err ? -1 : 0;
}
