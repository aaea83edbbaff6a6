/*
 * replay_stagger.c -- the steady state of a pipeline (replay_steady.c holds
 * the watcher, the proofs and the skip of a repeat all ranks share).
 *
 * A pipeline's stages each run a repeat of their own (1F1B: a different
 * count and body per stage), and its iterations overlap: stage s sends to
 * stage s + 1 while both compute, so no cut has nothing in flight. When the
 * replayed ranks' largest repeats (tr_largest_repeat) differ, each rank's is
 * watched instead (S->stagger; one per run), iterations matched by number
 * (1F1B's iteration j holds micro-batch j's backward on every stage), and
 * evaluated as replay_steady.c evaluates a shared repeat's, without the cut.
 * An op may wait for one of the next iteration on another rank (the
 * interleaved schedule: a stage's forward of the next virtual chunk waits for
 * the last stage, whose iterations run ahead of the first's); once one does,
 * the run's iterations are judged each once the one after it is in (S->lag),
 * and a predecessor there is the same span of the next iteration
 * (RP_PRED_NEXT) when the iterations are compared. Three iterations in a row
 * the same (two proofs) arm it. The hosts do not stop: each skips K
 * iterations of its cursor when it reaches iteration A (one past the farthest
 * host), numbering what it plays next as if nothing had been skipped. The
 * engine then plays the repeat with K iterations fewer, which is the whole
 * repeat K periods early: the iterations are the same ops, so nothing but
 * their number changed, and the repeat's end (what follows it, issued a host
 * lead ahead) is played as it would be. The ops issued after the skip are
 * marked late; when the run ends their times move K periods later and what
 * they hung on in iteration A - 1 (the template) becomes its copy in the last
 * derived iteration; what the template hung on in iteration A (played after
 * the skip) is its copy 1. This rests on the run being periodic, which is
 * witnessed, not proven as at a cut: iterations A - 1 and A (the first played
 * after the skip) must again be the same as the ones before them, and any
 * iteration evaluated between arming and A must be too, else the run fails
 * (exit 70; --exact plays every iteration). Invariant 4 of replay_steady.c is
 * checked here (st_stagger_finish). tests/run_steady.sh compares 1F1B, GPipe
 * and interleaved steps and the GPT-3 step with --exact's reports.
 */
#include "replay_steady_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Iterations proven the same: the hosts will skip at iteration A, one past
   the farthest of them; enough are left after it to play the repeat's end
   (the host lead, then two). */
static void arm_stagger(struct run *R)
{
	struct steady *S = R->steady;
	long long A = st_next_boundary(R), L = st_host_lead(R, st_judged(S, 0));
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
	const struct st_hist *h = st_judged(S, 0);
	struct rp_steady st = st_steady_of(S);
	st.t_resume = h->end + (double)st.copies * st.period;
	st.stagger = 1;
	if (st_record_steady(R, &st))
		rp_fail(R, SIM_EXIT_INTERNAL, "out of memory"); /* (the hosts skipped: it cannot be played instead) */
}

void st_stagger_proven(struct run *R)
{
	struct steady *S = R->steady;
	long long j = st_judged(S, 0)->j;
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
int st_waits_for_next(const struct steady *S, const struct rp_span *sp, const struct st_hist *h)
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

/* A pipeline when the replayed ranks' largest repeats differ (stages run
   their own) and each has enough iterations. */
void st_stagger_init(struct run *R)
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
	st_candidate(S, &S->rk[first].target, 1);
	S->stagger = 1;
}

/* After the run: the ops issued after the skip ran K periods early on the
   engine; their real times are K periods later, and what they waited for
   in the template is its copy in the last iteration skipped. */
void st_stagger_finish(struct run *R)
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
