/*
 * replay_int.h -- private to the replay (sim/cluster/replay*.c);
 * sim/cluster/replay.h is its API.
 *
 * The replay's whole state is one struct run, allocated by rp_run and
 * passed to every function as R (as Lua's functions take L); SimGrid
 * actors reach it through their data (rank_st.run). The files:
 *
 *   replay.c       the engine: actors, streams and their queues, setup and
 *                  the deadlock report
 *   replay_exec.c  executing one op: spans, rendezvous, merged device ops,
 *                  delays, collectives, send/recv; the progress line
 *   replay_plan.c  collective plans and the SimGrid tasks of their phases,
 *                  memoized per (communicator group, collective, bytes, algo=)
 *   replay_fold.c  what the replay may skip, decided before it starts:
 *                  symmetric ranks folded into representatives, and
 *                  communicators whose collectives run alone on their links
 *   replay_steady.c  what it may skip while it runs: the iterations of a
 *                  repeat after it reached a steady state
 */
#ifndef SIM_REPLAY_INT_H
#define SIM_REPLAY_INT_H

#include "model.h"
#include "progress.h"
#include "replay.h"

#include <gsl/gsl_rng.h>
#include <simgrid/actor.h>
#include <simgrid/forward.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define QDEPTH   256
#define END_KIND TK_COUNT
#define NBUCKETS 65536

struct qev {
	struct tr_event ev;
	int need[TR_MAX_AFTER]; /* instance of each after= label to wait for */
	int inst;               /* this op's instance of its own label */
	int iter;               /* iteration of the repeat replay_steady.c watches, -1 */
	int cand;               /* ... and which one it is (its ordinal) */
	signed char late;       /* issued after its rank skipped a pipeline's steady state (rp_span.late) */
	short mark;
	double issued;
};

struct stream_st;
struct inst;

struct rank_st {
	struct run *run; /* the replay it belongs to (actors reach it through their data) */
	int rank;
	struct tr_cursor *cur;
	struct stream_st **streams; /* tr_nstreams, created on first use */
	int *issued, *done;         /* per label: instances issued; the instance that completed last */
	int *completed;             /* per label: ops completed (invariant 7) */
	long *lbl_span;             /* per label: span of the latest completion */
	int *coll_seq;              /* per communicator */
	short mark;
	int host_done;
	const char *host_state; /* what the host actor is blocked on */
	/* the host's expansion of the trace, which an executor that frees a
	   slot may carry on (host_pump in replay.c) */
	sg_sem_t wake;   /* the host actor waits here for its pump to need it */
	struct qev next; /* fetched, not yet queued (has_next): its stream is full */
	int has_next;
	int end_next;          /* ending: the next stream to queue the end to; -1 before the trace ends */
	int pump_done;         /* every stream has its end queued */
	double mem[MEM_COUNT]; /* current `memory` categories */
	gsl_rng *rng;
	struct p2pseq *p2p; /* sequence numbers of send/recv per (peer, tag, dir) */
	int np2p, cap2p;
};

struct p2pseq {
	int peer;
	long tag;
	int dir;
	int seq;
};

struct stream_st {
	struct rank_st *rk;
	int idx;
	struct qev *q;
	int head, n, cap;
	int used;                  /* slots holding an op: queued (n) or taken and running */
	int taken;                 /* ops a batch took from the queue after its first (rp_exec_ops) */
	char cons_wait, prod_wait; /* the executor waits on items; the host's next op on a slot */
	sg_sem_t items;
	long last_span;
	int done;
	const struct qev *cur; /* op being executed (for deadlock reports) */
	struct inst *waiting;  /* rendezvous it waits in */
	int waiting_label;     /* label it waits for, -1 */
	sg_sem_t lbl_sem;      /* ... on this semaphore (made when it first waits) */
};

/* A collective or send/recv being assembled. */
struct inst {
	struct inst *next;
	int kind; /* TK_COLL, TK_SEND (p2p) */
	int a, b, c, seq;
	int n, arrived, left;
	int *members; /* the members that meet (replayed ranks) */
	char *in;
	int *full, nfull;   /* collectives: the whole group, folded members too */
	struct tr_event ev; /* as the first arriver issued it */
	int first_rank;
	sg_sem_t go;
	double t_all; /* when the last member arrived: the transfer's start */
	double t_end; /* when the first member left: every member's end */
	long pred;    /* span before the last arrival */
	struct cplan *plan;
};

/* A planned collective, memoized with its prepared parallel tasks. */
struct cplan {
	struct cplan *next;
	int comm, group, coll, algo;
	double bytes;
	struct tr_route route;
	struct coll_plan p;
	int h[COLL_MAX_PHASES];
	sg_host_t *hosts[COLL_MAX_PHASES];
	double *flops[COLL_MAX_PHASES], *mat[COLL_MAX_PHASES];
	/* a phase of more than SPLIT_FLOWS flows: one task per (src, dst) pair,
	   hosts[2i..2i+1] and mat[4i..4i+3] ({0, bytes, 0, 0}) */
	int npairs[COLL_MAX_PHASES];
	/* time of the whole collective (latency and phases) measured on links
	   that carry nothing else (see rp_exclusive_comms) */
	int alone_known;
	double alone_s;
	int nrep; /* replayed members of the group (1: the others are folded into one) */
};

/* Above this many flows a phase runs as independent point-to-point tasks
   instead of one parallel task: SimGrid's solver pays for every link a task
   spans each time any of its links changes, which grows as flows x links. An
   idle collective takes the same time either way (each flow's bytes over its
   bottleneck); under contention independent flows share links max-min fairly
   instead of advancing in lockstep. */
#define SPLIT_FLOWS 64

/* The pair tasks of such a phase are started and waited by a chain of actors,
   each holding at most PAIR_CHUNK of them: SimGrid 3.32 removes a finished
   task from its actor's list of activities by a linear search, so one actor
   holding k tasks costs k^2 (see run_pairs in replay_plan.c). */
#define PAIR_CHUNK 64
struct pworker;

#define LINE_SLOTS 4096
struct line_dm {
	int line; /* + 1; 0: empty */
	struct op op;
	struct dm_result r;
};

/* the text of a send or recv, whose peer the line alone does not fix */
#define P2P_TEXT_SLOTS 4096
struct p2p_text {
	int line; /* + 1; 0: empty */
	int peer;
	int text;
};

struct run {
	const struct arch_chip *chip;
	double matrix_fp16; /* the chip's fp16 dense matrix peak, FLOP/s: what a delay scale=matrix scales by */
	const struct trace *t;
	const struct rp_options *o;
	struct rp_result *r;
	struct topo topo;
	int nranks;
	int inline_streams; /* one stream per rank: the rank's actor runs its ops itself */
	char *is_rep;       /* per rank: replayed (1) or folded into its representative (0) */
	char *excl_comm;    /* per communicator: it owns the links its groups use (rp_exclusive_comms) */
	int *algo_of;       /* per algo= name of the trace (tr_algo_name): index of the algorithm (coll.h) */
	struct rank_st *ranks;
	sg_host_t *hosts;
	struct platform *plat; /* links and routes of the SimGrid platform (platform.h) */
	struct inst *tab[NBUCKETS];
	struct cplan *plans[NBUCKETS];
	long capspans;
	/* interned texts */
	int *txt_hash; /* open addressing, index+1 */
	int txt_cap;
	int captexts;
	int *tmp_idx;   /* rank -> host index scratch, -1 */
	int *line_text; /* trace line -> text index + 1 (ops whose text depends on the line only) */
	int nline_text;
	struct line_dm *line_dm;   /* LINE_SLOTS: a line's op and its prediction (see predict) */
	struct p2p_text *p2p_text; /* P2P_TEXT_SLOTS (see base_span) */
	struct dm *dm;           /* the device model's memo for this run (NULL until the first op, or out of memory) */
	struct steady *steady;   /* replay_steady.c's state; NULL: every iteration is played */
	struct pworker *pw_free; /* idle actors of the pair-task pool (replay_plan.c) */
	struct pworker **pw_all; /* every one made, freed by rp_plans_free */
	int npw, cappw, pw_idle;
	int pw_max;      /* most workers the pool may make (actor_budget) */
	long issued_ops; /* ops the host actors queued (invariant 1) */
	char err[TR_MSG_MAX * 2];
	int err_code;
	double flops_by_dtype[DT_COUNT];
	struct timespec wall0;
	struct progress prog; /* "sim run: ..." lines when o->progress */
};

/* Records the run's first error (later ones are consequences): exit code
   and a message, "path:line: ..." where a line is known. Inline, so the
   files of the replay that fail a run call no other one back. */
static inline void rp_fail(struct run *R, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void rp_fail(struct run *R, int code, const char *fmt, ...)
{
	if (R->err_code)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(R->err, sizeof R->err, fmt, ap);
	va_end(ap);
	R->err_code = code;
}

/* Hash of a rendezvous or plan key. */
static inline uint64_t rp_key_hash(int kind, int a, int b, int c, int seq)
{
	uint64_t h = (uint64_t)kind * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)(unsigned)a * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
	h ^= (uint64_t)(unsigned)b * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
	h ^= (uint64_t)(unsigned)c * 0xD6E8FEB86659FD93ull + (h << 6) + (h >> 2);
	h ^= (uint64_t)(unsigned)seq * 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h;
}

/* Starts an actor running code on host h with data (sg_actor_data); inline,
   so that replay.c and replay_plan.c, which both start actors, do not call
   each other in a circle (tests/run_layering.sh). */
static inline void rp_actor_start(const char *name, sg_host_t h, void *data, void (*code)(int, char **))
{
	sg_actor_t a = sg_actor_init(name, h);
	sg_actor_set_data(a, data);
	sg_actor_start(a, code, 0, NULL);
}

/* replay_plan.c */
/* The plan of collective ev over the group named group (its lowest rank),
   or NULL when none was made yet. */
struct cplan *rp_plan_find(struct run *R, const struct tr_event *ev, int group);
/* ... made (and its phases' tasks prepared) over the members when needed;
   NULL after rp_fail. */
struct cplan *rp_plan_get(struct run *R, const struct tr_event *ev, int group, const int *members, int n);
/* Runs a plan's bandwidth phases on the engine, one after the other. */
void rp_plan_run(struct run *R, struct cplan *cp);
void rp_plans_free(struct run *R);

/* replay_fold.c */
/* Sets R->is_rep and the result's fold, nrep, rep_of, fold_dims; -1 when
   memory runs out. */
int rp_fold_ranks(struct run *R, const struct trace *t, const struct rp_options *o);
/* Sets R->excl_comm; -1 when memory runs out. */
int rp_exclusive_comms(struct run *R, const struct trace *t, const struct rp_options *o);

/* replay_steady.c */
/* Sets R->steady when the replay may derive steady states (not --exact,
   no jitter); -1 when memory runs out. After the ranks' cursors exist. */
int rp_steady_init(struct run *R);
/* The host actor's tr_next: also watches the iterations of repeats, stops
   at the boundary where it skips some (after RP_STEADY_RUN_QUEUE: the rank's
   inline queue must be run first, then call again) and tags q->iter. */
#define RP_STEADY_RUN_QUEUE 4
/* With may_block 0 (an executor carries the host's expansion on): returns
   RP_STEADY_NEED_HOST instead of stopping there (which blocks), q unset. */
#define RP_STEADY_NEED_HOST 5
int rp_steady_next(struct run *R, struct rank_st *rk, struct qev *q, char *why, size_t whylen, int may_block);
/* A span was recorded for q (index i). */
void rp_steady_recorded(struct run *R, const struct qev *q, long i);
/* Stream s has nothing left to run (its executor is about to wait). */
void rp_steady_idle(struct run *R, struct stream_st *s);
/* The end of a derived span named -2 - i (a span's pred, last_span). */
double rp_steady_end(const struct run *R, long i);
/* After the engine ran: fails a run that left a rank waiting at a steady
   state's boundary; adds the derived ops to the result. */
void rp_steady_finish(struct run *R);
void rp_steady_free(struct run *R);

/* replay_exec.c: executing one op (each leaves its span; the invariants in replay.c). The seconds since the
   run began; the progress line (every 1024 ops, when due); when span i ends (a steady state's copies too);
   an instance dropped once its last member left; an op's wait for its after= labels */
double rp_wall_now(struct run *R);
void rp_progress(struct run *R);
double rp_span_end(struct run *R, long i);
void rp_inst_drop(struct run *R, struct inst *x);
void rp_wait_labels(struct run *R, struct stream_st *s, const struct qev *q, long *pred, double *ready);
/* whether q can join the batch of device ops queued on s; the batch, a host delay, a collective, a send or
   recv run on stream s after span pred */
int rp_merges(struct run *R, const struct stream_st *s, const struct qev *q);
void rp_exec_ops(struct run *R, struct stream_st *s, struct qev *first, long pred);
void rp_exec_delay(struct run *R, struct stream_st *s, struct qev *q, long pred);
void rp_exec_coll(struct run *R, struct stream_st *s, struct qev *q, long pred);
void rp_exec_p2p(struct run *R, struct stream_st *s, struct qev *q, long pred);

#endif
