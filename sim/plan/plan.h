/*
 * plan.h -- the search of a training run's parallel layout (`sim plan`).
 *
 * Given a chip, a model and sim gen's options for the run (sequence, global
 * batch, dtype ...) and a number of devices, the planner lists every layout
 * sim gen can lay out on them: tensor x pipeline x data parallelism (and
 * expert parallelism for a model with experts, context parallelism when
 * asked), micro-batch, recompute and ZeRO stage, sequence parallelism on
 * whenever tp > 1 (as Megatron-Core runs tensor parallelism). Each is
 * checked by gen_check, then for memory with sim gen's own estimate
 * (gen_stage_memory, the figure `sim run` holds the device to): a layout
 * that does not fit is kept with what it would need and is not replayed.
 * Of the layouts that differ only in their recompute, the lightest that
 * fits is replayed (recompute only adds work); the others are counted.
 * Each replayed layout's trace is generated and replayed in a child
 * process of its own (SimGrid runs one simulation per process;
 * sim/base/procpool.c), as `sim run` would, and the report's figures come
 * back: step time, tokens/s, MFU, exposed communication per communicator.
 *
 * Invariants: pl_enumerate lists each layout once, in a fixed order (tp,
 * pp, cp, ep, micro-batch, ZeRO, recompute ascending), so the same inputs
 * give the same plan; after pl_rank the fitting, replayed layouts come
 * first by step time (ties: less memory, then the enumeration order), then
 * the fitting ones not replayed, then those that do not fit by memory needed.
 */
#ifndef SIM_PLAN_H
#define SIM_PLAN_H

#include "arch.h"
#include "gen.h"
#include "serve.h"

#include <stddef.h>
#include <stdio.h>

#define PL_MAX_CHOICES 16

/* The values a layout dimension may take; n = 0: the planner's default. */
struct pl_list {
	long long v[PL_MAX_CHOICES];
	int n;
};

/* What the search may vary. */
struct pl_space {
	struct pl_list tp, pp, cp, ep, mb; /* cp: 1 unless asked (it pays only on long sequences) */
	struct pl_list max_seqs;           /* serving: the engine's max_num_seqs values (n 0: the stream options') */
	unsigned rc_mask;                  /* bit (1 << enum gen_recompute); 0: all three */
	unsigned zero_mask;                /* bit (1 << ZeRO stage); 0: 0 and 1 */
	int all_recompute;                 /* replay every recompute that fits, not only the lightest */
	/* the pipeline schedule of the layouts with pp > 1 (a single stage has
	   none: 1F1B, one chunk): sched_set 0 keeps sim gen's default */
	int sched_set;
	enum gen_sched sched;
	long long vstages; /* chunks per stage with interleaved (0: sim gen's default, 2) */
	/* how the layers split over the stages of the layouts with pp > 1 (sim gen's
	   --decoder-first/last-pipeline-num-layers, --account-for-embedding/loss-in-pipeline-split) */
	long long first_layers, last_layers;
	int split_embedding, split_loss;
	long long ranks_per_node; /* ranks placed on each node (sim run --ranks-per-node); 0: all its devices */
};

/* communicators whose exposed time a plan reports */
enum pl_comm { PL_TP, PL_PP, PL_CP, PL_DP, PL_EP, PL_OTHER, PL_NCOMM };
const char *pl_comm_name(enum pl_comm k); /* "tp" "pp" "cp" "dp" "ep" "other" */

enum pl_state {
	PL_REPLAYED,  /* fits and was replayed (rc says how it went) */
	PL_DOMINATED, /* fits, but a lighter recompute of it fits too: not replayed */
	PL_NOFIT,     /* needs more than the device has: not replayed */
};

/* One layout and, once replayed, what the replay said. */
struct pl_point {
	struct gen_config c;
	enum pl_state state;
	long order;            /* enumeration index */
	double mem_bytes;      /* one device of the stage that needs most (gen_stage_memory) */
	int mem_stage;         /* that stage */
	struct gen_memory mem; /* its categories */
	/* the replay (state PL_REPLAYED) */
	int rc;                     /* 0, or the replay's exit code (why says what happened) */
	double time_s;              /* step time */
	double tokens_per_s, mfu;   /* MFU: model FLOPs / (time x devices x peak), 0..1 */
	double compute_s;           /* mean per rank */
	double exposed_s[PL_NCOMM]; /* mean per rank, not overlapped by compute */
	double idle_s;              /* mean per rank: neither compute nor exposed transfers (bubbles, waits) */
	double wall_s;              /* the replay's wall-clock time */
	char why[240];
};

struct pl_plan {
	struct pl_point *pt;
	long n;
	long counts[3]; /* per enum pl_state */
	double capacity_bytes;
	long long ranks_per_node; /* the space's: how the replays place ranks on nodes */
};

/*
 * Lists the layouts of `gpus` devices of chip c for the run `base` (sim
 * gen's parsed options: model, sequence, global batch, dtype ...; its
 * layout fields are what the search sets). Returns 0, or -1 with one line
 * in why: no layout at all (why names the constraint that removed the
 * last), a bad list value, out of memory.
 */
int pl_enumerate(const struct arch_chip *c, const struct gen_config *base, long long gpus, const struct pl_space *sp,
                 struct pl_plan *p, char *why, size_t len);

/* The ranks of one node of chip c: ranks_per_node when it is set (> 0), else its devices (its system section; 8
   without one): tensor parallelism stays within it. A run of more devices that are not whole nodes uses the last
   node in part (as Llama 3.1 405B on 256 GPUs of NVL72 racks of 72 does). */
long long pl_node_devices(const struct arch_chip *c, long long ranks_per_node);

/* progress callback: layouts replayed so far of n */
typedef void (*pl_progress_fn)(long done, long n, void *ctx);

/*
 * Replays the PL_REPLAYED points of p on chip c, `jobs` child processes at
 * once: the k-th of them (in p's order) when k is `part` modulo `parts`
 * (every one with part 0 of 1; the ranks of an MPI job take one part each).
 * A replay that fails leaves its point's rc and why set (the plan goes on).
 * Returns 0, or -1 with why set when no process can be started.
 */
int pl_replay(const struct arch_chip *c, struct pl_plan *p, int jobs, int part, int parts, pl_progress_fn progress,
              void *ctx, char *why, size_t len);

/* A replayed point's results as one fixed-size record, to move between processes (a replay's child, MPI ranks). */
struct pl_result {
	int rc;
	double time_s, tokens_per_s, mfu, compute_s, exposed_s[PL_NCOMM], idle_s, wall_s;
	char why[240];
};
void pl_result_get(const struct pl_point *pt, struct pl_result *r);
void pl_result_put(struct pl_point *pt, const struct pl_result *r);

/*
 * What a replayed point loses most to beyond compute: the communicator
 * whose exposed time is the largest (enum pl_comm), or PL_NCOMM for the
 * idle time (pipeline bubbles, waits for peers) when that is larger; its
 * seconds in *s. The parts add up to the step: compute + exposed + idle.
 */
int pl_bottleneck(const struct pl_point *pt, double *s);
const char *pl_bottleneck_name(int k); /* pl_comm_name, or "idle" for PL_NCOMM */

/* Orders the points as the invariants above say. */
void pl_rank(struct pl_plan *p);

/* "tp 8 pp 4 dp 8 mb 1 selective zero-1" (cp and ep when > 1) */
void pl_layout_text(const struct gen_config *c, char *buf, size_t len);

void pl_free(struct pl_plan *p);

/*
 * Serving (`sim plan --mode serve`): each replica layout tp x pp of `gpus`
 * devices (replicas = gpus / (tp x pp), sim gen's checks in --mode infer),
 * with each max_num_seqs of sp (or o's), is served by sim/serve/ with the
 * stream and engine of o, and the highest
 * Poisson rate whose p99 TTFT and TPOT stay within o's limits is searched
 * (sv_max_rate); layouts are ranked by that rate, highest first (ties:
 * fewer devices a replica, then the enumeration order), the ones whose
 * weights leave no KV cache last.
 */
struct pl_serve_point {
	struct gen_config c; /* tp, pp of one replica */
	int replicas;
	long long max_seqs; /* the engine's max_num_seqs */
	long order;
	int rc;               /* 0; SIM_EXIT_NOFIT: no KV cache fits beside the weights; else the failure */
	double rate;          /* requests/s of the fleet within the limits (0: none) */
	double out_tok_per_s; /* at that rate, the fleet */
	double ttft_p99_s, tpot_p99_s;
	double weights_bytes, kv_pool_bytes; /* one device */
	double wall_s;
	char why[240];
};

struct pl_serve_plan {
	struct pl_serve_point *pt;
	long n;
};

int pl_serve(const struct arch_chip *c, const struct gen_config *base, const struct sv_options *o, long long gpus,
             const struct pl_space *sp, int jobs, pl_progress_fn progress, void *ctx, struct pl_serve_plan *p,
             char *why, size_t len);
void pl_serve_free(struct pl_serve_plan *p);

/*
 * Pareto plots (sim/plan/plan_out.c; `sim plan --plot`): each replayed
 * layout's memory per device (x) against its step time (y), the front (the
 * layouts none is faster than with as little memory) labelled, the device's
 * memory dashed; a serving plan's rate within the limits (y) against the
 * devices a replica takes (x), the front being the layouts no one of as few
 * devices outserves. NULL when out of memory.
 */
struct plot;
struct plot *pl_plot(const struct pl_plan *p, const char *title);
struct plot *pl_serve_plot(const struct pl_serve_plan *p, const char *title);

/*
 * A plan in shards (`sim plan --shard I/N`, joined by `sim merge`): shard I
 * of N holds the results of the replays I, I + N, ... (the k-th layout
 * replayed in enumeration order) with the plan's arguments, so that the
 * merge lists the layouts again, puts the results in and ranks them as one
 * process would. The format is in plan_out.c.
 */
#define PL_SHARD_LINE "# sim plan shard " /* the first line's start */
#define PL_MAX_SHARDS 100000
#define PL_MAX_ARGS   256

/* Writes the replays of part `part` of `parts` of p (replayed, not yet ranked) under the plan's ID and arguments. */
void pl_shard_write(FILE *f, const struct pl_plan *p, long part, long parts, unsigned long long id, char *const *args,
                    int nargs);

struct pl_shard {
	const char *path;
	long i, n, replays, line;
	unsigned long long id;
	char *args[PL_MAX_ARGS];
	int nargs;
	struct pl_result *r; /* its rows: replays i, i + n, ... */
	long nr;
	char why[512]; /* what was wrong, a line */
};

/* Reads s->path into s (zeroed but for path). 0, or an exit code with "FILE:LINE: what" in s->why. */
int pl_shard_read(struct pl_shard *s);
/* The n shards (read) are all the shards of one plan, each once; by[i] (n NULL slots of sh[0].n) is shard i. 0,
   or an exit code with the line in the why of the shard it names (a shard missing: sh[0].why). */
int pl_shard_check(struct pl_shard *sh, int n, struct pl_shard **by);
/* The shards' results into the replayed points of p (listed from the shards' arguments: as many replays). */
void pl_shard_put(struct pl_plan *p, struct pl_shard *const *by);
void pl_shard_free(struct pl_shard *s);

#endif
