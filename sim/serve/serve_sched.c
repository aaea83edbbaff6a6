/*
 * serve_sched.c -- one engine of a replica, step by step, as vLLM schedules.
 *
 * With chunked prefill (vLLM V1's scheduler, vllm/v1/core/sched/
 * scheduler.py, schedule()): each step has a budget of max_num_batched_tokens.
 * Running requests come first, in the order they were admitted: a decoding
 * one takes one token, a prefilling one the rest of its prompt up to what
 * the budget has left. A request whose next tokens need a KV block when none
 * is free preempts the running request admitted last (freeing its blocks;
 * it goes back to the front of the queue), or itself when it is that one.
 * Only in a step that preempted nothing, waiting requests are admitted in
 * arrival order while a sequence slot (max_num_seqs), budget and blocks for
 * their chunk remain; the first that does not fit stops admission.
 *
 * Without chunked prefill (vLLM V0's default scheduler, vllm/core/
 * scheduler.py, _schedule_default): a step either prefills whole prompts of
 * waiting requests (as many as fit the token budget, the free sequence slots
 * and the blocks) or, when none can start, decodes every running request,
 * preempting from the most recently admitted when blocks run out.
 *
 * With the guaranteed-no-evict capacity policy (TensorRT-LLM's
 * GUARANTEED_NO_EVICT, batch_manager/capacityScheduler) a request is admitted
 * only when the blocks of its whole prompt and output are free, and holds
 * them from then on: nothing is ever preempted, and a batch larger than the
 * cache runs in waves.
 *
 * Preemption recomputes by default (V1's only mode: the preempted request's
 * prompt and the tokens it generated are prefilled again when it returns);
 * with swap its blocks are copied to host memory and back (V0's swap mode),
 * the copies charged to the step that makes them. A request's KV takes
 * ceil(tokens / block) blocks of the pool; with prefix caching a returning
 * prompt's leading blocks are found cached (the fraction --prefix-hit of its
 * prompt, whole blocks, at least one token left to compute).
 *
 * A sequence samples a token in the step that computes its last known
 * token: its prompt's last chunk (the first token: TTFT), then each decode.
 * Requests finish after output_len tokens (ignore_eos, as the benchmarks
 * run).
 */
#include "serve_int.h"

#include "progress.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct eng {
	const struct sv_engine_in *in;
	const struct sv_options *o;
	struct sv_result *r;
	long long B; /* tokens per block */
	long long free_blocks;
	struct sv_req *whead, *wtail; /* waiting */
	struct sv_req **run;          /* running, in admission order */
	long long nrun, caprun;
	struct sv_req *pending; /* next arrival not yet queued */
	long ready_i;
	struct sv_req **sched; /* this step's requests and their tokens */
	long long *ntok;
	long long nsched;
	double swap_bytes; /* this step's host copies */
	double now;
	struct progress prog; /* when o->progress */
};

static long long blocks_for(const struct eng *E, long long tokens)
{
	return (tokens + E->B - 1) / E->B;
}

static void wpush_front(struct eng *E, struct sv_req *q)
{
	q->next = E->whead;
	E->whead = q;
	if (!E->wtail)
		E->wtail = q;
}

static void wpush_back(struct eng *E, struct sv_req *q)
{
	q->next = NULL;
	if (E->wtail)
		E->wtail->next = q;
	else
		E->whead = q;
	E->wtail = q;
}

static struct sv_req *wpop(struct eng *E)
{
	struct sv_req *q = E->whead;
	E->whead = q->next;
	if (!E->whead)
		E->wtail = NULL;
	q->next = NULL;
	return q;
}

/* the next arrival of this engine into E->pending (NULL at the end): 0, or -code */
static int fetch(struct eng *E, char *why, size_t whylen)
{
	const struct sv_engine_in *in = E->in;
	E->pending = NULL;
	if (in->role == 2) {
		if (in->ready && in->ready[E->ready_i].id >= 0)
			E->pending = &in->ready[E->ready_i++];
		if (E->pending) {
			struct sv_req *q = malloc(sizeof *q);
			if (!q) {
				snprintf(why, whylen, "serve: out of memory");
				return -SIM_EXIT_INTERNAL;
			}
			*q = *E->pending;
			E->pending = q;
		}
		return 0;
	}
	struct sv_req q;
	int rc = sv_src_next(in->src, &q, in->max_len, why, whylen);
	if (rc <= 0)
		return rc;
	if (blocks_for(E, q.in_len + q.out_len) > in->blocks) {
		snprintf(
		    why, whylen,
		    "serve: request %lld (%lld + %lld tokens) needs %lld KV blocks of %lld tokens, but the cache holds "
		    "%lld",
		    q.id, q.in_len, q.out_len, blocks_for(E, q.in_len + q.out_len), E->B, in->blocks);
		return -SIM_EXIT_NOFIT;
	}
	if (!(E->pending = malloc(sizeof q))) {
		snprintf(why, whylen, "serve: out of memory");
		return -SIM_EXIT_INTERNAL;
	}
	q.replica = in->replica;
	*E->pending = q;
	E->r->requests++;
	return 0;
}

static long long known(const struct sv_req *q)
{
	return q->in_len + q->generated;
}

static void release(struct eng *E, struct sv_req *q)
{
	E->free_blocks += q->blocks;
	q->blocks = 0;
}

/* preempts running[nrun - 1] back to the queue's front */
static void preempt_last(struct eng *E)
{
	struct sv_req *v = E->run[--E->nrun];
	if (E->o->preempt == SV_SWAP) {
		E->swap_bytes += (double)v->computed * E->in->g.kv_token_bytes;
		v->swapped = 1;
		E->r->swaps++;
	} else {
		v->computed = 0;
	}
	release(E, v);
	v->preemptions++;
	E->r->preemptions++;
	wpush_front(E, v);
}

static int take(struct eng *E, struct sv_req *q, long long need)
{
	long long want = blocks_for(E, q->computed + need) - q->blocks;
	if (want > E->free_blocks)
		return 0;
	E->free_blocks -= want > 0 ? want : 0;
	q->blocks += want > 0 ? want : 0;
	E->sched[E->nsched] = q;
	E->ntok[E->nsched++] = need;
	return 1;
}

/* admits the queue's head for `budget` tokens at most: 1, or 0 when it does not fit */
static int admit(struct eng *E, long long *budget, int whole)
{
	struct sv_req *q = E->whead;
	if (q->swapped) { /* its KV comes back from the host first */
		long long want = blocks_for(E, q->computed + 1);
		if (want > E->free_blocks)
			return 0;
	} else if (q->computed == 0 && E->o->prefix_hit > 0) {
		long long c = (long long)floor(E->o->prefix_hit * (double)q->in_len / (double)E->B) * E->B;
		while (c > 0 && c >= q->in_len)
			c -= E->B;
		q->computed = c > 0 ? c : 0;
		if (!q->preemptions)
			q->cached = q->computed;
	}
	long long need = known(q) - q->computed;
	if (whole && need > *budget)
		return 0;
	if (need > *budget)
		need = *budget;
	if (E->o->guaranteed) { /* the whole request's blocks, reserved now */
		long long all = blocks_for(E, q->in_len + q->out_len) - q->blocks;
		if (all > E->free_blocks) {
			q->computed = 0;
			return 0;
		}
		E->free_blocks -= all;
		q->blocks += all;
	}
	if (!take(E, q, need)) {
		if (!q->swapped)
			q->computed = 0;
		return 0;
	}
	if (q->swapped) {
		E->swap_bytes += (double)q->computed * E->in->g.kv_token_bytes;
		q->swapped = 0;
	}
	wpop(E);
	E->run[E->nrun++] = q;
	if (q->sched_s < 0)
		q->sched_s = E->now;
	*budget -= need;
	return 1;
}

/* the running requests from index i on, each `need`ing tokens; preempts from the end */
static void schedule_running(struct eng *E, long long *budget, int *preempted)
{
	for (long long i = 0; i<E->nrun && * budget> 0; i++) {
		struct sv_req *q = E->run[i];
		long long need = known(q) - q->computed;
		if (need > *budget)
			need = *budget;
		while (!take(E, q, need)) {
			int self = i == E->nrun - 1;
			preempt_last(E);
			*preempted = 1;
			if (self)
				return;
		}
		*budget -= need;
	}
}

static void schedule(struct eng *E)
{
	const struct sv_options *o = E->o;
	long long budget = o->max_batched_tokens;
	int preempted = 0;
	E->nsched = 0;
	E->swap_bytes = 0;
	if (o->chunked_prefill) {
		schedule_running(E, &budget, &preempted);
		while (!preempted && E->whead && E->nrun < o->max_num_seqs && budget > 0 && admit(E, &budget, 0))
			;
		return;
	}
	/* V0: prefills first, whole prompts (sv_parse_args holds the budget at the context or above, as vLLM V0) */
	assert(budget >= o->max_model_len);
	while (E->whead && E->nrun < o->max_num_seqs && admit(E, &budget, 1))
		;
	if (E->nsched)
		return;
	budget = o->max_num_seqs;
	schedule_running(E, &budget, &preempted);
}

static void shape_of(const struct eng *E, struct sv_shape *sh)
{
	memset(sh, 0, sizeof *sh);
	for (long long i = 0; i < E->nsched; i++) {
		const struct sv_req *q = E->sched[i];
		long long n = E->ntok[i];
		sh->tokens += n;
		if (q->computed + n == known(q))
			sh->sampled++;
		if (n == 1 && q->generated > 0 && q->computed == known(q) - 1) {
			sh->decodes++;
			long long ctx = q->computed + 1, w = E->in->g.window;
			sh->decode_ctx += (double)ctx;
			sh->decode_win += (double)(w > 0 && w < ctx ? w : ctx);
		} else {
			sh->prefills++;
			sh->chunk_sum += (double)n;
			sh->prior_sum += (double)q->computed;
		}
	}
}

/* removes finished and handed-off requests from the running list */
static void compact(struct eng *E)
{
	long long k = 0;
	for (long long i = 0; i < E->nrun; i++)
		if (E->run[i])
			E->run[k++] = E->run[i];
	E->nrun = k;
}

static int apply(struct eng *E, char *why, size_t whylen)
{
	const struct sv_engine_in *in = E->in;
	for (long long i = 0; i < E->nsched; i++) {
		struct sv_req *q = E->sched[i];
		q->computed += E->ntok[i];
		if (q->computed < known(q))
			continue;
		q->generated++;
		if (q->first_s < 0)
			q->first_s = E->now;
		else {
			double gap = E->now - q->last_s;
			sv_q_add(&in->st->itl, gap);
			if (gap > q->itl_max_s)
				q->itl_max_s = gap;
		}
		q->last_s = E->now;
		int done = q->generated >= q->out_len, hand = !done && in->role == 1;
		if (!done && !hand)
			continue;
		release(E, q);
		for (long long j = 0; j < E->nrun; j++)
			if (E->run[j] == q)
				E->run[j] = NULL;
		if (done) {
			sv_stats_request(in->st, q);
			E->r->finished++;
			free(q);
		} else if (in->handoff(in->ctx, q)) {
			snprintf(why, whylen, "serve: out of memory");
			return -SIM_EXIT_INTERNAL;
		}
	}
	compact(E);
	return 0;
}

static void progress(struct eng *E)
{
	if (E->o->progress && progress_due(&E->prog))
		progress_print(&E->prog, "engine %d: %lld requests finished, %lld running, simulated %.3f s",
		               E->in->replica, E->r->finished, E->nrun, E->now);
}

static int loop(struct eng *E, char *why, size_t whylen)
{
	const struct sv_engine_in *in = E->in;
	int rc;
	if ((rc = fetch(E, why, whylen)))
		return rc;
	for (;;) {
		while (E->pending && E->pending->avail_s <= E->now) {
			wpush_back(E, E->pending);
			if ((rc = fetch(E, why, whylen)))
				return rc;
		}
		if (!E->nrun && !E->whead) {
			if (!E->pending)
				return 0;
			E->now = E->pending->avail_s;
			continue;
		}
		schedule(E);
		if (!E->nsched) { /* nothing could start: wait for the next arrival */
			if (!E->pending) {
				snprintf(why, whylen,
				         "serve: engine %d: %lld requests wait but none can start (internal)",
				         in->replica, E->nrun);
				return -SIM_EXIT_INTERNAL;
			}
			E->now = E->pending->avail_s;
			continue;
		}
		struct sv_shape sh;
		shape_of(E, &sh);
		double dt = sv_step_time(in->m, &sh, why, whylen);
		if (dt >= 0 && in->g.pp > 1) { /* pp virtual engines share the stages */
			double st = sv_stage_max(in->m, &sh, why, whylen);
			if (st >= 0 && st * in->g.pp > dt)
				dt = st * in->g.pp;
		}
		if (dt < 0)
			return -SIM_EXIT_INTERNAL;
		dt += sv_swap_time(in->m, E->swap_bytes);
		sv_stats_step(in->st, in->replica, E->now, dt, &sh);
		E->r->steps++;
		E->r->busy_s += dt;
		E->r->batch_tokens_sum += (double)sh.tokens;
		E->r->batch_seqs_sum += (double)E->nsched;
		double used = 1 - (double)E->free_blocks / (double)in->blocks;
		if (used > E->r->kv_peak_frac)
			E->r->kv_peak_frac = used;
		E->now += dt;
		if ((rc = apply(E, why, whylen)))
			return rc;
		progress(E);
	}
}

int sv_engine_run(const struct sv_engine_in *in, struct sv_result *r, char *why, size_t whylen)
{
	struct eng E = {.in = in, .o = in->o, .r = r, .B = in->o->block_tokens, .free_blocks = in->blocks};
	long long cap = in->o->max_num_seqs + 1;
	E.run = malloc((size_t)cap * sizeof *E.run);
	E.sched = malloc((size_t)cap * sizeof *E.sched);
	E.ntok = malloc((size_t)cap * sizeof *E.ntok);
	int rc = 0;
	if (!E.run || !E.sched || !E.ntok) {
		snprintf(why, whylen, "serve: out of memory");
		rc = -SIM_EXIT_INTERNAL;
	} else {
		if (E.o->progress)
			progress_start(&E.prog, "serve");
		rc = loop(&E, why, whylen);
		if (E.o->progress)
			progress_end(&E.prog);
	}
	for (long long i = 0; i < E.nrun; i++)
		free(E.run[i]);
	while (E.whead)
		free(wpop(&E));
	free(E.pending);
	free(E.run);
	free(E.sched);
	free(E.ntok);
	return rc < 0 ? -rc : rc;
}
