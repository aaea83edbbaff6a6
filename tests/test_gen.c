/*
 * test_gen.c -- the workload generator's arithmetic against the papers it
 * follows, and its traces against the parser:
 *
 *   ZeRO (Rajbhandari et al. 2020): 16 psi, 4 psi + 12 psi/N, 2 psi + 14 psi/N,
 *     16 psi/N bytes per rank; 2 psi and 3 psi elements of communication
 *   Megatron-LM (Narayanan et al. 2021): model FLOPs of GPT-3 175B
 *   Korthikanti et al. 2022: activation bytes per layer (34 + 5as/h ...)
 *   presets: parameter counts of the published models
 *   refusals: configs that cannot be laid out, each naming its flag
 *   traces: parse, are byte-identical when generated twice, and the FLOPs of
 *     their ops add up to the workload line's model FLOPs
 */
#include "gen_test.h"

static void test_zero(void)
{
	/* the ZeRO paper's example: 7.5B parameters on 64 GPUs, K = 12 */
	double psi = 7.5e9, n = 64;
	static const double want_gb[4] = {120, 31.4, 16.6, 1.88};
	for (int z = 0; z <= 3; z++) {
		struct gen_memory m;
		gen_zero_memory(psi, 64, z, 0, &m);
		double got = m.params + m.grads + m.optimizer;
		double want = z == 0   ? 16 * psi
		              : z == 1 ? 4 * psi + 12 * psi / n
		              : z == 2 ? 2 * psi + 14 * psi / n
		                       : 16 * psi / n;
		CHECK(near(got, want, 1e-15), "ZeRO-%d: %.17g bytes, want %.17g", z, got, want);
		CHECK(fabs(got / 1e9 - want_gb[z]) < 0.05, "ZeRO-%d: %.3g GB, the paper's Figure 1 says %g", z,
		      got / 1e9, want_gb[z]);
	}
	struct gen_memory m;
	gen_zero_memory(psi, 64, 1, 1, &m);
	CHECK(m.optimizer == 0 && m.params == 2 * psi && m.grads == 2 * psi,
	      "offload keeps no optimizer state on the GPU");
	/* communication per rank: 2 psi for DP and ZeRO-1/2, 3 psi for ZeRO-3 */
	for (int z = 0; z <= 3; z++) {
		double v = gen_dp_comm_elems(psi, 64, z), k = z == 3 ? 3 : 2;
		CHECK(near(v, k * psi * 63 / 64, 1e-15), "ZeRO-%d volume %.17g, want %g psi (N-1)/N", z, v, k);
		CHECK(near(gen_dp_comm_elems(psi, 1 << 20, z), k * psi, 1e-5), "ZeRO-%d volume tends to %g psi", z, k);
	}
	CHECK(gen_dp_comm_elems(psi, 1, 0) == 0, "one rank sends nothing");
}

static void test_flops(void)
{
	struct gen_config c;
	config(&c, "gpt3-175b");
	layout(&c, 8, 16, 8, 1, 1536);
	double B = 1536, s = 2048, l = 96, h = 12288, V = 50257;
	double megatron = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
	double got = gen_model_flops(&c);
	CHECK(near(got, megatron, 1e-12), "GPT-3 175B: %.17g FLOPs, Megatron-LM says %.17g", got, megatron);
	CHECK(fabs(got / 1e18 - 3.386) < 0.001, "GPT-3 175B step: %.4g EFLOP (3.386 by hand)", got / 1e18);
	CHECK(gen_tokens(&c) == 1536.0 * 2048, "tokens %.17g", gen_tokens(&c));
	/* 6 N T + attention for a GQA model: LLaMA-3 8B, 8 sequences of 8192 */
	config(&c, "llama3-8b");
	layout(&c, 1, 1, 8, 1, 8);
	double n_mm = gen_active_params(&c.m) - 128256.0 * 4096 - 4096 * (2 * 32 + 1); /* no lookup table, norms */
	double attn = 3 * 8 * 2.0 * 8192 * 8192 * 32 * 32 * 2 * 128;
	CHECK(near(gen_model_flops(&c), 6 * n_mm * 8 * 8192 + attn, 1e-12), "LLaMA-3 8B: %.17g FLOPs",
	      gen_model_flops(&c));
	/* inference: prefill over the prompt, then one token per decode step */
	c.mode = GEN_INFER;
	c.inf.batch = 2;
	c.inf.input_len = 100;
	c.inf.output_len = 11;
	c.p.dp = 1;
	double nb = n_mm - 128256.0 * 4096, pair = 2.0 * 32 * 32 * 256;
	double keys = 0;
	for (int j = 1; j <= 10; j++)
		keys += 100 + j;
	double want = 2 * (2 * 100 * nb + 2 * 128256.0 * 4096 + pair * 100 * 100 + 10 * 2 * n_mm + pair * keys);
	CHECK(near(gen_model_flops(&c), want, 1e-12), "inference FLOPs %.17g, want %.17g", gen_model_flops(&c), want);
	CHECK(gen_decode_steps(&c) == 10 && gen_tokens(&c) == 22, "decode steps %lld, tokens %g", gen_decode_steps(&c),
	      gen_tokens(&c));
}

/* Per term (docs/workloads.md): LayerNorm inputs 4, QKV and MLP inputs 2 + 2,
   hidden dropout masks 1 + 1 (dropout only): replicated over tp unless sp;
   Q, K, V, out-projection input 8, MLP 16: /t; naive attention's scores
   2as^2b (softmax output) + 3as^2b (dropout mask and output, dropout only),
   /t; FlashAttention's log-sum-exp 4asb (fp32), /t. */
static void test_act_variants(struct gen_config *c)
{
	double s = 2048, b = 1, h = 12288, a = 96, sbh = s * b * h, t = 8;
	struct {
		enum gen_attn_impl impl;
		double p, want; /* bytes over s b h, one rank */
	} v[] = {
	    {GEN_NAIVE, 0.1, 34 + 5 * a * s / h}, {GEN_NAIVE, 0, 32 + 2 * a * s / h}, {GEN_FLASH2, 0.1, 34 + 4 * a / h},
	    {GEN_FLASH2, 0, 32 + 4 * a / h},      {GEN_FLASH3, 0, 32 + 4 * a / h},    {GEN_CUDNN, 0, 32 + 4 * a / h},
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		c->attn_impl = v[i].impl;
		c->dropout = v[i].p;
		c->p.tp = 1;
		c->p.sp = 0;
		double got = gen_act_layer_bytes(c, 0, GEN_RC_NONE);
		CHECK(near(got, sbh * v[i].want, 1e-15), "%s dropout %g: %.17g bytes, want s b h x %.17g",
		      gen_attn_impl_name(v[i].impl), v[i].p, got, v[i].want);
		/* tensor parallel: the replicated part stays, the rest is /t */
		double repl = v[i].p > 0 ? 10 : 8;
		c->p.tp = (long long)t;
		got = gen_act_layer_bytes(c, 0, GEN_RC_NONE);
		CHECK(near(got, sbh * (repl + (v[i].want - repl) / t), 1e-15), "%s dropout %g, tp 8: %.17g",
		      gen_attn_impl_name(v[i].impl), v[i].p, got);
		c->p.sp = 1;
		got = gen_act_layer_bytes(c, 0, GEN_RC_NONE);
		CHECK(near(got, sbh * v[i].want / t, 1e-15), "%s dropout %g, tp 8 sp: %.17g",
		      gen_attn_impl_name(v[i].impl), v[i].p, got);
		/* selective recompute drops the scores; flash keeps its log-sum-exp */
		double sel = v[i].impl == GEN_NAIVE ? repl + 24 : v[i].want;
		got = gen_act_layer_bytes(c, 0, GEN_RC_SELECTIVE);
		CHECK(near(got, sbh * sel / t, 1e-15), "%s dropout %g, selective: %.17g", gen_attn_impl_name(v[i].impl),
		      v[i].p, got);
	}
	c->attn_impl = GEN_FLASH2;
	c->dropout = 0;
	c->p.tp = 1;
	c->p.sp = 0;
	/* fp8 training: Transformer Engine saves the fp8 inputs of its GEMMs (1
	   byte a value): the two norm outputs 1 + 1 instead of 2 + 2, the GELU
	   output the second MLP GEMM multiplies 4 instead of 8 (its bf16 input
	   stays: 8), the out-projection's fp8 input 1 beside the bf16 attention
	   output: 32 - 2 - 4 + 1 = 27 */
	c->p.dtype = GEN_FP8;
	double got = gen_act_layer_bytes(c, 0, GEN_RC_NONE);
	CHECK(near(got, sbh * (27 + 4 * a / h), 1e-15), "fp8: %.17g bytes, want s b h x (27 + 4a/h)", got);
	/* NVFP4: the same tensors at half a byte and an e4m3 scale per 16 values, q = 0.5625 where fp8 has 1: the
	   norms' outputs 2q, the GELU output 4q, the out-projection's copy q: 32 - 6 (2 - q) + q = 20 + 7q */
	c->p.dtype = GEN_FP4;
	got = gen_act_layer_bytes(c, 0, GEN_RC_NONE);
	CHECK(near(got, sbh * (20 + 7 * 0.5625 + 4 * a / h), 1e-15), "fp4: %.17g bytes, want s b h x (20 + 7q + 4a/h)",
	      got);
	c->p.dtype = GEN_BF16;
}

static void test_activations(void)
{
	struct gen_config c;
	config(&c, "gpt3-175b");
	layout(&c, 1, 1, 1, 1, 1);
	double s = 2048, b = 1, h = 12288, a = 96, sbh = s * b * h;
	/* the paper's setting: non-fused attention, dropout */
	c.attn_impl = GEN_NAIVE;
	c.dropout = 0.1;
	CHECK(gen_act_layer_bytes(&c, 0, GEN_RC_NONE) == sbh * (34 + 5 * a * s / h), "no parallelism: %.17g",
	      gen_act_layer_bytes(&c, 0, GEN_RC_NONE));
	c.p.tp = 8;
	CHECK(near(gen_act_layer_bytes(&c, 0, GEN_RC_NONE), sbh * (10 + 24 / 8.0 + 5 * a * s / (h * 8)), 1e-15),
	      "tensor parallel: %.17g", gen_act_layer_bytes(&c, 0, GEN_RC_NONE));
	c.p.sp = 1;
	CHECK(near(gen_act_layer_bytes(&c, 0, GEN_RC_NONE), sbh / 8 * (34 + 5 * a * s / h), 1e-15),
	      "tensor + sequence parallel: %.17g", gen_act_layer_bytes(&c, 0, GEN_RC_NONE));
	CHECK(near(gen_act_layer_bytes(&c, 0, GEN_RC_SELECTIVE), sbh / 8 * 34, 1e-15), "selective recompute: %.17g",
	      gen_act_layer_bytes(&c, 0, GEN_RC_SELECTIVE));
	CHECK(gen_act_layer_bytes(&c, 0, GEN_RC_FULL) == 2 * sbh / 8, "full recompute keeps the input");
	/* the paper's Table 4 setting for 175B: 1F1B stage 0 holds pp micro-batches */
	layout(&c, 8, 16, 8, 1, 1536);
	c.p.sp = 0;
	c.p.recompute = GEN_RC_FULL;
	struct gen_memory m;
	gen_stage_memory(&c, 0, &m);
	double want = 16 * 6 * 2 * sbh + sbh * (10 + 24 / 8.0 + 5 * a * s / (h * 8));
	CHECK(near(m.activations, want, 1e-12), "stage 0 activations %.17g, want %.17g", m.activations, want);
	gen_stage_memory(&c, 15, &m);
	want = 1 * 6 * 2 * sbh + sbh * (10 + 24 / 8.0 + 5 * a * s / (h * 8));
	CHECK(near(m.activations, want, 1e-12), "stage 15 activations %.17g, want %.17g", m.activations, want);
	c.p.sched = GEN_GPIPE;
	gen_stage_memory(&c, 15, &m);
	CHECK(near(m.activations, 192 * 6 * 2 * sbh + sbh * (13 + 5 * a * s / (h * 8)), 1e-12),
	      "GPipe holds every micro-batch: %.17g", m.activations);
	/* parameters: 175B / (tp 8 x pp 16) ~ 1.36B per rank in the middle */
	struct gen_params p = gen_stage_params(&c, 5);
	CHECK(near(p.dense, 6 * (12 * h * h / 8 + 4 * h), 1e-15), "middle stage %.17g params", p.dense);
	/* the same with and without dropout, naive and FlashAttention */
	layout(&c, 1, 1, 1, 1, 1);
	c.p.sched = GEN_1F1B;
	c.p.recompute = GEN_RC_NONE;
	test_act_variants(&c);
	/* the default: FlashAttention, no dropout; full recompute's peak layer has no scores */
	layout(&c, 8, 16, 8, 1, 1536);
	c.p.recompute = GEN_RC_FULL;
	gen_stage_memory(&c, 0, &m);
	want = 16 * 6 * 2 * sbh + sbh * (8 + 24 / 8.0 + 4 * a / (h * 8));
	CHECK(near(m.activations, want, 1e-12), "flash stage 0 activations %.17g, want %.17g", m.activations, want);
}

static void test_kv(void)
{
	struct gen_config c;
	config(&c, "llama2-70b");
	layout(&c, 4, 1, 1, 1, 1);
	c.mode = GEN_INFER;
	c.inf.batch = 16;
	c.inf.input_len = 1000;
	c.inf.output_len = 30;
	struct gen_memory m;
	gen_stage_memory(&c, 0, &m);
	double want = 2.0 * 80 * (8 / 4) * 128 * 16 * 1030 * 2;
	CHECK(m.kv == want, "KV cache %.17g, want %.17g", m.kv, want);
	c.inf.paged = 1; /* 1030 tokens fill 65 blocks of 16 */
	gen_stage_memory(&c, 0, &m);
	CHECK(m.kv == want / 1030 * 1040, "paged KV cache %.17g", m.kv);
	config(&c, "deepseek-v3");
	c.mode = GEN_INFER;
	c.inf.output_len = 1;
	gen_stage_memory(&c, 0, &m);
	CHECK(m.kv == 2.0 * 61 * (512 + 64) * 1 * 513, "MLA caches the latent: %.17g", m.kv);
}

static void test_presets(void)
{
	static const struct {
		const char *name;
		double total, active; /* published, billions */
	} pub[] = {
	    {"gpt3-125m", 0.125, 0},
	    {"gpt3-350m", 0.35, 0},
	    {"gpt3-760m", 0.76, 0},
	    {"gpt3-1.3b", 1.3, 0},
	    {"gpt3-2.7b", 2.7, 0},
	    {"gpt3-6.7b", 6.7, 0},
	    {"gpt3-13b", 13, 0},
	    {"gpt3-175b", 175, 0},
	    {"llama2-7b", 6.74, 0},
	    {"llama2-13b", 13.0, 0},
	    {"llama2-70b", 69.0, 0},
	    {"llama3-8b", 8.03, 0},
	    {"llama3-70b", 70.6, 0},
	    {"llama3-405b", 405, 0},
	    {"mixtral-8x7b", 46.7, 12.9},
	    {"deepseek-v3", 671, 37},
	    {"qwen3-30b-a3b", 30.5, 3.3},
	    {"qwen3-235b-a22b", 235, 22},   /* Qwen3 Technical Report, Table 2 */
	    {"kimi-k2", 1040, 32.6},        /* Kimi K2 report, Table 2 */
	    {"gpt-oss-120b", 116.83, 0},    /* model card, Table 1 (its 5.13B active leave the input embedding out) */
	    {"nemotron-3-nano", 31.6, 3.6}, /* Nemotron 3 Nano technical report: 31.6B, 3.6B active with embeddings */
	    {"nemotron-3-super", 120.6, 12.7}, /* its model page (research.nvidia.com): 120.6B, 12.7B a forward pass */
	    {"nemotron-3-ultra", 550, 55},     /* its model page (research.nvidia.com): 550B total, 55B active */
	    {"deepseek-v4-flash", 284, 0},     /* its model card: 284B total (13B active: below) */
	};
	int n = 0;
	for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
		const struct gen_model *m = gen_preset(pub[i].name);
		CHECK(m != NULL, "preset %s", pub[i].name);
		if (!m)
			continue;
		double t = gen_total_params(m) / 1e9, a = gen_active_params(m) / 1e9;
		CHECK(fabs(t / pub[i].total - 1) < 0.03, "%s: %.4g B parameters, published %g B", m->name, t,
		      pub[i].total);
		if (pub[i].active)
			CHECK(fabs(a / pub[i].active - 1) < 0.03, "%s: %.4g B active, published %g B", m->name, a,
			      pub[i].active);
		struct gen_config c;
		config(&c, m->name);
		char why[256];
		CHECK(!gen_check(&c, why, sizeof why), "%s on one rank: %s", m->name, why);
	}
	/* DeepSeek-V4-Flash's model card: 13B activated, the input embedding left out (as gpt-oss's card counts) */
	const struct gen_model *v4 = gen_preset("deepseek-v4-flash");
	if (v4) {
		double a = (gen_active_params(v4) - (double)v4->vocab * v4->hidden) / 1e9;
		CHECK(fabs(a / 13 - 1) < 0.03,
		      "deepseek-v4-flash: %.4g B active without the input embedding, published 13 B", a);
	}
	while (gen_preset_at(n))
		n++;
	CHECK(n == (int)(sizeof pub / sizeof pub[0]), "%d presets, %zu tested", n, sizeof pub / sizeof pub[0]);
	CHECK(gen_preset("gpt3-176b") == NULL, "no such preset");
}

/* the uneven splits as Megatron-Core computes them (transformer_block.py:
   layers + embedding + loss slots per chunk; first/last stage counts) */
static void test_pipeline_split(void)
{
	struct gen_config c;
	char why[512];
	config(&c, "llama3-405b"); /* 126 layers, Megatron-Bridge's 405B layout */
	layout(&c, 4, 8, 1, 1, 8);
	c.p.sched = GEN_INTERLEAVED;
	c.p.vstages = 4;
	refuse(&c, "--layers 126 is not divisible by --pp 8 x --virtual-stages 4 = 32 model chunks");
	c.p.split_embedding = c.p.split_loss = 1;
	CHECK(!gen_check(&c, why, sizeof why), "126 + 2 on 32 chunks: %s", why);
	long long total = 0;
	for (long long st = 0; st < 8; st++)
		for (long long ch = 0; ch < 4; ch++) {
			long long n = gen_chunk_layers(&c, st, ch),
			          want = (st == 0 && ch == 0) || (st == 7 && ch == 3) ? 3 : 4;
			CHECK(n == want, "stage %lld chunk %lld: %lld layers, want %lld", st, ch, n, want);
			total += n;
		}
	CHECK(total == 126, "chunks hold %lld layers, want 126", total);
	/* chunks in Megatron's order (chunk x pp + stage): stage 1's first chunk follows stage 0's */
	CHECK(gen_chunk_first_layer(&c, 1, 0) == 3, "stage 1 chunk 0 starts at %lld, want 3",
	      gen_chunk_first_layer(&c, 1, 0));
	CHECK(gen_chunk_first_layer(&c, 0, 1) == 3 + 7 * 4, "stage 0 chunk 1 starts at %lld, want 31",
	      gen_chunk_first_layer(&c, 0, 1));
	CHECK(gen_stage_layers(&c, 0) == 15 && gen_stage_layers(&c, 3) == 16, "stage layers %lld, %lld",
	      gen_stage_layers(&c, 0), gen_stage_layers(&c, 3));
	c.p.vstages = 8; /* 126 + 2 on 128 chunks: the end chunks hold no layer, only the embedding and the loss */
	c.p.pp = 16;
	c.p.global_batch = 16;
	CHECK(!gen_check(&c, why, sizeof why) && gen_chunk_layers(&c, 0, 0) == 0 && gen_chunk_layers(&c, 15, 7) == 0 &&
	          gen_chunk_layers(&c, 1, 0) == 1,
	      "126 + 2 on 128 chunks: %s", why);
	c.p.split_loss = 0;
	refuse(&c, "--layers 126 + 1 (embedding) is not divisible");
	/* first and last stage counts; the middle stages share the rest */
	config(&c, "gpt3-175b");
	layout(&c, 8, 4, 1, 1, 4);
	c.p.first_layers = 18;
	c.p.last_layers = 30;
	CHECK(!gen_check(&c, why, sizeof why), "18 + 2 x 24 + 30: %s", why);
	CHECK(gen_chunk_layers(&c, 0, 0) == 18 && gen_chunk_layers(&c, 1, 0) == 24 &&
	          gen_chunk_layers(&c, 3, 0) == 30 && gen_chunk_first_layer(&c, 3, 0) == 66,
	      "first/last split: %lld %lld %lld from %lld", gen_chunk_layers(&c, 0, 0), gen_chunk_layers(&c, 1, 0),
	      gen_chunk_layers(&c, 3, 0), gen_chunk_first_layer(&c, 3, 0));
	c.p.last_layers = 31;
	refuse(&c, "minus the first and last stages' 49 is not divisible by the 2 middle stages");
	c.p.last_layers = 30;
	c.p.split_loss = 1;
	refuse(&c, "exclude each other");
	c.p.split_loss = 0;
	c.p.pp = 1;
	refuse(&c, "--decoder-first-pipeline-num-layers needs --pp 2 or more");
}

static void test_refusals(void)
{
	struct gen_config c;
	config(&c, "gpt3-175b");
	layout(&c, 7, 1, 1, 1, 1);
	refuse(&c, "--heads 96 is not divisible by --tp 7");
	config(&c, "gpt3-125m");
	c.attn_impl = GEN_FLASH3;
	c.dropout = 0.1;
	refuse(&c, "--dropout with --attn-impl flash3: FlashAttention-3 has no dropout");
	config(&c, "llama3-8b");
	layout(&c, 16, 1, 1, 1, 1); /* 8 kv heads on 16 ranks: replicated, allowed */
	char why[512];
	CHECK(!gen_check(&c, why, sizeof why), "kv heads replicate when tp > kv heads: %s", why);
	c.m.heads = 48;
	c.m.kv_heads = 6;
	c.p.tp = 4;
	refuse(&c, "--kv-heads 6");
	config(&c, "gpt3-175b");
	layout(&c, 8, 5, 1, 1, 5);
	refuse(&c, "--layers 96 is not divisible by --pp 5");
	layout(&c, 8, 4, 3, 2, 100);
	refuse(&c, "--global-batch 100");
	layout(&c, 8, 4, 1, 1, 4);
	c.p.zero = 3;
	refuse(&c, "--zero 3");
	c.p.zero = 0;
	c.p.ep = 2;
	refuse(&c, "--ep 2");
	config(&c, "mixtral-8x7b");
	layout(&c, 1, 1, 6, 1, 6);
	c.p.ep = 3;
	refuse(&c, "--experts 8 is not divisible by --ep 3");
	c.p.ep = 4;
	refuse(&c, "--ep 4 does not divide --dp 6");
	config(&c, "gpt3-175b");
	layout(&c, 1, 1, 1, 1, 1);
	c.p.sched = GEN_INTERLEAVED;
	c.p.vstages = 2;
	refuse(&c, "--schedule interleaved");
	layout(&c, 1, 4, 1, 1, 6);
	refuse(&c, "--pp 4");
	config(&c, "llama2-7b");
	layout(&c, 3, 1, 1, 1, 1);
	c.m.heads = 33;
	c.m.kv_heads = 33;
	refuse(&c, "--ffn 11008 is not divisible by --tp 3");
	config(&c, "llama2-7b");
	c.mode = GEN_INFER;
	c.p.pp = 3;
	refuse(&c, "--layers 32 is not divisible by --pp 3");
}

/* The vocabulary padded as Megatron-LM logs it for GPT-2's 50257 tokens ("padded vocab (size: 50257) with 47 dummy
   tokens (new size: 50304)" at tp 1, 943 and 51200 at tp 8) and as vLLM pads it (a multiple of 64). */
static void test_vocab(void)
{
	struct gen_config c;
	config(&c, "gpt3-175b");
	CHECK(gen_vocab_padded(&c) == 50304, "tp 1: padded to %lld, Megatron-LM 50304", gen_vocab_padded(&c));
	c.p.tp = 8;
	CHECK(gen_vocab_padded(&c) == 51200, "tp 8: padded to %lld, Megatron-LM 51200", gen_vocab_padded(&c));
	c.p.vocab_div = 1;
	CHECK(gen_vocab_padded(&c) == 50264, "tp 8, divisible by 1: %lld, want 50264 (a multiple of tp)",
	      gen_vocab_padded(&c));
	c.p.vocab_div = 0;
	c.mode = GEN_INFER;
	c.p.tp = 1;
	CHECK(gen_vocab_padded(&c) == 50304, "inference: padded to %lld, vLLM 50304", gen_vocab_padded(&c));
	config(&c, "llama3-8b");
	c.p.tp = 8;
	CHECK(gen_vocab_padded(&c) == 129024, "llama3-8b tp 8: padded to %lld, want 129024 (126 x 1024)",
	      gen_vocab_padded(&c));
}

static void test_traces(void)
{
	struct gen_config c;
	config(&c, "gpt3-175b");
	layout(&c, 8, 16, 8, 1, 1536);
	/* the GEMMs are all but attention: 1 - (s/6h) / (1 + s/6h + V/12lh) of the model FLOPs */
	double gemm = 1 - (2048 / (6 * 12288.0)) / (1 + 2048 / (6 * 12288.0) + 50257 / (12 * 96 * 12288.0));
	test_trace(&c, "gpt3-175b", gemm);
	c.p.recompute = GEN_RC_FULL; /* recompute runs the forward GEMMs again: 4/3 */
	test_trace(&c, "gpt3-175b full recompute", gemm * 4 / 3);
	c.p.recompute = GEN_RC_NONE;
	c.p.sched = GEN_INTERLEAVED;
	c.p.vstages = 2;
	c.m.layers = 32;
	c.p.global_batch = 256;
	gemm = 1 - (2048 / (6 * 12288.0)) / (1 + 2048 / (6 * 12288.0) + 50257 / (12 * 32 * 12288.0));
	test_trace(&c, "gpt3 interleaved", gemm);
	config(&c, "llama3-8b");
	layout(&c, 2, 1, 4, 1, 32);
	c.p.zero = 3;
	c.p.sp = 1;
	test_trace(&c, "llama3-8b zero-3 sp", 1 - 3.0 * 32 * (2 * 32 * 32 * 256) * 8192.0 * 8192 / gen_model_flops(&c));
	config(&c, "llama2-70b");
	layout(&c, 4, 1, 1, 1, 1);
	c.mode = GEN_INFER;
	c.inf.batch = 4;
	c.inf.input_len = 64;
	c.inf.output_len = 2048;
	char *txt = text_of(&c, NULL), why[TR_MSG_MAX];
	struct trace *t = tr_parse_string(txt, "infer", why, sizeof why);
	CHECK(t && tr_workload(t)->decode_steps == 2047, "inference trace: %s", t ? "decode_steps" : why);
	int lines = 0;
	for (char *p = txt; p && *p; p++)
		lines += *p == '\n';
	CHECK(lines < 250, "2047 decode steps in %d lines", lines);
	tr_free(t);
	free(txt);
}

static void test_parse_args(void)
{
	struct gen_config c;
	struct gen_args a;
	char why[1280];
	int rc = parse("gpt --layers 2 --hidden 512 --heads 8 --attn-impl naive --dropout 0.1 -o x.trace", &c, &a, why,
	               sizeof why);
	CHECK(rc == 0, "parse: %s", why);
	CHECK(c.attn_impl == GEN_NAIVE && c.dropout == 0.1 && c.m.head_dim == 64 && c.m.ffn == 2048 &&
	          c.m.kv_heads == 8 && c.seq == 2048,
	      "parsed config: impl %d dropout %g head dim %lld ffn %lld", (int)c.attn_impl, c.dropout, c.m.head_dim,
	      c.m.ffn);
	CHECK(!strcmp(a.cmdline, "gpt --layers 2 --hidden 512 --heads 8 --attn-impl naive --dropout 0.1") &&
	          a.outpath != NULL,
	      "command line '%s', -o %s", a.cmdline, a.outpath ? "given" : "lost");
	rc = parse("llama3-8b", &c, &a, why, sizeof why);
	CHECK(rc == 0 && c.attn_impl == GEN_FLASH2 && c.dropout == 0 && c.m.kv_heads == 8, "defaults: %s", why);
	static const struct refusal bad[] = {
	    {"gpt3-175b --dropout 1", "--dropout 1: expected a probability from 0 up to (not including) 1"},
	    {"gpt3-175b --dropout -0.1", "--dropout -0.1: expected a probability"},
	    {"gpt3-175b --dropout x", "--dropout x: expected a probability"},
	    {"gpt3-175b --dropout 0.1x", "--dropout 0.1x: expected a probability"},
	    {"gpt3-175b --attn-impl flash4", "--attn-impl flash4: expected flash2|flash3|naive|flash1"},
	    {"llama2-7b --mode infer --dropout 0.1", "--dropout belongs to --mode train"},
	    {"gpt3-175b --tp 0", "--tp 0: expected a positive integer up to 1048576"},
	    {"gpt3-175b --tp 7", "--heads 96 is not divisible by --tp 7 "},
	    {"gpt --layers 2", "gpt needs --layers, --hidden and --heads"},
	    {"gpt3-999b", "unknown model 'gpt3-999b' (presets: gpt3-125m, "},
	};
	check_refusals(bad, sizeof bad / sizeof bad[0]);
}

/* --pipeline-layout against the expectations of Megatron-Core's own tests
   (tests/unit_tests/transformer/test_pipeline_layout.py,
   test_parsing_layout_from_str: each string and the chunks it must give),
   and DeepSeek-V3's layout as Megatron-Bridge's recipe runs it. */
static void test_layout(void)
{
	static const struct {
		const char *text;
		int chunks, layers[8]; /* the first 8 chunks' t counts */
		int mtp_chunk;
	} ok[] = {
	    {"E|t*6|t|L", 4, {0, 6, 1, 0}, -1},
	    {"E|t|t*2|t||(t|)*2,t*2,L", 8, {0, 1, 2, 1, 0, 1, 1, 2}, -1},
	    {"Et*3|(tt|)*29,m|L", 32, {3, 2, 2, 2, 2, 2, 2, 2}, 30},
	    {"Et*2|(tt|)*29,t|mL", 32, {2, 2, 2, 2, 2, 2, 2, 2}, 31},
	};
	char why[512];
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct gen_layout L;
		int rc = gen_layout_parse(&L, ok[i].text, why, sizeof why);
		CHECK(rc == 0 && L.chunks == ok[i].chunks && L.mtp_chunk == ok[i].mtp_chunk && L.emb == 1 &&
		          L.loss == 1,
		      "%s: rc %d (%s), %d chunks, mtp in %d", ok[i].text, rc, rc ? why : "", L.chunks, L.mtp_chunk);
		for (int q = 0; q < 8 && q < L.chunks; q++)
			CHECK(L.layers[q] == ok[i].layers[q], "%s: chunk %d holds %d layers, want %d", ok[i].text, q,
			      L.layers[q], ok[i].layers[q]);
	}
	/* the last chunks of "Et*3|(tt|)*29,m|L": 2 layers in chunk 29, the MTP module alone, the loss alone */
	struct gen_layout L;
	CHECK(!gen_layout_parse(&L, "Et*3|(tt|)*29,m|L", why, sizeof why) && L.layers[29] == 2 && L.layers[30] == 0 &&
	          L.layers[31] == 0 && L.loss_chunk == 31 && L.mtp == 1,
	      "the end of DeepSeek-V3's layout");

	/* Megatron-Bridge's DeepSeek-V3 recipe on 16 stages x 2 (its pretty_repr: stage 14 holds 2 layers and the
	   MTP module, stage 15 2 layers and the loss) */
	struct gen_config c;
	struct gen_args a;
	int rc = parse("deepseek-v3 --pp 16 --dp 16 --ep 8 --global-batch 256 --pipeline-layout Et*3|(tt|)*29,m|L", &c,
	               &a, why, sizeof why);
	CHECK(rc == 0 && c.p.vstages == 2 && c.p.sched == GEN_INTERLEAVED, "DeepSeek-V3 layout: %s", rc ? why : "");
	if (!rc) {
		long long total = 0, mtp = 0;
		for (long long st = 0; st < 16; st++)
			for (long long ch = 0; ch < 2; ch++) {
				total += gen_chunk_layers(&c, st, ch);
				mtp += gen_chunk_mtp(&c, st, ch);
			}
		CHECK(total == 61 && mtp == 1 && gen_chunk_mtp(&c, 14, 1) == 1,
		      "61 layers (%lld), one MTP module (%lld)", total, mtp);
		CHECK(gen_stage_layers(&c, 0) == 5 && gen_stage_layers(&c, 14) == 2 && gen_stage_layers(&c, 15) == 2,
		      "stage layers %lld %lld %lld", gen_stage_layers(&c, 0), gen_stage_layers(&c, 14),
		      gen_stage_layers(&c, 15));
		CHECK(gen_chunk_first_layer(&c, 0, 1) == 3 + 15 * 2, "stage 0's second chunk starts at layer %lld",
		      gen_chunk_first_layer(&c, 0, 1));
		char *t = text_of(&c, "layout");
		const char *d14 = t ? strstr(t, "def fwd_c1_pp14 {") : NULL, *end = d14 ? strstr(d14, "\n}") : NULL;
		const char *call = d14 ? strstr(d14, "call mtp_fwd") : NULL;
		CHECK(call && call < end && strstr(t, "call mtp_fwd") == call,
		      "the MTP module runs in stage 14's chunk 1");
		free(t);
	}
	static const struct refusal bad[] = {
	    {"deepseek-v3 --pp 16 --pipeline-layout Et*3|(tt|)*29,t|mL", "names 62 transformer layers (t)"},
	    {"deepseek-v3 --pp 16 --pipeline-layout tE|(tt|)*30mL", "the embedding (E) must be named once"},
	    {"deepseek-v3 --pp 16 --pipeline-layout Et*3|(tt|)*29,m|", "the loss (L) must be named once"},
	    {"deepseek-v3 --pp 16 --mtp-num-layers 0 --pipeline-layout Et*3|(tt|)*29,m|L", "names 1 MTP modules (m)"},
	    {"deepseek-v3 --pp 16 --pipeline-layout Et*3|(tt|)*28,m|tt|L", "the MTP modules (m) must share one chunk"},
	    {"deepseek-v3 --pp 16 --pipeline-layout Et*3|(tt|)*29,m|x", "'x' is not a layer"},
	    {"deepseek-v3 --pp 16 --pipeline-layout Et*3|(tt|*29,m|L", "'(' without its ')'"},
	    {"deepseek-v3 --pp 8 --pipeline-layout Et*3|(tt|)*29,m|L|",
	     "names 33 model chunks, not a multiple of --pp 8"},
	    {"deepseek-v3 --pp 16 --virtual-stages 4 --pipeline-layout Et*3|(tt|)*29,m|L", "--virtual-stages says 4"},
	    {"deepseek-v3 --pp 16 --schedule 1f1b --pipeline-layout Et*3|(tt|)*29,m|L",
	     "that is --schedule interleaved"},
	    {"deepseek-v3 --pp 16 --decoder-first-pipeline-num-layers 2 --pipeline-layout Et*3|(tt|)*29,m|L",
	     "exclude each other"},
	    {"deepseek-v3 --pp 16 --pipeline-layout (t*1000000)*1000000", "expands to more than"},
	    {"llama3-8b --mode infer --pipeline-layout Et*32L", "--pipeline-layout belongs to --mode train"},
	};
	check_refusals(bad, sizeof bad / sizeof bad[0]);
}

/* Model FLOPs as Megatron-Bridge counts them, against its own tables: each row of docs/performance-summary*.md
   prints TFLOP/s per GPU beside tokens/s per GPU, so their quotient is the FLOPs a token the source counted
   (tests/validation/measurements-public.tsv, the notes of T151, T068, T113, T257, T067, T138, T093). DeepSeek-V3
   matches with its MTP module (without it the count is 4% short); the dense rows pad the vocabulary as Megatron does.
 */
static void test_mcore_flops(void)
{
	static const struct {
		const char *line;
		double tflops, tokens; /* per GPU, as printed */
	} row[] = {
	    {"deepseek-v3 --seq 4096 --pp 8 --dp 32 --ep 32 --global-batch 4096 --pipeline-layout Et*4|(t*4|)*14tmL",
	     864, 3328},
	    {"qwen3-30b-a3b --seq 4096 --dp 8 --ep 8 --micro-batch 4 --global-batch 512", 923, 39936},
	    {"kimi-k2 --seq 4096 --dp 64 --ep 64 --micro-batch 2 --global-batch 4096", 1099, 5372},
	    {"nemotron-3-nano --dp 8 --ep 8 --micro-batch 4 --global-batch 512", 798, 35861}, /* T257, hybrid_flops */
	    /* T073, T077: hybrid_flops with LatentMoE and the recipe's two MTP passes ("*E" each, the logits thrice) */
	    {"nemotron-3-super --mtp-num-layers 2 --dp 64 --ep 64 --global-batch 512", 831, 9856},
	    /* T072: Nemotron 3.5 Lightning, Nano's architecture with the "*E" MTP module run twice (Megatron-Bridge's
	       recipes/nemotronh/nemotron_3_5_lightning.py) */
	    {"nemotron-3-nano --mtp-num-layers 2 --dp 8 --ep 8 --micro-batch 2 --global-batch 512", 807, 28672},
	    {"nemotron-3-ultra --mtp-num-layers 2 --dp 256 --ep 64 --global-batch 256", 1281, 3552},
	    {"gpt-oss-120b --seq 4096 --dp 64 --ep 64 --micro-batch 4 --global-batch 1280", 934, 28672},
	    /* T065: the dsv4_hybrid branch (each layer's compressed keys, the indexer, the window-only MTP module) */
	    {"deepseek-v4-flash --seq 4096 --dp 128 --ep 64 --global-batch 2048", 706, 7776},
	    {"llama3-70b --seq 8192 --tp 2 --pp 4 --dp 8 --global-batch 256", 1664, 3712},
	    {"llama3-405b --seq 8192 --tp 4 --pp 8 --dp 8 --global-batch 1536 --schedule interleaved --virtual-stages "
	     "4 "
	     "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split",
	     2646, 1048},
	};
	for (size_t i = 0; i < sizeof row / sizeof row[0]; i++) {
		struct gen_config c;
		struct gen_args a;
		char why[512];
		int rc = parse(row[i].line, &c, &a, why, sizeof why);
		CHECK(rc == 0, "%s: %s", row[i].line, why);
		if (rc)
			continue;
		double per_token = gen_mcore_flops(&c) / gen_tokens(&c), want = row[i].tflops / row[i].tokens * 1e12;
		CHECK(near(per_token, want, 0.006), "%s: %.5g FLOPs a token, the source's %.5g (ratio %.4f)", c.m.name,
		      per_token, want, per_token / want);
		if (c.m.mtp) {
			c.m.mtp = 0;
			CHECK(!near(gen_mcore_flops(&c) / gen_tokens(&c), want, 0.03), "%s without MTP matches too",
			      c.m.name);
		}
	}
	/* the MTP module's weights on its stage: a block as the last (256 experts at ep 1), eh_proj, norms and the
	   embedding copy; DeepSeek-V3's checkpoint holds 685B, 671B of the main model and 14B of the MTP module,
	   which also stores a copy of the output head (the model card) */
	struct gen_config c;
	config(&c, "deepseek-v3");
	struct gen_params mp = gen_mtp_params(&c, 1);
	double mtp_b = (mp.dense + mp.expert + (double)c.m.vocab * c.m.hidden) / 1e9;
	CHECK(fabs(mtp_b / 14 - 1) < 0.04, "DeepSeek-V3's MTP module: %.4g B parameters with the head, published 14 B",
	      mtp_b);
}

int main(void)
{
	test_zero();
	test_flops();
	test_activations();
	test_kv();
	test_presets();
	test_refusals();
	test_pipeline_split();
	test_vocab();
	test_traces();
	test_parse_args();
	test_layout();
	test_mcore_flops();
	printf("%d checks, %d failed\n", checks, fails);
	return fails != 0;
}
