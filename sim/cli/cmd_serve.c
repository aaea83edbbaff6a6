/*
 * cmd_serve.c -- `sim serve CONFIG MODEL [options]`
 *
 * Serves a stream of requests on replicas of a model (sim/serve/): the
 * model and its tensor/pipeline layout are `sim gen`'s options (parsed by
 * gen_parse_args), the stream, the engine and the fleet are this command's.
 * Prints throughput and latency percentiles (or JSON); writes a per-request
 * CSV and a Perfetto timeline on request, each complete or absent.
 */
#include "cli.h"
#include "gen.h"
#include "json.h"
#include "outfile.h"
#include "report.h"
#include "serve.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_serve_help[] =
    "usage: sim serve CONFIG MODEL [model and layout options] [stream options]\n"
    "                 [engine options] [--json] [--csv FILE] [--timeline FILE]\n"
    "\n"
    "Serves a stream of requests on replicas of MODEL (a `sim gen` preset, or gpt\n"
    "with shape options) on the chip of CONFIG, each replica's engine scheduling\n"
    "them as vLLM does: continuous batching under a token budget per step, chunked\n"
    "prefill, a KV cache of fixed-size blocks with admission and preemption. Each\n"
    "engine step is the batch's forward timed by the device model and the\n"
    "collective planner (the ops `sim gen --mode infer` writes), memoized by shape.\n"
    "Prints throughput (requests/s, tokens/s, per device), TTFT, TPOT (time per output\n"
    "token after the first), inter-token latency and end-to-end latency (mean, p50,\n"
    "p90, p99, to 0.1%), goodput within --slo-ttft/--slo-tpot, and the\n"
    "KV cache. docs/serving.md walks through sizing a fleet.\n"
    "\n"
    "model and layout (as sim gen): --tp N, --pp N, --dtype bf16|fp16|fp8,\n"
    "  --attn-impl flash2|flash3|..., shape options (--layers, --hidden, ...)\n"
    "\n"
    "stream:\n"
    "  --rate R                Poisson arrivals, R requests/s (default 1)\n"
    "  --burst                 every request at time 0 (offline, LLM.generate)\n"
    "  --requests N            requests in the stream (default 1000)\n"
    "  --requests-csv FILE     arrival_s,input_len,output_len per line, in arrival\n"
    "                          order (a header line is skipped)\n"
    "  --input-len N|LO:HI     prompt tokens, fixed or uniform (default 512)\n"
    "  --output-len N|LO:HI    output tokens, fixed or uniform (default 128)\n"
    "  --lengths FILE          input_len,output_len pairs sampled with replacement\n"
    "                          (a dataset's statistics) instead of the two above\n"
    "  --seed N                random streams of arrivals and lengths (default 1)\n"
    "\n"
    "engine (vLLM's names and defaults):\n"
    "  --max-num-seqs N        sequences in a step (default 256)\n"
    "  --max-batched-tokens N  tokens in a step (default 8192; with --no-chunked-\n"
    "                          prefill the context, at least 2048, and never below\n"
    "                          it, as vLLM V0 sets and checks it)\n"
    "  --max-model-len N       prompt + output limit (default: the model's context)\n"
    "  --block-size N          tokens per KV block (default 16)\n"
    "  --no-chunked-prefill    whole prompts; a step prefills or decodes (vLLM V0)\n"
    "  --gpu-memory-utilization F  share of device memory the engine uses (0.9)\n"
    "  --kv-free-fraction F    the KV cache is F of the memory the weights and a\n"
    "                          forward leave (TensorRT-LLM's free_gpu_memory_fraction)\n"
    "                          instead of --gpu-memory-utilization's share\n"
    "  --preempt recompute|swap    what a preempted request's KV does (recompute)\n"
    "  --capacity-policy P     max-utilization (default: blocks as needed, preempt\n"
    "                          when full, as vLLM) | guaranteed-no-evict (admit a\n"
    "                          request only when its whole KV fits, as\n"
    "                          TensorRT-LLM's default)\n"
    "  --prefix-hit F          share of each prompt found in the prefix cache (0)\n"
    "  --engine none|vllm|trtllm  the engine: none (the host keeps ahead of the\n"
    "                          device; default), vLLM's V0 engine (0.5-0.6:\n"
    "                          scheduling, inputs, sampling and outputs, 100 us\n"
    "                          a sequence a step; its sampler's passes over the\n"
    "                          logits; steps of decodes alone from CUDA graphs,\n"
    "                          the paged attention launched for the capture's\n"
    "                          keys; --enforce-eager: without graphs), or\n"
    "                          TensorRT-LLM's executor (the host ahead of the\n"
    "                          device; the embedding table whole on every\n"
    "                          tensor-parallel rank; its defaults unless given:\n"
    "                          --kv-free-fraction 0.9, --capacity-policy\n"
    "                          guaranteed-no-evict)\n"
    "\n"
    "fleet and limits:\n"
    "  --replicas N            model replicas, tp x pp GPUs each (default 1);\n"
    "                          requests are dealt round robin\n"
    "  --prefill-replicas N    disaggregated: N of the replicas prefill, the rest\n"
    "                          decode; the KV moves over the links in between\n"
    "  --slo-ttft T, --slo-tpot T  latency limits per request (5s, 500ms, 50ms)\n"
    "  --find-rate             search the highest Poisson rate whose p99 TTFT and\n"
    "                          p99 TPOT stay within the limits, and report it\n"
    "\n"
    "output:\n"
    "  --json                  the report as JSON (schema_version 1)\n"
    "  --csv FILE              one row per request (latencies, preemptions)\n"
    "  --timeline FILE         Chrome / Perfetto trace: engine steps and request\n"
    "                          lifetimes (queued, prefill, decode) per replica\n"
    "  --set path=value        override a config parameter (repeatable)\n"
    "\n"
    "exit codes: 0 ok, 2 usage (a bad option, a request longer than the\n"
    "context), 3 no KV cache fits beside the weights (or a request's KV does not\n"
    "fit the cache), 65 bad request or lengths CSV, 66 a CSV missing, 70 internal\n"
    "error, 73 cannot write an output, 78 bad config.\n"
    "\n"
    "examples:\n"
    "  sim serve configs/h100.cfg llama3-8b --rate 20 --requests 500\n"
    "  sim serve configs/h100.cfg llama3-70b --tp 4 --rate 4 --input-len 128:2048 --output-len 256\n"
    "  sim serve configs/a100_40gb.cfg llama2-7b --burst --requests 64 --input-len 512 --output-len 512\n"
    "  sim serve configs/h100.cfg llama3-8b --find-rate --slo-ttft 500ms --slo-tpot 50ms --requests 300\n";

static int configure(int argc, char **argv, struct sv_args *A, struct sv_options *o, struct gen_config *g)
{
	char why[1280];
	const char *bad = NULL;
	if (!sv_parse_args(argc, argv, A, o, g, &bad, why, sizeof why))
		return 0;
	if (bad)
		return cli_unknown_option("serve", cmd_serve_help, bad);
	return cli_usage_error("serve", "%s", why);
}

static void dist_text(const char *name, const struct sv_dist *d, double scale, const char *unit)
{
	if (!d->n) {
		printf("  %-6s %10s\n", name, "-");
		return;
	}
	printf("  %-6s %10.2f %10.2f %10.2f %10.2f %10.2f  %s\n", name, d->mean * scale, d->p50 * scale, d->p90 * scale,
	       d->p99 * scale, d->max * scale, unit);
}

static const char *arrivals_text(const struct sv_options *o, char *buf, size_t len)
{
	if (o->arrivals == SV_BURST)
		snprintf(buf, len, "%lld at once (offline)", o->requests);
	else if (o->arrivals == SV_CSV)
		snprintf(buf, len, "from %s", o->requests_csv);
	else
		snprintf(buf, len, "%lld, Poisson at %.4g /s (seed %lu)", o->requests, o->rate, o->seed);
	return buf;
}

static void len_text(const struct sv_len *l, char *buf, size_t len)
{
	if (l->kind == SV_LEN_FIXED)
		snprintf(buf, len, "%lld", l->lo);
	else
		snprintf(buf, len, "%lld..%lld", l->lo, l->hi);
}

static void serve_text(const struct arch_chip *c, const char *config, const struct gen_config *g,
                       const struct sv_options *o, const struct sv_result *r, int find, double rate)
{
	char buf[256], in[48], out[48];
	const double GiB = 1073741824.0;
	printf("sim serve: %s on %s (%s)\n", g->m.name, c->name, config);
	printf("fleet          %d replica%s of tp %d x pp %d = %d device%s", r->replicas, r->replicas == 1 ? "" : "s",
	       r->tp, r->pp, r->gpus, r->gpus == 1 ? "" : "s");
	if (r->prefill_replicas)
		printf(" (%d prefill, %d decode; KV moved in %.3f ms on average)", r->prefill_replicas,
		       r->replicas - r->prefill_replicas, r->kv_xfer_s * 1e3);
	printf("\n");
	len_text(&o->in, in, sizeof in);
	len_text(&o->out, out, sizeof out);
	if (o->lengths_csv)
		printf("requests       %s; lengths sampled from %s\n", arrivals_text(o, buf, sizeof buf),
		       o->lengths_csv);
	else if (o->arrivals == SV_CSV)
		printf("requests       %s\n", arrivals_text(o, buf, sizeof buf));
	else
		printf("requests       %s; input %s, output %s tokens\n", arrivals_text(o, buf, sizeof buf), in, out);
	printf("engine         max %lld seqs, %lld tokens a step, %s, blocks of %lld, %s%s\n", o->max_num_seqs,
	       o->max_batched_tokens, o->chunked_prefill ? "chunked prefill" : "whole prefills", o->block_tokens,
	       o->guaranteed           ? "whole KV reserved at admission"
	       : o->preempt == SV_SWAP ? "preempt by swap"
	                               : "preempt by recompute",
	       g->inf.engine == GEN_ENGINE_VLLM     ? "; vLLM V0 host work before each step"
	       : g->inf.engine == GEN_ENGINE_TRTLLM ? "; TensorRT-LLM's executor (the embedding whole on every rank)"
	                                            : "");
	printf("memory         per device %.1f GiB: weights %.2f, %lld-token forward %.2f, KV cache %.2f GiB "
	       "(%lld blocks, %.0f KiB a token; peak use %.0f%%)\n",
	       r->capacity_bytes / GiB, r->weights_bytes / GiB, o->max_batched_tokens, r->act_bytes / GiB,
	       r->kv_pool_bytes / GiB, r->kv_blocks, r->kv_token_bytes / 1024, 100 * r->kv_peak_frac);
	if (find) {
		if (rate <= 0) {
			printf("max rate       none: even a trickle of requests misses the limits\n");
			return;
		}
		char lt[48] = "any", lp[48] = "any";
		if (o->slo_ttft_s > 0)
			snprintf(lt, sizeof lt, "<= %.4g ms", o->slo_ttft_s * 1e3);
		if (o->slo_tpot_s > 0)
			snprintf(lp, sizeof lp, "<= %.4g ms", o->slo_tpot_s * 1e3);
		printf("max rate       %.4g requests/s (Poisson) keep p99 TTFT %s and p99 TPOT %s\n", rate, lt, lp);
	}
	printf("finished       %lld of %lld requests in %.3f s (first arrival to last token)\n", r->finished,
	       r->requests, r->duration_s);
	char ot[32], tt[32], od[32];
	report_nfmt(r->out_tok_per_s, ot, sizeof ot);
	report_nfmt(r->tok_per_s, tt, sizeof tt);
	report_nfmt(r->gpus ? r->out_tok_per_s / r->gpus : 0, od, sizeof od);
	printf("throughput     %.4g requests/s, %s output tokens/s, %s tokens/s; %s output tokens/s per device\n",
	       r->req_per_s, ot, tt, od);
	if (o->slo_ttft_s > 0 || o->slo_tpot_s > 0)
		printf("goodput        %.4g requests/s (%lld of %lld within TTFT %s%.4g ms, TPOT %s%.4g ms)\n",
		       r->good_per_s, r->good, r->finished, o->slo_ttft_s > 0 ? "<= " : "any ", o->slo_ttft_s * 1e3,
		       o->slo_tpot_s > 0 ? "<= " : "any ", o->slo_tpot_s * 1e3);
	printf("latency (ms)         mean        p50        p90        p99        max\n");
	dist_text("TTFT", &r->ttft, 1e3, "time to first token");
	dist_text("TPOT", &r->tpot, 1e3, "per output token after the first");
	dist_text("ITL", &r->itl, 1e3, "between tokens");
	dist_text("E2E", &r->e2e, 1e3, "arrival to last token");
	dist_text("queue", &r->queue, 1e3, "arrival to first scheduled");
	printf("engine steps   %lld, %.1f tokens and %.1f sequences a step on average, busy %.3f s of %d engine%s;"
	       " %lld preemptions%s\n",
	       r->steps, r->steps ? r->batch_tokens_sum / (double)r->steps : 0,
	       r->steps ? r->batch_seqs_sum / (double)r->steps : 0, r->busy_s, r->replicas * r->pp,
	       r->replicas * r->pp == 1 ? "" : "s", r->preemptions, r->swaps ? " (swapped)" : "");
	if (r->cached_tokens)
		printf("prefix cache   %lld prompt tokens found cached\n", r->cached_tokens);
	printf("simulated in   %.2f s CPU%s: %ld step shapes timed, %ld reused; device model %ld ops, %ld reused\n",
	       r->wall_s, find ? " (all runs of the search)" : "", r->memo_misses, r->memo_hits, r->dm_misses,
	       r->dm_hits);
}

static void dist_json(struct json *j, const char *key, const struct sv_dist *d)
{
	json_obj(j, key);
	json_int(j, "n", d->n);
	json_num(j, "mean_s", d->mean);
	json_num(j, "p50_s", d->p50);
	json_num(j, "p90_s", d->p90);
	json_num(j, "p99_s", d->p99);
	json_num(j, "max_s", d->max);
	json_obj_end(j);
}

static void serve_json(const struct arch_chip *c, const char *config, const struct gen_config *g,
                       const struct sv_options *o, const struct sv_result *r, int find, double rate)
{
	struct json j;
	json_begin(&j, stdout, 1);
	json_obj(&j, NULL);
	json_int(&j, "schema_version", 1);
	json_str(&j, "sim_version", SIM_VERSION);
	json_str(&j, "config", config);
	json_str(&j, "chip", c->name);
	json_str(&j, "model", g->m.name);
	json_obj(&j, "fleet");
	json_int(&j, "replicas", r->replicas);
	json_int(&j, "prefill_replicas", r->prefill_replicas);
	json_int(&j, "tp", r->tp);
	json_int(&j, "pp", r->pp);
	json_int(&j, "gpus", r->gpus);
	json_num(&j, "kv_transfer_mean_s", r->kv_xfer_s);
	json_obj_end(&j);
	json_obj(&j, "stream");
	json_str(&j, "arrivals", o->arrivals == SV_BURST ? "burst" : o->arrivals == SV_CSV ? "csv" : "poisson");
	json_num(&j, "rate_per_s", o->arrivals == SV_POISSON ? o->rate : 0);
	json_int(&j, "seed", (long long)o->seed);
	json_obj_end(&j);
	json_obj(&j, "engine");
	json_int(&j, "max_num_seqs", o->max_num_seqs);
	json_int(&j, "max_batched_tokens", o->max_batched_tokens);
	json_int(&j, "block_tokens", o->block_tokens);
	json_bool(&j, "chunked_prefill", o->chunked_prefill);
	json_str(&j, "preempt", o->preempt == SV_SWAP ? "swap" : "recompute");
	json_str(&j, "capacity_policy", o->guaranteed ? "guaranteed-no-evict" : "max-utilization");
	json_str(&j, "host", gen_engine_name(g->inf.engine));
	json_num(&j, "gpu_memory_utilization", o->mem_util);
	json_num(&j, "kv_free_fraction", o->kv_free_frac);
	json_num(&j, "prefix_hit", o->prefix_hit);
	json_obj_end(&j);
	json_obj(&j, "memory_per_gpu");
	json_num(&j, "capacity_bytes", r->capacity_bytes);
	json_num(&j, "weights_bytes", r->weights_bytes);
	json_num(&j, "forward_bytes", r->act_bytes);
	json_num(&j, "kv_cache_bytes", r->kv_pool_bytes);
	json_int(&j, "kv_blocks", r->kv_blocks);
	json_num(&j, "kv_bytes_per_token", r->kv_token_bytes);
	json_num(&j, "kv_peak_fraction", r->kv_peak_frac);
	json_obj_end(&j);
	if (find)
		json_num(&j, "max_rate_per_s", rate);
	json_int(&j, "requests", r->requests);
	json_int(&j, "finished", r->finished);
	json_num(&j, "duration_s", r->duration_s);
	json_num(&j, "requests_per_s", r->req_per_s);
	json_num(&j, "output_tokens_per_s", r->out_tok_per_s);
	json_num(&j, "tokens_per_s", r->tok_per_s);
	json_num(&j, "output_tokens_per_s_per_gpu", r->gpus ? r->out_tok_per_s / r->gpus : 0);
	json_int(&j, "input_tokens", r->in_tokens);
	json_int(&j, "output_tokens", r->out_tokens);
	json_int(&j, "cached_tokens", r->cached_tokens);
	json_obj(&j, "slo");
	json_num(&j, "ttft_s", o->slo_ttft_s);
	json_num(&j, "tpot_s", o->slo_tpot_s);
	json_int(&j, "within", r->good);
	json_num(&j, "goodput_requests_per_s", r->good_per_s);
	json_obj_end(&j);
	dist_json(&j, "ttft", &r->ttft);
	dist_json(&j, "tpot", &r->tpot);
	dist_json(&j, "itl", &r->itl);
	dist_json(&j, "e2e", &r->e2e);
	dist_json(&j, "queue", &r->queue);
	json_obj(&j, "steps");
	json_int(&j, "count", r->steps);
	json_num(&j, "busy_s", r->busy_s);
	json_num(&j, "mean_tokens", r->steps ? r->batch_tokens_sum / (double)r->steps : 0);
	json_num(&j, "mean_sequences", r->steps ? r->batch_seqs_sum / (double)r->steps : 0);
	json_int(&j, "preemptions", r->preemptions);
	json_int(&j, "swaps", r->swaps);
	json_obj_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

/* opens an output (NULL path: none) */
static int open_out(const char *path, struct out_file *f, FILE **fp)
{
	char why[256];
	*fp = NULL;
	if (!path)
		return 0;
	if (!(*fp = out_open(path, f, why, sizeof why))) {
		fprintf(stderr, "sim serve: cannot write %s: %s\n", path, why);
		return SIM_EXIT_CANTCREAT;
	}
	return 0;
}

static int close_out(const char *path, struct out_file *f, int ok)
{
	char why[256];
	if (!path)
		return 0;
	if (!ok) {
		out_abort(f);
		return 0;
	}
	if (out_commit(f, why, sizeof why)) {
		fprintf(stderr, "sim serve: cannot write %s: %s\n", path, why);
		return SIM_EXIT_CANTCREAT;
	}
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	struct sv_args A;
	struct sv_options o;
	struct gen_config g;
	struct cli_common com = {0};
	int rc = configure(argc, argv, &A, &o, &g);
	if (rc)
		return rc;
	com.json = A.json;
	for (int i = 0; i < A.nsets; i++)
		com.sets[com.nsets++] = A.sets[i];
	char config_buf[PATH_MAX + 64];
	A.config = cli_config(A.config, config_buf, sizeof config_buf);
	const char *outs[2] = {A.csv, A.timeline}, *ins[3] = {A.config, o.requests_csv, o.lengths_csv};
	if ((rc = out_check_inputs("serve", outs, 2, ins, 3)))
		return rc;
	struct arch_chip *c = cli_load(A.config, &com, &rc);
	if (!c)
		return rc;
	char why[1024];
	int gpus = o.replicas * (int)(g.p.tp * g.p.pp);
	struct sv_model *m = sv_model_new(c, &g, gpus, why, sizeof why);
	if (!m) {
		fprintf(stderr, "sim serve: %s\n", why);
		arch_free(c);
		return SIM_EXIT_CONFIG;
	}
	struct out_file fc, ft;
	if ((rc = open_out(A.csv, &fc, &o.csv)) || (rc = open_out(A.timeline, &ft, &o.timeline))) {
		close_out(A.csv, &fc, 0);
		sv_model_free(m);
		arch_free(c);
		return rc;
	}
	o.csv_name = A.csv;
	o.timeline_name = A.timeline;
	o.progress = 1;
	struct sv_result r;
	double rate = 0;
	rc = A.find_rate ? sv_max_rate(m, &o, &rate, &r, why, sizeof why) : sv_run(m, &o, &r, why, sizeof why);
	if (rc)
		fprintf(stderr, "%s\n", why);
	if (A.find_rate && rate > 0) { /* the report is the run at the rate found */
		o.arrivals = SV_POISSON;
		o.rate = rate;
	}
	if (!rc && A.find_rate && rate <= 0 && o.csv) /* no run to record: the header alone */
		fputs(
		    "id,engine,arrival_s,input_len,output_len,cached_tokens,scheduled_s,first_token_s,finish_s,ttft_s,"
		    "tpot_s,e2e_s,max_itl_s,preemptions,within_slo\n",
		    o.csv);
	if (!rc && A.find_rate && rate <= 0 && o.timeline)
		fputs("{\"traceEvents\":[]}\n", o.timeline);
	int rc2 = close_out(A.csv, &fc, !rc);
	int rc3 = close_out(A.timeline, &ft, !rc && !rc2);
	if (!rc && (rc2 || rc3))
		rc = SIM_EXIT_CANTCREAT;
	if (!rc) {
		if (A.json)
			serve_json(c, A.config, &g, &o, &r, A.find_rate, rate);
		else
			serve_text(c, A.config, &g, &o, &r, A.find_rate, rate);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "sim serve: cannot write output\n");
			rc = SIM_EXIT_CANTCREAT;
		}
	}
	sv_model_free(m);
	arch_free(c);
	return rc;
}
