/*
 * replay_steady_int.h -- the steady-state watcher's own state, shared by
 * replay_steady.c (watching, proving and skipping the iterations of a
 * repeat), replay_stagger.c (the same for a pipeline, whose stages' repeats
 * overlap) and replay_steady_iter.c (the records of iterations both use).
 * Nothing else includes it; the replay sees replay_int.h's rp_steady_* calls.
 */
#ifndef SIM_REPLAY_STEADY_INT_H
#define SIM_REPLAY_STEADY_INT_H

#include "replay_int.h"

#include <simgrid/semaphore.h>

#define ST_RING      1024 /* iterations between the farthest host and the oldest unevaluated one */
#define ST_MIN_COUNT 4    /* shorter repeats are played: three to prove, one to skip */
/* times agree to this share of the clock: the engine settles each activity's end to surf/precision (1e-12 s,
   replay.c), and the ends of a pipeline's iterations, which no cut separates, drift by several of those (an
   interleaved schedule's by 8e-12 s at 6 s); a derived time is off by about as much */
#define ST_TOL 1e-10

enum st_state {
	ST_NONE,  /* no candidate */
	ST_WATCH, /* iterations are evaluated */
	ST_ARMED, /* proven: the hosts stop at arm_at */
	ST_DONE   /* skipped, or given up: the candidate is played to its end */
};

struct st_list {
	long *v; /* span indices, increasing */
	long n, cap;
};

/* An iteration being issued or recorded. */
struct st_slot {
	long long j; /* which, -1: free */
	long issued; /* ops the hosts issued in it */
	long made;   /* spans recorded for them */
	int past;    /* hosts that moved past it */
	int unpred;  /* a span without an enabling predecessor */
	double flops[DT_COUNT];
	struct st_list spans;
};

/* An evaluated iteration. Its spans in the canonical order (by rank, stream,
   then as recorded: each stream records its ops in order) are spans.v[canon[c]];
   icanon is the inverse. Spans recorded at one instant by several actors
   may be recorded in another order in another iteration: the engine runs
   them in an order of its own, which nothing of the model depends on. */
struct st_hist {
	long long j; /* -1: none */
	struct st_list spans;
	long *canon, *icanon, ccap;
	double start, end; /* earliest arrival, latest end */
	int clean;
	double flops[DT_COUNT];
};

struct st_rank {
	long long iter; /* the candidate's iteration the host issues, -1 outside */
	long ordinal;   /* repeats entered that could be candidates */
	int in;         /* inside a candidate (this one, or one that another replaced when done) */
	long in_ord;    /* ... which */
	int in_body, in_depth;
	int at_stop; /* stopped at the boundary the steady state skips from */
	int waiting; /* ... waiting for its streams to be idle */
	sg_sem_t idle;
	double drained; /* when it was idle there */
	/* a pipeline's steady state (S->stagger) */
	struct tr_loop target; /* the repeat watched: its largest (tr_largest_repeat) */
	int joined_target;     /* entered it */
	int jumped;            /* skipped S->skip of its iterations */
};

struct steady {
	int nrep;
	struct st_rank *rk; /* per rank (replayed ones used) */
	enum st_state state;
	/* A pipeline: the ranks' largest repeats differ (stages); each rank's is
	   watched, iterations matched by number, and skipped without a cut (see
	   the top of the file). One per run. */
	int stagger;
	int lag;             /* a pipeline whose ops wait for the next iteration: judged one late (judged) */
	long long min_count; /* the fewest iterations of a rank's watched repeat */
	int jumped;          /* ranks that skipped */
	int verified;        /* the first iteration played after the skip was the template again */
	/* the candidate */
	int body, line, depth;
	long long count;
	long ordinal, lost; /* its ordinal; ordinals that can no longer be one */
	int joined, left;
	long long next_eval;
	long long run_from; /* first of the iterations that are the same one after the other, -1 */
	double run_from_end;
	long long arm_at, skip;
	int arrived, seg;
	sg_sem_t barrier;
	struct st_slot ring[ST_RING];
	struct st_hist hist[4]; /* the last four evaluated, [3] the latest (see judged) */
};

/* ---- replay_steady_iter.c: the records of iterations ---- */

/* The tolerance two times agree to near time t (ST_TOL of the clock). */
double st_tol(double t);
/* The iteration a proof is about (back 0) and the two before it (back 1, 2). */
struct st_hist *st_judged(struct steady *S, int back);
/* The iteration after the judged one: with S->lag the latest, else NULL. */
struct st_hist *st_after_judged(struct steady *S);
/* Appends v; -1 when memory runs out. */
int st_list_push(struct st_list *l, long v);
/* The slot of iteration j while it is open, else NULL. */
struct st_slot *st_slot_get(struct steady *S, long long j);
/* Opens iteration j's slot; 0 when the ring has no room (the hosts are too far ahead). */
int st_slot_open(struct steady *S, long long j);
/* Stops watching: the candidate is played to its end. */
void st_give_up(struct steady *S);
/* Whether a candidate is watched or armed. */
int st_active(const struct steady *S);
/* Puts h's spans in canonical order (by rank, stream, then as recorded); -1 when memory runs out. */
int st_canonical(const struct run *R, struct st_hist *h);
/* Whether iteration b is iteration a, T later (a's predecessors seen with before and b, b's with a and next;
   next NULL: at a cut, where nothing waits for a later iteration). */
int st_same_iter(const struct run *R, const struct st_hist *before, const struct st_hist *a, const struct st_hist *b,
                 const struct st_hist *next, double T);
/* The ops a host may issue ahead of its streams, in iterations; -1 when not known. */
long long st_host_lead(const struct run *R, const struct st_hist *h);
/* One past the iteration the farthest host issues. */
long long st_next_boundary(const struct run *R);
/* The steady state the judged iteration (the template) starts. */
struct rp_steady st_steady_of(struct steady *S);
/* Adds st to the result with its template; -1 when memory runs out. */
int st_record_steady(struct run *R, struct rp_steady *st);
/* Makes repeat l (the ordinal-th a rank enters) the candidate watched. */
void st_candidate(struct steady *S, const struct tr_loop *l, long ordinal);

/* ---- replay_stagger.c: a pipeline's steady state ---- */

/* The judged iteration was proven the same as the two before it: arm, derive or verify. */
void st_stagger_proven(struct run *R);
/* Whether an op of iteration h waited for one of the next iteration. */
int st_waits_for_next(const struct steady *S, const struct rp_span *sp, const struct st_hist *h);
/* Watches each rank's largest repeat when the replayed ranks' differ (the stages of a pipeline). */
void st_stagger_init(struct run *R);
/* After the run: the ops issued after the skip move K periods later. */
void st_stagger_finish(struct run *R);

#endif
