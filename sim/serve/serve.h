/*
 * serve.h -- serving: a stream of requests on replicas of a model, each
 * replica's engine scheduling them as vLLM's does (continuous batching under
 * a token budget, chunked prefill, a KV cache of fixed-size blocks with
 * admission and preemption), each engine step timed by the device model and
 * the collective planner (the models `sim run` uses), and the latencies
 * users measure (TTFT, TPOT, end-to-end) out. docs/serving.md is the user's
 * reference; docs/architecture.md places it.
 *
 *   requests   serve_src.c: Poisson arrivals, a burst at time 0, or a CSV of
 *              (arrival, prompt, output); lengths fixed, uniform, or sampled
 *              from a CSV of pairs (GSL random streams: deterministic)
 *   step time  serve_step.c: one engine step's ops from workloads/
 *              (gen_serve_step), memoized by shape
 *   scheduler  serve_sched.c: one replica's engine, step by step
 *   the run    serve.c: replicas (or prefill and decode pools), statistics,
 *              the rate search
 *
 * Replicas are independent once requests are dealt out (round robin, as a
 * load balancer in front of identical servers does), so each is simulated
 * alone, one after another: memory is the requests in flight, not the
 * stream (latency quantiles come from GSL histograms of 0.1% bins).
 */
#ifndef SIM_SERVE_H
#define SIM_SERVE_H

#include "arch.h"
#include "gen.h"

#include <stdio.h>

enum sv_arrivals { SV_POISSON, SV_BURST, SV_CSV };
enum sv_len_kind { SV_LEN_FIXED, SV_LEN_UNIFORM };
enum sv_preempt { SV_RECOMPUTE, SV_SWAP };

/* a token-length distribution: fixed lo, or uniform over lo..hi */
struct sv_len {
	enum sv_len_kind kind;
	long long lo, hi;
};

struct sv_options {
	enum sv_arrivals arrivals;
	double rate;        /* requests per second (SV_POISSON) */
	long long requests; /* requests in the stream (SV_POISSON, SV_BURST) */
	struct sv_len in, out;
	const char *lengths_csv;  /* pairs (input_len,output_len) sampled with replacement instead of in/out */
	const char *requests_csv; /* SV_CSV: arrival_s,input_len,output_len per line */
	unsigned long seed;
	/* the engine (vLLM's names) */
	long long max_num_seqs;       /* sequences in a step */
	long long max_batched_tokens; /* tokens in a step */
	long long max_model_len;      /* prompt + output limit (0: the model's context) */
	long long block_tokens;       /* KV cache block */
	int chunked_prefill;          /* 1: prefills split to the budget, mixed with decodes (vLLM V1); 0: whole
	                                 prompts, a step prefills or decodes (V0 default) */
	double mem_util;              /* fraction of device memory the engine may use */
	double kv_free_frac;          /* > 0: the KV cache is this fraction of the memory left after the weights and
	                                 the forward's activations (TensorRT-LLM's free_gpu_memory_fraction) instead */
	enum sv_preempt preempt;
	int guaranteed;    /* admit a request only when its whole KV (prompt + output) fits, and reserve it: never
	                      preempt (TensorRT-LLM's GUARANTEED_NO_EVICT); 0: blocks as needed (MAX_UTILIZATION, vLLM) */
	double prefix_hit; /* fraction of each prompt found in the prefix cache (0: caching off) */
	/* the fleet */
	int replicas;         /* model replicas, tp x pp devices each */
	int prefill_replicas; /* disaggregated: of the replicas, these prefill and the rest decode (0: none) */
	/* goodput limits, per request (0: none) */
	double slo_ttft_s, slo_tpot_s;
	int progress; /* progress lines on stderr (progress.h says when) */
	FILE *csv;    /* per-request rows (NULL: none) */
	FILE *timeline;
	const char *csv_name, *timeline_name; /* for error messages */
};
void sv_defaults(struct sv_options *o);

/* What `sim serve`'s argument list said besides the stream and the model. */
#define SV_MAX_SETS     16
#define SV_MAX_GEN_ARGS 256
struct sv_args {
	const char *config;
	const char *csv, *timeline; /* output paths (NULL: none) */
	const char *sets[SV_MAX_SETS];
	int nsets;
	int json, find_rate;
	int batched_given, policy_given,
	    kv_free_given;               /* --max-batched-tokens, --capacity-policy, --kv-free-fraction */
	char *gen_argv[SV_MAX_GEN_ARGS]; /* what goes to gen_parse_args */
	int gen_argc;
};

/*
 * Parses `sim serve CONFIG MODEL [options]` (argv[0] is the command name):
 * the model and its layout with gen_parse_args (--mode infer), the rest
 * here. Returns 0, or -1 with the one-line reason in why; *unknown then
 * names an option nobody knows (for a did-you-mean), else NULL.
 * sim/serve/serve_args.c.
 */
int sv_parse_args(int argc, char **argv, struct sv_args *A, struct sv_options *o, struct gen_config *g,
                  const char **unknown, char *why, size_t whylen);

/* mean, quantiles (to 0.1%) and maximum of one latency (s) over finished requests */
struct sv_dist {
	double mean, p50, p90, p99, max;
	long long n;
};

struct sv_result {
	int gpus, tp, pp, replicas, prefill_replicas;
	long long requests, finished, good; /* good: within both SLO limits */
	long long in_tokens, out_tokens, cached_tokens;
	double t_first_s, t_last_s, duration_s; /* first arrival, last finish */
	double req_per_s, out_tok_per_s, tok_per_s, good_per_s;
	struct sv_dist ttft, tpot, itl, e2e, queue;
	long long steps, preemptions, swaps;
	double busy_s;           /* engines busy, summed over replicas */
	double batch_tokens_sum; /* tokens of all steps (mean tokens per step = / steps) */
	double batch_seqs_sum;
	/* memory of one rank */
	double weights_bytes, act_bytes, kv_pool_bytes, kv_token_bytes, capacity_bytes;
	long long kv_blocks;
	double kv_peak_frac; /* highest fraction of the pool in use on any replica */
	double kv_xfer_s;    /* disaggregated: mean KV transfer per request */
	long dm_hits, dm_misses, memo_hits, memo_misses;
	double wall_s;
};

/* The step-time model of one replica (serve_step.c), kept across runs (the
   rate search reuses every shape it has timed). */
struct sv_model;
/* Builds it for chip c and model g (g->mode GEN_INFER; tp, pp; dp 1).
   NULL with the reason in why. */
struct sv_model *sv_model_new(const struct arch_chip *c, const struct gen_config *g, int gpus, char *why,
                              size_t whylen);
void sv_model_free(struct sv_model *m);

/*
 * Serves the stream of o on the replicas of model m. Returns 0, or an exit
 * code with one line in why: SIM_EXIT_NOFIT when no KV cache fits beside the
 * weights (or a request's whole context does not fit the cache),
 * SIM_EXIT_TRACE for a bad request or lengths CSV ("FILE:LINE: ..."),
 * SIM_EXIT_USAGE for a request longer than max_model_len, SIM_EXIT_CANTCREAT
 * when an output cannot be written, SIM_EXIT_INTERNAL out of memory.
 */
int sv_run(struct sv_model *m, const struct sv_options *o, struct sv_result *r, char *why, size_t whylen);

/*
 * The highest Poisson rate (requests/s) whose run of o->requests requests
 * keeps the p99 TTFT and p99 TPOT within o's limits (bisection to 1%
 * between 0 and the offline throughput). *rate is 0 when even a trickle
 * misses them; r gets the run at *rate.
 */
int sv_max_rate(struct sv_model *m, const struct sv_options *o, double *rate, struct sv_result *r, char *why,
                size_t whylen);

#endif
