/*
 * replay.h -- replays a trace on a cluster with SimGrid as the
 * discrete-event engine, and collects where the time went.
 *
 * Per rank: a host actor issues the rank's ops in order (the CPU launching
 * work; `delay` blocks it), and one actor per stream executes them in
 * order, waiting for after= dependencies. Device ops take the device
 * model's time (memoized by op text); consecutive device ops a stream holds
 * are merged into one SimGrid sleep. A collective starts when every member
 * has arrived; its latency is the protocol model's and its bandwidth phases
 * run as SimGrid parallel tasks, so concurrent transfers share links.
 */
#ifndef SIM_REPLAY_H
#define SIM_REPLAY_H

#include "arch.h"
#include "coll.h"
#include "trace.h"

#include <stdio.h>

/* One executed op on a rank's stream. */
struct rp_span {
	double t0, t1; /* start (after dependencies and peers), end; seconds */
	double arrive; /* coll/send/recv: when this rank reached it (t0 - arrive = waiting for peers) */
	double flops;  /* useful work */
	double bytes;  /* device op: DRAM bytes; coll/p2p: bus bytes this rank moved */
	long pred;     /* span that enabled the start (critical path), -1 = none */
	int rank;
	int line;
	int text; /* index into rp_result.texts: canonical op text */
	short stream;
	signed char kind;  /* enum tr_kind */
	signed char bound; /* device op: enum dm_bound; else -1 */
	short mark;        /* region (tr_mark_name), -1 before the first mark */
	signed char algo;  /* coll: the algorithm chosen (coll_algo_name), -1 = none */
	signed char proto; /* coll: enum coll_proto */
};

struct rp_options {
	double jitter;      /* sigma of a lognormal factor on device-op times; 0 = off */
	unsigned long seed; /* GSL random stream seed (with jitter) */
	int progress;       /* print progress on stderr for long runs */
	int no_fold;        /* replay every rank even where the trace is symmetric */
	int no_memo;        /* run every collective on the engine, even on links nothing else uses */
	double max_ops;     /* most ops the replayed ranks may run together (0: RP_MAX_OPS) */
	double max_actors;  /* most SimGrid actors the replay may need (0: RP_MAX_ACTORS) */
};

/* The default budget of a replay: ops of all replayed ranks together (a
   bound computed before anything runs, tr_ops_per_rank x representatives).
   Each op keeps a span of about 72 bytes, so 5e7 ops are about 3.6 GB; the
   GPT-3 step on 1024 ranks replays about 0.75 million (16 representatives
   of at most 47 thousand), a Llama-2 70B batch decoding 256 tokens 0.27
   million. */
#define RP_MAX_OPS 5e7

/* The default bound on SimGrid actors (one per replayed rank, one per
   stream of a rank with several, workers of large collectives), computed
   before anything runs: each holds a 64 KiB stack (virtual memory, touched
   as used) and about 10 KiB of the engine's and the replay's state. A
   LLaMA-3 405B step on 16384 ranks without folding needs about 49 k. */
#define RP_MAX_ACTORS 1e6

/* A rank's device memory (the trace's `memory` statements) at its peak. */
struct rp_mem {
	double total;
	double cat[MEM_COUNT];
	int line; /* the statement that set the peak, 0 = none */
};

struct rp_result {
	double time_s; /* step time: the last op's end */
	int ranks;
	struct topo topo;
	long nspans;
	struct rp_span *spans;
	int ntexts;
	char **texts;
	long events;        /* ops replayed, all ranks */
	long sg_activities; /* SimGrid sleeps and parallel tasks */
	double wall_s;      /* replay wall-clock time */
	int dtype;          /* dominant dtype of the device ops (by FLOPs), -1 if none */
	/* Symmetric ranks (tr_symmetric_dims): only representatives run; each
	   stands for `fold` ranks that differ from it only in the folded dims. */
	unsigned fold_dims; /* bit per enum tr_dim */
	int fold;           /* ranks per representative (1 = every rank replayed) */
	int nrep;           /* representatives replayed */
	int *rep_of;        /* rank -> its representative (NULL when fold is 1) */
	struct rp_mem *mem; /* per rank */
	/* the first rank whose `memory` exceeded the device: "path:line: rank
	   N does not fit: ..." (the step is still timed); "" when all fit */
	char nofit[1024];
};

/*
 * Runs trace t on chip c's system. Returns 0, or an exit code (65 for a
 * trace that cannot run: a deadlock, mismatched collectives, too many ranks
 * for the system; a rank whose `memory` exceeds the device's does not stop
 * the run: r->nofit says so, and callers exit SIM_EXIT_NOFIT) with a message of one or more lines in why (the first
 * "path:line: ..."; the others say which ranks wait on what).
 */
int rp_run(const struct arch_chip *c, const struct trace *t, const struct rp_options *o, struct rp_result *r, char *why,
           size_t whylen);
void rp_result_free(struct rp_result *r);

#endif
