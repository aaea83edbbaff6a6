/*
 * serve_int.h -- private to sim/serve/: the request source, the step-time
 * model's interface to the scheduler, one request's state.
 */
#ifndef SIM_SERVE_INT_H
#define SIM_SERVE_INT_H

#include "coll.h"
#include "model.h"
#include "serve.h"

#include <gsl/gsl_histogram.h>
#include <gsl/gsl_rng.h>

/* ---- requests (serve_src.c) ---------------------------------------------- */

struct sv_req {
	long long id;
	double arrival_s;
	double avail_s; /* when this engine may queue it: its arrival, or its KV's at a decode replica */
	long long in_len, out_len;
	/* scheduler state */
	long long computed;  /* tokens whose KV is in the cache (prompt, then generated) */
	long long generated; /* output tokens produced */
	long long blocks;    /* KV blocks held */
	long long cached;    /* prompt tokens found in the prefix cache */
	int swapped;         /* preempted with its KV on the host */
	int preemptions;
	int replica;
	double sched_s, first_s, last_s; /* first scheduled, first token, last token (-1: not yet) */
	double itl_max_s;
	struct sv_req *next; /* queue link */
};

/* A stream of requests in arrival order, dealt round robin: replica `pick`
   of `of` sees every of-th request starting at pick (of 1: all). */
struct sv_src {
	const struct sv_options *o;
	gsl_rng *arr, *len; /* arrivals and lengths draw from separate streams */
	FILE *csv;          /* SV_CSV */
	long line;
	int data;    /* a line past the comments was read (a header is only the first) */
	long long n; /* requests produced so far (all replicas) */
	double t;    /* last arrival */
	long long (*pairs)[2];
	long npairs;
	int pick, of;
};
int sv_src_open(struct sv_src *s, const struct sv_options *o, int pick, int of, char *why, size_t whylen);
/* The next request of this replica into *q (fields past out_len zeroed):
   1, 0 at the end of the stream, or -exit code with why set. */
int sv_src_next(struct sv_src *s, struct sv_req *q, long long max_len, char *why, size_t whylen);
void sv_src_close(struct sv_src *s);

/* ---- the step-time model (serve_step.c) ---------------------------------- */

/* What one engine step computes: decode tokens (one per running sequence
   past its prompt) and prefill chunks, summed as the step's attention sees
   them. */
struct sv_shape {
	long long tokens;   /* all new tokens */
	long long sampled;  /* sequences that produce a token this step */
	long long decodes;  /* sequences decoding one token */
	double decode_ctx;  /* their keys (context after the new token), summed */
	double decode_win;  /* the keys a windowed layer reads of them, min(context, window), summed */
	long long prefills; /* sequences prefilling a chunk */
	double chunk_sum;   /* their new tokens, summed */
	double prior_sum;   /* their keys before the chunk, summed */
};

/* The time of one step on the replica (all pipeline stages in turn, the
   activations passed between them), s; -1 with why set on a model error. */
double sv_step_time(struct sv_model *m, const struct sv_shape *sh, char *why, size_t whylen);
/* The slowest stage's time of that step (pipelined virtual engines) */
double sv_stage_max(struct sv_model *m, const struct sv_shape *sh, char *why, size_t whylen);

/* what the scheduler needs to know of the replica */
struct sv_geom {
	int tp, pp;
	double kv_token_bytes;  /* KV of one token on one rank (the stage with the most layers) */
	double weights_bytes;   /* one rank */
	double act_bytes;       /* activations and workspace of a max_batched_tokens step, one rank */
	double capacity_bytes;  /* device memory */
	double host_bw;         /* device <-> host, B/s (swap) */
	double act_token_bytes; /* activation one token passes between stages */
	long long window;       /* the keys a windowed layer's query sees (0: no windowed layer) */
};
void sv_model_geom(const struct sv_model *m, long long max_batched_tokens, struct sv_geom *g);
/* KV transfer of one request's n tokens from the prefill replica `src` to
   decode replica `dst` (ranks of the fleet), s */
double sv_kv_transfer(const struct sv_model *m, int src, int dst, double bytes);
void sv_model_stats(const struct sv_model *m, long *dm_hits, long *dm_misses, long *hits, long *misses);
/* moving bytes of one rank's KV between device and host memory (swap), s */
double sv_swap_time(struct sv_model *m, double bytes);
const struct gen_config *sv_model_gen(const struct sv_model *m);
const struct arch_chip *sv_model_chip(const struct sv_model *m);

/* ---- one replica's engine (serve_sched.c) -------------------------------- */

/* Statistics the engines add to (serve.c): each latency in a GSL histogram
   of log-spaced bins 0.1% wide (constant memory, quantiles to 0.1%), and
   the per-request outputs. */
struct sv_q {
	gsl_histogram *h;
	double sum, min, max;
	long long n;
};
struct sv_stats {
	const struct sv_options *o;
	struct sv_q ttft, tpot, itl, e2e, queue;
	long long finished, good, in_tokens, out_tokens, cached;
	double t_first, t_last;
	long long tl_events; /* timeline events written */
	int write_err;
};
/* a histogram's bins (0: ok, -1 out of memory), its release, its summary */
int sv_q_init(struct sv_q *q);
void sv_q_free(struct sv_q *q);
void sv_q_get(struct sv_q *q, struct sv_dist *d);
void sv_q_add(struct sv_q *q, double x);
/* a finished request: its latencies, its CSV row and timeline slices */
void sv_stats_request(struct sv_stats *st, const struct sv_req *q);
/* the separator before the timeline's next event (none before the first) */
void sv_stats_sep(struct sv_stats *st);
/* one engine step on the timeline */
void sv_stats_step(struct sv_stats *st, int replica, double t0, double dt, const struct sv_shape *sh);

struct sv_engine_in {
	struct sv_model *m;
	const struct sv_options *o;
	struct sv_geom g;
	long long blocks;     /* KV blocks of the replica */
	int replica;          /* index in the fleet */
	int role;             /* 0 both, 1 prefill only, 2 decode only */
	struct sv_src *src;   /* arrivals (role 0, 1) */
	struct sv_req *ready; /* role 2: requests whose KV arrives at their arrival_s, in that order */
	struct sv_stats *st;
	long long max_len;
	/* role 1: requests whose prefill ended go here with arrival_s = their KV's arrival at a decode replica */
	int (*handoff)(void *ctx, struct sv_req *q);
	void *ctx;
};
int sv_engine_run(const struct sv_engine_in *in, struct sv_result *r, char *why, size_t whylen);

#endif
