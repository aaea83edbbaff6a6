/*
 * cmd_op.c -- `sim op CONFIG 'OP' [--json] [--explain] [--set path=value]...`
 *
 * Predicts one op on one chip with the device model and says what bounds it:
 * time, achieved TFLOP/s and share of peak, bytes per memory level, the
 * kernel chosen (tile, stages, split-K, CTAs, occupancy, waves), the time
 * each resource alone would need, and with --explain the model's reasoning.
 */
#include "cli.h"
#include "json.h"
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_op_help[] =
    "usage: sim op CONFIG 'OP' [--json] [--explain] [--set path=value]...\n"
    "\n"
    "Predicts the duration of one operation on the chip of CONFIG from its\n"
    "microarchitecture, and what bounds it. OP is one line of key=value\n"
    "arguments (quote it, or give its words as separate arguments):\n"
    "\n"
    "  gemm m= n= k= [batch=1] dtype= [acc=] [trans=nn|nt|tn|tt]\n"
    "       [epilogue=none|bias|gelu|relu|bias_gelu|bias_relu] [warm=0|1]\n"
    "       [units=N | margin=N | busy=N] (units: the kernel gets N of the\n"
    "       chip's SMs or CUs and is chosen for them, as cuBLASLt's SM count\n"
    "       target gives a GEMM beside a communication kernel; margin: all but\n"
    "       N, chosen for them; busy: N are held by a kernel the library does\n"
    "       not know of, and the kernel chosen for all runs on the rest)\n"
    "       [tile=MxN] (the kernel's tile of C, M and N multiples of 8, as a\n"
    "       library that runs one kernel picks it: PyTorch's grouped GEMM; the\n"
    "       rest of the kernel search, stages and split-K, as without it)\n"
    "       [promote=K] (fp8: the kernel adds its MMAs' partial sums into fp32\n"
    "       registers every K of K on the vector lanes while the matrix units\n"
    "       wait, as CUTLASS's FP8 kernels without fast accumulation do every\n"
    "       128: PyTorch's torch._scaled_grouped_mm on Hopper)\n"
    "       [grouped=0|1] (the batch's groups as a pointer-array grouped GEMM:\n"
    "       a one-block kernel writes each group's pointers and sizes, then\n"
    "       the grouped kernel reads them, as PyTorch's torch._grouped_mm and\n"
    "       torch._scaled_grouped_mm run them on Hopper and Blackwell)\n"
    "  attn b= h= [hkv=h] sq= skv= d= [causal=0|1] dtype=\n"
    "       impl=flash2|flash3|cudnn|flash1|naive|decode|flash2_decode|paged|mmha\n"
    "       [dir=fwd|bwd] [page=16] [maxkv=skv] [dropout=0] (flash1/flash2\n"
    "       training: dropout on the scores, in the kernel; paged: vLLM's\n"
    "       PagedAttention; decode: a split-KV decode kernel that fills the\n"
    "       chip; flash2_decode: FlashAttention-2's own decode path, as torch\n"
    "       SDPA's flash backend and vLLM run it; maxkv (paged, flash2_decode):\n"
    "       the longest context the kernel is launched for, which sizes paged's\n"
    "       V1 logits and picks V1 or V2, and sets flash2_decode's key splits\n"
    "       (vLLM's CUDA graphs keep the capture's: 8192 or the model's\n"
    "       context); cudnn: cuDNN's fused attention on Hopper, as torch\n"
    "       SDPA's cuDNN backend and Transformer Engine run it; mmha:\n"
    "       TensorRT-LLM's generation kernels with multi_block_mode off, the\n"
    "       keys of a sequence never split over CTAs)\n"
    "  elem op=add|mul|gelu|silu|swiglu|relu|layernorm|rmsnorm|softmax|rope|\n"
    "       cast|adam|read|triad|copy|cast_transpose|permute|fill|\n"
    "       layernorm_bwd|rmsnorm_bwd|softmax_bwd n= [cols=n] dtype= [to=fp32]\n"
    "       [warm=0|1] [strided=0|1] [split=0|1] [eager=0|1] (cast_transpose:\n"
    "       cast to `to`, written row-wise and transposed, as fp8 GEMM operands\n"
    "       are prepared;\n"
    "       permute: a tensor of 4 dims made contiguous in another order, as\n"
    "       PyTorch copies it, element by element with index arithmetic;\n"
    "       strided=1: a pointwise op on operands that are not contiguous or are\n"
    "       broadcast, which PyTorch runs the same way; fill: writes n elements,\n"
    "       reads none (a memset is n int8); *_bwd: the backward of a row op,\n"
    "       dx from x (or y) and dy; a norm's weight gradient from partial sums,\n"
    "       as Transformer Engine fuses it, or with split=1 a kernel of its own\n"
    "       that reads x and dy again, as PyTorch runs it; eager=1 on softmax and\n"
    "       softmax_bwd: PyTorch's own kernel, which reads a long row once a pass)\n"
    "  copy bytes= [src=hbm|host] [dst=hbm|host]\n"
    "  conv n= c= h= w= k= r= s= [stride=1] [pad=0] dtype=\n"
    "       [dir=fwd|dgrad|wgrad|bwd] [units= | margin= | busy=] (an implicit GEMM\n"
    "       over NHWC tensors; dgrad: the input's gradient, wgrad: the\n"
    "       filter's, bwd: both, two kernels)\n"
    "  embedding tokens= dim= vocab= dtype=\n"
    "\n"
    "dtypes: fp64 fp32 tf32 fp16 bf16 fp8 fp4 int8 int4. Sizes are positive\n"
    "integers; bytes= takes a unit (bytes=1GiB). warm=1: inputs are already in\n"
    "L2 when they fit (an op right after the one that produced them).\n"
    "epilogue= is the pointwise work a GEMM does on C before storing it.\n"
    "\n"
    "Bounds: matrix, vector, sfu (exp, rsqrt), dram, l2, latency (too few\n"
    "bytes in flight to cover the memory latency), launch, link (PCIe).\n"
    "\n"
    "options:\n"
    "  --json              print JSON: time_s, profiled_s, launch_gap_s, tflops,\n"
    "                      bound, peak_fraction, bytes per level, kernel,\n"
    "                      resource times\n"
    "  --explain           show the reasoning: units, rates, the kernel search,\n"
    "                      occupancy, waves, traffic and latency\n"
    "  --set path=value    override a config parameter (repeatable)\n"
    "\n"
    "exit codes: 0 ok, 2 usage, 65 bad op (or a dtype the chip has no unit for),\n"
    "66 config missing, 78 bad config.\n"
    "\n"
    "examples:\n"
    "  sim op configs/h100.cfg 'gemm m=8192 n=8192 k=8192 dtype=bf16'\n"
    "  sim op configs/a100.cfg 'attn b=8 h=16 sq=2048 skv=2048 d=128 dtype=fp16 impl=flash2' --explain\n"
    "  sim op configs/h100.cfg 'elem op=layernorm n=67108864 cols=8192 dtype=bf16' --json\n";

static void print_text(const struct arch_chip *c, const char *optext, const struct dm_result *r)
{
	printf("%s on %s\n", optext, c->name);
	printf("  time          %.4g us\n", r->time_s * 1e6);
	printf("  profiled      %.4g us (the kernel as a profiler times it: the time less the %.3g us launch gap "
	       "before it)\n",
	       (r->time_s - r->gap_s) * 1e6, r->gap_s * 1e6);
	if (r->flops > 0)
		printf("  throughput    %.4g TFLOP/s (%.1f%% of the %.4g TFLOP/s %s peak)\n", r->tflops,
		       100 * r->peak_frac, r->peak_flops / 1e12, r->uses_matrix ? "matrix" : "vector");
	printf("  bound         %s\n", dm_bound_name(r->bound));
	printf("  bytes         device memory %.4g MB, L2 %.4g MB, shared memory %.4g MB", r->bytes_dram / 1e6,
	       r->bytes_l2 / 1e6, r->bytes_smem / 1e6);
	if (r->bytes_link > 0)
		printf(", host link %.4g MB", r->bytes_link / 1e6);
	if (r->bytes_d2d > 0)
		printf(", across dies %.4g MB", r->bytes_d2d / 1e6);
	printf("\n");
	const struct dm_kernel *k = &r->kern;
	printf("  kernel        %s", k->name);
	if (k->ctas > 0)
		printf(": %lld CTAs, %d per unit, %.2f waves", k->ctas, k->ctas_per_unit, k->waves);
	if (k->tile_m > 0 && !strncmp(k->name, "gemm", 4))
		printf(", tile %dx%dx%d, %d stages, split-K %d", k->tile_m, k->tile_n, k->tile_k, k->stages, k->splitk);
	if (k->kernels > 1)
		printf(" (%d kernels)", k->kernels);
	printf("\n  alone         ");
	int first = 1;
	for (int i = 0; i < B_COUNT; i++)
		if (r->t_res[i] > 0) {
			printf("%s%s %.3g us", first ? "" : ", ", dm_bound_name((enum dm_bound)i), r->t_res[i] * 1e6);
			first = 0;
		}
	printf("\n");
}

static void print_json(const struct arch_chip *c, const char *optext, const struct dm_result *r, const char *explain)
{
	struct json j;
	json_begin(&j, stdout, 1);
	json_obj(&j, NULL);
	json_int(&j, "schema_version", 1);
	json_str(&j, "chip", c->name);
	json_str(&j, "config", c->path);
	json_str(&j, "op", optext);
	json_num(&j, "time_s", r->time_s);
	json_num(&j, "profiled_s", r->time_s - r->gap_s);
	json_num(&j, "launch_gap_s", r->gap_s);
	json_num(&j, "flops", r->flops);
	json_num(&j, "tflops", r->tflops);
	json_num(&j, "peak_tflops", r->peak_flops / 1e12);
	json_num(&j, "peak_fraction", r->peak_frac);
	json_str(&j, "bound", dm_bound_name(r->bound));
	json_str(&j, "unit_group", c->units[r->unit_group].name);
	json_str(&j, "pipe", r->uses_matrix ? "matrix" : "vector");
	json_num(&j, "clock_hz", r->clock_hz);
	json_obj(&j, "bytes");
	json_num(&j, "dram", r->bytes_dram);
	json_num(&j, "l2", r->bytes_l2);
	json_num(&j, "smem", r->bytes_smem);
	json_num(&j, "link", r->bytes_link);
	json_num(&j, "d2d", r->bytes_d2d);
	json_obj_end(&j);
	json_obj(&j, "kernel");
	json_str(&j, "name", r->kern.name);
	json_int(&j, "tile_m", r->kern.tile_m);
	json_int(&j, "tile_n", r->kern.tile_n);
	json_int(&j, "tile_k", r->kern.tile_k);
	json_int(&j, "stages", r->kern.stages);
	json_int(&j, "split_k", r->kern.splitk);
	json_int(&j, "ctas", r->kern.ctas);
	json_int(&j, "ctas_per_unit", r->kern.ctas_per_unit);
	json_num(&j, "waves", r->kern.waves);
	json_int(&j, "kernels", r->kern.kernels);
	json_obj_end(&j);
	json_obj(&j, "resource_time_s");
	for (int i = 0; i < B_COUNT; i++)
		json_num(&j, dm_bound_name((enum dm_bound)i), r->t_res[i]);
	json_obj_end(&j);
	if (c->nsets) {
		json_arr(&j, "overrides");
		for (int i = 0; i < c->nsets; i++)
			json_str(&j, NULL, c->sets[i]);
		json_arr_end(&j);
	}
	if (explain)
		json_str(&j, "explain", explain);
	json_obj_end(&j);
	json_end(&j);
}

int cmd_op(int argc, char **argv)
{
	struct cli_common o = {.nsets = 0};
	const char *path = NULL;
	int explain = 0;
	char line[4096] = "";
	size_t used = 0;
	for (int i = 1; i < argc; i++) {
		int r = cli_common_opt(&o, argc, argv, &i, "op");
		if (r < 0)
			return SIM_EXIT_USAGE;
		if (r)
			continue;
		if (!strcmp(argv[i], "--explain")) {
			explain = 1;
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return cli_unknown_option("op", cmd_op_help, argv[i]);
		if (!path) {
			path = argv[i];
			continue;
		}
		size_t n = strlen(argv[i]);
		if (used + n + 2 > sizeof line)
			return cli_usage_error("op", "OP is longer than %zu characters", sizeof line - 2);
		if (used)
			line[used++] = ' ';
		memcpy(line + used, argv[i], n + 1);
		used += n;
	}
	if (!path)
		return cli_usage_error("op", "missing CONFIG");
	if (!used)
		return cli_usage_error("op", "missing OP, e.g. 'gemm m=4096 n=4096 k=4096 dtype=fp16'");
	struct op op;
	char why[512];
	if (op_parse(line, NULL, &op, why, sizeof why)) {
		fprintf(stderr, "sim op: %s\n", why);
		return SIM_EXIT_TRACE;
	}
	int code = SIM_EXIT_OK;
	struct arch_chip *c = cli_load(path, &o, &code);
	if (!c)
		return code;
	char *xbuf = NULL;
	size_t xlen = 0;
	FILE *xf = explain ? open_memstream(&xbuf, &xlen) : NULL;
	struct dm_result r;
	int rc = dm_predict(c, &op, &r, xf, why, sizeof why);
	if (xf)
		fclose(xf);
	if (rc) {
		fprintf(stderr, "sim op: %s: %s\n", op_kind_name(op.kind), why);
		free(xbuf);
		arch_free(c);
		return SIM_EXIT_TRACE;
	}
	char canon[512];
	op_format(&op, canon, sizeof canon);
	if (o.json) {
		print_json(c, canon, &r, xbuf);
	} else {
		if (xbuf && xlen) {
			printf("how the model sees it:\n");
			for (char *s = xbuf, *e; *s; s = e) {
				e = strchr(s, '\n');
				e = e ? e + 1 : s + strlen(s);
				printf("  %.*s", (int)(e - s), s);
			}
			printf("\n");
		}
		print_text(c, canon, &r);
	}
	free(xbuf);
	arch_free(c);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sim op: cannot write output\n");
		return SIM_EXIT_CANTCREAT;
	}
	return SIM_EXIT_OK;
}
