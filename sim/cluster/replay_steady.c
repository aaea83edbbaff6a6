/*
 * replay_steady.c -- steady states: iterations of a `repeat` that the replay
 * derives instead of playing them on the engine.
 *
 * A decode of 8192 tokens repeats one step thousands of times; once the step
 * takes the same time and does the same things each time, playing it again
 * only costs wall time. This file watches the iterations of repeats while
 * the replay plays them, proves when one has reached a steady state, and
 * then skips the rest of it: the clock advances by the iterations skipped x
 * the period, and the spans they would have recorded are described (struct
 * rp_steady: a template iteration and its copies), so that the report counts
 * them as if they had been played. `sim run --exact` plays every iteration.
 *
 * Watching. Every rank numbers the repeats of at least ST_MIN_COUNT
 * iterations it enters; the candidate is the k-th of every replayed rank (the
 * same statement and count for all), unless a candidate being watched
 * encloses it (then it is part of that one's iterations). A rank's host actor
 * tags each op it issues with the candidate's iteration; the spans recorded
 * for them are listed per iteration. Once every host has moved past an
 * iteration and every op of it has its span, it is evaluated:
 *   clean  it started after the iteration before it ended (its earliest
 *          arrival is no earlier than the other's latest end: a cut of the
 *          run where nothing is in flight, no transfer, no queued or running
 *          op), and every span has an enabling predecessor (none started when
 *          its host issued it, so how far the hosts run ahead did not matter)
 *   same   span for span (by rank, stream, and order on the stream) it is
 *          the one before, T later: the same line, op text, kind, bound,
 *          region, algorithm and protocol, FLOPs and bytes; arrival, start
 *          and end T later to ST_TOL of the clock; the predecessor the same
 *          span of its own iteration, or of the one before, or the same
 *          older span
 * Two clean iterations that are the same prove a steady state. At the cut
 * before each, every actor waits at the start of an iteration and nothing is
 * in flight, so what follows a cut is a function of what the cuts keep: the
 * trace position (the same but for the iteration number), the spans the
 * streams and labels hang on (the same spans one iteration apart, as the
 * predecessors showed), sequence numbers of rendezvous (relative), the
 * memoized plans and predictions (they give the same times). The engine is
 * deterministic (jitter draws random numbers per op: it turns this off), so
 * the iteration after the second is the second again, T later, and so on.
 * (The engine runs the actors of one instant in an order of its own, so
 * spans recorded at one instant may be recorded in another order: that is
 * why spans are matched by rank and stream, not by index.)
 *
 * Skipping. The hosts issue ahead of their streams; each stops at the same
 * boundary, iteration A (one past where the farthest host is), and waits
 * until its rank's streams are idle (a rank with a single stream runs its own
 * queue). When every replayed rank is idle, at the cut after the template
 * (iteration A - 1), iterations A .. A+K-1 are derived: the latest span of
 * each stream and label that the template holds becomes its copy in the last
 * derived iteration (pred -2 - i), the cursors skip K iterations, and every
 * host sleeps K x T. The last L iterations are played again: a host with
 * several streams issues up to QDEPTH ops ahead of each, so the ops after the
 * repeat are issued while its last iterations run, and playing the last
 * ceil(QDEPTH / the ops of its busiest stream per iteration) + 1 iterations
 * puts every host where it would have been then (their queues hold the same
 * ops; what differs, when an op was issued, does not matter for ops that
 * start after the cut). A rank whose actor runs its own ops has no lead: L = 0.
 *
 * Pipelines. A pipeline's stages each run a repeat of their own (1F1B: a
 * different count and body per stage), and its iterations overlap: stage s
 * sends to stage s + 1 while both compute, so no cut has nothing in flight.
 * When the replayed ranks' largest repeats (tr_largest_repeat) differ, each
 * rank's is watched instead (S->stagger; one per run), iterations matched by
 * number (1F1B's iteration j holds micro-batch j's backward on every stage),
 * and evaluated as above without the cut. An op may wait for one of the
 * next iteration on another rank (the interleaved schedule: a stage's
 * forward of the next virtual chunk waits for the last stage, whose
 * iterations run ahead of the first's); once one does, the run's iterations
 * are judged each once the one after it is in (S->lag), and a predecessor
 * there is the same span of the next iteration (RP_PRED_NEXT) when the
 * iterations are compared: three
 * iterations in a row the same (two proofs) arm it. The hosts do not stop:
 * each skips K iterations of its cursor when it reaches iteration A (one
 * past the farthest host), numbering what it plays next as if nothing had
 * been skipped. The engine then plays
 * the repeat with K iterations fewer, which is the whole repeat K periods
 * early: the iterations are the same ops, so nothing but their number
 * changed, and the repeat's end (what follows it, issued a host lead ahead)
 * is played as it would be. The ops issued after the skip are marked late;
 * when the run ends their times move K periods later and what they hung on
 * in iteration A - 1 (the template) becomes its copy in the last derived
 * iteration; what the template hung on in iteration A (played after the
 * skip) is its copy 1. This rests on the run being periodic, which is
 * witnessed, not proven as at a cut: iterations A - 1 and A (the first
 * played after the skip) must again be the same as the ones before them, and any iteration
 * evaluated between arming and A must be too, else the run fails (exit 70;
 * --exact plays every iteration). tests/run_steady.sh compares 1F1B, GPipe
 * and interleaved steps and the GPT-3 step with --exact's reports.
 *
 * Not covered (played in full): repeats that ranks enter differently and
 * whose largest repeats are the same (matched in order, above), iterations
 * that depend on iterations more than one back or ahead (a pipelined
 * decode, whose first stage waits for the token the last stage made
 * micro-batches ago), a transfer that runs into the next iteration of
 * a repeat all ranks share (no cut), repeats a host issues whole before
 * their first iteration ends (a single stream queues up to QDEPTH device ops
 * before it runs them; several streams that never fill a queue), and runs
 * with --jitter.
 *
 * Invariants (checked; a run that breaks one fails with exit 70):
 *  1. At the boundary where the hosts stop, every replayed rank is idle at
 *     the same time, the template's end (the steady state said so).
 *  2. The template is clean and the same as the iteration before it (ranks
 *     with a single stream waited where they would have been anyway, and
 *     play on when it is not; ranks with several may have waited to issue).
 *  3. A derived span's times follow its template's: copy k is k periods
 *     later, the last ends where the replay resumed.
 *  4. (pipelines) An op issued after the skip hangs on an op issued after it,
 *     on the template, or on one from before the watched repeat, never on
 *     an older iteration (rp_span.late tells them apart); an op issued
 *     before it hangs on one issued after it only as a template op on its
 *     next iteration.
 */
#include "replay_int.h"

#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/semaphore.h>
#include <stdlib.h>
#include <string.h>

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

static double tol(double t)
{
	return ST_TOL * fmax(fabs(t), 1e-3);
}

/* The iteration a proof is about (back 0) and the two before it (back 1,
   2): the latest evaluated, but in a pipeline whose ops wait for ones of the
   next iteration on another rank (S->lag: the interleaved schedule, where a
   stage's iteration j receives from its neighbour's j + 1) the one before
   it, judged once the next is in. */
static struct st_hist *judged(struct steady *S, int back)
{
	return &S->hist[3 - S->lag - back];
}

/* The iteration after the judged one: with S->lag the latest, else none. */
static struct st_hist *after_judged(struct steady *S)
{
	return S->lag ? &S->hist[3] : NULL;
}

static int list_push(struct st_list *l, long v)
{
	if (l->n == l->cap) {
		long cap = l->cap ? 2 * l->cap : 256;
		long *w = realloc(l->v, (size_t)cap * sizeof *w);
		if (!w)
			return -1;
		l->v = w;
		l->cap = cap;
	}
	l->v[l->n++] = v;
	return 0;
}

static struct st_slot *slot_get(struct steady *S, long long j)
{
	struct st_slot *sl = j >= 0 ? &S->ring[j % ST_RING] : NULL;
	return sl && sl->j == j ? sl : NULL;
}

/* Opens iteration j's slot (0 when the ring is full of older ones). */
static int slot_open(struct steady *S, long long j)
{
	struct st_slot *sl = &S->ring[j % ST_RING];
	if (sl->j == j)
		return 1;
	if (sl->j >= 0)
		return 0;
	struct st_list keep = sl->spans;
	memset(sl, 0, sizeof *sl);
	sl->j = j;
	sl->spans = keep;
	sl->spans.n = 0;
	return 1;
}

static void give_up(struct steady *S)
{
	if (S->state == ST_WATCH)
		S->state = ST_DONE;
}

static int active(const struct steady *S)
{
	return S->state == ST_WATCH || S->state == ST_ARMED;
}

/* ---- evaluating iterations ---- */

struct canon_key {
	int rank, stream;
	long idx, pos;
};

static int by_canon(const void *a, const void *b)
{
	const struct canon_key *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Sets h's canonical order; -1 when memory runs out. */
static int canonical(const struct run *R, struct st_hist *h)
{
	long n = h->spans.n;
	if (n > h->ccap) {
		long *c = realloc(h->canon, (size_t)n * sizeof *c);
		if (c)
			h->canon = c;
		long *ic = c ? realloc(h->icanon, (size_t)n * sizeof *ic) : NULL;
		if (!c || !ic)
			return -1;
		h->icanon = ic;
		h->ccap = n;
	}
	struct canon_key *k = malloc(((size_t)n + 1) * sizeof *k);
	if (!k)
		return -1;
	for (long p = 0; p < n; p++) {
		const struct rp_span *s = &R->r->spans[h->spans.v[p]];
		k[p] = (struct canon_key){s->rank, s->stream, h->spans.v[p], p};
	}
	qsort(k, (size_t)n, sizeof *k, by_canon);
	for (long c = 0; c < n; c++) {
		h->canon[c] = k[c].pos;
		h->icanon[k[c].pos] = c;
	}
	free(k);
	return 0;
}

/* The canonical position of span i in iteration h, -1 when not in it. */
static long canon_pos(const struct st_hist *h, long i)
{
	long p = i >= 0 && h ? rp_list_find(h->spans.v, h->spans.n, i) : -1;
	return p >= 0 ? h->icanon[p] : -1;
}

/* What a span's predecessor is, seen from an iteration (cur), the one
   before it (prev) and the one after it (next; NULL: none can be):
   RP_PRED_* and the canonical position in that one. */
static int pred_class(long pred, const struct st_hist *cur, const struct st_hist *prev, const struct st_hist *next,
                      long *pos)
{
	*pos = -1;
	if (pred == -1)
		return RP_PRED_NONE;
	if ((*pos = canon_pos(cur, pred)) >= 0)
		return RP_PRED_SAME;
	if ((*pos = canon_pos(prev, pred)) >= 0)
		return RP_PRED_PREV;
	if (next && (*pos = canon_pos(next, pred)) >= 0)
		return RP_PRED_NEXT;
	return RP_PRED_FIXED;
}

static int shifted(double a, double b, double T)
{
	return fabs(b - a - T) <= tol(b);
}

/* Iteration b is iteration a, T later (a's predecessors seen with before
   and b, b's with a and next; next NULL: at a cut, where nothing waits for
   a later iteration). */
static int same_iter(const struct run *R, const struct st_hist *before, const struct st_hist *a,
                     const struct st_hist *b, const struct st_hist *next, double T)
{
	const struct rp_span *S = R->r->spans;
	if (a->spans.n != b->spans.n)
		return 0;
	for (long p = 0; p < a->spans.n; p++) { /* in the canonical order */
		const struct rp_span *x = &S[a->spans.v[a->canon[p]]], *y = &S[b->spans.v[b->canon[p]]];
		if (x->rank != y->rank || x->line != y->line || x->text != y->text || x->stream != y->stream ||
		    x->kind != y->kind || x->bound != y->bound || x->mark != y->mark || x->algo != y->algo ||
		    x->proto != y->proto || x->flops != y->flops || x->bytes != y->bytes)
			return 0;
		if (!shifted(x->t0, y->t0, T) || !shifted(x->t1, y->t1, T) || !shifted(x->arrive, y->arrive, T))
			return 0;
		long px, py;
		int cx = pred_class(x->pred, a, before, next ? b : NULL, &px);
		int cy = pred_class(y->pred, b, a, next, &py);
		if (cx != cy || px != py || (cx == RP_PRED_FIXED && x->pred != y->pred))
			return 0;
	}
	return 1;
}

static int by_value(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* The ops a host may issue ahead of its streams, in iterations (see the top
   of the file): 0 when each rank's actor runs its own ops. */
static long long host_lead(const struct run *R, const struct st_hist *h)
{
	if (R->inline_streams)
		return 0;
	int ns = tr_nstreams(R->t);
	long *key = malloc(((size_t)h->spans.n + 1) * sizeof *key);
	if (!key)
		return -1;
	for (long p = 0; p < h->spans.n; p++) {
		const struct rp_span *s = &R->r->spans[h->spans.v[p]];
		key[p] = (long)s->rank * ns + s->stream;
	}
	/* per rank, the most ops on one stream: sort (rank, stream) keys */
	qsort(key, (size_t)h->spans.n, sizeof *key, by_value);
	long long lead = 0;
	long most = 0;
	for (long i = 0; i < h->spans.n;) {
		long k = i;
		while (k < h->spans.n && key[k] == key[i])
			k++;
		if (k - i > most)
			most = k - i;
		int rank = (int)(key[i] / ns);
		i = k;
		if (i == h->spans.n || key[i] / ns != rank) { /* the rank's last stream */
			long long l = (QDEPTH + most - 1) / most + 1;
			if (l > lead)
				lead = l;
			most = 0;
		}
	}
	free(key);
	return lead;
}

/* One past the iteration the farthest host issues: where the hosts can all stop (or skip). */
static long long next_boundary(const struct run *R)
{
	const struct steady *S = R->steady;
	long long A = 0;
	for (int i = 0; i < R->nranks; i++)
		if (R->ranks[i].streams && S->rk[i].iter + 1 > A)
			A = S->rk[i].iter + 1;
	return A;
}

static void arm(struct run *R)
{
	struct steady *S = R->steady;
	long long A = next_boundary(R), L = host_lead(R, judged(S, 0));
	if (L < 0 || A + L >= S->count) { /* nothing left to skip */
		S->state = ST_DONE;
		return;
	}
	S->arm_at = A;
	S->skip = S->count - A - L;
	S->state = ST_ARMED;
}

/* The steady state the judged iteration (the template) starts: its copies, period and cut. */
static struct rp_steady steady_of(struct steady *S)
{
	const struct st_hist *h = judged(S, 0);
	struct rp_steady st = {0};
	st.line = S->line;
	st.n = h->spans.n;
	st.copies = S->skip;
	st.period = (h->end - S->run_from_end) / (double)(h->j - S->run_from);
	st.t_cut = h->end;
	return st;
}

/* Adds st to the result with its template, the latest evaluated iteration, and each span's predecessor as the
   copies see it (canonical positions map to the template's own); counts the derived ops and FLOPs. -1 when
   memory runs out (nothing added). */
static int record_steady(struct run *R, struct rp_steady *st)
{
	struct steady *S = R->steady;
	struct rp_result *r = R->r;
	const struct st_hist *h = judged(S, 0), *prev = judged(S, 1), *next = after_judged(S);
	st->tmpl = malloc((size_t)st->n * sizeof *st->tmpl);
	st->pcls = malloc((size_t)st->n);
	st->parg = malloc((size_t)st->n * sizeof *st->parg);
	st->pnext = next ? malloc((size_t)st->n * sizeof *st->pnext) : NULL;
	struct rp_steady *v = realloc(r->steady, ((size_t)r->nsteady + 1) * sizeof *v);
	if (v)
		r->steady = v;
	if (!st->tmpl || !st->pcls || !st->parg || (next && !st->pnext) || !v) {
		free(st->tmpl);
		free(st->pcls);
		free(st->parg);
		free(st->pnext);
		return -1;
	}
	memcpy(st->tmpl, h->spans.v, (size_t)st->n * sizeof *st->tmpl);
	for (long p = 0; p < st->n; p++) {
		long pred = r->spans[st->tmpl[p]].pred, c;
		st->pcls[p] = (signed char)pred_class(pred, h, prev, next, &c);
		st->parg[p] = st->pcls[p] == RP_PRED_FIXED ? pred : c >= 0 ? h->canon[c] : -1;
		if (next) /* the iteration played after the copies: the last copy's next */
			st->pnext[p] = st->pcls[p] == RP_PRED_NEXT ? next->spans.v[next->canon[c]] : -1;
	}
	S->seg = r->nsteady;
	r->steady[r->nsteady++] = *st;
	r->derived += st->copies * st->n;
	for (int d = 0; d < DT_COUNT; d++)
		R->flops_by_dtype[d] += (double)st->copies * h->flops[d];
	return 0;
}

/* ---- a pipeline's steady state ---- */

/* Iterations proven the same: the hosts will skip at iteration A, one past
   the farthest of them; enough are left after it to play the repeat's end
   (the host lead, then two). */
static void arm_stagger(struct run *R)
{
	struct steady *S = R->steady;
	long long A = next_boundary(R), L = host_lead(R, judged(S, 0));
	long long K = S->min_count - A - L - 2;
	if (L < 0 || K < 1) {
		S->state = ST_DONE;
		return;
	}
	S->arm_at = A;
	S->skip = K;
	S->state = ST_ARMED;
}

/* Iteration A - 1, the last every rank played before it skipped, is the
   same as the one before: it is the template of the iterations skipped. */
static void derive_stagger(struct run *R)
{
	struct steady *S = R->steady;
	const struct st_hist *h = judged(S, 0);
	struct rp_steady st = steady_of(S);
	st.t_resume = h->end + (double)st.copies * st.period;
	st.stagger = 1;
	if (record_steady(R, &st))
		rp_fail(R, SIM_EXIT_INTERNAL, "out of memory"); /* (the hosts skipped: it cannot be played instead) */
}

static void stagger_proven(struct run *R)
{
	struct steady *S = R->steady;
	long long j = judged(S, 0)->j;
	if (S->state == ST_WATCH && S->run_from <= j - 2) /* three alike: two proofs */
		arm_stagger(R);
	else if (S->state == ST_ARMED && j == S->arm_at - 1)
		derive_stagger(R);
	else if (S->state == ST_ARMED && j == S->arm_at) { /* the first one played after the skip */
		S->verified = 1;
		S->state = ST_DONE;
	}
}

/* Whether an op of iteration h waited for one of the next iteration (its
   slot is open and holds what was recorded of it, in increasing order). */
static int waits_for_next(const struct steady *S, const struct rp_span *sp, const struct st_hist *h)
{
	const struct st_slot *nx = h->j >= 0 ? &S->ring[(h->j + 1) % ST_RING] : NULL;
	if (!nx || nx->j != h->j + 1)
		return 0;
	for (long p = 0; p < h->spans.n; p++) {
		long pred = sp[h->spans.v[p]].pred;
		if (pred >= 0 && rp_list_find(nx->spans.v, nx->spans.n, pred) >= 0)
			return 1;
	}
	return 0;
}

static void evaluate(struct run *R, struct st_slot *sl)
{
	struct steady *S = R->steady;
	const struct rp_span *sp = R->r->spans;
	/* the oldest of the history makes room (its list goes back to the slot) */
	struct st_hist old = S->hist[0];
	memmove(&S->hist[0], &S->hist[1], 3 * sizeof S->hist[0]);
	struct st_hist *h = &S->hist[3];
	memset(h, 0, sizeof *h);
	h->canon = old.canon;
	h->icanon = old.icanon;
	h->ccap = old.ccap;
	h->j = sl->j;
	h->spans = sl->spans;
	memcpy(h->flops, sl->flops, sizeof h->flops);
	h->start = INFINITY;
	h->end = -INFINITY;
	for (long p = 0; p < h->spans.n; p++) {
		const struct rp_span *s = &sp[h->spans.v[p]];
		h->start = fmin(h->start, s->arrive);
		h->end = fmax(h->end, s->t1);
	}
	const struct st_hist *last = &S->hist[2];
	int ordered = !canonical(R, h);
	h->clean = ordered && h->spans.n > 0 && !sl->unpred && last->j == h->j - 1 &&
	           (S->stagger || h->start >= last->end - tol(last->end));
	sl->spans = old.spans;
	sl->spans.n = 0;
	sl->j = -1;
	if (!ordered)
		h->j = -1; /* no room to compare it: nothing follows from it */
	if (S->stagger && !S->lag && S->state == ST_WATCH && waits_for_next(S, sp, h)) {
		S->lag = 1; /* from now on judged one late (the proofs start again) */
		S->run_from = -1;
	}
	/* the iteration judged (h, or with S->lag the one before it) */
	const struct st_hist *cur = judged(S, 0), *prev = judged(S, 1), *before = judged(S, 2), *next = after_judged(S);
	int proven = cur->clean && prev->clean && before->j == cur->j - 2 && (!next || next->j == cur->j + 1) &&
	             same_iter(R, before, prev, cur, next, cur->end - prev->end);
	if (!proven) {
		S->run_from = -1;
		if (S->stagger && S->state == ST_ARMED) /* (the hosts may have skipped: it cannot be undone) */
			rp_fail(R, SIM_EXIT_INTERNAL,
			        "%s:%d: steady state of a pipeline: iteration %lld differs from the one before it, "
			        "after the ranks skipped to it (sim run --exact plays every iteration)",
			        tr_path(R->t), S->line, cur->j);
		return;
	}
	if (S->run_from < 0) {
		S->run_from = prev->j;
		S->run_from_end = prev->end;
	}
	if (S->stagger)
		stagger_proven(R);
	else if (S->state == ST_WATCH)
		arm(R);
}

/* Evaluates, in order, the iterations every host has moved past and every
   op of which has its span. */
static void try_eval(struct run *R)
{
	struct steady *S = R->steady;
	while (active(S) && S->joined == S->nrep) {
		struct st_slot *sl = slot_get(S, S->next_eval);
		if (!sl || sl->past < S->nrep || sl->made < sl->issued)
			break;
		evaluate(R, sl);
		S->next_eval++;
	}
}

/* ---- the hosts ---- */

static void candidate(struct steady *S, const struct tr_loop *l, long ordinal)
{
	S->state = ST_WATCH;
	S->body = l->body;
	S->line = l->line;
	S->depth = l->depth;
	S->count = l->count;
	S->ordinal = ordinal;
	S->joined = S->left = 0;
	S->next_eval = 0;
	S->run_from = S->arm_at = -1;
	S->skip = 0;
	S->arrived = 0;
	S->seg = -1;
	for (int i = 0; i < ST_RING; i++)
		S->ring[i].j = -1;
	for (int i = 0; i < 4; i++)
		S->hist[i].j = -1;
}

/* loop_start of a pipeline: each rank joins its own watched repeat, whose
   iterations it numbers as played (those skipped are not counted). */
static int loop_start_stagger(struct run *R, struct st_rank *sr, const struct tr_loop *l)
{
	struct steady *S = R->steady;
	if (sr->in) {
		if (l->depth != sr->in_depth || l->body != sr->in_body)
			return 0; /* a repeat inside its iterations */
		long long it = l->iter - (sr->jumped ? S->skip : 0);
		if (active(S)) {
			struct st_slot *sl = slot_get(S, sr->iter);
			if (sl)
				sl->past++;
			if (!slot_open(S, it))
				give_up(S);
		}
		sr->iter = it;
		try_eval(R);
		return S->state == ST_ARMED && it == S->arm_at && !sr->jumped;
	}
	if (sr->joined_target || l->iter != 0 || l->body != sr->target.body || l->depth != sr->target.depth ||
	    l->count != sr->target.count)
		return 0;
	sr->joined_target = sr->in = 1;
	sr->in_ord = S->ordinal;
	sr->in_body = l->body;
	sr->in_depth = l->depth;
	sr->iter = 0;
	if (active(S) && !slot_open(S, 0))
		give_up(S);
	S->joined++;
	return 0;
}

/* A TR_LOOP stop; 1 when the host is at the boundary the steady state
   skips from. */
static int loop_start(struct run *R, struct st_rank *sr, const struct tr_loop *l)
{
	struct steady *S = R->steady;
	if (S->stagger)
		return loop_start_stagger(R, sr, l);
	if (sr->in && l->depth == sr->in_depth && l->body == sr->in_body) { /* its next iteration */
		int cur = sr->in_ord == S->ordinal;
		if (cur && active(S)) {
			struct st_slot *sl = slot_get(S, sr->iter);
			if (sl)
				sl->past++;
			if (!slot_open(S, l->iter))
				give_up(S); /* the hosts are too far ahead of what was recorded */
		}
		sr->iter = l->iter;
		if (!cur)
			return 0;
		try_eval(R);
		return S->state == ST_ARMED && l->iter == S->arm_at;
	}
	if (l->iter != 0 || l->count < ST_MIN_COUNT)
		return 0;
	long k = ++sr->ordinal; /* every rank numbers the repeats it enters alike */
	if (sr->in && sr->in_ord == S->ordinal && active(S))
		return 0; /* inside the candidate: part of its iterations */
	if (S->ordinal != k) {
		if (active(S) || k < S->ordinal || k <= S->lost) {
			if (k > S->lost && k > S->ordinal)
				S->lost = k; /* this rank plays it while another is watched: it cannot be one */
			return 0;
		}
		candidate(S, l, k); /* the one before (if any) is done with */
		slot_open(S, 0);
	} else if (S->body != l->body || S->count != l->count || S->depth != l->depth) {
		give_up(S); /* the ranks' k-th repeats differ */
		return 0;
	}
	sr->in = 1; /* (a repeat it is in whose watch is over is forgotten) */
	sr->in_ord = k;
	sr->in_body = l->body;
	sr->in_depth = l->depth;
	sr->iter = 0;
	S->joined++;
	return 0;
}

static void loop_end(struct run *R, struct st_rank *sr, const struct tr_loop *l)
{
	struct steady *S = R->steady;
	if (!sr->in || l->depth != sr->in_depth || l->body != sr->in_body)
		return;
	sr->in = 0;
	if (sr->in_ord != S->ordinal)
		return;
	struct st_slot *sl = active(S) ? slot_get(S, sr->iter) : NULL;
	if (sl)
		sl->past++;
	sr->iter = -1;
	S->left++;
	try_eval(R);
	if (S->stagger && S->state != ST_WATCH)
		return; /* (the iterations after the skip are still evaluated) */
	give_up(S);     /* a rank is through: no boundary is left where all could stop */
	if (S->left == S->joined && S->lost < S->ordinal)
		S->lost = S->ordinal; /* everyone in it left; who comes later plays it */
}

static int rank_idle(const struct run *R, const struct rank_st *rk)
{
	for (int i = 0; i < tr_nstreams(R->t); i++) {
		const struct stream_st *s = rk->streams[i];
		if (s && (s->n > 0 || !s->cons_wait))
			return 0;
	}
	return 1;
}

void rp_steady_idle(struct run *R, struct stream_st *s)
{
	struct steady *S = R->steady;
	if (!S)
		return;
	struct st_rank *sr = &S->rk[s->rk->rank];
	if (sr->waiting && rank_idle(R, s->rk)) {
		sr->waiting = 0;
		sg_sem_release(sr->idle);
	}
}

/* The template (iteration A - 1) and its copies, after every rank is idle
   at the cut (the last rank to get there runs this). */
static void derive(struct run *R)
{
	struct steady *S = R->steady;
	struct rp_result *r = R->r;
	try_eval(R);
	double lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < R->nranks; i++)
		if (R->ranks[i].streams) {
			lo = fmin(lo, S->rk[i].drained);
			hi = fmax(hi, S->rk[i].drained);
		}
	struct st_hist *h = judged(S, 0);
	S->state = ST_DONE;
	h->end = -INFINITY; /* now that every op of it ended: a batch's last end is the engine's, not the sum */
	for (long p = 0; p < h->spans.n; p++)
		h->end = fmax(h->end, r->spans[h->spans.v[p]].t1);
	if (hi - lo > tol(hi) || fabs(hi - h->end) > tol(hi)) { /* invariant 1 */
		rp_fail(R, SIM_EXIT_INTERNAL,
		        "%s:%d: steady state: the ranks were idle at %.17g to %.17g, the iteration ended at %.17g "
		        "(a bug; sim run --exact plays every iteration)",
		        tr_path(R->t), S->line, lo, hi, h->end);
		return;
	}
	if (h->j != S->arm_at - 1 || S->run_from < 0 || S->run_from > h->j - 1) {
		/* invariant 2: the hosts waited at a cut where nothing was in flight,
		   all at once; with a single stream per rank that is where they would
		   have been anyway, with several it may have delayed issuing */
		if (!R->inline_streams)
			rp_fail(R, SIM_EXIT_INTERNAL,
			        "%s:%d: steady state: iteration %lld differs from the one before it (a bug; sim run "
			        "--exact plays every iteration)",
			        tr_path(R->t), S->line, S->arm_at);
		return;
	}
	struct rp_steady st = steady_of(S);
	record_steady(R, &st); /* (no memory: played instead) */
}

/* The rank's part: what its streams and labels hang on moves to the last
   derived iteration, its cursor skips, its host sleeps. */
static void skip_rank(struct run *R, struct rank_st *rk)
{
	struct steady *S = R->steady;
	int si = S->seg; /* (a rank that wakes first may start another candidate) */
	struct rp_steady *st = &R->r->steady[si];
	for (int i = 0; i < tr_nstreams(R->t); i++) {
		struct stream_st *s = rk->streams[i];
		if (s && s->last_span >= 0 && rp_list_find(st->tmpl, st->n, s->last_span) >= 0)
			s->last_span = -2 - s->last_span;
	}
	for (int l = 0; l < tr_nlabels(R->t); l++)
		if (rk->lbl_span[l] >= 0 && rp_list_find(st->tmpl, st->n, rk->lbl_span[l]) >= 0)
			rk->lbl_span[l] = -2 - rk->lbl_span[l];
	if (tr_cursor_skip(rk->cur, st->copies)) {
		rp_fail(R, SIM_EXIT_INTERNAL, "%s:%d: steady state: rank %d cannot skip %ld iterations (a bug)",
		        tr_path(R->t), S->line, rk->rank, st->copies);
		return;
	}
	S->rk[rk->rank].iter = S->arm_at + st->copies;
	sg_actor_sleep_for((double)st->copies * st->period);
	R->r->sg_activities++;
	st = &R->r->steady[si]; /* another candidate may have been derived meanwhile */
	double now = simgrid_get_clock();
	if (st->t_resume == 0)
		st->t_resume = now;
	else if (st->t_resume != now) /* invariant 3 */
		rp_fail(R, SIM_EXIT_INTERNAL, "%s:%d: steady state: ranks resumed at %.17g and %.17g (a bug)",
		        tr_path(R->t), st->line, st->t_resume, now);
}

/* A host at the boundary the steady state skips from (its inline queue
   already run): waits for its streams, then for every other rank. */
static void armed_stop(struct run *R, struct rank_st *rk)
{
	struct steady *S = R->steady;
	struct st_rank *sr = &S->rk[rk->rank];
	while (!R->inline_streams && !rank_idle(R, rk) && !R->err_code) {
		if (!sr->idle && !(sr->idle = sg_sem_init(0))) {
			rp_fail(R, SIM_EXIT_INTERNAL, "out of memory");
			return;
		}
		rk->host_state = "waiting for its streams at a steady state";
		sr->waiting = 1;
		sg_sem_acquire(sr->idle);
		rk->host_state = NULL;
	}
	sr->drained = simgrid_get_clock();
	if (++S->arrived < S->nrep) {
		rk->host_state = "waiting for the other ranks at a steady state";
		sg_sem_acquire(S->barrier);
		rk->host_state = NULL;
	} else {
		derive(R);
		for (int i = 1; i < S->nrep; i++)
			sg_sem_release(S->barrier);
	}
	if (!R->err_code && S->seg >= 0)
		skip_rank(R, rk);
}

int rp_steady_next(struct run *R, struct rank_st *rk, struct qev *q, char *why, size_t whylen)
{
	struct steady *S = R->steady;
	struct st_rank *sr = &S->rk[rk->rank];
	for (;;) {
		if (sr->at_stop) {
			sr->at_stop = 0;
			armed_stop(R, rk);
			if (R->err_code)
				return 0;
		}
		int rc = tr_next(rk->cur, &q->ev, why, whylen);
		if (rc == TR_LOOP) {
			int stop = loop_start(R, sr, tr_cursor_loop(rk->cur));
			if (stop && S->stagger) { /* a pipeline: skip at once, nothing stops */
				if (tr_cursor_skip(rk->cur, S->skip)) {
					rp_fail(R, SIM_EXIT_INTERNAL,
					        "%s:%d: steady state: rank %d cannot skip %lld iterations (a bug)",
					        tr_path(R->t), S->line, rk->rank, S->skip);
					return 0;
				}
				sr->jumped = 1;
				S->jumped++;
				continue;
			}
			if (stop) {
				sr->at_stop = 1;
				if (R->inline_streams)
					return RP_STEADY_RUN_QUEUE;
			}
			continue;
		}
		if (rc == TR_LOOP_END) {
			loop_end(R, sr, tr_cursor_loop(rk->cur));
			continue;
		}
		q->iter = -1;
		q->late = (signed char)sr->jumped;
		if (rc == 1 && sr->in && active(S) && q->ev.kind != TK_MARK && q->ev.kind != TK_MEM) {
			struct st_slot *sl = slot_get(S, sr->iter);
			if (sl) {
				sl->issued++;
				q->iter = (int)sr->iter;
				q->cand = (int)S->ordinal;
			}
		}
		return rc;
	}
}

void rp_steady_recorded(struct run *R, const struct qev *q, long i)
{
	struct steady *S = R->steady;
	if (!S || q->iter < 0 || q->cand != S->ordinal || !active(S))
		return; /* (an op of a candidate that another replaced) */
	struct st_slot *sl = slot_get(S, q->iter);
	if (!sl)
		return;
	if (list_push(&sl->spans, i)) {
		give_up(S);
		return;
	}
	sl->made++;
	struct rp_span *s = &R->r->spans[i];
	if (S->stagger && s->late == RP_LATE_NO)
		s->late = RP_LATE_WATCHED;
	if (s->pred == -1)
		sl->unpred = 1;
	if (q->ev.kind == TK_OP && q->ev.op.dtype >= 0 && q->ev.op.dtype < DT_COUNT)
		sl->flops[q->ev.op.dtype] += s->flops;
	if (sl->made == sl->issued && sl->past == S->nrep && q->iter == S->next_eval)
		try_eval(R);
}

/* ---- setup and the end ---- */

/* A pipeline when the replayed ranks' largest repeats differ (stages run
   their own) and each has enough iterations. */
static void stagger_init(struct run *R)
{
	struct steady *S = R->steady;
	int first = -1, differ = 0;
	for (int i = 0; i < R->nranks && S->nrep > 1; i++) {
		struct st_rank *sr = &S->rk[i];
		if (!R->ranks[i].streams)
			continue;
		if (!tr_largest_repeat(R->t, i, &sr->target) || sr->target.count < ST_MIN_COUNT)
			return;
		if (first < 0) {
			first = i;
			S->min_count = sr->target.count;
			continue;
		}
		const struct tr_loop *f = &S->rk[first].target;
		differ |= sr->target.body != f->body || sr->target.count != f->count || sr->target.depth != f->depth;
		if (sr->target.count < S->min_count)
			S->min_count = sr->target.count;
	}
	if (!differ)
		return; /* the ranks' repeats are matched in order (loop_start) */
	candidate(S, &S->rk[first].target, 1);
	S->stagger = 1;
}

int rp_steady_init(struct run *R)
{
	if (R->o->exact || R->o->jitter > 0)
		return 0;
	struct steady *S = calloc(1, sizeof *S);
	if (!S || !(S->rk = calloc((size_t)R->nranks, sizeof *S->rk)) || !(S->barrier = sg_sem_init(0))) {
		if (S)
			free(S->rk);
		free(S);
		return -1;
	}
	for (int i = 0; i < R->nranks; i++) {
		S->rk[i].iter = -1;
		if (R->ranks[i].streams) {
			S->nrep++;
			tr_cursor_stops(R->ranks[i].cur, 1);
		}
	}
	for (int i = 0; i < ST_RING; i++)
		S->ring[i].j = -1;
	for (int i = 0; i < 4; i++)
		S->hist[i].j = -1;
	R->steady = S;
	stagger_init(R);
	return 0;
}

double rp_steady_end(const struct run *R, long i)
{
	long pos;
	int si = rp_steady_find(R->r, i, &pos);
	return si >= 0 ? rp_steady_time(&R->r->steady[si], R->r->steady[si].copies, R->r->spans[i].t1) : -1;
}

/* After the run: the ops issued after the skip ran K periods early on the
   engine; their real times are K periods later, and what they waited for
   in the template is its copy in the last iteration skipped. */
static void stagger_finish(struct run *R)
{
	struct steady *S = R->steady;
	struct rp_result *r = R->r;
	if (!S->jumped)
		return;
	if (S->jumped < S->nrep || !S->verified || S->seg < 0) {
		rp_fail(
		    R, SIM_EXIT_INTERNAL,
		    "%s:%d: steady state of a pipeline: %d of %d ranks skipped, the iteration after %s (a bug; sim run "
		    "--exact plays every iteration)",
		    tr_path(R->t), S->line, S->jumped, S->nrep, S->verified ? "checked" : "never checked");
		return;
	}
	const struct rp_steady *st = &r->steady[S->seg];
	double shift = st->t_resume - st->t_cut;
	for (long i = 0; i < r->nspans; i++) {
		struct rp_span *x = &r->spans[i];
		if (x->late != RP_LATE_YES) {
			/* an op played before the skip that waited for one played after it: a
			   template op waiting for its next iteration, which was the first one
			   played after the skip on the engine and is copy 1 (pcls, parg) */
			long p = x->pred, pos;
			if (p < 0 || r->spans[p].late != RP_LATE_YES)
				continue;
			if (rp_steady_find(r, i, &pos) != S->seg || st->pcls[pos] != RP_PRED_NEXT ||
			    st->pnext[pos] != p) {
				rp_fail(R, SIM_EXIT_INTERNAL,
				        "%s:%d: steady state of a pipeline: an op before the skip waited for one after "
				        "it that is not in the next iteration (a bug; sim run --exact plays every "
				        "iteration)",
				        tr_path(R->t), S->line);
				return;
			}
			x->pred = -1;
			continue;
		}
		x->arrive += shift;
		x->t0 += shift;
		x->t1 += shift;
		long p = x->pred;
		if (p < 0 || r->spans[p].late == RP_LATE_YES)
			continue;
		if (rp_list_find(st->tmpl, st->n, p) >= 0) {
			x->pred = -2 - p; /* the template's copy in the last derived iteration */
		} else if (r->spans[p].late == RP_LATE_WATCHED) {
			/* an older iteration: its copy K later is not the last one, and the
			   proofs said predecessors lie in the iteration or the one before */
			rp_fail(R, SIM_EXIT_INTERNAL,
			        "%s:%d: steady state of a pipeline: an op after the skip waited for one %s (a bug; sim "
			        "run --exact plays every iteration)",
			        tr_path(R->t), S->line, "two or more iterations back");
			return;
		} /* else issued before the repeat: the same op in the run that plays every iteration */
	}
}

void rp_steady_finish(struct run *R)
{
	struct steady *S = R->steady;
	if (S && S->stagger) {
		stagger_finish(R);
		return;
	}
	if (S && S->arrived > 0 && S->arrived < S->nrep)
		rp_fail(R, SIM_EXIT_INTERNAL,
		        "%s:%d: steady state: %d of %d ranks reached iteration %lld of the repeat, the others never "
		        "did (a bug; sim run --exact plays every iteration)",
		        tr_path(R->t), S->line, S->arrived, S->nrep, S->arm_at);
}

void rp_steady_free(struct run *R)
{
	struct steady *S = R->steady;
	if (!S)
		return;
	for (int i = 0; i < R->nranks; i++)
		if (S->rk[i].idle)
			sg_sem_destroy(S->rk[i].idle);
	for (int i = 0; i < ST_RING; i++)
		free(S->ring[i].spans.v);
	for (int i = 0; i < 4; i++) {
		free(S->hist[i].spans.v);
		free(S->hist[i].canon);
		free(S->hist[i].icanon);
	}
	sg_sem_destroy(S->barrier);
	free(S->rk);
	free(S);
	R->steady = NULL;
}
