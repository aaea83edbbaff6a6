/*
 * cmd_gen.c -- `sim gen MODEL [--flag value]... [-o FILE]`
 *
 * Writes the `simtrace 1` trace of one training step or one inference
 * request batch of a transformer (workloads/gen.c, gen_trace.c): MODEL is
 * a preset (gpt3-175b, llama3-8b, mixtral-8x7b, deepseek-v3, ...) or `gpt`
 * with explicit shape flags, parsed by gen_parse_args (workloads/gen_args.c,
 * shared with the validation suite). The output file is written under a
 * temporary name in its directory and renamed: complete or absent.
 */
#include "cli.h"
#include "gen.h"
#include "outfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char cmd_gen_help[] =
    "usage: sim gen MODEL [options] [-o FILE]\n"
    "\n"
    "Writes a simtrace 1 workload trace (docs/trace-format.md) of one training\n"
    "step, or one inference request batch, of a transformer on tp x pp x dp ranks,\n"
    "with a `workload` line (model FLOPs, tokens) and a `memory` line per pipeline\n"
    "stage (docs/workloads.md). Replay it with `sim run CONFIG FILE`.\n"
    "\n"
    "MODEL is a preset, or gpt with --layers, --hidden and --heads (GPT: ffn 4h,\n"
    "GELU, LayerNorm, MHA, learned positions, tied embeddings, vocab 50257, seq 2048).\n"
    "Presets: gpt3-125m gpt3-350m gpt3-760m gpt3-1.3b gpt3-2.7b gpt3-6.7b gpt3-13b\n"
    "gpt3-175b llama2-7b llama2-13b llama2-70b llama3-8b llama3-70b llama3-405b\n"
    "mixtral-8x7b deepseek-v3 deepseek-v4-flash kimi-k2 qwen3-30b-a3b qwen3-235b-a22b\n"
    "gpt-oss-120b nemotron-3-nano nemotron-3-super nemotron-3-ultra.\n"
    "deepseek-v4-flash has DeepSeek-V4's compressed attention (CSA and HCA with the\n"
    "lightning indexer, hyper-connections; training with --tp 1 --cp 1).\n"
    "Shape flags override a preset.\n"
    "\n"
    "model shape:\n"
    "  --layers N          transformer blocks\n"
    "  --hidden N          model width h\n"
    "  --heads N           query heads\n"
    "  --kv-heads N        key/value heads (default: --heads; fewer is GQA, 1 is MQA)\n"
    "  --head-dim N        dimension per head (default: hidden / heads)\n"
    "  --ffn N             FFN width (gpt default: 4 x hidden)\n"
    "  --vocab N           vocabulary size\n"
    "  --seq N             sequence length (training; default: the model's)\n"
    "  --experts N         routed experts per MoE layer (makes every layer MoE)\n"
    "  --topk N            experts per token (default 2)\n"
    "  --expert-ffn N      FFN width of one expert (default: --ffn)\n"
    "  --dense-layers N    the first N blocks keep a dense FFN of --ffn (with\n"
    "                      --experts; deepseek-v3: 3, kimi-k2: 1)\n"
    "  --moe-latent W      LatentMoE: the routed experts work on width W, tokens\n"
    "                      projected down to it before the dispatch and back\n"
    "                      after the combine (nemotron-3-super: 1024); 0: none\n"
    "  --router-groups G   group-limited routing: the experts in G groups, a\n"
    "  --router-group-topk g  token's among g of them (deepseek-v3: 8 and 4)\n"
    "  --window N          sliding-window attention: a query sees its N latest\n"
    "                      keys (gpt-oss-120b: 128); 0: all\n"
    "  --window-skip-freq K  with --window, every K-th layer attends to all keys\n"
    "                      (Megatron-Core's window_attn_skip_freq; gpt-oss: 2)\n"
    "  --qk-norm           a norm over each query and key head before RoPE (Qwen3)\n"
    "  --mtp-num-layers N  multi-token-prediction modules after the last layer\n"
    "                      (training; deepseek-v3, deepseek-v4-flash,\n"
    "                      nemotron-3-super/ultra: 1,\n"
    "                      else 0; a hybrid model's is attention and MoE, *E)\n"
    "  --hybrid-pattern P  a hybrid Mamba model (training), one symbol a layer as\n"
    "                      Megatron-Core's hybrid_override_pattern: M Mamba-2,\n"
    "                      * attention, - MLP, E mixture of experts; sets --layers\n"
    "                      (nemotron-3-nano: MEMEM*EMEMEM*...)\n"
    "  --mamba-heads N     Mamba-2 heads (default: 2 x hidden / head dim)\n"
    "  --mamba-head-dim N  channels a Mamba-2 head (default 64)\n"
    "  --mamba-state N     state dimension of B and C (default 128)\n"
    "  --mamba-groups N    groups of B and C (default 8; divides the heads, and is\n"
    "                      divisible by --tp)\n"
    "  --attn-impl I       flash2 (default) | flash3 | cudnn | flash1 | naive:\n"
    "                      attention of training and prefill as FlashAttention-2/-3,\n"
    "                      as cuDNN's fused attention (what Transformer Engine, and\n"
    "                      so Megatron-Core, runs on Hopper and later), as the\n"
    "                      original FlashAttention (2022), or as the separate\n"
    "                      kernels of eager frameworks (Q K^T, mask, softmax, P V),\n"
    "                      which keep the s x s scores for the backward\n"
    "\n"
    "parallelism (ranks = tp x cp x pp x dp):\n"
    "  --tp N              tensor parallel (Megatron column/row split; default 1)\n"
    "  --pp N              pipeline stages (default 1); the layers split evenly\n"
    "                      over pp x virtual stages, or unevenly as below\n"
    "  --dp N              data parallel (default 1)\n"
    "  --ep N              expert parallel, splits the dp ranks (layout tp, ep,\n"
    "                      dp/ep, pp; must divide --dp and the experts), or\n"
    "                      with --tp, --sp spans tp x dp ranks, experts whole\n"
    "                      (Megatron-Core's MoE parallel folding: --tp divides\n"
    "                      it and ep / tp divides --dp)\n"
    "  --moe-dispatcher D  how tokens reach the experts' ranks (Megatron-Core's\n"
    "                      --moe-token-dispatcher-type): alltoall (default: a\n"
    "                      copy per chosen expert) | allgather (every rank\n"
    "                      gathers the ep group's tokens, a reduce-scatter\n"
    "                      returns them; --tp 1) | flex (DeepEP, HybridEP: a\n"
    "                      token once to each rank and node that holds one of\n"
    "                      its experts, forwarded inside the node)\n"
    "  --moe-a2a-overlap   (training) a steady step's forward and backward of two\n"
    "                      micro-batches run layer against layer, each one's\n"
    "                      all-to-alls on a stream beside the other's compute\n"
    "                      (Megatron-Core's --overlap-moe-expert-parallel-comm;\n"
    "                      one more warm-up forward; ep 2 or more, not with\n"
    "                      --recompute full)\n"
    "  --moe-imbalance F   the router's load imbalance: the ep group's busiest\n"
    "                      rank receives F x the balanced share of token\n"
    "                      assignments (1 to 64; default 1, balanced, as the\n"
    "                      published runs force it); every rank waits for it at\n"
    "                      the combine, so its dispatch, combine and experts'\n"
    "                      GEMMs are the step's\n"
    "  --moe-capacity-factor C  an expert keeps at most C x the balanced share,\n"
    "                      the rest dropped (Megatron-Core's\n"
    "                      --moe-expert-capacity-factor; default: dropless)\n"
    "  --cp N              context parallel (training, up to 16): each rank holds\n"
    "                      seq/cp tokens, attention runs as a ring (Transformer\n"
    "                      Engine's, K and V passed to cp+1 while a step computes;\n"
    "                      causal load balance: seq divisible by 2 x cp); gradients\n"
    "                      reduce over dp x cp (layout tp, cp, ep, dp, pp)\n"
    "  --cp-comm-type T    p2p (default): the ring above | a2a: all-to-alls over\n"
    "                      cp turn the split of the sequence into one of the heads\n"
    "                      around each attention (Ulysses-style; a rank's query and\n"
    "                      key/value heads divisible by cp)\n"
    "  --sp                sequence parallelism: norms and dropout sharded over tp,\n"
    "                      reduce-scatter + all-gather instead of all-reduce\n"
    "  --tp-comm-overlap   (training, with --sp) Megatron-Core's flag: the all-\n"
    "                      gather before a dense layer's QKV and FC1 GEMMs, the\n"
    "                      reduce-scatter after its output projection and FC2, and\n"
    "                      the all-gather of their output gradients run as tp ring\n"
    "                      steps (coll op=shift), each beside a GEMM chunk\n"
    "                      (Transformer Engine's userbuffers ring exchange)\n"
    "\n"
    "training (--mode train, the default):\n"
    "  --micro-batch N     sequences per micro-batch (default 1)\n"
    "  --global-batch N    sequences per step (default micro-batch x dp); must be\n"
    "                      a multiple of micro-batch x dp\n"
    "  --schedule S        1f1b (default) | gpipe | interleaved\n"
    "  --virtual-stages N  model chunks per stage with interleaved (default 2)\n"
    "  --decoder-first-pipeline-num-layers N, --decoder-last-pipeline-num-layers N\n"
    "                      layers of the first / last stage (each split evenly\n"
    "                      over its virtual stages); the middle stages share the\n"
    "                      rest evenly (Megatron-Core's flags of the same names)\n"
    "  --account-for-embedding-in-pipeline-split,\n"
    "  --account-for-loss-in-pipeline-split\n"
    "                      count the embedding / the loss as one layer of the\n"
    "                      first / last model chunk: layers + 2 split evenly,\n"
    "                      those two chunks one layer short (Llama 3.1 405B's\n"
    "                      126 layers on 8 x 4 chunks: 4 each, 3 at the ends)\n"
    "  --pipeline-layout S Megatron-Core's layout string: the model chunks in\n"
    "                      order, '|' between them, each naming E (embedding),\n"
    "                      t (layer), m (MTP module), L (loss); x*n and (..)*n\n"
    "                      repeat. Chunk q is stage q mod pp's virtual stage\n"
    "                      q / pp (sets --virtual-stages). DeepSeek-V3 on 16\n"
    "                      chunks: 'Et*4|(t*4|)*14tmL'\n"
    "  --recompute R       none (default) | selective (attention core) | full\n"
    "  --dropout P         dropout probability (default 0: none): hidden dropout\n"
    "                      before each residual add (elem op=mul, forward and\n"
    "                      backward) and, with --attn-impl naive, on the attention\n"
    "                      scores (flash1/flash2: in the kernel, dropout=P on the\n"
    "                      attn ops; flash3 has none and is refused); adds the\n"
    "                      masks to the activation memory\n"
    "  --zero N            0 (DDP all-reduce, default) | 1 | 2 | 3 (FSDP; not with\n"
    "                      --pp > 1)\n"
    "  --grad-sync S       overlap (default): each block's gradient bucket is\n"
    "                      reduced on its own stream as soon as the last\n"
    "                      micro-batch's backward is done with it, as DDP does;\n"
    "                      after: all gradients at once after the backward\n"
    "                      (Megatron-LM's local DDP of 2021-22); --zero 0 or 1\n"
    "  --offload           optimizer states on the host, copied over PCIe\n"
    "  --dtype D           bf16 (default) | fp16 (adds loss-scale unscaling) | fp8\n"
    "                      (the transformer blocks' GEMMs in fp8, as Transformer\n"
    "                      Engine runs them) | fp4 (in NVFP4, TE's NVFP4BlockScaling:\n"
    "                      each input's and output gradient's amax, then both\n"
    "                      copies in fp4); fp32 master weights and Adam states\n"
    "  --fp8-recipe R      with --dtype fp8: delayed (default) | current | mxfp8,\n"
    "                      TE's recipes: the kernels that quantize each fp8 GEMM's\n"
    "                      input and output gradient (docs/workloads.md); none:\n"
    "                      no quantization kernel (what they cost, by difference)\n"
    "  --make-vocab-size-divisible-by N\n"
    "                      the vocabulary is padded as the frameworks pad it, so\n"
    "                      that the LM head's GEMMs stay aligned: training to a\n"
    "                      multiple of N x tp (Megatron-LM, default 128), inference\n"
    "                      to a multiple of N (vLLM, default 64); 1: no padding\n"
    "                      (a misaligned head runs cuBLAS's slow fallback kernels)\n"
    "\n"
    "inference (--mode infer; --tp, --pp and --dp; with --pp the batch runs as up to\n"
    "pp micro-batches in flight through the stages):\n"
    "  --mode M            train (default) | infer\n"
    "  --batch N           sequences per model replica (default 1)\n"
    "  --input-len N       prompt tokens (default 512)\n"
    "  --output-len N      generated tokens (default 128; decode steps = N - 1)\n"
    "  --paged             the KV cache in blocks of 16 tokens, as vLLM keeps it;\n"
    "                      decode through vLLM's PagedAttention kernels unless\n"
    "                      --decode-impl says otherwise\n"
    "  --decode-impl I     auto (default: paged with --paged, else\n"
    "                      flash2_decode) | flash2_decode: FlashAttention-2's\n"
    "                      decode kernels (torch SDPA's flash backend; vLLM's\n"
    "                      FLASH_ATTN backend, its default on CUDA, reads the\n"
    "                      paged cache through them) | paged: vLLM's\n"
    "                      PagedAttention kernels, a CTA a query head (its\n"
    "                      XFORMERS backend, and ROCm's up to 0.6.1) | decode:\n"
    "                      a generic split-KV kernel | mmha: TensorRT-LLM's\n"
    "                      generation kernels with multi_block_mode off (masked\n"
    "                      MHA, a CTA a query head, or XQA for grouped KV heads\n"
    "                      that fill the chip; the keys never split)\n"
    "  --engine E          none (default: the host keeps ahead of the device) |\n"
    "                      trtllm: TensorRT-LLM's executor, the host ahead of\n"
    "                      the device and the embedding table whole on every\n"
    "                      tensor-parallel rank (its checkpoints' default: no\n"
    "                      all-reduce after the lookup, its memory counted) |\n"
    "                      vllm: before each step's forward, the host work of\n"
    "                      vLLM's V0 engine (0.5-0.6), 100 us a sequence, as a\n"
    "                      delay; its sampler's passes over the logits in fp32;\n"
    "                      its decode steps' attention through the block\n"
    "                      table launched as its CUDA graphs captured it (maxkv=,\n"
    "                      min(8192, the model's context); docs/workloads.md)\n"
    "  --enforce-eager     (--engine vllm) vLLM's enforce_eager: no CUDA graphs,\n"
    "                      each decode step's attention launched for its own\n"
    "                      contexts (not with --launch graph)\n"
    "  --same-prompt       every sequence of the batch is one prompt, decoded\n"
    "                      greedily (a harness that repeats one text), so a\n"
    "                      decode step's tokens are one token: an MoE layer\n"
    "                      routes them all to the same topk experts and reads\n"
    "                      those experts' weights only\n"
    "\n"
    "launch (training and inference):\n"
    "  --launch L          eager (default) | graph: how the device ops are\n"
    "                      launched. eager: one by one by the host, each kernel\n"
    "                      behind model.launch_gap; graph: replayed from CUDA\n"
    "                      graphs (launch=graph, model.graph_launch_gap): an\n"
    "                      inference's decode steps, as vLLM and TensorRT-LLM\n"
    "                      capture them (prefill stays eager), or a training\n"
    "                      step whole, as torch.cuda.graph captures it\n"
    "\n"
    "output:\n"
    "  -o FILE             write the trace to FILE (default: stdout)\n"
    "\n"
    "exit codes: 0 ok, 2 usage (unknown flag or preset, bad value, a layout that\n"
    "does not divide), 73 cannot write output.\n"
    "\n"
    "examples:\n"
    "  sim gen gpt3-175b --tp 8 --pp 16 --dp 8 --global-batch 1536 --recompute full\n"
    "  sim gen gpt --layers 24 --hidden 2048 --heads 16 --vocab 50257 --seq 2048 --tp 2 --dp 4\n"
    "  sim gen llama3-8b --dp 8 --zero 1 --global-batch 64 -o llama.trace\n"
    "  sim gen gpt --layers 40 --hidden 6144 --heads 48 --vocab 51200 --tp 8 --dp 4 --global-batch 32\n"
    "          --attn-impl naive --dropout 0.1 --recompute full --dtype fp16\n"
    "  sim gen llama2-70b --mode infer --tp 4 --batch 16 --input-len 1024 --output-len 256 --paged\n";

static int configure(int argc, char **argv, struct gen_config *c, struct gen_args *a)
{
	char why[1280];
	if (gen_parse_args(argc, argv, c, a, why, sizeof why))
		return cli_usage_error("gen", "%s", why);
	return 0;
}

static int write_out(const struct gen_config *c, const struct gen_args *a)
{
	if (!a->outpath) {
		if (gen_write(stdout, c, a->cmdline) || fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "sim gen: cannot write output\n");
			return SIM_EXIT_CANTCREAT;
		}
		return SIM_EXIT_OK;
	}
	struct out_file o;
	char why[256];
	FILE *f = out_open(a->outpath, &o, why, sizeof why);
	if (!f) {
		fprintf(stderr, "sim gen: cannot write %s: %s\n", a->outpath, why);
		return SIM_EXIT_CANTCREAT;
	}
	if (gen_write(f, c, a->cmdline)) {
		snprintf(why, sizeof why, "%s", strerror(errno ? errno : EIO));
		out_abort(&o);
		fprintf(stderr, "sim gen: cannot write %s: %s\n", a->outpath, why);
		return SIM_EXIT_CANTCREAT;
	}
	if (out_commit(&o, why, sizeof why)) {
		fprintf(stderr, "sim gen: cannot write %s: %s\n", a->outpath, why);
		return SIM_EXIT_CANTCREAT;
	}
	return SIM_EXIT_OK;
}

int cmd_gen(int argc, char **argv)
{
	struct gen_config c;
	struct gen_args a;
	int rc = configure(argc, argv, &c, &a);
	return rc ? rc : write_out(&c, &a);
}
