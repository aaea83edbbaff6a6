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
	int text;    /* index into rp_result.texts: canonical op text */
	float gap_s; /* device op: of t1 - t0, the launch gap before its kernel starts (dm_result.gap_s) */
	short stream;
	signed char kind;  /* enum tr_kind */
	signed char bound; /* device op: enum dm_bound; else -1 */
	short mark;        /* region (tr_mark_name), -1 before the first mark */
	signed char algo;  /* coll: the algorithm chosen (coll_algo_name), -1 = none */
	signed char proto; /* coll: enum coll_proto */
	signed char late;  /* a pipeline's steady state (replay_steady.c): RP_LATE_* */
};

/* rp_span.late: the op was issued after its rank skipped a pipeline's steady
   state (its times were the engine's, K periods early, and are moved when the
   run ends), in an iteration of the watched repeat before the skip, or
   neither. */
enum { RP_LATE_WATCHED = -1, RP_LATE_NO = 0, RP_LATE_YES = 1 };

struct rp_options {
	double jitter;      /* sigma of a lognormal factor on device-op times; 0 = off */
	unsigned long seed; /* GSL random stream seed (with jitter) */
	int progress;       /* progress lines on stderr (progress.h says when) */
	int no_fold;        /* replay every rank even where the trace is symmetric */
	int no_memo;    /* run every collective and every flow of it on the engine, even on links nothing else uses */
	double max_ops; /* most ops the replayed ranks may run together (0: RP_MAX_OPS) */
	int exact;      /* play every iteration of every repeat (no steady state, replay_steady.c) */
	double max_actors;  /* most SimGrid actors the replay may need (0: RP_MAX_ACTORS) */
	int ranks_per_node; /* ranks placed on each node (platform_ranks_per_node); 0: all its devices */
};

/* The default budget of a replay: ops of all replayed ranks together (a
   bound computed before anything runs, tr_ops_per_rank x representatives).
   Each op keeps a span of about 72 bytes, so 5e7 ops are about 3.6 GB; the
   GPT-3 step on 1024 ranks replays about 0.75 million (16 representatives
   of at most 47 thousand), a Llama-2 70B batch decoding 256 tokens 0.27
   million. */
#define RP_MAX_OPS 5e7

/*
 * A steady state (replay_steady.c, docs/architecture.md): iterations of a
 * `repeat` the replay derived instead of playing. Its template is one played
 * iteration of every replayed rank, the spans tmpl[0..n) (increasing
 * indices). The iterations that follow it, copies 1..copies, are what the
 * replay would have recorded: each span of the template `period` seconds
 * later per copy; the replay resumed at t_resume, where the last copy ends.
 * A span's predecessor (rp_span.pred) of -2 - i names template span i in
 * the last copy; in copy k the predecessor of template span p is, by pcls[p]:
 * RP_PRED_SAME (template span arg of the same copy), RP_PRED_PREV (of copy
 * k - 1; copy 0 is the template itself), RP_PRED_NEXT (a pipeline's: of copy
 * k + 1; for the last copy the recorded span pnext[p], of the iteration
 * played after the copies; for the template itself, whose rp_span.pred is
 * then -1, of copy 1), RP_PRED_FIXED (span arg, as rp_span.pred encodes it,
 * the same for every copy) or RP_PRED_NONE.
 */
enum { RP_PRED_NONE, RP_PRED_SAME, RP_PRED_PREV, RP_PRED_FIXED, RP_PRED_NEXT };
struct rp_steady {
	int line; /* the repeat statement */
	long n;
	long *tmpl;
	signed char *pcls; /* per template span: RP_PRED_* */
	long *parg;
	long *pnext; /* a pipeline's, else NULL: per template span, -1 or (RP_PRED_NEXT) its last copy's predecessor */
	long copies;
	double period;   /* s */
	double t_cut;    /* the template's end: its latest span end */
	double t_resume; /* the clock when the replay went on: the end of the last copy */
	/* A pipeline's (replay_steady.c): its iterations overlap on each rank
	   (copies interleave with each other and with the spans recorded around
	   them), it is the run's only steady state, and the spans issued after
	   it (rp_span.late) were played t_resume - t_cut early and moved. */
	int stagger;
};
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
	long events;  /* ops replayed, all ranks, derived ones included */
	long derived; /* ... of which derived from steady states */
	int nsteady;  /* steady states (iterations of a repeat derived, not played) */
	struct rp_steady *steady;
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
 * Runs trace t on chip c's system (the engine: engine.h says how a program
 * gets it). Returns 0, or an exit code (65 for a
 * trace that cannot run: a deadlock, mismatched collectives, too many ranks
 * for the system; a rank whose `memory` exceeds the device's does not stop
 * the run: r->nofit says so, and callers exit SIM_EXIT_NOFIT) with a message of one or more lines in why (the first
 * "path:line: ..."; the others say which ranks wait on what).
 */
int rp_run(const struct arch_chip *c, const struct trace *t, const struct rp_options *o, struct rp_result *r, char *why,
           size_t whylen);
void rp_result_free(struct rp_result *r);

/* The copy `copies` of a steady state's template: the time t of a template
   span, k periods later (k = copies: anchored on t_resume). */
double rp_steady_time(const struct rp_steady *st, long k, double t);
/* Span i of the result is a template span: its steady state (index in
   r->steady) and position in the template, else -1. */
int rp_steady_find(const struct rp_result *r, long i, long *pos);
/* The span of copy k (1..copies) of template position pos of steady state
   si, as the replay would have recorded it; its pred is -1 (pcls and parg
   say what it is). */
void rp_steady_span(const struct rp_result *r, int si, long k, long pos, struct rp_span *out);
/* Every span, the derived ones too, in the order the replay would have
   recorded them (the copies of a template follow its last span): */
struct rp_span_iter {
	const struct rp_result *r;
	long i;    /* next real span */
	int si;    /* steady state being expanded, -1 */
	long k, p; /* its copy and template position */
	int next;  /* next steady state whose template has not ended */
	struct rp_span tmp;
};
void rp_span_iter_init(struct rp_span_iter *it, const struct rp_result *r);
const struct rp_span *rp_span_iter_next(struct rp_span_iter *it); /* NULL after the last */
/* The position of x in the increasing v[0..n), else -1 (templates are lists
   of increasing span indices). */
long rp_list_find(const long *v, long n, long x);

#endif
