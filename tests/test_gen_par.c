/*
 * test_gen_par.c -- `sim gen`'s parallel layouts and model families, each
 * counted by hand against the framework it follows: gradient reduction
 * overlap, inference on pipeline stages, context parallelism (ring and
 * all-to-all), tensor-parallel communication overlap, DeepSeek's compressed
 * attention, hybrid Mamba models, sliding windows. tests/test_gen_mech.c has
 * the ops of the other mechanisms, tests/test_gen.c the arithmetic.
 */
#include "gen_test.h"

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
	test_grad_sync();
	test_infer_pp();
	test_cp();
	test_cp_a2a();
	test_tp_overlap();
	test_csa();
	test_hybrid();
	test_window();
	printf("%d checks, %d failed\n", checks, fails);
	return fails != 0;
}
