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
 * Pipelines, whose stages' repeats overlap so that no cut has nothing in
 * flight: replay_stagger.c.
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
#include "replay_steady_int.h"

#include <math.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/semaphore.h>
#include <stdlib.h>
#include <string.h>

static void arm(struct run *R)
{
	struct steady *S = R->steady;
	long long A = st_next_boundary(R), L = st_host_lead(R, st_judged(S, 0));
	if (L < 0 || A + L >= S->count) { /* nothing left to skip */
		S->state = ST_DONE;
		return;
	}
	S->arm_at = A;
	S->skip = S->count - A - L;
	S->state = ST_ARMED;
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
	int ordered = !st_canonical(R, h);
	h->clean = ordered && h->spans.n > 0 && !sl->unpred && last->j == h->j - 1 &&
	           (S->stagger || h->start >= last->end - st_tol(last->end));
	sl->spans = old.spans;
	sl->spans.n = 0;
	sl->j = -1;
	if (!ordered)
		h->j = -1; /* no room to compare it: nothing follows from it */
	if (S->stagger && !S->lag && S->state == ST_WATCH && st_waits_for_next(S, sp, h)) {
		S->lag = 1; /* from now on judged one late (the proofs start again) */
		S->run_from = -1;
	}
	/* the iteration judged (h, or with S->lag the one before it) */
	const struct st_hist *cur = st_judged(S, 0), *prev = st_judged(S, 1), *before = st_judged(S, 2),
	                     *next = st_after_judged(S);
	int proven = cur->clean && prev->clean && before->j == cur->j - 2 && (!next || next->j == cur->j + 1) &&
	             st_same_iter(R, before, prev, cur, next, cur->end - prev->end);
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
		st_stagger_proven(R);
	else if (S->state == ST_WATCH)
		arm(R);
}

/* Evaluates, in order, the iterations every host has moved past and every
   op of which has its span. */
void st_try_eval(struct run *R)
{
	struct steady *S = R->steady;
	while (st_active(S) && S->joined == S->nrep) {
		struct st_slot *sl = st_slot_get(S, S->next_eval);
		if (!sl || sl->past < S->nrep || sl->made < sl->issued)
			break;
		evaluate(R, sl);
		S->next_eval++;
	}
}

/* ---- the hosts ---- */

/* loop_start of a pipeline: each rank joins its own watched repeat, whose
   iterations it numbers as played (those skipped are not counted). */
static int loop_start_stagger(struct run *R, struct st_rank *sr, const struct tr_loop *l)
{
	struct steady *S = R->steady;
	if (sr->in) {
		if (l->depth != sr->in_depth || l->body != sr->in_body)
			return 0; /* a repeat inside its iterations */
		long long it = l->iter - (sr->jumped ? S->skip : 0);
		if (st_active(S)) {
			struct st_slot *sl = st_slot_get(S, sr->iter);
			if (sl)
				sl->past++;
			if (!st_slot_open(S, it))
				st_give_up(S);
		}
		sr->iter = it;
		st_try_eval(R);
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
	if (st_active(S) && !st_slot_open(S, 0))
		st_give_up(S);
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
		if (cur && st_active(S)) {
			struct st_slot *sl = st_slot_get(S, sr->iter);
			if (sl)
				sl->past++;
			if (!st_slot_open(S, l->iter))
				st_give_up(S); /* the hosts are too far ahead of what was recorded */
		}
		sr->iter = l->iter;
		if (!cur)
			return 0;
		st_try_eval(R);
		return S->state == ST_ARMED && l->iter == S->arm_at;
	}
	if (l->iter != 0 || l->count < ST_MIN_COUNT)
		return 0;
	long k = ++sr->ordinal; /* every rank numbers the repeats it enters alike */
	if (sr->in && sr->in_ord == S->ordinal && st_active(S))
		return 0; /* inside the candidate: part of its iterations */
	if (S->ordinal != k) {
		if (st_active(S) || k < S->ordinal || k <= S->lost) {
			if (k > S->lost && k > S->ordinal)
				S->lost = k; /* this rank plays it while another is watched: it cannot be one */
			return 0;
		}
		st_candidate(S, l, k); /* the one before (if any) is done with */
		st_slot_open(S, 0);
	} else if (S->body != l->body || S->count != l->count || S->depth != l->depth) {
		st_give_up(S); /* the ranks' k-th repeats differ */
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
	struct st_slot *sl = st_active(S) ? st_slot_get(S, sr->iter) : NULL;
	if (sl)
		sl->past++;
	sr->iter = -1;
	S->left++;
	st_try_eval(R);
	if (S->stagger && S->state != ST_WATCH)
		return; /* (the iterations after the skip are still evaluated) */
	st_give_up(S);  /* a rank is through: no boundary is left where all could stop */
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
	st_try_eval(R);
	double lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < R->nranks; i++)
		if (R->ranks[i].streams) {
			lo = fmin(lo, S->rk[i].drained);
			hi = fmax(hi, S->rk[i].drained);
		}
	struct st_hist *h = st_judged(S, 0);
	S->state = ST_DONE;
	h->end = -INFINITY; /* now that every op of it ended: a batch's last end is the engine's, not the sum */
	for (long p = 0; p < h->spans.n; p++)
		h->end = fmax(h->end, r->spans[h->spans.v[p]].t1);
	if (hi - lo > st_tol(hi) || fabs(hi - h->end) > st_tol(hi)) { /* invariant 1 */
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
	struct rp_steady st = st_steady_of(S);
	st_record_steady(R, &st); /* (no memory: played instead) */
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

int rp_steady_next(struct run *R, struct rank_st *rk, struct qev *q, char *why, size_t whylen, int may_block)
{
	struct steady *S = R->steady;
	struct st_rank *sr = &S->rk[rk->rank];
	for (;;) {
		if (sr->at_stop && !may_block)
			return RP_STEADY_NEED_HOST;
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
		if (rc == 1 && sr->in && st_active(S) && q->ev.kind != TK_MARK && q->ev.kind != TK_MEM) {
			struct st_slot *sl = st_slot_get(S, sr->iter);
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
	if (!S || q->iter < 0 || q->cand != S->ordinal || !st_active(S))
		return; /* (an op of a candidate that another replaced) */
	struct st_slot *sl = st_slot_get(S, q->iter);
	if (!sl)
		return;
	if (st_list_push(&sl->spans, i)) {
		st_give_up(S);
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
		st_try_eval(R);
}

/* ---- setup and the end ---- */

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
	st_stagger_init(R);
	return 0;
}

double rp_steady_end(const struct run *R, long i)
{
	long pos;
	int si = rp_steady_find(R->r, i, &pos);
	return si >= 0 ? rp_steady_time(&R->r->steady[si], R->r->steady[si].copies, R->r->spans[i].t1) : -1;
}

void rp_steady_finish(struct run *R)
{
	struct steady *S = R->steady;
	if (S && S->stagger) {
		st_stagger_finish(R);
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
