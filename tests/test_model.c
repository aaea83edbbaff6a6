/*
 * test_model.c -- behaviours the device model must show, each a property
 * that can fail: wave quantization, tile padding, the kernel search on
 * skinny shapes, memoization, FlashAttention-3 vs -2 on Hopper, causal
 * masking, decode bound by the KV cache, Little's law, power limits, the
 * library's fallback kernels for misaligned leading dimensions.
 * usage: test_model ROOT
 */
#include "check.h"
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *root;

static struct arch_chip *load(const char *name, const char *set)
{
	char path[512];
	snprintf(path, sizeof path, "%s/configs/%s", root, name);
	struct arch_error err;
	const char *sets[1] = {set};
	struct arch_chip *c = arch_load(path, sets, set ? 1 : 0, &err);
	if (!c) {
		arch_error_print(&err, stderr);
		fails++;
	}
	return c;
}

static struct dm_result run(const struct arch_chip *c, const char *line)
{
	struct op op;
	struct dm_result r;
	char why[256];
	memset(&r, 0, sizeof r);
	if (op_parse(line, NULL, &op, why, sizeof why) || dm_predict(c, &op, &r, NULL, why, sizeof why)) {
		printf("FAIL %s: %s\n", line, why);
		fails++;
	}
	return r;
}

int main(int argc, char **argv)
{
	root = argc > 1 ? argv[1] : ".";
	struct arch_chip *h = load("h100.cfg", NULL), *a = load("a100.cfg", NULL);
	if (!h || !a)
		return 1;

	/* wave quantization: 132 SMs; a 133rd tile can only be absorbed by a different kernel, never for free */
	struct dm_result w1 = run(h, "gemm m=128 n=16896 k=8192 dtype=bf16"); /* 132 tiles of 128x128 */
	struct dm_result w2 = run(h, "gemm m=128 n=17024 k=8192 dtype=bf16"); /* 133 tiles */
	CHECK(w2.time_s > w1.time_s, "133 tiles (%.3g s) should cost more than 132 (%.3g s)", w2.time_s, w1.time_s);
	CHECK(w1.kern.waves <= 1.0 || w1.kern.splitk > 1, "132 tiles should fit one wave (%s, %.2f waves)",
	      w1.kern.name, w1.kern.waves);

	/* tile padding: 4097 rows are done as whole tiles, more MACs than 4096: on an A100 both take five waves of
	   216 CTAs (the padding fills the tail wave's idle SMs), so what the padding costs is its energy under the
	   power limit, a lower clock (padding that takes another wave: 133 tiles above) */
	struct dm_result p0 = run(a, "gemm m=4096 n=4096 k=4096 dtype=fp16");
	struct dm_result p1 = run(a, "gemm m=4097 n=4096 k=4096 dtype=fp16");
	CHECK(p1.time_s > p0.time_s && p1.clock_hz < p0.clock_hz,
	      "4097 rows (%.3g s at %.0f MHz) vs 4096 (%.3g s at %.0f MHz): padding not charged", p1.time_s,
	      p1.clock_hz / 1e6, p0.time_s, p0.clock_hz / 1e6);
	CHECK(p1.tflops < p0.tflops, "padding must lower achieved TFLOP/s");

	/* large GEMMs approach but never exceed the peak */
	struct dm_result big = run(a, "gemm m=16384 n=16384 k=16384 dtype=fp16");
	CHECK(big.peak_frac > 0.7 && big.peak_frac < 1.0, "large GEMM at %.2f of peak", big.peak_frac);
	CHECK(big.bound == B_MATRIX, "large GEMM bound by %s", dm_bound_name(big.bound));

	/* decode-sized GEMMs (M = 1..16) read the weights: bound by device memory, not the matrix units */
	struct dm_result dec = run(h, "gemm m=8 n=8192 k=8192 dtype=bf16");
	CHECK(dec.bound == B_DRAM || dec.bound == B_LATENCY || dec.bound == B_LAUNCH, "decode GEMM bound by %s",
	      dm_bound_name(dec.bound));
	CHECK(dec.kern.splitk > 1 || dec.kern.tile_m <= 32, "skinny GEMM should pick a small tile or split-K (%s)",
	      dec.kern.name);

	/* memoization returns the same answer */
	struct op op;
	char why[256];
	struct dm_result m1, m2;
	op_parse("gemm m=3000 n=5000 k=7000 dtype=bf16", NULL, &op, why, sizeof why);
	struct dm *memo = dm_new();
	dm_predict(h, &op, &m1, NULL, why, sizeof why);
	dm_predict_cached(memo, h, &op, &m2, why, sizeof why);
	dm_predict_cached(memo, h, &op, &m2, why, sizeof why);
	CHECK(m1.time_s == m2.time_s && !strcmp(m1.kern.name, m2.kern.name), "memoized result differs");
	/* the memo knows a chip by its content: a second load of the same file (another address) hits the
	   entry of the first, one whose --set changed a value misses and gets its own answer */
	struct arch_chip *hr = load("h100.cfg", NULL), *hs = load("h100.cfg", "model.dram_efficiency=0.5");
	if (memo && hr && hs) {
		long hits0, miss0, hits1, miss1, hits2, miss2;
		struct dm_result m3, m4;
		dm_stats(memo, &hits0, &miss0);
		dm_predict_cached(memo, hr, &op, &m3, why, sizeof why);
		dm_stats(memo, &hits1, &miss1);
		CHECK(hr != h && hits1 == hits0 + 1 && miss1 == miss0, "a second load of h100.cfg missed the memo");
		CHECK(m3.time_s == m1.time_s, "second load: %.6g s vs %.6g s", m3.time_s, m1.time_s);
		dm_predict_cached(memo, hs, &op, &m4, why, sizeof why);
		dm_stats(memo, &hits2, &miss2);
		CHECK(hits2 == hits1 && miss2 == miss1 + 1, "a --set-changed chip hit the memo of the unchanged one");
		struct dm_result m5 = run(hs, "gemm m=3000 n=5000 k=7000 dtype=bf16");
		CHECK(m4.time_s == m5.time_s, "the --set chip's memoized answer is its own");
		/* freeing a chip needs nothing of the memo; a copy at a new address still hits */
		struct arch_chip *h3 = malloc(sizeof *h3);
		if (h3) {
			*h3 = *hr;
			arch_free(hr);
			hr = NULL;
			dm_predict_cached(memo, h3, &op, &m3, why, sizeof why);
			dm_stats(memo, &hits2, &miss2);
			CHECK(hits2 == hits1 + 1 && miss2 == miss1 + 1, "a copy of the chip missed the memo");
			free(h3);
		}
	}
	arch_free(hr);
	arch_free(hs);
	dm_free(memo);

	/* every attention impl= a trace can name has a kernel model (model_attn.c's table) */
	for (int i = 0; i < ATTN_IMPL_COUNT; i++) {
		char line[160];
		snprintf(line, sizeof line, "attn b=2 h=8 sq=%d skv=1024 d=128 dtype=bf16 impl=%s",
		         op_attn_impl_decodes(i) ? 1 : 1024, op_attn_impl_name((enum op_attn_impl)i));
		struct dm_result ri = run(h, line);
		CHECK(ri.time_s > 0 && ri.kern.kernels >= 1, "%s: no kernel model", line);
	}

	/* FlashAttention-3 overlaps softmax with matrix work on Hopper: faster than FA2 */
	struct dm_result f2 = run(h, "attn b=4 h=16 sq=4096 skv=4096 d=128 dtype=bf16 impl=flash2");
	struct dm_result f3 = run(h, "attn b=4 h=16 sq=4096 skv=4096 d=128 dtype=bf16 impl=flash3");
	CHECK(f3.time_s < f2.time_s * 0.95, "flash3 %.3g s vs flash2 %.3g s", f3.time_s, f2.time_s);

	/* chiplets: a GEMM split over K whose two CTAs land on two dies reads each slice of A and B once, so the
	   dies fetch no more than the CTAs load through L2: gemm_cand_time asserts it (the Debug and sanitizer
	   builds), and it failed here on MI250X before */
	{
		struct arch_chip *mi250 = load("mi250x.cfg", NULL);
		if (mi250) {
			struct dm_result s = run(mi250, "gemm m=5 n=128 k=128 dtype=fp32 epilogue=bias");
			CHECK(s.time_s > 0, "MI250X small split-K GEMM");
			arch_free(mi250);
		}
	}

	/* FlashAttention-2 issues mma.sync, which reaches matrix.sync_fraction (2/3 on H100) of the wgmma rate:
	   slower than with the full rate, by less than 1.5x (the softmax and memory work do not scale);
	   FlashAttention-3 (wgmma) does not see the key */
	{
		struct arch_chip *hf = load("h100.cfg", "compute.sm.matrix.sync_fraction=1");
		if (hf) {
			const char *fa2 = "attn b=1 h=16 sq=16384 skv=16384 d=128 dtype=bf16 impl=flash2",
			           *fa3 = "attn b=1 h=16 sq=16384 skv=16384 d=128 dtype=bf16 impl=flash3";
			double r2 = run(h, fa2).time_s / run(hf, fa2).time_s,
			       r3 = run(h, fa3).time_s / run(hf, fa3).time_s;
			CHECK(r2 > 1.1 && r2 < 1.5,
			      "flash2 at 2/3 of the matrix rate: %.3f x the time at the full rate", r2);
			CHECK(r3 == 1, "flash3 moved with matrix.sync_fraction (%.3f)", r3);
			arch_free(hf);
		}
	}

	/* FlashAttention-2's causal forward: its CTAs reach the SMs in launch order, each head's longest last, so
	   it takes more than half the non-causal time (measured on an H100, 16k tokens, head dim 128: 0.549,
	   rows LA045 and LA047 of tests/validation/measurements-lent.tsv); FlashAttention-3 takes the longest first */
	{
		double c2 = run(h, "attn b=1 h=16 sq=16384 skv=16384 d=128 causal=1 dtype=bf16 impl=flash2").time_s /
		            run(h, "attn b=1 h=16 sq=16384 skv=16384 d=128 causal=0 dtype=bf16 impl=flash2").time_s;
		double c3 = run(h, "attn b=1 h=16 sq=16384 skv=16384 d=128 causal=1 dtype=bf16 impl=flash3").time_s /
		            run(h, "attn b=1 h=16 sq=16384 skv=16384 d=128 causal=0 dtype=bf16 impl=flash3").time_s;
		CHECK(c2 > 0.5 && c2 < 0.6, "flash2 causal / non-causal %.3f (measured 0.549)", c2);
		CHECK(c3 < c2, "flash3 causal / non-causal %.3f, flash2 %.3f", c3, c2);
	}

	/* causal: about half the work, but lower TFLOP/s than non-causal (imbalance, diagonal) at short seqs */
	struct dm_result nc = run(a, "attn b=32 h=16 sq=512 skv=512 d=128 dtype=fp16 impl=flash2");
	struct dm_result ca = run(a, "attn b=32 h=16 sq=512 skv=512 d=128 causal=1 dtype=fp16 impl=flash2");
	CHECK(ca.time_s < nc.time_s && ca.time_s > 0.45 * nc.time_s, "causal %.3g vs full %.3g", ca.time_s, nc.time_s);
	CHECK(ca.tflops < nc.tflops, "causal should reach fewer TFLOP/s");

	/* backward costs more than forward */
	struct dm_result bw = run(a, "attn b=4 h=16 sq=4096 skv=4096 d=128 dtype=fp16 impl=flash2 dir=bwd");
	struct dm_result fw = run(a, "attn b=4 h=16 sq=4096 skv=4096 d=128 dtype=fp16 impl=flash2");
	CHECK(bw.time_s > 2 * fw.time_s, "bwd %.3g vs fwd %.3g", bw.time_s, fw.time_s);

	/* decode attention reads the KV cache: device-memory bound, time ~ bytes / bandwidth */
	struct dm_result kv = run(h, "attn b=64 h=32 hkv=8 sq=1 skv=8192 d=128 dtype=bf16 impl=decode");
	CHECK(kv.bound == B_DRAM, "decode attention bound by %s", dm_bound_name(kv.bound));
	double kvbytes = 2.0 * 64 * 8 * 8192 * 128 * 2;
	CHECK(kv.time_s > kvbytes / h->dram.bw_Bps, "decode faster than the KV cache can be read");

	/* FlashAttention-2's decode path (flash_api.cpp): num_splits_heuristic, worked by hand for 132 SMs (264
	   slots): 8 query blocks, 64 key blocks of 128: the eligible splits 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 16,
	   22, 32, 64 reach wave efficiencies up to 256/264 (32 and 64); the fewest within 85% of that is 32 (22 gives
	   176/264). 64 sequences x 8 KV heads fill the chip: no split */
	struct dm_result d1 = run(h, "attn b=1 h=32 hkv=8 sq=1 skv=8192 d=128 dtype=bf16 impl=flash2_decode");
	struct dm_result d64 = run(h, "attn b=64 h=32 hkv=8 sq=1 skv=4096 d=128 dtype=bf16 impl=flash2_decode");
	CHECK(d1.kern.splitk == 32 && d1.kern.kernels == 2, "flash2_decode b=1: %d splits, %d kernels (32, 2)",
	      d1.kern.splitk, d1.kern.kernels);
	CHECK(d64.kern.splitk == 1 && d64.kern.kernels == 1, "flash2_decode b=64: %d splits (1)", d64.kern.splitk);
	/* with one query, the 4 query heads of a KV head are the rows of one block: the same kernel as a forward of 4
	   queries on 8 heads */
	struct dm_result sw = run(h, "attn b=64 h=8 sq=4 skv=4096 d=128 dtype=bf16 impl=flash2");
	CHECK(fabs(d64.time_s - sw.time_s) <= 1e-12 * sw.time_s, "flash2_decode %.6g s vs the swapped forward %.6g s",
	      d64.time_s, sw.time_s);
	/* the 4 queries are padded to the kernel's 128 rows on the matrix units: an H200 (43% more bandwidth, same
	   SMs) is no faster, as measured (LA106 428 us, LHA106 432 us) */
	struct arch_chip *h200 = load("h200.cfg", NULL);
	if (h200) {
		struct dm_result d64b =
		    run(h200, "attn b=64 h=32 hkv=8 sq=1 skv=4096 d=128 dtype=bf16 impl=flash2_decode");
		CHECK(d64b.time_s > 0.9 * d64.time_s, "flash2_decode on H200 %.3g s vs H100 %.3g s: bound by bandwidth",
		      d64b.time_s, d64.time_s);
		arch_free(h200);
	} else
		CHECK(0, "configs/h200.cfg does not load");

	/* TensorRT-LLM's generation kernels with multi_block_mode off (impl=mmha) on an A100 (108 SMs): XQA where
	   4 x sequences x KV heads >= 108 (16 x 8 x 4 = 512), one kernel, the keys not split; else masked MHA, one CTA
	   a query head (8 at one sequence of 8 heads), never split. With 8 CTAs the cache streams at what 8 SMs keep
	   in flight, far below the device's bandwidth: slower than the generic split-KV kernel, and the time grows
	   with the keys (the same CTAs, twice the bytes) */
	struct dm_result xq = run(a, "attn b=16 h=32 hkv=8 sq=1 skv=2048 d=128 dtype=fp16 impl=mmha");
	CHECK(!strcmp(xq.kern.name, "xqa_generation") && xq.kern.splitk == 1 && xq.kern.kernels == 1,
	      "mmha b=16 hkv=8: %s, %d splits, %d kernels (xqa_generation, 1, 1)", xq.kern.name, xq.kern.splitk,
	      xq.kern.kernels);
	struct dm_result m4 = run(a, "attn b=1 h=8 sq=1 skv=4096 d=128 dtype=fp16 impl=mmha");
	struct dm_result m8 = run(a, "attn b=1 h=8 sq=1 skv=8192 d=128 dtype=fp16 impl=mmha");
	struct dm_result g4 = run(a, "attn b=1 h=8 sq=1 skv=4096 d=128 dtype=fp16 impl=decode");
	CHECK(!strcmp(m4.kern.name, "masked_multihead_attention") && m4.kern.ctas == 8 && m4.kern.splitk == 1,
	      "mmha b=1 h=8: %s, %lld CTAs, %d splits (masked_multihead_attention, 8, 1)", m4.kern.name, m4.kern.ctas,
	      m4.kern.splitk);
	double m4_bytes = 2.0 * 8 * 4096 * 128 * 2;
	CHECK(m4.time_s > 3 * m4_bytes / a->dram.bw_Bps && m4.time_s > 2 * g4.time_s,
	      "mmha with 8 CTAs %.3g s: not slower than the cache at full bandwidth (%.3g s) or split-KV (%.3g s)",
	      m4.time_s, m4_bytes / a->dram.bw_Bps, g4.time_s);
	CHECK(m8.time_s > 1.8 * m4.time_s && m8.time_s < 2.1 * m4.time_s,
	      "mmha 8192 keys %.3g s vs 4096 %.3g s: not about twice (the same 8 CTAs stream twice the bytes)",
	      m8.time_s, m4.time_s);

	/* softmax's exp: on the same bytes, softmax takes longer than a plain copy-like op */
	struct dm_result sm = run(a, "elem op=softmax n=134217728 cols=4096 dtype=fp16");
	struct dm_result cp = run(a, "elem op=relu n=134217728 dtype=fp16");
	CHECK(sm.time_s > cp.time_s, "softmax %.3g vs relu %.3g", sm.time_s, cp.time_s);

	/* strided operands (PyTorch's element-by-element kernel): the same bytes, slower than the vectorized kernel
	   (4 elements a thread, their addresses computed); a permute is a strided copy; a binary op's index
	   arithmetic covers three operands, a copy's two */
	struct dm_result vmul = run(h, "elem op=mul n=46137344 dtype=bf16");
	struct dm_result smul = run(h, "elem op=mul n=46137344 dtype=bf16 strided=1");
	struct dm_result scp = run(h, "elem op=copy n=46137344 dtype=bf16 strided=1");
	struct dm_result perm = run(h, "elem op=permute n=46137344 dtype=bf16");
	CHECK(smul.bytes_dram == vmul.bytes_dram && smul.time_s > vmul.time_s, "strided mul %.3g s vs %.3g s",
	      smul.time_s, vmul.time_s);
	CHECK(scp.time_s == perm.time_s, "strided copy %.6g s vs permute %.6g s", scp.time_s, perm.time_s);

	/* a fill writes its bytes and reads none (a memset of n int8 is one); a norm's backward reads x and dy and
	   writes dx (3 tensors to the forward's 2, so it takes longer), its weight gradient's partials reduced in a
	   second kernel; PyTorch's (split=1) reads x and dy again for the weight gradient: 2 tensors more */
	struct dm_result fl = run(h, "elem op=fill n=67108864 dtype=fp32");
	struct dm_result ms = run(h, "elem op=fill n=268435456 dtype=int8");
	CHECK(fl.bytes_dram == 4.0 * 67108864 && fl.bytes_l2 == fl.bytes_dram && ms.bytes_dram == fl.bytes_dram,
	      "fill %.0f bytes (L2 %.0f), memset %.0f", fl.bytes_dram, fl.bytes_l2, ms.bytes_dram);
	struct dm_result sfl = run(h, "elem op=fill n=67108864 dtype=fp32 strided=1");
	CHECK(isfinite(sfl.time_s) && sfl.time_s > fl.time_s, "strided fill %.3g s vs fill %.3g s", sfl.time_s,
	      fl.time_s);
	struct dm_result cpy = run(h, "elem op=copy n=67108864 dtype=fp32");
	CHECK(fl.time_s < 0.6 * cpy.time_s, "fill %.3g s vs copy %.3g s (half the bytes)", fl.time_s, cpy.time_s);
	/* the read/write turnaround (model.dram_write_cost) is paid where reads and writes mix: a fill's device-memory
	   time is its bytes at the reachable bandwidth, a copy's written bytes cost write_cost each, and a stream
	   with fewer reads than writes (an upcast) pays it on as many writes as it has reads */
	{
		double dbw = h->dram.bw_Bps * h->model.dram_eff, wc = h->model.write_cost, n = 67108864;
		struct dm_result up = run(h, "elem op=cast n=67108864 dtype=bf16 to=fp32");
		double want[3] = {4 * n / dbw, 4 * n * (1 + wc) / dbw, (2 * n + 4 * n + (wc - 1) * 2 * n) / dbw};
		double got[3] = {fl.t_res[B_DRAM], cpy.t_res[B_DRAM], up.t_res[B_DRAM]};
		for (int i = 0; i < 3; i++)
			CHECK(fabs(got[i] / want[i] - 1) < 1e-9, "%s: device-memory time %.6g s, want %.6g s",
			      i == 0   ? "fill"
			      : i == 1 ? "copy"
			               : "upcast",
			      got[i], want[i]);
	}
	const double nn = 67108864, ee = 2, cc = 8192;
	struct dm_result lnf = run(h, "elem op=layernorm n=67108864 cols=8192 dtype=bf16");
	struct dm_result lnb = run(h, "elem op=layernorm_bwd n=67108864 cols=8192 dtype=bf16");
	struct dm_result lns = run(h, "elem op=layernorm_bwd n=67108864 cols=8192 dtype=bf16 split=1");
	struct dm_result rmb = run(h, "elem op=rmsnorm_bwd n=67108864 cols=8192 dtype=bf16");
	double parts = 2 * 132 * cc * 4; /* two weights' fp32 partial rows, one per SM of H100 */
	/* the partials were just written: the second kernel reads them, and writes the weights' gradient, in L2 */
	CHECK(lnb.bytes_dram == 3 * nn * ee && lnb.bytes_l2 == 3 * nn * ee + parts + 2 * cc * ee &&
	          lnb.kern.kernels == 2,
	      "layernorm_bwd %.0f DRAM bytes, %.0f L2, %d kernels", lnb.bytes_dram, lnb.bytes_l2, lnb.kern.kernels);
	CHECK(lns.bytes_dram == 5 * nn * ee + 2 * cc * ee, "layernorm_bwd split=1 %.0f bytes", lns.bytes_dram);
	CHECK(lnb.time_s > 1.3 * lnf.time_s && lns.time_s > 1.3 * lnb.time_s && rmb.time_s <= lnb.time_s,
	      "layernorm fwd %.3g, bwd %.3g, bwd split %.3g, rmsnorm bwd %.3g s", lnf.time_s, lnb.time_s, lns.time_s,
	      rmb.time_s);
	struct dm_result smb = run(h, "elem op=softmax_bwd n=67108864 cols=8192 dtype=bf16");
	CHECK(smb.bytes_dram == 3 * nn * ee, "softmax_bwd %.0f bytes", smb.bytes_dram);

	/* Little's law: tiny elementwise ops cannot reach full bandwidth */
	struct dm_result tiny = run(h, "elem op=add n=65536 dtype=fp16");
	CHECK(tiny.bound == B_LAUNCH, "tiny op bound by %s", dm_bound_name(tiny.bound));

	/* power: a higher TDP never slows a GEMM down, and a power-limited one speeds up */
	struct arch_chip *h2 = load("h100.cfg", "chip.tdp=1000W");
	if (h2) {
		struct dm_result lo = run(h, "gemm m=8192 n=8192 k=8192 dtype=fp8");
		struct dm_result hi = run(h2, "gemm m=8192 n=8192 k=8192 dtype=fp8");
		CHECK(hi.time_s < lo.time_s, "1000 W (%.3g s) should beat 700 W (%.3g s)", hi.time_s, lo.time_s);
		arch_free(h2);
	}

	/* the clock a GEMM starts from is the top of the chip's range (compute.clock, 1980 MHz on an H100), not the
	   1830 MHz tensor_clock the datasheet's peaks are quoted at: on 32 of 132 SMs the power limit takes nothing
	   (the H200's clock category rows: 1980 MHz); the peak it reports stays the datasheet's */
	{
		struct dm_result few = run(h, "gemm m=8192 n=8192 k=8192 dtype=bf16 units=32");
		const struct arch_unit *u0 = &h->units[0];
		CHECK(few.clock_hz == u0->clock_hz && u0->clock_hz > u0->tensor_clock_hz,
		      "32 SMs: clock %.0f MHz, the range's top %.0f MHz, tensor clock %.0f MHz", few.clock_hz / 1e6,
		      u0->clock_hz / 1e6, u0->tensor_clock_hz / 1e6);
		double peak = 2 * u0->mat_units * u0->mat[DT_BF16] * u0->tensor_clock_hz * (double)u0->count;
		CHECK(fabs(few.peak_flops / peak - 1) < 1e-9,
		      "peak %.4g FLOP/s, the datasheet's at the tensor clock %.4g", few.peak_flops, peak);
	}

	/* the tiles of an asynchronous matrix unit's kernels (wgmma: M in steps of 64 a warpgroup): a 1536-cube GEMM
	   fits 192x128 tiles, 8 x 12 = 96 CTAs, in one wave on the H100's 132 SMs, where tiles of powers of two take
	   144 (128x128) or 72 with half the SMs idle (256x128, 128x256); the A100's synchronous mma kernels keep the
	   power-of-two tiles */
	{
		struct dm_result g = run(h, "gemm m=1536 n=1536 k=1536 dtype=bf16");
		CHECK(g.kern.ctas <= 132 && g.kern.ctas > 66, "1536^3 on an H100: %lld CTAs of %dx%d", g.kern.ctas,
		      g.kern.tile_m, g.kern.tile_n);
		struct dm_result ga = run(a, "gemm m=1536 n=1536 k=1536 dtype=bf16");
		CHECK((ga.kern.tile_m & (ga.kern.tile_m - 1)) == 0 && (ga.kern.tile_n & (ga.kern.tile_n - 1)) == 0,
		      "1536^3 on an A100: tile %dx%d", ga.kern.tile_m, ga.kern.tile_n);
	}

	/* more HBM bandwidth helps a memory-bound op and not a compute-bound one */
	struct arch_chip *hb = load("h100.cfg", "memory.device.bandwidth=6TB/s");
	if (hb) {
		struct dm_result m0 = run(h, "elem op=add n=1073741824 dtype=bf16");
		struct dm_result mb = run(hb, "elem op=add n=1073741824 dtype=bf16");
		CHECK(mb.time_s < 0.7 * m0.time_s, "bandwidth did not speed a stream up");
		struct dm_result g0 = run(h, "gemm m=16384 n=16384 k=16384 dtype=bf16");
		struct dm_result gb = run(hb, "gemm m=16384 n=16384 k=16384 dtype=bf16");
		CHECK(fabs(gb.time_s / g0.time_s - 1) < 0.05, "bandwidth changed a compute-bound GEMM by %.1f%%",
		      100 * (gb.time_s / g0.time_s - 1));
		arch_free(hb);
	}

	/* dropout inside FlashAttention: the Philox draws cost time in both directions, relatively more at a
	   small head dim (fewer MACs per score to hide them behind); the original kernel draws 16 bits a
	   score, FlashAttention-2 8, so its share is larger */
	{
		static const char *const impls[] = {"flash1", "flash2"};
		static const char *const dirs[] = {"fwd", "bwd"};
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				double rel[2];
				for (int k = 0; k < 2; k++) {
					char l0[160], l1[192];
					int d = k ? 128 : 64;
					snprintf(
					    l0, sizeof l0,
					    "attn b=8 h=16 sq=2048 skv=2048 d=%d causal=1 dtype=bf16 impl=%s dir=%s", d,
					    impls[i], dirs[j]);
					snprintf(l1, sizeof l1, "%s dropout=0.1", l0);
					struct dm_result r0 = run(a, l0), r1 = run(a, l1);
					rel[k] = r1.time_s / r0.time_s - 1;
					CHECK(rel[k] > 0.01 && rel[k] < 0.5, "%s: dropout adds %.1f%%", l0,
					      100 * rel[k]);
				}
				CHECK(rel[0] > rel[1], "%s %s: dropout adds %.1f%% at d=64, %.1f%% at d=128", impls[i],
				      dirs[j], 100 * rel[0], 100 * rel[1]);
			}
	}

	/* a GEMM epilogue's pointwise work is paid for: GELU (a tanh) more than ReLU, ReLU more than none,
	   and most where K is short (little main loop per element of C) */
	{
		struct dm_result e0 = run(a, "gemm m=65536 n=3072 k=768 dtype=bf16");
		struct dm_result er = run(a, "gemm m=65536 n=3072 k=768 dtype=bf16 epilogue=relu");
		struct dm_result eg = run(a, "gemm m=65536 n=3072 k=768 dtype=bf16 epilogue=gelu");
		CHECK(e0.time_s < er.time_s && er.time_s < eg.time_s, "epilogues none %.4g, relu %.4g, gelu %.4g s",
		      e0.time_s, er.time_s, eg.time_s);
		struct dm_result l0 = run(a, "gemm m=65536 n=3072 k=12288 dtype=bf16");
		struct dm_result lg = run(a, "gemm m=65536 n=3072 k=12288 dtype=bf16 epilogue=gelu");
		CHECK(lg.time_s / l0.time_s < eg.time_s / e0.time_s,
		      "GELU epilogue at k=12288 +%.1f%%, at k=768 +%.1f%%", 100 * (lg.time_s / l0.time_s - 1),
		      100 * (eg.time_s / e0.time_s - 1));
	}

	/* writes cost more than reads (model.dram_write_cost) in a GEMM too: an output-heavy one slows down
	   when writes get dearer, one with little output hardly does */
	struct arch_chip *aw = load("a100.cfg", "model.dram_write_cost=2");
	if (aw) {
		const char *wide = "gemm m=2048 n=2048 k=64 batch=192 dtype=fp16",
		           *sq = "gemm m=8192 n=8192 k=8192 dtype=fp16";
		double slow = run(aw, wide).time_s / run(a, wide).time_s, sq_r = run(aw, sq).time_s / run(a, sq).time_s;
		CHECK(slow > 1.1, "output-heavy GEMM x%.3f with dearer writes", slow);
		CHECK(sq_r < 1.02, "square GEMM x%.3f with dearer writes", sq_r);
		arch_free(aw);
	}

	/* fp8 operands: cast_transpose reads the bf16 tensor once and writes two fp8 copies (4 bytes an
	   element in all), a cast one (3 bytes): a third more traffic, a third more time when bandwidth-bound */
	struct dm_result c1 = run(h, "elem op=cast n=67108864 dtype=bf16 to=fp8");
	struct dm_result c2 = run(h, "elem op=cast_transpose n=67108864 dtype=bf16 to=fp8");
	CHECK(c1.bytes_dram == 3.0 * 67108864 && c2.bytes_dram == 4.0 * 67108864,
	      "cast %.0f, cast_transpose %.0f bytes", c1.bytes_dram, c2.bytes_dram);
	CHECK(c2.time_s > 1.2 * c1.time_s && c2.time_s < 1.45 * c1.time_s, "cast_transpose %.3g s vs cast %.3g s",
	      c2.time_s, c1.time_s);

	/* misaligned leading dimensions (row-major: A [m,k] 'n' has k, 't' m; B [k,n] 'n' n; C n): on H100 cuBLAS runs
	   its fallback kernels, 5.0x (k=4095, 2-byte loads) and 2.6x (k=4092, 4-byte loads) the aligned time
	   (LX019-LX025, tests/validation/measured/h100-2026-11-27/misaligned.tsv) */
	struct dm_result al = run(h, "gemm m=4096 n=4096 k=4096 dtype=bf16");
	struct dm_result k1 = run(h, "gemm m=4096 n=4096 k=4095 dtype=bf16");
	struct dm_result k4 = run(h, "gemm m=4096 n=4096 k=4092 dtype=bf16");
	struct dm_result k8 = run(h, "gemm m=4096 n=4096 k=4088 dtype=bf16");
	struct dm_result mr = run(h, "gemm m=4095 n=4096 k=4096 dtype=bf16");
	struct dm_result m1t = run(h, "gemm m=4095 n=4096 k=4096 dtype=bf16 trans=tn");
	CHECK(k1.time_s > 3 * al.time_s && k1.time_s < 8 * al.time_s, "k=4095: %.3g s, aligned %.3g s (measured 5.0x)",
	      k1.time_s, al.time_s);
	CHECK(k1.time_s > 1.5 * k4.time_s && k1.time_s < 2.5 * k4.time_s,
	      "2-byte loads %.3g s vs 4-byte %.3g s (measured 1.9x)", k1.time_s, k4.time_s);
	CHECK(k8.time_s < 1.02 * al.time_s, "k=4088 is a multiple of 8 elements: aligned (%.3g s vs %.3g s)", k8.time_s,
	      al.time_s);
	CHECK(mr.time_s < 1.02 * al.time_s, "m is no leading dimension of 'nn': %.3g s vs %.3g s", mr.time_s,
	      al.time_s);
	CHECK(m1t.time_s > 3 * al.time_s, "'tn': A is [k,m], m=4095 its leading dimension (%.3g s)", m1t.time_s);
	CHECK(k1.clock_hz > al.clock_hz, "the fallback kernel draws less power: clock %.0f MHz, aligned %.0f MHz",
	      k1.clock_hz / 1e6, al.clock_hz / 1e6);
	/* C the misaligned one (a vocabulary of 50257 as N): the epilogue's narrow stores, 2 bytes a thread, take
	   matrix.fallback_store_cycles each on the path the loads take: the busiest SM's CTAs x a tile's warp-wide
	   stores x the cycles, counted by hand from the kernel the search picked, on top of the same GEMM with free
	   stores */
	{
		struct arch_chip *hst = load("h100.cfg", "compute.sm.matrix.fallback_store_cycles=0");
		const char *lx = "gemm m=16384 n=50257 k=768 dtype=bf16 trans=nt";
		struct dm_result cs = run(h, lx), c0 = hst ? run(hst, lx) : cs;
		const struct arch_unit *u0 = &h->units[0];
		double busiest = ceil((double)cs.kern.ctas / (double)u0->count);
		double extra_s =
		    busiest * cs.kern.tile_m * cs.kern.tile_n * 2 / (32.0 * 2) * u0->mat_narrow_st_clk / cs.clock_hz;
		CHECK(hst && cs.kern.ctas == c0.kern.ctas && cs.clock_hz == c0.clock_hz &&
		          fabs((cs.time_s - c0.time_s) / extra_s - 1) < 0.01,
		      "C's narrow stores: %.6g s with them, %.6g s without, %.6g s counted by hand", cs.time_s,
		      c0.time_s, extra_s);
		if (hst)
			arch_free(hst);
	}
	/* an fp32 GEMM runs on the vector lanes (H100 has no fp32 matrix rate): the fallback is a matrix-unit kernel's
	 */
	struct dm_result f0 = run(h, "gemm m=4096 n=4096 k=4096 dtype=fp32");
	struct dm_result f1 = run(h, "gemm m=4096 n=4096 k=4095 dtype=fp32");
	CHECK(!f1.uses_matrix && f1.time_s < 1.02 * f0.time_s, "fp32 on the lanes, k=4095: %.3g s vs %.3g s", f1.time_s,
	      f0.time_s);
	/* the A100 runs the same sm_80 fallback kernels (configs/a100.cfg): slower misaligned; a config without
	   matrix.fallback_load_cycles (the A100's with it set to 0) times it as aligned */
	struct dm_result a1 = run(a, "gemm m=4096 n=4096 k=4095 dtype=fp16");
	CHECK(a1.time_s > 3 * p0.time_s, "A100, k=4095: %.3g s vs aligned %.3g s", a1.time_s, p0.time_s);
	{
		struct arch_chip *an = load("a100.cfg", "compute.sm.matrix.fallback_load_cycles=0");
		CHECK(an != NULL, "a100.cfg with compute.sm.matrix.fallback_load_cycles=0 loads");
		if (an) {
			struct dm_result n1 = run(an, "gemm m=4096 n=4096 k=4095 dtype=fp16");
			CHECK(n1.time_s < 1.02 * p0.time_s, "no fallback modelled: %.3g s vs %.3g s", n1.time_s,
			      p0.time_s);
			arch_free(an);
		}
	}
	/* a matrix-vector product runs cuBLAS's GEMV kernels, not the fallback: a misaligned k costs it nothing */
	struct dm_result v0 = run(h, "gemm m=1 n=4096 k=4096 dtype=bf16");
	struct dm_result v1 = run(h, "gemm m=1 n=4096 k=4095 dtype=bf16");
	CHECK(v1.time_s < 1.02 * v0.time_s, "GEMV, k=4095: %.3g s vs %.3g s", v1.time_s, v0.time_s);

	/* the units a kernel runs on (op.h units=, busy=) */
	{
		struct dm_result all = run(h, "gemm m=8192 n=8192 k=8192 dtype=bf16");
		struct dm_result same = run(h, "gemm m=8192 n=8192 k=8192 dtype=bf16 units=132");
		CHECK(same.time_s == all.time_s, "units= all 132 SMs (%.6g s) should be the GEMM as given (%.6g s)",
		      same.time_s, all.time_s);
		/* half the SMs: half the matrix power, so a power-limited clock rises by at most sqrt(2): the GEMM
		   takes between 2/sqrt(2) and 2 times as long */
		struct dm_result half = run(h, "gemm m=8192 n=8192 k=8192 dtype=bf16 units=66");
		struct dm_result mg = run(h, "gemm m=8192 n=8192 k=8192 dtype=bf16 margin=16");
		struct dm_result u116 = run(h, "gemm m=8192 n=8192 k=8192 dtype=bf16 units=116");
		CHECK(mg.time_s == u116.time_s, "margin=16 (%.6g s) should be units=116 on 132 SMs (%.6g s)", mg.time_s,
		      u116.time_s);
		double q = half.time_s / all.time_s;
		CHECK(q > 1.35 && q < 2.05, "66 of 132 SMs: %.3f x the time, expected 1.41..2", q);
		CHECK(half.clock_hz >= all.clock_hz, "fewer SMs should draw less power: clock %.0f MHz < %.0f MHz",
		      half.clock_hz / 1e6, all.clock_hz / 1e6);
		/* SMs held by another kernel: the kernel chosen for all 132 is never faster than the one chosen for the
		   SMs it gets (units=); a third of them held costs time (with fewer SMs drawing power, one held SM
		   can make the GEMM a little faster: only the GEMM's power is charged) */
		struct dm_result held = run(h, "gemm m=8192 n=8192 k=8192 dtype=bf16 busy=66");
		struct dm_result held44 = run(h, "gemm m=8192 n=8192 k=8192 dtype=bf16 busy=44");
		CHECK(held.time_s >= half.time_s * (1 - 1e-9) && held44.time_s > 1.1 * all.time_s,
		      "busy=66 %.6g s (units=66: %.6g s), busy=44 %.6g s (all: %.6g s)", held.time_s, half.time_s,
		      held44.time_s, all.time_s);
		struct op o133;
		char w133[256];
		CHECK(!op_parse("gemm m=64 n=64 k=64 dtype=bf16 units=133", NULL, &o133, w133, sizeof w133) &&
		          dm_predict(h, &o133, &all, NULL, w133, sizeof w133) == -1 && strstr(w133, "132 units"),
		      "units=133 on 132 SMs should be refused naming the count, got '%s'", w133);
	}

	/* a kernel's tile (op.h tile=): the search over that tile alone. The tile the search picks gives the same time;
	   any other is never faster; a tile whose stages cannot fit shared memory is refused, naming it */
	{
		struct dm_result all = run(h, "gemm m=4096 n=4096 k=4096 batch=4 dtype=bf16");
		char l[256];
		snprintf(l, sizeof l, "gemm m=4096 n=4096 k=4096 batch=4 dtype=bf16 tile=%dx%d", all.kern.tile_m,
		         all.kern.tile_n);
		struct dm_result same = run(h, l);
		CHECK(same.time_s == all.time_s, "tile= the chosen %dx%d: %.6g s, the search %.6g s", all.kern.tile_m,
		      all.kern.tile_n, same.time_s, all.time_s);
		static const char *const other[] = {"16x32", "64x128", "128x256", "256x64"};
		for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
			snprintf(l, sizeof l, "gemm m=4096 n=4096 k=4096 batch=4 dtype=bf16 tile=%s", other[i]);
			struct dm_result t = run(h, l);
			CHECK(t.time_s >= all.time_s * (1 - 1e-12) &&
			          t.kern.tile_m * 1000 + t.kern.tile_n ==
			              atoi(other[i]) * 1000 + atoi(strchr(other[i], 'x') + 1),
			      "tile=%s: %.6g s (kernel %s), the search's best %.6g s", other[i], t.time_s, t.kern.name,
			      all.time_s);
		}
		struct dm_result t16 = run(h, "gemm m=4096 n=4096 k=4096 batch=4 dtype=bf16 tile=16x32");
		CHECK(t16.time_s > 1.5 * all.time_s,
		      "a 16x32 tile (%.6g s) should be far slower than the best (%.6g s)", t16.time_s, all.time_s);
		struct op ob;
		char wb[256];
		CHECK(!op_parse("gemm m=64 n=64 k=64 dtype=bf16 tile=1024x1024", NULL, &ob, wb, sizeof wb) &&
		          dm_predict(h, &ob, &all, NULL, wb, sizeof wb) == -1 &&
		          strstr(wb, "tile=1024x1024 does not fit"),
		      "tile=1024x1024 should be refused naming the tile, got '%s'", wb);
	}

	/* promote= (fp8 partial sums added into fp32 registers every K elements, CUTLASS's FP8 main loop without fast
	   accumulation): each promotion of a 128x128 tile is 128 x 128 adds on the H100 SM's 128 FP32 lanes (the
	   whitepaper's 128 FP32 cores an SM), 128 cycles while the tensor cores wait; with K 128 per iteration (fp8)
	   and one promotion per 128 of K, a main-loop iteration is 128 cycles longer, whatever the clock. The power the
	   matrix units draw falls with their duty cycle, so the clock is never lower. The second set of accumulators
	   takes registers: a 128x256 tile, 2 x 128 KiB of them, no longer fits the 256 KiB register file. */
	{
		const char *g0 = "gemm m=8192 n=8192 k=8192 dtype=fp8 trans=nt tile=128x128";
		char l[256];
		snprintf(l, sizeof l, "%s promote=128", g0);
		struct op o0, o1;
		struct dm_iter i0, i1;
		char pw0[256] = "", pw1[256] = "";
		int ok = !op_parse(g0, NULL, &o0, pw0, sizeof pw0) && !op_parse(l, NULL, &o1, pw1, sizeof pw1) &&
		         !dm_iteration(h, &o0, &i0, pw0, sizeof pw0) && !dm_iteration(h, &o1, &i1, pw1, sizeof pw1);
		CHECK(ok, "promote=: %s %s", pw0, pw1);
		if (ok)
			CHECK(i0.tile_k == 128 && fabs(i1.c_matrix - i0.c_matrix - 128) < 1e-6,
			      "a 128x128 tile promoted every 128 of K: %.3f cycles an iteration more, want 128 (K %d)",
			      i1.c_matrix - i0.c_matrix, i0.tile_k);
		struct dm_result r0 = run(h, g0), r1 = run(h, l);
		CHECK(r1.time_s > r0.time_s && r1.clock_hz >= r0.clock_hz,
		      "promote=128: %.6g s at %.0f MHz, without %.6g s at %.0f MHz", r1.time_s, r1.clock_hz / 1e6,
		      r0.time_s, r0.clock_hz / 1e6);
		char txt[256];
		op_format(&o1, txt, sizeof txt);
		CHECK(strstr(txt, " promote=128") != NULL, "the canonical text keeps promote=: %s", txt);
		struct dm_result wide = run(h, "gemm m=8192 n=8192 k=8192 dtype=fp8 trans=nt tile=128x256");
		CHECK(wide.time_s > 0, "a 128x256 fp8 tile without promotion fits");
		struct op ow;
		char ww[256];
		CHECK(!op_parse("gemm m=8192 n=8192 k=8192 dtype=fp8 trans=nt tile=128x256 promote=128", NULL, &ow, ww,
		                sizeof ww) &&
		          dm_predict(h, &ow, &wide, NULL, ww, sizeof ww) == -1 &&
		          strstr(ww, "tile=128x256 does not fit"),
		      "a promoted 128x256 tile should be refused (registers), got '%s'", ww);
		CHECK(op_parse("gemm m=64 n=64 k=64 dtype=bf16 promote=128", NULL, &ow, ww, sizeof ww) == -1 &&
		          strstr(ww, "promote= is for fp8"),
		      "promote= on bf16 should be refused, got '%s'", ww);
	}

	/* grouped= (a pointer-array grouped GEMM, PyTorch's torch._grouped_mm on Hopper: aten's
	   prepare_grouped_gemm_data<<<1, groups>>> runs before the grouped kernel): the same GEMM kernel, one more
	   kernel, so one more model.launch_overhead and launch gap, and what the setup adds beyond its launch is a
	   few memory latencies (under 2 us on any chip), not work that grows with the GEMM */
	{
		const char *g0 = "gemm m=128 n=2048 k=768 batch=16 dtype=bf16 trans=nt tile=64x128";
		const char *g1 = "gemm m=128 n=2048 k=768 batch=16 dtype=bf16 trans=nt tile=64x128 grouped=1";
		struct dm_result r0 = run(h, g0), r1 = run(h, g1);
		double extra_s = r1.time_s - r0.time_s - h->model.launch_s;
		CHECK(r1.kern.kernels == 2 && r0.kern.kernels == 1 && !strcmp(r0.kern.name, r1.kern.name),
		      "grouped=1: %d kernels (%s), without %d (%s)", r1.kern.kernels, r1.kern.name, r0.kern.kernels,
		      r0.kern.name);
		CHECK(extra_s > 0 && extra_s < 2e-6, "grouped=1 adds %.3g us beyond a launch of %.3g us", extra_s * 1e6,
		      h->model.launch_s * 1e6);
		CHECK(fabs(r1.gap_s - 2 * r0.gap_s) < 1e-12, "grouped=1: launch gaps %.3g us, one kernel's %.3g us",
		      r1.gap_s * 1e6, r0.gap_s * 1e6);
		struct dm_result b0 = run(h, "gemm m=8192 n=2048 k=768 batch=16 dtype=bf16 trans=nt tile=128x256");
		struct dm_result b1 =
		    run(h, "gemm m=8192 n=2048 k=768 batch=16 dtype=bf16 trans=nt tile=128x256 grouped=1");
		CHECK(fabs((b1.time_s - b0.time_s) - (r1.time_s - r0.time_s)) < 1e-12,
		      "the setup's cost does not grow with the GEMM: %.4g us at m=8192, %.4g us at m=128",
		      (b1.time_s - b0.time_s) * 1e6, (r1.time_s - r0.time_s) * 1e6);
		struct op o1;
		char txt[256], pw[256];
		CHECK(!op_parse(g1, NULL, &o1, pw, sizeof pw), "grouped=1 parses: %s", pw);
		op_format(&o1, txt, sizeof txt);
		CHECK(strstr(txt, " grouped=1") != NULL, "the canonical text keeps grouped=1: %s", txt);
		CHECK(op_parse("gemm m=8 n=8 k=8 dtype=bf16 grouped=2", NULL, &o1, pw, sizeof pw) == -1,
		      "grouped=2 should be refused");
	}

	/* a conv's backward: dgrad and wgrad, two kernels whose times add; with c == k, stride 1 and the padding that
	   keeps the image's size, dgrad is the forward's GEMM (M = n h w, N = c, K = k r s) and costs the same */
	{
		const char *cv = "conv n=32 c=128 h=28 w=28 k=128 r=3 s=3 pad=1 dtype=bf16";
		char l[256];
		struct dm_result f = run(h, cv);
		snprintf(l, sizeof l, "%s dir=dgrad", cv);
		struct dm_result d = run(h, l);
		snprintf(l, sizeof l, "%s dir=wgrad", cv);
		struct dm_result g = run(h, l);
		snprintf(l, sizeof l, "%s dir=bwd", cv);
		struct dm_result b = run(h, l);
		CHECK(fabs(d.time_s - f.time_s) <= 1e-12 * f.time_s, "dgrad %.6g s should equal the forward %.6g s",
		      d.time_s, f.time_s);
		CHECK(fabs(b.time_s - (d.time_s + g.time_s)) <= 1e-12 * b.time_s && b.kern.kernels == 2,
		      "bwd %.6g s (%d kernels) should be dgrad %.6g + wgrad %.6g s in 2 kernels", b.time_s,
		      b.kern.kernels, d.time_s, g.time_s);
	}

	/* a causal sliding window (window=): FlashAttention skips the key blocks outside it, so a window as long
	   as the keys changes nothing and a shorter one costs less, forward and backward, in every kernel that
	   skips blocks; a decode step reads only its window's keys; eager attention computes every score */
	static const char *const impls[] = {"flash2", "flash3", "flash1", "cudnn"};
	for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
		for (int bwd = 0; bwd < 2; bwd++) {
			/* an inner step takes at least its longest pipe (asserted in the model): at small head dims the
			   lane work is most of it */
			for (int d = 16; d <= (strcmp(impls[i], "flash1") ? 256 : 128); d *= 2) {
				char l[256];
				snprintf(l, sizeof l,
				         "attn b=2 h=8 sq=2048 skv=2048 d=%d causal=1 dtype=bf16 impl=%s dir=%s", d,
				         impls[i], bwd ? "bwd" : "fwd");
				struct dm_result r = run(h, l);
				CHECK(r.time_s > 0, "%s: no time", l);
			}
			char l[256];
			double t[4];
			static const char *const win[4] = {"", " window=4096", " window=1024", " window=128"};
			for (int w = 0; w < 4; w++) {
				snprintf(
				    l, sizeof l,
				    "attn b=4 h=32 hkv=8 sq=4096 skv=4096 d=128 causal=1 dtype=bf16 impl=%s dir=%s%s",
				    impls[i], bwd ? "bwd" : "fwd", win[w]);
				t[w] = run(h, l).time_s;
			}
			CHECK(t[1] == t[0] && t[2] < t[1] && t[3] < t[2] && t[3] > 0,
			      "%s %s: window 4096/1024/128 %.4g/%.4g/%.4g s against %.4g s without", impls[i],
			      bwd ? "bwd" : "fwd", t[1], t[2], t[3], t[0]);
		}
	struct dm_result wd =
	    run(h, "attn b=64 h=32 hkv=8 sq=1 skv=8192 d=128 causal=1 dtype=bf16 impl=paged window=256");
	struct dm_result sd = run(h, "attn b=64 h=32 hkv=8 sq=1 skv=256 d=128 causal=1 dtype=bf16 impl=paged");
	CHECK(wd.time_s == sd.time_s, "a decode step's window of 256 (%.4g s) reads 256 keys (%.4g s)", wd.time_s,
	      sd.time_s);
	/* impl=paged, vLLM's PagedAttention: a CTA a query head (each reads its KV head's keys and values through
	   L2; one die's L2 fetches a KV head once), V1 or V2 by vLLM's rule (forward_decode: V1 up to 8192 keys
	   with one 512-key partition or more than 512 sequence-heads; V2 adds a reduce kernel). Counted by hand. */
	{
		double kv_B = 2.0 * 8 * 8 * 4096 * 128 * 2,
		       q = 8.0 * 32 * 128 * 2; /* b 8, 8 KV heads, 4096 keys, bf16 */
		struct dm_result p = run(h, "attn b=8 h=32 hkv=8 sq=1 skv=4096 d=128 dtype=bf16 impl=paged");
		CHECK(fabs(p.bytes_dram / (kv_B + 2 * q) - 1) < 1e-12 &&
		          fabs(p.bytes_l2 / (4 * kv_B + 2 * q) - 1) < 1e-12,
		      "paged GQA 4: %.6g B from memory (want %.6g), %.6g B through L2 (want %.6g)", p.bytes_dram,
		      kv_B + 2 * q, p.bytes_l2, 4 * kv_B + 2 * q);
		CHECK(!strcmp(p.kern.name, "paged_attention_v2") && p.kern.kernels == 2 && p.kern.ctas == 32 * 8 * 8,
		      "256 sequence-heads, 8 partitions: %s, %d kernels, %lld CTAs (want V2, 2, 2048)", p.kern.name,
		      p.kern.kernels, p.kern.ctas);
		struct dm_result pv1 = run(h, "attn b=64 h=32 hkv=8 sq=1 skv=4096 d=128 dtype=bf16 impl=paged");
		struct dm_result pv2 = run(h, "attn b=64 h=32 hkv=8 sq=1 skv=16384 d=128 dtype=bf16 impl=paged");
		CHECK(!strcmp(pv1.kern.name, "paged_attention_v1") && pv1.kern.kernels == 1 && pv1.kern.ctas == 64 * 32,
		      "2048 sequence-heads, 4096 keys: %s, %d kernels, %lld CTAs (want V1, 1, 2048)", pv1.kern.name,
		      pv1.kern.kernels, pv1.kern.ctas);
		CHECK(!strcmp(pv2.kern.name, "paged_attention_v2") && pv2.kern.ctas == 64 * 32 * 32,
		      "16384 keys: %s, %lld CTAs (want V2, 65536)", pv2.kern.name, pv2.kern.ctas);
		/* maxkv=, the launch's max_seq_len (vLLM under CUDA graphs: the capture's): V1's logits are sized by
		   it. H100, 228 KiB of shared memory and 64 warps a unit, 4 warps a CTA: 2048 keys' logits (8 KiB,
		   and 256 B of query) leave the warps the bound, 16 CTAs; 8192 keys' (32 KiB and 256 B) hold 7. The
		   same bytes, no faster (on the MI300X, 64 KiB of LDS a unit: 7 CTAs, or 1, and slower). With one
		   sequence of 128 keys launched for 8192 the launch has 16 partitions: V2 (32 sequence-heads), its 15
		   empty partitions' CTAs returning at once. */
		struct dm_result own = run(h, "attn b=64 h=32 hkv=8 sq=1 skv=2048 d=128 dtype=bf16 impl=paged");
		struct dm_result cap =
		    run(h, "attn b=64 h=32 hkv=8 sq=1 skv=2048 d=128 dtype=bf16 impl=paged maxkv=8192");
		CHECK(own.kern.ctas_per_unit == 16 && cap.kern.ctas_per_unit == 7 && cap.time_s >= own.time_s &&
		          cap.bytes_l2 == own.bytes_l2 && !strcmp(cap.kern.name, "paged_attention_v1"),
		      "V1 launched for 8192 keys: %d CTAs a unit (want 7; its own 2048: %d, want 16), %.4g s (own %.4g "
		      "s)",
		      cap.kern.ctas_per_unit, own.kern.ctas_per_unit, cap.time_s, own.time_s);
		struct arch_chip *mi = load("mi300x.cfg", NULL);
		if (mi) {
			struct dm_result o = run(mi, "attn b=64 h=32 hkv=8 sq=1 skv=2048 d=128 dtype=fp16 impl=paged");
			struct dm_result c =
			    run(mi, "attn b=64 h=32 hkv=8 sq=1 skv=2048 d=128 dtype=fp16 impl=paged maxkv=8192");
			CHECK(o.kern.ctas_per_unit == 7 && c.kern.ctas_per_unit == 1 && c.time_s > 2 * o.time_s,
			      "MI300X V1 launched for 8192 keys: %d CTAs a unit (want 1; own %d, want 7), %.4g s (own "
			      "%.4g s)",
			      c.kern.ctas_per_unit, o.kern.ctas_per_unit, c.time_s, o.time_s);
			arch_free(mi);
		}
		struct dm_result one = run(h, "attn b=1 h=32 hkv=8 sq=1 skv=128 d=128 dtype=bf16 impl=paged");
		struct dm_result one_cap =
		    run(h, "attn b=1 h=32 hkv=8 sq=1 skv=128 d=128 dtype=bf16 impl=paged maxkv=8192");
		CHECK(!strcmp(one.kern.name, "paged_attention_v1") &&
		          !strcmp(one_cap.kern.name, "paged_attention_v2") && one_cap.kern.kernels == 2 &&
		          one_cap.kern.ctas == 32 && one_cap.time_s > one.time_s,
		      "128 keys launched for 8192: %s, %d kernels, %lld working CTAs (want V2, 2, 32; own: %s)",
		      one_cap.kern.name, one_cap.kern.kernels, one_cap.kern.ctas, one.kern.name);
		/* FlashAttention's decode through a block table 8192 keys wide (maxkv=): its split heuristic sees 8192
		   keys, so one sequence of 128 keys (a key block's worth, one split alone) gets several splits, all
		   but the first empty, and the combine kernel after them */
		struct dm_result f_own = run(h, "attn b=1 h=32 hkv=8 sq=1 skv=128 d=128 dtype=bf16 impl=flash2_decode");
		struct dm_result f_cap =
		    run(h, "attn b=1 h=32 hkv=8 sq=1 skv=128 d=128 dtype=bf16 impl=flash2_decode maxkv=8192");
		CHECK(f_own.kern.kernels == 1 && f_cap.kern.kernels == 2 && f_cap.kern.splitk > 1 &&
		          f_cap.bytes_dram > f_own.bytes_dram,
		      "flash2_decode launched for 8192 keys: %d kernels, %d splits (own: %d kernel, %d splits)",
		      f_cap.kern.kernels, f_cap.kern.splitk, f_own.kern.kernels, f_own.kern.splitk);
		struct dm_result mha = run(h, "attn b=8 h=32 hkv=32 sq=1 skv=4096 d=128 dtype=bf16 impl=paged");
		CHECK(fabs(mha.bytes_l2 / p.bytes_l2 - 1) < 1e-12 && mha.bytes_dram > 3.9 * p.bytes_dram,
		      "32 KV heads: the same %.6g B through L2 as 8 (%.6g), 4x from memory (%.6g vs %.6g)",
		      mha.bytes_l2, p.bytes_l2, mha.bytes_dram, p.bytes_dram);
		struct arch_chip *x4 = load("hypothetical/h100_4chiplet.cfg", "dies.l2=\"private\"");
		if (x4) { /* 4 dies, each L2 its own CTAs', no cache beyond: a KV head is read from memory by
			     min(4, query heads per KV head) dies */
			struct dm_result g8 = run(x4, "attn b=8 h=64 hkv=8 sq=1 skv=4096 d=128 dtype=bf16 impl=paged");
			struct dm_result g2 = run(x4, "attn b=8 h=16 hkv=8 sq=1 skv=4096 d=128 dtype=bf16 impl=paged");
			double q64 = 8.0 * 64 * 128 * 2, q16 = 8.0 * 16 * 128 * 2;
			CHECK(fabs(g8.bytes_dram / (4 * kv_B + 2 * q64) - 1) < 1e-12 &&
			          fabs(g2.bytes_dram / (2 * kv_B + 2 * q16) - 1) < 1e-12,
			      "4 dies: GQA 8 reads %.6g B (want %.6g), GQA 2 %.6g B (want %.6g)", g8.bytes_dram,
			      4 * kv_B + 2 * q64, g2.bytes_dram, 2 * kv_B + 2 * q16);
			arch_free(x4);
		}
	}
	struct dm_result wn = run(h, "attn b=1 h=16 sq=2048 skv=2048 d=64 causal=1 dtype=bf16 impl=naive window=128");
	struct dm_result sn = run(h, "attn b=1 h=16 sq=2048 skv=2048 d=64 causal=1 dtype=bf16 impl=naive");
	CHECK(wn.time_s == sn.time_s, "eager attention with a window (%.4g s) computes every score (%.4g s)", wn.time_s,
	      sn.time_s);

	arch_free(h);
	arch_free(a);
	printf("%s\n", fails ? "FAILED" : "all model properties hold");
	return fails != 0;
}
