/*
 * serve_args.c -- `sim serve`'s argument list into a checked sv_options and
 * the model's gen_config (shared by the command and the validation suite,
 * as gen_parse_args is for `sim gen`). The model and its tensor/pipeline
 * layout are sim gen's options, passed to gen_parse_args with --mode infer;
 * the stream, engine, fleet and output options are parsed here.
 */
#include "serve.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* sim gen's options that have no meaning for a stream */
static const char *const not_serve[] = {"--mode",
                                        "--batch",
                                        "--dp",
                                        "--ep",
                                        "--moe-dispatcher",
                                        "--moe-imbalance",
                                        "--moe-capacity-factor",
                                        "--micro-batch",
                                        "--global-batch",
                                        "--paged",
                                        "--zero",
                                        "--schedule",
                                        "--recompute",
                                        "--launch",
                                        "--same-prompt",
                                        "-o",
                                        NULL};

struct ctx {
	char *why;
	size_t len;
};

static int fail(struct ctx *x, const char *a, const char *v, const char *expected)
{
	snprintf(x->why, x->len, "%s %s: %s", a, v, expected);
	return -1;
}

static int num(struct ctx *x, const char *a, const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (!*v || *end || errno || !(d >= lo && d <= hi)) {
		char msg[128];
		snprintf(msg, sizeof msg, "expected a number from %.9g to %.9g", lo, hi);
		return fail(x, a, v, msg);
	}
	*out = d;
	return 0;
}

static int integer(struct ctx *x, const char *a, const char *v, long long lo, long long hi, long long *out)
{
	double d;
	if (num(x, a, v, (double)lo, (double)hi, &d))
		return -1;
	if (d != floor(d))
		return fail(x, a, v, "expected a whole number");
	*out = (long long)d;
	return 0;
}

static int length(struct ctx *x, const char *a, const char *v, struct sv_len *l)
{
	const char *colon = strchr(v, ':');
	char lo[32];
	if (!colon) {
		l->kind = SV_LEN_FIXED;
		int rc = integer(x, a, v, 1, 10000000, &l->lo);
		l->hi = l->lo;
		return rc;
	}
	if ((size_t)(colon - v) >= sizeof lo)
		return fail(x, a, v, "expected N or LO:HI");
	snprintf(lo, sizeof lo, "%.*s", (int)(colon - v), v);
	l->kind = SV_LEN_UNIFORM;
	if (integer(x, a, lo, 1, 10000000, &l->lo) || integer(x, a, colon + 1, 1, 10000000, &l->hi))
		return -1;
	if (l->hi < l->lo)
		return fail(x, a, v, "LO must not exceed HI");
	return 0;
}

static int seconds(struct ctx *x, const char *a, const char *v, double *out)
{
	char why[256];
	if (units_parse(v, UNIT_TIME, out, why, sizeof why) || !(*out > 0))
		return fail(x, a, v, "expected a positive time with a unit (500ms, 2s)");
	return 0;
}

static const char *const flags[] = {"--burst", "--no-chunked-prefill", "--find-rate", "--json", NULL};
static const char *const valued[] = {"--rate",
                                     "--requests",
                                     "--requests-csv",
                                     "--input-len",
                                     "--output-len",
                                     "--lengths",
                                     "--seed",
                                     "--max-num-seqs",
                                     "--max-batched-tokens",
                                     "--max-model-len",
                                     "--block-size",
                                     "--gpu-memory-utilization",
                                     "--kv-free-fraction",
                                     "--preempt",
                                     "--capacity-policy",
                                     "--prefix-hit",
                                     "--replicas",
                                     "--prefill-replicas",
                                     "--slo-ttft",
                                     "--slo-tpot",
                                     "--csv",
                                     "--timeline",
                                     "--set",
                                     NULL};

static int flag(struct sv_args *A, struct sv_options *o, int k)
{
	switch (k) {
	case 0: o->arrivals = SV_BURST; break;
	case 1: o->chunked_prefill = 0; break;
	case 2: A->find_rate = 1; break;
	default: A->json = 1; break;
	}
	return 1;
}

/* a serve option with its value v */
static int valued_opt(struct ctx *x, struct sv_args *A, struct sv_options *o, const char *a, const char *v)
{
	long long n;
	int rc = 0;
	if (!strcmp(a, "--rate")) {
		rc = num(x, a, v, 1e-9, 1e9, &o->rate);
		o->arrivals = SV_POISSON;
	} else if (!strcmp(a, "--requests"))
		rc = integer(x, a, v, 1, 100000000, &o->requests);
	else if (!strcmp(a, "--requests-csv")) {
		o->requests_csv = v;
		o->arrivals = SV_CSV;
	} else if (!strcmp(a, "--input-len"))
		rc = length(x, a, v, &o->in);
	else if (!strcmp(a, "--output-len"))
		rc = length(x, a, v, &o->out);
	else if (!strcmp(a, "--lengths"))
		o->lengths_csv = v;
	else if (!strcmp(a, "--seed")) {
		rc = integer(x, a, v, 0, 4294967295LL, &n);
		o->seed = (unsigned long)n;
	} else if (!strcmp(a, "--max-num-seqs"))
		rc = integer(x, a, v, 1, 65536, &o->max_num_seqs);
	else if (!strcmp(a, "--max-batched-tokens")) {
		rc = integer(x, a, v, 1, 1000000, &o->max_batched_tokens);
		A->batched_given = 1;
	} else if (!strcmp(a, "--max-model-len"))
		rc = integer(x, a, v, 2, 10000000, &o->max_model_len);
	else if (!strcmp(a, "--block-size"))
		rc = integer(x, a, v, 1, 4096, &o->block_tokens);
	else if (!strcmp(a, "--gpu-memory-utilization"))
		rc = num(x, a, v, 0.01, 1, &o->mem_util);
	else if (!strcmp(a, "--kv-free-fraction")) {
		rc = num(x, a, v, 0.01, 1, &o->kv_free_frac);
		A->kv_free_given = 1;
	} else if (!strcmp(a, "--preempt")) {
		if (strcmp(v, "recompute") && strcmp(v, "swap"))
			return fail(x, a, v, "expected recompute or swap");
		o->preempt = !strcmp(v, "swap") ? SV_SWAP : SV_RECOMPUTE;
	} else if (!strcmp(a, "--capacity-policy")) {
		if (strcmp(v, "max-utilization") && strcmp(v, "guaranteed-no-evict"))
			return fail(x, a, v, "expected max-utilization or guaranteed-no-evict");
		o->guaranteed = !strcmp(v, "guaranteed-no-evict");
		A->policy_given = 1;
	} else if (!strcmp(a, "--prefix-hit"))
		rc = num(x, a, v, 0, 1, &o->prefix_hit);
	else if (!strcmp(a, "--replicas")) {
		rc = integer(x, a, v, 1, 65536, &n);
		o->replicas = (int)n;
	} else if (!strcmp(a, "--prefill-replicas")) {
		rc = integer(x, a, v, 1, 65535, &n);
		o->prefill_replicas = (int)n;
	} else if (!strcmp(a, "--slo-ttft"))
		rc = seconds(x, a, v, &o->slo_ttft_s);
	else if (!strcmp(a, "--slo-tpot"))
		rc = seconds(x, a, v, &o->slo_tpot_s);
	else if (!strcmp(a, "--csv"))
		A->csv = v;
	else if (!strcmp(a, "--timeline"))
		A->timeline = v;
	else {
		if (A->nsets == SV_MAX_SETS) {
			snprintf(x->why, x->len, "more than %d --set options", SV_MAX_SETS);
			return -1;
		}
		A->sets[A->nsets++] = v;
	}
	return rc;
}

/* one serve option at argv[*i]: 1 consumed, 0 not ours, -1 an error */
static int serve_opt(struct ctx *x, struct sv_args *A, struct sv_options *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *eq = strchr(a, '=');
	char name[48];
	size_t nl = eq && a[0] == '-' ? (size_t)(eq - a) : strlen(a);
	if (nl >= sizeof name)
		return 0;
	snprintf(name, sizeof name, "%.*s", (int)nl, a);
	for (int k = 0; flags[k]; k++)
		if (!strcmp(name, flags[k])) {
			if (eq && a[0] == '-')
				return fail(x, a, "", "takes no value"), -1;
			return flag(A, o, k);
		}
	for (int k = 0; valued[k]; k++)
		if (!strcmp(name, valued[k])) {
			const char *v = eq && a[0] == '-' ? eq + 1 : NULL;
			if (!v) {
				if (*i + 1 >= argc) {
					snprintf(x->why, x->len, "%s needs a value", a);
					return -1;
				}
				v = argv[++*i];
			}
			return valued_opt(x, A, o, name, v) ? -1 : 1;
		}
	return 0;
}

int sv_parse_args(int argc, char **argv, struct sv_args *A, struct sv_options *o, struct gen_config *g,
                  const char **unknown, char *why, size_t whylen)
{
	struct ctx x = {why, whylen};
	memset(A, 0, sizeof *A);
	sv_defaults(o);
	*unknown = NULL;
	A->gen_argv[A->gen_argc++] = "gen";
	for (int i = 1; i < argc; i++) {
		int rc = serve_opt(&x, A, o, argc, argv, &i);
		if (rc < 0)
			return -1;
		if (rc)
			continue;
		const char *a = argv[i];
		for (int k = 0; not_serve[k]; k++)
			if (!strcmp(a, not_serve[k]) ||
			    (!strncmp(a, not_serve[k], strlen(not_serve[k])) && a[strlen(not_serve[k])] == '=')) {
				snprintf(
				    why, whylen,
				    "%s is not a serve option (the engine forms its batches; a fleet is --replicas; "
				    "the KV cache is always paged; its steps are launched eager; the outputs are --csv "
				    "and --timeline)",
				    a);
				return -1;
			}
		if (a[0] != '-' && !A->config) {
			A->config = a;
			continue;
		}
		if (A->gen_argc >= SV_MAX_GEN_ARGS - 4) {
			snprintf(why, whylen, "too many arguments");
			return -1;
		}
		A->gen_argv[A->gen_argc++] = argv[i];
	}
	if (!A->config || A->gen_argc < 2) {
		snprintf(why, whylen, "expected CONFIG MODEL");
		return -1;
	}
	A->gen_argv[A->gen_argc++] = "--mode";
	A->gen_argv[A->gen_argc++] = "infer";
	A->gen_argv[A->gen_argc++] = "--paged";
	A->gen_argv[A->gen_argc] = NULL;
	struct gen_args ga;
	if (gen_parse_args(A->gen_argc, A->gen_argv, g, &ga, why, whylen)) {
		for (int i = 2; i < A->gen_argc; i++) /* the word gen_parse_args named */
			if (A->gen_argv[i][0] == '-' && strstr(why, "unknown option '") == why &&
			    !strncmp(why + 16, A->gen_argv[i], strlen(A->gen_argv[i])) &&
			    why[16 + strlen(A->gen_argv[i])] == '\'')
				*unknown = A->gen_argv[i];
		return -1;
	}
	/* TensorRT-LLM's executor (--engine trtllm): its KvCacheConfig's free_gpu_memory_fraction, 0.9, and its
	   scheduler's default capacity policy, GUARANTEED_NO_EVICT, unless given */
	if (g->inf.engine == GEN_ENGINE_TRTLLM) {
		if (!A->kv_free_given)
			o->kv_free_frac = 0.9;
		if (!A->policy_given)
			o->guaranteed = 1;
	}
	/* vLLM V0's scheduler without chunked prefill (vllm/config.py, SchedulerConfig): max_num_batched_tokens
	   defaults to max(max_model_len, 2048) and may not be below max_model_len, since a longer prompt, prefilled
	   whole, could never be scheduled (vLLM raises a ValueError) */
	long long ctx = o->max_model_len ? o->max_model_len : g->m.seq;
	if (!o->chunked_prefill && !A->batched_given)
		o->max_batched_tokens = ctx > 2048 ? ctx : 2048;
	else if (!o->chunked_prefill && o->max_batched_tokens < ctx) {
		snprintf(
		    why, whylen,
		    "--max-batched-tokens %lld is below the context (%s %lld tokens) with --no-chunked-prefill: a "
		    "longer prompt could never be scheduled (vLLM refuses it too); raise it, lower --max-model-len "
		    "or leave chunked prefill on",
		    o->max_batched_tokens, o->max_model_len ? "--max-model-len" : "the model's", ctx);
		return -1;
	}
	if (o->prefill_replicas && o->prefill_replicas >= o->replicas) {
		snprintf(why, whylen, "--prefill-replicas %d: must be fewer than --replicas %d (the rest decode)",
		         o->prefill_replicas, o->replicas);
		return -1;
	}
	if (A->find_rate && o->slo_ttft_s <= 0 && o->slo_tpot_s <= 0) {
		snprintf(why, whylen, "--find-rate needs --slo-ttft or --slo-tpot");
		return -1;
	}
	if (A->find_rate && o->arrivals == SV_CSV) {
		snprintf(why, whylen, "--find-rate searches a Poisson rate; it does not take --requests-csv");
		return -1;
	}
	if (o->arrivals == SV_CSV && o->lengths_csv) {
		snprintf(why, whylen, "--lengths: the request CSV gives every request's lengths");
		return -1;
	}
	return 0;
}
